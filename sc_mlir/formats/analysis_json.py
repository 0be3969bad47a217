"""The analysis as JSON-ready data: the stable contract documented in README.md."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TextIO

from sc_mlir.analysis import Analysis, PlacedAlloca, RemovalStep, SpaceReport, placed_row
from sc_mlir.analysis.rollup import Rollup, roll_up
from sc_mlir.formats.records import to_json
from sc_mlir.model.allocation import SCRATCH_OPERAND, SEMAPHORE
from sc_mlir.model.locations import SourceLocation
from sc_mlir.read.scan import Diagnostic, is_skipped_allocation


def location(loc: SourceLocation) -> dict[str, object]:
    """`problems` (only when there are some): why the chain could not be followed, e.g. an
    alias that refers to itself or to nothing."""
    found: dict[str, object] = {"file": loc.file, "line": loc.line, "col": loc.col,
                                "names": list(loc.names)}
    if loc.problems:
        found["problems"] = list(loc.problems)
    return found


def alloca_brief(placed: PlacedAlloca) -> dict[str, object]:
    r = placed.record
    return {"kind": r.kind, "name": r.name, "scratch_index": r.scratch_index,
            "type": r.type, "words": r.words, "line": r.line, "col": r.col,
            "last_use_line": r.last_use_line, "loc": location(r.loc)}


def fix_step(step: RemovalStep) -> dict[str, object]:
    return {**alloca_brief(step.entry), "free_words": step.free_words, "dead": step.dead,
            "advice": step.advice()}


def diagnostic(d: Diagnostic) -> dict[str, object]:
    return {"file": d.file, "line": d.line, "col": d.col, "message": d.message,
            "quote": d.quote}


def groups_fields(rollup: Rollup) -> dict[str, object]:
    """`group_by`, `groups` (largest first) and `padding_words`: the words of the groups
    plus the padding equal the stack peak."""
    peak = rollup.peak_entry
    return {
        "group_by": rollup.by,
        "groups_at": None if peak is None else {
            "name": peak.name, "line": peak.record.line,
            "upper_bound_words": peak.upper_bound},
        "groups": [{"key": g.key, "n_allocas": g.n_allocas, "words": g.words,
                    "percent": round(g.percent, 2),
                    "names": [m.record.name for m in g.members]} for g in rollup.groups],
        "padding_words": rollup.padding_words,
    }


GROUP_COLUMNS = ("file", "chunk", "module", "func", "space_id", "space_name",
                 "stack_peak_words", "group_by", "key", "n_allocas", "words", "percent")
PADDING_KEY = "(alignment padding)"


def group_rows(analysis: Analysis, by: str) -> list[dict[str, object]]:
    """CSV rows: one per group of every (func, space), and one for its padding when there
    is some, so that each (func, space)'s rows add up to its stack peak."""
    return [row for report in analysis.reports for row in report_group_rows(report, by)]


def report_group_rows(report: SpaceReport, by: str) -> list[dict[str, object]]:
    """`group_rows` of one (func, space)."""
    rollup = roll_up(report, by)
    base = {"file": report.file, "chunk": report.chunk, "module": report.module,
            "func": report.func, "space_id": report.space_id,
            "space_name": report.space_name, "stack_peak_words": report.stack_peak_words,
            "group_by": by}
    rows = [{**base, "key": g.key, "n_allocas": g.n_allocas, "words": g.words,
             "percent": round(g.percent, 2)} for g in rollup.groups]
    if rollup.padding_words:
        rows.append({**base, "key": PADDING_KEY, "n_allocas": 0,
                     "words": rollup.padding_words,
                     "percent": round(rollup.padding_percent, 2)})
    return rows


def space_object(report: SpaceReport, group_by: str | None = None) -> dict[str, object]:
    crossing = None
    if report.crossing is not None:
        c = report.crossing
        r = c.alloca.record
        crossing = {
            "name": r.name,
            "words": r.words,
            "type": r.type,
            "offset_upper_bound_words": c.offset_upper_bound_words,
            "bound_words": c.bound_words,
            "allocating_words": c.allocating_words,
            "file": r.file,
            "line": r.line,
            "col": r.col,
            "loc": location(r.loc),
            "contributors": [
                {**alloca_brief(x.alloca), "cumulative_percent": round(x.cumulative_percent, 2),
                 "live": x.live}
                for x in c.contributors
            ],
            "dead_reserved_words": c.dead_reserved_words,
            "dead_reserved": [alloca_brief(x.alloca) for x in c.dead_reserved],
            "removal": [alloca_brief(a) for a in c.removal],
            "fix": [fix_step(step) for step in c.fix],
            "fix_still_crosses": (alloca_brief(c.fix_still_crosses)
                                  if c.fix_still_crosses is not None else None),
        }
    # Read once: a property each, for every (func, space) of a dump.
    percent = report.percent_of_bound
    kinds = report.kinds
    unsized = report.unsized
    found: dict[str, object] = {
        "file": report.file,
        "chunk": report.chunk,
        "module": report.module,
        "func": report.func,
        "dump_header": report.dump_header,
        "memory_space": report.memory_space,
        "space_id": report.space_id,
        "space_name": report.space_name,
        "bound_words": report.bound_words,
        "bound_source": report.bound_source,
        "alignment_bytes": report.align_bytes,
        "alignment_source": report.align_source,
        "stack_peak_words": report.stack_peak_words,
        "liveness_peak_words": report.liveness_peak_words,
        "packed_peak_words": report.packed_peak_words,
        "percent_of_bound": round(percent, 2) if percent is not None else None,
        "headroom_words": report.headroom_words,
        "verdict": report.verdict,
        "n_allocas": len(kinds),
        "n_scratch_operands": kinds.count(SCRATCH_OPERAND),
        "n_semaphores": kinds.count(SEMAPHORE),
        "unsized_allocas": ([{"name": r.name, "line": r.line, "type": r.type}
                             for r in unsized] if unsized else []),
        "must_free_words": report.must_free_words,
        "live_at_peak": [alloca_brief(a) for a in report.live_at_peak],
        "crossing": crossing,
    }
    if group_by is not None:
        found.update(groups_fields(roll_up(report, group_by)))
    return found


def document(path: str, spaces: list[dict[str, object]], diagnostics: list[Diagnostic]
             ) -> dict[str, object]:
    """The JSON contract around the `space_object`s of an analysis, in its order."""
    return {
        "path": path,
        "spaces": spaces,
        "diagnostics": [diagnostic(d) for d in diagnostics],
        "skipped_allocas": sum(1 for d in diagnostics if is_skipped_allocation(d)),
    }


def write_document(out: TextIO, path: str, space_texts: Iterable[str],
                   diagnostics: list[Diagnostic]) -> None:
    """Writes `to_json(document(...))` from spaces already written as JSON (`json_text(
    space_object(...))` each, made where their file was read), in the analysis's order:
    piece by piece, as a large dump's document would be several copies of itself in
    memory if joined first."""
    around = to_json(document(path, [], diagnostics))
    head, _, tail = around.partition(',"spaces":[]')  # JSON escapes any `"` in the path
    out.write(head)
    out.write(',"spaces":[')
    for i, text in enumerate(space_texts):
        if i:
            out.write(",")
        out.write(text)
    out.write("]")
    out.write(tail)


def analysis_object(analysis: Analysis, path: str, allocations: bool = False,
                    group_by: str | None = None,
                    made: Mapping[int, dict[str, object]] | None = None) -> dict[str, object]:
    """The JSON contract. `allocations` adds every alloca (as large as the dump itself; what
    `sc-mlir diff` needs to read a saved analysis back); `group_by` adds each space's
    roll-up (`groups`, `padding_words`). `made` holds `space_object(report, group_by)` of
    reports already turned into JSON, by `id(report)` (the command makes them as each
    file is analysed)."""
    made = made or {}
    result = document(path, [made.get(id(r)) or space_object(r, group_by)
                             for r in analysis.reports], analysis.diagnostics)
    if allocations:
        result["allocations"] = [placed_row(r, a) for r in analysis.reports for a in r.allocas]
    return result
