"""The model's shortcuts give what its general paths give: records built from the fast
reader's shared bodies (`RawAlloca.body`, `location`) against records built from each
alloca's whole `AllocaSyntax`, a syntax made when asked for against the constructor's, and
a nest's inline step against `_Builder._step`."""

from __future__ import annotations

from pathlib import Path

import pytest

from sc_mlir.model.allocation import _SHARED_FACTS, ModelSettings, _Builder, build_allocations
from sc_mlir.model.spaces import SpaceMap
from sc_mlir.read.event_spans import SpanReader
from sc_mlir.read.events import read_events, scan_bytes
from sc_mlir.read.records import FileScan, OpFrame, ScanSettings
from sc_mlir.read.scan import scan_file, scan_text
from sc_mlir.syntax.locations import AliasLoc
from sc_mlir.syntax.parse import AllocaSyntax

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# A module whose allocas take the model's other ways: a type never defined (a note per
# alloca), a memref.alloc and a tpu.sem_alloc (kind notes), an alignment, a
# dynamic size, the same body under two core types, and region ops that name a symbol in
# their text after the region (generic form) or in their header.
MIXED = """\
module @m {
  func.func @k() attributes {tpu.core_type = #tpu.core_type<sc_vector_subcore>} {
    %c4 = arith.constant 4 : index
    %a = memref.alloca() : memref<4xf32, 201> loc(#loc1)
    %b = memref.alloca() {alignment = 64 : i64} : memref<8xi32, 201> loc("a.py":3:4)
    %c = memref.alloca(%c4) : memref<?xf32, 201> loc(#loc2)
    %d = memref.alloca() : !undefined_type loc(#loc1)
    %e = memref.alloc() : memref<4xf32, 201> loc(#loc1)
    %f = tpu.sem_alloc : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> loc(#loc1)
    scf.for %i = %c4 to %c4 step %c4 {
      %g = memref.alloca() : memref<4xf32, 201> loc(#loc1)
      scf.if %x {
        %h = memref.alloca() : !undefined_type loc(#loc2)
        %i2 = memref.alloca() : memref<4xf32, 201> loc(#loc1)
      }
    }
    "x.op"() ({
      %j = memref.alloca() : memref<4xf32, 201> loc(#loc1)
    }) {sym_name = "inner"} : () -> ()
    return
  }
  func.func @other() {
    %k = memref.alloca() : memref<4xf32, 201> loc(#loc1)
    %l = memref.alloca() {alignment = 64 : i64} : memref<8xi32, 201> loc(#loc2)
    return
  }
}
#loc1 = loc("a.py":1:2)
#loc2 = loc("b.py":5:6)
"""


def _with_whole_syntax(scan: FileScan) -> None:
    """Each alloca given its syntax whole, as the careful reader gives it."""
    for raw in scan.allocas:
        syntax = raw.syntax
        raw.syntax = syntax
        assert raw.body is None and raw.location is (syntax.location if syntax else None)


def _assert_built_alike(scan: FileScan) -> None:
    settings = ModelSettings()
    shortcut = build_allocations(scan, settings)
    _with_whole_syntax(scan)
    assert build_allocations(scan, settings) == shortcut


def test_records_from_shared_bodies_are_those_from_whole_syntax() -> None:
    scan = scan_bytes(MIXED.encode())
    assert scan is not None
    assert sum(raw.body is not None for raw in scan.allocas) > 8
    records, notes = build_allocations(scan, ModelSettings())
    assert any("skipped" in note.message for note in notes)
    assert {r.kind for r in records} == {"alloca", "heap", "semaphore"}
    _assert_built_alike(scan)


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.mlir")), ids=lambda p: p.name)
def test_fixtures_build_alike(path: Path) -> None:
    fast = read_events(str(path))
    if fast is None:
        pytest.skip("not read by the fast reader")
    careful = build_allocations(scan_file(str(path)), ModelSettings())
    assert build_allocations(fast, ModelSettings()) == careful
    _assert_built_alike(fast)


def test_a_syntax_made_when_asked_for_is_the_constructors() -> None:
    scan = scan_bytes(MIXED.encode())
    assert scan is not None
    raw = next(raw for raw in scan.allocas if raw.body is not None)
    body, location = raw.body, raw.location
    assert isinstance(location, AliasLoc)
    syntax = raw.syntax
    assert syntax == AllocaSyntax(raw.results, *body[:5], location, body[5])
    assert raw.syntax is syntax  # made once
    raw.syntax = None
    assert raw.syntax is None and raw.body is None and raw.location is None


def _chains(scan: FileScan) -> list[tuple[OpFrame, ...]]:
    return list({id(raw.frames): raw.frames for raw in scan.allocas if raw.frames}.values())


def test_a_nests_inline_step_is_the_general_step() -> None:
    scan = scan_bytes(MIXED.encode())
    assert scan is not None
    shortcut = _Builder(scan, ModelSettings())
    general = _Builder(scan, ModelSettings())
    for frames in _chains(scan):
        outer = None
        for frame in frames:
            outer = general._step(frame, outer, frames[0])
        assert shortcut.nest(frames) == outer
    # The op that names a symbol after its region is a func to the allocas inside it.
    assert any(nest.scope_path == "x.op@inner" for nest in shortcut.nests.values())


# The same body under two core types (a space of its own under each), in funcs far enough
# apart to be read in spans of their own.
_FUNC = """\
  func.func @{name}() {attributes}{{
    %a = memref.alloca() : memref<4xf32, #tpu.memory_space<vmem>> loc(#loc1)
    %b = memref.alloca() : memref<8xf32, 201> loc(#loc2)
    "test.use"(%a, %b) : (memref<4xf32, #tpu.memory_space<vmem>>, memref<8xf32, 201>) -> ()
    return
  }}
"""
_SUBCORE = "attributes {tpu.core_type = #tpu.core_type<sc_vector_subcore>} "
CORE_TYPES = "module @m {\n" + "".join(
    _FUNC.format(name=f"k{i}", attributes=_SUBCORE if i % 2 else "") for i in range(6)
) + '}\n#loc1 = loc("a.py":1:2)\n#loc2 = loc("b.py":3:4)\n'


def _spans_of(path: Path) -> list[FileScan]:
    with SpanReader(str(path), ScanSettings(), span_bytes=200) as reader:
        assert reader.open()
        return [reader.read_span(span, text) for span, text in reader.spans()]


def test_the_spans_of_a_file_share_what_a_body_means_as_each_alone_would_say(tmp_path):
    """The builders of a file's spans share what each body means, per core type and
    settings: the records are those each span's builder makes alone."""
    path = tmp_path / "k.mlir"
    path.write_text(CORE_TYPES)
    scans = _spans_of(path)
    assert len(scans) >= 4
    vmem = ModelSettings(space_map=SpaceMap().with_overrides({"#tpu.memory_space<vmem>": 202}))
    for settings in (ModelSettings(), vmem, ModelSettings()):
        shared = [build_allocations(scan, settings) for scan in scans]
        alone = []
        for scan in scans:
            _SHARED_FACTS.clear()
            alone.append(build_allocations(scan, settings))
        assert shared == alone
        spaces = {(r.func, r.name): (r.space_id, r.space_name) for records, _notes in shared
                  for r in records}
        if settings is vmem:
            assert spaces["k0", "%a"] == spaces["k1", "%a"] == (202, "spmem"), spaces
        else:
            assert spaces["k0", "%a"] == (None, "vmem") and spaces["k1", "%a"][0] == 201
    # Shared: the bodies of all the spans worked out once per core type.
    _SHARED_FACTS.clear()
    for scan in scans:
        build_allocations(scan, vmem)
    (by_table,) = _SHARED_FACTS.values()
    assert sorted(len(known.facts) for known in by_table.values()) == [2, 2]


def test_funcs_of_other_core_types_in_one_scan_each_give_a_body_their_own_meaning():
    """`build_all` looks up what bodies mean again when the core type changes between
    regions met one after another, not only when the chunk does."""
    for scan in (scan_bytes(CORE_TYPES.encode()), scan_text(CORE_TYPES, "k.mlir")):
        assert scan is not None
        records, _notes = build_allocations(scan, ModelSettings())
        spaces = {(r.func, r.name): (r.core_type, r.space_id, r.space_name) for r in records}
        for i in range(6):
            core, space_id, space_name = spaces[f"k{i}", "%a"]
            if i % 2:
                assert (core, space_id) == ("sc_vector_subcore", 201), spaces
            else:
                assert (core, space_id, space_name) == (None, None, "vmem"), spaces

