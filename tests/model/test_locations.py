"""`#loc` alias tables and resolution to the user's source."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.locations import LocationTable
from sc_mlir.read.scan import scan_text
from sc_mlir.syntax.locations import AliasLoc, CallSiteLoc, FileLoc, NameLoc


def resolve(table: dict[str, str], start: str):
    return LocationTable(table).resolve(AliasLoc(start))


def test_file_line_col_and_ranges():
    r = resolve({"#l": 'loc("k.py":10:4 to :9)'}, "#l")
    assert (r.file, r.line, r.col, r.end_line, r.end_col) == ("k.py", 10, 4, 10, 9)
    r = resolve({"#l": 'loc("k.py":10:4 to 12:2)'}, "#l")
    assert (r.end_line, r.end_col) == (12, 2)


def test_unknown_has_no_file():
    r = resolve({"#loc": "loc(unknown)"}, "#loc")
    assert r.file is None and r.problems == ()


def test_name_chain_through_nested_aliases_outermost_first():
    table = {
        "#loc1": 'loc("k.py":413:6 to :48)',
        "#loc11": 'loc("kernel"(#loc1))',
        "#loc21": 'loc("run_scoped"(#loc11))',
        "#loc28": 'loc("run_scoped:"(#loc21))',
    }
    r = resolve(table, "#loc28")
    assert r.names == ("run_scoped:", "run_scoped", "kernel")
    assert (r.file, r.line, r.col) == ("k.py", 413, 6)


def test_callsite_takes_the_callee_and_records_callers_innermost_first():
    table = {
        "#callee": 'loc("f.py":5:1)',
        "#mid": 'loc("f.py":20:3)',
        "#top": 'loc("main.py":1:1)',
        "#inner": "loc(callsite(#callee at #mid))",
        "#outer": "loc(callsite(#inner at #top))",
    }
    r = resolve(table, "#outer")
    assert (r.file, r.line) == ("f.py", 5)
    assert [(c.file, c.line) for c in r.callers] == [("f.py", 20), ("main.py", 1)]


def test_fused_picks_the_first_part_with_a_file():
    r = resolve({"#l": 'loc(fused<"pass">["just a name", "g.py":7:3, "h.py":1:1])'}, "#l")
    assert (r.file, r.line, r.col) == ("g.py", 7, 3)


def test_fused_aliases_in_a_loop_resolve_alike_in_either_order():
    """#b's first part, #a, has a file: so has #b, whichever alias a report resolves first.
    (Resolving every part of #a reached #b through the loop, and cached #b as its second
    part's file when #a came first.)"""
    table = {"#f": 'loc("f.py":1:1)', "#a": "loc(fused[#f, #b])",
             "#b": 'loc(fused[#a, "g.py":2:2])'}
    for order in (("#a", "#b"), ("#b", "#a")):
        locations = LocationTable(dict(table))
        resolved = {name: locations.resolve(AliasLoc(name)) for name in order}
        assert {name: (r.file, r.line) for name, r in resolved.items()} == {
            "#a": ("f.py", 1), "#b": ("f.py", 1)}


def test_aliases_that_point_to_nothing_or_to_themselves_are_reported_not_fatal():
    r = resolve({"#a": "loc(#a)"}, "#a")
    assert r.file is None and "refers to itself" in r.problems[0]
    r = resolve({"#a": 'loc("n"(#missing))'}, "#a")
    assert r.names == ("n",) and "not defined" in r.problems[0]
    r = resolve({"#a": "loc(((("}, "#a")
    assert "does not parse" in r.problems[0]


def test_a_long_alias_chain_does_not_recurse():
    table = {f"#l{i}": f"loc(#l{i + 1})" for i in range(5000)}
    table["#l5000"] = 'loc("deep.py":1:1)'
    assert resolve(table, "#l0").file == "deep.py"


def test_aliases_defined_at_the_top_or_the_end_of_the_file_both_resolve():
    text = """#top = loc("top.py":1:2)
func.func @f() {
  %a = memref.alloca() : memref<4xf32> loc(#top)
  %b = memref.alloca() : memref<4xf32> loc(#end)
  return
}
#end = loc("name"(#inner))
#inner = loc(callsite("end.py":3:4 at "caller.py":9:9))
"""
    records, diagnostics = build_allocations(scan_text(text))
    assert diagnostics == []
    assert [(r.loc.file, r.loc.line, r.loc.col) for r in records] == [
        ("top.py", 1, 2), ("end.py", 3, 4)]
    assert records[1].loc.names == ("name",)


def test_syntax_nodes_are_plain_values():
    assert NameLoc("a", FileLoc("f", 1, 2)) == NameLoc("a", FileLoc("f", 1, 2))
    assert CallSiteLoc(AliasLoc("#a"), AliasLoc("#b")).callee == AliasLoc("#a")


def _random_table(rng: random.Random, size: int) -> dict[str, str]:
    """Aliases #l0..#l<size-1>, each a file, a name, a call site, a fused location or
    unknown, over later aliases (so no loops) and undefined ones, two per alias."""
    table = {}
    for i in range(size):
        targets = [f"#l{j}" for j in range(i + 1, size)] + [f"#undefined{i}a", f"#undefined{i}b"]
        kind = rng.choice("ffnncfu")
        if kind == "f":
            table[f"#l{i}"] = f'loc("f{i}.py":{i}:1)'
        elif kind == "n":
            table[f"#l{i}"] = f'loc("n{i}"({rng.choice(targets)}))'
        elif kind == "c":
            table[f"#l{i}"] = f"loc(callsite({rng.choice(targets)} at {rng.choice(targets)}))"
        elif kind == "u":
            table[f"#l{i}"] = "loc(unknown)"
        else:
            parts = ", ".join(rng.choice(targets) for _ in range(rng.randint(1, 3)))
            table[f"#l{i}"] = f"loc(fused[{parts}])"
    return table


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 1 << 30), size=st.integers(1, 9))
def test_the_walk_for_chains_too_deep_to_recurse_gives_what_recursion_gives(seed, size):
    """`resolve` falls back to an iterative walk when a chain is deeper than the
    interpreter's stack: both give the same file, names, callers and problems, in order."""
    table = _random_table(random.Random(seed), size)
    for i in range(size):
        alias = AliasLoc(f"#l{i}")
        assert LocationTable(dict(table))._resolve(alias) == LocationTable(
            dict(table)).resolve(alias)
