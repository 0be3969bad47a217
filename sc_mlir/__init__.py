"""sc-mlir: explain XLA SparseCore scratch-memory allocation failures from MLIR dumps.

>>> import sc_mlir
>>> dump = sc_mlir.load(sc_mlir.example_path())
>>> len(dump.allocations)
15
"""

from sc_mlir.dump import Dump, example_path, load

__all__ = ["Dump", "example_path", "load"]
__version__ = "0.1.0"
