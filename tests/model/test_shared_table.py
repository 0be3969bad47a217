"""Resolution through the fast reader's `#loc` table, which the chunks of a file read in
spans share (and with it what its values parse to): the same answers as a plain dict
of the same aliases, loops and undefined aliases included."""

from __future__ import annotations

from array import array

from conftest import CORPUS, FIXTURES

from sc_mlir.model.locations import LocationTable
from sc_mlir.read.loc_table import LocationTable as TrailingTable
from sc_mlir.syntax.locations import AliasLoc
from sc_mlir.syntax.parse import parse_location

ALIASES = {
    "#loc1": 'loc("k.py":10:4)',
    "#loc2": 'loc("jit(f)/fusion"(#loc1))',
    "#loc3": "loc(callsite(#loc2 at #loc4))",
    "#loc4": 'loc("main.py":3:1)',
    "#loc5": "loc(fused[#loc9, #loc3])",
    "#loc6": 'loc("loop"(#loc7))',
    "#loc7": "loc(callsite(#loc6 at #loc1))",
    "#loc8": "loc(not a location)",
    "#loc9": "loc(#loc12)",
    "#loc10": "loc(#loc8)",
}


def _trailing() -> TrailingTable:
    table = ("\n" + "".join(f"{name} = {value}\n" for name, value in ALIASES.items())).encode()
    return TrailingTable(table, 1, len(table), range(1, 11), {})


def test_chunks_sharing_a_table_resolve_as_a_dict_does():
    shared = _trailing()
    names = [*ALIASES, "#loc12", "#loc"]
    orders = [names, names[::-1], names[3:] + names[:3]]
    for order in orders:
        chunk = LocationTable(shared)
        alone = LocationTable(dict(ALIASES))
        for name in order:
            assert chunk.resolve(AliasLoc(name)) == alone.resolve(AliasLoc(name)), name
    # Printed shapes are read from their match; the others are parsed once, for all.
    assert set(shared.parsed) == {"#loc8", "#loc12", "#loc"}
    assert "#loc8" in shared.parse_errors


def test_a_table_with_its_own_parser_keeps_its_own_parses():
    shared = _trailing()
    own = LocationTable(shared, parse=parse_location)
    own.resolve(AliasLoc("#loc3"))
    assert shared.parsed == {} and own._parsed


def test_a_range_table_equals_an_array_table_in_resolution():
    as_range = _trailing()
    table = ("\n" + "".join(f"{name} = {value}\n" for name, value in ALIASES.items())).encode()
    as_array = TrailingTable(table, 1, len(table), array("q", range(1, 11)), {})
    for name in ALIASES:
        assert (LocationTable(as_range).resolve(AliasLoc(name))
                == LocationTable(as_array).resolve(AliasLoc(name)))


def _corpus_tables() -> list[dict[str, str]]:
    paths = sorted(FIXTURES.rglob("*.mlir"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.mlir"))
    tables = []
    for path in paths:
        table = dict(line.split(" = ", 1) for line in path.read_text(errors="replace").splitlines()
                     if line.startswith("#loc") and " = loc(" in line)
        if table:
            tables.append(table)
    return tables


def test_printed_locations_resolve_as_their_parsed_nodes_do():
    """The default reader reads printed locations from their match; a table given the
    parser reads every alias through its nodes."""
    tables = [*_corpus_tables(), ALIASES]
    assert sum(map(len, tables)) > 200
    for table in tables:
        names = [*table, "#loc999999"]
        for order in (names, names[::-1]):
            printed = LocationTable(dict(table))
            parsed = LocationTable(dict(table), parse=parse_location)
            for name in order:
                assert printed.resolve(AliasLoc(name)) == parsed.resolve(AliasLoc(name)), name


LOOPED = {
    "#loc1": 'loc("k.py":10:4)',
    "#loc2": 'loc("a"(#loc3))',
    "#loc3": "loc(callsite(#loc4 at #loc1))",
    "#loc4": 'loc("b"(#loc2))',
    "#loc5": "loc(callsite(#loc2 at #loc6))",
    "#loc6": 'loc("c"(#loc1))',
    "#loc7": "loc(fused[#loc8, #loc6])",
    "#loc8": "loc(callsite(#loc7 at #loc1))",
    "#loc9": 'loc("d"(#loc5))',
    "#loc10": "loc(#loc11)",
    "#loc11": "loc(#loc10)",
    "#loc12": 'loc("e"(#loc6))',
}


def test_answers_shared_between_chunks_are_those_each_chunk_would_find_alone():
    """What an alias that reaches no loop resolves to is shared by the chunks of a table;
    an alias that reaches one answers as the chunk's own order of questions makes it."""
    import random

    table = ("\n" + "".join(f"{name} = {value}\n" for name, value in LOOPED.items())).encode()
    shared = TrailingTable(table, 1, len(table), range(1, 13), {})
    rng = random.Random(7)
    for _ in range(200):
        order = rng.sample(list(LOOPED), rng.randint(1, len(LOOPED)))
        chunk, alone = LocationTable(shared), LocationTable(dict(LOOPED))
        for name in order:
            assert chunk.resolve(AliasLoc(name)) == alone.resolve(AliasLoc(name)), order


def test_an_alias_resolves_as_a_name_location_around_it_says():
    """An op's `loc(#locN)` is kept by the alias's name; its answer is the one a name
    location around the alias resolves to, less the name."""
    from sc_mlir.syntax.locations import NameLoc

    for aliases in (ALIASES, LOOPED):
        for name in [*aliases, "#loc99"]:
            table, wrapped = LocationTable(dict(aliases)), LocationTable(dict(aliases))
            found = table.resolve(AliasLoc(name))
            assert table.resolve(AliasLoc(name)) is found
            around = wrapped.resolve(NameLoc("n", AliasLoc(name)))
            assert (around.names[0], around.names[1:]) == ("n", found.names)
            assert (around.file, around.line, around.problems) == (
                found.file, found.line, found.problems)


def test_a_full_shared_cache_is_emptied_and_answers_stay_the_same(monkeypatch):
    import sc_mlir.model.locations as locations

    monkeypatch.setattr(locations, "_SHARED_LIMIT", 3)
    test_answers_shared_between_chunks_are_those_each_chunk_would_find_alone()
    table = ("\n" + "".join(f"{name} = {value}\n" for name, value in LOOPED.items())).encode()
    shared = TrailingTable(table, 1, len(table), range(1, 13), {})
    for name in LOOPED:
        LocationTable(shared).resolve(AliasLoc(name))
        assert len(locations._shared_answers(shared)) <= 3
