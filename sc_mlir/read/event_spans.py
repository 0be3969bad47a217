"""A large file read by the fast reader one span of top-level ops at a time, from a memory
map: what a file's analysis needs never requires the whole file in memory at once.

The file must have the shape this reader knows: alias definitions and comments, one module
whose opening line is the first op, its top-level ops, the module's closing line, then the
`#loc` table. Each span (whole top-level ops, about `SPAN_BYTES`; it ends where a func
starts) is read by the fast reader as a text of its own: the prefix and the module's
opening line, the span, the module's closing line. The `#loc` table is checked and indexed
once and shared by every span. Line numbers are the file's; program points count from the
start of the span's text (they are compared only within a func, and a span holds its funcs
whole). A span the fast reader declines (`Unvouched`) ends the reading: the caller then
reads the file whole.

A memory map faults if its file is cut short while mapped (SIGBUS, which ends the process):
the file's size and modification time are checked before each span, and a file that
changed is read whole (by `read`, which sees what is there). What is left is the moment
between a check and the span's copy, and the `#loc` lookups made after the last span.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator
from types import TracebackType
from typing import BinaryIO

from sc_mlir.read.event_regions import Unvouched
from sc_mlir.read.events import _PLAIN_BYTES, _Reader, trailing_table
from sc_mlir.read.parts import _FUNC_START
from sc_mlir.read.progress import BytesRead
from sc_mlir.read.records import FileScan, OpFrame, ScanSettings

SPAN_BYTES = 2 << 20
# Smaller files are read whole (`load` reads in spans only what `work` consumes).
MIN_FILE_BYTES = 2 * SPAN_BYTES
# The prefix is read again with every span: a file whose module starts later is read whole.
MAX_HEAD_BYTES = 1 << 20
# How much of the file is checked at a time outside the spans (the table's bytes).
_BLOCK = 16 << 20
_MODULE_OPEN = re.compile(rb'[ \t]*+(?:module\b|"builtin\.module"\(\) \()[^\n]*\{\n')
_MODULE_CLOSE = re.compile(rb"[ \t]*+\}")


class SpanReader:
    """`with SpanReader(path, settings) as reader: if reader.open(): for scan in
    reader.scans(): ...`; `lines` and `ops` are the file's once every span is read."""

    def __init__(self, path: str, settings: ScanSettings, on_bytes: BytesRead | None = None,
                 span_bytes: int | None = None) -> None:
        self.path = path
        self.settings = settings
        self.on_bytes = on_bytes
        self.span_bytes = span_bytes or SPAN_BYTES
        self.reported = 0  # bytes told to on_bytes (taken back by `take_back`)
        self.lines = 0
        self.ops = 0
        self._handle: BinaryIO | None = None
        self._map: mmap.mmap | None = None

    def __enter__(self) -> SpanReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        # The map is left open: the `#loc` table (in the records' locations) reads from it,
        # and it is unmapped when the last of them goes.
        self._map = None
        if self._handle is not None:
            self._handle.close()

    def open(self) -> bool:
        """Whether the file has the shape read by spans (the table is checked here)."""
        self._handle = open(self.path, "rb")  # closed by __exit__
        self._stat = self._state()
        if self._stat[0] == 0:
            return False
        data = self._map = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ)
        head = data[:MAX_HEAD_BYTES]
        start = 0
        while True:  # alias definitions, comments and blank lines, then the module
            line_end = head.find(b"\n", start)
            if line_end < 0:
                return False
            first = head[start:line_end].lstrip()[:2]
            if first[:1] not in (b"#", b"!", b"") and first != b"//":
                break
            start = line_end + 1
        if not _MODULE_OPEN.fullmatch(head, start, line_end + 1):
            return False
        self.head = head[: line_end + 1]
        self.head_lines = self.head.count(b"\n")
        try:
            _, prefix = _Reader(self.head, self.path, self.settings)._prefix()
            body_end, self.table = trailing_table(
                data, len(self.head), prefix.chunks[-1].aliases,
                lambda start, end: _drop(data, start, end))
        except (Unvouched, UnicodeDecodeError):
            return False
        self.close_start = data.rfind(b"\n", 0, body_end - 1) + 1
        close = data[self.close_start : body_end]
        if self.close_start <= len(self.head) or not _MODULE_CLOSE.match(close):
            return False
        self.close = close if close.endswith(b"\n") else close + b"\n"
        # What the whole-file reader checks of the table's bytes, which no span holds; and
        # the lines from the module's end on.
        self.tail_lines = 0 if data[-1:] == b"\n" else 1
        for block in range(self.close_start, len(data), _BLOCK):
            tail = data[block : block + _BLOCK + 1]
            if tail.translate(None, _PLAIN_BYTES) or b'\\"' in tail or b"\\\\" in tail:
                return False
            self.tail_lines += tail.count(b"\n", 0, _BLOCK)
        _drop(data, 0, len(data))  # the table's pages: each lookup faults a few back in
        return True

    def scans(self) -> Iterator[FileScan]:
        """Each span's `FileScan`, its `#loc` aliases the file's table. Raises Unvouched
        (or `SyntaxProblem`) for a span the fast reader declines."""
        data = self._map
        assert data is not None
        position = len(self.head)
        lines_before = self.head_lines
        self.ops = 1  # the module
        while position < self.close_start:
            end = self.close_start
            if position + self.span_bytes < end:
                found = _FUNC_START.search(data, position + self.span_bytes, end)
                if found is not None:
                    end = found.start() + 1
            if self._state() != self._stat:
                raise Unvouched("the file changed while it was read")
            span = data[position:end]
            reader = _Reader(self.head + span + self.close, self.path, self.settings)
            scan = reader.read()
            if reader.top_ops != 1:  # it closes the module and opens another
                raise Unvouched("a span outside the module the file opens with")
            for chunk in scan.chunks:
                chunk.aliases = self.table  # type: ignore[assignment]  # read-only
            _shift_lines(scan, self.head_lines, lines_before - self.head_lines)
            self.ops += scan.ops - 1
            lines_before += span.count(b"\n")
            if self.on_bytes is not None:
                self.on_bytes(end - position)
                self.reported += end - position
            _drop(data, position, end)
            position = end
            yield scan
        self.lines = lines_before + self.tail_lines

    def _state(self) -> tuple[int, int]:
        assert self._handle is not None
        status = os.fstat(self._handle.fileno())
        return status.st_size, status.st_mtime_ns

    def take_back(self) -> None:
        """The bytes reported so far, taken back: the file is read again whole."""
        if self.on_bytes is not None and self.reported:
            self.on_bytes(-self.reported)
            self.reported = 0


def _shift_lines(scan: FileScan, after: int, shift: int) -> None:
    """Lines past `after` (the span's, read as a text of its own) moved to the file's."""
    if not shift:
        return
    frames: dict[int, OpFrame] = {}
    for alloca in scan.allocas:
        alloca.line += shift
        if alloca.live_end_line > after:
            alloca.live_end_line += shift
        for frame in alloca.frames:
            frames[id(frame)] = frame
    for frame in scan.funcs:
        for outer in frame.ancestors():
            frames[id(outer)] = outer
    for frame in frames.values():
        if frame.line > after:
            frame.line += shift
        if frame.end_line > after:
            frame.end_line += shift
        if frame.entry_block is not None and frame.entry_block[0] > after:
            line, col, text = frame.entry_block
            frame.entry_block = (line + shift, col, text)


def _drop(data: mmap.mmap, start: int, end: int) -> None:
    """Give back the map's pages in [start, end): read, they would count in the process's
    memory until it ends."""
    page = mmap.PAGESIZE
    first = -(-start // page) * page
    last = end // page * page
    if last > first and hasattr(data, "madvise"):
        data.madvise(mmap.MADV_DONTNEED, first, last - first)

