"""The `sc-mlir` command line: a thin layer that wires arguments to load, analyses and
renderers. Exit codes: 0 success, 1 a crossing was found (analyze), 2 unusable input or a
usage error.

`app.py` holds the Typer app and the shared options, `inputs.py` turns arguments into
what the API takes; each subcommand has a file of its own, imported here (in the order
`--help` lists them) so that its `@app.command` registers it.
"""

from __future__ import annotations

import gc

# isort: off
# Registration order is the order of `sc-mlir --help`.
from sc_mlir.cli import allocas, analyze, explain, diff, passes, whatif  # noqa: F401
# isort: on
from sc_mlir.cli.app import app
from sc_mlir.support.gcpause import paused_gc

__all__ = ["app", "main"]


def main() -> None:
    try:
        with paused_gc():  # the whole run holds its objects to the end (see gcpause)
            app()
    finally:
        # The process ends with this call: without the freeze, the interpreter's last
        # collection walks every record and report once more (50 ms on a 50 MB dump).
        gc.freeze()
