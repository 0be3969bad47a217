"""`python -m sc_mlir.cli`, as the tests and bench run the command."""

from sc_mlir.cli import main

if __name__ == "__main__":  # not when imported (the docstring test imports every module)
    main()
