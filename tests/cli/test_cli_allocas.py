"""`sc-mlir allocas` as a user runs it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from sc_mlir.cli import app

runner = CliRunner()


def run(*args: str, columns: int = 80):
    return runner.invoke(app, list(args), env={"COLUMNS": str(columns)})


def test_issue_example_lists_seven_allocas_with_sources(mosaic):
    result = run("allocas", str(mosaic / "sc_vec_over_bound_nested.generic.mlir"),
                 "--format", "json")
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    rows = [r for r in entries if r["kind"] == "alloca"]
    assert [(r["element_type"], r["words"], r["space_id"]) for r in rows] == [
        ("i32", 64, 201)] + [("f32", 23440, 201)] * 6
    assert all(r["loc_file"] == "pallas_kernels.py" for r in rows)
    assert [r["loc_line"] for r in rows] == [413] + [408] * 6
    assert rows[0]["shape"] == [64] and rows[0]["line"] == 7
    # The file's seven `tpu.sem_alloc` ops (grep -c) are listed too, one word each (assumed).
    semaphores = [r for r in entries if r["kind"] == "semaphore"]
    assert [(r["words"], r["space_id"], r["size_assumed"]) for r in semaphores] == [
        (1, 204, True)] * 7
    assert len(entries) == 14


def test_json_keys_are_the_table_columns():
    from sc_mlir.model.dump import ALLOCATION_COLUMNS

    rows = json.loads(run("allocas", "--example", "-f", "json").stdout)
    assert rows and all(list(r) == list(ALLOCATION_COLUMNS) for r in rows)


def test_dynamic_dims_are_null_in_json():
    rows = json.loads(run("allocas", "--example", "-f", "json", "--func", "sc_embedding_update"
                          ).stdout)
    dynamic = [r for r in rows if None in r["shape"]]
    assert dynamic and dynamic[0]["shape"] == [None] and dynamic[0]["resolved_shape"] == [512]


def test_filters_by_space_id_name_and_func():
    by_id = json.loads(run("allocas", "--example", "-f", "json", "--space", "202").stdout)
    assert [r["name"] for r in by_id] == ["%203"]
    by_name = json.loads(run("allocas", "--example", "-f", "json", "--space", "sflag").stdout)
    assert [r["name"] for r in by_name] == ["%205"]
    tc = json.loads(run("allocas", "--example", "-f", "json", "--space", "vmem").stdout)
    assert [r["func"] for r in tc] == ["tc_epilogue"]
    funcs = json.loads(run("allocas", "--example", "-f", "json", "--func", "sc_*_update").stdout)
    assert {r["func"] for r in funcs} == {"sc_embedding_update"}


def test_csv_has_a_header_and_one_line_per_alloca():
    out = run("allocas", "--example", "-f", "csv").stdout.splitlines()
    assert out[0].startswith("file,chunk,module,func,kind,name,scratch_index,line,col")
    assert len(out) == 1 + 15


def test_table_names_the_source_lines():
    result = run("allocas", "--example", columns=200)
    assert result.exit_code == 0
    assert "model/embedding.py:89:12" in result.stdout
    assert "sc_embedding_lookup_fwd" in result.stdout and "23,440" in result.stdout


def test_missing_path_and_non_mlir_input_exit_2(tmp_path):
    assert run("allocas", str(tmp_path / "nope")).exit_code == 2
    (tmp_path / "notes.txt").write_text("just some words\n")
    result = run("allocas", str(tmp_path))
    assert result.exit_code == 2
    assert "no MLIR" in result.stderr


def test_a_directory_mixing_dumps_and_other_files(tmp_path, mosaic):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "kernel.txt").write_text((mosaic / "sc_vec_basic.mlir").read_text())
    (tmp_path / "log.bin").write_bytes(b"\x00\x01binary")
    result = run("allocas", str(tmp_path), "-f", "json")
    assert result.exit_code == 0
    # sc_vec_basic: one alloca, one scratch operand (scratch_operands = 1: %arg4), and three
    # `tpu.sem_alloc` ops (grep -c).
    kinds = sorted(r["kind"] for r in json.loads(result.stdout))
    assert kinds == ["alloca", "scratch_operand", "semaphore", "semaphore", "semaphore"]
    # One footer line counts the files that are not MLIR; --verbose names each and why.
    assert "1 file(s) without MLIR text were skipped (--verbose lists them)" in result.stderr
    assert "log.bin" not in result.stderr
    verbose = run("allocas", str(tmp_path), "-f", "json", "--verbose")
    assert f"{tmp_path / 'log.bin'}: file skipped: binary file" in verbose.stderr
