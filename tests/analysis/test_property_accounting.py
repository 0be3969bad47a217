"""Every alloca is accounted for, on random MLIR and on random damage to it (hypothesis).

1. Random modules (funcs, allocas in both forms, nested regions, comments and strings
   that mention memref.alloca, inline and aliased locations) are read exactly: the table
   equals the generator's own list, with no diagnostics.
2. The same modules, cut, spliced and with bytes flipped: no exception, and every
   `memref.alloca` op in the text (outside comments and string literals, as an
   independent reader here counts them) is in the table or in a diagnostic.

More examples: SC_MLIR_PROPERTY_EXAMPLES=2000 pytest tests/analysis/test_property_accounting.py
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_reader import accounted, alloca_ops_in, stack_allocas

from sc_mlir.analysis import analyze_records
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds
from sc_mlir.read.scan import scan_text

EXAMPLES = int(os.environ.get("SC_MLIR_PROPERTY_EXAMPLES", "60"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ELEMENTS = {"f32": 32, "i32": 32, "bf16": 16, "i8": 8, "i1": 1}
SPACES = ["201", "202", "204", "#tpu.memory_space<vmem>", ""]


@dataclass
class Expected:
    line: int
    name: str
    words: int
    loc: tuple[str, int] | None


@dataclass
class Module:
    form: str
    lines: list[str] = field(default_factory=list)
    allocas: list[Expected] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    counter: int = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def add(self, depth: int, text: str) -> int:
        self.lines.append("  " * depth + text)
        return len(self.lines)


def words_of(dims: list[int], element: str) -> int:
    count = 1
    for d in dims:
        count *= d
    nbytes = -(-count * ELEMENTS[element] // 8)  # ceiling divisions
    return -(-nbytes // 4)


@st.composite
def body(draw, module: Module, depth: int, visible: list[str]) -> None:
    names = list(visible)
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["alloca", "alloca", "op", "comment", "string", "use",
                                     "region"] if depth < 4 else ["alloca", "op", "use"]))
        if kind == "alloca":
            name = module.fresh()
            dims = draw(st.lists(st.integers(0, 64), min_size=1, max_size=3))
            element = draw(st.sampled_from(list(ELEMENTS)))
            space = draw(st.sampled_from(SPACES))
            shape = "x".join(map(str, dims))
            type_ = f"memref<{shape}x{element}{', ' + space if space else ''}>"
            loc_kind = draw(st.sampled_from(["alias", "inline", "none"]))
            loc, where = "", None
            if loc_kind == "alias":
                line = draw(st.integers(1, 999))
                module.aliases.append(f'loc("src/m.py":{line}:1)')
                loc, where = f" loc(#loc{len(module.aliases)})", ("src/m.py", line)
            elif loc_kind == "inline":
                line = draw(st.integers(1, 999))
                loc, where = f' loc("in line.py":{line}:7)', ("in line.py", line)
            if module.form == "pretty":
                text = f"{name} = memref.alloca() : {type_}{loc}"
            else:
                text = (f'{name} = "memref.alloca"() <{{operandSegmentSizes = '
                        f"array<i32: 0, 0>}}> : () -> {type_}{loc}")
            at = module.add(depth, text)
            module.allocas.append(Expected(at, name, words_of(dims, element), where))
            names.append(name)
        elif kind == "op":
            module.add(depth, f'{module.fresh()} = "arith.constant"() <{{value = 1 : index}}> '
                              ": () -> index")
        elif kind == "comment":
            module.add(depth, draw(st.sampled_from([
                "// %x = memref.alloca() : memref<4xf32>",
                '// "memref.alloca"() : () -> memref<4xf32>',
                '"test.op"() : () -> () // memref.alloca() : memref<8xf32>'])))
        elif kind == "string":
            module.add(depth, draw(st.sampled_from([
                '"test.op"() {note = "memref.alloca() : memref<4xf32> { %x"} : () -> ()',
                '"test.op"() {note = "\\"memref.alloca\\"() // }"} : () -> ()',
                '%s = "test.str"() {s = "memref.alloca_scope"} : () -> i32'])))
        elif kind == "use" and names:
            target = draw(st.sampled_from(names))
            module.add(depth, f'"test.use"({target}) : (memref<?xf32>) -> ()')
        elif kind == "region":
            region = draw(st.sampled_from(["for", "if", "tpu"]))
            if module.form == "pretty" and region == "for":
                module.add(depth, f"scf.for {module.fresh()} = %c0 to %c4 step %c1 {{")
                draw(body(module, depth + 1, names))
                module.add(depth, "}")
            elif module.form == "pretty" and region == "if":
                module.add(depth, "scf.if %cond {")
                draw(body(module, depth + 1, names))
                module.add(depth, "} else {")
                draw(body(module, depth + 1, names))
                module.add(depth, "}")
            else:
                op = {"for": "scf.for", "if": "scf.if", "tpu": "tpu.region"}[region]
                module.add(depth, f'"{op}"() ({{')
                draw(body(module, depth + 1, names))
                module.add(depth + 1, '"scf.yield"() : () -> ()')
                module.add(depth, "}) : () -> ()")


@st.composite
def modules(draw) -> Module:
    module = Module(draw(st.sampled_from(["pretty", "generic"])))
    module.add(0, "module {")
    for number in range(draw(st.integers(1, 3))):
        module.add(1, f"func.func @k{number}(%c0: index, %c1: index, %c4: index, "
                      "%cond: i1) {")
        draw(body(module, 2, []))
        module.add(2, "return")
        module.add(1, "}")
    module.add(0, "}")
    for index, value in enumerate(module.aliases, 1):
        module.add(0, f"#loc{index} = {value}")
    return module


def read(text: str):
    records, diagnostics = build_allocations(scan_text(text, "random.mlir"))
    analyze_records(records, Bounds.default())
    return records, diagnostics


@SETTINGS
@given(modules())
def test_random_modules_are_read_exactly(module):
    records, diagnostics = read("\n".join(module.lines) + "\n")
    assert diagnostics == []
    got = [(r.line, r.name, r.words) for r in records]
    assert got == [(a.line, a.name, a.words) for a in module.allocas]
    for record, expected in zip(records, module.allocas, strict=True):
        if expected.loc is not None:
            assert (record.loc.file, record.loc.line) == expected.loc


# --- the accounting invariant under damage -----------------------------------------------

MUTATION_BYTES = ["\x00", "{", "}", "(", ")", '"', "<", ">", "%", "\n", "#", "/", "\\", " ",
                  "\ufffd", "\x1b", "^", "=", ":", ","]


@st.composite
def damaged(draw) -> str:
    text = "\n".join(draw(modules()).lines) + "\n"
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["cut", "splice", "flip", "flip", "drop line"]))
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        if kind == "cut":
            text = text[:at]
        elif kind == "splice":
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(start, min(len(text), start + 200)))
            text = text[:at] + text[start:end] + text[at:]
        elif kind == "flip":
            text = text[:at] + draw(st.sampled_from(MUTATION_BYTES)) + text[at + 1 :]
        else:
            lines = text.split("\n")
            del lines[draw(st.integers(0, len(lines) - 1))]
            text = "\n".join(lines)
    return text


@settings(max_examples=EXAMPLES * 3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damaged())
def test_damage_never_loses_an_alloca_silently(text):
    records, diagnostics = read(text)
    assert len(stack_allocas(records)) + accounted(diagnostics) == alloca_ops_in(text), (
        [(r.line, r.name) for r in records],
        [(d.line, d.col, d.message) for d in diagnostics])
