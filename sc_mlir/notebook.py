"""The notebook API: the results of `sc_mlir.load`, `sc_mlir.diff`, `sc_mlir.passes`...
as the user holds them, with the methods that draw them (`plot_*`, `to_html`,
`_repr_html_`, which Jupyter calls to show an object).

The result types below them (`analysis.Analysis`, `analysis.SpaceReport`,
`compare.diff.DiffResult`, ...) are plain data and import no renderer. Each class here is
a subclass of one of them that adds only methods: the same fields, so `isinstance` and
every attribute work as on the data type, and whatever the layers below compute from it
(a diff, a what-if, a pass timeline) they compute from the same fields. A result is
turned into its notebook class where the public API hands it out (`as_notebook`), and
every method that returns another result returns it as a notebook class too.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from sc_mlir import analysis as analysis_layer
from sc_mlir.analysis import analyze
from sc_mlir.analysis.rollup import Rollup as RollupData
from sc_mlir.compare import diff as diff_layer
from sc_mlir.compare import passes as passes_layer
from sc_mlir.compare.whatif import Edits, analysis_what_if
from sc_mlir.model import dump as dump_layer
from sc_mlir.model.bounds import Bounds
from sc_mlir.model.dump import LoadSettings
from sc_mlir.read.progress import ProgressHook
from sc_mlir.render.html import (
    analysis_report,
    analysis_summary_html,
    diff_report,
    diff_summary_html,
    rollup_html,
    space_report_html,
)
from sc_mlir.render.passes_html import timelines_report, timelines_tables
from sc_mlir.render.passes_plot import plot_passes
from sc_mlir.render.plots import plot_contributors, plot_diff, plot_groups, plot_stack

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Analysis", "DiffResult", "Dump", "PassTimelines", "Rollup", "SpaceReport",
           "Timeline", "as_notebook", "load"]

Data = TypeVar("Data")


def _seen_as(cls: type[Data], data: object) -> Data:
    """`data` as an instance of `cls`, a subclass of its type that adds methods only: the
    same field values (not copies), without running `__init__` or `__post_init__` again,
    which would recompute or re-check what the data type already holds."""
    if isinstance(data, cls):
        return data
    view = object.__new__(cls)
    view.__dict__.update(data.__dict__)
    return view


class SpaceReport(analysis_layer.SpaceReport):
    """A (func, memory space) report; shows as HTML in a notebook."""

    def _repr_html_(self) -> str:
        return space_report_html(self)


class Rollup(RollupData):
    """Who holds the scratch at the peak (`Analysis.groups`); shows as HTML in a notebook."""

    def _repr_html_(self) -> str:
        return rollup_html(self)


class Analysis(analysis_layer.Analysis):
    """The result of `Dump.analyze()`: one `SpaceReport` per (file, chunk, func, space),
    with figures, an HTML report, and what-if edits."""

    def _adopt_parts(self) -> None:
        self.reports = [_seen_as(SpaceReport, report) for report in self.reports]

    def report(self, func: str, space: int | str, file: str | None = None,
               chunk: int | None = None) -> SpaceReport:
        """The report for a func and space (an id, or a name such as "vmem")."""
        return _seen_as(SpaceReport, super().report(func, space, file, chunk))

    def select(self, spaces: Iterable[str] | None = None, funcs: Iterable[str] | None = None
               ) -> Analysis:
        """The same analysis restricted to some spaces and funcs (names may use wildcards)."""
        return as_notebook(super().select(spaces, funcs))

    def groups(self, func: str, space: int | str, by: str = "source",
               file: str | None = None, chunk: int | None = None) -> Rollup:
        """Who holds the scratch: the entries on the stack at the peak, grouped by resolved
        source line (`by="source"`), source file (`"file"`) or outermost name location
        (`"name"`), largest first; their words plus `padding_words` equal the stack peak."""
        return _seen_as(Rollup, super().groups(func, space, by, file, chunk))

    def plot_stack(self, func: str, space: int | str, file: str | None = None,
                   chunk: int | None = None, ax: Axes | None = None, labels: int = 12
                   ) -> Figure:
        """The scoped stack of a func and space against program order (a matplotlib Figure):
        one rectangle per alloca over its scope, the liveness curve, the bound, and the
        crossing alloca labelled with its source location."""
        return plot_stack(self.report(func, space, file, chunk), ax=ax, labels=labels)

    def plot_contributors(self, func: str, space: int | str, file: str | None = None,
                          chunk: int | None = None, ax: Axes | None = None, top: int = 15
                          ) -> Figure:
        """Bars of the allocas on the stack at the crossing (or at the peak), largest first,
        with the cumulative percent (a matplotlib Figure)."""
        return plot_contributors(self.report(func, space, file, chunk), ax=ax, top=top)

    def plot_passes(self, func: str, space: int | str, ax: Axes | None = None) -> Figure:
        """For a print-after-all dump: the stack and liveness peaks of a func and space
        after every pass, against the bound, the first crossing marked (see
        `sc_mlir.compare.passes`; `sc_mlir.passes(path)` streams dumps too large to load)."""
        timelines = as_notebook(passes_layer.timelines_from_analysis(self))
        return timelines.plot_passes(func, space, ax=ax)

    def plot_groups(self, func: str, space: int | str, by: str = "source",
                    file: str | None = None, chunk: int | None = None,
                    ax: Axes | None = None, top: int = 15) -> Figure:
        """Horizontal bars of `groups(func, space, by)` with the percent of the stack peak
        (a matplotlib Figure)."""
        return plot_groups(self.report(func, space, file, chunk),
                           self.groups(func, space, by, file, chunk), ax=ax, top=top)

    def what_if(self, resize: Mapping[str, int] | None = None,
                drop: Iterable[str] | None = None,
                scale: Mapping[str, float | str] | None = None,
                align: Mapping[str, int] | None = None) -> DiffResult:
        """Re-simulate with edits, without recompiling: `resize` maps selectors (`%232`,
        `FUNC:%232`, `FILE:LINE[:COL]`, `@name`) to words, `drop` lists selectors, `scale`
        maps selectors to factors (rounded up to whole elements), `align` spaces to a
        default alignment in bytes. The answer is the diff of this analysis (BEFORE) and
        the edited one (AFTER), as `sc_mlir.diff` gives it. Raises `EditError` (a
        ValueError) for a selector that matches nothing."""
        return as_notebook(analysis_what_if(self, Edits(dict(resize or {}), tuple(drop or ()),
                                                        dict(scale or {}), dict(align or {}))))

    def to_html(self, source: str = "", group_by: str | None = None) -> str:
        """A self-contained HTML report (plots embedded, no network); `group_by` adds each
        space's roll-up (see `groups`)."""
        return analysis_report(self, source, group_by=group_by)

    def _repr_html_(self) -> str:
        return analysis_summary_html(self)


class DiffResult(diff_layer.DiffResult):
    """Two dumps (or saved analyses) side by side: `spaces` and `allocations` edits, BEFORE
    -> AFTER; shows as HTML in a notebook."""

    def select(self, spaces: Sequence[str] | None = None) -> DiffResult:
        return as_notebook(super().select(spaces))

    def plot(self, top: int = 12) -> Figure:
        """Before/after peaks per (func, space) and the largest per-alloca changes."""
        return plot_diff(self, top=top)

    def to_html(self) -> str:
        return diff_report(self)

    def _repr_html_(self) -> str:
        return diff_summary_html(self)


class Timeline(passes_layer.Timeline):
    """One (func, space) of a print-after-all dump through its passes."""

    def plot(self, ax: Axes | None = None) -> Figure:
        """Stack and liveness peaks per pass against the bound, the first crossing marked."""
        return plot_passes(self, ax=ax)


class PassTimelines(passes_layer.PassTimelines):
    """Every timeline of a dump, and the notes on the input; shows as HTML in a notebook."""

    def _adopt_parts(self) -> None:
        self.timelines = [_seen_as(Timeline, timeline) for timeline in self.timelines]

    def select(self, spaces: Iterable[str] | None = None, funcs: Iterable[str] | None = None
               ) -> PassTimelines:
        """The timelines of some spaces (ids or names) and funcs (wildcards allowed)."""
        return as_notebook(super().select(spaces, funcs))

    def timeline(self, func: str, space: int | str) -> Timeline:
        return _seen_as(Timeline, super().timeline(func, space))

    def plot_passes(self, func: str, space: int | str, ax: Axes | None = None) -> Figure:
        """Stack and liveness peaks of a func and space per pass, against the bound."""
        return self.timeline(func, space).plot(ax=ax)

    def to_html(self) -> str:
        return timelines_report(self)

    def _repr_html_(self) -> str:
        return timelines_tables(self)


class Dump(dump_layer.Dump):
    """A loaded dump: its files, allocation records and diagnostics; `analyze()` it."""

    def analyze(self, bounds: Bounds | Mapping[str, int] | None = None, *,
                chip: str | None = None, align: Mapping[str, int] | None = None) -> Analysis:
        """Analyse every (func, memory space): see `sc_mlir.analysis.analyze`."""
        return as_notebook(analyze(self, bounds, chip=chip, align=align))


_NOTEBOOK_CLASS: dict[type, type] = {
    analysis_layer.Analysis: Analysis,
    diff_layer.DiffResult: DiffResult,
    passes_layer.PassTimelines: PassTimelines,
    dump_layer.Dump: Dump,
}


def as_notebook(result: Data) -> Data:
    """A result of the layers below as its notebook class (itself if it is one already).
    An analysis's reports and a pass dump's timelines become notebook classes too; every
    result keeps its field values."""
    if type(result) in _NOTEBOOK_CLASS.values():
        return result
    cls = _NOTEBOOK_CLASS[type(result)]
    view = _seen_as(cls, result)
    if isinstance(view, (Analysis, PassTimelines)):
        view._adopt_parts()
    return view


def load(path: str | os.PathLike[str], *, settings: LoadSettings | None = None,
         jobs: int | None = 1, progress: ProgressHook | None = None) -> Dump:
    return as_notebook(dump_layer.load(path, settings=settings, jobs=jobs, progress=progress))


# The model's text without its hooks' paragraph: this function has none of them. (Cleaned
# first: Python 3.13 strips a docstring's indentation when compiling, 3.11 does not.)
load.__doc__ = inspect.cleandoc(dump_layer.load.__doc__ or "").split(
    "\n\nHooks for the analyses")[0]
