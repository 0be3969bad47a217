"""sc-mlir: explain XLA SparseCore scratch-memory allocation failures from MLIR dumps.

>>> import sc_mlir
>>> dump = sc_mlir.load(sc_mlir.example_path())
>>> len(dump.allocations)
15
"""

from sc_mlir.api import diff, example_diff_paths, example_log_path, explain, plot_diff
from sc_mlir.dump import Dump, example_path, load

__all__ = ["Dump", "diff", "example_diff_paths", "example_log_path", "example_path", "explain",
           "load", "plot_diff"]
__version__ = "0.1.0"
