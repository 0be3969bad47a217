"""sc-mlir never writes over the user's files, and a reader that stops early (`| head`)
does not change what the exit code means."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from sc_mlir.cli import app

runner = CliRunner()

DUMP = """\
module {
  func.func @k() {
    %0 = memref.alloca() : memref<64xf32, 201>
    return
  }
}
"""


def _dump(tmp_path: Path) -> Path:
    directory = tmp_path / "dump"
    directory.mkdir()
    (directory / "module.mlir").write_text(DUMP)
    return directory


def test_html_onto_the_dump_itself_is_refused_and_the_dump_kept(tmp_path):
    dump_file = _dump(tmp_path) / "module.mlir"
    result = runner.invoke(app, ["analyze", str(dump_file), "--html", str(dump_file), "-q"])
    assert result.exit_code == 2
    assert "is the input" in result.output
    assert dump_file.read_text() == DUMP


def test_html_inside_an_analysed_directory_is_refused(tmp_path):
    directory = _dump(tmp_path)
    target = directory / "sub" / "report.html"
    result = runner.invoke(app, ["analyze", str(directory), "--html", str(target), "-q"])
    assert result.exit_code == 2 and "inside the input" in result.output
    assert not target.exists()
    # Even an existing file in there, with --force: it is the user's data.
    other = directory / "notes.txt"
    other.write_text("mine")
    result = runner.invoke(app, ["analyze", str(directory), "--html", str(other), "--force"])
    assert result.exit_code == 2 and other.read_text() == "mine"


def test_diff_html_onto_either_input_is_refused(tmp_path):
    directory = _dump(tmp_path)
    dump_file = directory / "module.mlir"
    result = runner.invoke(app, ["diff", str(dump_file), str(dump_file), "--html",
                                 str(dump_file), "-q"])
    assert result.exit_code == 2 and dump_file.read_text() == DUMP


def test_an_existing_file_is_replaced_only_if_it_is_our_report_or_with_force(tmp_path):
    directory = _dump(tmp_path)
    target = tmp_path / "report.html"
    target.write_text("someone's page")
    result = runner.invoke(app, ["analyze", str(directory), "--html", str(target), "-q"])
    assert result.exit_code == 2 and "not an sc-mlir report" in result.output
    assert target.read_text() == "someone's page"
    result = runner.invoke(app, ["analyze", str(directory), "--html", str(target), "-q",
                                 "--force"])
    assert result.exit_code == 0 and "sc-mlir analysis" in target.read_text()
    # Now it is a report of ours: the next run replaces it without --force.
    target.write_text(target.read_text().replace("module.mlir", "module.old"))
    result = runner.invoke(app, ["analyze", str(directory), "--html", str(target), "-q"])
    assert result.exit_code == 0 and "module.old" not in target.read_text()


def _many_funcs(tmp_path: Path, count: int) -> Path:
    funcs = "".join(f"  func.func @k{i}() {{\n    %0 = memref.alloca() : memref<64xf32, 201>\n"
                    "    return\n  }\n" for i in range(count))
    path = tmp_path / "many.mlir"
    path.write_text("module {\n" + funcs + "}\n")
    return path


def test_a_reader_that_stops_early_keeps_the_exit_code(tmp_path):
    # Far more output than a pipe buffers (64 KiB), and everything fits: exit code 0.
    path = _many_funcs(tmp_path, 3000)
    for fmt in ("table", "csv", "json"):
        process = subprocess.Popen(
            [sys.executable, "-m", "sc_mlir.cli", "analyze", str(path), "--format", fmt,
             "-q", "--jobs", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "COLUMNS": "200"})
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(100)
        process.stdout.close()  # as `head -c 100` does
        stderr = process.stderr.read().decode()
        process.stderr.close()
        code = process.wait(timeout=120)
        assert code == 0, (fmt, code, stderr[-2000:])
        assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
