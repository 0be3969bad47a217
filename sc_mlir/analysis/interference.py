"""The interference graph and a packed assignment of offsets under liveness
(docs/SEMANTICS.md §7).

Nodes are allocas, edges join allocas live at the same time. Live ranges are intervals,
so the graph is an interval graph: its heaviest clique is the liveness peak.

The packing follows Triton's allocator: largest buffers first, each at the lowest
aligned offset that does not overlap a placed buffer it interferes with. Its peak is what
a reuse-aware allocator would need ("allocated"), next to the liveness lower bound
("analyzed").

>>> pack([(1, 4, 10), (5, 9, 10), (3, 6, 4)], [1, 1, 1])
([0, 0, 10], 14)
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from sc_mlir.analysis.stack import align_up

if TYPE_CHECKING:
    import networkx as nx


def interference_edges(intervals: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, of intervals that overlap; a sweep, not all pairs."""
    edges: list[tuple[int, int]] = []
    for i, overlapping in _sweep(intervals):
        edges.extend((min(i, j), max(i, j)) for j in overlapping)
    return edges


def _sweep(intervals: Sequence[tuple[int, int, int]]) -> Iterator[tuple[int, list[int]]]:
    """Each interval, in order of start, with the earlier ones that overlap it (a list
    that is the sweep's own: read it before the next step)."""
    order = sorted(range(len(intervals)), key=lambda i: intervals[i][0])
    active: list[int] = []
    for i in order:
        start = intervals[i][0]
        active = [j for j in active if intervals[j][1] >= start]
        yield i, active
        active.append(i)


def build_graph(intervals: Sequence[tuple[int, int, int]],
                attributes: Sequence[Mapping[str, object]]) -> nx.Graph:
    import networkx as nx

    graph = nx.Graph()
    for index, attrs in enumerate(attributes):
        graph.add_node(index, **attrs)
    graph.add_edges_from(interference_edges(intervals))
    return graph


def pack(intervals: Sequence[tuple[int, int, int]], align_words: Sequence[int]
         ) -> tuple[list[int], int]:
    """Offsets (in the input's order) and the peak of the greedy largest-first packing."""
    count = len(intervals)
    offsets = [0] * count
    if count == 1:  # alone: at offset 0, whatever its alignment
        return offsets, max(intervals[0][2], 0)
    by_size = [i for _size, _start, i in
               sorted([(-size, start, i) for i, (start, _end, size) in enumerate(intervals)])]
    # The buffers already placed, as (offset, offset + size, start, end), by offset: a
    # buffer goes in the first gap between those it interferes with (live at the same
    # time). In a small set, every placed buffer is kept in offset order and tested as the
    # gaps are walked (no list to make and sort per buffer); in a large one, the ones it
    # interferes with come from the sweep's edge list, sorted. Either way the same buffers,
    # in the same order of offsets.
    # A dense large set (thousands of buffers live at once) is tested directly too: its
    # edge lists would take gigabytes (20,000 buffers live together: 200 million edges,
    # 7.6 GB), and its walks visit nearly every placed buffer either way.
    neighbours: list[list[int]] | None = None
    entry_of: list[tuple[int, int, int, int] | None] = []
    if count > _DIRECT_TEST_UP_TO and _edge_count(intervals) <= _EDGES_KEPT:
        neighbours = _neighbours(intervals)
        entry_of = [None] * count
    placed: list[tuple[int, int, int, int]] = []
    peak = 0
    for i in by_size:
        start, end, size = intervals[i]
        alignment = align_words[i]
        below = placed if neighbours is None else sorted(
            [entry for entry in map(entry_of.__getitem__, neighbours[i]) if entry is not None])
        candidate = 0
        if alignment <= 1:  # as below, with nothing to align
            for lo, hi, s, e in below:
                if s <= end and start <= e:
                    if candidate + size <= lo:
                        break
                    if hi > candidate:
                        candidate = hi
        else:
            for lo, hi, s, e in below:
                if s <= end and start <= e:
                    candidate = align_up(candidate, alignment)
                    if candidate + size <= lo:
                        break
                    if hi > candidate:
                        candidate = hi
            candidate = align_up(candidate, alignment)  # 0 stays 0
        offsets[i] = candidate
        top = candidate + size
        if neighbours is None:
            insort(placed, (candidate, top, start, end))
        else:
            entry_of[i] = (candidate, top, start, end)
        if top > peak:
            peak = top
    return offsets, peak


def _edge_count(intervals: Sequence[tuple[int, int, int]]) -> int:
    """How many pairs of `intervals` overlap (`interference_edges`'s length), without
    listing them: all pairs but those where one ends before the other starts."""
    ends = sorted(end for _start, end, _size in intervals)
    count = len(intervals)
    return count * (count - 1) // 2 - sum(bisect_left(ends, start) for start, _e, _s in intervals)


def _neighbours(intervals: Sequence[tuple[int, int, int]]) -> list[list[int]]:
    """Each interval's overlapping others (`interference_edges`, as adjacency lists)."""
    neighbours: list[list[int]] = [[] for _ in intervals]
    for i, overlapping in _sweep(intervals):
        for j in overlapping:
            neighbours[j].append(i)
        neighbours[i].extend(overlapping)
    return neighbours


# Up to this many overlapping pairs, `pack` finds a buffer's neighbours from their lists
# (two list items a pair: 64 MB at most).
_EDGES_KEPT = 4_000_000
# Up to this many buffers, `pack` tests the placed buffers for overlap as it walks their
# gaps (up to n^2/2 tests) rather than sweeping for the edges first.
_DIRECT_TEST_UP_TO = 64
