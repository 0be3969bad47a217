"""Given random `#loc` tables (names, call sites, fused lists, file locations with and
without ranges, unknown, plain aliases, undefined names, text the grammar rejects, and
loops), every way of resolving an alias gives the same answer: through the fast reader's
table shared by several chunks, through a plain dict, and through the parser's nodes. An
alias whose chain can reach no loop resolves to what a reference written here from the
rules (not from the resolver) says."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.model.locations import LocationTable, SourceLocation
from sc_mlir.read.loc_table import LocationTable as TrailingTable
from sc_mlir.syntax.locations import AliasLoc, FileLoc
from sc_mlir.syntax.parse import parse_location

MAX_CALLERS = 64  # the resolver keeps at most this many callers


@dataclass(frozen=True)
class Spec:
    """One alias's value: `kind` and what it refers to."""

    kind: str  # file, range, name, callsite, fused, unknown, alias, garbage
    refs: tuple[str, ...] = ()
    file: str = ""
    numbers: tuple[int, ...] = ()
    spaced: bool = False  # written with spaces: read by the grammar, not the printed match


def _text(spec: Spec) -> str:
    s = " " if spec.spaced else ""
    if spec.kind == "file":
        line, col = spec.numbers
        return f'loc({s}"{spec.file}"{s}:{s}{line}{s}:{s}{col}{s})'
    if spec.kind == "range":
        line, col, end_line, end_col = spec.numbers
        return f'loc("{spec.file}":{line}:{col} to {end_line}:{end_col})'
    if spec.kind == "name":
        return f'loc({s}"{spec.file}"{s}({s}{spec.refs[0]}{s}){s})'
    if spec.kind == "callsite":
        return f"loc({s}callsite({s}{spec.refs[0]} at {spec.refs[1]}{s}){s})"
    if spec.kind == "fused":
        return f"loc({s}fused[{s}" + f"{s}, ".join(spec.refs) + f"{s}]{s})"
    if spec.kind == "unknown":
        return "loc(unknown)"
    if spec.kind == "alias":
        return f"loc({s}{spec.refs[0]}{s})"
    return "loc(callsite(#loc1 at))"  # garbage


def _random_specs(rng: random.Random, size: int, loops: bool) -> dict[str, Spec]:
    """Aliases #loc1..#loc<size>, each referring to later aliases (to any, with `loops`)
    and to undefined ones."""
    specs = {}
    for i in range(1, size + 1):
        later = [f"#loc{j}" for j in range(1 if loops else i + 1, size + 1)]
        targets = [*later, f"#loc{size + 1 + rng.randrange(3)}", "#undefined"]
        kind = rng.choice(["file", "file", "range", "name", "name", "callsite", "callsite",
                           "fused", "unknown", "alias", "garbage"])
        spaced = rng.random() < 0.25
        name = rng.choice(["op", "jit(f)/while/body/fusion.11", "é", "a b"])
        if kind in ("file", "range"):
            numbers = tuple(rng.randrange(0, 50) for _ in range(2 if kind == "file" else 4))
            specs[f"#loc{i}"] = Spec(kind, file=f"f{i}.py", numbers=numbers, spaced=spaced)
        elif kind in ("name", "alias"):
            specs[f"#loc{i}"] = Spec(kind, (rng.choice(targets),), file=name, spaced=spaced)
        elif kind == "callsite":
            specs[f"#loc{i}"] = Spec(kind, (rng.choice(targets), rng.choice(targets)), spaced=spaced)
        elif kind == "fused":
            parts = tuple(rng.choice(targets) for _ in range(rng.randint(1, 3)))
            specs[f"#loc{i}"] = Spec(kind, parts, spaced=spaced)
        else:
            specs[f"#loc{i}"] = Spec(kind)
    return specs


def _reference(specs: dict[str, Spec], name: str) -> SourceLocation:
    """The rules, for a chain that reaches no loop: a name location adds its name before
    its child's; a call site is its callee's answer with the caller's file first among
    the callers and the caller's problems after the callee's; a fused location is its
    first part with a file, else its first part; an undefined or unparsable alias is
    reported and resolves to nothing."""
    spec = specs.get(name)
    if spec is None:
        return SourceLocation(problems=(f"location alias {name} is not defined",))
    if spec.kind == "file":
        return SourceLocation(spec.file, *spec.numbers)
    if spec.kind == "range":
        return SourceLocation(spec.file, *spec.numbers)
    if spec.kind == "name":
        child = _reference(specs, spec.refs[0])
        return replace(child, names=(spec.file, *child.names))
    if spec.kind == "callsite":
        inner, outer = (_reference(specs, ref) for ref in spec.refs)
        frame = (() if outer.file is None else
                 (FileLoc(outer.file, outer.line or 0, outer.col, outer.end_line,
                          outer.end_col),))
        callers = (*inner.callers, *frame, *outer.callers)[:MAX_CALLERS]
        return replace(inner, callers=callers, problems=inner.problems + outer.problems)
    if spec.kind == "fused":
        first = None
        for ref in spec.refs:
            part = _reference(specs, ref)
            if part.file is not None:
                return part
            first = first or part
        return first or SourceLocation()
    if spec.kind == "alias":
        return _reference(specs, spec.refs[0])
    if spec.kind == "unknown":
        return SourceLocation()
    return SourceLocation(problems=(f"location alias {name} does not parse",))  # garbage


def _reaches_a_loop(specs: dict[str, Spec], name: str) -> bool:
    on_path: set[str] = set()
    done: set[str] = set()

    def walk(n: str) -> bool:
        if n in on_path:
            return True
        if n in done or n not in specs:
            return False
        on_path.add(n)
        found = any(walk(ref) for ref in specs[n].refs)
        on_path.discard(n)
        done.add(n)
        return found

    return walk(name)


def _as_answer(found: SourceLocation) -> SourceLocation:
    """`found`, with what the grammar says of text it rejects left out (the reference
    knows only that it was rejected)."""
    problems = tuple(p.partition(": ")[0] if " does not parse: " in p else p
                     for p in found.problems)
    return replace(found, problems=problems)


def _trailing(specs: dict[str, Spec]) -> TrailingTable:
    table = ("\n" + "".join(f"{name} = {_text(spec)}\n" for name, spec in specs.items())
             ).encode()
    return TrailingTable(table, 1, len(table), range(1, len(specs) + 1), {})


@settings(max_examples=250, deadline=None)
@given(seed=st.integers(0, 1 << 30), size=st.integers(1, 12), loops=st.booleans(),
       chunks=st.integers(1, 3))
def test_every_way_of_resolving_gives_the_reference_s_answer(seed, size, loops, chunks):
    rng = random.Random(seed)
    specs = _random_specs(rng, size, loops)
    texts = {name: _text(spec) for name, spec in specs.items()}
    asked = [*specs, f"#loc{size + 1}", "#undefined"]
    shared = _trailing(specs)
    if rng.random() < 0.5:
        shared._mark()  # as after a report's first few look-ups
    for _ in range(chunks):  # the chunks of one file share its table and its answers
        order = rng.sample(asked, len(asked))
        chunk = LocationTable(shared)
        alone = LocationTable(dict(texts))
        parsed = LocationTable(dict(texts), parse=parse_location)
        for name in order:
            found = chunk.resolve(AliasLoc(name))
            assert isinstance(found, SourceLocation)
            assert found == alone.resolve(AliasLoc(name)), (name, order)
            assert found == parsed.resolve(AliasLoc(name)), (name, order)
            if not _reaches_a_loop(specs, name):
                assert _as_answer(found) == _reference(specs, name), name


def test_an_alias_in_a_loop_is_reported_once_the_loop_comes_back_to_it():
    specs = {"#loc1": Spec("name", ("#loc2",), file="a"),
             "#loc2": Spec("callsite", ("#loc1", "#loc3")),
             "#loc3": Spec("file", file="k.py", numbers=(1, 2))}
    found = LocationTable(_trailing(specs)).resolve(AliasLoc("#loc1"))
    assert found == SourceLocation(names=("a",), callers=(FileLoc("k.py", 1, 2),),
                                   problems=("location alias #loc1 refers to itself",))
