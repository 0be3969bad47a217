"""Locations spelt as MLIR prints them are read by one match (`_PRINTED_LOCATION`): the
records equal what the spaced forms' patterns and the grammar give. The location nodes
(and SourceLocation) are built through their slots: still equal, hashed, frozen and
pickled as dataclasses are."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from conftest import CORPUS, FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.model.locations import SourceLocation
from sc_mlir.syntax.locations import AliasLoc, CallSiteLoc, FileLoc, FusedLoc, NameLoc
from sc_mlir.syntax.parse import (
    _PRINTED_LOCATION,
    _fast_location,
    _run,
    _spaced_location,
    location_parser,
)


def _table_values() -> list[str]:
    paths = sorted(FIXTURES.rglob("*.mlir"))
    if CORPUS.is_dir():
        paths += sorted(CORPUS.rglob("*.mlir"))
    return [line.split(" = ", 1)[1] for path in paths
            for line in path.read_text(errors="replace").splitlines()
            if line.startswith("#loc") and " = loc(" in line]


def _assert_alike(text: str) -> None:
    printed = _fast_location(text)
    assert printed == _spaced_location(text), text
    if _PRINTED_LOCATION.fullmatch(text):
        assert printed == _run(location_parser(), text), text


def test_the_corpus_and_fixture_locations_read_alike():
    values = _table_values()
    assert len(values) > 200
    printed = 0
    for text in values:
        _assert_alike(text)
        printed += _PRINTED_LOCATION.fullmatch(text) is not None
    assert printed > len(values) // 2


alias = st.from_regex(r"#[A-Za-z_0-9][\w$.\-]{0,6}", fullmatch=True)
quoted = st.lists(st.sampled_from([*'ab./_- :()<>#', '\\"', "\\\\", "é"]), max_size=8
                  ).map(lambda parts: '"' + "".join(parts) + '"')
number = st.sampled_from(["0", "7", "12", "007", "99999"])


@st.composite
def printed_locations(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["alias", "file", "name", "callsite", "fused", "odd"]))
    if kind == "alias":
        body = draw(alias)
    elif kind == "file":
        body = f"{draw(quoted)}:{draw(number)}:{draw(number)}"
    elif kind == "name":
        body = f"{draw(quoted)}({draw(alias)})"
    elif kind == "callsite":
        body = f"callsite({draw(alias)} at {draw(alias)})"
    elif kind == "fused":
        body = "fused[" + ", ".join(draw(st.lists(alias, min_size=1, max_size=4))) + "]"
    else:
        body = draw(st.sampled_from(["unknown", '"a":1', '"a":1:2 to 3:4', '"a"',
                                     "fused[#a,#b]", "callsite(#a  at #b)"]))
    return f"loc({body})"


@settings(max_examples=600, deadline=None)
@given(printed_locations())
def test_printed_locations_read_alike(text):
    _assert_alike(text)


@pytest.mark.parametrize("node", [
    FileLoc("a.py", 1, 2), FileLoc("a.py", 1, None, 3, 4), NameLoc("n", AliasLoc("#loc1")),
    NameLoc("n", None), CallSiteLoc(AliasLoc("#a"), AliasLoc("#b")),
    FusedLoc(None, (AliasLoc("#a"),)), FusedLoc("m", ()), AliasLoc("#loc"),
    SourceLocation(), SourceLocation("a.py", 1, 2, None, None, ("n",), (FileLoc("b", 3, 4),),
                                     ("p",))])
def test_nodes_built_through_their_slots_behave_as_dataclasses(node):
    fields = {f.name: getattr(node, f.name) for f in dataclasses.fields(node)}
    again = type(node)(**fields)
    assert again == node and hash(again) == hash(node) and repr(again) == repr(node)
    assert pickle.loads(pickle.dumps(node)) == node
    assert dataclasses.replace(node) == node
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(node, next(iter(fields)), None)


def test_a_missing_argument_is_named_as_before():
    with pytest.raises(TypeError, match=r"FileLoc.__init__\(\) missing 1 required"):
        FileLoc("a.py", 1)  # type: ignore[call-arg]
    assert FileLoc("a.py", 1, 2) == FileLoc(file="a.py", line=1, col=2, end_line=None)
    assert SourceLocation(line=3) == SourceLocation(None, 3)
