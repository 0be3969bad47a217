"""Long runs show a progress bar on stderr, but only on a terminal and not with --quiet."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import FIXTURES

from sc_mlir.dump import load


def test_load_reports_progress_per_file():
    calls = []
    load(FIXTURES / "golden", progress=lambda done, total, path: calls.append((done, total)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


def run_with_terminal_stderr(*args: str) -> str:
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "sc_mlir.cli", *args],
                               stdout=subprocess.DEVNULL, stderr=terminal,
                               env={**os.environ, "COLUMNS": "100", "TERM": "xterm"})
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_and_quiet_turns_it_off():
    shown = run_with_terminal_stderr("allocas", str(FIXTURES / "golden"), "-f", "json")
    assert "reading" in shown
    quiet = run_with_terminal_stderr("allocas", str(FIXTURES / "golden"), "-f", "json", "-q")
    assert "reading" not in quiet


def test_no_progress_bar_when_stderr_is_not_a_terminal():
    result = subprocess.run([sys.executable, "-m", "sc_mlir.cli", "allocas",
                             str(FIXTURES / "golden"), "-f", "json"], capture_output=True,
                            text=True)
    assert "reading" not in result.stderr
