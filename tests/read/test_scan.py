"""The structural scanner: what is an op, where regions are, and how long values live."""

from __future__ import annotations

from sc_mlir.model.allocation import build_allocations
from sc_mlir.read.scan import blank_strings, scan_text


def table(text: str):
    records, diagnostics = build_allocations(scan_text(text, "t.mlir"))
    return records, diagnostics


def by_name(records):
    return {r.name: r for r in records}


def test_mentions_in_comments_strings_and_alloca_scope_are_not_ops():
    text = """// CHECK: %{{.*}} = memref.alloca() : memref<4xf32>
func.func @f() {
  // %x = memref.alloca() : memref<8xf32>
  %0 = transform.structured.match ops{["memref.alloca"]} in %arg1 : (!pdl.operation) -> !transform.op<"memref.alloca">
  "test.op"() {note = "%y = memref.alloca() : memref<4xf32>", blob = "{memref.alloca}"} : () -> ()
  memref.alloca_scope {
    %a = memref.alloca() : memref<4xf32>
  }
  return
}
"""
    records, diagnostics = table(text)
    assert [r.name for r in records] == ["%a"]
    assert diagnostics == []
    assert records[0].scope_op == "memref.alloca_scope"


def test_blank_strings_keeps_columns():
    line = '  %1 = "x.y"() {s = "a}b{%c//"} : () -> () // trailing'
    code, unterminated = blank_strings(line)
    assert len(code) == line.index("// trailing") and not unterminated
    assert "%c" not in code and "}b{" not in code and code.index("{s") == line.index("{s")


def test_split_chunks_have_their_own_aliases_and_names():
    text = """#loc = loc("first.py":1:1)
func.func @f() {
  %a = memref.alloca() : memref<4xf32> loc(#loc)
  return
}
// -----
#loc = loc("second.py":2:2)
func.func @f() {
  %a = memref.alloca() : memref<8xf32> loc(#loc)
  return
}
"""
    records, _ = table(text)
    assert [(r.chunk, r.loc.file, r.words) for r in records] == [
        (0, "first.py", 4), (1, "second.py", 8)]


def test_ir_dump_headers_start_a_chunk_and_name_the_pass():
    text = """// -----// IR Dump After CSE (cse) //----- //
module {
  func.func @f() {
    %a = memref.alloca() : memref<4xf32, 201>
    return
  }
}
// -----// IR Dump After SparseCoreAllocate (sc-allocate) //----- //
module {
  func.func @f() {
    %a = memref.alloca() : memref<4xf32, 201>
    return
  }
}
"""
    records, _ = table(text)
    assert [(r.chunk, r.dump_header) for r in records] == [
        (1, "CSE (cse)"), (2, "SparseCoreAllocate (sc-allocate)")]
    assert [r.module for r in records] == ["module#0", "module#1"]


def test_regions_scopes_and_scope_paths():
    text = """module @m {
  func.func @k() {
    "tpu.region"() ({
      %a = memref.alloca() : memref<4xf32>
      "tpu.yield"() : () -> ()
    }) : () -> ()
    "tpu.region"() ({
      scf.if %c {
        %b = memref.alloca() : memref<4xf32>
      } else {
        %c2 = memref.alloca() : memref<4xf32>
      }
      "tpu.yield"() : () -> ()
    }) : () -> ()
    return
  }
}
"""
    records, diagnostics = table(text)
    assert diagnostics == []
    r = by_name(records)
    assert r["%a"].scope_path == "func.func@k/tpu.region#0"
    assert r["%b"].scope_path == "func.func@k/tpu.region#1/scf.if#0"
    assert r["%c2"].scope_path == "func.func@k/tpu.region#1/scf.if#0"
    # scf.if is not an allocation scope: its allocas belong to the enclosing tpu.region.
    assert r["%b"].scope_op == "tpu.region" and r["%b"].module == "@m" and r["%b"].func == "k"


def test_symbol_in_a_generic_attribute_dict_after_the_region():
    text = """"builtin.module"() ({
  "func.func"() ({
    %0 = "memref.alloca"() {operandSegmentSizes = array<i32: 0, 0>} : () -> memref<4xf32>
    "func.return"() : () -> ()
  }) {function_type = () -> (), sym_name = "late_name"} : () -> ()
}) : () -> ()
"""
    records, _ = table(text)
    assert records[0].func == "late_name" and records[0].op_form == "generic"


def test_func_signature_and_attribute_dicts_over_several_lines():
    text = """func.func @argLocs(%x: i32,
              %y: i64 loc("hotdog"))
    attributes {llvm.emit_c_interface} {
  %a = memref.alloca() : memref<4xf32>
  "foo.op"() {
    attr = 1,
    other = "x"
  } : () -> ()
  %b = memref.alloca()
      : memref<8xf32>
  return
}
"""
    records, diagnostics = table(text)
    assert diagnostics == []
    assert [(r.name, r.func, r.line, r.words) for r in records] == [
        ("%a", "argLocs", 4, 4), ("%b", "argLocs", 9, 8)]


def test_single_line_regions():
    text = """func.func @f(%c: i1) {
  scf.if %c { %a = memref.alloca() : memref<4xf32> }
  return
}
"""
    records, _ = table(text)
    assert [(r.name, r.line, r.col, r.scope_op) for r in records] == [
        ("%a", 2, 20, "func.func")]


def test_statement_form_and_columns_point_at_the_op_name():
    text = """func.func @f() {
  memref.alloca() {alignment = 32} : memref<32x18xf32>
    %x = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<2xf32>
  return
}
"""
    records, _ = table(text)
    assert [(r.name, r.line, r.col, r.alignment) for r in records] == [
        ("", 2, 3, 32), ("%x", 3, 10, None)]


def test_dynamic_sizes_from_visible_constants():
    text = """func.func @f(%n: index) {
  %c16 = arith.constant 16 : index
  %0 = "arith.constant"() <{value = 8 : index}> : () -> index
  %a = memref.alloca(%c16, %0) : memref<?x?xf32>
  %b = memref.alloca(%n) : memref<?xf32>
  return
}
"""
    r = by_name(table(text)[0])
    assert r["%a"].shape == (None, None) and r["%a"].resolved_shape == (16, 8)
    assert r["%a"].words == 128
    assert r["%b"].words is None and r["%b"].num_elements is None


def test_constants_are_scoped_to_their_region():
    text = """func.func @f() {
  "tpu.region"() ({
    %c4 = arith.constant 4 : index
    "tpu.yield"() : () -> ()
  }) : () -> ()
  "tpu.region"() ({
    %a = memref.alloca(%c4) : memref<?xf32>
    "tpu.yield"() : () -> ()
  }) : () -> ()
  return
}
"""
    assert table(text)[0][0].words is None


def test_type_and_memory_space_aliases():
    text = """#spmem = 202 : i32
#map = affine_map<(d0) -> (d0)>
!buf = memref<16xf32, #spmem>
func.func @f() {
  %a = memref.alloca() : !buf
  %b = memref.alloca() : memref<4xf32, #map>
  %c = memref.alloca() : memref<4xf32, #map, #spmem>
  return
}
"""
    r = by_name(table(text)[0])
    assert (r["%a"].words, r["%a"].space_id, r["%a"].memory_space) == (16, 202, "#spmem")
    assert (r["%b"].layout, r["%b"].space_id) == ("#map", 0)
    assert (r["%c"].layout, r["%c"].space_id) == ("#map", 202)


def test_multi_line_alias_definitions():
    text = """#enc = #sparse_tensor.encoding<{
  map = (d0, d1) -> (d0 : dense, d1 : compressed)
}>
#pipeline_layout = #hal.pipeline.layout<bindings = [
  #hal.pipeline.binding<storage_buffer>
]>
func.func @f() {
  %a = memref.alloca() : memref<4xf32>
  return
}
"""
    records, diagnostics = table(text)
    assert diagnostics == [] and len(records) == 1


def test_alloca_whose_type_does_not_parse_is_reported_with_its_position():
    text = """func.func @f() {
  %a = memref.alloca() : memref<4xf32>
  %b = memref.alloca() : memref<4xwat, 201>
  %c = memref.alloca() : memref<8xf32>
  return
}
"""
    records, diagnostics = table(text)
    assert [r.name for r in records] == ["%a", "%c"]
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert (d.line, d.col) == (3, 35)  # the "w" of "wat" and "memref.alloca skipped" in d.message
    assert "%b = memref.alloca()" in d.quote


# --- liveness facts gathered by the scanner --------------------------------------------


def live(text: str) -> dict[str, tuple[int, int]]:
    return {r.name: (r.order, r.live_end) for r in table(text)[0]}


def test_live_until_the_last_use_through_views():
    text = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  %v = memref.subview %a[0] [4] [1] : memref<16xf32> to memref<4xf32>
  %x = memref.load %v[%c0] : memref<4xf32>
  %y = arith.addf %x, %x : f32
  %z = arith.addf %y, %y : f32
  return
}
"""
    assert live(text)["%a"] == (2, 4)  # func.func is point 1, the load through %v is 4


def test_a_load_result_is_not_a_view():
    text = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  %x = memref.load %a[%c0] : memref<16xf32>
  %y = arith.addf %x, %x : f32
  return
}
"""
    assert live(text)["%a"] == (2, 3)


def test_a_use_inside_a_loop_keeps_the_buffer_live_to_the_loop_end():
    text = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %f, %a[%i] : memref<16xf32>
    %t = arith.addi %i, %i : index
    %u = arith.addi %t, %t : index
  }
  %z = arith.constant 0 : index
  return
}
"""
    assert live(text)["%a"] == (2, 6)  # scf.for is 3, its last op (%u) is 6


def test_a_use_inside_a_run_once_region_is_a_plain_use():
    text = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  "tpu.region"() ({
    memref.store %f, %a[%c0] : memref<16xf32>
    %t = arith.addi %c0, %c0 : index
    "tpu.yield"() : () -> ()
  }) : () -> ()
  return
}
"""
    assert live(text)["%a"] == (2, 4)  # the store at 4, not the region end (5)


def test_unknown_region_ops_are_treated_as_loops():
    text = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  "my.repeat"() ({
    memref.store %f, %a[%c0] : memref<16xf32>
    %t = arith.addi %c0, %c0 : index
  }) : () -> ()
  return
}
"""
    assert live(text)["%a"] == (2, 5)  # to the end of my.repeat (%t at 5)


def test_yielded_values_live_on_through_the_results():
    text = """func.func @f(%c: i1) {
  %a = memref.alloca() : memref<16xf32>
  %r = scf.if %c -> (memref<16xf32>) {
    scf.yield %a : memref<16xf32>
  } else {
    scf.yield %a : memref<16xf32>
  }
  %t = arith.addi %c0, %c0 : index
  memref.store %f, %r[%c0] : memref<16xf32>
  return
}
"""
    assert live(text)["%a"] == (2, 7)  # the store through %r at 7


def test_sibling_regions_reuse_names_without_mixing_them_up():
    text = """func.func @f() {
  "tpu.region"() ({
    %alloca = memref.alloca() : memref<16xf32>
    "tpu.yield"() : () -> ()
  }) : () -> ()
  "tpu.region"() ({
    %alloca = memref.alloca() : memref<16xf32>
    %x = memref.load %alloca[%c0] : memref<16xf32>
    "tpu.yield"() : () -> ()
  }) : () -> ()
  return
}
"""
    records = table(text)[0]
    assert [(r.order, r.live_end) for r in records] == [(3, 3), (6, 7)]


def test_unstructured_control_flow_keeps_values_live_to_the_region_end():
    text = """func.func @f(%c: i1) {
  %a = memref.alloca() : memref<16xf32>
  cf.br ^bb1
^bb1:
  memref.store %f, %a[%c0] : memref<16xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb2:
  %t = arith.addi %c0, %c0 : index
  return
}
"""
    assert live(text)["%a"] == (2, 7)  # the region ends with return at 7, not the store (4)


def test_a_nested_isolated_func_may_reuse_a_name():
    text = """module {
  func.func @outer() {
    %0 = memref.alloca() : memref<16xf32>
    return
  }
  func.func @inner() {
    %0 = arith.constant 0 : index
    %1 = arith.addi %0, %0 : index
    return
  }
}
"""
    records = table(text)[0]
    assert (records[0].order, records[0].live_end) == (3, 3)


def test_an_op_whose_attribute_dict_goes_on_to_the_next_line_is_still_an_op():
    scan = scan_text('func.func @k() {\n'
                     '  %a = memref.alloca() {alignment = 64 : i64,\n'
                     '     note = 1} : memref<4xf32>\n'
                     '  %b = "test.op"() {x = 1,\n'
                     '    y = 2} : () -> ()\n'
                     '  return\n}\n')
    assert scan.diagnostics == []
    assert [(a.line, a.col, a.syntax.alignment) for a in scan.allocas if a.syntax] == [(2, 8, 64)]
    assert scan.ops == 4  # func, %a, %b, return


TWO_OPS_APART = """module {
  func.func @f() {
    %a = memref.alloca() : memref<1024xf32, 201>
    %c = arith.constant 0 : index
    %v = memref.subview %a[0] [1024] [1] : memref<1024xf32, 201> to memref<1024xf32, 201>
    %b = memref.alloca() : memref<1024xf32, 201>
    "x.use"(%v, %b) : (memref<1024xf32, 201>, memref<1024xf32, 201>) -> ()
    return
  }
}
"""


def test_a_second_op_with_results_on_a_line_is_read_as_on_its_own():
    # Found by a fuzz campaign: the plain-line path read `%c = ... : index %v = memref.
    # subview %a...` as one op, so the view of %a was lost and %a died at the subview.
    together = TWO_OPS_APART.replace(" : index\n    %v = ", " : index %v = ")
    assert together.count("\n") == TWO_OPS_APART.count("\n") - 1

    def points(text: str) -> list[tuple[str, int, int]]:
        return [(r.name, r.order, r.live_end) for r in table(text)[0]]

    assert points(together) == points(TWO_OPS_APART) == [("%a", 3, 7), ("%b", 6, 7)]
    assert scan_text(together).ops == scan_text(TWO_OPS_APART).ops


def test_an_op_right_after_a_region_end_is_read_as_on_its_own():
    # Found by a fuzz campaign: after a pretty region's `}`, an op at the text's start was
    # taken for the region op's trailer, so the view it makes of %a was lost and %a died
    # at the region's end (point 5, not 8). The fast reader declines such lines.
    apart = """func.func @f() {
  %a = memref.alloca() : memref<16xf32>
  scf.if %c {
    "x.op"() : () -> ()
  }
  %v = "x.view"(%a) : (memref<16xf32>) -> memref<16xf32>
  "x.other"() : () -> ()
  "x.use"(%v) : (memref<16xf32>) -> ()
  return
}
"""
    together = apart.replace("  }\n  %v = ", "  } %v = ")
    assert together.count("\n") == apart.count("\n") - 1
    assert live(apart)["%a"] == (2, 7)
    assert live(together)["%a"] == (2, 7)
    assert scan_text(together).ops == scan_text(apart).ops
    # An op without results after the `}`: its use of %a is its own, not the region op's.
    plain = together.replace('%v = "x.view"(%a) : (memref<16xf32>) -> memref<16xf32>',
                             '"x.use"(%a) : (memref<16xf32>) -> ()')
    assert live(plain)["%a"] == (2, 5)
