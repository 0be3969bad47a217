"""Explanations of logged failures as JSON."""

from __future__ import annotations

from sc_mlir.failures.explain import Explanation
from sc_mlir.failures.logs import AllocationFailure, FixedSizeFailure, ReplicaCountFailure
from sc_mlir.formats.analysis_json import location


def explanation_object(e: Explanation) -> dict[str, object]:
    f = e.failure
    base: dict[str, object] = {
        "kind": f.kind,
        "log_lines": list(f.log_lines),
        "message": f.text,
        "memory_space": None,
        "space_id": None,
        "bound_words": None,
        "offset_upper_bound_words": None,
        "allocating_words": None,
        "location": None,
        "note_op": None,
        "matched": None,
        "candidates": [],
        "simulated_upper_bound_words": e.simulated_upper_bound_words,
        "agrees": e.agrees,
        "delta_words": e.delta_words,
        "disagreement": list(e.disagreement),
        "no_match_reason": e.no_match_reason,
        "notes": list(e.notes),
        "verdict": e.verdict,
        "advice": list(e.advice),
    }
    if isinstance(f, AllocationFailure):
        base.update({
            "memory_space": f.memory_space,
            "space_id": f.space_id,
            "bound_words": f.bound_words,
            "offset_upper_bound_words": f.offset_upper_bound_words,
            "allocating_words": f.allocating_words,
            "location": f.location,
            "note_op": f.note_op,
        })
    elif isinstance(f, ReplicaCountFailure):
        base["numbers"] = dict(f.numbers)
    elif isinstance(f, FixedSizeFailure):
        base.update({"fixed": f.fixed, "capacity": f.capacity, "where": f.where,
                     "fixed_amount": list(f.fixed_amount) if f.fixed_amount else None,
                     "capacity_amount": list(f.capacity_amount) if f.capacity_amount else None})
    if e.matched is not None:
        r = e.matched.record
        base["matched"] = {"file": r.file, "line": r.line, "col": r.col, "name": r.name,
                           "words": r.words, "type": r.type, "func": r.func,
                           "loc": location(r.loc), "reasons": list(e.matched.reasons)}
    base["candidates"] = [
        {"file": c.record.file, "line": c.record.line, "col": c.record.col,
         "name": c.record.name, "words": c.record.words, "func": c.record.func,
         "score": c.score, "reasons": list(c.reasons)}
        for c in e.candidates
    ]
    return base
