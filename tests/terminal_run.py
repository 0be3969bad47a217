"""Run the `sc-mlir` command with its output on a pseudo-terminal, as a person sees it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios


def run_on_terminal(*args: str, columns: int, stdout_too: bool = True,
                    timeout: float = 120) -> str:
    """What the CLI writes to a terminal `columns` wide and 50 lines high: stderr always,
    stdout too unless `stdout_too` is False (then it goes nowhere). Raw text, escapes kept."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen([sys.executable, "-m", "sc_mlir.cli", *args],
                               stdout=terminal if stdout_too else subprocess.DEVNULL,
                               stderr=terminal, env={**os.environ, "COLUMNS": str(columns),
                                                     "LINES": "50", "TERM": "xterm"})
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:  # the other side closed: the process is done writing
            break
        if not data:
            break
        chunks.append(data)
    process.wait(timeout=timeout)
    os.close(controller)
    return b"".join(chunks).decode("utf-8", "replace")
