"""The analysis' shortcuts give what the plain definitions give (hypothesis).

- `stack_of` finds the stack at the peak from when each entry is popped; here it is found
  again by walking the entries up to the peak, as a compiler would push and pop them.
- `_Builder` makes each placement from its parent frame's; here from the definitions.
- `pack` tests small sets pairwise and large ones from the sweep's edge list: both paths,
  and a brute-force packing written from the definition, agree on every offset. It
  chooses between them by the number of edges, counted without listing them: that count
  is the sweep's.
- `cheapest_fix` finds each slot's pick by bisection; here every entry is tried in turn,
  as the fix is defined.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_programs import EXAMPLES, programs

from sc_mlir.analysis import interference
from sc_mlir.analysis.interference import interference_edges, pack
from sc_mlir.analysis.report import cheapest_fix
from sc_mlir.analysis.stack import simulate_stack
from sc_mlir.model.allocation import ModelSettings, build_allocations, frame_symbol, is_module_like
from sc_mlir.read.scan import OpFrame, scan_text

SETTINGS = settings(max_examples=200, deadline=None)


@st.composite
def nested_items(draw: st.DrawFn) -> list[SimpleNamespace]:
    """Entries in program order with properly nested scopes, some reopened at a level
    below (the same scope start after an inner scope ends)."""
    items: list[SimpleNamespace] = []
    point = 0

    def scope(depth: int) -> None:
        nonlocal point
        point += 1
        start = point
        inside: list[SimpleNamespace] = []
        for _ in range(draw(st.integers(0, 4))):
            if depth < 3 and draw(st.booleans()):
                scope(depth + 1)
            point += 1
            entry = SimpleNamespace(order=point, scope_start=start, scope_end=-1,
                                    words=draw(st.integers(0, 50)),
                                    align=draw(st.sampled_from([1, 1, 2, 8])))
            inside.append(entry)
            items.append(entry)
        point += 1
        for entry in inside:
            entry.scope_end = point

    for _ in range(draw(st.integers(1, 3))):
        scope(0)
    return items


def stack_after(items: list[SimpleNamespace], target: int) -> tuple[int, ...]:
    """The entries on the stack right after items[target] is placed: push and pop."""
    frames: list[tuple[int, int, list[int]]] = []
    for index, item in enumerate(items[: target + 1]):
        while frames and frames[-1][1] < item.order:
            frames.pop()
        if not frames or frames[-1][0] != item.scope_start:
            frames.append((item.scope_start, item.scope_end, []))
        frames[-1][2].append(index)
    return tuple(i for frame in frames for i in frame[2])


@SETTINGS
@given(nested_items(), st.integers(0, 120))
def test_the_stack_at_the_peak_and_the_crossing_is_what_pushing_and_popping_leaves(
        items: list[SimpleNamespace], bound: int) -> None:
    result = simulate_stack(items, lambda item: item.align, bound)
    if not items:
        assert result.peak_index is None
        return
    assert result.peak_index is not None
    assert result.peak_stack == stack_after(items, result.peak_index)
    assert result.peak_words == max(result.upper_bounds)
    if result.crossing_index is not None:
        assert result.crossing_stack == stack_after(items, result.crossing_index)
    # Each entry sits on the top of the stack left by the entries below it.
    for index, placed in enumerate(result.placements):
        below = stack_after(items, index)[:-1]
        top = result.upper_bounds[below[-1]] if below else 0
        assert placed.offset - placed.padding == top
        assert placed.offset % items[index].align == 0


def brute_force_pack(intervals: list[tuple[int, int, int]], aligns: list[int]
                     ) -> tuple[list[int], int]:
    """Largest first (ties: earlier start, then input order), each at the lowest aligned
    offset where it overlaps no placed buffer live at the same time: every candidate
    offset tried in turn (sizes of at least one word)."""
    order = sorted(range(len(intervals)), key=lambda i: (-intervals[i][2], intervals[i][0], i))
    offsets: dict[int, int] = {}
    for i in order:
        start, end, size = intervals[i]
        clashes = [(offsets[j], offsets[j] + intervals[j][2]) for j in offsets
                   if intervals[j][0] <= end and start <= intervals[j][1]]
        offset = 0
        while any(offset < hi and lo < offset + size for lo, hi in clashes):
            offset += aligns[i]
        offsets[i] = offset
    placed = [offsets[i] for i in range(len(intervals))]
    peak = max((placed[i] + intervals[i][2] for i in range(len(intervals))), default=0)
    return placed, peak


intervals_strategy = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 15), st.integers(0, 30)), max_size=90,
).map(lambda spans: [(start, start + length, size) for start, length, size in spans])


@SETTINGS
@given(intervals_strategy, st.data())
def test_packing_small_and_large_sets_gives_the_same_offsets(
        intervals: list[tuple[int, int, int]], data: st.DataObject) -> None:
    aligns = data.draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=len(intervals),
                                max_size=len(intervals)))
    pairwise = _pack_with_threshold(intervals, aligns, len(intervals))
    swept = _pack_with_threshold(intervals, aligns, -1)
    assert pairwise == swept
    offsets, peak = pairwise
    # No two buffers live at the same time share a word.
    for i, (s1, e1, w1) in enumerate(intervals):
        assert offsets[i] % aligns[i] == 0
        for j, (s2, e2, w2) in enumerate(intervals[:i]):
            if s1 <= e2 and s2 <= e1 and w1 and w2:
                assert offsets[i] + w1 <= offsets[j] or offsets[j] + w2 <= offsets[i]
    assert peak == max((o + w for o, (_, _, w) in zip(offsets, intervals, strict=True)),
                       default=0)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(1, 9)),
                max_size=12).map(lambda spans: [(s, s + n, w) for s, n, w in spans]))
def test_packing_puts_each_buffer_at_its_lowest_free_offset(
        intervals: list[tuple[int, int, int]]) -> None:
    aligns = [1 + (i % 3) for i in range(len(intervals))]
    assert _pack_with_threshold(intervals, aligns, len(intervals)) == brute_force_pack(
        intervals, aligns)
    assert _pack_with_threshold(intervals, aligns, -1) == brute_force_pack(intervals, aligns)


def _pack_with_threshold(intervals: list[tuple[int, int, int]], aligns: list[int],
                         direct_up_to: int) -> tuple[list[int], int]:
    saved = interference._DIRECT_TEST_UP_TO
    interference._DIRECT_TEST_UP_TO = direct_up_to
    try:
        return pack(intervals, aligns)
    finally:
        interference._DIRECT_TEST_UP_TO = saved


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 15), st.integers(0, 30)),
                max_size=90))
def test_edges_counted_without_listing_them_are_the_sweeps(
        spans: list[tuple[int, int, int]]) -> None:
    intervals = [(start, start + length, size) for start, length, size in spans]
    edges = interference_edges(intervals)
    assert interference._edge_count(intervals) == len(edges)
    adjacent: list[set[int]] = [set() for _ in intervals]
    for i, j in edges:
        adjacent[i].add(j)
        adjacent[j].add(i)
    neighbours = interference._neighbours(intervals)
    assert [sorted(n) for n in neighbours] == [sorted(a) for a in adjacent]


def _cheapest_fix_by_trying_each(entries: list[SimpleNamespace], excess: int,
                                 dead: set[int]) -> list[tuple[int, int, bool]]:
    """The fix as defined: the fewest entries that cover `excess`, chosen a slot at a time
    among those that can still reach it with the largest others left (a dead entry with
    words first, then the smallest, then the first in program order); freed dead ones
    first, then smallest first, the last freeing only what is missing. Each entry tried
    in turn at each slot. (entry's order, freed words, dead) per step."""
    if excess <= 0:
        return []
    by_size = sorted(entries, key=lambda x: (-x.words, x.record.order))
    count, covered = 0, 0
    for entry in by_size:
        if covered >= excess:
            break
        count, covered = count + 1, covered + entry.words
    if covered < excess:
        count = len(by_size)
    remaining, missing, chosen = list(by_size), excess, []
    for slot in range(count):
        left = count - slot - 1
        # What each can reach with the `left` largest others (`remaining` is largest first).
        reach = [x.words + sum(y.words for y in [y for y in remaining if y is not x][:left])
                 for x in remaining]
        feasible = [x for x, most in zip(remaining, reach, strict=True)
                    if most >= missing] or remaining[:1]
        pick = min(feasible, key=lambda x: (id(x) not in dead or x.words == 0, x.words,
                                            x.record.order))
        chosen.append(pick)
        remaining = [x for x in remaining if x is not pick]
        missing -= pick.words
    chosen.sort(key=lambda x: (id(x) not in dead, x.words))
    steps, missing = [], excess
    for entry in chosen:
        free = min(entry.words, max(missing, 0))
        steps.append((entry.record.order, free, id(entry) in dead))
        missing -= free
    return steps


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 12), st.booleans()), max_size=40), st.integers(-3, 200),
       st.randoms(use_true_random=False))
def test_the_cheapest_fix_is_the_one_found_by_trying_each_entry(
        sizes: list[tuple[int, bool]], excess: int, rng) -> None:
    orders = list(range(len(sizes)))
    rng.shuffle(orders)  # program order, apart from the order given
    entries = [SimpleNamespace(words=words, record=SimpleNamespace(order=order))
               for (words, _), order in zip(sizes, orders, strict=True)]
    dead = {id(entry) for entry, (_, is_dead) in zip(entries, sizes, strict=True) if is_dead}
    found = [(step.entry.record.order, step.free_words, step.dead)
             for step in cheapest_fix(entries, excess, dead)]
    assert found == _cheapest_fix_by_trying_each(entries, excess, dead)


def plain_placement(frames: tuple[OpFrame, ...], scope_ops: frozenset[str]
                    ) -> tuple[str, str, str, int, int]:
    """(func, scope op, scope path, scope start, scope end) from their definitions: the
    func is the innermost frame with a symbol that is not a module; the scope the
    innermost scope op (else the func, else the innermost frame); the path runs from the
    func (else the outermost frame) down."""
    func_frame = next((f for f in reversed(frames)
                       if not is_module_like(f) and frame_symbol(f)), None)
    func = (frame_symbol(func_frame) if func_frame else "") or ""
    scope = next((f for f in reversed(frames) if f.name in scope_ops), None)
    scope = scope or func_frame or (frames[-1] if frames else None)
    start = frames.index(func_frame) if func_frame in frames else 0
    path = "/".join(f"{f.name}@{func}" if f is func_frame else f"{f.name}#{f.sibling_index}"
                    for f in frames[start:])
    return (func, scope.name if scope else "", path, scope.order if scope else 0,
            scope.end_order if scope else -1)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_placements_built_frame_by_frame_are_those_of_the_definition(
        program: tuple[str, dict[str, int]]) -> None:
    text, _expected = program
    scan = scan_text(text, "random.mlir")
    records, _notes = build_allocations(scan)
    settings_ = ModelSettings()
    by_line = {r.line: r for r in records}
    for raw in scan.allocas:
        if raw.line not in by_line:
            continue
        record = by_line[raw.line]
        assert (record.func, record.scope_op, record.scope_path, record.scope_start,
                record.placement.scope_end) == plain_placement(raw.frames, settings_.scope_ops)


NESTED = """module @m {
  func.func @outer() {
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.alloca() : memref<4xf32, 201>
      "test.kernel"() ({
        %b = memref.alloca() : memref<8xf32, 201>
        scf.if %cond {
          %c = memref.alloca() : memref<2xf32, 201>
        }
      }) {sym_name = "inner"} : () -> ()
    }
    return
  }
}
"""


def test_a_symbol_inside_a_func_starts_a_new_func_and_path():
    records = {r.name: r for r in build_allocations(scan_text(NESTED, "n.mlir"))[0]}
    assert [(records[n].module, records[n].func, records[n].scope_op, records[n].scope_path)
            for n in ("%a", "%b", "%c")] == [
        ("@m", "outer", "scf.for", "func.func@outer/scf.for#0"),
        ("@m", "inner", "scf.for", "test.kernel@inner"),
        ("@m", "inner", "scf.for", "test.kernel@inner/scf.if#0"),
    ]


def test_a_report_made_without_its_init_is_the_one_its_init_makes():
    """`analyze_space` fills a `SpaceReport`'s __dict__ directly: the same object."""
    import dataclasses

    from sc_mlir.analysis import reports_of_file
    from sc_mlir.analysis.report import SpaceReport
    from sc_mlir.model.bounds import Bounds

    records, _notes = build_allocations(scan_text(NESTED, "n.mlir"))
    for report in reports_of_file(Bounds.default(), records):
        made = SpaceReport(**{f.name: getattr(report, f.name)
                              for f in dataclasses.fields(SpaceReport)})
        assert made == report and vars(made) == vars(report)
        assert list(vars(made)) == list(vars(report))  # the fields in their order
        with pytest.raises(dataclasses.FrozenInstanceError):
            report.func = "other"  # type: ignore[misc]


def test_a_reports_kinds_are_its_entries_kinds_and_counts():
    from sc_mlir.analysis import reports_of_file
    from sc_mlir.model.bounds import Bounds

    records, _notes = build_allocations(scan_text(NESTED, "n.mlir"))
    for report in reports_of_file(Bounds.default(), records):
        assert report.kinds == [a.kind for a in report.allocas]
        for kind in {*report.kinds, "heap"}:
            assert report.count_of(kind) == sum(a.kind == kind for a in report.allocas)
