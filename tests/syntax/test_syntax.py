"""The Lark grammar pins each printed form of `memref.alloca`, memref types and locations."""

from __future__ import annotations

import pytest

from sc_mlir.syntax.locations import AliasLoc, CallSiteLoc, FileLoc, FusedLoc, NameLoc, UnknownLoc
from sc_mlir.syntax.memref import MemRefType
from sc_mlir.syntax.parse import (
    OtherType,
    SyntaxProblem,
    parse_alloca,
    parse_type,
    split_alloca_text,
)


def test_generic_form_with_properties_as_in_the_e3000_message():
    op = parse_alloca('%232 = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> '
                      ": () -> memref<23440xf32, 201>")
    assert op.form == "generic"
    assert op.results == ("%232",)
    assert op.type.shape == (23440,) and op.type.params == ("201",)
    assert op.type.words == 23440


def test_generic_form_with_attribute_dict_as_xdsl_prints_it():
    op = parse_alloca('%9 = "memref.alloca"() {"alignment" = 0 : i64, '
                      '"operandSegmentSizes" = array<i32: 0, 0>} : () -> memref<1xindex>')
    assert op.form == "generic" and op.alignment == 0 and op.type.element.bits == 64


def test_generic_form_of_2022_with_operand_segment_sizes_dense():
    op = parse_alloca('%3 = "memref.alloca"(%1, %2) {operand_segment_sizes = dense<[2, 0]> : '
                      "vector<2xi32>} : (index, index) -> memref<?x?xf32, 1>")
    assert op.dynamic_sizes == ("%1", "%2") and op.symbol_operands == ()
    assert op.type.shape == (None, None)


def test_generic_form_splits_size_and_symbol_operands_by_segment_sizes():
    op = parse_alloca('%4 = "memref.alloca"(%1) {operand_segment_sizes = dense<[0, 1]> : '
                      "vector<2xi32>} : (index) -> memref<2x4xf32, #map, 1>")
    assert op.dynamic_sizes == () and op.symbol_operands == ("%1",)
    assert op.type.params == ("#map", "1")


def test_pretty_form_with_sizes_symbols_and_attribute_dict():
    op = parse_alloca("%3 = memref.alloca(%c1)[%c0] {alignment = 64 : i64} : "
                      "memref<2x?xf32, affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>, 1>")
    assert op.form == "pretty"
    assert op.dynamic_sizes == ("%c1",) and op.symbol_operands == ("%c0",)
    assert op.alignment == 64
    assert op.type.params == ("affine_map<(d0, d1)[s0] -> (d0 + s0, d1)>", "1")


def test_pretty_form_with_alignment_as_a_property():
    op = parse_alloca("%alloca = memref.alloca() alignment = 64 : memref<8x32xf32>")
    assert op.alignment == 64 and op.type.words == 256


def test_statement_form_without_a_result():
    op = parse_alloca("memref.alloca() {alignment = 32} : memref<32x18xf32>")
    assert op.results == () and op.alignment == 32 and op.type.words == 576


@pytest.mark.parametrize("results", ["%232", "%alloca_0", "%x:1", "%a.b$c-d", "%0"])
def test_result_names_of_every_shape(results):
    op = parse_alloca(f"{results} = memref.alloca() : memref<4xf32>")
    assert op.results == (results,)


def test_value_uses_with_result_numbers():
    op = parse_alloca("%a = memref.alloca(%dims#1)[%syms#0] : memref<?xf32>")
    assert op.dynamic_sizes == ("%dims#1",) and op.symbol_operands == ("%syms#0",)


@pytest.mark.parametrize(
    ("element", "bits"),
    [("i1", 1), ("i8", 8), ("i16", 16), ("i32", 32), ("i64", 64), ("si8", 8), ("ui32", 32),
     ("index", 64), ("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64), ("tf32", 32),
     ("f8E4M3FN", 8), ("f8E5M2", 8), ("f8E4M3FNUZ", 8), ("f8E8M0FNU", 8), ("f4E2M1FN", 4),
     ("f6E2M3FN", 6), ("f6E3M2FN", 6), ("complex<f32>", 64), ("vector<4x8xbf16>", 512),
     ("vector<[4]xf32>", None), ("memref<i64>", None), ("!tpu.dma_semaphore", 32),
     ("!llvm.ptr<3>", None)],
)
def test_every_builtin_element_type_has_its_storage_width(element, bits):
    op = parse_alloca(f"%a = memref.alloca() : memref<3x{element}>")
    assert op.type.element.text == element
    assert op.type.element.bits == bits


def test_sub_word_elements_pack_and_round_up_once_per_allocation():
    op = parse_alloca("%a = memref.alloca() : memref<3xbf16, 201>")
    assert (op.type.bits, op.type.bytes, op.type.words) == (48, 6, 2)
    op = parse_alloca("%a = memref.alloca() : memref<5xi1>")
    assert (op.type.bits, op.type.bytes, op.type.words) == (5, 1, 1)


@pytest.mark.parametrize(
    ("text", "shape"),
    [("memref<f32>", ()), ("memref<0xf32>", (0,)), ("memref<4x?x8xf32>", (4, None, 8)),
     ("memref<2 x i32>", (2,)), ("memref<1024 × 64 × f32, 1>", (1024, 64)),
     ("memref<9223372036854775807x3xi8>", (9223372036854775807, 3))],
)
def test_dimension_lists(text, shape):
    assert parse_type(text).shape == shape


def test_huge_dimensions_do_not_overflow():
    t = parse_type("memref<9223372036854775807x3xf32>")
    assert t.words == 9223372036854775807 * 3


@pytest.mark.parametrize(
    ("text", "params"),
    [
        ("memref<64x64xindex, strided<[2, 4], offset: 6>, 2 : i32>",
         ("strided<[2, 4], offset: 6>", "2 : i32")),
        ("memref<4xf32, strided<[1], offset: ?>>", ("strided<[1], offset: ?>",)),
        ("memref<8x128xf32, #tpu.tiled<(8,128)>, #tpu.memory_space<vmem>>",
         ("#tpu.tiled<(8,128)>", "#tpu.memory_space<vmem>")),
        ("memref<4xf32, #map1>", ("#map1",)),
        ("memref<4xf32, #gpu.address_space<private>>", ("#gpu.address_space<private>",)),
        ("memref<4xf32, #spirv.storage_class<Function>>", ("#spirv.storage_class<Function>",)),
        ('memref<8x8xi32, strided<[1, 8]>, "L1">', ("strided<[1, 8]>", '"L1"')),
        ("memref<4xf32, affine_set<(d0) : (d0 >= 0)>>", ("affine_set<(d0) : (d0 >= 0)>",)),
    ],
)
def test_layouts_and_memory_spaces_are_kept_as_written(text, params):
    parsed = parse_type(text)
    assert isinstance(parsed, MemRefType)
    assert parsed.params == params


def test_unranked_memref_and_other_types():
    assert parse_type("memref<*xf32, 3>").shape is None
    assert parse_type("f32") == OtherType("f32", 32)
    assert isinstance(parse_type("tensor<4xf32>"), OtherType)


def test_trailing_locations_of_every_kind():
    op = parse_alloca('%a = memref.alloca() : memref<4xf32> loc(callsite("foo"("a.py":3:4 to '
                      ':9) at fused<"pass">["b.py":1:2 to 3:4, #loc3, unknown]))')
    assert op.location == CallSiteLoc(
        NameLoc("foo", FileLoc("a.py", 3, 4, 3, 9)),
        FusedLoc('"pass"', (FileLoc("b.py", 1, 2, 3, 4), AliasLoc("#loc3"), UnknownLoc())),
    )
    assert parse_alloca("%a = memref.alloca() : memref<4xf32> loc(#loc)").location == AliasLoc(
        "#loc")
    assert parse_alloca('%a = memref.alloca() : memref<4xf32> loc("n")').location == NameLoc(
        "n", None)


def test_escaped_strings_in_locations():
    op = parse_alloca('%a = memref.alloca() : memref<4xf32> loc("esc\\0Aaped\\"q":1:2)')
    assert op.location == FileLoc('esc\naped"q', 1, 2)


def test_an_unfinished_op_says_it_is_incomplete():
    with pytest.raises(SyntaxProblem) as info:
        parse_alloca("%x = memref.alloca() : memref<4xf32")
    assert info.value.incomplete
    assert "expected" in info.value.message


def test_a_wrong_token_says_where_and_what_was_expected():
    text = "%x = memref.alloca() : memref<4xf32>> loc(#a)"
    with pytest.raises(SyntaxProblem) as info:
        parse_alloca(text)
    assert not info.value.incomplete
    assert text[info.value.offset] == ">"


def test_pretty_result_type_must_be_a_type():
    with pytest.raises(SyntaxProblem):
        parse_alloca("%x = memref.alloca() : 42")


@pytest.mark.parametrize(
    "text",
    [
        '%232 = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<23440xf32, 201> loc(#loc12)',
        '%a = memref.alloca(%n)[%s] {alignment = 64 : i64} : memref<?xf32, 201> loc("f.py":1:2)',
        'memref.alloca() : memref<4xf32> loc(fused["a", "b"])',
        '%a = memref.alloca() {note = "loc(x)"} : memref<4xf32> loc("a"("b":1:2))',
    ],
)
def test_parsing_in_parts_gives_the_same_record_as_the_whole_op_grammar(text):
    from sc_mlir.syntax.parse import _run, alloca_parser

    assert parse_alloca(text) == _run(alloca_parser(), text, "alloca_op")
    _, (body, body_at), (loc, loc_at) = split_alloca_text(text)
    assert text[body_at:].startswith(body) and text[loc_at:] == loc
