"""A diff (or a what-if) as JSON and CSV rows: one row builder per output, the CSV
columns named as the JSON fields."""

from __future__ import annotations

from sc_mlir.compare.diff import KIND, Added, DiffResult, Edit, Removed, SpaceChange

EDIT_COLUMNS = ("kind", "func", "space", "entry_kind", "scratch_index", "name_before",
                "name_after", "words_before", "words_after", "delta_words", "scope_before",
                "scope_after", "line_before", "line_after", "loc")


def edit_object(e: Edit) -> dict[str, object]:
    before = None if isinstance(e, Added) else e.before
    after = None if isinstance(e, Removed) else e.after
    side = after or before
    assert side is not None
    return {
        "kind": KIND[type(e)],
        "func": e.func,
        "space": e.space,
        "entry_kind": side.kind,
        "scratch_index": side.scratch_index,
        "name_before": before.name if before else None,
        "name_after": after.name if after else None,
        "words_before": before.words if before else None,
        "words_after": after.words if after else None,
        "delta_words": e.delta_words,
        "scope_before": before.scope_path if before else None,
        "scope_after": after.scope_path if after else None,
        "line_before": before.line if before else None,
        "line_after": after.line if after else None,
        "loc": side.loc,
    }


def space_object(c: SpaceChange) -> dict[str, object]:
    b, a = c.before, c.after
    return {
        "func": c.func,
        "func_before": c.func_before,
        "memory_space": c.memory_space,
        "space": c.space_label,
        "program_before": b.program if b else None,
        "program_after": a.program if a else None,
        "bound_words": (a or b).bound_words if (a or b) else None,
        "before_stack_peak_words": b.stack_peak_words if b else None,
        "after_stack_peak_words": a.stack_peak_words if a else None,
        "delta_words": c.delta_words,
        "before_liveness_peak_words": b.liveness_peak_words if b else None,
        "after_liveness_peak_words": a.liveness_peak_words if a else None,
        "liveness_delta_words": c.liveness_delta_words,
        "before_verdict": b.verdict if b else None,
        "after_verdict": a.verdict if a else None,
        "after_over_words": c.still_over_words,
        "after_free_words": c.now_free_words,
    }


def diff_object(result: DiffResult, top: int | None = None) -> dict[str, object]:
    edits = result.changed
    unchanged = len(result.allocations) - len(edits)
    return {
        "before": result.before,
        "after": result.after,
        "direction": "delta = after - before; + means it grew in after",
        "spaces": [space_object(c) for c in result.spaces],
        "allocations": [edit_object(e) for e in (edits[:top] if top else edits)],
        "unchanged_allocations": unchanged,
    }
