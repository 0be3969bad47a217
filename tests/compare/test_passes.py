"""`sc-mlir passes`: which pass pushed a kernel over the bound.

The fixtures (fixtures/passes, made by `make_fixtures.py` with jaxlib's pass manager) run
`cse, mem2reg, canonicalize, cse` on a kernel with ROWS-word buffers in space 201. The
figures below are worked out by hand from the printed IR (see fixtures/README.md):

* after cse: `%alloca_0` 64 words (func scope, never read: CSE erased its only load),
  `%alloca_2` ROWS words in the one-trip `scf.for`, `%alloca_1` ROWS words at func scope:
  stack peak 64 + ROWS; at most one ROWS buffer live: liveness peak ROWS;
* after mem2reg: the scalar `memref<f32>` (space 0, 1 word) is gone; space 201 unchanged;
* after canonicalize: the loop is folded, its buffer now at func scope, and the unused
  64-word buffer erased: stack peak 2 x ROWS, liveness still ROWS;
* after cse: unchanged.

With ROWS = 70000, 2 x 70000 = 140000 > 131071: canonicalize is the first pass after which
space 201 crosses, by 140000 - 70064 = +69936 words.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from sc_mlir.analysis import ALLOCATOR_LIMITED, FITS, UNKNOWN_BOUND
from sc_mlir.cli import app
from sc_mlir.compare.passes import (
    PassStep,
    Timeline,
    iter_chunks,
    natural_key,
    parse_pass_header,
    read_timelines,
    timelines_from_analysis,
)
from sc_mlir.model.bounds import Bounds
from sc_mlir.render.passes_plot import labelled_steps, plot_passes

PASSES = FIXTURES / "passes"
AFTER_ALL = PASSES / "after_all" / "gather_rows.mlir"
TREE = PASSES / "tree"
XLA_NAMED = PASSES / "xla_named"
runner = CliRunner()

ARGS = ["cse", "mem2reg", "canonicalize", "cse"]


def steps_of(timeline: Timeline) -> list[tuple[str | None, int, int, str]]:
    return [(s.arg, s.stack_peak_words, s.liveness_peak_words, s.verdict)
            for s in timeline.steps]


def only(result, func: str, space: str, stream_part: str = "") -> Timeline:
    found = [t for t in result.select([space], [func]).timelines if stream_part in t.stream]
    assert len(found) == 1, [(t.stream, t.func, t.space_label) for t in found]
    return found[0]


def expected_201(rows: int, bound: int = 131071) -> list[tuple[str, int, int, str]]:
    def verdict(stack: int) -> str:
        return FITS if stack <= bound else ALLOCATOR_LIMITED  # liveness (rows) always fits
    before, after = 64 + rows, 2 * rows
    return [("cse", before, rows, verdict(before)), ("mem2reg", before, rows, verdict(before)),
            ("canonicalize", after, rows, verdict(after)), ("cse", after, rows, verdict(after))]


def assert_canonicalize_crossed(t: Timeline) -> None:
    assert steps_of(t) == expected_201(70000)
    crossing = t.first_crossing
    assert crossing is not None
    assert (crossing.index, crossing.arg) == (2, "canonicalize")
    assert crossing.stack_before_words == 70064 and crossing.stack_after_words == 140000
    assert crossing.delta_stack_words == 69936
    changes = {(type(e).__name__, e.delta_words, (getattr(e, "after", None) or e.before).loc,
                getattr(e, "before", None) and e.before.scope_path,
                getattr(e, "after", None) and e.after.scope_path) for e in crossing.edits}
    assert changes == {
        ("Removed", -64, "kernel.py:11:10", "func.func@gather_rows", None),
        ("Moved", 0, "kernel.py:14:12", "func.func@gather_rows/scf.for#0",
         "func.func@gather_rows"),
    }
    assert t.largest_growth is None


# --- one file of `IR Dump After` chunks -----------------------------------------------------


def test_one_print_after_all_file_names_canonicalize_as_the_pass_that_crossed():
    result = read_timelines(AFTER_ALL)
    assert result.passes == 4
    t = only(result, "gather_rows", "201")
    assert [s.pass_name for s in t.steps] == ["CSEPass", "Mem2Reg", "CanonicalizerPass",
                                              "CSEPass"]
    assert [s.chunk for s in t.steps] == [1, 2, 3, 4]
    assert t.module == "@gather_kernel" and t.bound_words == 131071
    assert_canonicalize_crossed(t)


def test_a_space_that_a_pass_empties_goes_to_zero_words():
    t = only(read_timelines(AFTER_ALL), "gather_rows", "smem")
    assert steps_of(t) == [("cse", 1, 1, UNKNOWN_BOUND), ("mem2reg", 0, 0, UNKNOWN_BOUND),
                           ("canonicalize", 0, 0, UNKNOWN_BOUND), ("cse", 0, 0, UNKNOWN_BOUND)]
    assert t.first_crossing is None and t.largest_growth is None


def test_with_a_larger_bound_nothing_crosses_and_the_largest_growth_is_named():
    result = read_timelines(AFTER_ALL, Bounds.default().with_bounds({"201": 200000}, "test"))
    t = only(result, "gather_rows", "201")
    assert t.first_crossing is None
    growth = t.largest_growth
    assert growth is not None and (growth.index, growth.arg) == (2, "canonicalize")
    assert growth.delta_stack_words == 69936


# --- one file per pass: MLIR's tree printer and XLA-like names --------------------------------


def test_mlir_tree_printer_files_are_one_stream_in_number_order():
    result = read_timelines(TREE)
    assert result.passes == 4
    t = only(result, "gather_rows", "201")
    assert [s.file.rsplit("/", 1)[-1] for s in t.steps] == [
        "0_0_cse.mlir", "0_1_mem2reg.mlir", "0_2_canonicalize.mlir", "0_3_cse.mlir"]
    assert_canonicalize_crossed(t)


def test_xla_named_files_go_by_their_sequence_numbers_not_alphabetically():
    result = read_timelines(XLA_NAMED)
    t = only(result, "gather_rows", "201", "module_0007")
    # 1, 2, 9, 10: alphabetical order would put 10 second. These files have no header:
    # the pass comes from the name (`mem2reg` holds a 2 that is not a sequence number).
    assert [s.file.rsplit("/", 1)[-1].split(".")[2] for s in t.steps] == ["1", "2", "9", "10"]
    assert [s.pass_name for s in t.steps] == ARGS
    assert_canonicalize_crossed(t)


def test_two_modules_with_the_same_func_are_never_mixed():
    result = read_timelines(XLA_NAMED)
    timelines_201 = result.select(["201"]).timelines
    assert sorted(t.stream.rsplit("/", 1)[-1] for t in timelines_201) == [
        "module_0007", "module_0009"]
    t = only(result, "gather_rows", "201", "module_0009")
    assert steps_of(t) == expected_201(40000)
    assert t.first_crossing is None
    assert t.largest_growth is not None
    assert (t.largest_growth.arg, t.largest_growth.delta_stack_words) == ("canonicalize", 39936)
    assert {type(e).__name__ for e in t.largest_growth.edits} == {"Removed", "Moved"}


def test_natural_order_compares_numbers_as_numbers():
    names = ["m.10.after_cse.mlir", "m.9.after_dce.mlir", "m.1.after_x.mlir"]
    assert sorted(names, key=natural_key) == ["m.1.after_x.mlir", "m.9.after_dce.mlir",
                                              "m.10.after_cse.mlir"]


# --- headers, chunks that are not passes, func-scoped dumps -----------------------------------


@pytest.mark.parametrize(("line", "expected"), [
    ("// -----// IR Dump After CSE (cse) //----- //", ("after", "CSE", "cse", False, None)),
    ("// -----// IR Dump After Canonicalizer (canonicalize) ('func.func' operation: @main) "
     "//----- //", ("after", "Canonicalizer", "canonicalize", False, "@main")),
    ("// -----// IR Dump After CanonicalizerPass: canonicalize{max-iterations=10 top-down=true}"
     " ('func.func' operation: @k) //----- //",
     ("after", "CanonicalizerPass", "canonicalize", False, "@k")),
    ("// -----// IR Dump After SCAllocate Failed (sc-allocate) ('builtin.module' operation) "
     "//----- //", ("after", "SCAllocate", "sc-allocate", True, "builtin.module")),
    ("// -----// IR Dump Before CSE (cse) //----- //", ("before", "CSE", "cse", False, None)),
])
def test_pass_headers_old_and_new_spellings(line, expected):
    h = parse_pass_header(line)
    assert h is not None
    assert (h.when, h.name, h.arg, h.failed, h.anchor) == expected


def test_plain_split_marker_is_no_pass_header():
    assert parse_pass_header("// -----") is None


def kernel(func: str, words: int, space: int = 201, extra: str = "") -> str:
    return (f"func.func @{func}() {{\n"
            f"  %a = memref.alloca() : memref<{words}xf32, {space}>\n{extra}"
            "  return\n}\n")


def test_chunks_without_pass_headers_are_separate_modules(tmp_path):
    # An `mlir-opt --split-input-file` style file: two modules, not two passes of one.
    path = tmp_path / "split.mlir"
    path.write_text(kernel("k", 100) + "// -----\n" + kernel("k", 200000))
    result = read_timelines(path)
    timelines = result.select(["201"], ["k"]).timelines
    assert sorted(len(t.steps) for t in timelines) == [1, 1]
    assert sorted(t.steps[0].stack_peak_words for t in timelines) == [100, 200000]
    crossing = [t for t in timelines if t.first_crossing]
    assert len(crossing) == 1 and crossing[0].first_crossing.stack_before_words is None


def test_before_chunks_are_counted_and_not_steps(tmp_path):
    path = tmp_path / "before_after.mlir"
    path.write_text("// -----// IR Dump Before Inline (inline) //----- //\n" + kernel("k", 10)
                    + "// -----// IR Dump After Inline (inline) //----- //\n" + kernel("k", 20)
                    + "// -----// IR Dump Before CSE (cse) //----- //\n" + kernel("k", 20)
                    + "// -----// IR Dump After CSE (cse) //----- //\n" + kernel("k", 30))
    result = read_timelines(path)
    assert result.skipped_before == 2
    assert any("2 'IR Dump Before' chunk(s) not used" in d.message for d in result.diagnostics)
    t = only(result, "k", "201")
    assert [(s.arg, s.stack_peak_words) for s in t.steps] == [("inline", 20), ("cse", 30)]
    assert t.largest_growth is not None and t.largest_growth.delta_stack_words == 10
    (edit,) = t.largest_growth.edits
    assert (type(edit).__name__, edit.before.words, edit.after.words) == ("Resized", 20, 30)


def test_func_scoped_dumps_keep_each_func_on_its_own_chunks(tmp_path):
    # Without module scope, a func pass prints only the func it ran on; a module pass
    # prints the whole module. `g` is not printed by the func passes on `f`.
    module = ("module @m {\n" + kernel("f", 100) + kernel("g", 500) + "}\n")
    text = ("// -----// IR Dump After Inliner (inline) ('builtin.module' operation) //----- //\n"
            + module
            + "// -----// IR Dump After Unroll (unroll) ('func.func' operation: @f) //----- //\n"
            + kernel("f", 100, extra="  %b = memref.alloca() : memref<150000xf32, 201>\n")
            + "// -----// IR Dump After CSE (cse) ('func.func' operation: @g) //----- //\n"
            + kernel("g", 400))
    path = tmp_path / "func_scoped.mlir"
    path.write_text(text)
    result = read_timelines(path)
    f = only(result, "f", "201")
    g = only(result, "g", "201")
    assert [(s.index, s.arg, s.stack_peak_words) for s in f.steps] == [
        (0, "inline", 100), (1, "unroll", 150100)]
    assert [(s.index, s.arg, s.stack_peak_words) for s in g.steps] == [
        (0, "inline", 500), (2, "cse", 400)]
    assert f.module == g.module == "@m"  # the funcs printed alone stay in their module
    assert f.first_crossing is not None and f.first_crossing.arg == "unroll"
    (added,) = f.first_crossing.edits
    assert (type(added).__name__, added.delta_words) == ("Added", 150000)


def test_a_space_that_appears_after_some_passes_starts_from_zero(tmp_path):
    path = tmp_path / "late_space.mlir"
    path.write_text("// -----// IR Dump After A (a) //----- //\n" + kernel("k", 8, space=202)
                    + "// -----// IR Dump After B (b) //----- //\n"
                    + kernel("k", 8, space=202, extra="  %c = memref.alloca() : "
                             "memref<140000xf32, 201>\n"))
    t = only(read_timelines(path), "k", "201")
    assert [(s.arg, s.stack_peak_words) for s in t.steps] == [("a", 0), ("b", 140000)]
    assert t.first_crossing is not None and t.first_crossing.delta_stack_words == 140000


def test_a_failure_on_one_chunk_costs_that_chunk_only(monkeypatch):
    import sc_mlir.compare.passes as timeline

    real = timeline.analyse_chunk

    def failing(raw, settings, bounds):
        if raw.chunk == 2:
            raise RuntimeError("boom")
        return real(raw, settings, bounds)

    monkeypatch.setattr(timeline, "analyse_chunk", failing)
    result = read_timelines(AFTER_ALL)
    assert any(d.message.startswith("chunk skipped: sc-mlir failed on it (RuntimeError: boom)")
               for d in result.diagnostics)
    t = only(result, "gather_rows", "201")
    assert [s.chunk for s in t.steps] == [1, 3, 4]


def test_a_func_printed_without_allocas_still_counts_as_printed(tmp_path):
    # `k` has no alloca after pass a; its space-201 timeline starts from 0 words there, in
    # module @m (named on the module line, not by any alloca of that chunk).
    empty = "module @m {\n  func.func @k() {\n    return\n  }\n}\n"
    path = tmp_path / "late.mlir"
    path.write_text("// -----// IR Dump After A (a) //----- //\n" + empty
                    + "// -----// IR Dump After B (b) //----- //\n"
                    + "module @m {\n" + kernel("k", 5000) + "}\n")
    t = only(read_timelines(path), "k", "201")
    assert t.module == "@m"
    assert [(s.arg, s.stack_peak_words) for s in t.steps] == [("a", 0), ("b", 5000)]
    assert t.largest_growth is not None and t.largest_growth.delta_stack_words == 5000


# --- streaming -------------------------------------------------------------------------------


def test_chunks_come_out_one_at_a_time():
    def blocks():
        yield (["func.func @k() {", "  return", "}",
                "// -----// IR Dump After CSE (cse) //----- //", "func.func @k() {"], False)
        raise AssertionError("read past the first chunk before handing it out")

    first = next(iter_chunks("x.mlir", blocks()))
    assert first.chunk == 0 and first.header is None and len(first.lines) == 3


def test_line_numbers_in_a_chunk_are_those_of_the_file():
    t = only(read_timelines(AFTER_ALL), "gather_rows", "201")
    change = t.first_crossing
    assert change is not None
    moved = next(e for e in change.edits if type(e).__name__ == "Moved")
    lines = AFTER_ALL.read_text().split("\n")
    assert "memref.alloca() : memref<70000xf32, 201>" in lines[moved.after.line - 1]
    assert "IR Dump After CanonicalizerPass" in "".join(lines[: moved.after.line])
    assert "scf.for" in lines[moved.before.line - 2]


# --- from a loaded dump, figures ----------------------------------------------------------------


def test_an_analysis_in_memory_gives_the_same_timeline():
    import sc_mlir

    result = timelines_from_analysis(sc_mlir.load(AFTER_ALL).analyze())
    assert_canonicalize_crossed(only(result, "gather_rows", "201"))


def test_analysis_plot_passes_marks_the_first_crossing():
    import sc_mlir

    figure = sc_mlir.load(AFTER_ALL).analyze().plot_passes("gather_rows", 201)
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts == ["crosses after #2 canonicalize"]
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert "bound 131,071" in legend
    assert list(sc_mlir.plot_passes(sc_mlir.passes(AFTER_ALL), "gather_rows", "smem").axes[0].texts) \
        == []


def long_timeline(n: int) -> Timeline:
    steps = []
    for i in range(n):
        stack = 1000 + (500 if i >= 100 else 0) + (200000 if i >= 250 else 0)
        steps.append(PassStep(i, f"Pass{i}", f"pass-{i}", "f.mlir", i, stack, 900, 900,
                              ALLOCATOR_LIMITED if stack > 131071 else FITS))
    return Timeline("f.mlir", "", "k", "201", 201, "tile_spmem", 131071, tuple(steps),
                    None, None)


def test_hundreds_of_passes_label_only_those_that_change_the_peak():
    t = long_timeline(400)
    assert labelled_steps(t.steps, 24) == [100, 250]
    figure = plot_passes(t)
    labels = [label.get_text() for label in figure.axes[0].get_xticklabels()]
    assert labels == ["#0 pass-0", "#100 pass-100", "#250 pass-250"]


def test_only_the_largest_changes_are_labelled_when_too_many_change():
    steps = tuple(PassStep(i, "P", f"p{i}", "f", i, i * i, 0, 0, FITS) for i in range(50))
    assert labelled_steps(steps, 5) == [45, 46, 47, 48, 49]


# --- the command -----------------------------------------------------------------------------


def passes_json(*args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["passes", *args, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_cli_json_names_the_first_crossing_and_its_changes():
    code, out = passes_json(str(AFTER_ALL), "--space", "tile_spmem")
    assert code == 1
    (t,) = out["timelines"]
    assert {k: t[k] for k in ("func", "memory_space", "space_id", "space_name",
                              "bound_words")} == {
        "func": "gather_rows", "memory_space": "201", "space_id": 201,
        "space_name": "tile_spmem", "bound_words": 131071}
    assert [(p["index"], p["arg"], p["stack_peak_words"], p["verdict"]) for p in t["passes"]] \
        == [(0, "cse", 70064, "fits"), (1, "mem2reg", 70064, "fits"),
            (2, "canonicalize", 140000, "allocator-limited"),
            (3, "cse", 140000, "allocator-limited")]
    assert set(t["passes"][0]) >= {"index", "pass", "arg", "file", "chunk",
                                   "stack_peak_words", "liveness_peak_words",
                                   "packed_peak_words", "verdict"}
    crossing = t["first_crossing"]
    assert (crossing["index"], crossing["pass"], crossing["arg"],
            crossing["delta_stack_words"]) == (2, "CanonicalizerPass", "canonicalize", 69936)
    assert sorted((c["kind"], c["name"], c["words_before"], c["words_after"], c["delta_words"],
                   c["loc"]) for c in crossing["changes"]) == [
        ("moved", "%alloca", 70000, 70000, 0, "kernel.py:14:12"),
        ("removed", "%alloca", 64, None, -64, "kernel.py:11:10")]


def test_cli_exit_code_csv_and_filters():
    result = runner.invoke(app, ["passes", str(AFTER_ALL), "--bound", "201=200000",
                                 "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().split("\n")
    assert lines[0].startswith("stream,module,func,memory_space")
    assert len(lines) == 1 + 2 * 4  # two (func, space) timelines of four passes
    # A filter that matches nothing is a usage error (exit 2), as for every command.
    result = runner.invoke(app, ["passes", str(AFTER_ALL), "--func", "no_such_func"])
    assert result.exit_code == 2
    assert "no (func, memory space) of the dump matches --func no_such_func" in result.stderr
    _, out = passes_json(str(AFTER_ALL), "--chip", "v6e", "--space", "201")
    # v6e: 65535 words, already crossed by the first dump (70064): no earlier IR to diff.
    crossing = out["timelines"][0]["first_crossing"]
    assert (crossing["index"], crossing["delta_stack_words"], crossing["changes"]) == (
        0, None, [])


def test_cli_table_says_which_pass_and_what_it_changed():
    result = runner.invoke(app, ["passes", str(XLA_NAMED), "--space", "201"],
                           env={"COLUMNS": "120"})
    assert result.exit_code == 1
    text = result.stdout
    assert "first crosses the bound after pass #2 canonicalize" in text
    assert "never crosses; largest growth at pass #2 canonicalize" in text
    assert "kernel.py:14:12" in text and "removed" in text


def test_cli_unusable_input_exits_2(tmp_path):
    assert runner.invoke(app, ["passes", str(tmp_path / "absent")]).exit_code == 2
    empty = tmp_path / "empty.mlir"
    empty.write_text("")
    assert runner.invoke(app, ["passes", str(empty)]).exit_code == 2
    before_only = tmp_path / "before_only.mlir"
    before_only.write_text("// -----// IR Dump Before CSE (cse) //----- //\n" + kernel("k", 4))
    result = runner.invoke(app, ["passes", str(before_only)])
    assert result.exit_code == 2 and "only 'IR Dump Before' chunks" in result.stderr


def test_cli_html_report_has_the_figure_and_escapes_the_dump(tmp_path):
    path = tmp_path / "odd.mlir"
    path.write_text("// -----// IR Dump After Evil<script> (evil) //----- //\n"
                    + kernel("k", 10)
                    + "// -----// IR Dump After Grow (grow) //----- //\n" + kernel("k", 150000))
    report = tmp_path / "passes.html"
    result = runner.invoke(app, ["passes", str(path), "--html", str(report)])
    assert result.exit_code == 1
    html = report.read_text()
    assert "Evil&lt;script&gt;" in html and "Evil<script>" not in html
    assert html.count('src="data:image/png;base64,') == 1
    assert "First crosses the bound after pass #1 grow" in html
