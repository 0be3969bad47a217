"""`space_json` writes the bytes `json_text(space_object(...))` writes, for every space:
with and without a roll-up, a crossing, unknown bounds, a bound of 0 (an infinite
percentage), names that need escaping and locations with problems."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from random_programs import EXAMPLES, programs

from sc_mlir.analysis import reports_of_file
from sc_mlir.formats.analysis_json import StringTexts, space_json, space_object
from sc_mlir.formats.records import json_text
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds, build_bounds
from sc_mlir.model.dump import load
from sc_mlir.read.scan import scan_text

GROUPINGS = (None, "source", "file", "name")


def assert_written_alike(bounds: Bounds, records: list) -> int:
    texts = StringTexts()  # shared, as the command shares it over a file's spaces
    reports = reports_of_file(bounds, records)
    for report in reports:
        for group_by in GROUPINGS:
            assert space_json(report, group_by, texts) == json_text(
                space_object(report, group_by))
            assert space_json(report, group_by) == json_text(space_object(report, group_by))
    return len(reports)


@pytest.mark.parametrize("bounds", [Bounds.default(),
                                    build_bounds(None, None, {"201": 0, "202": 100},
                                                 bounds_source="test")])
def test_the_fixtures_spaces_are_written_as_their_objects(bounds: Bounds) -> None:
    records = load(FIXTURES).records
    by_file: dict[str, list] = {}
    for record in records:
        by_file.setdefault(record.file, []).append(record)
    assert sum(assert_written_alike(bounds, group) for group in by_file.values()) > 20


ODD_NAMES = '''module @m {
  func.func @"k\\"é\\\\" () {
    %a = memref.alloca() : memref<4xf32, 201> loc(#loc1)
    %b = memref.alloca() : memref<?xf32, 201> loc(#loc9)
    %c = memref.alloca() : memref<8xf32, 201> loc("ünï\\t.py":3:4)
    %d = memref.alloca() : memref<1000xf32, 201> loc(#loc2)
    return
  }
}
#loc1 = loc("naïve \\"quoted\\""("ünï.py":1:2))
#loc2 = loc(#loc2)
'''


def test_names_that_need_escaping_and_locations_with_problems() -> None:
    scan = scan_text(ODD_NAMES, "ödd\\.mlir")
    records, _notes = build_allocations(scan)
    assert len(records) == 4
    assert any(r.loc.problems for r in records) and any(r.loc.names for r in records)
    [report] = reports_of_file(Bounds.default(), records)
    assert [a.record.loc.problems != () for a in report.live_at_peak] == [True]
    for bounds in (Bounds.default(), build_bounds(None, None, {"201": 0},
                                                  bounds_source="test")):
        assert assert_written_alike(bounds, records) == 1


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs_spaces_are_written_as_their_objects(
        program: tuple[str, dict[str, int]]) -> None:
    text, align = program
    records, _notes = build_allocations(scan_text(text, "random.mlir"))
    bounds = build_bounds(None, None, {"201": 64, "202": 0}, align,
                          bounds_source="test", align_source="test")
    assert_written_alike(bounds, records)
