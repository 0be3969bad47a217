"""The fast reader: one file read as a buffer, with C-level searches surfacing only the
events the allocation analysis needs; Python runs per event, never per line.

Events: a `{` that ends a line (a region opens), a `}` that starts one (a region closes),
a block label, an allocation op, and, per func, the occurrences of the names derived from
its allocas (their uses: `sc_mlir.read.event_uses`). Program points are counted from line
numbers: in the text this reader vouches for, every line is an op, a region's closing line,
a block label, a whole-line comment or a blank line.

It vouches only for text whose shape it knows: printable ASCII, escapes in strings as MLIR
prints them (no `\\"`, no `\\\\`), no resources section, no comment after code, one op per
line with its brackets balanced, every `{` inside a line an attribute dict, single-block
regions, a trailing `#loc` table numbered in order (`sc_mlir.read.loc_table`). For anything
else `read_events` returns None and the careful line reader (`sc_mlir.read.scan.Scanner`)
reads the file, which is always the authority: where both read a file, they give the same
`FileScan` (tests/read/test_events.py holds them equal). The attribute and alias
definitions before the first op are read by the careful reader itself.
"""

from __future__ import annotations

import os
import re
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from functools import cache
from itertools import accumulate, pairwise, repeat
from typing import NamedTuple

from sc_mlir.read.allocas import _ALLOCA_NAMES, ALLOCATION_OPS
from sc_mlir.read.event_regions import Region, Unvouched
from sc_mlir.read.event_uses import _VALUE_NAME_BYTES, UseSearch
from sc_mlir.read.lexicon import (
    _BARE_OP,
    _CONTINUATION_WORDS,
    _DICT_ENTRY,
    _HEAD,
    _MAYBE_REGION_OPEN,
    _MID_OP,
    _results_of,
    outside_strings_and_dicts,
)
from sc_mlir.read.loc_table import LocationTable
from sc_mlir.read.progress import BytesRead
from sc_mlir.read.records import Chunk, FileScan, OpFrame, RawAlloca, ScanSettings
from sc_mlir.read.scan import Scanner
from sc_mlir.syntax.locations import AliasLoc, Location
from sc_mlir.syntax.parse import (
    AllocaBody,
    SyntaxProblem,
    parse_alloca,
    parse_alloca_body,
    parse_alloca_line,
    parse_common_location,
)

# The ops read as allocations are the careful reader's table, `allocas.ALLOCATION_OPS` (the
# pretty names; the generic form is the same name in quotes): both readers capture the same.
_ALLOCATION_OP_ALTERNATIVES = b"|".join(re.escape(n.encode()) for n in ALLOCATION_OPS)
_ALLOCATION_OP = re.compile(rb"(?:" + _ALLOCATION_OP_ALTERNATIVES + rb")(?![\w$.\-])")
# An allocation op alone on its line in its common shape: one result name, then the op
# (`_alloca` reads the rest of the line).
_SIMPLE_ALLOCA = re.compile(
    rb'[ \t]*(?P<result>%[\w$.\-]+) = (?P<op>(?P<quote>"?)(?:'
    + _ALLOCATION_OP_ALTERNATIVES
    + rb')(?P=quote))(?![\w$.\-])[^\n]*+\n')
_ALIAS_LOC = re.compile(rb" loc\((#[A-Za-z_0-9][\w$.\-]*)\)")
# The shapes most allocation ops have, a subset of `_SIMPLE_ALLOCA`'s read as `_alloca`
# reads them (an alias location, or one whose only string holds no bracket, `{`, `}`, `%`
# or backslash), by one match: 1 the op's text (from its result on), 2 the result, 3 the
# body (op name to location, `_alloca`'s key of `bodies`), 4 the location, 5 its alias
# (None for another location). The body must hold no string: a body read by `_alloca`
# holds none (a class of bytes matched one by one would cost more).
_COMMON_ALLOCA = re.compile(
    rb'[ \t]*+((%[\w$.\-]+) = ((?:"(?:' + _ALLOCATION_OP_ALTERNATIVES + rb')"|(?:'
    + _ALLOCATION_OP_ALTERNATIVES + rb'))(?![\w$.\-])[^\n]*)'
    rb' (loc\((?:(#[A-Za-z_0-9][\w$.\-]*)|"[^"\\\n{}%()]*"[^"\\\n()]*)\)))[ \t]*+\n')
# Searching for the alternation in `_ALLOCATION_OP` tries it at every byte; a literal every
# op name holds is found by a fast search, and each hit checked against the names it can
# belong to.
_NEEDLE = "alloc"
assert all(_NEEDLE in name for name in ALLOCATION_OPS)
_NEEDLE_AT = re.compile(re.escape(_NEEDLE.encode()))
_NEEDLE_OFFSETS = tuple(sorted({name.index(_NEEDLE) for name in ALLOCATION_OPS}))
# `_allocation_ops` as one search: a pattern that starts with the literal is searched for
# it, and what comes before it is looked at behind. Group 1 matches for the `memref.` ops
# (which start 7 bytes before the literal), group 2 for `tpu.sem_alloc` (8 bytes). (Searched
# from a line's start: behind it, a newline, which no op name holds.)
assert ALLOCATION_OPS == ("memref.alloca", "memref.alloc", "tpu.sem_alloc")
_ALLOCATION_OP_AT = re.compile(
    rb"alloc(?:(?<=memref\.alloc)(a?)|(?<=tpu\.sem_alloc)())(?![\w$.\-])")

# Bytes the reader vouches for: printable ASCII, tab and newline (CR, control bytes and
# UTF-8 go to the careful reader, which reports them and counts columns in characters).
_PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n"
_BRACKETS = b"()[]{}"
_CONTINUATION_ALTERNATIVES = b"|".join(w.encode() for w in sorted(_CONTINUATION_WORDS))
# What `read` keeps of the text: the brackets (counted), and a slash or backslash, whose
# absence spares a search of the text for `//` (a comment) and for an escape.
_KEPT = _BRACKETS + b"/\\"
_PLAIN_BUT_KEPT = bytes(b for b in _PLAIN_BYTES if b not in _KEPT)
_SPLIT_LINE = re.compile(rb"[ \t]*// -----")
# Whether there is a `//` at all, in a third of the time `bytes.count` takes to count none
# (a literal pattern's search skips along its first byte).
_DOUBLE_SLASH = re.compile(rb"//")
# What a line starts with, each kind a group: 2 `}` (the group: what follows it on its line,
# which the events loop reads), 3 a block label, 4 a comment, 5 nothing (a blank line); lines
# no op starts: 1 the line before ended inside its brackets or operand list, 6 a word that
# continues the op before, 7 anything an op cannot start with.
# A line that starts an op matches none, so most lines cost no match object (and one that
# starts with a value name or a quoted op name is given up at its first byte).
_LINE_START = re.compile(
    rb"\n(?:(?<=[(\[,]\n)()|[ \t]*+(?=[^%\"])(?:\}([^\n]*+)|(\^)|(//)|(?=\n)()|(?:"
    + _CONTINUATION_ALTERNATIVES
    + rb")(?![\w$.])()|(?![%\"A-Za-z_])()))"
)
_OPEN_LINE = 1
_OP_START = frozenset(bytes([c]) for c in
                      b'%"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_')
_CONTINUATION_WORD = re.compile(
    rb"[ \t]*+(?:" + _CONTINUATION_ALTERNATIVES
    + rb")(?![\w$.])"
)
_LOC_NAME = re.compile(rb"\n#loc(\d*) = ")
# One `#locN = loc(...)` line, its brackets balanced up to depth 4. The careful reader
# counts brackets inside strings too (and `->`, `>=`, `<=` as no brackets): a string may
# hold balanced `(...)` and `<...>` (`"jit(f)/fusion"`, `"f.<locals>.g"`) and no other
# bracket, and no `=` appears, nor `-` before a `>`.
_STRING_TEXT = rb'[^"\\\n()\[\]{}<>=]*+'
_STRING = (rb'"' + _STRING_TEXT + rb"(?:(?:\(" + _STRING_TEXT + rb"\)|<" + _STRING_TEXT
           + rb"(?<!-)>)" + _STRING_TEXT + rb')*+"')
_INNER = rb'(?:[^"()\[\]{}<>=\n]++|' + _STRING + rb")"
_BALANCED = _INNER + rb"*+"
for _ in range(4):
    _BALANCED = (rb"(?:" + _INNER + rb"|\(" + _BALANCED + rb"\)|\[" + _BALANCED
                 + rb"\]|<" + _BALANCED + rb"(?<!-)>)*+")
# The line shapes of almost every table (a file or a name, fused or a call site of aliases,
# unknown): each is text `_BALANCED` matches whole, so a line `_COMMON_LOC_LINE` matches
# is one `_loc_table()` takes (tests hold them equal). Found (not matched from a position),
# each match one line, its name's digits the group: a block's lines are all table lines
# when there are as many matches as newlines.
# (The string is matched once for both of its shapes: the name's child starts with a
# bracket, the file's line and column with none.)
_COMMON_LOC = (_STRING + rb'(?:\(#loc\d*+\)|[^"()\[\]{}<>=\n]*+)'
               rb"|fused\[#loc\d*+(?:, #loc\d*+)*+\]|callsite\(#loc\d*+ at #loc\d*+\)|unknown")
_COMMON_LOC_LINE = re.compile(rb"(?<=\n)#loc(\d*+) = loc\((?:" + _COMMON_LOC + rb")\)\n")
# Locations written inline rather than through aliases (`"run_scoped"("k.py":122:4 to :61)`,
# `callsite("f"("k.py":88:12) at "k.py":84:4)`, `fused["k.py":89:12, "shard"]`), as jax
# prints them: what `_BALANCED` takes, with `(` and `[` nested up to 3 deep and no `<`
# or `{` outside strings.
_SHALLOW = _INNER + rb"*+"
for _ in range(3):
    _SHALLOW = rb"(?:" + _INNER + rb"|\(" + _SHALLOW + rb"\)|\[" + _SHALLOW + rb"\])*+"


# Tried when a block holds lines `_COMMON_LOC_LINE` does not take: it spares a table of
# inline locations the balanced patterns, whose compiling (55 ms) was a third of
# `sc-mlir analyze --example`; compiled then (3 ms), not by every run.
@cache
def _inline_loc_line() -> re.Pattern[bytes]:
    """As `_COMMON_LOC_LINE`, and lines of inline locations too (each one `_loc_table()`
    takes)."""
    return re.compile(rb"(?<=\n)#loc(\d*+) = loc\((?:" + _COMMON_LOC + rb"|" + _SHALLOW
                      + rb")\)\n")


# The patterns holding `_BALANCED` take a fiftieth of a second each to compile: only when
# a table is not all common lines.
@cache
def _loc_table() -> re.Pattern[bytes]:
    return re.compile(rb"(?:#loc\d*+ = loc\(" + _BALANCED + rb"\)\n)*+")


@cache
def _loc_line() -> re.Pattern[bytes]:
    """As `_COMMON_LOC_LINE`, any line `_loc_table()` takes."""
    return re.compile(rb"(?<=\n)#loc(\d*+) = loc\((?:" + _COMMON_LOC + rb"|" + _BALANCED
                      + rb")\)\n")


_BLANK_TAIL = re.compile(rb"(?:[ \t]*+\n)*+")
_BLANKS = b" \t\n"
# Numbers of more digits are left to `_checked_table`, whose array of int64 says what
# becomes of them.
_MAX_DIGITS = 18
# How far back from the end of the file the last table line is looked for.
_TAIL_WINDOW = 1 << 12
# The `#loc` table is read a block of lines at a time: a large file's table holds millions
# of names, and their numbers are all that is kept. A block's names are a transient of
# about twice its size: the check runs while the workers read (`event_spans`), and 8 MB
# blocks added 16 MiB to the processes' summed RSS, 1 MB blocks 2 MiB, in the same time.
_TABLE_BLOCK = 1 << 20


# This reader holds the whole file: larger ones are read a span at a time
# (`read.event_spans`, when only their analysis is wanted) or by the careful reader, which
# holds one 4 MB block at a time.
MAX_FILE_BYTES = 256 << 20
PROGRESS_BYTES = 1 << 22  # as the careful reader's blocks


def read_events(path: str, settings: ScanSettings | None = None,
                on_bytes: BytesRead | None = None) -> FileScan | None:
    """The file's `FileScan`, or None when it has a shape only the careful reader reads
    (or is larger than MAX_FILE_BYTES). `on_bytes` is told the bytes read as the reader
    walks the file; when it gives up, the bytes it reported are taken back (a negative
    count), since the careful reader reports them again."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_FILE_BYTES:
            return None
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return None
    return scan_bytes(data, path, settings, on_bytes)


def scan_bytes(data: bytes, path: str = "<text>", settings: ScanSettings | None = None,
               on_bytes: BytesRead | None = None) -> FileScan | None:
    """`read_events` on bytes already in memory."""
    reader = _Reader(data, path, settings or ScanSettings(), on_bytes)
    try:
        return reader.read()
    except (Unvouched, SyntaxProblem):
        if on_bytes is not None and reader.reported:
            on_bytes(-reader.reported)
        return None


class _Reader(UseSearch):
    def __init__(self, data: bytes, path: str, settings: ScanSettings,
                 on_bytes: BytesRead | None = None,
                 alloca_line_shift: tuple[int, int] = (0, 0)) -> None:
        self.data = data
        # (after, shift): the allocas' lines past `after` are given moved by `shift` (a
        # span read as a text of its own, `event_spans`; the reader counts its own lines).
        self.alloca_line_shift = alloca_line_shift
        self.path = path
        self.settings = settings
        self.on_bytes = on_bytes
        self.reported = 0  # bytes told to on_bytes so far
        # Ops whose results are never views (`_makes_view` says False before reading
        # their types), as bytes.
        self.no_view_ops = frozenset(
            name.encode() for name in (settings.non_view_ops - settings.view_ops)
            | {"arith.constant"})

    def _progress(self, offset: int) -> None:
        """Tell on_bytes how far the reader got, every PROGRESS_BYTES."""
        if self.on_bytes is not None and offset - self.reported >= PROGRESS_BYTES:
            self.on_bytes(offset - self.reported)
            self.reported = offset

    # -- the whole file --------------------------------------------------------------

    def read(self) -> FileScan:
        data = self.data
        # One pass keeps the brackets, slashes and whatever is not plain text: the brackets
        # are counted in what is left (a count per bracket over the file is a pass each).
        kept = data.translate(None, _PLAIN_BUT_KEPT)
        if not data or kept.translate(None, _KEPT):
            raise Unvouched("empty, or bytes other than printable ASCII, tab and newline")
        self.any_slash = b"/" in kept
        # MLIR prints a quote or a backslash in a string as `\22` or `\5C`: other escapes
        # (`\0A`, `\n`) leave the quotes this reader counts where they are.
        # (A `{-#` resources section needs no search: its line starts with a `{`, which no
        # op, table line or alias definition does.)
        if b"\\" in kept and (b'\\"' in data or b"\\\\" in data):
            raise Unvouched("an escaped quote or backslash")
        file_bytes = len(data)  # what progress counts: not the newline added below
        if not data.endswith(b"\n"):
            data = self.data = data + b"\n"
        body_start, prefix_scan = self._prefix()
        self.chunk_index = len(prefix_scan.chunks) - 1
        body_end, table = self._table(body_start, prefix_scan.chunks[-1].aliases)
        if (data[body_start : body_start + 1] not in _OP_START
                or _CONTINUATION_WORD.match(data, body_start)):
            raise Unvouched("a line that is not a whole op, a region end or a label")
        self.body_start, self.body_end = body_start, body_end
        self._line_starts()
        self.comment_lines = self._comment_lines()
        comments = [data[start : data.index(b"\n", start)] for start in self.comment_lines]
        prefix = data[:body_start]
        for opening, closing in ((b"(", b")"), (b"[", b"]"), (b"{", b"}")):
            # The body's balance: the file's, less the prefix's (the location table was
            # matched bracket by bracket). Brackets in comments are text: they count for
            # neither reader.
            body = (kept.count(opening) - kept.count(closing)
                    - prefix.count(opening) + prefix.count(closing))
            if body != sum(c.count(opening) - c.count(closing) for c in comments):
                raise Unvouched("brackets that do not balance")
        self.first_body_line = data.count(b"\n", 0, body_start) + 1
        self.dynamic: list[tuple[RawAlloca, int]] = []  # allocas with size operands
        self._structure()
        for alloca, line_start in self.dynamic:
            alloca.size_constants = tuple(
                self._constant_of(name, line_start, self.alloca_region[alloca.index])
                for name in alloca.syntax.dynamic_sizes)  # type: ignore[union-attr]
        self._liveness()
        # The text's lines: those up to the body's end the events counted (`_structure`),
        # and the table's after it; not a pass of their own over the text.
        self.lines = self.last_body_line + data.count(b"\n", body_end)
        chunks = prefix_scan.chunks
        last = chunks[-1]
        chunk = Chunk(last.index, last.line, last.header)
        chunk.aliases = table  # type: ignore[assignment]  # a read-only mapping
        chunks[-1] = chunk
        allocas = self.allocas
        after, shift = self.alloca_line_shift
        for alloca, live_end, live_end_line in zip(allocas, self.live_end, self.live_end_line,
                                                   strict=True):
            alloca.live_end = live_end
            if shift:
                alloca.line += shift
                if live_end_line > after:
                    live_end_line += shift
            alloca.live_end_line = live_end_line
        if self.on_bytes is not None and file_bytes > self.reported:
            self.on_bytes(file_bytes - self.reported)  # the rest, liveness included
            self.reported = file_bytes
        return FileScan(self.path, allocas, chunks, list(prefix_scan.diagnostics),
                        self.lines, self.ops, self.funcs)

    def _prefix(self) -> tuple[int, FileScan]:
        """Alias definitions before the first op, read by the careful reader."""
        data = self.data
        start = 0
        while True:  # alias definitions, comments (a dump header) and blank lines
            line_end = data.index(b"\n", start)
            first = data[start:line_end].lstrip()[:2]
            if first[:1] not in (b"#", b"!", b"") and first != b"//":
                break
            start = line_end + 1
            if start >= len(data):
                raise Unvouched("no op")
        lines = data[:start].decode().split("\n")[:-1]
        scanner = Scanner(self.path, self.settings)
        scanner.feed_checked(lines, False)
        if (scanner.pending_alias is not None or scanner.order or scanner.nesting
                or len(scanner.regions) != 1 or scanner.diagnostics):
            raise Unvouched("the alias definitions before the first op")
        if start >= len(data):
            raise Unvouched("no op")
        return start, scanner.finish()

    def _line_starts(self) -> None:
        """One search over the starts of the body's lines: where regions close, block
        labels, comment lines and blank lines are; any other line must start an op."""
        closes: list[int] = []
        close_rests: list[bytes] = []
        labels: list[int] = []
        comments: list[int] = []
        blanks: list[int] = []
        kinds = {3: labels, 4: comments, 5: blanks}
        last_newline = self.body_end - 1  # the line after it is the location table's
        for m in _LINE_START.finditer(self.data, max(self.body_start - 1, 0), self.body_end):
            kind = m.lastindex
            if kind == 2:
                closes.append(m.start(2) - 1)  # its `}`
                close_rests.append(m.group(2))
                continue
            found = kinds.get(kind)  # type: ignore[arg-type]
            if found is not None:
                found.append(m.start() + 1)
            elif m.start() != last_newline or kind == _OPEN_LINE:
                raise Unvouched("a line that is not a whole op, a region end or a label")
        self.close_braces, self.close_rests, self.label_starts = closes, close_rests, labels
        self.comment_starts, self.blank_starts = comments, blanks

    def _comment_lines(self) -> list[int]:
        """Where the comments in the body are: whole lines only (what follows code on a
        line, or a `// -----` split, the careful reader reads)."""
        data = self.data
        starts = self.comment_starts
        in_lines = 0
        for start in starts:
            line_end = data.index(b"\n", start)
            if _SPLIT_LINE.match(data, start):
                raise Unvouched("a chunk split among the ops")
            in_lines += data.count(b"//", start, line_end)
        body_start, body_end = self.body_start, self.body_end
        if in_lines != (data.count(b"//", body_start, body_end)
                        if self.any_slash and _DOUBLE_SLASH.search(data, body_start, body_end)
                        else 0):
            raise Unvouched("a comment after code")
        return starts

    def _table(self, body_start: int, before: dict[str, str]) -> tuple[int, Mapping[str, str]]:
        return trailing_table(self.data, body_start, before)

    # -- regions, ops and allocas ----------------------------------------------------

    def _structure(self) -> None:
        """Regions, ops and allocas in one pass over the events, in text order. An
        allocation op is only placed (line, program point, region) in the pass: the
        allocas are read after it, all at once (`_read_allocas`)."""
        data = self.data
        start, end = self.body_start, self.body_end
        # Each event one int, offset * 8 + kind (0 close, 1 label, 2 alloca, 3 open, 4 a
        # comment or blank line): a list of ints sorts faster and holds a third of the
        # memory of a list of pairs. A close's offset is its `}`, an open's its `{`, an
        # alloca's its op name, the others' their line's start. Close, label and blank-line
        # events match from the newline before their line; the body's first line is an op,
        # so the searches start at that newline.
        events = [offset << 3 for offset in self.close_braces]
        events += [(offset << 3) | 1 for offset in self.label_starts]
        events += [((m.start() - (7 if m.lastindex == 1 else 8)) << 3) | 2
                   for m in _ALLOCATION_OP_AT.finditer(data, start, end)]
        # The `{`s a dict entry, a blank line or a comment follows (most files have none)
        # are kept for `_check_after_opens`, which looks at no other.
        # The same search finds a `{` inside a line that starts no attribute dict (most
        # files have none), which `_check_after_opens` declines outside comments.
        add_event = events.append
        opens_followed: list[re.Match[bytes]] = []
        for m in _REGION_OPEN.finditer(data, start, end):
            if m.lastindex == _INSIDE_LINE:
                opens_followed.append(m)
                continue
            add_event((m.start() << 3) | 3)
            if m.lastindex:
                opens_followed.append(m)
        events += [(offset << 3) | 4 for offset in self.comment_lines]
        events += [(offset << 3) | 4 for offset in self.blank_starts]
        events.sort()
        # The events' lines, all at once and in C: each line's start is found back from
        # the event (at once for a line's start), and each line is the one before plus the
        # newlines between them.
        offsets = [event >> 3 for event in events]
        line_starts = list(map(_NEXT, map(data.rfind, repeat(b"\n"), repeat(0), offsets)))
        first_body_line = self.first_body_line
        # (Lists, not arrays: a bisect over an array makes an int of each item it looks at.)
        self.event_offsets = [start, *line_starts]
        self.event_lines = list(accumulate(
            map(data.count, repeat(b"\n"), self.event_offsets, line_starts),
            initial=first_body_line))
        lines = iter(self.event_lines)
        next(lines)  # the body's start, no event
        self.allocas: list[RawAlloca] = []
        self.funcs: list[OpFrame] = []
        # Every frame made, for `event_spans` to move their lines (a span's to the file's).
        self.made_frames: list[OpFrame] = []
        self.live_end: list[int] = []
        self.live_end_line: list[int] = []
        self.alloca_region: list[Region] = []
        self.alloca_line_end: list[int] = []
        if len(_BODIES) > _MAX_BODIES:
            _BODIES.clear()
        self.bodies = _BODIES
        for checked in (*_CLOSINGS, _REOPENINGS, _REGION_OP_NAMES):
            if len(checked) > _MAX_SHAPES:
                checked.clear()
        if len(_REGION_OPS) > 4:  # as many as the settings readers are given: few
            _REGION_OPS.clear()
        self.region_ops = _REGION_OPS.setdefault(self.settings.run_once_ops, {})
        if len(self.region_ops) > _MAX_SHAPES:
            self.region_ops.clear()
        self.frame_end_line: dict[int, int] = {}
        root = Region(None, None, 0, start, False)
        region = root
        line = first_body_line
        non_ops = 0  # region-end and label lines so far: every other body line is an op
        last_op_line = 0
        self.non_op_lines: list[int] = []
        self.transitions: list[int] = [start]  # the region at an offset: from here on
        self.transition_regions: list[Region] = [root]
        # What a line is, for lines other than plain ops: ("op", frame) a region's op,
        # ("close", frame) a region's end, ("label", None), ("alloca", None) (only the
        # kind of an allocation op's line is asked for: the alloca is not kept there).
        self.line_kind: dict[int, tuple[str, object]] = {}
        top_count = 0
        last_close_line = -1
        just_closed: Region | None = None
        # The loop runs once per event: what it calls is looked up once, here.
        line_kind = self.line_kind
        non_op_append = self.non_op_lines.append
        transitions_append = self.transitions.append
        transition_regions_append = self.transition_regions.append
        # What follows each region's `}`, in text order, all at once: closing lines differ
        # mostly by their alias location, which changes nothing checked, so what is left
        # (its key) is checked once per distinct text; and what follows the `}` is kept
        # (the generic form prints an op's attributes there), less a `{` that opens the
        # op's next region.
        rests = b"\n".join(self.close_rests)
        next_closing_key = iter(_ALIAS_AT_LINE_END.sub(b"", rests).split(b"\n")).__next__
        next_trailer = iter(_BRACE_AT_LINE_END.sub("", rests.decode()).split("\n")).__next__
        frame_end_line = self.frame_end_line
        funcs_append = self.funcs.append
        frames_append = self.made_frames.append
        chunk_index = self.chunk_index
        region_ops = self.region_ops
        generic_closings, closings = _CLOSINGS
        reopenings = _REOPENINGS
        # Allocation ops placed, read once the pass is done: line start, line, program
        # point, region. (Read at their events instead, the pass took as long; read all at
        # once, column by column by maps over the allocas, they took longer: 167 -> 189 ms
        # on generic_xla_50mb, every column a list of new objects.)
        placed: list[tuple[int, int, int, Region]] = []
        place = placed.append
        # Progress is told at events: they are walked in runs, each after the report due
        # at its first event, and all at once when nobody is told.
        reports = self._progress_due(events, line_starts)
        bounds = sorted({0, len(events), *reports})
        for run_start, run_end in pairwise(bounds):
            if run_start in reports:
                self._progress(reports[run_start])
            for event, line_start, new_line in zip(events[run_start:run_end],
                                                   line_starts[run_start:run_end], lines,
                                                   strict=False):  # `lines` goes on
                if new_line - 1 > line:
                    last_op_line = new_line - 1  # the lines between events are ops
                line = new_line
                kind = event & 7
                if kind == 2:  # an allocation op
                    if line in line_kind:
                        if line_kind[line] is _COMMENT:
                            continue  # an op's name in a comment
                        raise Unvouched("an allocation op that is not alone on its line")
                    line_kind[line] = _ALLOCA_PLACED
                    place((line_start, line, (line - first_body_line) - non_ops + 1, region))
                    last_op_line = line
                elif kind == 3:  # a `{` ends the line
                    kind_of_line = line_kind.get(line)
                    if kind_of_line is _COMMENT:
                        continue  # a `{` in a comment
                    offset = event >> 3
                    text = data[line_start : offset + 1]
                    ops_before = (line - first_body_line) - non_ops
                    if last_close_line == line:
                        # The op whose region just closed on this line opens its next one.
                        if text not in reopenings:
                            if text.count(b'"') % 2:
                                raise Unvouched("a region end this reader does not read")
                            reopenings.add(text)
                        assert just_closed is not None and just_closed.owner is not None
                        frame = just_closed.owner
                        generic = just_closed.generic
                        ops_at_open = ops_before  # a `} else {` line is no op
                    else:
                        if kind_of_line is not None:
                            raise Unvouched("an op this reader does not read")
                        shape = region_ops.get(text)
                        if shape is None:
                            shape = region_ops[text] = self._region_op_shape(text.decode())
                        name = shape.name
                        counts = region.child_counts
                        if counts is None:
                            counts = region.child_counts = {}
                        index = counts.get(name, 0)
                        counts[name] = index + 1
                        owner = region.owner
                        frame = OpFrame(name, ops_before + 1, line, shape.col, shape.header,
                                        shape.results, owner, index, shape.loop_like,
                                        chunk_index, -1 if owner is not None else top_count,
                                        -1, -1, shape.first_line_chars)
                        frames_append(frame)
                        if shape.is_func:
                            funcs_append(frame)
                        generic = shape.generic
                        if owner is None:
                            top_count += 1
                        line_kind[line] = ("op", frame)
                        last_op_line = line
                        ops_at_open = ops_before + 1  # the ops up to this line, its own
                    region = Region(frame, region, region.depth + 1, offset + 2, generic,
                                    ops_at_open)
                    transitions_append(offset + 1)
                    transition_regions_append(region)
                elif kind == 0:  # `}` starts the line
                    if region is root:
                        raise Unvouched("'}' closes nothing")
                    owner = region.owner
                    assert owner is not None
                    region.end = line_start
                    owner.end_order = (line - first_body_line) - non_ops
                    owner.end_line = line
                    frame_end_line[id(owner)] = last_op_line
                    key = next_closing_key()
                    checked = generic_closings if region.generic else closings
                    if key not in checked:
                        self._check_closing(key.decode(), region.generic)
                        checked.add(key)
                    tail = next_trailer()
                    if tail.strip():
                        owner.trailer.append(tail)
                    just_closed = region
                    region = region.parent  # type: ignore[assignment]
                    transitions_append(line_start)
                    transition_regions_append(region)
                    non_op_append(line)
                    non_ops += 1
                    last_close_line = line
                    line_kind[line] = ("close", owner)
                elif kind == 1:  # a block label
                    # Ops before it in its region (plain op lines are no events: count
                    # them; an op of its own region's, or an alloca, is one of them).
                    if (region.labels or line in line_kind
                            or (line - first_body_line) - non_ops > region.ops_at_open):
                        raise Unvouched("a region with several blocks")
                    owner = region.owner
                    if owner is not None and not region.labels and owner.entry_block is None:
                        owner.entry_block = (line, 1, self._line(line_start))
                    region.labels += 1
                    non_op_append(line)
                    non_ops += 1
                    line_kind[line] = ("label", None)
                else:  # kind == 4: a comment or a blank line, read as nothing
                    non_op_append(line)
                    non_ops += 1
                    line_kind[line] = _COMMENT
        if region is not root:
            raise Unvouched("regions still open at the end")
        self._check_after_opens(opens_followed)
        root.end = end
        self.root = root
        self.top_ops = top_count  # region-holding ops at the top level
        line_start = line_starts[-1] if line_starts else start
        self.last_body_line = line + data.count(b"\n", line_start, end) - 1
        self.ops = (self.last_body_line - self.first_body_line + 1) - non_ops
        self._read_allocas(placed)

    def _check_after_opens(self, opens_followed: list[re.Match[bytes]]) -> None:
        """Raises Unvouched where a `{` that ends a line, not in a comment, starts an
        attribute dict over several lines rather than a region: a dict entry follows it,
        or a blank line or a comment, then a dict entry; and where a `{` inside a line,
        not in a comment, starts no attribute dict (`"tpu.region"() ({ memref.store ...`:
        a region, whose ops this reader would read as one). `opens_followed`: the matches
        of `_REGION_OPEN` whose `_AFTER_OPEN` matched or which are inside a line (most
        files have none)."""
        data = self.data
        comment_starts = set(self.comment_lines)
        for after in opens_followed:
            offset = after.start()
            line_start = data.rfind(b"\n", 0, offset) + 1
            if line_start in comment_starts:
                continue  # a `{` in a comment
            if after.lastindex == _INSIDE_LINE:
                if data.count(b'"', line_start, offset) % 2:
                    continue  # in a string (which holds no escaped quote: `read` checked)
                raise Unvouched("a region opened inside a line")
            if after.group(1) is None or _DICT_ENTRY.match(self._next_code_line(offset + 2)):
                raise Unvouched("an attribute dict over several lines")

    def _progress_due(self, events: list[int], line_starts: list[int]) -> dict[int, int]:
        """The progress reports due as the events are met, by the event's index: one at the
        first event at least PROGRESS_BYTES past the last report, told its offset (a
        close's, its line's start)."""
        if self.on_bytes is None:
            return {}
        offsets = [line_start if event & 7 == 0 else event >> 3
                   for event, line_start in zip(events, line_starts, strict=True)]
        reports = {}
        due = self.reported + PROGRESS_BYTES
        while (at := bisect_left(offsets, due)) < len(offsets):
            reports[at] = offsets[at]
            due = offsets[at] + PROGRESS_BYTES
        return reports

    @staticmethod
    def _check_closing(rest: str, generic: bool) -> None:
        """Raises Unvouched unless `rest`, what follows a region's `}` on its line, is
        one this reader reads."""
        continues = rest.endswith("{")
        tail = rest[:-1] if continues else rest
        if _MID_OP.search(tail) or _BARE_OP.search(outside_strings_and_dicts(tail)):
            # An op after the region's end, on its line (`} memref.store %f, %a[%i] ...`).
            raise Unvouched("an op on the line of a region's end")
        if (_MAYBE_REGION_OPEN.search(tail) or tail.count("{") != tail.count("}")
                or tail.count("[") != tail.count("]") or rest.count('"') % 2):
            raise Unvouched("a region end this reader does not read")
        paren = tail.count("(") - tail.count(")")
        if generic and continues:
            well_formed = paren == 0 and tail.strip() == ","
        elif generic:
            well_formed = paren == -1 and tail.startswith(")")
        else:
            well_formed = paren == 0 and (not continues or tail.strip() == "else")
        if not well_formed:
            raise Unvouched("a region end this reader does not read")

    def _region_op_shape(self, text: str) -> _RegionOpShape:
        """What the line of an op that opens a region says of the op; raises Unvouched
        for a line this reader does not read.

        Lines alike but for their value names (`scf.for %7 = %1 to %3 step %2 {`, most
        distinct lines) are checked once: the checks read a value name as a whole (a `%`,
        then characters that none of them treats apart), so the line with each name's
        characters after its `%` made one `_` passes them exactly when the line does. (Not
        a line with a string, where a `%` may be no name's.) Checked each, the distinct
        lines of a 5 MB dump cost 10 ms, most of them the line's regex searches."""
        template = _VALUE_NAME_TEXT.sub("%_", text) if '"' not in text else None
        known = _REGION_OP_NAMES.get(template) if template is not None else None
        if known is None:
            shape = self._checked_region_op_shape(text)
            if template is not None:
                _REGION_OP_NAMES[template] = (shape.name, shape.generic)
            return shape
        bare, generic = known
        head = _HEAD.match(text)
        assert head is not None  # as it matched the template
        return self._shape_of(text, head, bare, generic)

    def _shape_of(self, text: str, head: re.Match[str], bare: str, generic: bool
                  ) -> _RegionOpShape:
        """`_region_op_shape` of a line whose checks passed (its op's head, name and form
        given)."""
        results_text = head.group(1)
        # The op's text ends before the `{` that opens its region (as the careful reader
        # splits the line there).
        text_before_brace = text[head.start(1) if results_text else head.start(2)
                                 : text.rindex("{")]
        return _RegionOpShape(
            bare, head.start(2) + 1, text_before_brace.strip(),
            _results_of(results_text) if results_text else (),
            bare not in self.settings.run_once_ops, len(text_before_brace),
            bare == "func" or bare.endswith(".func"), generic)

    def _checked_region_op_shape(self, text: str) -> _RegionOpShape:
        """`_region_op_shape`, every check made on this line."""
        if text.count('"') % 2:
            raise Unvouched("an attribute dict over several lines")
        head = _HEAD.match(text)
        if head is None or head.group(2) in _ALLOCA_NAMES:
            raise Unvouched("an op this reader does not read")
        name = head.group(2)
        if (name[0] != '"' and head.group(1) is None and name in _CONTINUATION_WORDS) or (
                "%" in "".join(text.split('"')[1::2])):  # a value name in a string
            raise Unvouched("an op this reader does not read")
        if _MID_OP.search(text, head.end()) or _BARE_OP.search(
                outside_strings_and_dicts(text[head.end():])):
            # `%k = "x.val"() : () -> i32 %r = "x.region"() ({`: the region is the second
            # op's, which the careful reader counts.
            raise Unvouched("two ops on one line")
        stripped = text.rstrip()
        generic = stripped.endswith("({")
        before_brace = stripped[:-1]
        if (_MAYBE_REGION_OPEN.search(before_brace)
                or before_brace.count("{") != before_brace.count("}")
                or before_brace.count("[") != before_brace.count("]")
                or before_brace.count("(") - before_brace.count(")") != (1 if generic else 0)):
            raise Unvouched("a region start this reader does not read")
        return self._shape_of(text, head, name.strip('"'), generic)

    def _next_code_line(self, start: int) -> str:
        """The first line from `start` on that is neither blank nor a comment (what decides,
        for the careful reader, whether a `{` ending a line opens a region)."""
        data = self.data
        while start < self.body_end:
            end = data.index(b"\n", start)
            text = data[start:end].strip()
            if text and not text.startswith(b"//"):
                return text.decode()
            start = end + 1
        return ""

    def _line(self, line_start: int) -> str:
        return self.data[line_start : self.data.index(b"\n", line_start)].decode()

    def _read_allocas(self, placed: list[tuple[int, int, int, Region]]) -> None:
        """The allocas placed by `_structure`, read in text order. An op in the common
        shape whose body was read before costs one match (`_COMMON_ALLOCA`) and the
        records; any other goes the way of `_alloca`."""
        data = self.data
        common = _COMMON_ALLOCA.match
        bodies = self.bodies
        allocas, dynamic = self.allocas, self.dynamic
        add_alloca = allocas.append
        add_live_end, add_live_end_line = self.live_end.append, self.live_end_line.append
        add_region, add_line_end = self.alloca_region.append, self.alloca_line_end.append
        chunk = self.chunk_index
        for line_start, line, order, region in placed:
            found = common(data, line_start)
            body = location = None
            if found is not None:
                text, result, body_text, alias = found.group(1, 2, 3, 5)
                # (A body that holds a string, which `_alloca` reads the careful way, is
                # never among the bodies.)
                body = bodies.get(body_text)
                if body is not None and alias is not None:
                    location = AliasLoc(alias.decode())
                elif body is not None:
                    location = parse_common_location(found.group(4).decode())
            if body is None or location is None:
                self._alloca(line_start, line, order, region)
                alloca = allocas[-1]
                if alloca.syntax.dynamic_sizes:  # type: ignore[union-attr]
                    dynamic.append((alloca, line_start))
                continue
            # Its `syntax` is made of the body and location when asked for.
            alloca = RawAlloca(len(allocas), order, line, found.start(3) - line_start + 1,
                               found.start(1) - line_start + 1, text.decode(),
                               (result.decode(),), region.frames_cache or region.frames,
                               chunk, None, (), -1, -1, body, location)
            add_alloca(alloca)
            add_live_end(order)
            add_live_end_line(line)
            add_region(region)
            add_line_end(found.end() - 1)
            if body[1]:  # dynamic sizes
                dynamic.append((alloca, line_start))

    def _alloca(self, line_start: int, line: int, order: int, region: Region) -> None:
        """What `Scanner._simple_alloca` does with an allocation op alone on its line."""
        data = self.data
        simple = _SIMPLE_ALLOCA.match(data, line_start)
        if simple is None:
            self._any_alloca(self._line(line_start), line, order, region, line_start)
            return
        # The common shape, `%a = op<body> loc(...)` with no string in the body: the body
        # is checked and parsed once per distinct text, the location read on its own.
        body_start = simple.start("op")
        line_end = simple.end() - 1
        text_bytes = data[simple.start("result"):line_end].rstrip()
        loc_at = text_bytes.rfind(b" loc(")
        op_at = body_start - simple.start("result")
        if loc_at < op_at or not text_bytes.endswith(b")"):
            loc_at = len(text_bytes)  # no location
        quotes = 2 if simple.group("quote") else 0
        location: Location | None = None
        if text_bytes.count(b'"', 0, loc_at) != quotes:
            # A string in the body: the careful path reads it.
            self._any_alloca(self._line(line_start), line, order, region, line_start)
            return
        if loc_at < len(text_bytes):
            alias = _ALIAS_LOC.fullmatch(text_bytes, loc_at)
            if alias is not None:
                location = AliasLoc(alias.group(1).decode())
            else:
                loc_text = text_bytes[loc_at + 1 :]
                strings = loc_text.split(b'"')
                fast = (len(strings) % 2 == 1 and b"\\" not in loc_text and not any(
                    c in s for s in strings[1::2] for c in b"{}%"))
                location = parse_common_location(loc_text.decode()) if fast else None
                if location is None:
                    self._any_alloca(self._line(line_start), line, order, region,
                                     line_start)
                    return
        body_key = text_bytes[op_at:loc_at]
        body = self.bodies.get(body_key)
        if body is None:
            body_text = body_key.decode()
            try:
                balanced = (body_text.count("(") == body_text.count(")")
                            and body_text.count("[") == body_text.count("]"))
                body = parse_alloca_body(body_text) if balanced else None
            except SyntaxProblem:
                body = None
            if body is None:
                # What the careful path makes of it (a complaint, or another reading).
                self._any_alloca(self._line(line_start), line, order, region, line_start)
                return
            self.bodies[body_key] = body
        alloca = RawAlloca(len(self.allocas), order, line, body_start - line_start + 1,
                           simple.start("result") - line_start + 1, text_bytes.decode(),
                           (simple.group("result").decode(),), region.frames,
                           self.chunk_index, None, (), -1, -1, body, location)
        self._add_alloca(alloca, region, line_end)

    def _any_alloca(self, raw: str, line: int, order: int, region: Region,
                    line_start: int) -> None:
        head = _HEAD.match(raw)
        if (head is None or head.group(2) not in _ALLOCA_NAMES
                or raw.count("(") != raw.count(")")
                or raw.count("[") != raw.count("]")
                or raw.count('"') % 2):
            raise Unvouched("an allocation op this reader does not read")
        if raw.count('"') > (2 if head.group(2)[0] == '"' else 0) and any(
                c in s for s in raw.split('"')[1::2] for c in "{}%"):
            raise Unvouched("an allocation op this reader does not read")
        results_text = head.group(1)
        results = _results_of(results_text) if results_text else ()
        op_start = head.start(1) if results_text else head.start(2)
        text = raw[op_start:].rstrip()
        try:
            syntax = parse_alloca_line(results_text or "", text, head.start(2) - op_start)
        except SyntaxProblem:
            syntax = parse_alloca(text)  # raises where the careful reader would complain
        alloca = RawAlloca(len(self.allocas), order, line, head.start(2) + 1, op_start + 1,
                           text, results, region.frames, self.chunk_index)
        alloca.syntax = syntax
        self._add_alloca(alloca, region, self.data.index(b"\n", line_start))

    def _add_alloca(self, alloca: RawAlloca, region: Region, line_end: int) -> None:
        self.allocas.append(alloca)
        self.live_end.append(alloca.order)
        self.live_end_line.append(alloca.line)
        self.alloca_region.append(region)
        self.alloca_line_end.append(line_end)

def trailing_table(data: bytes, body_start: int, before: dict[str, str]
                   ) -> tuple[int, Mapping[str, str]]:
    """Where the ops end (the table's first byte, or the end of the text), and the `#loc`
    table after them (`before` when there is none). Raises Unvouched for a table this
    reader does not read."""
    end = len(data)
    body_end = table_start(data, body_start)
    if body_end is None:
        return end, before
    checked = _numbered_in_order(data, body_end)
    if checked is None:
        table_end, numbers = _checked_table(data, body_end)
    else:
        table_end, numbers = checked
    if table_end != end and not _BLANK_TAIL.fullmatch(data, table_end):
        raise Unvouched("a location table line this reader does not read")
    end = table_end  # blank lines may follow (XLA's dump files end with two)
    table = LocationTable(data, body_end, end, numbers, before)
    if (checked is None and not _increasing(numbers)) or any(
            table._line_index(name) is not None for name in before):
        raise Unvouched("a location table out of order, or defining an alias again")
    return body_end, table


def table_start(data: bytes, body_start: int) -> int | None:
    """Where the trailing `#loc` table's first line starts, if there is one: the table holds
    no `}`, so it starts after the text's last one (a search backwards), unless the ops hold
    none at all."""
    last_brace = data.rfind(b"}", body_start)
    table_at = data.find(b"\n#", last_brace if last_brace >= 0 else body_start)
    return None if table_at < 0 else table_at + 1


def table_text_end(data: bytes, start: int) -> int | None:
    """The end (past its newline) of the text's last line that is not blank, from `start`
    on; None when the text ends without a newline, or in more than `_TAIL_WINDOW` bytes of
    blanks, or holds nothing but blanks from `start`."""
    window = max(start, len(data) - _TAIL_WINDOW)
    last_text = window + len(data[window:].rstrip(_BLANKS)) - 1
    text_end = data.find(b"\n", last_text) + 1
    return None if last_text < start or text_end == 0 else text_end


def _increasing(numbers: array[int]) -> bool:
    # Tables are usually numbered one by one: compared as arrays, in C.
    return not numbers or numbers == array(
        "q", range(numbers[0], numbers[0] + len(numbers))) or all(
            a < b for a, b in pairwise(numbers))


def _numbered_in_order(data: bytes, body_end: int) -> tuple[int, array[int] | range] | None:
    """The table's end and its numbers when every line up to the blank ones that end the
    file is a table line and they are numbered one by one (after `#loc`, if it comes
    first): the names are compared with the numbers they should be, without an int per
    line. None for any other table, which `_checked_table` reads (its diagnostics are
    the reader's)."""
    table_end = table_text_end(data, body_end)
    if table_end is None:
        return None  # the file ends in a long blank tail, or without a newline
    first: int | None = None
    bare = False
    expected = 0
    block = body_end
    while block < table_end:
        block_end = data.find(b"\n", min(block + _TABLE_BLOCK, table_end - 1)) + 1
        if next(_allocation_ops(data, block, block_end), None) is not None:
            raise Unvouched("an allocation op's name in the location table")
        lines = data.count(b"\n", block, block_end)
        names = _common_names(data, block, block_end, lines)
        if names is None:
            names = _loc_line().findall(data, block, block_end)
            if len(names) != lines:
                return None
        if first is None:
            bare = names[0] == b""
            if bare:
                del names[0]
            if not names or not 0 < len(names[0]) <= _MAX_DIGITS:  # `#loc` alone or again,
                return None  # or a number an int64 may not hold (as the careful path reads)
            first = expected = int(names[0])
        # Each name compared with the digits its number prints as, without an int per line.
        # (Comparing one joined text with the printed list of numbers costs 6 ms less on a
        # 50 MB dump, but its transient texts grew the heap the forked workers inherit by
        # 16 MiB summed over the processes.)
        if names != list(map(b"%d".__mod__, range(expected, expected + len(names)))):
            return None
        expected += len(names)
        block = block_end
    assert first is not None
    return table_end, consecutive_numbers(first, expected, bare)


def consecutive_numbers(first: int, stop: int, bare: bool) -> array[int] | range:
    """The numbers of a table whose lines are numbered one by one from `first` up to `stop`,
    after a bare `#loc` (number -1) when `bare`: a range when they are consecutive."""
    if not bare:
        return range(first, stop)
    if first == 0:
        return range(-1, stop)
    return array("q", (-1,)) + array("q", range(first, stop))


# An alias name whose number starts with a zero (`#loc0` alone is number 0).
_LEADING_ZERO = re.compile(rb"#loc0\d")


def _checked_table(data: bytes, body_end: int) -> tuple[int, array[int]]:
    """The table's end (where `_loc_table()` stops) and its numbers (checked increasing by
    the caller). Raises Unvouched."""
    end = len(data)
    numbers = array("q")
    block = body_end
    while True:
        # Blocks end at a line's end: the table's lines are matched whole.
        block_end = data.find(b"\n", block + _TABLE_BLOCK) + 1 or end
        if next(_allocation_ops(data, block, block_end), None) is not None:
            raise Unvouched("an allocation op's name in the location table")
        table_end = _table_end(data, block, block_end)
        names = _LOC_NAME.findall(data, block - 1, table_end)
        if _LEADING_ZERO.search(data, block - 1, table_end):
            # `#loc01` is not `#loc1`: the table's numbers would say it is.
            raise Unvouched("a location alias numbered with a leading zero")
        bare = 1 if block == body_end and names and names[0] == b"" else 0
        if bare:
            numbers.append(-1)  # `#loc` is number -1
        try:
            numbers.extend(map(int, names[bare:]))
        except ValueError:  # `#loc` after numbered ones: out of order
            raise Unvouched("a location table out of order") from None
        except OverflowError:  # a number no 64-bit int holds: the careful reader reads it
            raise Unvouched("a location number past 64 bits") from None
        if table_end < block_end or block_end == end:
            break
        block = block_end
    return table_end, numbers


def _table_end(data: bytes, block: int, block_end: int) -> int:
    """Where `_loc_table()` stops in data[block:block_end]: past the last newline when every
    line there is a common one (`_COMMON_LOC_LINE`, `_inline_loc_line()`: lines `_loc_table()`
    takes), without compiling the balanced pattern (27 ms) for a table that is only not
    numbered one by one."""
    lines = data.count(b"\n", block, block_end)
    if lines and _common_names(data, block, block_end, lines) is not None:
        return data.rindex(b"\n", block, block_end) + 1
    return _loc_table().match(data, block, block_end).end()


def _common_names(data: bytes, block: int, block_end: int, lines: int) -> list[bytes] | None:
    """The digits of each name of data[block:block_end]'s `lines` lines when each is a
    common one (`_COMMON_LOC_LINE`, else `_inline_loc_line()`); None when one is not."""
    names = _COMMON_LOC_LINE.findall(data, block, block_end)
    if len(names) != lines:
        names = _inline_loc_line().findall(data, block, block_end)
    return names if len(names) == lines else None


# What follows a `{` that ends a line: a blank line or a comment (group 1: the next line
# with code decides), or a dict entry (an attribute dict over several lines).
# (The entry as `lexicon._DICT_ENTRY` reads it, in bytes.)
_AFTER_OPEN = re.compile(rb'[ \t]*+(?:(\n|//)|(?:[A-Za-z_][\w$.\-]*|"[^"\n]*")[ \t]*[=,])')
# A `{` ending a line (an event: a region opens), and whether `_AFTER_OPEN` matches after
# it (group 2 matched; group 1 as in `_AFTER_OPEN`): a region's `{` need not be one, and one
# search finds both. Or (group 3, `_INSIDE_LINE`) a `{` inside a line that no dict entry or
# `}` follows and no `<` precedes (`lexicon._MAYBE_REGION_OPEN`): a region's, most likely.
# (The pattern starts with its literal `{`, which the engine finds fast; a lookbehind first
# would have it try every byte.)
_REGION_OPEN = re.compile(
    rb"\{(?:\n(?:(?=" + _AFTER_OPEN.pattern + rb")())?"
    rb'|(?<!<\{)(?![ \t]*+(?:[\w$.\-]++|"[^"\n]*+")[ \t]*+[=,}])())')
_INSIDE_LINE = 3
# An alias location at the end of a line, and a `{` (lines of what follows `}`s).
_ALIAS_AT_LINE_END = re.compile(rb" loc\(#[A-Za-z_0-9][\w$.\-]*\)$", re.MULTILINE)
_BRACE_AT_LINE_END = re.compile(r"\{$", re.MULTILINE)
_COMMENT: tuple[str, object] = ("comment", None)
# An allocation op's line.
_ALLOCA_PLACED: tuple[str, object] = ("alloca", None)
# Allocation ops' bodies read (`_alloca`), by their text: what a body reads as depends on
# its text alone, and the spans of a file, read by readers of their own, repeat most.
_BODIES: dict[bytes, AllocaBody] = {}
_MAX_BODIES = 1 << 16
# Likewise the lines of ops that open regions, by the reader's run-once ops (they say which
# ops are loops) and the line; what follows a region's `}` (less an alias location) checked,
# in a region its op's `(` left open (generic) or not; and the lines that close a region and
# open the next.
_REGION_OPS: dict[frozenset[str], dict[bytes, _RegionOpShape]] = {}
# The lines of ops that open regions checked (`_region_op_shape`), as templates, each with
# its op's name and whether its region opens with `({`.
_REGION_OP_NAMES: dict[str, tuple[str, bool]] = {}
# `_VALUE_NAME_BYTES`, in text (`_region_op_shape`'s templates write names alike).
_VALUE_NAME_TEXT = re.compile(_VALUE_NAME_BYTES.pattern.decode(), re.ASCII)
_CLOSINGS: tuple[set[bytes], set[bytes]] = (set(), set())  # generic, plain
_REOPENINGS: set[bytes] = set()  # `} else {`, `}, {` lines
_MAX_SHAPES = 1 << 16


class _RegionOpShape(NamedTuple):
    """What the line of an op that opens a region says of it (`_region_op_shape`)."""

    name: str  # as in OpFrame
    col: int
    header: str
    results: tuple[str, ...]
    loop_like: bool
    first_line_chars: int
    is_func: bool
    generic: bool  # its region opens with `({`


def _allocation_ops(data: bytes, start: int, end: int) -> Iterator[int]:
    """Where `_ALLOCATION_OP` matches in data[start:end], in order. (Two allocation ops on
    one line give two events, which the reader declines: that check stands in for counting
    the op names on an alloca's line.)"""
    match = _ALLOCATION_OP.match
    for hit in _NEEDLE_AT.finditer(data, start, end):
        at = hit.start()
        for offset in _NEEDLE_OFFSETS:
            begin = at - offset
            if begin >= start:
                m = match(data, begin, end)
                if m is not None:
                    yield begin
                    break


# A line's start from the offset of the newline before it (-1: none), mapped in C.
_NEXT = (1).__add__
