"""What a user sees: output that survives pipes and narrow terminals, options that say no,
a summary that leads with what matters, and help that shows how to start."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from terminal_run import run_on_terminal
from typer.testing import CliRunner

from sc_mlir.cli import app

runner = CliRunner()
SAMPLE = FIXTURES / "sample"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Read from the sample's text with plain regular expressions, not with sc-mlir's scanner.
ALLOCA_LINE = re.compile(r'(%[\w.]+) = "?memref\.alloca"?\(.*?: (?:\(\) -> )?(memref<.*>) loc\(')
FUNC_NAME = re.compile(r'func\.func @([\w.]+)\(|sym_name = "([\w.]+)"')


def sample_allocas() -> list[tuple[str, str]]:
    """(name, type) of every alloca of the sample, from its text."""
    found = []
    for path in sorted(SAMPLE.rglob("*.mlir")):
        found += ALLOCA_LINE.findall(path.read_text())
    return found


def sample_funcs() -> set[str]:
    names = set()
    for path in sorted(SAMPLE.rglob("*.mlir")):
        for pretty, generic in FUNC_NAME.findall(path.read_text()):
            names.add(pretty or generic)
    return names


def piped(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout and stderr to pipes, as `sc-mlir ... > out.txt` runs it."""
    return subprocess.run([sys.executable, "-m", "sc_mlir.cli", *args], capture_output=True,
                          text=True, timeout=120,
                          env={**os.environ, "COLUMNS": str(columns), "LINES": "40"})


def on_terminal(*args: str, columns: int) -> str:
    """The CLI with stdout and stderr on a pseudo-terminal `columns` wide (colours off)."""
    return ANSI.sub("", run_on_terminal(*args, columns=columns)).replace("\r", "")


def test_the_sample_has_what_these_tests_look_for():
    allocas = sample_allocas()
    assert len(allocas) == 15  # as README says: 15 allocas
    assert ("%232", "memref<23440xf32, 201>") in allocas
    assert ("%alloca", "memref<128x128xf32, #tpu.memory_space<vmem>>") in allocas
    assert {"sc_embedding_lookup_fwd", "sc_embedding_update", "tc_epilogue"} <= sample_funcs()


def test_piped_allocas_keep_every_name_and_type_whole_on_one_line():
    result = piped("allocas", str(SAMPLE))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name, type_text in sample_allocas():
        rows = [line for line in lines if re.search(rf"(?<![\w%]){re.escape(name)}(?![\w.])",
                                                    line)]
        assert rows, f"{name} is not on any line whole"
        assert any(type_text in row for row in rows), f"{name}'s {type_text} is cut"
    for func in sample_funcs():
        assert any(func in line for line in lines), f"func {func} is not on a line whole"
    assert max(len(line) for line in lines) > 80  # not wrapped at COLUMNS


def test_piped_analyze_gives_one_whole_line_per_row_that_grep_finds():
    result = piped("analyze", str(SAMPLE), "--all")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    # grep sc_embedding_lookup_fwd: its four (func, space) rows, each whole, with its file.
    rows = [line for line in lines if line.startswith(("allocator-limited", "unknown-bound"))
            and "sc_embedding_lookup_fwd" in line]
    assert len(rows) == 4
    assert all("sparse_core/module_0007.sc_embedding_lookup_fwd.mlir" in row for row in rows)
    for func in sample_funcs():
        assert any(re.search(rf"\b{func}\b", line) for line in lines)
    # The crossing's sentence names the alloca, its type and its place in one line.
    assert any("%232 (23,440 words, memref<23440xf32, 201>) is allocated at "
               "sparse_core/module_0007.sc_embedding_lookup_fwd.mlir:36:24" in line
               for line in lines)


def test_piped_diff_keeps_its_header_and_paths_whole():
    before, after = FIXTURES / "diff/limit_halved/before", FIXTURES / "diff/limit_halved/after"
    result = piped("diff", str(before), str(after))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(f"before: {before}  →  after: {after}" in line for line in lines)
    assert any("after vs bound" in line for line in lines)
    assert not any("…" in line for line in lines)


@pytest.mark.parametrize("columns", [60, 80])
def test_a_narrow_terminal_wraps_between_cells_never_inside_a_name(columns):
    shown = on_terminal("allocas", str(SAMPLE), "-q", columns=columns)
    lines = shown.splitlines()
    assert all(len(line.rstrip()) <= columns for line in lines)
    for name, type_text in sample_allocas():
        assert any(type_text in line for line in lines), f"{type_text} is cut at {columns}"
        assert any(re.search(rf"(?<![\w%]){re.escape(name)}(?![\w.])", line) for line in lines)
    assert not any("…" in line for line in lines)


def test_explain_keeps_the_paths_of_its_closest_allocas_whole_on_a_terminal():
    shown = on_terminal("explain", str(FIXTURES / "logs/another_run.log"), "--dump",
                        str(SAMPLE), "-q", columns=80)
    assert any("sparse_core/module_0007.sc_embedding_lookup_fwd.mlir:36" in line
               for line in shown.splitlines())
    assert all(len(line.rstrip()) <= 80 for line in shown.splitlines())


def test_a_wide_terminal_keeps_the_tables():
    shown = on_terminal("allocas", str(SAMPLE), "-q", columns=160)
    assert "┃ line:col ┃ kind   ┃ name ┃" in shown


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "80"})


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


SPACES_OF_SAMPLE = "0 (smem), 201 (tile_spmem), 202 (spmem), 204 (sflag), vmem"


@pytest.mark.parametrize("command", ["analyze", "allocas"])
def test_an_unknown_space_is_refused_naming_the_spaces_found(command):
    message = one_line_error(invoke(command, str(SAMPLE), "--space", "bogus"))
    assert message == f"error: no memory space 'bogus' in the dump; it has: {SPACES_OF_SAMPLE}"


def test_a_space_the_dump_lacks_is_refused_too():
    message = one_line_error(invoke("analyze", str(SAMPLE), "--space", "hbm"))
    assert "no memory space 'hbm'" in message and SPACES_OF_SAMPLE in message


@pytest.mark.parametrize("command", ["analyze", "allocas"])
def test_a_func_pattern_that_matches_nothing_is_refused_naming_the_funcs(command):
    message = one_line_error(invoke(command, str(SAMPLE), "--func", "nomatch*"))
    assert message == ("error: no func matches 'nomatch*'; the dump has: "
                       "sc_embedding_lookup_fwd, sc_embedding_update, tc_epilogue")


def test_space_and_func_that_exist_still_select():
    result = invoke("analyze", str(SAMPLE), "--space", "tile_spmem", "--func", "sc_*", "--all")
    assert result.exit_code == 1
    assert "2 (func, memory space) pair(s)" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["analyze", str(SAMPLE), "--top", "-1"], "error: --top must be 0 (all) or a positive "
     "count, not -1"),
    (["analyze", str(SAMPLE), "--jobs", "0"], "error: --jobs must be 1 or more, not 0"),
    (["allocas", str(SAMPLE), "--jobs", "-3"], "error: --jobs must be 1 or more, not -3"),
    (["diff", str(SAMPLE), str(SAMPLE), "--top", "-5"], "error: --top must be 0 (all) or a "
     "positive count, not -5"),
    (["explain", str(FIXTURES / "logs/no_failure.log"), "--jobs", "0"],
     "error: --jobs must be 1 or more, not 0"),
])
def test_counts_below_their_minimum_are_refused(args, message):
    assert one_line_error(invoke(*args)) == message


def test_diff_refuses_a_space_neither_dump_has():
    before, after = FIXTURES / "diff/limit_halved/before", FIXTURES / "diff/limit_halved/after"
    message = one_line_error(invoke("diff", str(before), str(after), "--space", "vmem"))
    assert message == ("error: no memory space 'vmem' in either dump; they have: 0 (smem), "
                       "201 (tile_spmem), 202 (spmem), 204 (sflag)")


def test_a_bound_for_a_space_the_dump_lacks_is_a_warning_naming_its_spaces():
    result = invoke("analyze", str(SAMPLE), "--bound", "hbm=100", "--bound", "202=4096")
    assert result.exit_code == 1  # the run goes on
    assert result.stderr.count("warning:") == 1
    assert (f"warning: --bound hbm=100: the dump has no memory space 'hbm'; it has: "
            f"{SPACES_OF_SAMPLE}") in result.stderr


def test_version_and_short_help():
    from sc_mlir import __version__

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"sc-mlir {__version__}"
    for command in ([], ["analyze"], ["allocas"], ["explain"], ["diff"]):
        short = invoke(*command, "-h")
        assert short.exit_code == 0 and "Usage: " in short.stdout and "Example: " in short.stdout


@pytest.mark.parametrize("command", ["analyze", "allocas", "explain", "diff"])
def test_help_has_an_example_and_no_type_noise(command):
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "100"}).stdout
    assert f"Example: sc-mlir {command} " in text
    assert "<bool>" not in text and "<list[str]>" not in text
    assert "{" not in text.split("Usage:")[1].splitlines()[0]  # LOG, not {log}


def test_command_summaries_end_as_sentences():
    text = runner.invoke(app, ["--help"], env={"COLUMNS": "100"}).stdout
    for command in ("allocas", "analyze", "explain", "diff"):
        row = next(line for line in text.splitlines() if f"│ {command} " in line)
        assert row.rstrip(" │").endswith("."), row


# A dump with one (func, space) per verdict; sizes chosen so the percents are known:
# bound 131,071 words for 201; f_full: 120,000 words = 91.6%, f_half: 65,536 = 50.0%.
VERDICTS = """
func.func @f_half() {
  %a = memref.alloca() : memref<65536xf32, 201>
  return
}
func.func @f_over() {
  %a = memref.alloca() : memref<140000xf32, 201>
  "test.use"(%a) : (memref<140000xf32, 201>) -> ()
  return
}
func.func @f_small() {
  %a = memref.alloca() : memref<1000xf32, 201>
  %b = memref.alloca() : memref<64xf32, 202>
  %c = memref.alloca() : memref<7xf32, 204>
  return
}
func.func @f_limited() {
  %a = memref.alloca() : memref<100000xf32, 201>
  %b = memref.alloca() : memref<40000xf32, 201>
  return
}
func.func @f_full() {
  %a = memref.alloca() : memref<120000xf32, 201>
  return
}
"""


@pytest.fixture
def verdicts(tmp_path) -> Path:
    path = tmp_path / "verdicts.mlir"
    path.write_text(VERDICTS)
    return path


def summary_rows(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("every (func"))
    return [line.split() for line in lines[start + 2:]
            if line.split() and line.split()[0] in ("overflow", "allocator-limited", "fits",
                                                    "unknown-bound")]


def test_the_summary_is_worst_first_and_fits_by_percent_of_bound(verdicts):
    result = invoke("analyze", str(verdicts))
    assert result.exit_code == 1
    rows = summary_rows(result.stdout)
    assert [(r[0], r[1]) for r in rows] == [
        ("overflow", "f_over"), ("allocator-limited", "f_limited"), ("fits", "f_full"),
        ("fits", "f_half"), ("fits", "f_small")]
    # 140,000 / 131,071 = 106.81%; 120,000 / 131,071 = 91.55%; 65,536 / 131,071 = 50.00%;
    # 1,000 / 131,071 = 0.76%.
    assert [r[5] for r in rows] == ["106.8%", "106.8%", "91.6%", "50.0%", "0.8%"]
    # The unknown-bound rows are one line naming their spaces and the flag that helps.
    assert ("2 unknown-bound: 202 (spmem) in 1 func, 204 (sflag) in 1 func. Give a bound with "
            "--bound SPACE=WORDS (--chip gives TileSpmem and TensorCore VMEM); --all lists "
            "them.") in result.stdout
    assert (f"7 (func, memory space) pair(s) in {verdicts}: 1 overflow, 1 allocator-limited, "
            "3 fits, 2 unknown-bound") in result.stdout


def test_all_lists_the_unknown_bound_rows_last(verdicts):
    rows = summary_rows(invoke("analyze", str(verdicts), "--all").stdout)
    assert [(r[0], r[1], r[2]) for r in rows[-2:]] == [("unknown-bound", "f_small", "202"),
                                                       ("unknown-bound", "f_small", "204")]
    assert len(rows) == 7


def test_top_limits_the_summary_and_says_how_many_more(verdicts):
    out = invoke("analyze", str(verdicts), "--top", "2").stdout
    assert [r[1] for r in summary_rows(out)] == ["f_over", "f_limited"]
    assert "+3 more (use --top 0 for all)" in out
    everything = invoke("analyze", str(verdicts), "--top", "0").stdout
    assert len(summary_rows(everything)) == 5 and "more (use --top 0" not in everything


def test_without_a_terminal_the_summary_shows_a_screen_of_rows(tmp_path):
    from sc_mlir.render.analysis_terminal import ROWS_WITHOUT_TERMINAL

    funcs = ROWS_WITHOUT_TERMINAL + 7
    text = "".join(f"func.func @k{i}() {{\n  %a = memref.alloca() : memref<{i + 1}xf32, 201>\n"
                   "  return\n}\n" for i in range(funcs))
    path = tmp_path / "many.mlir"
    path.write_text(text)
    out = invoke("analyze", str(path)).stdout
    rows = summary_rows(out)
    assert len(rows) == ROWS_WITHOUT_TERMINAL
    assert rows[0][1] == f"k{funcs - 1}"  # the fullest first
    assert "+7 more (use --top 0 for all)" in out


def test_files_that_are_not_mlir_are_one_footer_line(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "kernel.mlir").write_text(VERDICTS)
    (dump / "flags.txt").write_text("--xla_sc_dump_mlir_to=/tmp/x\n")
    (dump / "empty.mlir").write_text("")
    result = invoke("analyze", str(dump))
    assert "2 file(s) without MLIR text were skipped (--verbose lists them)" in result.stderr
    assert "flags.txt" not in result.stderr
    verbose = invoke("analyze", str(dump), "--verbose")
    assert f"{dump / 'flags.txt'}: file skipped: no MLIR found" in verbose.stderr
    assert f"{dump / 'empty.mlir'}: file skipped: empty file" in verbose.stderr


def test_the_api_refuses_a_directory_without_mlir_as_the_cli_does(tmp_path):
    import sc_mlir

    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(sc_mlir.NoMLIRFound, match=r"no MLIR text found in .*empty "
                       r"\(no files in it\)"):
        sc_mlir.load(empty)
    assert one_line_error(invoke("analyze", str(empty))) == (
        f"error: no MLIR text found in {empty}")
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "flags.txt").write_text("--xla_flag=1\n")
    with pytest.raises(sc_mlir.NoMLIRFound) as caught:
        sc_mlir.load(junk)
    assert str(caught.value) == (f"no MLIR text found in {junk} (flags.txt: file skipped: no "
                                 "MLIR found in its first 256 KiB)")
    assert [d.file for d in caught.value.diagnostics] == [str(junk / "flags.txt")]
    result = invoke("analyze", str(junk))
    assert result.exit_code == 2
    assert f"{junk / 'flags.txt'}: file skipped: no MLIR found" in result.stderr
