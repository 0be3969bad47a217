"""Everything that occupies a memory space: Pallas scratch operands, semaphores, heap allocs.

The kernels in fixtures/pallas/ were lowered by jax's own Pallas lowering; every figure in
fixtures/pallas/expected.json was worked out by hand from their text (and cross-checked
with MLIR's parser, see fixtures/pallas/README.md), never by sc-mlir.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sc_mlir.analysis import analyze
from sc_mlir.api import diff, explain
from sc_mlir.cli import app
from sc_mlir.notebook import load

PALLAS = Path(__file__).resolve().parents[2] / "fixtures" / "pallas"
EXPECTED = json.loads((PALLAS / "expected.json").read_text())["files"]
KIND = {"alloca": "alloca", "sem_alloc": "semaphore", "scratch_operand": "scratch_operand"}
runner = CliRunner()


def space_of(record) -> str:
    """The fixture's space names, from sc-mlir's canonical ones (vmem is TileSpmem only in
    SparseCore funcs)."""
    return {201: "vmem", 0: "smem", 204: "semaphore_mem"}.get(record.space_id,
                                                               record.space_name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_entry_is_read_as_worked_out_by_hand(name):
    dump = load(PALLAS / name)
    for func, want in EXPECTED[name]["funcs"].items():
        records = [r for r in dump.records if r.func == func]
        scratch = [r for r in records if r.kind == "scratch_operand"]
        assert [(r.name, r.scratch_index, r.type, r.words, space_of(r)) for r in scratch] == [
            (s["name"], s["scratch_index"], s["type"], s["words"], s["memory_space"])
            for s in want["scratch_operands"]]
        ops = [r for r in records if r.kind != "scratch_operand"]
        assert [(r.kind, r.name, r.line, r.type, r.words, space_of(r)) for r in ops] == [
            (KIND[a["kind"]], a["name"], a["line"], a["type"], a["words"], a["memory_space"])
            for a in want["allocations"]]
        # Sources as the hand-followed alias chains give them.
        for record, alloc in zip(ops, want["allocations"], strict=True):
            if alloc["source"]:
                assert (record.loc.file, record.loc.line, record.loc.col) == (
                    alloc["source"]["file"], alloc["source"]["line"], alloc["source"]["col"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stack_offsets_and_peaks_match_the_hand_simulation(name):
    analysis = load(PALLAS / name).analyze(chip="7x")
    for func, want in EXPECTED[name]["funcs"].items():
        placed = {(a.record.kind, a.record.name, a.record.line): a
                  for report in analysis.reports if report.func == func
                  for a in report.allocas}
        for entry in [*want["scratch_operands"], *want["allocations"]]:
            line = entry.get("line")
            key = next(k for k in placed if k[:2] == (KIND[entry["kind"]], entry["name"])
                       and (line is None or k[2] == line))
            got = placed[key]
            assert (got.offset, got.upper_bound) == (entry["offset_words"],
                                                     entry["upper_bound_words"]), key
        for space, figures in want["spaces"].items():
            report = next(r for r in analysis.reports
                          if r.func == func and space_of(r) == space)
            assert report.stack_peak_words == figures["stack_peak_words"], space
            if "liveness_peak_words" in figures:
                assert report.liveness_peak_words == figures["liveness_peak_words"], space
            if "semaphores" in figures:
                # One word per semaphore: the space's words are its semaphores.
                assert sum(a.words for a in report.allocas) == figures["semaphores"]
            crossing = figures.get("first_crossing")
            if report.bound_words == 131071 and crossing:
                assert report.crossing is not None
                assert (report.crossing.alloca.name, report.crossing.offset_upper_bound_words,
                        report.crossing.allocating_words) == (
                    crossing["name"], crossing["upper_bound_words"],
                    crossing["allocating_words"])
            elif report.bound_words is not None:
                assert report.crossing is None


def analyze_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["analyze", *args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("form", ["", ".generic"])
def test_scratch_over_the_bound_is_named_and_shrinking_it_is_the_advice(form):
    code, out = analyze_json(str(PALLAS / f"sc_scratch_overflow{form}.mlir"), "--chip", "7x")
    assert code == 1
    tile = next(s for s in out["spaces"] if s["space_id"] == 201)
    # 124,000 scratch words + 17,024 scoped = 141,024 > 131,071; the allocas alone fit.
    assert tile["verdict"] == "overflow" and tile["stack_peak_words"] == 141_024
    assert tile["n_scratch_operands"] == 4
    assert tile["headroom_words"] == 131_071 - 141_024
    assert tile["percent_of_bound"] == round(100 * 141_024 / 131_071, 2)
    top = tile["crossing"]["contributors"][0]
    assert (top["kind"], top["name"], top["words"], top["scratch_index"]) == (
        "scratch_operand", "%arg6", 100_000, 0)
    # Only scratch entry 0 holds the 9,953 words the peak is over: one step, a shrink.
    fix = tile["crossing"]["fix"]
    assert [(f["name"], f["free_words"], f["dead"]) for f in fix] == [("%arg6", 9_953, False)]
    assert fix[0]["advice"].startswith("shrink scratch_shapes entry 0 (%arg6")
    assert fix[0]["advice"].endswith("by 9,953 words")
    assert tile["crossing"]["fix_still_crosses"] is None


@pytest.mark.parametrize("form", ["", ".generic"])
def test_with_the_scratch_shrunk_it_fits(form):
    code, out = analyze_json(str(PALLAS / f"sc_scratch_fits{form}.mlir"), "--chip", "7x")
    assert code == 0
    tile = next(s for s in out["spaces"] if s["space_id"] == 201)
    # 89,760 + 9,536 + 8,000 + 6,464 + 2,048 + 6,000 + 8,976 = 130,784.
    assert (tile["verdict"], tile["stack_peak_words"], tile["headroom_words"]) == (
        "fits", 130_784, 287)


def test_the_table_says_what_each_entry_is():
    result = runner.invoke(app, ["analyze", str(PALLAS / "sc_scratch_overflow.mlir"),
                                 "--chip", "7x"], env={"COLUMNS": "200"})
    assert "shrink scratch_shapes entry 0 (%arg6" in result.stdout
    assert "scratch" in result.stdout and "make_fixtures.py:100:4" in result.stdout


def test_tensor_core_scratch_counts_in_vmem_smem_and_semaphores():
    analysis = load(PALLAS / "tc_scratch_mixed.mlir").analyze(chip="7x")
    by_space = {space_of(r): r for r in analysis.reports}
    assert by_space["vmem"].verdict == "fits"
    assert by_space["vmem"].bound_words == 64 * 2**20 // 4
    assert by_space["smem"].stack_peak_words == 12 and by_space["smem"].bound_words is None
    assert by_space["semaphore_mem"].stack_peak_words == 7


def test_analyze_and_explain_give_the_same_fix(tmp_path):
    log = tmp_path / "compile.log"
    log.write_text(
        "E3000 error: 'memref.alloca' op current allocation offset upper bound (132048 words)"
        " exceeds the legitimate user allocatable offset upper bound (131071 words) in memory"
        " space 201 when allocating 6000 words\n"
        "note: see current operation: %alloca_0 = memref.alloca() : memref<6000xi32, "
        "#tpu.memory_space<vmem>>\n")
    dump = load(PALLAS / "sc_scratch_overflow.mlir")
    [explained] = explain(log, dump)
    assert explained.matched is not None and explained.matched.record.name == "%alloca_0"
    assert explained.agrees
    crossing = explained.report.crossing
    report = next(r for r in analyze(dump, chip="7x").reports if r.space_id == 201)
    assert crossing.advice == report.crossing.advice
    assert any(crossing.advice[0] in line for line in explained.advice)


def test_the_sample_gets_the_same_fix_from_analyze_and_explain():
    import sc_mlir

    dump = sc_mlir.load(sc_mlir.example_path())
    report = dump.analyze().report("sc_embedding_lookup_fwd", 201)
    [explained] = sc_mlir.explain(sc_mlir.example_log_path(), dump)
    assert explained.report.crossing.advice == report.crossing.advice
    # 140,704 - 131,071 = 9,633 over; %227..%230 are dead but reserved (23,440 each): the
    # first of them, released, is the one-entry fix.
    assert [(s.entry.name, s.free_words, s.dead) for s in report.crossing.fix] == [
        ("%227", 9_633, True)]


def test_diff_matches_scratch_operands_by_position(tmp_path):
    # The same kernel after the change: the fits fixture under the overflow one's names.
    after = tmp_path / "sc_scratch_overflow.mlir"
    after.write_text((PALLAS / "sc_scratch_fits.mlir").read_text()
                     .replace("sc_scratch_fits", "sc_scratch_overflow"))
    result = diff(PALLAS / "sc_scratch_overflow.mlir", after, chip="7x")
    tile = next(c for c in result.spaces if c.space_label.startswith("201"))
    assert (tile.before.stack_peak_words, tile.after.stack_peak_words) == (141_024, 130_784)
    resized = [e for e in result.allocations if type(e).__name__ == "Resized"]
    assert [(e.before.kind, e.before.name, e.before.words, e.after.words) for e in resized] == [
        ("scratch_operand", "%arg6", 100_000, 89_760)]


MIXED = """\
func.func @k(%n: index) {
  %a = memref.alloca() : memref<64xf32, 201>
  %h = memref.alloc() : memref<1024xf32, 201>
  %s = tpu.sem_alloc : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
  "test.use"(%a, %h, %s) : (memref<64xf32, 201>, memref<1024xf32, 201>, memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) -> ()
  return
}
"""


def test_heap_allocs_are_listed_not_stacked_and_semaphores_say_their_assumption(tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text(MIXED)
    dump = load(path)
    assert [(r.kind, r.name, r.words) for r in dump.records] == [
        ("alloca", "%a", 64), ("heap", "%h", 1024), ("semaphore", "%s", 2)]
    notes = [d.message for d in dump.diagnostics]
    assert any("1 memref.alloc op(s) are listed but not counted" in m for m in notes)
    assert any("one 4-byte word per semaphore" in m for m in notes)
    tile = dump.analyze().report("k", 201)
    assert tile.stack_peak_words == 64 and [a.name for a in tile.allocas] == ["%a"]
    assert dump.allocations["kind"].tolist() == ["alloca", "heap", "semaphore"]


def test_a_func_that_claims_more_scratch_operands_than_it_has_says_so(tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text('func.func @k(%arg0: memref<4xf32, 201>) attributes {scratch_operands = 3 '
                    ': i64} {\n  return\n}\n')
    dump = load(path)
    assert dump.records == []
    assert any("says scratch_operands = 3 but has 1 argument(s)" in d.message
               for d in dump.diagnostics)


def test_the_html_report_gives_the_fix_and_the_use_of_the_bound(tmp_path):
    html = load(PALLAS / "sc_scratch_overflow.mlir").analyze(chip="7x").to_html("k")
    assert "shrink scratch_shapes entry 0 (%arg6" in html
    assert "% of bound" in html and "107.6" in html  # 141,024 / 131,071 = 107.59%
    assert "scratch_operand" in html


def test_scratch_operands_interfere_with_everything_in_their_func():
    analysis = load(PALLAS / "sc_scratch_overflow.mlir").analyze(chip="7x")
    graph = analysis.graph("sc_scratch_overflow", 201)
    scratch = [n for n, d in graph.nodes(data=True) if d["kind"] == "scratch_operand"]
    # Live from entry to end: each of the 4 vmem scratch buffers touches all 6 other entries.
    assert len(scratch) == 4 and all(graph.degree(n) == graph.number_of_nodes() - 1
                                     for n in scratch)


@pytest.mark.parametrize("split", ["^bb0\n  (", "^bb0(\n"])
def test_a_generic_entry_label_split_over_lines_still_gives_the_scratch_operands(tmp_path, split):
    """`^bb0` alone on its line, its arguments on the next (valid MLIR, found by the
    differential fuzzer): the types come from the func's function_type, named %argN as
    MLIR prints them, placed at the func op."""
    text = (PALLAS / "sc_scratch_overflow.generic.mlir").read_text()
    lines = text.splitlines()
    func_at = next(i for i, line in enumerate(lines) if '"func.func"' in line)
    assert lines[func_at + 1].lstrip().startswith("^bb0(")  # the first ^bb0 is the func's
    path = tmp_path / "split.mlir"
    path.write_text(text.replace("^bb0(", split, 1))
    want = [(r.name, r.scratch_index, r.type, r.words)
            for r in load(PALLAS / "sc_scratch_overflow.generic.mlir").records
            if r.kind == "scratch_operand"]
    dump = load(path)
    got = [r for r in dump.records if r.kind == "scratch_operand"]
    assert [(r.name, r.scratch_index, r.type, r.words) for r in got] == want
    assert {r.line for r in got} == {func_at + 1}
    assert not [d for d in dump.diagnostics if "scratch operands" in d.message]
