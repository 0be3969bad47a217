"""Renderers: each turns analysis records into one output; none of them reads MLIR."""
