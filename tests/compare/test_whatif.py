"""`sc-mlir whatif`: re-simulate a change without recompiling, answered as `diff` answers.

Expected figures are worked out by hand from the fixtures' MLIR text (fixtures/README.md,
fixtures/pallas/expected.json), or come from `sc-mlir diff` of the real after-dump.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from random_programs import EXAMPLES, programs
from typer.testing import CliRunner

import sc_mlir
from sc_mlir.analysis import analyze_records
from sc_mlir.cli import app
from sc_mlir.compare.diff import DiffResult
from sc_mlir.compare.whatif import EditError, Edits, parse_selector, what_if
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds
from sc_mlir.read.scan import scan_text

runner = CliRunner()
BEFORE = FIXTURES / "diff/limit_halved/before"
AFTER = FIXTURES / "diff/limit_halved/after"
SAMPLE = FIXTURES / "sample"
FUNC = "sc_embedding_lookup_fwd"
BOUND = 131071


def whatif(path, *options: str, code: int = 0) -> dict:
    result = runner.invoke(app, ["whatif", str(path), *options, "--format", "json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def diff(before, after) -> dict:
    result = runner.invoke(app, ["diff", str(before), str(after), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def tile_spmem(out: dict, func: str = FUNC) -> dict:
    return next(s for s in out["spaces"] if s["func"] == func and s["space"].startswith("201"))


def comparable(out: dict, ignore_spaces: tuple[str, ...] = (),
               ignore_allocations: tuple[str, ...] = ()) -> tuple[list, list, int]:
    """A diff's JSON without the fields that name the inputs, in a stable order."""
    spaces = sorted(({k: v for k, v in s.items() if k not in ignore_spaces}
                     for s in out["spaces"]), key=lambda s: (s["func"], s["space"]))
    edits = sorted(({k: v for k, v in e.items() if k not in ignore_allocations}
                    for e in out["allocations"]),
                   key=lambda e: (e["func"], e["space"], e["name_before"] or ""))
    return spaces, edits, out["unchanged_allocations"]


# --- the "done means" of issue 16 -------------------------------------------------------------


def test_halving_the_two_innermost_buffers_reproduces_the_limit_halved_dump():
    out = whatif(BEFORE, "--resize", "%231=11720", "--resize", "%232=11720")
    s = tile_spmem(out)
    # 64 + 4 x 23440 + 2 x 11720, the peak of the real after-dump (fixtures/README.md)
    assert s["after_stack_peak_words"] == 64 + 4 * 23440 + 2 * 11720 == 117264
    assert (s["before_verdict"], s["after_verdict"]) == ("allocator-limited", "fits")
    assert s["after_free_words"] == BOUND - 117264


def test_whatif_and_the_diff_of_the_real_after_dump_agree_field_by_field():
    real = diff(BEFORE, AFTER)
    simulated = whatif(BEFORE, "--resize", "%231=11720", "--resize", "%232=11720")
    # The real after-dump has another file name and SSA numbers (+100); nothing else differs.
    assert comparable(real, ("program_after",), ("name_after",)) == comparable(
        simulated, ("program_after",), ("name_after",))
    assert [e["name_after"] for e in real["allocations"]] == ["%331", "%332"]
    assert [e["name_after"] for e in simulated["allocations"]] == ["%231", "%232"]


def test_dropping_a_dead_but_reserved_buffer_fits():
    # %227 is last read by the DMA in the next scope (line 21), long before %232 (line 36)
    # is allocated: dead but reserved at the crossing.
    out = whatif(SAMPLE, "--drop", "%227", "--fail-on", "overflow")
    s = tile_spmem(out)
    assert s["after_stack_peak_words"] == 64 + 5 * 23440 == 117264
    assert s["after_verdict"] == "fits"
    # two buffers are still live at once (each is read by the next one's DMA)
    assert s["after_liveness_peak_words"] == 2 * 23440
    [removed] = out["allocations"]
    assert (removed["kind"], removed["name_before"], removed["delta_words"]) == (
        "removed", "%227", -23440)


def test_scaling_by_source_location_equals_the_same_resizes():
    by_source = whatif(SAMPLE, "--scale", "model/embedding.py:89=0.5")
    by_name = whatif(SAMPLE, "--resize", "%232=11720")
    assert comparable(by_source) == comparable(by_name)
    assert tile_spmem(by_source)["after_stack_peak_words"] == 64 + 5 * 23440 + 11720
    # line 88 is where lookup_level makes %227..%231 (through call sites)
    five = whatif(SAMPLE, "--scale", "model/embedding.py:88=1/2")
    resized = whatif(SAMPLE, *[x for n in range(227, 232) for x in ("--resize", f"%{n}=11720")])
    assert comparable(five) == comparable(resized)
    assert tile_spmem(five)["after_stack_peak_words"] == 64 + 5 * 11720 + 23440


def test_scaling_by_source_reproduces_the_real_after_dump():
    real = diff(BEFORE, AFTER)
    simulated = whatif(BEFORE, "--scale", "model/embedding.py:89:12=0.5",
                       "--scale", f"{FUNC}:%231=0.5")
    assert comparable(real, ("program_after",), ("name_after",)) == comparable(
        simulated, ("program_after",), ("name_after",))


# --- edits ------------------------------------------------------------------------------------


def test_scale_rounds_up_to_whole_elements():
    # %alloca_1: 64x128xbf16 = 8192 elements of 2 bytes (4096 words). A third: 2731
    # elements, 5462 bytes, 1366 words. %209: 8x128xf32; 0.001 of it: 2 elements, 2 words.
    out = whatif(SAMPLE, "--scale", "%alloca_1=1/3", "--scale", "%209=0.001")
    sizes = {e["name_before"]: (e["words_before"], e["words_after"]) for e in out["allocations"]}
    assert sizes == {"%alloca_1": (4096, 1366), "%209": (1024, 2)}


def test_a_name_location_selects_every_buffer_it_names():
    out = whatif(SAMPLE, "--scale", "@gather_rows=0.5")
    assert sorted(e["name_before"] for e in out["allocations"]) == [
        f"%{n}" for n in range(227, 233)]
    assert tile_spmem(out)["after_stack_peak_words"] == 64 + 6 * 11720


def test_a_dump_position_selects_the_op_there():
    # line 36 of the lookup module is %232's op (fixtures/README.md)
    out = whatif(SAMPLE, "--resize", "module_0007.sc_embedding_lookup_fwd.mlir:36=100")
    [edit] = out["allocations"]
    assert (edit["name_before"], edit["words_after"]) == ("%232", 100)


def test_an_ssa_name_in_every_func_or_in_one():
    every = whatif(SAMPLE, "--resize", "%alloca=8")
    assert sorted(e["func"] for e in every["allocations"]) == ["sc_embedding_update",
                                                              "tc_epilogue"]
    one = whatif(SAMPLE, "--resize", "tc_*:%alloca=8")
    assert [e["func"] for e in one["allocations"]] == ["tc_epilogue"]


def test_a_scratch_operand_is_resized_like_an_alloca():
    # sc_scratch_overflow: scratch 100000 + 9536 + 8000 + 6464, then 2048 + 6000 + 8976 on
    # the stack: peak 141024 (expected.json). %arg6 at 90000 words: 131024, under 131071.
    path = FIXTURES / "pallas/sc_scratch_overflow.mlir"
    out = whatif(path, "--resize", "sc_scratch_overflow:%arg6=90000", "--space", "201")
    s = out["spaces"][0]
    assert (s["before_stack_peak_words"], s["after_stack_peak_words"]) == (141024, 131024)
    assert (s["before_verdict"], s["after_verdict"]) == ("overflow", "fits")
    # liveness 135024 (expected.json: the scratch is live throughout) less the same 10000
    assert s["after_liveness_peak_words"] == 135024 - 10000
    [edit] = out["allocations"]
    assert (edit["entry_kind"], edit["scratch_index"], edit["delta_words"]) == (
        "scratch_operand", 0, -10000)


def test_a_default_alignment_is_an_edit_of_after_only():
    # 64-word alignment in 201: each 23440-word buffer after the first ends 16 words past a
    # multiple of 64, so five gaps of 48 words.
    out = whatif(SAMPLE, "--align", "201=256")
    s = tile_spmem(out)
    assert (s["before_stack_peak_words"], s["after_stack_peak_words"]) == (
        140704, 140704 + 5 * 48)


def test_fail_on_overflow_and_regression():
    still_over = ("--resize", "%232=23000")  # 140264 > 131071
    assert whatif(SAMPLE, *still_over, "--fail-on", "overflow", code=1)
    assert whatif(SAMPLE, "--drop", "%228", "--fail-on", "overflow", code=0)
    assert whatif(SAMPLE, "--resize", "%202=100", "--fail-on", "regression", code=1)
    assert whatif(SAMPLE, *still_over, "--fail-on", "regression", code=0)


def test_csv_and_table_carry_the_changes(tmp_path):
    csv = runner.invoke(app, ["whatif", str(SAMPLE), "--drop", "%227", "-f", "csv"])
    assert csv.exit_code == 0
    lines = csv.stdout.splitlines()
    assert lines[0].startswith("kind,func,space,entry_kind")
    assert lines[1].startswith("removed,sc_embedding_lookup_fwd,201 (tile_spmem),alloca,,%227")
    assert len(lines) == 1 + 15 and all(x.startswith("unchanged,") for x in lines[2:])
    html = tmp_path / "whatif.html"
    table = runner.invoke(app, ["whatif", str(SAMPLE), "--drop", "%227", "--html", str(html)])
    assert table.exit_code == 0
    assert "140,704 → 117,264" in table.stdout and "--drop %227" in table.stdout
    assert "117,264" in html.read_text()


# --- bad edits: exit 2, never a traceback ------------------------------------------------------


@pytest.mark.parametrize(("options", "says"), [
    (["--resize", "%9999=3"], "matches no entry; nearest:"),
    (["--drop", "@gather_row"], "nearest: @gather_rows"),
    (["--resize", "model/embeding.py:89=3"], "model/embedding.py:89"),
    (["--resize", "%232=half"], "not a whole number"),
    (["--resize", "%232=-1"], "must not be negative"),
    (["--scale", "%232=x"], "not a number"),
    (["--resize", "%232"], "expected SELECTOR=VALUE"),
    (["--drop", "nonsense"], "cannot read the selector"),
    (["--resize", "%232=1", "--drop", "@gather_rows"], "both select %232"),
    (["--resize", "%232=1", "--resize", "%232=2"], "--resize %232 is given twice"),
    (["--scale", "%232=0.5", "--scale", "%232=1/3"], "--scale %232 is given twice"),
    ([], "give at least one edit"),
])
def test_a_bad_edit_is_a_usage_error(options, says):
    result = runner.invoke(app, ["whatif", str(SAMPLE), *options])
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_scaling_a_buffer_of_unknown_size_says_so(tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text("func.func @k(%n: index) {\n"
                    "  %a = memref.alloca(%n) : memref<?xf32, 201>\n  return\n}\n")
    result = runner.invoke(app, ["whatif", str(path), "--scale", "%a=0.5"])
    assert result.exit_code == 2
    assert "its size is unknown" in " ".join(result.output.split())
    resized = whatif(path, "--resize", "%a=10")
    assert resized["spaces"][0]["after_stack_peak_words"] == 10


def test_dropping_every_entry_of_the_last_chunk_compares_that_chunk(tmp_path):
    # Of several chunks of one func the last one is compared (as `diff` does); with %b
    # dropped the last chunk holds nothing, which must not bring chunk 0 (%a) in its place.
    path = tmp_path / "chunks.mlir"
    path.write_text("func.func @k() {\n  %a = memref.alloca() : memref<8xf32, 201>\n  return\n}\n"
                    "// -----\n"
                    "func.func @k() {\n  %b = memref.alloca() : memref<4xf32, 201>\n  return\n}\n")
    out = whatif(path, "--drop", "%b")
    [s] = out["spaces"]
    assert (s["before_stack_peak_words"], s["after_stack_peak_words"]) == (4, 0)
    assert s["after_verdict"] == "fits"
    assert [(e["kind"], e["name_before"]) for e in out["allocations"]] == [("removed", "%b")]


def test_selectors_read_every_form():
    assert parse_selector(" %232 ").name == "%232"
    s = parse_selector("@k:%arg6")
    assert (s.kind, s.func, s.name) == ("ssa", "k", "%arg6")
    s = parse_selector('"result.1":279:1')
    assert (s.kind, s.file, s.line, s.col) == ("source", "result.1", 279, 1)
    with pytest.raises(EditError):
        parse_selector("model/embedding.py")


# --- the notebook API -------------------------------------------------------------------------


def test_analysis_what_if_returns_the_diff_object():
    analysis = sc_mlir.load(str(SAMPLE)).analyze()
    change = analysis.what_if(resize={"%231": 11720, "%232": 11720})
    assert isinstance(change, DiffResult)
    s = next(c for c in change.spaces if c.func == FUNC and c.space_label.startswith("201"))
    assert (s.before.stack_peak_words, s.after.stack_peak_words) == (140704, 117264)
    assert "117,264" in change._repr_html_()
    figure = change.plot()
    assert figure.axes
    dropped = analysis.what_if(drop=["%227"], scale={"%209": 0.5})
    assert {type(e).__name__ for e in dropped.allocations if e.delta_words} == {
        "Removed", "Resized"}
    with pytest.raises(EditError, match="nearest"):
        analysis.what_if(drop=["%999"])
    with pytest.raises(EditError, match="not a whole number"):
        analysis.what_if(resize={"%232": "half"})  # type: ignore[dict-item]
    with pytest.raises(EditError, match="not a number"):
        analysis.what_if(scale={"%232": "nan"})


# --- a second method: edit the MLIR text itself and read it again ------------------------------

_F32_ALLOCA = re.compile(r"(%a\d+) = memref\.alloca\(\)(.*?) : memref<(\d+)xf32, ")


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), st.data())
def test_whatif_equals_reading_the_edited_text(program, data):
    text, align = program
    lines = text.split("\n")
    f32 = [(i, m) for i, line in enumerate(lines) if (m := _F32_ALLOCA.search(line))]
    assume(f32)
    chosen = data.draw(st.lists(st.sampled_from(f32), min_size=1, max_size=3,
                                unique_by=lambda x: x[0]))
    resize: dict[str, int] = {}
    drop: list[str] = []
    for i, m in chosen:
        if data.draw(st.booleans()):
            drop.append(m.group(1))
            lines[i] = ""
        else:
            words = data.draw(st.integers(0, 400))
            resize[m.group(1)] = words
            lines[i] = lines[i].replace(f"memref<{m.group(3)}xf32, ", f"memref<{words}xf32, ")
    bounds = Bounds.default().with_alignments(align, "test").with_bounds({"201": 500}, "test")
    records, _ = build_allocations(scan_text(text, "random.mlir"))
    simulated = what_if(records, bounds, Edits(resize, tuple(drop)))
    edited, _ = build_allocations(scan_text("\n".join(lines), "random.mlir"))
    reread = {(r.func, r.space_label): r for r in analyze_records(edited, bounds)}
    for change in simulated.spaces:
        after = change.after
        assert after is not None
        again = reread.get((after.func, after.space_label))
        if again is None:  # every entry of it dropped
            assert (after.stack_peak_words, after.liveness_peak_words) == (0, 0)
            continue
        assert (after.stack_peak_words, after.liveness_peak_words, after.packed_peak_words,
                after.verdict) == (again.stack_peak_words, again.liveness_peak_words,
                                   again.packed_peak_words, again.verdict)
