"""Liveness: each alloca is live from its op to its last use (inclusive program points;
the rules are docs/SEMANTICS.md §5).

The largest sum of live words over all program points is the lower bound any allocator
needs for the space.

>>> peak = liveness_peak([(1, 4, 10), (3, 6, 5), (5, 9, 7)])
>>> peak.words, peak.point, peak.live
(15, 3, (0, 1))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class LivenessPeak:
    words: int
    point: int | None  # a program point where the peak is reached (the first one)
    live: tuple[int, ...]  # indices of the intervals live there


def liveness_peak(intervals: Sequence[tuple[int, int, int]]) -> LivenessPeak:
    """`intervals` are (start, end, words) with start <= end, both inclusive."""
    # (point, 0 for an end / 1 for a start, words): at one point, ends are applied before
    # starts; the order among starts does not change the peak reached there.
    events = [(start, 1, words) for start, _end, words in intervals]
    events.extend([(end + 1, 0, -words) for _start, end, words in intervals])
    events.sort()
    current = peak = 0
    point: int | None = None
    for position, _kind, delta in events:
        current += delta
        if delta > 0 and current > peak:
            peak, point = current, position
    if point is None:
        return LivenessPeak(0, None, ())
    live = tuple(i for i, (s, e, _) in enumerate(intervals) if s <= point <= e)
    return LivenessPeak(peak, point, live)


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
