"""Valid MLIR in layouts MLIR's parser accepts: each case here was read wrong before
(dropped, mislabelled or misnumbered). Expected figures are worked out by hand from the
text; MLIR's own parser agrees on each (tests/read/test_fuzz_differential.py)."""

from __future__ import annotations

from pathlib import Path

from sc_mlir.model.dump import load
from sc_mlir.read.discover import sniff

HEAD = "module {\n  func.func @k() {\n"
TAIL = "    return\n  }\n}\n"


def read(tmp_path: Path, text: str | bytes):
    path = tmp_path / "dump.mlir"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    dump = load(path, jobs=1)
    return dump.records, [d.message for d in dump.diagnostics]


def test_only_the_split_marker_splits_not_a_longer_rule_of_dashes(tmp_path):
    text = (HEAD + "    %a = memref.alloca() : memref<4xf32, 201>\n"
            "    // ------------------------------\n"
            "    %b = memref.alloca() : memref<4xf32, 201>\n" + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.func, r.chunk) for r in records] == [("%a", "k", 0), ("%b", "k", 0)]
    assert notes == []


def test_lines_end_at_lf_only_as_mlir_counts_them(tmp_path):
    # A lone CR is a blank, and ends a comment (MLIR's lexer), but no line: MLIR counts
    # only the LFs. `%b` is on line 4 at column 8, after the 7 characters of `// one\r`.
    lone_cr = (HEAD + "    %a =\rmemref.alloca() : memref<4xf32, 201>\n"
               "// one\r%b = memref.alloca() : memref<8xf32, 201>\n" + TAIL)
    records, notes = read(tmp_path, lone_cr.encode())
    assert [(r.name, r.line, r.col) for r in records] == [("%a", 3, 10), ("%b", 4, 13)]
    assert notes == []
    crcrlf = (HEAD + "    %a = memref.alloca() : memref<4xf32, 201>\n" + TAIL).replace(
        "\n", "\r\r\n")
    records, notes = read(tmp_path, crcrlf.encode())
    assert [(r.line, r.col, r.words) for r in records] == [(3, 10, 4)] and notes == []


def test_a_quoted_sym_name_names_the_generic_func(tmp_path):
    text = ('"builtin.module"() ({\n  "func.func"() ({\n'
            '    %a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : '
            "() -> memref<4xf32, 201>\n"
            '    "func.return"() : () -> ()\n'
            '  }) {"sym_name" = "k", function_type = () -> ()} : () -> ()\n}) : () -> ()\n')
    records, _ = read(tmp_path, text)
    assert [(r.func, r.words) for r in records] == [("k", 4)]


def test_a_gpu_module_with_a_statement_form_alloca_is_mlir():
    text = (b"gpu.module @g {\n  gpu.func @k() {\n    memref.alloca() : memref<4xf32, 3>\n"
            b"    gpu.return\n  }\n}\n")
    assert sniff(text) is None


def test_an_element_type_alias_is_sized(tmp_path):
    # 2 x vector<4xf32> = 8 f32 = 8 words.
    text = "!E = vector<4xf32>\n" + HEAD + "    %a = memref.alloca() : memref<2x!E, 201>\n" + TAIL
    records, notes = read(tmp_path, text)
    assert [(r.element_type, r.element_bits, r.words) for r in records] == [("!E", 128, 8)]
    assert notes == []


def test_blanks_inside_a_scalable_vector_dim(tmp_path):
    text = HEAD + "    %a = memref.alloca() : memref<4xvector<[4 ]xf32>, 201>\n" + TAIL
    records, notes = read(tmp_path, text)
    # Read, with its size unknown (scalable), not skipped.
    assert [(r.name, r.words) for r in records] == [("%a", None)] and notes == []


def test_two_ops_on_one_line(tmp_path):
    text = (HEAD + "    %a = memref.alloca() : memref<4xf32, 201> %b = memref.alloca() : "
            "memref<8xf32, 201>\n"
            '    %c0 = arith.constant 0 : index "memref.alloca"() <{operandSegmentSizes = '
            "array<i32: 0, 0>}> : () -> memref<16xf32, 201>\n" + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.line, r.col, r.words) for r in records] == [
        ("%a", 3, 10, 4), ("%b", 3, 52, 8), ("", 4, 36, 16)]
    assert notes == []
    # Program order: each op its own point.
    assert [r.order for r in records] == [3, 4, 6]


GENERIC_FUNC = (
    '"builtin.module"() ({\n'
    '  "func.func"() <{function_type = () -> (),\n'
    '      sym_name = "k"}> ({\n'
    '    %a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
    "memref<2048xf32, #tpu.memory_space<vmem>>\n"
    '    "func.return"() : () -> ()\n'
    "  }) {tpu.core_type = #tpu.core_type<sc_vector_subcore>} : () -> ()\n"
    "}) : () -> ()\n")


def test_a_line_break_in_a_funcs_properties_keeps_its_name_and_spaces(tmp_path):
    # Before: func "" and space_id null (the vmem of a vector-subcore func is TileSpmem),
    # 2048 TileSpmem words gone from the totals, and a "'}' closes nothing" note.
    records, notes = read(tmp_path, GENERIC_FUNC)
    assert [(r.func, r.space_id, r.words) for r in records] == [("k", 201, 2048)]
    assert notes == []


def test_result_name_and_op_on_different_lines(tmp_path):
    text = HEAD + "    %a\n      = memref.alloca() : memref<4xf32, 201>\n" + TAIL
    records, notes = read(tmp_path, text)
    # MLIR reports the op at its name: line 4, column 9.
    assert [(r.name, r.line, r.col, r.words) for r in records] == [("%a", 4, 9, 4)]
    assert notes == []


def test_a_type_broken_inside_its_dims(tmp_path):
    text = HEAD + "    %a = memref.alloca() : memref<4\nx8xf32, 201>\n" + TAIL
    records, notes = read(tmp_path, text)
    assert [(r.name, r.line, r.col, r.shape, r.words) for r in records] == [
        ("%a", 3, 10, (4, 8), 32)]
    assert notes == []


def test_attribute_and_property_dicts_across_lines(tmp_path):
    text = (HEAD + "    %a = memref.alloca() {alignment\n      = 64 : i64} : memref<4xf32, 201>\n"
            '    %b = "memref.alloca"() <{\n      operandSegmentSizes = array<i32: 0, 0>}>\n'
            "      : () -> memref<8xf32, 201>\n" + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.line, r.alignment, r.words) for r in records] == [
        ("%a", 3, 64, 4), ("%b", 5, None, 8)]
    assert notes == []


def test_locations_across_lines_and_on_the_next_line(tmp_path):
    text = (HEAD + '    %a = memref.alloca() : memref<4xf32, 201> loc(fused["a.py":1:2,\n'
            '      "b.py":3:4])\n'
            "    %b = memref.alloca() : memref<4xf32, 201>\n"
            '      loc("c.py":5:6)\n' + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.loc.file, r.loc.line, r.loc.col) for r in records] == [
        ("%a", "a.py", 1, 2), ("%b", "c.py", 5, 6)]
    assert notes == []


def test_alias_definitions_in_any_layout(tmp_path):
    text = ('#loc1\n  = loc("a.py":7:1)\n#loc2 = loc("b.py":8:2) #loc3 = loc(\n  "c.py":9:3)\n'
            "!S = memref<8xf32, 201> module {\n  func.func @k() {\n"
            "    %a = memref.alloca() : !S loc(#loc1)\n"
            "    %b = memref.alloca() : memref<4xf32, 201> loc(#loc3)\n" + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.func, r.words, r.loc.file, r.loc.line) for r in records] == [
        ("%a", "k", 8, "a.py", 7), ("%b", "k", 4, "c.py", 9)]
    assert notes == []


def test_a_statement_op_after_an_alloca_on_its_line(tmp_path):
    text = (HEAD + "    %a = memref.alloca() : memref<4xf32, 201> return\n  }"
            "  func.func @g() {\n    %b = memref.alloca() : memref<8xf32, 201>\n" + TAIL)
    records, notes = read(tmp_path, text)
    assert [(r.name, r.func, r.words) for r in records] == [("%a", "k", 4), ("%b", "g", 8)]
    assert notes == []


def test_a_result_list_is_one_op_not_two():
    """`%a, %b = op`: the second name after a comma is not a second op on the line (MLIR
    numbers one op; both readers must agree)."""
    from sc_mlir.read.events import scan_bytes
    from sc_mlir.read.scan import scan_text

    text = ("func.func @f(%b: f32) -> f32 {\n"
            "  %r1, %r2 = memref.alloca_scope -> (f32, f32) {\n"
            "    %a = memref.alloca() : memref<4xf32, 201>\n"
            "    memref.alloca_scope.return %b, %b : f32, f32\n"
            "  }\n"
            "  return %r1 : f32\n"
            "}\n")
    careful = scan_text(text)
    assert careful.ops == 5  # func, alloca_scope, alloca, return, return
    fast = scan_bytes(text.encode())
    assert fast is not None and fast.ops == careful.ops
