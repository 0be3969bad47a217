"""The scoped stack: what the compiler's E3000 message describes (docs/SEMANTICS.md §1, §4,
§7).

Allocas are placed in program order on a bump pointer; when control leaves a scope op
(func.func, tpu.region, memref.alloca_scope, a loop body...) the scope's allocas are popped
and the pointer returns to where it was when the scope was entered. Each alloca's offset
is the top aligned to its alignment; its upper bound is offset + words, the number the
compiler compares with the bound.

>>> from types import SimpleNamespace as A
>>> a = A(order=2, scope_start=1, scope_end=9, words=64)
>>> b = A(order=4, scope_start=3, scope_end=5, words=100)   # inner scope, popped at 5
>>> c = A(order=7, scope_start=6, scope_end=8, words=10)
>>> result = simulate_stack([a, b, c], lambda _: 1, bound=100)
>>> [(p.offset, p.upper_bound) for p in result.placements], result.crossing_stack
([(0, 64), (64, 164), (64, 74)], (0, 1))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol


class StackItem(Protocol):
    order: int
    scope_start: int
    scope_end: int
    words: int | None


class Placement(NamedTuple):
    offset: int
    upper_bound: int
    padding: int  # words skipped to align


# Not frozen: one per (func, space), and a frozen dataclass sets each of its fields through
# `object.__setattr__`; nothing changes one after `stack_of` made it.
@dataclass(slots=True)
class StackResult:
    # Per item, in the input's order: where it is placed, its upper bound, and the words
    # skipped to align it (columns: one analysis makes tens of thousands of placements).
    offsets: list[int]
    upper_bounds: list[int]
    paddings: list[int]
    peak_words: int
    peak_index: int | None
    crossing_index: int | None  # the first alloca whose upper bound exceeds the bound
    # The allocas on the stack right after the crossing (and the peak) alloca is placed,
    # itself included, bottom first (indices into the input).
    crossing_stack: tuple[int, ...]
    peak_stack: tuple[int, ...]

    @property
    def placements(self) -> list[Placement]:
        return [Placement(*placed) for placed in
                zip(self.offsets, self.upper_bounds, self.paddings, strict=True)]


def align_up(value: int, alignment: int) -> int:
    if alignment <= 1:
        return value
    return -(-value // alignment) * alignment


def simulate_stack(items: Sequence[StackItem], align_words: Callable[[StackItem], int],
                   bound: int | None = None) -> StackResult:
    """Place `items` (in program order) on the scoped stack. Unknown sizes count as 0."""
    return stack_of([item.order for item in items], [item.scope_start for item in items],
                    [item.scope_end for item in items], [item.words or 0 for item in items],
                    [align_words(item) for item in items], bound)


def stack_of(orders: Sequence[int], scope_starts: Sequence[int], scope_ends: Sequence[int],
             sizes: Sequence[int], aligns: Sequence[int], bound: int | None = None
             ) -> StackResult:
    """`simulate_stack` over columns (one entry per item, in program order): what the
    analysis calls for every (func, space), without an attribute lookup per item."""
    frames: list[tuple[int, int, int, list[int]]] = []  # scope start, end, saved top, members
    # When each item leaves the stack (the index of the item whose arrival pops it): the
    # stack after any item placed is then one comprehension, not a second walk.
    count = len(orders)
    popped_at = [count] * count
    offsets = [0] * count
    upper_bounds = [0] * count
    paddings = [0] * count
    top = 0
    peak, peak_index = 0, None
    crossing_index: int | None = None
    crossing_stack: tuple[int, ...] = ()
    members: list[int] = []  # of the top frame
    # The top frame's scope start and end, kept apart from `frames` (read for every item).
    top_start = top_end = 0
    limit = bound if bound is not None else math.inf
    for index, order in enumerate(orders):
        if frames and top_end < order:
            while frames and frames[-1][1] < order:
                _start, _end, top, popped = frames.pop()
                for member in popped:
                    popped_at[member] = index
            if frames:
                top_start, top_end, _top, members = frames[-1]
            else:
                members = []
        scope_start = scope_starts[index]
        if not frames or top_start != scope_start:
            members = []
            top_start, top_end = scope_start, scope_ends[index]
            frames.append((top_start, top_end, top, members))
        alignment = aligns[index]
        offset = top if alignment <= 1 else -(-top // alignment) * alignment  # align_up
        upper = offset + sizes[index]
        offsets[index] = offset
        upper_bounds[index] = upper
        paddings[index] = offset - top
        members.append(index)
        top = upper
        if upper > peak or peak_index is None:
            peak, peak_index = upper, index
        if upper > limit and crossing_index is None:
            crossing_index = index
            crossing_stack = tuple(i for frame in frames for i in frame[3])
    # Frames hold increasing indices bottom first (a frame gets members only while it is
    # the top one), so the stack after the peak is the items placed by then, not yet popped.
    peak_stack = (() if peak_index is None else
                  tuple([i for i in range(peak_index + 1) if popped_at[i] > peak_index]))
    return StackResult(offsets, upper_bounds, paddings, peak, peak_index, crossing_index,
                       crossing_stack, peak_stack)
