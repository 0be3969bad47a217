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


@dataclass(frozen=True)
class StackResult:
    placements: list[Placement]
    peak_words: int
    peak_index: int | None
    crossing_index: int | None  # the first alloca whose upper bound exceeds the bound
    # The allocas on the stack right after the crossing (and the peak) alloca is placed,
    # itself included, bottom first (indices into the input).
    crossing_stack: tuple[int, ...]
    peak_stack: tuple[int, ...]


def align_up(value: int, alignment: int) -> int:
    if alignment <= 1:
        return value
    return -(-value // alignment) * alignment


def simulate_stack(items: Sequence[StackItem], align_words: Callable[[StackItem], int],
                   bound: int | None = None) -> StackResult:
    """Place `items` (in program order) on the scoped stack. Unknown sizes count as 0."""
    frames: list[tuple[int, int, int, list[int]]] = []  # scope start, end, saved top, members
    top = 0
    placements: list[Placement] = []
    peak, peak_index = 0, None
    crossing_index: int | None = None
    crossing_stack: tuple[int, ...] = ()
    for index, item in enumerate(items):
        while frames and frames[-1][1] < item.order:
            top = frames.pop()[2]
        if not frames or frames[-1][0] != item.scope_start:
            frames.append((item.scope_start, item.scope_end, top, []))
        offset = align_up(top, align_words(item))
        upper = offset + (item.words or 0)
        placements.append(Placement(offset, upper, offset - top))
        frames[-1][3].append(index)
        top = upper
        if peak_index is None or upper > peak:
            peak, peak_index = upper, index
        if crossing_index is None and bound is not None and upper > bound:
            crossing_index = index
            crossing_stack = tuple(i for frame in frames for i in frame[3])
    peak_stack = _stack_at(items, peak_index) if peak_index is not None else ()
    return StackResult(placements, peak, peak_index, crossing_index, crossing_stack,
                       peak_stack)


def _stack_at(items: Sequence[StackItem], target: int) -> tuple[int, ...]:
    """The allocas on the stack right after items[target] is placed."""
    frames: list[tuple[int, int, list[int]]] = []
    for index, item in enumerate(items[: target + 1]):
        while frames and frames[-1][1] < item.order:
            frames.pop()
        if not frames or frames[-1][0] != item.scope_start:
            frames.append((item.scope_start, item.scope_end, []))
        frames[-1][2].append(index)
    return tuple(i for frame in frames for i in frame[2])
