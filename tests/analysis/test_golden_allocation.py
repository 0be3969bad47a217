"""Golden allocation tests in the style of Triton's: each fixture in fixtures/golden/ says,
beside every alloca, its expected stack offset, upper bound, live range and packed offset,
and for each (func, space) the peaks and the verdict. The numbers were worked out by hand
(the working is in each fixture's comments)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES

from sc_mlir.analysis import analyze_records
from sc_mlir.model.bounds import Bounds
from sc_mlir.model.dump import load

GOLDEN = sorted((FIXTURES / "golden").glob("*.mlir"))
EXPECT = re.compile(r"^\s*(%[\w$.\-]+)\s*=.*memref\.alloca.*//\s*expect:(.*)$")
EXPECT_SPACE = re.compile(r"^//\s*expect-space\s+@(\S+)\s+(\S+):(.*)$")
SETTING = re.compile(r"^//\s*(bounds|align):(.*)$")


def pairs(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in text.split())


def expectations(path: Path):
    bounds = Bounds.default().with_bounds({}, "")
    allocas, spaces = [], []
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        if m := SETTING.match(line):
            values = {k: int(v) for k, v in pairs(m.group(2)).items()}
            bounds = (bounds.with_bounds(values, "golden") if m.group(1) == "bounds"
                      else bounds.with_alignments(values, "golden"))
        elif m := EXPECT.match(line):
            allocas.append((line_no, m.group(1), pairs(m.group(2))))
        elif m := EXPECT_SPACE.match(line):
            spaces.append((m.group(1), m.group(2), pairs(m.group(3))))
    return bounds, allocas, spaces


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_golden_offsets_live_ranges_and_peaks(path):
    bounds, expected_allocas, expected_spaces = expectations(path)
    assert expected_allocas and expected_spaces
    dump = load(path)
    reports = analyze_records(dump.records, bounds)
    placed = {a.record.line: a for r in reports for a in r.allocas}
    for line_no, name, want in expected_allocas:
        got = placed[line_no]
        assert got.record.name == name
        actual = {
            "offset": str(got.offset), "upper": str(got.upper_bound),
            "live": f"{got.live_start}..{got.live_end}", "packed": str(got.packed_offset),
            "scope": got.record.scope_op,
        }
        assert {k: actual[k] for k in want} == want, f"{path.name}:{line_no} {name}"
    for func, space, want in expected_spaces:
        report = next(r for r in reports if r.func == func and str(r.space_id) == space)
        c = report.crossing
        actual = {
            "stack": str(report.stack_peak_words), "live": str(report.liveness_peak_words),
            "packed": str(report.packed_peak_words), "verdict": report.verdict,
            "crossing": c.alloca.name if c else "none",
            "upper": str(c.offset_upper_bound_words) if c else "none",
            "removal": ",".join(a.name for a in c.removal) if c else "",
            "fix": ",".join(f"{s.entry.name}:{s.free_words}" for s in c.fix) if c else "",
            "dead": str(c.dead_reserved_words) if c else "0",
            "must_free": str(report.must_free_words),
            "unsized": str(len(report.unsized)),
        }
        assert {k: actual[k] for k in want} == want, f"{path.name} @{func} {space}"


def test_a_directory_of_several_files_is_analysed_file_by_file():
    dump = load(FIXTURES / "golden")
    reports = analyze_records(dump.records, Bounds.default())
    by_file = {(Path(r.file).name, r.func, r.space_id): r.stack_peak_words for r in reports}
    assert by_file[("nested_scopes.mlir", "nested", 201)] == 600
    assert by_file[("sibling_scopes.mlir", "siblings", 201)] == 1023
    assert by_file[("loops_if_while.mlir", "loops", 201)] == 3000
    assert by_file[("funcs_and_spaces.mlir", "second", 201)] == 999
    assert len({r.file for r in reports}) == len(GOLDEN)
