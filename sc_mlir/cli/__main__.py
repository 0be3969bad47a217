"""`python -m sc_mlir.cli`, as the tests and bench run the command."""

from sc_mlir.cli import main

main()
