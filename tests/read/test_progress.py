"""Long runs show a progress bar on stderr, but only on a terminal and not with --quiet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from terminal_run import run_on_terminal

from sc_mlir.model.dump import load


def test_load_reports_progress_in_bytes_per_file():
    calls = []
    load(FIXTURES / "golden", progress=lambda done, total, path: calls.append((done, total)))
    sizes = [path.stat().st_size for path in sorted((FIXTURES / "golden").iterdir())]
    # Each file adds its size once it is read (the files are smaller than a block).
    running = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    assert sorted({done for done, _ in calls}) == running
    assert all(total == sum(sizes) for _, total in calls)
    assert calls[-1] == (sum(sizes), sum(sizes))


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory) -> Path:
    """A 9 MB dump: over two scanner blocks, and large enough to be split between cores."""
    body = "".join(f"    %c{j} = arith.constant {j} : i32\n" for j in range(40))
    func = ("  func.func @kernel_{i}(%arg0: i32) {{\n"
            "    %a = memref.alloca() : memref<64xf32, 201>\n"
            + body.replace("{", "{{").replace("}", "}}") +
            "    %b = memref.alloca() : memref<{words}xi32, 202>\n"
            "    return\n"
            "  }}\n")
    path = tmp_path_factory.mktemp("big") / "big.mlir"
    with path.open("w") as handle:
        handle.write("module {\n")
        i = 0
        while handle.tell() < 9 * 2**20:
            handle.write(func.format(i=i, words=i % 997 + 1))
            i += 1
        handle.write("}\n")
    return path


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_large_file_reports_its_bytes_as_they_are_scanned(big_dump, jobs):
    from sc_mlir.read.parts import plan_parts

    if jobs > 1:  # split: a worker scans a part and adds its bytes to the shared count
        assert len(plan_parts(str(big_dump), jobs)[1]) == jobs
    calls: list[tuple[int, int]] = []
    dump = load(big_dump, jobs=jobs,
                progress=lambda done, total, path: calls.append((done, total)))
    size = os.path.getsize(big_dump)
    assert len(dump.records) == 2 * (big_dump.read_text().count("func.func"))
    assert all(total == size for _, total in calls)
    dones = [done for done, _ in calls]
    assert dones == sorted(dones) and calls[-1] == (size, size)
    # Bytes while the file is read, not one jump at the end.
    partial = {done for done in dones if 0 < done < size}
    assert len(partial) >= 2, calls


def run_with_terminal_stderr(*args: str) -> str:
    return run_on_terminal(*args, columns=100, stdout_too=False, timeout=60)


def test_progress_bar_on_a_terminal_and_quiet_turns_it_off():
    shown = run_with_terminal_stderr("allocas", str(FIXTURES / "golden"), "-f", "json")
    assert "reading" in shown
    quiet = run_with_terminal_stderr("allocas", str(FIXTURES / "golden"), "-f", "json", "-q")
    assert "reading" not in quiet


def test_the_bar_counts_bytes_with_rate_and_time_left(big_dump):
    shown = run_with_terminal_stderr("allocas", str(big_dump), "-f", "json", "-j", "1")
    assert re.search(r"\d+(\.\d)?/9\.\d MB", shown), shown[-500:]  # done / total
    assert re.search(r"\d+(\.\d)? [kM]B/s", shown)  # the rate
    assert re.search(r"\d:\d\d:\d\d", shown)  # the time left


def test_no_progress_bar_when_stderr_is_not_a_terminal():
    result = subprocess.run([sys.executable, "-m", "sc_mlir.cli", "allocas",
                             str(FIXTURES / "golden"), "-f", "json"], capture_output=True,
                            text=True)
    assert "reading" not in result.stderr
