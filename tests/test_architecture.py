"""The layer contracts of docs/ARCHITECTURE.md (`[tool.importlinter]` in pyproject.toml)
hold for the package as it is, and a forbidden import breaks them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("importlinter", reason="import-linter is in the `test` extra")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run the import-linter command line on the package under `root` (its own process:
    grimp reads the modules from disk, and the config names `sc_mlir` by import path)."""
    script = ("import sys; from importlinter.cli import lint_imports_command; "
              "sys.exit(lint_imports_command())")
    return subprocess.run([sys.executable, "-c", script, "--no-cache"], cwd=root,
                          env={"PYTHONPATH": str(root), "PATH": ""},
                          capture_output=True, text=True, timeout=300)


def test_every_contract_is_kept() -> None:
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "forbidden_import", "broken_contract"), [
    ("sc_mlir/read/discover.py", "import sc_mlir.model.bounds", "Layers import downward only"),
    ("sc_mlir/render/terminal.py", "import sc_mlir.read.scan",
     "Renderers work on results, never on files or syntax"),
    ("sc_mlir/analysis/stack.py", "import sc_mlir.render.plots",
     "Only the API layer and the CLI import render"),
    ("sc_mlir/api.py", "import sc_mlir.cli", "Nothing imports the CLI"),
])
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str,
                                                forbidden_import: str,
                                                broken_contract: str) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copytree(REPO / "sc_mlir", copy / "sc_mlir",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    target = copy / module
    target.write_text(target.read_text() + f"\n{forbidden_import}  # noqa\n")
    result = lint_imports(copy)
    assert result.returncode != 0, result.stdout
    assert f"{broken_contract} BROKEN" in result.stdout


# What `sc-mlir analyze --format json` must not load: the data-frame and graph libraries
# (asked for only by the notebook API), the layers other commands use, and the terminal
# renderers (JSON into a pipe draws nothing).
NOT_ON_THE_JSON_PATH = ("pandas", "networkx", "matplotlib", "sc_mlir.compare.diff",
                        "sc_mlir.compare.passes", "sc_mlir.compare.whatif",
                        "sc_mlir.failures.logs", "sc_mlir.failures.explain",
                        "multiprocessing", "concurrent.futures.process", "rich", "rich.progress",
                        "sc_mlir.render.terminal", "sc_mlir.render.html")


def test_analyze_as_json_loads_only_what_it_uses() -> None:
    script = ("import runpy, sys\n"
              f"sys.argv = ['sc-mlir', 'analyze', {str(REPO / 'fixtures' / 'sample')!r}, "
              "'--format', 'json', '--jobs', '1']\n"
              "from sc_mlir.cli import main\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              f"print(sorted(m for m in {NOT_ON_THE_JSON_PATH!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"
