"""Per memory space of every func: scoped stack, liveness, interference, verdict.

>>> import sc_mlir
>>> analysis = sc_mlir.load(sc_mlir.example_path()).analyze()
>>> worst = analysis.reports[0]
>>> worst.func, worst.space_id, worst.verdict, worst.stack_peak_words, worst.liveness_peak_words
('sc_embedding_lookup_fwd', 201, 'allocator-limited', 140704, 46880)
>>> c = worst.crossing
>>> c.alloca.name, c.offset_upper_bound_words, c.bound_words, c.allocating_words
('%232', 140704, 131071, 23440)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from operator import attrgetter
from typing import TYPE_CHECKING, TypeVar

from sc_mlir.analysis.interference import build_graph
from sc_mlir.analysis.report import (
    ALLOCATOR_LIMITED,
    FITS,
    OVERFLOW,
    SEVERITY,
    UNKNOWN_BOUND,
    Contributor,
    Crossing,
    PlacedAlloca,
    RemovalStep,
    SpaceReport,
    analyze_space,
    cheapest_fix,
)
from sc_mlir.analysis.rollup import Rollup, roll_up
from sc_mlir.model.allocation import HEAP, SCRATCH_OPERAND, SEMAPHORE, Allocation
from sc_mlir.model.bounds import Bounds, build_bounds
from sc_mlir.model.spaces import space_matches
from sc_mlir.read.scan import Diagnostic, is_skipped_allocation
from sc_mlir.support.gcpause import paused_gc
from sc_mlir.support.tables import frame_of

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

    from sc_mlir.model.dump import Dump

__all__ = [
    "ALLOCATOR_LIMITED", "FITS", "OVERFLOW", "SEVERITY", "UNKNOWN_BOUND", "Analysis",
    "Contributor", "Crossing", "FileByFileAnalysis", "PlacedAlloca", "RemovalStep",
    "ReportOutline", "SpaceReport", "analyze", "analyze_records", "any_crossing",
    "cheapest_fix", "order_reports", "reports_of_file", "select_reports",
]

SPACE_COLUMNS = (
    "file", "chunk", "module", "func", "dump_header", "memory_space", "space_id",
    "space_name", "bound_words", "bound_source", "alignment_bytes", "alignment_source",
    "stack_peak_words",
    "liveness_peak_words", "packed_peak_words", "percent_of_bound", "headroom_words",
    "verdict", "n_allocas", "n_scratch_operands", "n_semaphores", "unsized_allocas",
    "crossing_name", "crossing_line", "crossing_offset_upper_bound_words",
    "crossing_dead_reserved_words",
    "must_free_words",
)

PLACED_COLUMNS = (
    "file", "chunk", "module", "func", "memory_space", "space_id", "space_name", "kind",
    "name", "scratch_index", "line", "col", "type", "element_type", "shape", "words",
    "size_assumed", "alignment", "order", "offset",
    "upper_bound", "padding", "live_start", "live_end", "last_use_line", "packed_offset",
    "scope_op", "scope_path", "on_stack_at_crossing", "live_at_peak", "loc_file", "loc_line",
    "loc_col", "loc_names",
)


@dataclass
class Analysis:
    """The result of `Dump.analyze()`: one `SpaceReport` per (file, chunk, func, space)."""

    reports: list[SpaceReport]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    bounds: Bounds = field(default_factory=Bounds.default)

    @cached_property
    def spaces(self) -> pd.DataFrame:
        """One row per (file, chunk, func, space), worst first."""
        return frame_of((space_row(r) for r in self.reports), SPACE_COLUMNS,
                        ("space_id", "bound_words", "headroom_words", "crossing_line",
                         "crossing_offset_upper_bound_words"))

    @cached_property
    def allocations(self) -> pd.DataFrame:
        """One row per alloca with its stack offset, live range and packed offset."""
        return frame_of((placed_row(report, a) for report in self.reports
                         for a in report.allocas), PLACED_COLUMNS,
                        ("space_id", "scratch_index", "words", "alignment", "loc_line",
                         "loc_col"))

    def report(self, func: str, space: int | str, file: str | None = None,
               chunk: int | None = None) -> SpaceReport:
        """The report for a func and space (an id, or a name such as "vmem")."""
        matches = [r for r in self.reports if r.func == func and _space_is(r, space)
                   and (file is None or r.file == file) and (chunk is None or r.chunk == chunk)]
        if not matches:
            raise KeyError(f"no allocas of func {func!r} in space {space!r}")
        if len(matches) > 1:
            places = ", ".join(f"{r.file} chunk {r.chunk}" for r in matches[:5])
            raise KeyError(f"func {func!r} space {space!r} appears {len(matches)} times "
                           f"({places}); pass file= and chunk=")
        return matches[0]

    def graph(self, func: str, space: int | str, file: str | None = None,
              chunk: int | None = None) -> nx.Graph:
        """The interference graph: nodes are allocas (attributes: name, words, line, ...),
        edges join allocas live at the same time."""
        report = self.report(func, space, file, chunk)
        intervals = [(a.live_start, a.live_end, a.words) for a in report.allocas]
        attributes = [
            {"kind": a.record.kind, "name": a.record.name, "words": a.words,
             "line": a.record.line,
             "col": a.record.col, "type": a.record.type, "live_start": a.live_start,
             "live_end": a.live_end, "offset": a.offset, "packed_offset": a.packed_offset,
             "loc": a.record.loc.short()}
            for a in report.allocas
        ]
        return build_graph(intervals, attributes)

    @property
    def has_crossing(self) -> bool:
        return any_crossing(self.reports)

    @property
    def skipped_allocas(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if is_skipped_allocation(d)]

    def select(self, spaces: Iterable[str] | None = None, funcs: Iterable[str] | None = None
               ) -> Analysis:
        """The same analysis restricted to some spaces and funcs (names may use wildcards)."""
        return Analysis(select_reports(self.reports, spaces, funcs), self.diagnostics,
                        self.bounds)

    def groups(self, func: str, space: int | str, by: str = "source",
               file: str | None = None, chunk: int | None = None) -> Rollup:
        """Who holds the scratch: the entries on the stack at the peak, grouped by resolved
        source line (`by="source"`), source file (`"file"`) or outermost name location
        (`"name"`), largest first; their words plus `padding_words` equal the stack peak."""
        return roll_up(self.report(func, space, file, chunk), by)


@dataclass(frozen=True, slots=True)
class ReportOutline:
    """What is kept of a report once its output was made where its file was read (`sc-mlir
    analyze` over many files, as JSON, CSV or the table): what an analysis is ordered,
    selected and judged by, and what the table's summary row shows, so that the report
    itself need not travel from the worker process. A report whose crossing the table
    explains travels whole, as `crossing_report`."""

    file: str
    chunk: int
    func: str
    memory_space: str | None
    space_id: int | None
    space_name: str
    space_label: str
    verdict: str
    severity: tuple[int, float]
    dump_header: str | None
    bound_words: int | None
    stack_peak_words: int
    percent_of_bound: float | None
    liveness_peak_words: int
    packed_peak_words: int
    n_allocas: int
    n_unsized: int
    # Compared by the fields above: the report's allocas compare by identity.
    crossing_report: SpaceReport | None = field(default=None, compare=False)

    def __reduce__(self) -> tuple[type[ReportOutline], tuple[object, ...]]:
        # Outlines travel back from the workers by the thousand: as one tuple each, rebuilt
        # by the constructor (a frozen slots dataclass otherwise pickles through Python-level
        # __getstate__/__setstate__ that walk `fields()` for every one: 18 -> 6 ms to
        # pickle and 18 -> 11 ms to unpickle 4,489 outlines).
        return (ReportOutline, _outline_fields(self))

    @classmethod
    def of(cls, report: SpaceReport, keep_crossing: bool = False) -> ReportOutline:
        """The outline of a report: `order_reports`, `select_reports` and `any_crossing`
        give the same answers on outlines as on the reports, and the terminal summary the
        same rows. `keep_crossing`: a report with a crossing is kept whole, for the
        terminal's explanation of it."""
        return cls(
            file=report.file, chunk=report.chunk, func=report.func,
            memory_space=report.memory_space, space_id=report.space_id,
            space_name=report.space_name, space_label=report.space_label,
            verdict=report.verdict, severity=report.severity, dump_header=report.dump_header,
            bound_words=report.bound_words, stack_peak_words=report.stack_peak_words,
            percent_of_bound=report.percent_of_bound,
            liveness_peak_words=report.liveness_peak_words,
            packed_peak_words=report.packed_peak_words, n_allocas=report.n_allocas,
            n_unsized=report.n_unsized,
            crossing_report=report.crossing_report if keep_crossing else None)


# Every field of an outline, in the constructor's order.
_outline_fields = attrgetter(*(f.name for f in fields(ReportOutline)))

_Report = TypeVar("_Report", SpaceReport, ReportOutline)


def select_reports(reports: list[_Report], spaces: Iterable[str] | None = None,
                   funcs: Iterable[str] | None = None) -> list[_Report]:
    """The reports (or outlines) of some spaces and funcs (names may use wildcards), in
    their order."""
    import fnmatch

    if spaces:
        wanted = list(spaces)
        reports = [r for r in reports if any(_space_is(r, s) for s in wanted)]
    if funcs:
        patterns = list(funcs)
        reports = [r for r in reports
                   if any(fnmatch.fnmatchcase(r.func, p) for p in patterns)]
    return reports


def order_reports(reports: list[_Report]) -> list[_Report]:
    """Worst first: the order of `Analysis.reports` (stable: ties keep the dump's order)."""
    return sorted(reports, key=_report_order)


def any_crossing(reports: Iterable[SpaceReport | ReportOutline]) -> bool:
    """Whether an allocation crosses its bound in any of these reports (or outlines)."""
    return any(r.verdict in (OVERFLOW, ALLOCATOR_LIMITED) for r in reports)


def _space_is(report: SpaceReport | ReportOutline, space: int | str) -> bool:
    return space_matches(space, report.space_id, report.space_name, report.memory_space)


def space_row(report: SpaceReport) -> dict[str, object]:
    crossing = report.crossing
    return {
        "file": report.file, "chunk": report.chunk, "module": report.module,
        "func": report.func, "dump_header": report.dump_header,
        "memory_space": report.memory_space, "space_id": report.space_id,
        "space_name": report.space_name, "bound_words": report.bound_words,
        "bound_source": report.bound_source, "alignment_bytes": report.align_bytes,
        "alignment_source": report.align_source,
        "stack_peak_words": report.stack_peak_words,
        "liveness_peak_words": report.liveness_peak_words,
        "packed_peak_words": report.packed_peak_words,
        "percent_of_bound": report.percent_of_bound, "headroom_words": report.headroom_words,
        "verdict": report.verdict, "n_allocas": report.n_allocas,
        "n_scratch_operands": report.count_of(SCRATCH_OPERAND),
        "n_semaphores": report.count_of(SEMAPHORE), "unsized_allocas": report.n_unsized,
        "crossing_name": crossing.alloca.name if crossing else None,
        "crossing_line": crossing.alloca.record.line if crossing else None,
        "crossing_offset_upper_bound_words": (crossing.offset_upper_bound_words if crossing
                                              else None),
        "crossing_dead_reserved_words": crossing.dead_reserved_words if crossing else 0,
        "must_free_words": report.must_free_words,
    }


def placed_row(report: SpaceReport, placed: PlacedAlloca) -> dict[str, object]:
    """An alloca of a report as a flat row (lists for the shape and the name chain)."""
    r = placed.record
    return {
        "file": r.file, "chunk": r.chunk, "module": r.module, "func": r.func,
        "memory_space": r.memory_space, "space_id": r.space_id, "space_name": r.space_name,
        "kind": r.kind, "name": r.name, "scratch_index": r.scratch_index, "line": r.line,
        "col": r.col, "type": r.type, "size_assumed": r.size_assumed,
        "element_type": r.element_type,
        "shape": list(r.shape) if r.shape is not None else None,
        "words": r.words, "alignment": r.alignment, "order": r.order,
        "offset": placed.offset, "upper_bound": placed.upper_bound,
        "padding": placed.padding, "live_start": placed.live_start,
        "live_end": placed.live_end, "last_use_line": r.last_use_line,
        "packed_offset": placed.packed_offset, "scope_op": r.scope_op,
        "scope_path": r.scope_path, "on_stack_at_crossing": placed.on_stack_at_crossing,
        "live_at_peak": placed.live_at_peak, "loc_file": r.loc.file,
        "loc_line": r.loc.line, "loc_col": r.loc.col, "loc_names": list(r.loc.names),
    }


def group_key(record: Allocation) -> tuple[str, int, str, str, str]:
    return (record.file, record.chunk, record.module, record.func, record.space_key)


_order = attrgetter("order")


def _reports(records: Iterable[Allocation], bounds: Bounds,
             representatives: list[Allocation] | None = None) -> list[SpaceReport]:
    """The reports of these records' groups, in the order the groups first appear; with
    `representatives`, the first record of each (file, chunk, module, func, space object)
    and every heap record are appended to it (see `reports_of_file`)."""
    groups: dict[tuple[str, int, str, str, str], list[Allocation]] = {}
    # A group's key is made once per (file, chunk, module, func, space object), read from
    # the placement without its properties: the allocas of a type share the space object
    # (the records hold the objects whose ids are used, so no id is reused meanwhile).
    group_of: dict[tuple[str, int, str, str, int], list[Allocation]] = {}
    # Whether the records come in program order (a file's records do): each group then
    # does too, and need not be sorted (4,489 sorts of a 50 MB dump's groups: ~10 ms).
    in_order = True
    last_order = -1 << 62
    for record in records:
        if record.kind == HEAP:  # not on the scoped stack (a note says so)
            if representatives is not None:
                representatives.append(record)
            continue
        order = record.order
        if order < last_order:
            in_order = False
        last_order = order
        placement = record.placement
        shared = (record.file, record.chunk, placement.module, placement.func,
                  id(record.space))
        group = group_of.get(shared)
        if group is None:
            if representatives is not None:
                representatives.append(record)
            key = group_key(record)
            group = groups.get(key)
            if group is None:
                group = groups[key] = []
            group_of[shared] = group
        group.append(record)
    with paused_gc():
        if in_order:  # `sorted` would keep each group as it is (it is stable)
            return [analyze_space(group, bounds) for group in groups.values()]
        return [analyze_space(sorted(group, key=_order), bounds) for group in groups.values()]


def _report_order(report: SpaceReport | ReportOutline
                  ) -> tuple[tuple[int, float], str, int, str, str]:
    return (report.severity, report.file, report.chunk, report.func, report.space_label)


def reports_of_file(bounds: Bounds, records: Iterable[Allocation],
                    representatives: list[Allocation] | None = None) -> list[SpaceReport]:
    """The reports of one file's records, in the order their groups first appear (unsorted).
    The bounds come first, so that `partial(reports_of_file, bounds)` is a `load(...,
    work=)` that makes them in the process that reads each file.

    `representatives`, when given, gets some of the records: one of each (file, chunk,
    module, func, memory space object) they hold, and every heap record. What the records
    say per func and space (the selection checks' facets) is said by these alone, found
    while the records are grouped: a file has thousands of records and a few per group."""
    return _reports(records, bounds, representatives)


def analyze_records(records: Iterable[Allocation], bounds: Bounds) -> list[SpaceReport]:
    return order_reports(_reports(records, bounds))


class FileByFileAnalysis:
    """`analyze`, done as the files of a dump are read (`load(..., on_file=self.add)`), so
    that the work overlaps the reading of the next files in worker processes.

    A group is keyed by its file (`group_key`), so each file's reports are final once the
    file is read; the groups first appear in the same order as in the whole dump, and the
    sort is stable: `finish` gives what `analyze` gives on the loaded dump."""

    def __init__(self, bounds: Bounds | Mapping[str, int] | None = None, *,
                 chip: str | None = None, align: Mapping[str, int] | None = None) -> None:
        self.bounds = _bounds_table(bounds, chip, align)
        self.reports: list[SpaceReport] = []

    def add(self, records: Iterable[Allocation]) -> list[SpaceReport]:
        """Analyse one file's records; returns its reports."""
        return self.add_reports(_reports(records, self.bounds))

    def add_reports(self, reports: list[SpaceReport]) -> list[SpaceReport]:
        """Take one file's reports made elsewhere by `reports_of_file(self.bounds, records)`
        (in the worker process that read the file)."""
        self.reports.extend(reports)
        return reports

    def finish(self, dump: Dump) -> Analysis:
        """The analysis of the dump whose files were all added, in their order."""
        return Analysis(order_reports(self.reports), list(dump.diagnostics), self.bounds)


def _bounds_table(bounds: Bounds | Mapping[str, int] | None, chip: str | None,
                  align: Mapping[str, int] | None) -> Bounds:
    return build_bounds(None, chip, bounds, align, bounds_source="analyze(bounds=...)",
                        align_source="analyze(align=...)")


def analyze(dump: Dump, bounds: Bounds | Mapping[str, int] | None = None, *,
            chip: str | None = None, align: Mapping[str, int] | None = None) -> Analysis:
    """Analyse every (func, memory space) of a dump.

    `bounds` is a `Bounds`, or a mapping such as `{"201": 65535, "spmem": 131071}` applied on
    top of the built-in table; `chip` picks TileSpmem's bound from the per-chip table;
    `align` maps spaces to a default alignment in bytes.
    """
    table = _bounds_table(bounds, chip, align)
    return Analysis(analyze_records(dump.records, table), list(dump.diagnostics), table)
