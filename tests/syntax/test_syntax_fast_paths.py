"""The few location and result shapes read without Lark give exactly what the grammar gives."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.syntax.parse import (
    _fast_location,
    _parse_results,
    _run,
    alloca_parser,
    location_parser,
    parse_location,
)

EXAMPLES = int(os.environ.get("SC_MLIR_PROPERTY_EXAMPLES", "300"))
space = st.sampled_from(["", " ", "  ", "\t"])
alias = st.from_regex(r"#[A-Za-z_0-9][\w$.\-]{0,8}", fullmatch=True)
string_body = st.lists(st.sampled_from([*'ab./_-<> :(x)', '\\"', "\\0A", "\\\\"]),
                       max_size=12).map("".join)
number = st.integers(0, 99999).map(str)


@st.composite
def locations(draw) -> str:
    s = lambda: draw(space)  # noqa: E731
    kind = draw(st.sampled_from(["alias", "file", "range1", "range2", "name", "name_child",
                                 "callsite", "fused", "unknown"]))
    quoted = f'"{draw(string_body)}"'
    if kind == "alias":
        body = draw(alias)
    elif kind == "file":
        body = f"{quoted}{s()}:{s()}{draw(number)}{s()}:{s()}{draw(number)}"
    elif kind == "range1":
        body = f"{quoted}:{draw(number)}:{draw(number)}{s()} to{s()}:{draw(number)}"
    elif kind == "range2":
        body = f"{quoted}:{draw(number)}:{draw(number)} to {draw(number)}:{draw(number)}"
    elif kind == "name":
        body = quoted
    elif kind == "name_child":
        body = f"{quoted}{s()}({s()}{draw(alias)}{s()})"
    elif kind == "callsite":
        body = f"callsite({s()}{draw(alias)} at {draw(alias)}{s()})"
    elif kind == "fused":
        members = draw(st.lists(alias, min_size=1, max_size=4))
        body = f"fused{s()}[{s()}" + f"{s()},{s()}".join(members) + f"{s()}]"
    else:
        body = "unknown"
    return f"loc({s()}{body}{s()})"


@settings(max_examples=EXAMPLES, deadline=None)
@given(locations())
def test_fast_locations_equal_the_grammar(text):
    grammar = _run(location_parser(), text)
    fast = _fast_location(text)
    assert fast is None or fast == grammar
    assert parse_location(text) == grammar


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.from_regex(r"%[\w$.\-]{1,6}(:[0-9]{1,2})?", fullmatch=True))
def test_single_result_names_equal_the_grammar(name):
    assert _parse_results(name) == _run(alloca_parser(), name, "result_list")


def test_the_common_shapes_take_the_fast_path():
    for text in ('loc(#loc12)', 'loc("k.py":1:2)', 'loc("k.py":1:2 to :9)',
                 'loc("run_scoped:"(#loc21))', "loc(callsite(#loc14 at #loc19))", "loc(unknown)",
                 "loc(fused[#loc2, #loc1])"):
        assert _fast_location(text) is not None, text
    assert _fast_location('loc(fused["a", "b"])') is None  # left to the grammar
