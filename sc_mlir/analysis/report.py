"""One memory space of one func, analysed: the three views side by side and the verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sc_mlir.analysis.interference import pack
from sc_mlir.analysis.liveness import liveness_peak
from sc_mlir.analysis.stack import simulate_stack
from sc_mlir.bounds import WORD_BYTES, Bounds
from sc_mlir.model import Allocation

FITS = "fits"
ALLOCATOR_LIMITED = "allocator-limited"
OVERFLOW = "overflow"
UNKNOWN_BOUND = "unknown-bound"
# Worst first: how reports are ordered and which verdict sets the exit code.
SEVERITY = {OVERFLOW: 0, ALLOCATOR_LIMITED: 1, UNKNOWN_BOUND: 2, FITS: 3}


# Not frozen, for speed (one per alloca); never changed after `analyze_space` built it.
@dataclass(slots=True, eq=False)
class PlacedAlloca:
    """An alloca with its place on the scoped stack, its live range and packed offset."""

    record: Allocation
    offset: int
    upper_bound: int
    padding: int
    live_start: int
    live_end: int
    packed_offset: int
    on_stack_at_crossing: bool = False
    live_at_peak: bool = False

    @property
    def words(self) -> int:
        return self.record.words or 0

    @property
    def name(self) -> str:
        return self.record.name or f"(unnamed at line {self.record.line})"


@dataclass(frozen=True)
class Contributor:
    """An alloca on the stack at the crossing, ranked by size."""

    alloca: PlacedAlloca
    cumulative_percent: float
    live: bool  # still needed when the crossing alloca is made (else: dead but reserved)


@dataclass(frozen=True)
class Crossing:
    """The first alloca whose upper bound exceeds the bound: where the compiler fails."""

    alloca: PlacedAlloca
    offset_upper_bound_words: int
    bound_words: int
    allocating_words: int
    contributors: tuple[Contributor, ...]
    removal: tuple[PlacedAlloca, ...]  # fewest allocas (largest first) to get under the bound

    @property
    def dead_reserved(self) -> tuple[Contributor, ...]:
        return tuple(c for c in self.contributors if not c.live)

    @property
    def dead_reserved_words(self) -> int:
        return sum(c.alloca.words for c in self.dead_reserved)


@dataclass(frozen=True)
class SpaceReport:
    """The analysis of one memory space in one func (of one file and chunk)."""

    file: str
    chunk: int
    module: str
    func: str
    dump_header: str | None
    memory_space: str | None
    space_id: int | None
    space_name: str
    bound_words: int | None
    bound_source: str
    align_bytes: int
    align_source: str
    allocas: tuple[PlacedAlloca, ...]
    unsized: tuple[Allocation, ...]
    stack_peak_words: int
    stack_peak_index: int | None
    peak_stack: tuple[int, ...]  # allocas on the stack at the stack peak
    liveness_peak_words: int
    liveness_peak_point: int | None
    packed_peak_words: int
    verdict: str
    crossing: Crossing | None

    @property
    def space_label(self) -> str:
        if self.space_id is not None:
            return f"{self.space_id} ({self.space_name})"
        return self.space_name

    @property
    def must_free_words(self) -> int:
        """For an overflow: words that must go even with perfect reuse."""
        if self.verdict != OVERFLOW or self.bound_words is None:
            return 0
        return self.liveness_peak_words - self.bound_words

    @property
    def headroom_words(self) -> int | None:
        if self.bound_words is None:
            return None
        return self.bound_words - self.stack_peak_words

    @property
    def live_at_peak(self) -> tuple[PlacedAlloca, ...]:
        return tuple(a for a in self.allocas if a.live_at_peak)

    @property
    def severity(self) -> tuple[int, int]:
        over = self.stack_peak_words - (self.bound_words or 0)
        return (SEVERITY[self.verdict], -over)

    def _repr_html_(self) -> str:
        from sc_mlir.render.html import space_report_html

        return space_report_html(self)


def align_words_of(record: Allocation, default_bytes: int) -> int:
    """Alignment in words: the op's `alignment` (bytes) if any, else the space default."""
    nbytes = record.alignment if record.alignment and record.alignment > 0 else default_bytes
    return max(1, -(-nbytes // WORD_BYTES))


def analyze_space(records: Sequence[Allocation], bounds: Bounds) -> SpaceReport:
    """Analyse the allocas of one (file, chunk, func, space), given in program order."""
    first = records[0]
    bound, bound_source = bounds.bound_for(first.space_id, first.space_name)
    align_bytes, align_source = bounds.align_for(first.space_id, first.space_name)
    aligns = [align_words_of(r, align_bytes) for r in records]
    align_of = dict(zip(map(id, records), aligns, strict=True))

    stack = simulate_stack(records, lambda r: align_of[id(r)], bound)
    intervals = [(r.order, min(max(r.live_end, r.order), max(r.scope_end, r.order)), r.words or 0)
                 for r in records]
    peak = liveness_peak(intervals)
    packed_offsets, packed_peak = pack(intervals, aligns)

    crossing_index = stack.crossing_index
    on_stack = set(stack.crossing_stack)
    live_at_peak = set(peak.live)
    placed = tuple(
        PlacedAlloca(
            record=r,
            offset=p.offset,
            upper_bound=p.upper_bound,
            padding=p.padding,
            live_start=intervals[i][0],
            live_end=intervals[i][1],
            packed_offset=packed_offsets[i],
            on_stack_at_crossing=i in on_stack,
            live_at_peak=i in live_at_peak,
        )
        for i, (r, p) in enumerate(zip(records, stack.placements, strict=True))
    )

    crossing = None
    if crossing_index is not None and bound is not None:
        crossing = _crossing(placed, crossing_index, stack.crossing_stack, bound)
    if bound is None:
        verdict = UNKNOWN_BOUND
    elif crossing is None:
        verdict = FITS
    elif peak.words <= bound:
        verdict = ALLOCATOR_LIMITED
    else:
        verdict = OVERFLOW
    peak_stack = stack.peak_stack
    return SpaceReport(
        file=first.file, chunk=first.chunk, module=first.module, func=first.func,
        dump_header=first.dump_header, memory_space=first.memory_space,
        space_id=first.space_id, space_name=first.space_name,
        bound_words=bound, bound_source=bound_source,
        align_bytes=align_bytes, align_source=align_source,
        allocas=placed, unsized=tuple(r for r in records if r.words is None),
        stack_peak_words=stack.peak_words, stack_peak_index=stack.peak_index,
        peak_stack=peak_stack,
        liveness_peak_words=peak.words, liveness_peak_point=peak.point,
        packed_peak_words=packed_peak, verdict=verdict, crossing=crossing,
    )


def _crossing(placed: tuple[PlacedAlloca, ...], index: int, stack_indices: tuple[int, ...],
              bound: int) -> Crossing:
    at = placed[index]
    point = at.live_start
    ranked = sorted((placed[i] for i in stack_indices),
                    key=lambda a: (-a.words, a.record.order))
    total = sum(a.words for a in ranked) or 1
    contributors = []
    running = 0
    for alloca in ranked:
        running += alloca.words
        # int / int: exact for sizes far beyond a float's range.
        contributors.append(Contributor(alloca, 100 * running / total,
                                        live=alloca.live_end >= point))
    removal: list[PlacedAlloca] = []
    excess = at.upper_bound - bound
    for alloca in ranked:
        if excess <= 0:
            break
        removal.append(alloca)
        excess -= alloca.words
    return Crossing(at, at.upper_bound, bound, at.words, tuple(contributors), tuple(removal))
