"""`sc-mlir analyze --group-by`: who holds the scratch at the stack peak, by source line,
source file or outermost name location; the groups and the padding add up to the peak.

Figures are worked out by hand from the fixtures (fixtures/README.md,
fixtures/pallas/expected.json); the property runs on every fixture and on random programs.
"""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from random_programs import EXAMPLES, programs
from typer.testing import CliRunner

import sc_mlir
from sc_mlir.analysis import analyze_records
from sc_mlir.analysis.rollup import GROUPINGS, roll_up
from sc_mlir.cli import app
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds
from sc_mlir.read.scan import scan_text

runner = CliRunner()
SAMPLE = FIXTURES / "sample"
FUNC = "sc_embedding_lookup_fwd"


def analyze_json(path, *options: str) -> dict:
    result = runner.invoke(app, ["analyze", str(path), "--format", "json", *options])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def space(out: dict, func: str, space_id: int) -> dict:
    return next(s for s in out["spaces"] if s["func"] == func and s["space_id"] == space_id)


def test_the_sample_by_source_line():
    s = space(analyze_json(SAMPLE, "--group-by", "source"), FUNC, 201)
    # %227..%231 come from line 88 (lookup_level, through call sites), %232 from line 89,
    # %202 from line 74: 5 x 23440 + 23440 + 64 = 140704, the stack peak.
    assert [(g["key"], g["n_allocas"], g["words"]) for g in s["groups"]] == [
        ("model/embedding.py:88", 5, 5 * 23440), ("model/embedding.py:89", 1, 23440),
        ("model/embedding.py:74", 1, 64)]
    assert [g["percent"] for g in s["groups"]] == [
        round(100 * 5 * 23440 / 140704, 2), round(100 * 23440 / 140704, 2),
        round(100 * 64 / 140704, 2)]
    assert s["padding_words"] == 0 and s["group_by"] == "source"
    assert s["groups"][1]["names"] == ["%232"]
    assert s["groups_at"] == {"name": "%232", "line": 36, "upper_bound_words": 140704}


def test_the_sample_by_file_and_by_name():
    out = analyze_json(SAMPLE, "--group-by", "file")
    assert [(g["key"], g["n_allocas"], g["words"]) for g in space(out, FUNC, 201)["groups"]] == [
        ("model/embedding.py", 7, 140704)]
    out = analyze_json(SAMPLE, "--group-by", "name")
    assert [(g["key"], g["n_allocas"], g["words"]) for g in space(out, FUNC, 201)["groups"]] == [
        ("gather_rows", 6, 6 * 23440), ("ids_buffer", 1, 64)]


def test_alignment_gaps_are_the_padding():
    # With a 64-word default alignment each 23440-word buffer after the first starts 48
    # words past the end of the one below it (23440 = 366 x 64 + 16).
    s = space(analyze_json(SAMPLE, "--group-by", "source", "--align", "201=256"), FUNC, 201)
    assert s["padding_words"] == 5 * 48
    assert s["stack_peak_words"] == 140704 + 5 * 48
    assert sum(g["words"] for g in s["groups"]) + s["padding_words"] == s["stack_peak_words"]


def test_groups_are_taken_at_the_peak_even_after_an_earlier_crossing():
    # sc_scratch_overflow first crosses at %alloca_0 (132048) but peaks at %alloca_5
    # (141024): scratch 124000 (no source location), then lines 100, 98 and 93.
    path = FIXTURES / "pallas/sc_scratch_overflow.mlir"
    s = space(analyze_json(path, "--group-by", "source"), "sc_scratch_overflow", 201)
    assert s["crossing"]["name"] == "%alloca_0"
    assert s["groups_at"]["name"] == "%alloca_5"
    assert [(g["key"], g["n_allocas"], g["words"]) for g in s["groups"]] == [
        ("(no source location)", 4, 124000), ("make_fixtures.py:93", 1, 8976),
        ("make_fixtures.py:98", 1, 6000), ("make_fixtures.py:100", 1, 2048)]
    assert sum(g["words"] for g in s["groups"]) == 141024 == s["stack_peak_words"]


def test_no_groups_without_the_option():
    assert "groups" not in analyze_json(SAMPLE)["spaces"][0]


def test_csv_rows_add_up_to_each_stack_peak():
    result = runner.invoke(app, ["analyze", str(SAMPLE), "--group-by", "source", "--align",
                                 "201=256", "-f", "csv"])
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert rows and set(rows[0]) >= {"func", "space_id", "group_by", "key", "n_allocas",
                                     "words", "percent", "stack_peak_words"}
    totals: dict[tuple[str, str, str], int] = {}
    for row in rows:
        key = (row["file"], row["func"], row["space_id"] or row["space_name"])
        totals[key] = totals.get(key, 0) + int(row["words"])
        assert int(row["stack_peak_words"]) >= int(row["words"])
    peaks = {(r["file"], r["func"], r["space_id"] or r["space_name"]): int(r["stack_peak_words"])
             for r in rows}
    assert totals == peaks
    assert any(r["key"] == "(alignment padding)" and r["words"] == "240" for r in rows)


def test_table_and_html_show_the_roll_up(tmp_path):
    html = tmp_path / "report.html"
    result = runner.invoke(app, ["analyze", str(SAMPLE), "--group-by", "source", "--html",
                                 str(html)])
    text = " ".join(result.stdout.split())
    assert "who holds the scratch" in text and "model/embedding.py:88" in text
    page = html.read_text()
    assert "Who holds the stack peak (140,704 words), by source" in page
    assert "%227, %228, %229, %230, %231" in page


def test_plot_groups_draws_one_bar_per_group():
    analysis = sc_mlir.load(str(SAMPLE)).analyze(align={"201": 256})
    figure = analysis.plot_groups(FUNC, 201, by="source")
    [ax] = figure.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("model/embedding.py:88") and labels[-1] == "alignment padding"
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths) == analysis.report(FUNC, 201).stack_peak_words == 140704 + 240
    with pytest.raises(ValueError, match="cannot group by"):
        analysis.groups(FUNC, 201, by="colour")


def _fixture_files() -> list[str]:
    return sorted(str(p) for p in FIXTURES.rglob("*.mlir"))


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: os.path.relpath(p, FIXTURES))
@pytest.mark.parametrize("align", [None, {"201": 32, "202": 64, "vmem": 256}])
def test_groups_add_up_to_the_stack_peak_in_every_fixture(path, align):
    analysis = sc_mlir.load(path).analyze(align=align)
    assert analysis.reports
    for report in analysis.reports:
        for by in GROUPINGS:
            rollup = roll_up(report, by)
            assert sum(g.words for g in rollup.groups) + rollup.padding_words == (
                report.stack_peak_words), (report.func, report.space_label, by)


# --- random programs ---------------------------------------------------------------------------


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_groups_add_up_to_the_stack_peak_in_random_programs(program):
    text, align = program
    records, diagnostics = build_allocations(scan_text(text, "random.mlir"))
    assert not [d for d in diagnostics if "skipped" in d.message]
    bounds = Bounds.default().with_alignments(align, "test")
    for report in analyze_records(records, bounds):
        peak_entries = len(report.peak_stack)
        for by in GROUPINGS:
            rollup = roll_up(report, by)
            assert sum(g.words for g in rollup.groups) + rollup.padding_words == (
                report.stack_peak_words)
            assert sum(g.n_allocas for g in rollup.groups) == peak_entries
            assert [g.words for g in rollup.groups] == sorted(
                (g.words for g in rollup.groups), reverse=True)
