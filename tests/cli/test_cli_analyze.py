"""`sc-mlir analyze` as a user runs it: verdicts, the JSON contract, bounds and exit codes."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from sc_mlir.cli import app
from sc_mlir.read import jaxbridge

runner = CliRunner()
GOLDEN = FIXTURES / "golden"


def run(*args: str, columns: int = 120):
    return runner.invoke(app, list(args), env={"COLUMNS": str(columns)})


def analyze_json(*args: str) -> tuple[int, dict]:
    result = run("analyze", *args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("name", ["sc_vec_over_bound_nested.mlir",
                                  "sc_vec_over_bound_nested.generic.mlir"])
def test_the_real_over_bound_kernel_is_allocator_limited(mosaic, name):
    code, out = analyze_json(str(mosaic / name))
    assert code == 1
    [space] = [s for s in out["spaces"] if s["space_id"] == 201]
    assert space["verdict"] == "allocator-limited"
    assert space["bound_words"] == 131071 and space["stack_peak_words"] == 140704
    crossing = space["crossing"]
    assert crossing["words"] == 23440 and crossing["offset_upper_bound_words"] == 140704
    assert crossing["allocating_words"] == 23440
    assert crossing["loc"]["file"] == "pallas_kernels.py" and crossing["loc"]["line"] == 408
    # Each buffer is last used by the next scope's copy: at most two are live at once.
    assert space["liveness_peak_words"] == 2 * 23440
    assert space["liveness_peak_words"] < space["bound_words"] / 2


@pytest.mark.parametrize("name", ["sc_vec_siblings_under_bound.mlir",
                                  "sc_vec_siblings_under_bound.generic.mlir"])
def test_sibling_scopes_that_never_pass_the_bound_fit(mosaic, name):
    code, out = analyze_json(str(mosaic / name))
    assert code == 0
    assert [s["verdict"] for s in out["spaces"]] == ["fits", "unknown-bound"]
    assert out["spaces"][0]["stack_peak_words"] == 100000
    assert out["spaces"][1]["space_name"] == "sflag"  # its semaphores: no bound known


def test_json_contract_keys(mosaic):
    _, out = analyze_json(str(mosaic / "sc_vec_over_bound_nested.mlir"))
    assert {"spaces", "diagnostics", "skipped_allocas"} <= set(out)
    space = out["spaces"][0]
    assert {"file", "func", "memory_space", "space_id", "space_name", "bound_words",
            "stack_peak_words", "liveness_peak_words", "packed_peak_words", "verdict",
            "n_allocas", "crossing"} <= set(space)
    assert {"name", "words", "offset_upper_bound_words", "line", "col", "loc",
            "contributors"} <= set(space["crossing"])
    assert {"name", "words", "line"} <= set(space["crossing"]["contributors"][0])
    assert space["memory_space"] == "#tpu.memory_space<vmem>"


def test_every_alloca_is_listed_only_on_request():
    _, plain = analyze_json(str(FIXTURES / "sample"))
    assert "allocations" not in plain
    _, full = analyze_json(str(FIXTURES / "sample"), "--allocations")
    assert len(full["allocations"]) == sum(s["n_allocas"] for s in full["spaces"])
    assert {"name", "words", "offset", "upper_bound", "live_start", "live_end",
            "line", "col"} <= set(full["allocations"][0])


def test_the_table_leads_with_the_worst_and_names_the_crossing():
    result = run("analyze", "--example")
    assert result.exit_code == 1
    out = result.stdout
    assert out.index("allocator-limited") < out.index("fits")
    assert "140,704" in out and "131,071" in out and "%232" in out
    assert "model/embedding.py:89:12" in out
    assert "when allocating 23440 words" in out


def test_exit_0_when_everything_fits_or_the_bound_is_unknown():
    assert run("analyze", "--example", "--func", "sc_embedding_update").exit_code == 0
    assert run("analyze", "--example", "--space", "spmem").exit_code == 0


def test_exit_2_for_unusable_input_and_bad_options(tmp_path):
    assert run("analyze", str(tmp_path / "missing")).exit_code == 2
    assert run("analyze", "--example", "--bound", "201").exit_code == 2
    assert run("analyze", "--example", "--bound", "201=lots").exit_code == 2
    assert run("analyze", "--example", "--chip", "v9").exit_code == 2
    assert run("analyze").exit_code == 2


def test_bound_option_by_id_or_name_and_chip():
    _, out = analyze_json("--example", "--func", "sc_embedding_lookup_fwd", "--space", "201",
                          "--bound", "tile_spmem=200000")
    assert out["spaces"][0]["verdict"] == "fits"
    assert out["spaces"][0]["bound_source"] == "--bound"
    _, out = analyze_json("--example", "--func", "sc_embedding_update", "--chip", "v6e")
    assert out["spaces"][0]["bound_words"] == 65535
    assert out["spaces"][0]["bound_source"].startswith("chip v6e: SparseCore vmem_capacity")
    assert "tpu_info.py" in out["spaces"][0]["bound_source"]
    # v6e's 65535 words still hold the 46880 live words: reuse would fit there too.
    _, out = analyze_json("--example", "--func", "sc_embedding_lookup_fwd", "--space", "201",
                          "--chip", "v6e")
    assert out["spaces"][0]["verdict"] == "allocator-limited"
    _, out = analyze_json("--example", "--space", "vmem", "--bound", "vmem=1000")
    assert out["spaces"][0]["verdict"] == "overflow"
    assert out["spaces"][0]["must_free_words"] == 24


def test_alignment_option_is_reported_and_used():
    _, out = analyze_json(str(GOLDEN / "nested_scopes.mlir"), "--align", "201=64")
    space = out["spaces"][0]
    assert space["alignment_bytes"] == 64 and space["alignment_source"] == "--align"
    # 16-word alignment: %a 0..100, %b at 112..312, %c at 320..620.
    assert space["stack_peak_words"] == 620


@pytest.mark.parametrize("value", ["3", "6", "12", "0", "-4"])
def test_an_alignment_that_is_not_a_power_of_two_is_refused(tmp_path, monkeypatch, value):
    # Before: 3 bytes was taken as one word and 6 as two, silently.
    refused = run("analyze", "--example", "--align", f"201={value}")
    assert refused.exit_code == 2 and "alignment for 201" in refused.output
    assert ("must be positive" if int(value) <= 0 else f"power of two (bytes), not {value}"
            ) in refused.output
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc-mlir.toml").write_text(f"[align]\n201 = {value}\n")
    from_config = run("analyze", "--example")
    assert from_config.exit_code == 2 and "(config " in from_config.output


def test_alignments_from_python_are_whole_numbers_of_bytes():
    from sc_mlir.model.bounds import Bounds
    assert Bounds.default().with_alignments({"201": 64.0}, "api").align_bytes["201"] == (64, "api")
    for value in (True, 6.5, "64"):
        with pytest.raises(ValueError, match="must be a whole number of bytes"):
            Bounds.default().with_alignments({"201": value}, "api")


def test_config_file_in_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc-mlir.toml").write_text('chip = "v6e"\n[bounds]\nspmem = 1000\n'
                                           '[align]\n202 = 64\n')
    _, out = analyze_json(str(FIXTURES / "sample"), "--space", "202")
    assert out["spaces"][0]["bound_words"] == 1000
    assert out["spaces"][0]["bound_source"].startswith("config")
    _, out = analyze_json(str(FIXTURES / "sample"), "--func", "sc_embedding_update")
    assert out["spaces"][0]["bound_words"] == 65535
    # The command line wins over the file.
    _, out = analyze_json(str(FIXTURES / "sample"), "--space", "202", "--bound", "202=7")
    assert out["spaces"][0]["bound_words"] == 7


def test_config_in_pyproject_and_space_overrides(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sc-mlir]\n[tool.sc-mlir.spaces]\n"#tpu.memory_space<vmem>" = "tile_spmem"\n')
    _, out = analyze_json(str(FIXTURES / "sample"), "--func", "tc_epilogue")
    assert out["spaces"][0]["space_id"] == 201


def test_a_broken_config_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc-mlir.toml").write_text("[bounds]\n201 = 'many'\n")
    assert run("analyze", "--example").exit_code == 2


def test_csv_has_one_row_per_func_and_space():
    lines = run("analyze", "--example", "-f", "csv").stdout.splitlines()
    assert lines[0].startswith("file,chunk,module,func,dump_header,memory_space,space_id")
    assert len(lines) == 1 + 6


def test_top_limits_the_contributors_listed():
    out = run("analyze", "--example", "--top", "2").stdout
    assert "+5 more" in out


def test_an_empty_run_once_list_extends_every_nested_use(tmp_path, monkeypatch, mosaic):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc-mlir.toml").write_text("run_once_ops = []\n")
    _, out = analyze_json(str(mosaic / "sc_vec_over_bound_nested.mlir"))
    # Every buffer is then live to the end of the region holding its last use: all six
    # at once (the 64-word buffer is only used directly, before the nest begins).
    assert out["spaces"][0]["liveness_peak_words"] == 6 * 23440
    assert out["spaces"][0]["verdict"] == "overflow"


def test_scope_ops_from_the_config_replace_the_list(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sc-mlir.toml").write_text('scope_ops = ["func.func"]\n')
    _, out = analyze_json(str(GOLDEN / "nested_scopes.mlir"))
    # No tpu.region pops any more: 100 + 200 + 300 + 50 + 10.
    assert out["spaces"][0]["stack_peak_words"] == 660


def _copy_fixture(tmp_path, name):
    path = tmp_path / name
    for source in (FIXTURES / name).rglob("*"):
        if source.is_file():
            target = path / source.relative_to(FIXTURES / name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    (path / "zz_binary.mlir").write_bytes(b"\x00\x01 not text")  # a note in both outputs
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(("name", "options", "select"), [
    ("passes", [], ((), ())),
    ("pallas", ["--group-by", "source"], ((), ())),
    ("golden", ["--space", "201", "--func", "s*"], (("201",), ("s*",))),
    ("sample", ["--bound", "201=20000"], ((), ())),
    pytest.param("lowered", [], ((), ()), marks=pytest.mark.skipif(
        not jaxbridge.available(), reason="a lowered program's kernels are read with jax")),
])
def test_json_made_by_the_workers_is_the_library_analysis(tmp_path, jobs, name, options,
                                                          select):
    """Without --allocations, each worker makes its files' JSON and only that comes back:
    the output must be the library's, byte for byte, exit code included."""
    from sc_mlir.analysis import analyze
    from sc_mlir.formats.analysis_json import analysis_object
    from sc_mlir.formats.records import to_json
    from sc_mlir.model.dump import load

    path = _copy_fixture(tmp_path, name)
    result = run("analyze", str(path), "--format", "json", "--jobs", jobs, *options)
    # The command's other path (--allocations: records and reports come back to this
    # process), the allocations left out.
    whole = run("analyze", str(path), "--format", "json", "--jobs", jobs, "--allocations",
                *options)
    assert "--allocations" not in result.stdout and whole.exit_code == result.exit_code
    expected = json.loads(whole.stdout)
    del expected["allocations"]
    assert result.stdout == to_json(expected)
    assert json.loads(result.stdout)["diagnostics"]
    if "--bound" not in options:  # the library's bounds are then the command's
        by = "source" if "--group-by" in options else None
        analysis = analyze(load(path)).select(*select)
        assert result.stdout == to_json(analysis_object(analysis, str(path), False, by))
        assert result.exit_code == (1 if analysis.has_crossing else 0)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(("name", "options"), [
    ("passes", []),
    ("golden", ["--space", "201", "--func", "s*", "--all"]),
    ("sample", ["--bound", "201=20000", "--top", "0"]),
    ("pallas", ["--top", "2"]),
    ("pallas", ["--group-by", "source", "--top", "1"]),
    ("sample", ["--group-by", "name", "--bound", "201=20000"]),
])
def test_table_and_csv_made_from_outlines_are_the_whole_reports(tmp_path, monkeypatch, jobs,
                                                                 name, options):
    """Without --html or --allocations, the table and the CSV are made from what the
    workers send back (outlines; the whole report only of a crossing; with --group-by,
    each roll-up's rows): byte for byte what the whole reports give (--html,
    --allocations: the records and reports come back to this process), exit code and
    notes included."""
    from sc_mlir.cli import analyze as command

    made_from_outlines: list[str] = []
    if jobs == "1":  # the work is done here: see that it is the outlines'
        outline = command.outline_for_output

        def spy(bounds, by, output, records):
            made_from_outlines.append(output.value)
            return outline(bounds, by, output, records)

        monkeypatch.setattr(command, "outline_for_output", spy)
    path = _copy_fixture(tmp_path, name)
    html = tmp_path / "r.html"
    for form, whole_option in (("table", ["--html", str(html)]), ("csv", ["--allocations"])):
        made_from_outlines.clear()
        made = run("analyze", str(path), "--jobs", jobs, "--format", form, *options)
        if jobs == "1":
            assert made_from_outlines and set(made_from_outlines) == {form}
        whole = run("analyze", str(path), "--jobs", jobs, "--format", form, *whole_option,
                    *options)
        assert made.exit_code == whole.exit_code and made.exit_code in (0, 1)
        assert made.stdout == whole.stdout and made.stdout.count("\n") > 2
        assert made.stderr == whole.stderr.replace(f"HTML report written to {html}\n", "")
    table = run("analyze", str(path), "--jobs", jobs, *options)
    assert "skipped" in table.stderr
    if name in ("sample", "pallas"):
        assert "The scoped stack reaches" in table.stdout  # a crossing explained
    if "--group-by" in options:
        assert "who holds the scratch" in table.stdout


def test_an_outline_has_the_numbers_of_its_report():
    """Each field of `ReportOutline` is its report's attribute of the same name (every value
    made distinct, so that two fields swapped would show)."""
    import dataclasses

    from sc_mlir.analysis import ReportOutline, analyze
    from sc_mlir.model.dump import load

    analysis = analyze(load(FIXTURES / "sample"), bounds={"201": 20000})
    crossing = next(r for r in analysis.reports if r.crossing is not None)
    report = dataclasses.replace(crossing, chunk=7, liveness_peak_words=111_111,
                                 packed_peak_words=222_222, stack_peak_words=333_333,
                                 bound_words=444_444, dump_header="after-pass",
                                 unsized=crossing.unsized or (crossing.allocas[0].record,))
    numbers = [report.chunk, report.liveness_peak_words, report.packed_peak_words,
               report.stack_peak_words, report.bound_words, report.n_allocas, report.n_unsized]
    assert len(set(numbers)) == len(numbers)
    for keep in (False, True):
        outline = ReportOutline.of(report, keep_crossing=keep)
        for f in dataclasses.fields(ReportOutline):
            expected = getattr(report, f.name) if f.name != "crossing_report" or keep else None
            assert getattr(outline, f.name) == expected, f.name


def test_an_outline_comes_back_from_a_worker_whole():
    """Outlines pickle as their constructor's arguments: every field comes back in its
    place, the crossing report too (values made distinct, so that two fields swapped would
    show)."""
    import dataclasses
    import pickle

    from sc_mlir.analysis import ReportOutline, analyze
    from sc_mlir.model.dump import load

    analysis = analyze(load(FIXTURES / "sample"), bounds={"201": 20000})
    crossing = next(r for r in analysis.reports if r.crossing is not None)
    report = dataclasses.replace(crossing, chunk=7, liveness_peak_words=111_111,
                                 packed_peak_words=222_222, stack_peak_words=333_333,
                                 bound_words=444_444, dump_header="after-pass")
    for keep in (False, True):
        outline = ReportOutline.of(report, keep_crossing=keep)
        back = pickle.loads(pickle.dumps(outline, protocol=pickle.HIGHEST_PROTOCOL))
        assert type(back) is ReportOutline
        for f in dataclasses.fields(ReportOutline):
            if f.name == "crossing_report":  # its entries compare by identity
                kept = back.crossing_report
                assert kept is None if not keep else kept.stack_peak_words == 333_333
                continue
            assert getattr(back, f.name) == getattr(outline, f.name), f.name


def test_outlines_without_their_crossing_are_not_rendered_as_a_table():
    """An outline made for JSON or CSV does not keep its crossing: the table refuses it
    rather than leave the crossing unexplained."""
    import io

    from rich.console import Console

    from sc_mlir.analysis import ReportOutline, analyze
    from sc_mlir.model.dump import load
    from sc_mlir.render.analysis_terminal import print_analysis

    reports = analyze(load(FIXTURES / "sample"), bounds={"201": 20000}).reports
    console = Console(file=io.StringIO())
    print_analysis(console, [ReportOutline.of(r, keep_crossing=True) for r in reports], "")
    with pytest.raises(ValueError, match="keep_crossing"):
        print_analysis(console, [ReportOutline.of(r) for r in reports], "")


def test_json_selection_checks_see_every_file():
    result = run("analyze", str(FIXTURES / "passes"), "--format", "json", "--jobs", "2",
                 "--space", "999")
    assert result.exit_code == 2
    assert "no memory space '999'" in result.output and "201" in result.output
    result = run("analyze", str(FIXTURES / "passes"), "--format", "json", "--jobs", "2",
                 "--func", "nothing_*")
    assert result.exit_code == 2 and "no func matches" in result.output


def test_the_facets_read_in_c_are_the_records_facets():
    """`distinct_facets` reads each record's facet through its objects, in C."""
    from sc_mlir.cli.analyze import distinct_facets
    from sc_mlir.cli.inputs import facets_of
    from sc_mlir.model.dump import load

    records = load(FIXTURES).records
    assert len(facets_of(records)) > 5
    assert distinct_facets(records) == facets_of(records)
    assert distinct_facets([]) == set()


# Facets found in heap records alone (a func, and a space of another func) and in one space
# written two ways (the same group, two space objects).
HEAP_FACETS = """\
func.func @k() attributes {tpu.core_type = #tpu.core_type<sc_vector_subcore>} {
  %a = memref.alloca() : memref<64xf32, 201>
  %b = memref.alloca() : memref<64xf32, #tpu.memory_space<vmem>>
  %h = memref.alloc() : memref<1024xf32, 203>
  "test.use"(%a, %b, %h) : (memref<64xf32, 201>, memref<64xf32, #tpu.memory_space<vmem>>, memref<1024xf32, 203>) -> ()
  return
}
func.func @only_heap() {
  %h = memref.alloc() : memref<16xf32, 201>
  "test.use"(%h) : (memref<16xf32, 201>) -> ()
  return
}
"""


def test_a_files_representatives_have_its_facets(tmp_path):
    """The records `reports_of_file` picks while grouping say what all the records say per
    func and space (the facets `analyze` checks its selection against), among them those
    of heap records and of a space written two ways; its reports are those it makes
    without picking them."""
    from sc_mlir.analysis import ReportOutline, reports_of_file
    from sc_mlir.cli.analyze import distinct_facets
    from sc_mlir.cli.inputs import facets_of
    from sc_mlir.model.allocation import Allocation
    from sc_mlir.model.bounds import Bounds
    from sc_mlir.model.dump import load

    path = tmp_path / "k.mlir"
    path.write_text(HEAP_FACETS)
    heap = load(path).records
    assert {r.func for r in heap if r.kind == "heap"} - {r.func for r in heap if r.kind != "heap"}
    assert len({r.memory_space for r in heap if r.space_id == 201 and r.func == "k"}) == 2
    bounds = Bounds.default()
    for records in (load(FIXTURES).records, heap):
        representatives: list[Allocation] = []
        reports = reports_of_file(bounds, records, representatives)
        assert len(representatives) < len(records) or records is heap
        assert {id(r) for r in representatives} <= {id(r) for r in records}
        assert distinct_facets(representatives) == facets_of(records)
        assert list(map(ReportOutline.of, reports)) == list(
            map(ReportOutline.of, reports_of_file(bounds, records)))


BRACKETED = """module {
  func.func @"k[b]x"() {
    %0 = memref.alloca() : memref<100000xf32, 201> loc(#loc1)
    %1 = memref.alloca() : memref<50000xf32, 201> loc(#loc2)
    "test.use"(%0, %1) : (memref<100000xf32, 201>, memref<50000xf32, 201>) -> ()
    return
  }
}
#loc1 = loc("a[b]c.py":3:4)
#loc2 = loc("name[red]x"("f[i]le.py":5:6))
"""


@pytest.mark.parametrize("options", [[], ["--group-by", "source"], ["--group-by", "name"]])
def test_brackets_in_names_and_paths_print_as_written(tmp_path, options):
    # rich reads `[b]` in a str as markup (bold) and drops it: every text from the dump
    # must reach the table as written, in the crossing's sentences, its table, the summary
    # and the roll-ups alike.
    dump = tmp_path / "m.mlir"
    dump.write_text(BRACKETED)
    result = run("analyze", str(dump), *options)
    assert result.exit_code == 1  # 150,000 words in 201: over the built-in bound
    out = result.output
    assert "func k[b]x " in out and "  k[b]x  " in out
    assert "from f[i]le.py:5:6  (name[red]x)." in out
    assert "a[b]c.py:3:4 " in out and "f[i]le.py:5:6  (name[red]x) " in out
    if options == ["--group-by", "source"]:
        assert "a[b]c.py:3 " in out and "f[i]le.py:5 " in out
    if options == ["--group-by", "name"]:
        assert "name[red]x " in out
