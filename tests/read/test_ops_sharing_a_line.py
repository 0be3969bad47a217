"""Ops that share a line, as MLIR accepts them (it never prints them so): after a region's
`}`, after another op, with or without results. Each text is read as MLIR reads it: its op
count and each alloca's program point and last use, which MLIR's own parser gives (each
text's answer below is MLIR's, and is checked against jaxlib's parser where it is
installed). The fast reader either declines the text or gives the careful reader's answer.
Found by a differential fuzz campaign against MLIR's parser (tests/read/joined_ops.py)."""

from __future__ import annotations

import pytest
from joined_ops import mlir_answer, mlir_available

from sc_mlir.read.events import scan_bytes
from sc_mlir.read.scan import scan_text

HEAD = ("module {\n  func.func @f(%c: i1, %n: index) {\n    %c0 = arith.constant 0 : index\n"
        "    %f = arith.constant 0.0 : f32\n    %a = memref.alloca() : memref<16xf32>\n")
TAIL = "    return\n  }\n}\n"
USE_V = '\n    "x.op"() : () -> ()\n    "x.use"(%v) : (memref<?xf32>) -> ()\n'
OP = '\n    "x.op"() : () -> ()\n'
IF = "    scf.if %c {\n      scf.yield\n    }"
G = ('  func.func @g() {\n    %b = memref.alloca() : memref<16xf32>\n'
     '    "x.use"(%b) : (memref<16xf32>) -> ()\n    return\n  }\n}\n')
STORE = "memref.store %f, %a[%c0] : memref<16xf32>"
CAST = "%v = memref.cast %a : memref<16xf32> to memref<?xf32>"

# name: (text, MLIR's op count, MLIR's (program point, last use) of each alloca)
CASES = {
    # A view made by an op after a region's `}`: lost, %a died at the `}`.
    "close then op with result": (HEAD + IF + " " + CAST + USE_V + TAIL, 11, [(5, 10)]),
    "close, loc, op with result": (HEAD + IF + " loc(unknown) " + CAST + USE_V + TAIL,
                                   11, [(5, 10)]),
    "generic close then op with result": (
        HEAD + '    "x.region"() ({\n      "x.op"() : () -> ()\n    }) : () -> () ' + CAST
        + USE_V + TAIL, 11, [(5, 10)]),
    # Two results: only `%x = op` was known as a second op's start.
    "close then op with two results": (
        HEAD + IF + ' %v, %q = "x.two"(%a) : (memref<16xf32>) -> (memref<?xf32>, i32)'
        + USE_V + TAIL, 11, [(5, 10)]),
    "op then op with two results": (
        HEAD + '    "x.op"() : () -> () %v, %q = "x.two"(%a) : (memref<16xf32>) -> '
        "(memref<?xf32>, i32)" + USE_V + TAIL, 10, [(5, 9)]),
    # A pretty op without results after another op, or after a region's end.
    "op then pretty op": (HEAD + '    "x.op"() : () -> () ' + STORE + OP + TAIL, 9, [(5, 7)]),
    "generic close then pretty op": (
        HEAD + '    "tpu.region"() ({\n      "tpu.yield"() : () -> ()\n    }) : () -> () '
        + STORE + OP + TAIL, 10, [(5, 8)]),
    "close, loc, pretty op": (HEAD + IF + ' loc("a":1:2) ' + STORE + OP + TAIL, 10, [(5, 8)]),
    "close, attributes, pretty op": (
        HEAD + "    scf.for %i = %c0 to %n step %n {\n      scf.yield\n    } {x.a = 1} "
        'scf.if %c {\n      "x.use"(%a) : (memref<16xf32>) -> ()\n      scf.yield\n    }'
        + OP + TAIL, 12, [(5, 9)]),
    "close then pretty op": (HEAD + IF + " " + STORE + OP + TAIL, 10, [(5, 8)]),
    # `return` after a `}` or an op: every later func's points were one low.
    "close then return": (HEAD + IF + " return\n  }\n" + G, 12, [(5, 5), (10, 11)]),
    "alloca then return": (
        HEAD + "    %z = memref.alloca() : memref<16xf32> return\n  }\n" + G,
        11, [(5, 5), (6, 6), (9, 10)]),
    # An alloca after a pretty op after a `}`: the alloca was lost.
    "close, pretty op, alloca": (
        HEAD + IF + " " + STORE + " %b = memref.alloca() : memref<16xf32>\n"
        '    "x.use"(%b) : (memref<16xf32>) -> ()\n' + TAIL, 11, [(5, 8), (9, 10)]),
    # A region opened inside a line: the fast reader read its ops as one.
    "region opened inside a line": (
        HEAD + '    "tpu.region"() ({ ' + STORE + '\n      "tpu.yield"() : () -> () })'
        " : () -> ()" + OP + TAIL, 10, [(5, 7)]),
    # A block label sharing its line with its region's `{` or with an op: the ops after
    # it lost their program points and uses.
    "region's brace then label": (
        HEAD + '    "scf.for"(%c0, %n, %n) ({ ^bb0(%i: index):\n      "x.use"(%a) : '
        '(memref<16xf32>) -> ()\n      "scf.yield"() : () -> ()\n    }) : (index, index, '
        "index) -> ()\n" + TAIL, 9, [(5, 8)]),
    "label then op": (
        HEAD + '    "scf.for"(%c0, %n, %n) ({\n    ^bb0(%i: index): %v = "x.view"(%a) : '
        '(memref<16xf32>) -> memref<?xf32>\n      "x.op"() : () -> ()\n      "scf.yield"() : '
        "() -> ()\n    }) : (index, index, index) -> ()\n" + TAIL, 10, [(5, 9)]),
    # A region op after another op on its line: the fast reader took the region for the
    # first op's, a loop, and %a lived to the region's end.
    "op then region op": (
        HEAD + '    "x.op"() : () -> () "tpu.region"() ({\n      "x.use"(%a) : '
        '(memref<16xf32>) -> ()\n      "tpu.yield"() : () -> ()\n    }) : () -> ()' + OP
        + TAIL, 11, [(5, 8)]),
    "close then yield of %a": (
        HEAD + "    %r = scf.if %c -> (memref<16xf32>) {\n"
        '      %s = "x.src"() : () -> memref<16xf32>\n      scf.if %c {\n        scf.yield\n'
        "      } scf.yield %a : memref<16xf32>\n    } else {\n      scf.yield %a : "
        'memref<16xf32>\n    }\n    "x.op"() : () -> ()\n    "x.use"(%r) : (memref<16xf32>)'
        " -> ()\n" + TAIL, 14, [(5, 13)]),
}


def answer(scan) -> tuple[int, list[tuple[int, int]]]:  # type: ignore[no-untyped-def]
    return scan.ops, sorted((a.order, a.live_end) for a in scan.allocas)


@pytest.mark.parametrize("name", CASES)
def test_read_as_mlir_reads_it(name: str) -> None:
    text, ops, allocas = CASES[name]
    careful = scan_text(text)
    assert not careful.diagnostics
    assert answer(careful) == (ops, allocas)
    fast = scan_bytes(text.encode())
    assert fast is None or answer(fast) == (ops, allocas)


@pytest.mark.skipif(not mlir_available(), reason="jaxlib (MLIR's parser) is not installed")
@pytest.mark.parametrize("name", CASES)
def test_the_answers_are_mlirs(name: str) -> None:
    """The op count MLIR's parser gives, and the last uses it implies (uses through views,
    yields out of regions, a use in a loop below the alloca lasting to the loop's end, and
    an op holding regions using its operands to its own end, as sc-mlir reads it)."""
    text, ops, allocas = CASES[name]
    assert mlir_answer(text) == (ops, allocas)


def test_a_unit_attribute_is_not_read_as_an_op() -> None:
    """`attributes {llvm.emit_c_interface}` names no op: the fast reader, which declines a
    region opened on the line of another op, still reads such a func."""
    text = ("module {\n  func.func @f() attributes {llvm.emit_c_interface, x = {y.z}} {\n"
            "    %a = memref.alloca() : memref<16xf32>\n"
            '    "x.use"(%a) : (memref<16xf32>) -> ()\n    return\n  }\n}\n')
    fast = scan_bytes(text.encode())
    assert fast is not None
    assert answer(fast) == answer(scan_text(text)) == (5, [(3, 4)])
