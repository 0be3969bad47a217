"""Explain a failed compile: match each E3000 failure in a log to the allocas of a dump,
check the log's numbers with the scoped-stack simulation, and advise.

Matching never relies on one clue. Each candidate alloca earns points for what agrees
with the log: the op text of the `note:` (result name, type), the location (the op's
`loc(...)` or its position in a dump file), its size and memory space, and whether the
stack simulation, run with the log's bound, crosses the bound at that very alloca with the
same upper bound. Candidates are ranked and every point is explained.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from sc_mlir.analysis import (
    ALLOCATOR_LIMITED,
    OVERFLOW,
    SpaceReport,
    analyze_records,
)
from sc_mlir.analysis.report import Crossing, PlacedAlloca, analyze_space
from sc_mlir.failures.logs import AllocationFailure, Failure, FixedSizeFailure, ReplicaCountFailure
from sc_mlir.model.allocation import ALLOCA, Allocation
from sc_mlir.model.bounds import Bounds, space_key
from sc_mlir.model.dump import Dump
from sc_mlir.support.numbers import num

# Alignments (bytes) tried when the simulation and the log disagree.
TRIAL_ALIGNMENTS = (8, 16, 32, 64, 128, 256, 512)
COLLECTIVE_OFFLOAD_FLAGS = (
    "--xla_tpu_enable_sparse_core_collective_offload_all_gather=false",
    "--xla_tpu_enable_sparse_core_collective_offload_all_reduce=false",
)
HBM = 203


@dataclass(frozen=True)
class Candidate:
    alloca: PlacedAlloca
    report: SpaceReport
    score: int
    reasons: tuple[str, ...]

    @property
    def record(self) -> Allocation:
        return self.alloca.record


@dataclass(frozen=True)
class Explanation:
    """What the dump says about one failure found in the log."""

    failure: Failure
    candidates: tuple[Candidate, ...] = ()
    matched: Candidate | None = None
    no_match_reason: str | None = None
    notes: tuple[str, ...] = ()
    simulated_upper_bound_words: int | None = None
    agrees: bool = False
    delta_words: int | None = None
    disagreement: tuple[str, ...] = ()
    verdict: str | None = None
    advice: tuple[str, ...] = ()

    @property
    def report(self) -> SpaceReport | None:
        return self.matched.report if self.matched else None


def bounds_from_failures(failures: list[Failure], base: Bounds, source: str) -> Bounds:
    """The bounds the log states (one per memory space), on top of `base`."""
    values: dict[str, int] = {}
    for failure in failures:
        if isinstance(failure, AllocationFailure):
            values[failure.memory_space] = failure.bound_words
    return base.with_bounds(values, source) if values else base


def explain_all(failures: list[Failure], dump: Dump | None, base: Bounds | None = None,
                log_name: str = "log") -> list[Explanation]:
    base = base or Bounds.default()
    explanations = []
    cache: dict[tuple[str, int], list[SpaceReport]] = {}
    for failure in failures:
        if isinstance(failure, AllocationFailure):
            explanations.append(explain_failure(failure, dump, base, log_name, cache))
        else:
            explanations.append(Explanation(failure, advice=_other_advice(failure)))
    return explanations


def explain_failure(failure: AllocationFailure, dump: Dump | None, base: Bounds,
                    log_name: str = "log",
                    cache: dict[tuple[str, int], list[SpaceReport]] | None = None
                    ) -> Explanation:
    if dump is None:
        return Explanation(failure, no_match_reason="no dump given (use --dump DIR)",
                           advice=_advice_without_match(failure))
    key = (failure.memory_space.lower(), failure.bound_words)
    bounds = base.with_bounds({failure.memory_space: failure.bound_words},
                              f"{log_name} line {failure.log_line}")
    if cache is not None and key in cache:
        reports = cache[key]
    else:
        reports = analyze_records(dump.records, bounds)
        if cache is not None:
            cache[key] = reports
    candidates = _rank(failure, reports)
    matched = _choose(failure, candidates)
    notes = _location_notes(failure, dump)
    if matched is None:
        reason = _why_nothing(failure, dump, candidates)
        return Explanation(failure, tuple(candidates[:5]), None, reason, notes,
                           advice=_advice_without_match(failure))
    simulated = matched.alloca.upper_bound
    delta = failure.offset_upper_bound_words - simulated
    disagreement = () if delta == 0 else _why_different(failure, matched, delta, bounds)
    report = matched.report
    return Explanation(
        failure=failure,
        candidates=tuple(candidates[:5]),
        matched=matched,
        notes=notes,
        simulated_upper_bound_words=simulated,
        agrees=delta == 0,
        delta_words=delta,
        disagreement=disagreement,
        verdict=report.verdict,
        advice=_advice(failure, report),
    )


# --- matching -----------------------------------------------------------------------------


def _same_space(failure: AllocationFailure, report: SpaceReport) -> bool:
    space_id = failure.space_id
    if space_id is not None:
        return report.space_id == space_id
    return failure.memory_space.lower() in (report.space_name.lower(),
                                            (report.memory_space or "").lower())


def _normal_type(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _rank(failure: AllocationFailure, reports: list[SpaceReport]) -> list[Candidate]:
    note = failure.note
    location = failure.location_parts
    candidates = []
    for report in reports:
        in_space = _same_space(failure, report)
        crossing = report.crossing
        for placed in report.allocas:
            record = placed.record
            if record.kind != ALLOCA:
                continue  # the compiler fails at an alloca op; the others only contribute
            score = 0
            reasons: list[str] = []
            if note is not None:
                if note.results and record.name == note.results[0]:
                    score += 3
                    reasons.append(f"result name {record.name} as in the note")
                if _normal_type(note.type.text) == _normal_type(record.type):
                    score += 2
                    reasons.append(f"type {record.type} as in the note")
            if location is not None:
                file, line, col = location
                loc = record.loc
                if (loc.file is not None and os.path.basename(loc.file) == os.path.basename(file)
                        and loc.line == line and (col is None or loc.col == col)):
                    score += 4
                    reasons.append(f"its loc(...) is {failure.location}")
                elif (os.path.basename(record.file) == os.path.basename(file)
                      and record.line == line and (col is None or record.col == col)):
                    score += 4
                    reasons.append(f"it is at {failure.location} in the dump")
                elif record.line == line and (col is None or record.col == col):
                    score += 1
                    reasons.append(f"it is at line {line}, column {col} of "
                                   f"{os.path.basename(record.file)} (file name differs)")
            if not in_space and score < 4:
                continue
            if in_space:
                reasons.append(f"memory space {report.space_label}")
            if failure.allocating_words is not None and record.words == failure.allocating_words:
                score += 2
                reasons.append(f"{record.words} words, the size being allocated")
            if crossing is not None and crossing.alloca is placed:
                if crossing.offset_upper_bound_words == failure.offset_upper_bound_words:
                    score += 5
                    reasons.append("the scoped stack crosses the log's bound here, at the "
                                   f"same upper bound ({crossing.offset_upper_bound_words})")
                else:
                    score += 2
                    reasons.append("the first alloca over the log's bound in the simulation "
                                   f"(upper bound {crossing.offset_upper_bound_words})")
            if score > 0:
                candidates.append(Candidate(placed, report, score, tuple(reasons)))
    candidates.sort(key=lambda c: (-c.score, c.report.severity, c.record.file, c.record.line))
    return candidates


def _choose(failure: AllocationFailure, candidates: list[Candidate]) -> Candidate | None:
    """The best candidate, if the evidence is specific enough to name one alloca: the note,
    the location, or the simulation agreeing (score >= 4), or a size no other alloca of the
    space has."""
    if not candidates:
        return None
    best = candidates[0]
    if best.score >= 4:
        return best
    wanted = failure.allocating_words
    same_size = [c for c in candidates if wanted is not None and c.record.words == wanted
                 and _same_space(failure, c.report)]
    if len(same_size) == 1:
        only = same_size[0]
        return replace(only, reasons=(*only.reasons, f"the only alloca of {wanted} words in "
                                      "this memory space"))
    return None


def _why_nothing(failure: AllocationFailure, dump: Dump, candidates: list[Candidate]) -> str:
    if not dump.records:
        return "the dump holds no memref.alloca at all"
    wanted = failure.allocating_words
    same_size = [c for c in candidates if wanted is not None and c.record.words == wanted]
    if len(same_size) > 1:
        return (f"{len(same_size)} allocas have the {wanted} words of the log, but nothing else "
                "(note, location, stack simulation) singles one out")
    crossings = [c for c in candidates if c.report.crossing is not None
                 and c.report.crossing.alloca is c.alloca]
    simulated = ""
    if crossings:
        c = crossings[0].report.crossing
        assert c is not None
        simulated = (f"; with the log's bound the simulation crosses at {c.alloca.name} "
                     f"({c.offset_upper_bound_words} words), not at the log's "
                     f"{failure.offset_upper_bound_words}")
    size = f"{wanted} words" if wanted is not None else "the log's size"
    return (f"no alloca of {size} in memory space {failure.memory_space} fits the log{simulated}"
            ". The dump may come from another run, or the failing pass was not dumped (rerun "
            "the failing compile with --xla_sc_dump_mlir_to=DIR)")


def _location_notes(failure: AllocationFailure, dump: Dump) -> tuple[str, ...]:
    """Say so when the log's location points at nothing the dump holds."""
    parts = failure.location_parts
    if parts is None:
        return ()
    file, line, _ = parts
    for record in dump.records:
        loc = record.loc
        if loc.file and os.path.basename(loc.file) == os.path.basename(file) and loc.line == line:
            return ()
        if os.path.basename(record.file) == os.path.basename(file) and record.line == line:
            return ()
    return (f"the log's location {failure.location} is neither an op's loc(...) nor a line "
            "of a dump file here (it may name the compiler's own buffer)",)


# --- verification ----------------------------------------------------------------------------


def _why_different(failure: AllocationFailure, matched: Candidate, delta: int,
                   bounds: Bounds) -> tuple[str, ...]:
    reasons: list[str] = []
    report = matched.report
    records = [a.record for a in report.allocas]
    index = report.allocas.index(matched.alloca)
    for align in TRIAL_ALIGNMENTS:
        trial_bounds = bounds.with_alignments({space_key(report.space_id, report.space_name):
                                               align}, "trial")
        trial = analyze_space(records, trial_bounds)
        if trial.allocas[index].upper_bound == failure.offset_upper_bound_words:
            reasons.append(f"with a default alignment of {align} bytes in this space the "
                           f"simulation gives exactly {failure.offset_upper_bound_words} words: "
                           f"the compiler may align its allocations (try --align "
                           f"{space_key(report.space_id, report.space_name)}={align})")
            break
    if delta > 0:
        scratch = matched.record.scratch_operands
        if scratch:
            reasons.append(f"the func takes {scratch} scratch operand(s) (Pallas "
                           "scratch_shapes are func arguments, not allocas): their memory is "
                           "not in the dump's allocas")
        reasons.append(f"the compiler had {delta} more words on the stack than the dump shows: "
                       "allocas created by a pass after the dumped one, scratch operands, or "
                       "space the runtime reserves")
    else:
        reasons.append(f"the dump has {-delta} more words on the stack than the compiler had: "
                       "the dump may come from a later pass or another run")
    return tuple(reasons)


# --- advice ---------------------------------------------------------------------------------


def _source(placed: PlacedAlloca) -> str:
    return placed.record.loc.short() or f"line {placed.record.line}"


def _advice(failure: AllocationFailure, report: SpaceReport) -> tuple[str, ...]:
    space = report.space_id if report.space_id is not None else failure.space_id
    if space == HBM:
        return (
            "HBM (203): a single temporary allocation of the SparseCore program is too large. "
            "Shard the embedding tables or inputs over more devices, or lower "
            "max_ids_per_partition / max_unique_ids_per_partition, which size the "
            "per-partition buffers.",
        )
    if report.verdict == ALLOCATOR_LIMITED and report.crossing is not None:
        c = report.crossing
        dead = ", ".join(f"{x.alloca.name} ({num(x.alloca.words)})" for x in c.dead_reserved[:5])
        return (
            f"Reuse would fit: at most {num(report.liveness_peak_words)} words are live at once, "
            f"under the bound of {num(c.bound_words)}; the scoped stack reaches "
            f"{num(c.offset_upper_bound_words)} because scopes keep buffers past their last use.",
            *_fix_advice(c),
            f"Dead but reserved when {c.alloca.name} is allocated: {dead or 'none'} "
            f"({num(c.dead_reserved_words)} words): end their scopes earlier or restructure "
            "the scopes.",
            "If these buffers come from SparseCore collective offload, compile with "
            + " and ".join(COLLECTIVE_OFFLOAD_FLAGS) + ".",
        )
    if report.verdict == OVERFLOW and report.crossing is not None:
        largest = sorted(report.live_at_peak, key=lambda a: -a.words)[:5]
        names = ", ".join(f"{a.name} ({num(a.words)}, {_source(a)})" for a in largest)
        return (
            f"A genuine overflow: even with perfect reuse {num(report.liveness_peak_words)} words "
            f"are live at once; at least {num(report.must_free_words)} words must go.",
            *_fix_advice(report.crossing),
            f"The largest buffers live at the liveness peak: {names}. Shrink them: lower "
            "max_ids_per_partition / max_unique_ids_per_partition, the batch size, or the "
            "scratch shapes that size them.",
        )
    return (f"In this dump the space fits under the log's bound of {num(failure.bound_words)} "
            "words: the dump probably is not the failing compile's (another run, or an "
            "earlier pass).",)


def _fix_advice(crossing: Crossing) -> tuple[str, ...]:
    """The cheapest fix, as `analyze` gives it (one function decides for both)."""
    if not crossing.fix:
        return ()
    freed = sum(step.free_words for step in crossing.fix)
    text = f"Cheapest fix for the func ({num(freed)} words): " + "; ".join(crossing.advice) + "."
    if crossing.fix_still_crosses is not None:
        text += (f" The stack still crosses at {crossing.fix_still_crosses.name} with it: "
                 "more must go.")
    return (text,)


def _advice_without_match(failure: AllocationFailure) -> tuple[str, ...]:
    if failure.space_id == HBM:
        return ("HBM (203): shard the tables or inputs more, or lower max_ids_per_partition / "
                "max_unique_ids_per_partition.",)
    over = failure.offset_upper_bound_words - failure.bound_words
    return (f"The stack passed the bound by {num(over)} words when allocating "
            f"{num(failure.allocating_words or 0)} words in memory space "
            f"{failure.memory_space}. Give the dump of this compile (--xla_sc_dump_mlir_to=DIR) "
            "to see which allocas are on the stack and whether reuse would fit.",)


def _other_advice(failure: Failure) -> tuple[str, ...]:
    if isinstance(failure, ReplicaCountFailure):
        numbers = failure.numbers
        fixed = numbers.get("fixed_size_allocation_bytes")
        row = numbers.get("row_dependent_size_allocation_bytes")
        total = numbers.get("total_spmem_size_bytes")
        parts = []
        if fixed is not None and row is not None and total is not None:
            parts.append(f"Fixed ({num(fixed)} B) plus row-dependent ({num(row)} B) allocations "
                         f"need {num(fixed + row)} B of {num(total)} B of scratchpad "
                         f"({num(fixed + row - total)} B too many) at the last split tried.")
        parts.append("Lower the metadata estimates the compiler sizes buffers from "
                     "(max_ids_per_partition / max_unique_ids_per_partition, which set "
                     "max_nz_per_row and max_unique_nz_per_row) or the batch size per "
                     "SparseCore (sample_count).")
        return tuple(parts)
    if isinstance(failure, FixedSizeFailure):
        text = (f"Fixed-size allocations ({failure.fixed}) do not fit in {failure.where} "
                f"({failure.capacity}).")
        return (text, "Reduce the fixed per-table buffers: fewer or smaller stacked tables per "
                "SparseCore, a smaller feature width, or lower max_ids_per_partition.")
    return ()


__all__ = ["Candidate", "Explanation", "bounds_from_failures", "explain_all",
           "explain_failure"]
