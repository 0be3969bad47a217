"""sc-mlir: explain XLA SparseCore scratch-memory allocation failures from MLIR dumps.

>>> import sc_mlir
>>> dump = sc_mlir.load(sc_mlir.example_path())
>>> len(dump.allocations)
15
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Imported on first use, so that `import sc_mlir.read.scan` (and the command line) does not pay
# for pandas, networkx and matplotlib.
_EXPORTS = {
    "Dump": "sc_mlir.notebook",
    "NoMLIRFound": "sc_mlir.model.dump",
    "load": "sc_mlir.notebook",
    "example_path": "sc_mlir.model.dump",
    "diff": "sc_mlir.api",
    "explain": "sc_mlir.api",
    "plot_diff": "sc_mlir.api",
    "example_diff_paths": "sc_mlir.api",
    "example_log_path": "sc_mlir.api",
    "example_passes_path": "sc_mlir.api",
    "passes": "sc_mlir.api",
    "plot_passes": "sc_mlir.api",
    "from_lowered": "sc_mlir.lowered",
    "check": "sc_mlir.lowered",
    "assert_fits": "sc_mlir.lowered",
    "KernelDoesNotFit": "sc_mlir.lowered",
    # Errors README.md tells users to catch, at their pre-layering paths' top level.
    "EditError": "sc_mlir.compare.whatif",
    "JaxApiError": "sc_mlir.read.jaxbridge",
}
__all__ = ["Dump", "EditError", "JaxApiError", "KernelDoesNotFit", "NoMLIRFound", "assert_fits",
           "check", "diff",
           "example_diff_paths", "example_log_path", "example_passes_path", "example_path",
           "explain", "from_lowered", "load", "passes", "plot_diff", "plot_passes"]

if TYPE_CHECKING:
    from sc_mlir.api import (
        diff,
        example_diff_paths,
        example_log_path,
        example_passes_path,
        explain,
        passes,
        plot_diff,
        plot_passes,
    )
    from sc_mlir.compare.whatif import EditError
    from sc_mlir.lowered import KernelDoesNotFit, assert_fits, check, from_lowered
    from sc_mlir.model.dump import NoMLIRFound, example_path
    from sc_mlir.notebook import Dump, load
    from sc_mlir.read.jaxbridge import JaxApiError


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'sc_mlir' has no attribute {name!r}")
