"""Valid MLIR in layouts MLIR's parser accepts: each case here was read wrong before
(dropped, mislabelled or misnumbered). Expected figures are worked out by hand from the
text; MLIR's own parser agrees on each (tests/test_fuzz_differential.py)."""

from __future__ import annotations

from pathlib import Path

from sc_mlir.discover import sniff
from sc_mlir.dump import load

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
    # A lone CR inside a comment, and CR CR LF line ends: MLIR counts only the LFs.
    lone_cr = HEAD + "    // one\r two\n    %a = memref.alloca() : memref<4xf32, 201>\n" + TAIL
    records, _ = read(tmp_path, lone_cr.encode())
    assert [(r.line, r.col) for r in records] == [(4, 10)]
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
