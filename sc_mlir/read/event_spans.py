"""A large file read by the fast reader one span of top-level ops at a time: what a file's
analysis needs never requires the whole file in memory at once.

The file must have the shape this reader knows: alias definitions and comments, one module
whose opening line is the first op, its top-level ops, the module's closing line, then the
`#loc` table. Each span (whole top-level ops, about `SPAN_BYTES`; it ends where a func
starts) is read by the fast reader as a text of its own: the prefix and the module's
opening line, the span, the module's closing line. The `#loc` table is checked and indexed
once and shared by every span. Line numbers are the file's; program points count from the
start of the span's text (they are compared only within a func, and a span holds its funcs
whole). A span the fast reader declines (`Unvouched`) ends the reading: the caller then
reads the file whole.

The file is read with `os.pread`, never mapped: a map faults when its file is cut short
meanwhile (SIGBUS, which ends the process), and dumps are rewritten by compiles that run
again. A file whose size or modification time changes between spans, or that gives fewer
bytes than asked, is read whole instead (by `read`, which sees what is there then).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from sc_mlir.read.event_regions import Unvouched
from sc_mlir.read.events import (
    _PLAIN_BYTES,
    _Reader,
    consecutive_numbers,
    table_start,
    table_text_end,
    trailing_table,
)
from sc_mlir.read.loc_table import LocationTable, TableGone, TableKey
from sc_mlir.read.parts import _FUNC_START
from sc_mlir.read.progress import BytesRead
from sc_mlir.read.records import FileScan, OpFrame, ScanSettings

if TYPE_CHECKING:  # a type only: reading in one process never loads multiprocessing
    from multiprocessing.context import BaseContext

SPAN_BYTES = 2 << 20
# Smaller files are read whole (`load` reads in spans only what `work` consumes).
MIN_FILE_BYTES = 2 * SPAN_BYTES
# The prefix is read again with every span: a file whose module starts later is read whole.
MAX_HEAD_BYTES = 1 << 20
# The file's end is searched backwards for its last `}` this much at a time.
_BLOCK = 8 << 20
# Read past a span's end to find where the next func starts (doubled for larger funcs).
_LOOKAHEAD = 256 << 10
_MODULE_OPEN = re.compile(rb'[ \t]*+(?:module\b|"builtin\.module"\(\) \()[^\n]*\{\n')
_MODULE_CLOSE = re.compile(rb"[ \t]*+\}")
# A guessed table's names, at a line's start (`_guessed_table`).
_TABLE_NAME = re.compile(rb"#loc((?:0|[1-9][0-9]{0,17})?) = ")


class Span(NamedTuple):
    """Where a span is in its file: bytes [start, end), after `lines_before` lines."""

    start: int
    end: int
    lines_before: int


class SpanReader:
    """`with SpanReader(path, settings) as reader: if reader.open(): for span, text in
    reader.spans(): scan = reader.read_span(span, text)`; `lines` is the file's once every
    span is given."""

    def __init__(self, path: str, settings: ScanSettings, on_bytes: BytesRead | None = None,
                 span_bytes: int | None = None, guess_table: bool = False) -> None:
        self.path = path
        # With `guess_table`, `open` takes the `#loc` table for one numbered line by line
        # from its first number to its last, and `check_table` checks it later: a process that
        # shares the spans out starts its workers meanwhile (the check takes 0.15 s on a
        # 50 MB dump). Until it is checked: the table's bytes, the aliases before it, and
        # where the module's close ends if the guess is right.
        self.guess_table = guess_table
        self._unchecked: tuple[bytes, Mapping[str, str], int] | None = None
        self.settings = settings
        self.on_bytes = on_bytes
        self.span_bytes = span_bytes or SPAN_BYTES
        self.reported = 0  # bytes told to on_bytes (taken back by `take_back`)
        self.lines = 0
        self._handle: BinaryIO | None = None
        # The last span given, and its lines once `read_span` has counted them.
        self._counted: tuple[bytes | None, int | None] = (None, None)

    def __enter__(self) -> SpanReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close_file()

    def close_file(self) -> None:
        if self._handle is not None:
            self._handle.close()

    def open(self) -> bool:
        """Whether the file has the shape read by spans (the table is checked here)."""
        self._handle = open(self.path, "rb")  # closed by __exit__
        self._stat = self._state()
        size = self._stat[0]
        if size == 0:
            return False
        head = self._read(0, min(size, MAX_HEAD_BYTES))
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
        # The tail: the line of the file's last `}` (the module's end) and the table after
        # it, which no `}` is in. Held in memory: the table is looked up while spans are
        # read (a memory map of it would end the process if the file were cut meanwhile).
        self.close_start = self._last_brace_line(size)
        if self.close_start <= len(self.head):
            return False
        tail = self._read(self.close_start, size - self.close_start)
        # What the whole-file reader checks of these bytes, which no span holds. (A
        # two-byte search costs ten times a one-byte one: made only when there is a `\`.)
        if tail.translate(None, _PLAIN_BYTES) or (b"\\" in tail and (
                b'\\"' in tail or b"\\\\" in tail)):
            return False
        try:
            _, prefix = _Reader(self.head, self.path, self.settings)._prefix()
            before = prefix.chunks[-1].aliases
            guessed = _guessed_table(tail, before) if self.guess_table else None
            if guessed is None:
                close_end, self.table = trailing_table(tail, 0, before)
            else:
                close_end, self.table = guessed
                self._unchecked = (tail, before, close_end)
        except (Unvouched, UnicodeDecodeError):
            return False
        close = tail[:close_end]
        if close.count(b"\n") > 1 or not _MODULE_CLOSE.match(close):
            return False
        self.close = close if close.endswith(b"\n") else close + b"\n"
        self.tail_lines = tail.count(b"\n") + (0 if tail.endswith(b"\n") else 1)
        self._report(len(self.head))
        return True

    def check_table(self) -> bool:
        """Whether the table `open` guessed is the one `trailing_table` reads in the file
        (True when `open` checked it itself). Raises Unvouched (or what `open` would have
        raised) when the file is not to be read in spans at all."""
        if self._unchecked is None:
            return True
        tail, before, guessed_end = self._unchecked
        self._unchecked = None
        try:
            close_end, table = trailing_table(tail, 0, before)
        except UnicodeDecodeError:
            raise Unvouched("a location table this reader does not read") from None
        return (close_end == guessed_end and isinstance(table, LocationTable)
                and isinstance(self.table, LocationTable) and self.table.same_as(table))

    def spans(self) -> Iterator[tuple[Span, bytes]]:
        """Where each span is, with its bytes; `lines` is the file's once they are all
        given. Raises Unvouched when the file changes meanwhile."""
        position = len(self.head)
        lines_before = self.head_lines
        while position < self.close_start:
            if self._state() != self._stat:
                raise Unvouched("the file changed while it was read")
            text = self._span_at(position)
            # Its lines are counted by `read_span` when it reads these bytes (as it reads
            # them): a count of their own, a pass over the span, only when it does not.
            self._counted = (text, None)
            yield Span(position, position + len(text), lines_before), text
            counted, text_lines = self._counted
            if counted is not text or text_lines is None:
                text_lines = text.count(b"\n")
            lines_before += text_lines
            position += len(text)
        self.lines = lines_before + self.tail_lines

    def read_span(self, span: Span, text: bytes | None = None) -> FileScan:
        """One span's `FileScan` (its bytes read here unless given), with the file's line
        numbers and `#loc` table. Raises Unvouched (or `SyntaxProblem`) for a span the fast
        reader declines, or a file that is no longer the one opened."""
        if text is None:
            if self._state() != self._stat:
                raise Unvouched("the file changed while it was read")
            text = self._read(span.start, span.end - span.start)
        shift = span.lines_before - self.head_lines
        reader = _Reader(self.head + text + self.close, self.path, self.settings,
                         alloca_line_shift=(self.head_lines, shift))
        scan = reader.read()
        if self._counted[0] is text:  # for `spans`: the span's lines, less the head's and
            self._counted = (text, reader.lines - self.head_lines - 1)  # the close's
        if reader.top_ops != 1:  # it closes the module and opens another
            raise Unvouched("a span outside the module the file opens with")
        for chunk in scan.chunks:
            chunk.aliases = self.table  # type: ignore[assignment]  # read-only
        _shift_frame_lines(reader.made_frames, self.head_lines, shift)
        return scan

    @property
    def state(self) -> tuple[int, int]:
        """The file's size and modification time when it was opened."""
        return self._stat

    def unchanged(self) -> bool:
        """Whether the file's size and modification time are still those it was opened with."""
        return self._state() == self._stat

    def _read_tail(self, position: int, size: int) -> bytes:
        """Bytes of the file's tail (the module's end and the `#loc` table), by their
        position in it."""
        return self._read(self.close_start + position, size)

    def _span_at(self, position: int) -> bytes:
        """Whole top-level ops from `position`: about `span_bytes`, up to where a func
        starts (or the module's end)."""
        if position + self.span_bytes >= self.close_start:
            return self._read(position, self.close_start - position)
        window = self.span_bytes + _LOOKAHEAD
        while True:
            size = min(window, self.close_start - position)
            block = self._read(position, size)
            found = _FUNC_START.search(block, self.span_bytes)
            if found is not None:
                return block[: found.start() + 1]
            if position + size >= self.close_start:
                return block
            window *= 2  # a func larger than the span

    def _last_brace_line(self, size: int) -> int:
        """Where the line holding the file's last `}` starts (0 when there is none),
        searched backwards a block at a time."""
        end = size
        while end > 0:
            start = max(0, end - _BLOCK)
            at = self._read(start, end - start).rfind(b"}")
            if at >= 0:
                return self._line_start(start + at)
            end = start
        return 0

    def _line_start(self, offset: int) -> int:
        end = offset
        while end > 0:
            start = max(0, end - _LOOKAHEAD)
            newline = self._read(start, end - start).rfind(b"\n")
            if newline >= 0:
                return start + newline + 1
            end = start
        return 0

    def _read(self, offset: int, size: int) -> bytes:
        assert self._handle is not None
        data = os.pread(self._handle.fileno(), size, offset)
        if len(data) != size:
            raise Unvouched("the file changed while it was read")
        return data

    def _state(self) -> tuple[int, int]:
        assert self._handle is not None
        status = os.fstat(self._handle.fileno())
        return status.st_size, status.st_mtime_ns

    def _report(self, size: int) -> None:
        if self.on_bytes is not None and size:
            self.on_bytes(size)
            self.reported += size

    def take_back(self) -> None:
        """The bytes reported so far, taken back: the file is read again whole."""
        if self.on_bytes is not None and self.reported:
            self.on_bytes(-self.reported)
            self.reported = 0


class SpanClaims:
    """The spans of a file shared out between processes, each taken once: workers take
    them from the first on, the process that reads the answers from the last back. Two
    counters in shared memory (made before the workers start, which inherit them).

    Their lock is waited for `LOCK_WAIT` seconds at most: a worker killed while it holds
    it (the out-of-memory killer, or the pool ending its workers once one died) never
    lets it go. Past that, no span is left to take, and the spans nobody read have the
    file read again."""

    LOCK_WAIT = 10.0  # seconds; the lock is held for a few instructions

    def __init__(self, context: BaseContext, count: int) -> None:
        # The first and the last span left, and the bytes of the spans workers have read.
        self._ends = context.Array("q", [0, count - 1, 0])

    @contextmanager
    def _held(self) -> Iterator[bool]:
        """The lock, if it comes within LOCK_WAIT: whether it did. (Each item of the array
        takes the lock too, which is reentrant: read them only while it is held.)"""
        lock = self._ends.get_lock()
        held = lock.acquire(timeout=self.LOCK_WAIT)
        try:
            yield held
        finally:
            if held:
                lock.release()

    def from_the_first(self) -> int | None:
        """The first span left, now taken; None when none is left."""
        with self._held() as held:
            if not held or self._ends[0] > self._ends[1]:
                return None
            first = self._ends[0]
            self._ends[0] = first + 1
            return int(first)

    def from_the_last(self, lowest: int = 0) -> int | None:
        """The last span left if it is not below `lowest`, now taken; else None."""
        with self._held() as held:
            if not held or self._ends[0] > self._ends[1] or self._ends[1] < lowest:
                return None
            last = self._ends[1]
            self._ends[1] = last - 1
            return int(last)

    def stop(self) -> None:
        """No span is left to take."""
        with self._held() as held:
            if held:
                self._ends[0] = self._ends[1] + 1

    def read(self, nbytes: int) -> None:
        """A worker has read a span of `nbytes` (for the progress of the reading)."""
        with self._held() as held:
            if held:
                self._ends[2] += nbytes

    def bytes_read(self) -> int:
        """The bytes of the spans the workers have read so far (0 past a lost lock: the
        progress catches up at the end)."""
        with self._held() as held:
            return int(self._ends[2]) if held else 0


# Opened readers, by path, for the worker processes that read a file's spans: the reading
# process puts its own here before it forks its workers, so that they start with the
# file's head and `#loc` table read and checked; a worker started otherwise (by a fork
# server, or before the file was opened) opens the file itself, once.
_OPEN: dict[str, SpanReader] = {}


@contextmanager
def shared(reader: SpanReader) -> Iterator[None]:
    """While in the block, workers forked from this process find `reader` open, and records
    made by any worker that reads the file name its `#loc` table rather than carry it: the
    block must last until their answers are all in."""
    _OPEN[reader.path] = reader
    table = reader.table
    try:
        with (shared_table(table, (reader.path, *reader.state))
              if isinstance(table, LocationTable) else nullcontext()):
            yield
    finally:
        if _OPEN.get(reader.path) is reader:
            del _OPEN[reader.path]


def reader_for(path: str, settings: ScanSettings, state: tuple[int, int]
               ) -> SpanReader | None:
    """An opened reader of `path`, whose size and modification time are still `state`;
    None when the file is no longer what it was, or not read in spans."""
    reader = _OPEN.get(path)
    if reader is not None and reader.settings == settings and reader.state == state:
        if isinstance(reader.table, LocationTable) and not reader.table.reads_from_file:
            # (Forked with the table in memory, this process would count it again.)
            reader.table.read_from_file(reader._read_tail)
            reader._unchecked = None  # a guessed table: the reading process checks it
        return reader if reader.unchanged() else None
    for other in _OPEN.values():  # one file at a time: its table may be large
        other.close_file()
    _OPEN.clear()
    reader = SpanReader(path, settings)
    try:
        opened = reader.open() and reader.state == state
    except Exception:  # unreadable now, or cut short (Unvouched)
        opened = False
    if not opened:
        reader.close_file()
        return None
    if isinstance(reader.table, LocationTable):
        name_table(reader.table, (path, *state))
        reader.table.read_from_file(reader._read_tail)
    _OPEN[path] = reader
    return reader


# Tables of files whose spans worker processes read, by key: a worker's answers name the
# table rather than carry it (each span's answer would carry the whole table, 15 MB for a
# 50 MB dump), and the process that reads them, which holds the same table, puts it back.
_SHARED: dict[TableKey, LocationTable] = {}
# Tables read again from their files, for names `_SHARED` does not hold (one at a time).
_READ_AGAIN: dict[TableKey, LocationTable] = {}


@contextmanager
def shared_table(table: LocationTable, key: TableKey) -> Iterator[None]:
    """In the block, `table` goes between processes as `key`, which comes back as `table`
    in this process and in a process forked from it; `name_table` names a worker's own
    copy alike."""
    name_table(table, key)
    _SHARED[key] = table
    try:
        yield
    finally:
        if _SHARED.get(key) is table:
            del _SHARED[key]
        table._key = None


def name_table(table: LocationTable, key: TableKey) -> None:
    """From now on `table`, sent to another process by multiprocessing, goes as `key` (a
    worker's copy of a table `shared_table` shares in the process it answers; a process
    that does not share it reads it again from the file, unchanged since). Pickled or
    copied otherwise, it goes whole: a work may keep or copy its records."""
    from multiprocessing.reduction import ForkingPickler  # only where workers run

    ForkingPickler.register(LocationTable, _reduce_between_processes)
    table._key = key


def _reduce_between_processes(table: LocationTable) -> tuple[object, tuple[object, ...]]:
    if table._key is not None:  # the process it goes to holds it (`shared_table`)
        return (_shared_table, (table._key,))
    return table.__reduce__()


def _shared_table(key: TableKey) -> LocationTable:
    table = _SHARED.get(key)
    if table is None:
        table = _READ_AGAIN.get(key)
    if table is None:
        # Sent by a work through a channel of its own (a multiprocessing queue) to a
        # process that does not share the table: read from the file again, which must be
        # the one the records were read from.
        with SpanReader(key[0], ScanSettings()) as reader:
            try:
                opened = reader.open() and (key[0], *reader.state) == key
            except Exception:
                opened = False
            if not opened or not isinstance(reader.table, LocationTable):
                raise TableGone(f"the #loc table of {key[0]}: the file changed since its "
                                "records were read")
            table = reader.table
        _READ_AGAIN.clear()  # one at a time: a table may be large
        _READ_AGAIN[key] = table
    return table


def _guessed_table(tail: bytes, before: Mapping[str, str]
                   ) -> tuple[int, LocationTable] | None:
    """Where the table starts, and the table, as `trailing_table` finds them in `tail` if
    its lines are numbered one by one from its first number to its last (after `#loc`,
    number -1, if it comes first: MLIR's printer numbers `#loc`, `#loc1`, `#loc2`...),
    found without reading them; None when there is no table, or its first lines or its
    last are not as such a table's are."""
    start = table_start(tail, 0)
    if start is None:
        return None
    end = table_text_end(tail, start)
    first = _TABLE_NAME.match(tail, start)
    if end is None or first is None:
        return None
    # The last line's number says how many lines there are: the lines are not counted.
    last = _TABLE_NAME.match(tail, tail.rfind(b"\n", start, end - 1) + 1)
    if last is None or not last[1]:
        return None
    stop = int(last[1]) + 1
    bare = not first[1]
    if bare:
        first = _TABLE_NAME.match(tail, tail.find(b"\n", start) + 1)
        if first is None or not first[1]:
            return None
    numbers = consecutive_numbers(int(first[1]), stop, bare)
    return start, LocationTable(tail, start, end, numbers, before)


def _shift_frame_lines(frames: list[OpFrame], after: int, shift: int) -> None:
    """The frames' lines past `after` (the span's, read as a text of its own) moved to the
    file's (the reader gives the allocas' moved already: `_Reader.alloca_line_shift`).
    `frames` are all the reader made, those the scan holds among them."""
    if not shift:
        return
    for frame in frames:
        if frame.line > after:
            frame.line += shift
        if frame.end_line > after:
            frame.end_line += shift
        if frame.entry_block is not None and frame.entry_block[0] > after:
            line, col, text = frame.entry_block
            frame.entry_block = (line + shift, col, text)
