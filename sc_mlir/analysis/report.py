"""One memory space of one func, analysed: the three views side by side and the verdict
(docs/SEMANTICS.md §7), and the cheapest fix (§8)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, neg
from typing import NamedTuple

from sc_mlir.analysis.interference import pack
from sc_mlir.analysis.liveness import liveness_peak
from sc_mlir.analysis.stack import StackResult, simulate_stack, stack_of
from sc_mlir.model.allocation import SCRATCH_OPERAND, Allocation
from sc_mlir.model.bounds import WORD_BYTES, Bounds

FITS = "fits"
ALLOCATOR_LIMITED = "allocator-limited"
OVERFLOW = "overflow"
UNKNOWN_BOUND = "unknown-bound"
# Worst first: overflow, allocator-limited, then what fits (fullest first), then spaces
# without a bound, which say nothing about failing.
SEVERITY = {OVERFLOW: 0, ALLOCATOR_LIMITED: 1, FITS: 2, UNKNOWN_BOUND: 3}


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

    def __reduce__(self) -> tuple[type[PlacedAlloca], tuple[object, ...]]:
        # Reports travel from the worker that analysed a file; the dataclass's own state
        # functions walk `fields()` for every one of tens of thousands.
        return (PlacedAlloca, (self.record, self.offset, self.upper_bound, self.padding,
                               self.live_start, self.live_end, self.packed_offset,
                               self.on_stack_at_crossing, self.live_at_peak))

    @property
    def words(self) -> int:
        return self.record.words or 0

    @property
    def name(self) -> str:
        return self.record.name or f"(unnamed at line {self.record.line})"

    @property
    def kind(self) -> str:
        return self.record.kind


@dataclass(frozen=True)
class Contributor:
    """An alloca on the stack at the crossing, ranked by size."""

    alloca: PlacedAlloca
    cumulative_percent: float
    live: bool  # still needed when the crossing alloca is made (else: dead but reserved)


@dataclass(frozen=True)
class RemovalStep:
    """One entry of the cheapest fix: free `free_words` of it (all of it, or a shrink)."""

    entry: PlacedAlloca
    free_words: int
    dead: bool  # past its last use at the crossing: only its scope keeps it

    @property
    def whole(self) -> bool:
        return self.free_words >= self.entry.words

    def advice(self) -> str:
        """What to do, in the user's terms."""
        entry, record = self.entry, self.entry.record
        source = record.loc.short() or f"line {record.line}"
        if record.kind == SCRATCH_OPERAND:
            what = (f"shrink scratch_shapes entry {record.scratch_index} ({entry.name}, "
                    f"{record.type}, {entry.words:,} words)")
            if self.whole:
                return f"drop scratch_shapes entry {record.scratch_index} ({entry.name}, " \
                       f"{record.type}, {entry.words:,} words)"
            return f"{what} by {self.free_words:,} words"
        if self.dead:
            return (f"release {entry.name} ({entry.words:,} words, {source}) before its "
                    f"scope ends: it is dead after line {record.last_use_line}")
        if self.whole:
            return f"remove {entry.name} ({entry.words:,} words, {source})"
        return f"shrink {entry.name} ({entry.words:,} words, {source}) by " \
               f"{self.free_words:,} words"


@dataclass(frozen=True)
class Crossing:
    """The first alloca whose upper bound exceeds the bound: where the compiler fails."""

    alloca: PlacedAlloca
    offset_upper_bound_words: int
    bound_words: int
    allocating_words: int
    contributors: tuple[Contributor, ...]
    # The cheapest fix (`cheapest_fix`): fewest entries, dead-but-reserved first, then the
    # smallest that suffice; the last may only need shrinking.
    fix: tuple[RemovalStep, ...]

    # Where the stack still crosses the bound with the fix applied, or None: the fix makes
    # the func fit (it is planned at the peak, which may need more than this crossing).
    fix_still_crosses: PlacedAlloca | None = None

    @property
    def removal(self) -> tuple[PlacedAlloca, ...]:
        return tuple(step.entry for step in self.fix)

    @property
    def advice(self) -> tuple[str, ...]:
        return tuple(step.advice() for step in self.fix)

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
        """Words left under the bound at the stack peak (negative: over it)."""
        if self.bound_words is None:
            return None
        return self.bound_words - self.stack_peak_words

    @property
    def percent_of_bound(self) -> float | None:
        """The stack peak as a percentage of the bound."""
        if self.bound_words is None:
            return None
        if self.bound_words == 0:
            return 0.0 if self.stack_peak_words == 0 else float("inf")
        return 100.0 * self.stack_peak_words / self.bound_words

    @property
    def n_allocas(self) -> int:
        return len(self.allocas)

    @property
    def n_unsized(self) -> int:
        """Allocas with no static size (not counted in the peaks)."""
        return len(self.unsized)

    @property
    def crossing_report(self) -> SpaceReport | None:
        """The report itself when it has a crossing to explain (as `ReportOutline`'s)."""
        return self if self.crossing is not None else None

    def count_of(self, kind: str) -> int:
        return self.kinds.count(kind)

    @property
    def kinds(self) -> list[str]:
        """The kind of each entry, in their order (read in C: a report may hold thousands)."""
        return list(map(_record_kind, self.allocas))

    @property
    def live_at_peak(self) -> tuple[PlacedAlloca, ...]:
        return tuple(compress(self.allocas, map(_is_live_at_peak, self.allocas)))

    @property
    def severity(self) -> tuple[int, float]:
        percent = self.percent_of_bound
        return (SEVERITY[self.verdict],
                -(percent if percent is not None else float(self.stack_peak_words)))


_record_kind = attrgetter("record.kind")
_is_live_at_peak = attrgetter("live_at_peak")


def align_words_of(record: Allocation, default_bytes: int) -> int:
    """Alignment in words: the op's `alignment` (bytes) if any, else the space default."""
    nbytes = record.alignment if record.alignment and record.alignment > 0 else default_bytes
    return max(1, -(-nbytes // WORD_BYTES))


def analyze_space(records: Sequence[Allocation], bounds: Bounds) -> SpaceReport:
    """Analyse the allocas of one (file, chunk, func, space), given in program order."""
    first = records[0]
    bound, bound_source = bounds.bound_for(first.space_id, first.space_name)
    align_bytes, align_source = bounds.align_for(first.space_id, first.space_name)
    # Columns read once per record (a dump has one record per alloca and a few per space):
    # the stack, liveness and packing below then index lists, never a record's properties
    # (what `align_words_of` and `Allocation.scope_end`/`scope_start` say, read inline).
    default_align = max(1, -(-align_bytes // WORD_BYTES))
    aligns: list[int] = []
    orders: list[int] = []
    scope_starts: list[int] = []
    scope_ends: list[int] = []
    sizes: list[int] = []
    live_ends: list[int] = []  # inclusive
    unsized: list[Allocation] = []
    for r in records:
        placement = r.placement
        order, live_end, words, alignment = r.order, r.live_end, r.words, r.alignment
        scope_end = placement.scope_end
        if scope_end < 0:
            scope_end = live_end
        if words is None:
            unsized.append(r)
            words = 0
        # Live from the op to its last use, but never past its scope's end (nor before
        # the op: a use list may be empty).
        end = live_end if live_end < scope_end else scope_end
        aligns.append(default_align if not alignment or alignment <= 0
                      else max(1, -(-alignment // WORD_BYTES)))
        orders.append(order)
        scope_starts.append(placement.scope_start)
        scope_ends.append(scope_end)
        sizes.append(words)
        live_ends.append(end if end > order else order)
    intervals = list(zip(orders, live_ends, sizes, strict=True))  # live range, words
    stack = stack_of(orders, scope_starts, scope_ends, sizes, aligns, bound)
    peak = liveness_peak(intervals)
    packed_offsets, packed_peak = pack(intervals, aligns)

    crossing_index = stack.crossing_index
    placed = tuple(map(PlacedAlloca, records, stack.offsets, stack.upper_bounds,
                       stack.paddings, orders, live_ends, packed_offsets))
    # The few on the stack at the crossing or live at the peak are marked as such (not
    # yet shown to anyone: the report is being made).
    for i in stack.crossing_stack:
        placed[i].on_stack_at_crossing = True
    for i in peak.live:
        placed[i].live_at_peak = True

    crossing = None
    if crossing_index is not None and bound is not None:
        align_of = dict(zip(map(id, records), aligns, strict=True))
        fix, still = plan_fix(records, placed, stack, lambda r: align_of[id(r)], bound)
        crossing = _crossing(placed, crossing_index, stack.crossing_stack, bound, fix, still)
    if bound is None:
        verdict = UNKNOWN_BOUND
    elif crossing is None:
        verdict = FITS
    elif peak.words <= bound:
        verdict = ALLOCATOR_LIMITED
    else:
        verdict = OVERFLOW
    placement, space = first.placement, first.space
    return SpaceReport(
        file=first.file, chunk=first.chunk, module=placement.module, func=placement.func,
        dump_header=placement.dump_header, memory_space=space.memory_space,
        space_id=space.space_id, space_name=space.space_name,
        bound_words=bound, bound_source=bound_source,
        align_bytes=align_bytes, align_source=align_source,
        allocas=placed, unsized=tuple(unsized),
        stack_peak_words=stack.peak_words, stack_peak_index=stack.peak_index,
        peak_stack=stack.peak_stack,
        liveness_peak_words=peak.words, liveness_peak_point=peak.point,
        packed_peak_words=packed_peak, verdict=verdict, crossing=crossing,
    )


def _crossing(placed: tuple[PlacedAlloca, ...], index: int, stack_indices: tuple[int, ...],
              bound: int, fix: tuple[RemovalStep, ...], still: PlacedAlloca | None
              ) -> Crossing:
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
    return Crossing(at, at.upper_bound, bound, at.words, tuple(contributors), fix, still)


def plan_fix(records: Sequence[Allocation], placed: Sequence[PlacedAlloca],
             stack: StackResult, align_words: Callable[[Allocation], int], bound: int,
             rounds: int = 8) -> tuple[tuple[RemovalStep, ...], PlacedAlloca | None]:
    """The cheapest fix for the whole func: first at the stack peak (the crossing may need
    less than the peak does), then, re-simulating with it applied, at any point that still
    crosses. Returns the steps and the entry where the stack still crosses after `rounds`
    (None: the fix makes the func fit)."""
    steps: list[RemovalStep] = []
    chosen: set[int] = set()
    target, on_stack, upper = stack.peak_index, stack.peak_stack, stack.peak_words
    for _ in range(rounds):
        if target is None or upper <= bound:
            return tuple(steps), None
        point = placed[target].live_start
        pool = [placed[i] for i in on_stack if id(placed[i]) not in chosen]
        dead = {id(x) for x in pool if x.live_end < point}
        new = cheapest_fix(pool, upper - bound, dead)
        if not new:
            break
        steps.extend(new)
        chosen.update(id(step.entry) for step in new)
        again = _simulate_with(records, steps, align_words, bound)
        if again.crossing_index is None:
            return tuple(steps), None
        target, on_stack = again.peak_index, again.peak_stack
        upper = again.peak_words
    again = _simulate_with(records, steps, align_words, bound)
    return tuple(steps), (None if again.crossing_index is None
                          else placed[again.crossing_index])


class _Resized(NamedTuple):
    order: int
    scope_start: int
    scope_end: int
    words: int
    record: Allocation


def _simulate_with(records: Sequence[Allocation], steps: Sequence[RemovalStep],
                   align_words: Callable[[Allocation], int], bound: int) -> StackResult:
    """The stack with each step's words freed."""
    freed = {id(step.entry.record): step.free_words for step in steps}
    items = [_Resized(r.order, r.scope_start, r.scope_end,
                      (r.words or 0) - freed.get(id(r), 0), r) for r in records]
    return simulate_stack(items, lambda item: align_words(item.record), bound)


def cheapest_fix(entries: Sequence[PlacedAlloca], excess: int, dead: set[int]
                 ) -> tuple[RemovalStep, ...]:
    """The fix `analyze` and `explain` both advise: the fewest of `entries` (the stack at
    the crossing) whose words cover `excess`; among equally few, dead-but-reserved entries
    first (ids in `dead`: freeing them costs the program nothing), then the smallest that
    suffice. The last step frees only what is still missing, so a single entry larger than
    the excess is shrunk, not removed.

    >>> from types import SimpleNamespace as R
    >>> def e(words): return R(words=words, record=R(order=words))
    >>> a, b, c, d = e(100), e(60), e(50), e(10)
    >>> [(s.entry.words, s.free_words) for s in cheapest_fix([a, b, c, d], 55, set())]
    [(60, 55)]
    >>> [(s.entry.words, s.free_words, s.dead) for s in cheapest_fix([a, b, c, d], 45, {id(a)})]
    [(100, 45, True)]
    >>> [(s.entry.words, s.free_words) for s in cheapest_fix([a, b, c, d], 120, {id(c)})]
    [(50, 50), (100, 70)]
    """
    if excess <= 0:
        return ()
    by_size = sorted(entries, key=lambda x: (-x.words, x.record.order))
    # Fewest entries: the largest ones, until they cover the excess.
    count, covered = 0, 0
    for entry in by_size:
        if covered >= excess:
            break
        count += 1
        covered += entry.words
    if covered < excess:
        count = len(by_size)  # nothing on this stack is enough: free it all
    # Each slot takes, among the entries that can still reach the excess with the largest
    # ones left, a dead one first, then the smallest. Those entries are always a run at
    # the head of `by_size`'s order (proof in `_feasible_head`), so each slot is a few
    # bisections, with the sums of the largest entries kept up to date as entries are
    # taken: a stack of 5,000 entries took 40 s when each was tried in turn.
    size_keys = [-x.words for x in by_size]
    remaining = list(range(len(by_size)))  # positions in by_size, in its order
    remaining_words = [x.words for x in by_size]
    dead_left = [at for at, x in enumerate(by_size) if x.words and id(x) in dead]
    chosen: list[PlacedAlloca] = []
    missing = excess
    left = count - 1  # entries still to choose after this slot's
    # The words of the `left` largest entries remaining, and of the `left + 1` largest.
    largest = sum(remaining_words[:left])
    largest_and_next = largest + sum(remaining_words[left:left + 1])
    while left >= 0:
        head = _feasible_head(remaining_words, left, missing, largest, largest_and_next)
        past_head = remaining[head] if head < len(remaining) else len(by_size)
        last_dead = bisect_left(dead_left, past_head)
        if last_dead:
            # The smallest dead entry in the head, the first in order among its size.
            words = by_size[dead_left[last_dead - 1]].words
            pick = dead_left.pop(bisect_left(dead_left, bisect_left(size_keys, -words)))
        else:
            words = remaining_words[head - 1]
            pick = remaining[bisect_left(remaining, bisect_left(size_keys, -words))]
        at = bisect_left(remaining, pick)
        if left:
            # The sums for one entry fewer, once the one at `at` is gone: those of the
            # entries before it are unchanged, the others reach one entry further.
            largest, largest_and_next = (
                largest - remaining_words[min(at, left - 1)],
                largest if at >= left else largest_and_next - words)
        del remaining[at], remaining_words[at]
        chosen.append(by_size[pick])
        missing -= words
        left -= 1
    # Free whole entries, largest last, so that only the last one may be shrunk.
    chosen.sort(key=lambda x: (id(x) not in dead, x.words))
    steps = []
    missing = excess
    for entry in chosen:
        free = min(entry.words, max(missing, 0))
        steps.append(RemovalStep(entry, free, id(entry) in dead))
        missing -= free
    return tuple(steps)


def _feasible_head(words: list[int], left: int, missing: int, largest: int,
                   largest_and_next: int) -> int:
    """How many of the entries (their `words`, largest first) can each, with the `left`
    largest of the others, free `missing` words: always the first ones. An entry among
    the first `left` adds up, with those others, to the `left + 1` largest
    (`largest_and_next`), the same for each; one past them to itself and the first `left`
    (`largest`), less the further it is. When the first sum falls short, so does every
    second one (no entry past them is larger than the one the first sum counts). None
    can: the first alone (it leaves least missing)."""
    if largest_and_next < missing:
        return 1
    if left >= len(words):
        return len(words)
    # Past the first `left`, those at least `missing - largest` large (a run: sorted).
    return bisect_right(words, largest - missing, lo=left, key=neg)


