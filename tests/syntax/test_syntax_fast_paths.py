"""The few location and result shapes read without Lark give exactly what the grammar gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import REPO, bench_generator
from hypothesis import given, settings
from hypothesis import strategies as st

from sc_mlir.read.scan import scan_file
from sc_mlir.syntax.parse import (
    SyntaxProblem,
    _common_body,
    _fast_argument_list,
    _fast_location,
    _inline_location,
    _parse_results,
    _parser,
    _run,
    alloca_parser,
    arguments_parser,
    location_parser,
    parse_alloca,
    parse_location,
    split_alloca_text,
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


def _nested(leaf: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Locations written inside one another, as MLIR prints them."""
    return st.recursive(leaf, lambda inner: st.one_of(
        st.tuples(st.sampled_from(['"n"', '"jit(f)/x"', '""', '"é"']), inner).map(
            lambda p: f"{p[0]}({p[1]})"),
        st.tuples(inner, inner).map(lambda p: f"callsite({p[0]} at {p[1]})"),
        st.lists(inner, max_size=3).map(lambda parts: f"fused[{', '.join(parts)}]")),
        max_leaves=8)


printed_leaf = st.one_of(
    alias, st.just("unknown"), st.sampled_from(['"k.py"', '"n"', '"a b"']),
    st.tuples(st.sampled_from(['"k.py"', '"jit(f).py"', '"é"', '""']), number, number).map(
        lambda p: f"{p[0]}:{p[1]}:{p[2]}"),
    st.tuples(number, number, number).map(lambda p: f'"k.py":{p[0]}:{p[1]} to :{p[2]}'),
    st.tuples(number, number, number, number).map(
        lambda p: f'"k.py":{p[0]}:{p[1]} to {p[2]}:{p[3]}'),
    number.map(lambda n: f'"k.py":{n}'))
# Spellings the inline reader leaves to the grammar, or that are no location at all.
odd_leaf = st.sampled_from(['"a\\"b"', '"a\\0A"', "callsite(#a  at #b)", "fused[#a,#b]",
                            '"k.py" : 1 : 2', '"k.py":1:2 to', '"k.py":1:2:3', "#", "at",
                            "fused<\"m\">[#a]", "unknownx", '"a"(#b) ', " #a", "[", ")"])


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(_nested(printed_leaf))
def test_inline_locations_equal_the_grammar(body):
    text = f"loc({body})"
    assert _inline_location(text) == _run(location_parser(), text), text


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(_nested(st.one_of(printed_leaf, odd_leaf)))
def test_what_the_inline_reader_reads_the_grammar_reads_alike(body):
    text = f"loc({body})"
    try:
        grammar = _run(location_parser(), text)
    except SyntaxProblem:
        grammar = None
    inline = _inline_location(text)
    assert inline is None or inline == grammar, text


def test_the_sample_s_inline_locations_take_no_grammar():
    texts = ['loc("ids_buffer"("model/embedding.py":74:14 to :58))',
             'loc(callsite("lookup_level"("model/embedding.py":88:12 to :66) at '
             '"model/embedding.py":84:4))', 'loc(callsite(#loc23 at "model/embedding.py":90:8))',
             'loc(fused["model/embedding.py":89:12 to :66, "table_shard"])']
    for text in texts:
        assert _inline_location(text) == _run(location_parser(), text), text


# --- a func's entry arguments -------------------------------------------------------------

argument_type = st.sampled_from([
    "i32", "index", "bf16", "f8E4M3FN", "i1", "si8", "none", "memref<1024xf32, #tpu.memory_space<hbm>>",
    "memref<4x?xi32, 201>", "memref<f32>", "memref<8xf32, strided<[1]>>", "memref<*xf32>",
    "!tpu.dma_semaphore", "!tpu.semaphore", "!x.y", "!llvm.ptr<3>", "vector<4xf32>",
    "tensor<4xf32>", "complex<f32>", "i", "f32x", "memref<4 x f32>", "memref<4xf32,201>"])
argument_loc = st.sampled_from([
    "", " loc(unknown)", " loc(#loc3)", ' loc("k.py":1:2)', ' loc("n"(#loc1))',
    ' loc("jit(f)":3:4)', ' loc(callsite(#a at #b))', ' loc(fused[#a, #b])', " loc( unknown)",
    ' loc("a"("k.py":1:2 to :9))', " loc(#loc3) ", "loc(#loc3)"])
argument_extra = st.sampled_from(["", "", "", " {tt.divisibility = 16 : i32}"])


@st.composite
def argument_lists(draw) -> str:
    # As MLIR prints them most of the time (`%arg0: i32 loc(unknown), ...`), else spelt
    # otherwise, with attributes or types the fast reader leaves to the grammar.
    printed = draw(st.booleans()) or draw(st.booleans())
    count = draw(st.integers(0, 4))
    parts = [f"%{draw(st.sampled_from(['arg0', 'arg12', 'x', 'a.b-c$']))}"
             f"{': ' if printed else draw(st.sampled_from([': ', ':', ' : ']))}"
             f"{draw(argument_type)}{'' if printed else draw(argument_extra)}"
             f"{draw(argument_loc)}" for _ in range(count)]
    separator = ", " if printed else draw(st.sampled_from([", ", ",", " ,"]))
    return "(" + separator.join(parts) + ")"


@settings(max_examples=EXAMPLES * 3, deadline=None)
@given(argument_lists())
def test_fast_argument_lists_equal_the_grammar(text):
    try:
        grammar = _run(arguments_parser(), text, "argument_list")
    except (SyntaxProblem, ValueError):
        grammar = None
    fast = _fast_argument_list(text)
    assert fast is None or fast == grammar, text


def test_a_pallas_kernel_s_signature_is_read_without_the_grammar():
    text = ("(%arg0: i32 loc(unknown), %arg1: i32 loc(unknown), %arg2: memref<1024xf32, "
            "#tpu.memory_space<hbm>> loc(unknown), %arg3: memref<128xf32, "
            "#tpu.memory_space<vmem>> loc(unknown), %arg4: !tpu.dma_semaphore loc(unknown))")
    fast = _fast_argument_list(text)
    assert fast is not None and fast == _run(arguments_parser(), text, "argument_list")


# --- allocation op bodies ------------------------------------------------------------------

element = st.sampled_from(["f32", "i32", "bf16", "i8", "i1", "si16", "ui8", "index", "f16",
                           "f8E4M3FN", "f4E2M1FN", "none", "!tpu.dma_semaphore",
                           "!tpu.semaphore", "!x.y", "vector<4xf32>", "complex<f32>",
                           "i", "f32x", "memref<4xf32>"])
dimension = st.sampled_from(["0", "1", "4", "23440", "?", "9223372036854775807",
                             "9223372036854775808", "18446744073709551616"])
parameter = st.sampled_from(["201", "0", "#tpu.memory_space<vmem>", "#tpu.memory_space<smem>",
                             "#map", "strided<[4, 1]>", "affine_map<(d0) -> (d0)>", "1 : i64",
                             '"x"'])
attribute = st.sampled_from(["alignment = 64 : i64", "alignment = 64", "alignment = -8 : i32",
                             "operandSegmentSizes = array<i32: 0, 0>",
                             "operandSegmentSizes = array<i32: 1, 0>", "name = @sym",
                             'note = "x"', "flag", "a.b-c = 3 : index", "x = {y = 1}",
                             "x = [1, 2]", "x = unit"])


# Size operands of a pretty op: the printer's, and a few spellings left to the grammar.
uses = st.sampled_from(["", "", "%c512", "%0, %n_1", "%x#1", "%a.b-c$", "%0 ,%1", " %0",
                        "%", "%0,%1"])


@st.composite
def alloca_bodies(draw) -> str:
    dims = draw(st.lists(dimension, max_size=3))
    params = draw(st.lists(parameter, max_size=2))
    memref = ("memref<" + "".join(f"{d}x" for d in dims) + draw(element)
              + "".join(f", {p}" for p in params) + ">")
    attrs = draw(st.lists(attribute, max_size=3))
    joined = ", ".join(attrs)
    form = draw(st.sampled_from(["generic", "pretty", "sem"]))
    op = draw(st.sampled_from(["memref.alloca", "memref.alloc", "tpu.sem_alloc"]))
    if form == "generic":
        props = f" <{{{joined}}}>" if attrs else draw(st.sampled_from(["", " <{}>"]))
        text = f'"{op}"(){props} : () -> {memref}'
    elif form == "pretty":
        dict_text = f" {{{joined}}}" if attrs else draw(st.sampled_from(["", " {}"]))
        sizes = draw(uses)
        symbols = draw(st.sampled_from(["", *(f"[{u}]" for u in ["", "%s", "%s, %t#2"])]))
        text = f"{op}({sizes}){symbols}{dict_text} : {memref}"
    else:
        dict_text = f" {{{joined}}}" if attrs else ""
        text = f"{op}{dict_text} : {memref}"
    # MLIR's own spacing most of the time, other spacing now and then.
    if draw(st.booleans()) and draw(st.booleans()):
        text = text.replace(" : ", draw(st.sampled_from([":", "  :  ", " :"])), 1)
    return text


@settings(max_examples=EXAMPLES * 2, deadline=None)
@given(alloca_bodies())
def test_common_alloca_bodies_equal_the_grammar(text):
    try:
        grammar = _run(alloca_parser(), text, "alloca_body")
    except (SyntaxProblem, ValueError):
        grammar = None
    fast = _common_body(text)
    assert fast is None or fast == grammar


def test_the_common_bodies_take_the_fast_path():
    # What MLIR prints for the allocas of a SparseCore kernel, in both forms.
    for text in ['"memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
                 'memref<23440xf32, 201>',
                 '"memref.alloca"() <{alignment = 64 : i64, operandSegmentSizes = '
                 'array<i32: 0, 0>}> : () -> memref<4xi32, 204>',
                 "memref.alloca() : memref<8192xi32, 201>",
                 "memref.alloca() {alignment = 64 : i64} : memref<16xi32>",
                 "memref.alloca() : memref<f32>",
                 "memref.alloca() : memref<2x8xbf16, #tpu.memory_space<vmem>>",
                 "memref.alloca(%c512) {alignment = 64 : i64} : "
                 "memref<?xi32, #tpu.memory_space<vmem>>",
                 "memref.alloca(%n, %m)[%s] : memref<?x4x?xf32, 201>",
                 "tpu.sem_alloc : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>",
                 '"tpu.sem_alloc"() : () -> memref<2x!tpu.dma_semaphore, '
                 '#tpu.memory_space<semaphore_mem>>']:
        fast = _common_body(text)
        assert fast is not None, text
        assert fast == _run(alloca_parser(), text, "alloca_body")


def test_an_op_quoted_by_a_log_is_read_without_the_grammar():
    # `sc-mlir explain`: the compiler's note quotes the op that failed.
    text = ('%232 = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
            "memref<23440xf32, 201> loc(#loc12)")
    _parser.cache_clear()
    read = parse_alloca(text)
    assert _parser.cache_info().currsize == 0
    assert read == _run(alloca_parser(), text, "alloca_op")


def _bodies(path: Path) -> list[str]:
    parts = (split_alloca_text(a.text) for a in scan_file(str(path)).allocas)
    return [p[1][0] for p in parts if p is not None]


def test_every_body_in_the_fixtures_and_corpus_reads_alike():
    roots = [REPO / "fixtures", REPO.parent / "shared" / "corpus"]
    bodies = [body for root in roots if root.is_dir()
              for path in sorted(root.rglob("*.mlir")) for body in _bodies(path)]
    assert len(bodies) > 100
    fast = 0
    for body in bodies:
        common = _common_body(body)
        if common is not None:
            fast += 1
            assert common == _run(alloca_parser(), body, "alloca_body"), body
    assert fast > len(bodies) // 2


@pytest.mark.parametrize("form", ["generic", "pretty"])
def test_generated_sparse_core_bodies_all_take_the_fast_path(form, tmp_path):
    generator = bench_generator()
    path = tmp_path / f"{form}.mlir"
    generator.write_module(path, form, 200_000, 7, "xla")
    bodies = _bodies(path)
    assert len(bodies) > 100
    assert all(_common_body(body) is not None for body in bodies)
