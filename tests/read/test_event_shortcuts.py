"""The fast reader's shortcuts give what its general paths give: allocas in a common shape
read by one match (`_COMMON_ALLOCA`) against `_alloca`, shapes shared between readers
against a reader that starts with none, a common alloca's syntax against its
constructor's, a region's frames against its owner's ancestors, allocation ops found by one
search against the needle's, a span's lines counted once against its text's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_events import generated, scan_key

from sc_mlir.read import events
from sc_mlir.read.event_regions import Region
from sc_mlir.read.event_spans import SpanReader
from sc_mlir.read.events import scan_bytes
from sc_mlir.read.records import OpFrame, ScanSettings
from sc_mlir.read.scan import scan_text
from sc_mlir.syntax.locations import AliasLoc
from sc_mlir.syntax.parse import AllocaSyntax

# Lines near the edges of the common shapes: strings in the body or the location, brackets
# in a location's string, blanks after the location, the other allocation ops.
EDGE_LINES = [
    '%a = memref.alloca() : memref<4xf32, 201> loc(#loc1)',
    '%a = memref.alloca() : memref<4xf32, 201> loc(#loc1)   ',
    '%a = memref.alloca() : memref<4xf32, 201> loc("a.py":3:4)',
    '%a = memref.alloca() : memref<4xf32, 201> loc("a (b).py":3:4)',
    '%a = memref.alloca() : memref<4xf32, 201> loc("a loc(b":3:4)',
    '%a = memref.alloca() : memref<4xf32, 201> loc("a%b":3:4)',
    '%a = memref.alloca() : memref<4xf32, 201> loc("name")',
    '%a = memref.alloca() : memref<4xf32, 201> loc("name"(#loc2))',
    '%a = memref.alloca() : memref<4xf32, 201> loc(callsite(#loc1 at #loc2))',
    '%a = memref.alloca() {note = " loc(#loc3)"} : memref<4xf32, 201> loc(#loc1)',
    '%a = memref.alloca() {note = "x"} : memref<4xf32, 201> loc("a.py":1:2)',
    '%a = memref.alloca() : memref<4xf32, 201> loc(#loc1) loc(#loc2)',
    '%a = memref.alloca() : memref<4xf32, 201>',
    '%a = memref.alloc() : memref<4xf32, 201> loc(#loc1)',
    '%a = tpu.sem_alloc : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>'
    ' loc(#loc1)',
    '%a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
    'memref<4xi8, 201> loc(#loc1)',
    '%a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
    'memref<4xi8, 201> loc("a.py":1:2)',
    '%a = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> '
    'memref<4xi8, 201> loc("a\\0A.py":1:2)',
]


def _module(line: str) -> str:
    return f"module {{\n  {line}\n  \"x.use\"(%a) : (memref<4xf32, 201>) -> ()\n}}\n"


def _clear_shared() -> None:
    events._BODIES.clear()
    events._REGION_OPS.clear()
    for checked in (*events._CLOSINGS, events._REOPENINGS):
        checked.clear()


def _general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "_COMMON_ALLOCA", re.compile(rb"(?!)"))


@pytest.mark.parametrize("line", EDGE_LINES)
def test_edge_lines_read_as_the_general_path_reads_them(line: str, monkeypatch) -> None:
    text = _module(line).encode()
    _clear_shared()
    scan_bytes(text)  # the body read once: the shortcut takes it from the shared bodies
    shortcut = scan_bytes(text)
    _general_path(monkeypatch)
    _clear_shared()
    general = scan_bytes(text)
    assert (shortcut is None) == (general is None)
    if shortcut is not None and general is not None:
        assert scan_key(shortcut) == scan_key(general)
        assert scan_key(shortcut) == scan_key(scan_text(_module(line)))


@pytest.mark.parametrize("form", ["generic", "pretty"])
@pytest.mark.parametrize("locs", ["simple", "xla"])
def test_generated_modules_read_as_the_general_path_reads_them(
        tmp_path: Path, monkeypatch, form: str, locs: str) -> None:
    text = generated(form, locs, 30_000, 7, tmp_path).read_bytes()
    _clear_shared()
    cold = scan_bytes(text)
    warm = scan_bytes(text)
    _general_path(monkeypatch)
    _clear_shared()
    general = scan_bytes(text)
    assert cold is not None and warm is not None and general is not None
    assert scan_key(cold) == scan_key(warm) == scan_key(general)


def test_the_syntax_of_a_common_alloca_is_the_constructors() -> None:
    text = _module(EDGE_LINES[0]).encode()
    _clear_shared()
    scan_bytes(text)
    shortcut = scan_bytes(text)
    assert shortcut is not None
    syntax = shortcut.allocas[0].syntax
    assert syntax is not None and type(syntax) is AllocaSyntax
    assert syntax == AllocaSyntax(("%a",), *events._BODIES[
        b"memref.alloca() : memref<4xf32, 201>"][:5], AliasLoc("#loc1"), "memref.alloca")
    assert hash(syntax.location) == hash(AliasLoc("#loc1"))


def test_frames_of_regions_nested_deeper_than_the_recursion_limit() -> None:
    root = Region(None, None, 0, 0, False)
    region, owner = root, None
    regions = []
    for depth in range(1, 3000):
        owner = OpFrame("x.op", depth, depth, 1, "", (), owner, 0, True, 0)
        region = Region(owner, region, depth, depth, False)
        regions.append(region)
    assert root.frames == ()
    assert regions[10].frames == tuple(regions[10].owner.ancestors())  # type: ignore[union-attr]
    assert region.frames == tuple(owner.ancestors())  # type: ignore[union-attr]
    # A region opened again (`} else {`) has its op's frames too.
    again = Region(regions[5].owner, regions[4], 6, 0, False)
    assert again.frames == regions[5].frames


def test_allocation_ops_found_by_one_search_as_by_the_needle() -> None:
    text = (b'alloc memref.alloca memref.alloc memref.allocax memref.alloca.x "memref.alloca"('
            b' tpu.sem_alloc tpu.sem_alloca xtpu.sem_alloc amemref.alloc memref.alloc-1'
            b' memref.alloc$ tpu.sem_alloc\nmemref.alloca')
    found = [m.start() - (7 if m.lastindex == 1 else 8)
             for m in events._ALLOCATION_OP_AT.finditer(text, 0, len(text))]
    assert found == list(events._allocation_ops(text, 0, len(text)))
    assert len(found) == 8
    # From a line's start, as the reader searches (the needle's search skips an op that
    # starts before it; the pattern looks behind, across the newline).
    line_start = text.index(b"\n") + 1
    assert [m.start() - 7 for m in events._ALLOCATION_OP_AT.finditer(
        text, line_start, len(text))] == list(events._allocation_ops(
            text, line_start, len(text))) == [line_start]


def test_a_span_read_as_given_has_the_lines_its_text_has(tmp_path: Path) -> None:
    path = generated("generic", "xla", 40_000, 5, tmp_path)
    with SpanReader(str(path), ScanSettings(), span_bytes=4_000) as reader:
        assert reader.open()
        spans = 0
        for span, text in reader.spans():
            counted = reader.read_span(span, text)  # the lines counted by `spans`
            by_itself = reader.read_span(span)  # read again here, and counted
            assert counted.lines == by_itself.lines == (
                reader.head + text + reader.close).count(b"\n")
            spans += 1
        assert spans > 1
