"""Where an alloca is placed (module, func, core type, scope op and its points, scope
path), for random region nests read by both readers, against what the program generator
knows it wrote; and the symbol and attribute patterns searched from their literal against
a search from the start.

The generator writes funcs (`func.func @k`, or a generic op with `sym_name` after its
region), ops with no symbol around allocas at the top level, and regions inside them:
scope ops and others, an `scf.if` with an `else` (a trailer of two parts), and generic ops
naming a symbol of their own, which starts a new func and a new path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sc_mlir.model import allocation
from sc_mlir.model.allocation import (
    _CORE_TYPE,
    _GENERIC_SYMBOL,
    _SCRATCH_OPERANDS,
    ModelSettings,
    _search_from_literal,
    build_allocations,
)
from sc_mlir.read.events import scan_bytes
from sc_mlir.read.records import FileScan
from sc_mlir.read.scan import scan_text

SCOPE_OPS = ModelSettings().scope_ops
# A func's core-type attribute as written, and the core type it names.
CORE_TYPES = [("", None),
              ("tpu.core_type = #tpu.core_type<sc_vector_subcore>", "sc_vector_subcore"),
              ('"tpu.core_type" = #tpu.core_type< tc >', "tc")]


@dataclass(frozen=True)
class Expected:
    module: str
    func: str
    core_type: str | None
    scratch_operands: int | None
    scope_op: str
    scope_path: str
    scope_index: int  # which of the enclosing ops (outermost first) is the scope
    enclosing: tuple[str, ...]  # the enclosing ops' names, outermost first


@dataclass
class _Writer:
    """The program's lines, and what each alloca's enclosing ops make of it."""

    lines: list[str]
    expected: dict[str, Expected]
    allocas: int = 0
    inner_funcs: int = 0


@dataclass(frozen=True)
class _Around:
    """What the ops around a region say, outermost first."""

    module: str
    func: str
    core_type: str | None
    scratch_operands: int | None
    path: tuple[str, ...]  # the steps from the func (else the top) down
    names: tuple[str, ...]  # every enclosing op's name, outermost first

    def inside(self, step: str, name: str) -> _Around:
        return _Around(self.module, self.func, self.core_type, self.scratch_operands,
                       (*self.path, step), (*self.names, name))

    def scope_index(self) -> int:
        """Which enclosing op is the scope: the innermost scope op, else the func's op
        (where the path starts), else the innermost op."""
        for index in range(len(self.names) - 1, -1, -1):
            if self.names[index] in SCOPE_OPS:
                return index
        return len(self.names) - len(self.path) if self.func else len(self.names) - 1


def _attributes(draw: st.DrawFn) -> tuple[str, str | None, int | None]:
    """A func's attributes as written, and the core type and scratch operands they say."""
    core, core_type = draw(st.sampled_from(CORE_TYPES))
    scratch = draw(st.sampled_from([None, 0]))  # more would need the func's arguments
    parts = [core] if core else []
    if scratch is not None:
        parts.append(draw(st.sampled_from(["scratch_operands = 0 : i64",
                                           '"scratch_operands" = 0 : i64'])))
    return ", ".join(parts), core_type, scratch


def _body(draw: st.DrawFn, writer: _Writer, around: _Around, depth: int) -> None:
    indent = "  " * (len(around.names) + 1)
    counts: dict[str, int] = {}  # sibling ops per name in this region
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["alloca", "alloca", "region"] if depth < 4
                                    else ["alloca"]))
        if kind == "alloca":
            writer.allocas += 1
            name = f"%a{writer.allocas}"
            writer.lines.append(f"{indent}{name} = memref.alloca() : memref<4xf32, 201>")
            scope = around.scope_index()
            writer.expected[name] = Expected(
                around.module, around.func, around.core_type, around.scratch_operands,
                around.names[scope], "/".join(around.path), scope, around.names)
            continue
        op = draw(st.sampled_from(["scf.for", "scf.if", "scf.if-else", "tpu.region",
                                   "memref.alloca_scope", "my.region", "my.kernel"]))
        name = "scf.if" if op == "scf.if-else" else op
        sibling = counts.get(name, 0)
        counts[name] = sibling + 1
        if op == "my.kernel":  # a symbol of its own: a new func, its path starting here
            writer.inner_funcs += 1
            symbol = f"inner{writer.inner_funcs}"
            attributes, core_type, scratch = _attributes(draw)
            inner = _Around(around.module, symbol, core_type, scratch,
                            (f"{name}@{symbol}",), (*around.names, name))
            writer.lines.append(f'{indent}"my.kernel"() ({{')
            _body(draw, writer, inner, depth + 1)
            extra = f", {attributes}" if attributes else ""
            writer.lines.append(f'{indent}}}) {{sym_name = "{symbol}"{extra}}} : () -> ()')
            continue
        inner = around.inside(f"{name}#{sibling}", name)
        if op == "scf.for":
            writer.lines.append(f"{indent}scf.for %i{writer.allocas} = %c0 to %c4 step %c1 {{")
            _body(draw, writer, inner, depth + 1)
            writer.lines.append(f"{indent}}}")
        elif op in ("scf.if", "scf.if-else"):
            writer.lines.append(f"{indent}scf.if %cond {{")
            _body(draw, writer, inner, depth + 1)
            if op == "scf.if-else":
                writer.lines.append(f"{indent}}} else {{")
                _body(draw, writer, inner, depth + 1)
            writer.lines.append(f"{indent}}}")
        elif op == "memref.alloca_scope":
            writer.lines.append(f"{indent}memref.alloca_scope {{")
            _body(draw, writer, inner, depth + 1)
            writer.lines.append(f"{indent}}}")
        else:
            writer.lines.append(f'{indent}"{name}"() ({{')
            _body(draw, writer, inner, depth + 1)
            writer.lines.append(f"{indent}}}) : () -> ()")


@st.composite
def nests(draw: st.DrawFn) -> tuple[str, dict[str, Expected]]:
    """A module of funcs and symbol-less top-level ops, and each alloca's placement."""
    named = draw(st.booleans())
    writer = _Writer(["module @m {" if named else "module {"], {})
    module = "@m" if named else "module#0"
    counts: dict[str, int] = {}
    for number in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["func.func", "func.func", "my.kernel", "my.wrap"]))
        sibling = counts.get(kind, 0)
        counts[kind] = sibling + 1
        if kind == "my.wrap":  # no symbol: the path runs from the module
            top = _Around(module, "", None, None, ("module#0", f"my.wrap#{sibling}"),
                          ("module", "my.wrap"))
            writer.lines.append('  "my.wrap"() ({')
            _body(draw, writer, top, 1)
            writer.lines.append("  }) : () -> ()")
            continue
        symbol = f"k{number}"
        attributes, core_type, scratch = _attributes(draw)
        top = _Around(module, symbol, core_type, scratch, (f"{kind}@{symbol}",),
                      ("module", kind))
        if kind == "func.func":
            shown = f" attributes {{{attributes}}}" if attributes else ""
            writer.lines.append(f"  func.func @{symbol}(%c0: index, %c4: index, %c1: index, "
                                f"%cond: i1){shown} {{")
            _body(draw, writer, top, 1)
            writer.lines.append("    return")
            writer.lines.append("  }")
        else:
            writer.lines.append('  "my.kernel"() ({')
            _body(draw, writer, top, 1)
            extra = f", {attributes}" if attributes else ""
            writer.lines.append(f'  }}) {{sym_name = "{symbol}"{extra}}} : () -> ()')
    writer.lines.append("}")
    return "\n".join(writer.lines) + "\n", writer.expected


def _check(scan: FileScan, expected: dict[str, Expected]) -> None:
    records, _notes = build_allocations(scan, ModelSettings())
    assert sorted(r.name for r in records) == sorted(expected)
    frames_of = {raw.results[0]: raw.frames for raw in scan.allocas}
    for record in records:
        want = expected[record.name]
        assert (record.module, record.func, record.core_type, record.scratch_operands,
                record.scope_op, record.scope_path) == (
            want.module, want.func, want.core_type, want.scratch_operands, want.scope_op,
            want.scope_path), record.name
        frames = frames_of[record.name]
        assert tuple(frame.name for frame in frames) == want.enclosing, record.name
        scope = frames[want.scope_index]
        assert (record.placement.scope_start, record.placement.scope_end) == (
            scope.order, scope.end_order), record.name


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(nests())
def test_each_alloca_is_placed_where_the_program_put_it(
        program: tuple[str, dict[str, Expected]]) -> None:
    text, expected = program
    _check(scan_text(text, "nest.mlir"), expected)
    fast = scan_bytes(text.encode(), "nest.mlir")
    if fast is not None:
        _check(fast, expected)


@pytest.mark.parametrize("kept", [0, 1, 2, 3])
def test_frames_not_remembered_are_placed_alike(kept: int, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """Frames deeper than `_NESTS_KEPT_DEPTH` join their steps into the next path made."""
    monkeypatch.setattr(allocation, "_NESTS_KEPT_DEPTH", kept)

    @SETTINGS
    @given(nests())
    def placed_alike(program: tuple[str, dict[str, Expected]]) -> None:
        text, expected = program
        _check(scan_text(text, "nest.mlir"), expected)

    placed_alike()


def test_the_generator_writes_what_the_tests_need() -> None:
    """Symbols after a region, an else region, a func inside a func, and a path from the
    top all come up."""
    seen = {"sym_name": False, "} else {": False, "inner": False, "module#0/": False}

    @settings(max_examples=200, deadline=None, database=None)
    @given(nests())
    def look(program: tuple[str, dict[str, Expected]]) -> None:
        text, expected = program
        paths = " ".join(e.scope_path for e in expected.values())
        for key in seen:
            seen[key] = seen[key] or key in text or key in paths

    look()
    assert all(seen.values()), seen


_FRAGMENTS = ["sym_name", '"sym_name"', "scratch_operands", '"scratch_operands"',
              "tpu.core_type", '"tpu.core_type"', "#tpu.core_type<", "sc_vector_subcore",
              ">", " = ", "=", " ", '"k"', '"', "\\", "12", "_", "x", "a.", ", "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map("".join),
       st.sampled_from([(_GENERIC_SYMBOL, "sym_name"), (_CORE_TYPE, "tpu.core_type"),
                        (_SCRATCH_OPERANDS, "scratch_operands")]))
def test_a_search_from_the_literal_finds_what_a_search_from_the_start_finds(
        text: str, case: tuple[re.Pattern[str], str]) -> None:
    pattern, literal = case
    found, plain = _search_from_literal(pattern, literal, text), pattern.search(text)
    assert (found and (found.span(), found.groups())) == (plain and (plain.span(),
                                                                     plain.groups()))
