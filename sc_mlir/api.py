"""The notebook-facing entry points that combine the pipeline's steps; what they return
are the notebook classes of `sc_mlir.notebook` (they draw themselves)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from sc_mlir.compare.diff import (
    DiffResult,
    diff_views,
    side_views,
)
from sc_mlir.compare.passes import PassTimelines, read_timelines
from sc_mlir.failures.explain import Explanation, explain_all
from sc_mlir.failures.logs import read_log
from sc_mlir.model.bounds import Bounds, build_bounds
from sc_mlir.model.dump import Dump, LoadSettings
from sc_mlir.notebook import as_notebook, load
from sc_mlir.render.html import explanations_html
from sc_mlir.render.passes_plot import plot_passes as plot_timeline
from sc_mlir.render.plots import plot_diff as plot_diff_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


class Explanations(list[Explanation]):
    """The explanations of a log's failures; shows as HTML in a notebook."""

    def _repr_html_(self) -> str:
        return explanations_html(self)


def explain(log: str | os.PathLike[str], dump: Dump | str | os.PathLike[str] | None = None,
            bounds: Bounds | Mapping[str, int] | None = None) -> Explanations:
    """Every SparseCore allocation failure in `log`, matched to `dump` and checked."""
    failures = read_log(str(log))
    loaded = load(dump) if isinstance(dump, (str, os.PathLike)) else dump
    table = build_bounds(None, None, bounds, bounds_source="bounds=...")
    return Explanations(explain_all(failures, loaded, table, log_name=Path(log).name))


def diff(before: Dump | str | os.PathLike[str], after: Dump | str | os.PathLike[str],
         bounds: Bounds | Mapping[str, int] | None = None, chip: str | None = None,
         settings: LoadSettings | None = None) -> DiffResult:
    """Compare two dumps (paths, loaded dumps, or saved analysis JSON files)."""
    table = build_bounds(None, chip, bounds, bounds_source="bounds=...")

    def read(path: str) -> Dump:
        return load(path, settings=settings)

    before_views, before_name = side_views(before, table, read)
    after_views, after_name = side_views(after, table, read)
    return as_notebook(diff_views(before_views, after_views, before_name, after_name))


def passes(path: str | os.PathLike[str], bounds: Bounds | Mapping[str, int] | None = None,
           chip: str | None = None, settings: LoadSettings | None = None,
           spaces: Sequence[str] | None = None, funcs: Sequence[str] | None = None
           ) -> PassTimelines:
    """Every (func, memory space) of a print-after-all dump through its passes, read one
    chunk at a time: the peaks after each pass and the first pass that crosses the bound.

    >>> import sc_mlir
    >>> result = sc_mlir.passes(sc_mlir.example_passes_path(), spaces=["201"])
    >>> t = result.timelines[0]
    >>> [s.arg for s in t.steps], t.first_crossing.arg, t.first_crossing.delta_stack_words
    (['cse', 'mem2reg', 'canonicalize', 'cse'], 'canonicalize', 69936)
    """
    return as_notebook(read_timelines(
        path, build_bounds(None, chip, bounds, bounds_source="bounds=..."), settings, spaces,
        funcs))


def plot_passes(result: PassTimelines, func: str, space: int | str) -> Figure:
    """Stack and liveness peaks of a func and space per pass, against the bound."""
    return plot_timeline(result.timeline(func, space))


def plot_diff(result: DiffResult, top: int = 12) -> Figure:
    """Before/after stack peaks per (func, space) and the largest per-alloca changes."""
    return plot_diff_figure(result, top=top)


def _example_data() -> Path:
    packaged = resources.files("sc_mlir") / "example_data"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "fixtures"


def example_log_path() -> str:
    """A compile log (a Python traceback with an E3000 failure) for the sample dump."""
    base = _example_data()
    packaged = base / "compile.log"
    return str(packaged if packaged.is_file() else base / "logs" / "classic_traceback.log")


def example_diff_paths() -> tuple[str, str]:
    """Two dumps of the sample kernel: before and after halving max_ids_per_partition."""
    base = _example_data()
    root = base / "limit_halved" if (base / "limit_halved").is_dir() else (
        base / "diff" / "limit_halved")
    return str(root / "before"), str(root / "after")


def example_passes_path() -> str:
    """A print-after-all dump (real MLIR passes on a small kernel): canonicalize folds a
    one-trip loop and takes a 70000-word buffer out of its scope, over TileSpmem's bound."""
    base = _example_data()
    packaged = base / "gather_rows.mlir"
    return str(packaged if packaged.is_file() else base / "passes" / "after_all"
               / "gather_rows.mlir")
