"""Pass timelines as JSON and CSV rows. Deltas are AFTER the pass minus BEFORE it."""

from __future__ import annotations

from sc_mlir.compare.diff import Added, Edit, Removed
from sc_mlir.compare.passes import PassChange, PassStep, PassTimelines, Timeline
from sc_mlir.support.paths import short_path

STEP_COLUMNS = ("stream", "module", "func", "memory_space", "space_id", "space_name",
                "bound_words", "index", "pass", "arg", "failed", "file", "chunk",
                "stack_peak_words", "liveness_peak_words", "packed_peak_words", "verdict",
                "first_crossing")


def change_object(e: Edit) -> dict[str, object]:
    """One alloca a pass changed: its name (after the pass, else before), words, source."""
    before = None if isinstance(e, Added) else e.before
    after = None if isinstance(e, Removed) else e.after
    side = after or before
    assert side is not None
    return {
        "kind": type(e).__name__.lower(),
        "name": side.name,
        "name_before": before.name if before else None,
        "words_before": before.words if before else None,
        "words_after": after.words if after else None,
        "delta_words": e.delta_words,
        "loc": side.loc,
        "scope_before": before.scope_path if before else None,
        "scope_after": after.scope_path if after else None,
        "line_before": before.line if before else None,
        "line_after": after.line if after else None,
    }


def _step_object(step: PassStep, source: str) -> dict[str, object]:
    return {
        "index": step.index, "pass": step.pass_name, "arg": step.arg, "failed": step.failed,
        "file": short_path(step.file, source), "chunk": step.chunk,
        "stack_peak_words": step.stack_peak_words,
        "liveness_peak_words": step.liveness_peak_words,
        "packed_peak_words": step.packed_peak_words, "verdict": step.verdict,
    }


def _change_object(change: PassChange | None, source: str) -> dict[str, object] | None:
    if change is None:
        return None
    return {
        "index": change.index, "pass": change.pass_name, "arg": change.arg,
        "file": short_path(change.file, source), "chunk": change.chunk,
        "stack_before_words": change.stack_before_words,
        "stack_after_words": change.stack_after_words,
        "delta_stack_words": change.delta_stack_words,
        "changes": [change_object(e) for e in change.edits],
    }


def timeline_object(t: Timeline, source: str) -> dict[str, object]:
    return {
        "stream": short_path(t.stream, source), "module": t.module, "func": t.func,
        "memory_space": t.memory_space, "space_id": t.space_id, "space_name": t.space_name,
        "bound_words": t.bound_words,
        "passes": [_step_object(s, source) for s in t.steps],
        "first_crossing": _change_object(t.first_crossing, source),
        "largest_growth": _change_object(t.largest_growth, source),
    }


def timelines_object(result: PassTimelines) -> dict[str, object]:
    return {
        "source": result.source,
        "direction": "delta = after the pass - before it; + means the pass grew it",
        "passes_read": result.passes,
        "timelines": [timeline_object(t, result.source) for t in result.timelines],
        "diagnostics": [{"file": d.file, "line": d.line, "col": d.col, "message": d.message,
                         "quote": d.quote} for d in result.diagnostics],
    }


def step_rows(result: PassTimelines) -> list[dict[str, object]]:
    """One row per (timeline, pass), for `--format csv`."""
    rows = []
    for t in result.timelines:
        crossing = t.first_crossing.index if t.first_crossing else None
        for s in t.steps:
            row = _step_object(s, result.source)
            row.update({"stream": short_path(t.stream, result.source), "module": t.module,
                        "func": t.func, "memory_space": t.memory_space,
                        "space_id": t.space_id, "space_name": t.space_name,
                        "bound_words": t.bound_words, "first_crossing": s.index == crossing})
            rows.append(row)
    return rows
