"""Which files are MLIR dumps: found by content, never by name.

`--xla_sc_dump_mlir_to` writes files whose names and layout are not documented, so a
directory is walked recursively and each regular file is sniffed. Binary files, MLIR
bytecode and text without MLIR in it are skipped with a note; symlinked directories are
not followed (no loops), FIFOs and devices are never opened.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sc_mlir.syntax.patterns import SSA_RESULTS

SNIFF_BYTES = 256 * 1024
_MLIR_SIGNAL = re.compile(
    rb"(?m)^[ \t]*(?:module\b|\"builtin\.module\"|func\.func\b|\"func\.func\"|"
    + SSA_RESULTS.encode() + rb"[ \t]*=|#[\w$.\-]+[ \t]*=|![\w$.\-]+[ \t]*=|// -----|"
    rb"\"?[a-z_][\w$]*+\.[\w$.]++\"?[^\n]*?\bloc\(|"
    # Any dialect's symbol op (`gpu.module @m {`), a generic op, or an alloca statement.
    rb"[a-z_][\w$]*+\.[\w$.]++[ \t]+@|\"[a-z_][\w$]*+\.[\w$.]++\"[ \t]*\(|"
    rb"memref\.alloca[ \t]*\()"
)
MLIR_BYTECODE_MAGIC = b"ML\xefR"
# A byte that `bytes.strip(b" \t\r\n")` keeps: found at once in a file that is not blank,
# where the strip copies the whole head (3 ms of dir300's discovery, before any worker).
_NOT_BLANK = re.compile(rb"[^ \t\r\n]")


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


def sniff(head: bytes) -> str | None:
    """None if `head` (the first bytes of a file) looks like MLIR text, else why not.

    >>> sniff(b"module {\\n}"), sniff(b"hello")
    (None, 'no MLIR found in its first 256 KiB')
    >>> sniff(b"ML\\xefR\\x00...")
    'MLIR bytecode, not text; print it with mlir-opt first'
    """
    if head.startswith(MLIR_BYTECODE_MAGIC):
        return "MLIR bytecode, not text; print it with mlir-opt first"
    if _NOT_BLANK.search(head) is None:
        return "empty file"
    # (A search for one NUL runs in memchr; counting them takes a hundred times longer.)
    nuls = head.count(b"\x00") if b"\x00" in head else 0
    # A dump damaged by a crash may hold a few NUL bytes: it is read, and the scanner
    # says where they are. More (an archive holding dumps, a zeroed block that took part
    # of the text with it) is not read as text: an archive's dumps would be counted
    # twice, and a block's lost allocas could turn a crossing into a fit.
    if nuls * 100 > len(head):
        return "binary file (NUL bytes)"
    if _MLIR_SIGNAL.search(head) is None and (
            b"\r" not in head or _MLIR_SIGNAL.search(head.replace(b"\r", b"\n")) is None):
        # (A lone CR ends a line for MLIR, not for `^`: a dump with lone-CR line ends
        # whose first line is a comment.)
        return "binary file (NUL bytes), no MLIR text in it" if nuls else \
            "no MLIR found in its first 256 KiB"
    return None


def _read_head(path: str) -> bytes:
    """The file's first SNIFF_BYTES (all of a smaller file)."""
    with open(path, "rb") as handle:
        # As many as the file holds first: a read of SNIFF_BYTES from a smaller file makes
        # room for them all, then gives back the rest (three times the time of reading it).
        # What a file that grew meanwhile holds past that is read next, as one read would.
        head = handle.read(min(os.fstat(handle.fileno()).st_size, SNIFF_BYTES))
        if len(head) < SNIFF_BYTES:
            more = handle.read(SNIFF_BYTES - len(head))
            if more:
                head += more
        return head


def discover(path: str | os.PathLike[str], on_head: Callable[[str, bytes], object] | None = None
             ) -> tuple[list[str], list[Skipped]]:
    """MLIR text files under `path` (a file or a directory), and what was skipped.
    `on_head(file, head)` is told the head read of each regular file (its first
    `SNIFF_BYTES`), whatever the file is found to be."""
    root = Path(path)
    found: list[str] = []
    skipped: list[Skipped] = []
    if not root.exists() and not root.is_symlink():
        raise FileNotFoundError(f"{path}: no such file or directory")
    candidates: list[str]
    if root.is_dir():
        candidates = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False,
                                                    onerror=lambda e: skipped.append(
                                                        Skipped(str(e.filename), _why(e)))):
            dirnames.sort()
            for name in sorted(filenames):
                candidates.append(os.path.join(dirpath, name))
    else:
        candidates = [str(root)]
    for candidate in candidates:
        reason = _check(candidate, on_head)
        if reason is None:
            found.append(candidate)
        else:
            skipped.append(Skipped(candidate, reason))
    return found, skipped


def _check(path: str, on_head: Callable[[str, bytes], object] | None = None) -> str | None:
    try:
        info = os.stat(path)
    except OSError as exc:
        return _why(exc)
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (FIFO, socket or device)"
    try:
        head = _read_head(path)
    except OSError as exc:
        return _why(exc)
    if on_head is not None:
        on_head(path, head)
    reason = sniff(head)
    if reason is not None and len(head) == SNIFF_BYTES and _ONLY_COMMENTS.fullmatch(head):
        try:
            return _sniff_past_comments(path)
        except OSError as exc:
            return _why(exc)
    return reason


# Comment lines and blank ones (a CR ends a line, and a `//` comment, as for MLIR), the
# last perhaps cut short by the end of the head.
_COMMENT_LINES = re.compile(rb"(?:[ \t\f]*(?://[^\n\r]*)?(?:\r\n?|\n))*")
_ONLY_COMMENTS = re.compile(_COMMENT_LINES.pattern + rb"[ \t\f]*(?://[^\n\r]*|/)?")
_LINE_END = re.compile(rb"[\r\n]")


def _sniff_past_comments(path: str) -> str | None:
    """`sniff` of the first SNIFF_BYTES after the comment lines a file starts with (a
    header longer than the sniffer's first look)."""
    with open(path, "rb") as handle:
        skipped = 0
        while True:
            handle.seek(skipped)
            chunk = handle.read(SNIFF_BYTES)
            lines = _COMMENT_LINES.match(chunk).end()  # type: ignore[union-attr]
            if _ONLY_COMMENTS.fullmatch(chunk, lines):  # and perhaps a line cut short
                if len(chunk) < SNIFF_BYTES:
                    return f"no MLIR found: only comments ({skipped + len(chunk):,} bytes)"
                if lines == 0:  # one comment line longer than a chunk: on to its end
                    end = _line_end_after(handle, skipped + len(chunk))
                    if end is None:
                        return f"no MLIR found: only comments ({handle.tell():,} bytes)"
                    lines = end - skipped
                skipped += lines
                continue
            skipped += lines
            handle.seek(skipped)
            reason = sniff(handle.read(SNIFF_BYTES))
            break
    if reason == "no MLIR found in its first 256 KiB":
        return f"no MLIR found in the 256 KiB after its {skipped:,} bytes of comments"
    return reason


def _line_end_after(handle: BinaryIO, offset: int) -> int | None:
    """The offset past the first CR or LF at or after `offset` (None: there is none)."""
    handle.seek(offset)
    while chunk := handle.read(SNIFF_BYTES):
        found = _LINE_END.search(chunk)
        if found is not None:
            return offset + found.end()
        offset += len(chunk)
    return None


def _why(exc: OSError) -> str:
    return f"cannot read: {exc.strerror or exc}"
