"""The installed package is self-contained and the README's commands are the CI's."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from conftest import REPO


def test_installed_cli_runs_the_sample_from_another_directory(tmp_path):
    code = ("import json, sc_mlir, sc_mlir.syntax.parse as s, sc_mlir.model.dump as d; "
            "print(json.dumps([sc_mlir.__file__, str(s.grammar_dir()), d.example_path()]))")
    where = json.loads(subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True,
                                      capture_output=True, text=True).stdout)
    package_file, grammar, example = where
    if str(REPO) not in package_file:  # a real (non-editable) install: all of it ships inside
        assert grammar.startswith(package_file.rsplit("/", 1)[0])
        assert example.startswith(package_file.rsplit("/", 1)[0])
    result = subprocess.run([sys.executable, "-m", "sc_mlir.cli", "allocas", "--example",
                             "-f", "json"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 15


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S)


def test_ci_runs_exactly_the_readme_test_command():
    blocks = readme_commands()
    test_block = next(b for b in blocks if "pytest" in b)
    ci = (REPO / ".ci" / "run").read_text()
    for line in test_block.strip().splitlines():
        assert line.strip() in ci, line


def test_grammar_files_are_where_the_design_says():
    assert sorted(p.name for p in (REPO / "grammar").glob("*.lark")) == [
        "alloca.lark", "location.lark", "memref_type.lark"] or \
        {"alloca.lark", "location.lark", "memref_type.lark"} <= {
            p.name for p in (REPO / "grammar").glob("*.lark")}


def test_ruff_is_clean():
    """The project's lint rules (pyproject.toml) hold for the package, tests and bench."""
    found = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise",
                            "sc_mlir", "tests", "bench"], cwd=REPO, capture_output=True, text=True)
    if "No module named ruff" in found.stderr:
        import pytest

        pytest.skip("ruff is not installed (it comes with the 'test' extra)")
    assert found.returncode == 0, found.stdout
