"""Structural scanner: one pass over an MLIR text, line by line, without a parse tree.

It finds what the allocation analysis needs and nothing more, at a speed that lets it
read dumps of hundreds of MB:

* comments and string literals (so `// CHECK: memref.alloca` and `"memref.alloca"` inside
  an attribute are not ops);
* op starts in program order (each op gets an `order` number), regions and their nesting,
  and which op owns each region; `// -----` split markers and `IR Dump After` headers;
* `#alias = ...` / `!alias = ...` definitions (kept as text, per chunk);
* every `memref.alloca` op, whose text goes to the Lark grammar (`syntax.parse_alloca`);
* for each alloca, the program point of its last use, following SSA names through
  aliasing views, yields and block arguments, with uses inside loops lifted to the end of
  the loop (see `ScanSettings`).

Output is plain records: `RawAlloca` per alloca, `OpFrame` for the region-holding ops
above them, `Diagnostic` for anything skipped (`read/records.py`).

`Scanner` is one object whose state every concern reads, so it is assembled from one mixin
per concern, each in its own module (docs/ARCHITECTURE.md says why):

* `read/lines.py`    control characters; ops spread over lines, held and read as one;
* `read/regions.py`  brackets and regions, the region stack, block labels;
* `read/ops.py`      ops in program order: a line cut into ops, results and operands;
* `read/values.py`   SSA liveness: which names hold which allocas, last uses;
* `read/allocas.py`  alloca capture and the grammar's verdict on each;
* `read/aliases.py`  `#alias` tables;
* `read/lexicon.py`  the patterns and pure one-line helpers they all use.

This module holds the state (`Scanner.__init__`), the line dispatcher (`feed_block`,
`feed_line`), chunks, notes, and the entry points (`scan_text`, `scan_file`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from sc_mlir.read.aliases import AliasTables
from sc_mlir.read.allocas import (
    _ALLOCA_NAMES,
    ALLOCATION_OPS,
    AllocaCapture,
    allocation_marks,
    allocation_op_in,
    is_skipped_allocation,
    may_allocate,
)
from sc_mlir.read.lexicon import (
    _ALIAS_BATCH,
    _BARE_OP_AFTER,
    _CONTINUATION_WORDS,
    _HEAD,
    _MAX_NOTES_PER_KIND,
    _MAX_ODD_LINE_NOTES,
    _MAYBE_REGION_OPEN,
    _MID_OP,
    _NOTE_DETAILS,
    _ODD_CHARACTER,
    _SIMPLE_LINE,
    _SPLIT_MARKER,
    _TRAILING_LOC,
    REPLACEMENT,
    _line_may_go_on,
    blank_strings,
    bracket_balance,
    code_of,
    dump_header_pass,
)
from sc_mlir.read.lines import HeldLines
from sc_mlir.read.ops import OpReading
from sc_mlir.read.records import (
    DEFAULT_NON_VIEW_OPS,
    DEFAULT_RUN_ONCE_OPS,
    DEFAULT_VIEW_OPS,
    Chunk,
    Diagnostic,
    FileScan,
    OpFrame,
    RawAlloca,
    ScanSettings,
)
from sc_mlir.read.regions import Region, RegionTracking
from sc_mlir.read.values import ValueTracking
from sc_mlir.syntax.parse import SyntaxProblem

# What the rest of the package imports from here: the careful reader's public face.
__all__ = [
    "ALLOCATION_OPS",
    "BLOCK_CHARS",
    "DEFAULT_NON_VIEW_OPS",
    "DEFAULT_RUN_ONCE_OPS",
    "DEFAULT_VIEW_OPS",
    "REPLACEMENT",
    "Chunk",
    "Diagnostic",
    "FileScan",
    "OpFrame",
    "RawAlloca",
    "ScanSettings",
    "Scanner",
    "allocation_marks",
    "allocation_op_in",
    "blank_strings",
    "bracket_balance",
    "code_of",
    "dump_header_pass",
    "is_skipped_allocation",
    "iter_file_blocks",
    "may_allocate",
    "scan_file",
    "scan_lines",
    "scan_text",
]


def _second_op_may_start(raw: str, name_end: int) -> bool:
    """Whether a line read as one plain op may hold a second op after it, written with
    results (`%c = arith.constant 0 : index %v = memref.subview %a...`) or without
    (`... : index memref.store %f, %a[%i]`, `... return`): the slow path then splits the
    line where `_MID_OP` and `_MID_BARE_OP` say (a generic op without results brings a `"`
    or an alloca, which already send the line there)."""
    return ((raw.find(" = ", name_end) >= 0 and _MID_OP.search(raw, name_end) is not None)
            or ((raw.find(".", name_end) >= 0 or raw.find("return", name_end) >= 0)
                and _BARE_OP_AFTER.search(raw, name_end) is not None))


class Scanner(HeldLines, RegionTracking, OpReading, ValueTracking, AllocaCapture,
              AliasTables):
    """Reads one file's lines. Use `scan_text` / `scan_file` rather than this directly."""

    def __init__(self, path: str, settings: ScanSettings | None = None) -> None:
        self.path = path
        self.settings = settings or ScanSettings()
        self.diagnostics: list[Diagnostic] = []
        self.allocas: list[RawAlloca] = []
        self.funcs: list[OpFrame] = []
        self.chunks: list[Chunk] = [Chunk(0, 1)]
        self.order = 0  # last program point handed out
        self.lines = 0
        self.top_count = 0
        self.live_end: list[int] = []
        self.live_end_line: list[int] = []
        self.last_op_line = 0  # line of the op numbered self.order
        self.def_depth: list[int] = []
        self.tracked: dict[str, frozenset[int]] = {}
        self.constants: dict[str, int] = {}
        self.regions: list[Region] = [Region(None, 0, 0)]
        self.brace_kinds: list[str] = []  # "R" region, "D" dict, one per open `{`
        self.nesting = 0  # open ( [ and dict braces of the current op
        self.pending_brace = False  # a `{` ended the previous line: region or dict?
        self.in_resources = False
        # An alloca whose text may go on: the op, its text so far, lines added, and the
        # grammar's complaint if the next line shows the text was complete after all.
        self.pending_alloca: tuple[RawAlloca, str, int, SyntaxProblem | None] | None = None
        self.pending_alias: tuple[str, list[str], int] | None = None  # name, parts, open
        # "=": the alias name was alone on its line; "more": the value so far is one word
        # (`loc`), which a bracket on the next line may go on.
        self.alias_state = ""
        self.nesting_line = 0  # where the open ( [ of self.nesting began
        self.nesting_before_line = 0
        self.kinds_before_line = 0
        self.line_no = 0
        # Lines held because the op on them goes on (a `<` or `[` still open, only result
        # names): read as one line once complete, with where each piece came from.
        self.held: list[tuple[int, str]] | None = None  # (line number, code) per line
        self.join_map: list[tuple[int, int, int]] | None = None  # (offset, line, col)
        self.join_text_starts: dict[int, int] = {}  # alloca -> offset of its text
        self.line_alloca_cols: list[int] = []  # op-name columns registered on this line
        self.continues_alloca = False  # this line goes on an alloca of an earlier line
        self.blanked_for: str | None = None  # the line `blanked_code` was made from
        self.blanked_code = ""
        self.raw = ""
        self.odd_lines = 0  # lines with control characters or invalid UTF-8
        self.alias_batch_after = 0  # no alias batch is tried before this line
        self.note_counts: dict[str, int] = {}  # per kind of note (see `diagnose`)
        self.first_note_of_kind: dict[str, str] = {}

    def feed_block(self, lines: list[str]) -> None:
        """Read a list of lines (without their newline). The common shapes, a plain op on
        one line, a region's first or last line, a run of alias definitions, take fast
        paths; everything else goes through `feed_line`."""
        head_match = _HEAD.match
        simple_match = _SIMPLE_LINE.fullmatch
        slow = self.feed_line
        continuation = _CONTINUATION_WORDS
        count = len(lines)
        index = 0
        while index < count:
            raw = lines[index]
            index += 1
            self.line_no += 1
            if self.held is not None and self._add_to_held(raw):
                continue
            if self.held is None and _line_may_go_on(raw) and not (
                    self.in_resources or self.pending_alias is not None) and self._hold(raw):
                continue
            if (self.nesting or self.pending_brace or self.pending_alloca is not None
                    or self.pending_alias is not None or self.in_resources):
                slow(raw)
                continue
            simple = simple_match(raw)
            if simple is not None:
                # One plain op, unless its brackets stay open (it goes on next line) or
                # it is a continuation word (`to`, `attributes`...) or an alloca.
                name = simple.group(2)
                if (raw.count("(") != raw.count(")")
                        or ("[" in raw and raw.count("[") != raw.count("]"))
                        or (name[0] != '"' and simple.group(1) is None
                            and name in continuation)
                        or _second_op_may_start(raw, simple.end(2))):
                    slow(raw)
                elif may_allocate(raw):
                    self.raw = raw
                    if name in _ALLOCA_NAMES and allocation_marks(raw) == 1:
                        self._simple_alloca(raw, simple, simple.group(1))
                    else:
                        slow(raw)
                else:
                    self._simple_op(raw, simple, name, simple.group(1))
                continue
            stripped = raw.lstrip()
            if not stripped:
                continue
            first = stripped[0]
            if "//" in raw or "\\" in raw:
                slow(raw)
                continue
            if first == "#":
                if len(self.regions) == 1:
                    # A batch that failed is not tried again from each of its lines (that
                    # was quadratic in the batch on XLA's tables, whose `fused[...]` lines
                    # fail every batch): its lines are read one by one.
                    taken = (self._alias_run(lines, index - 1)
                             if self.line_no >= self.alias_batch_after else 0)
                    if taken:
                        index += taken - 1
                        self.line_no += taken - 1
                    else:
                        if self.line_no >= self.alias_batch_after:
                            self.alias_batch_after = self.line_no + _ALIAS_BATCH
                        self._alias_line(raw)
                else:
                    slow(raw)
                continue
            if first == "}":
                if (self.brace_kinds and self.brace_kinds[-1] == "R" and '"' not in raw
                        and not may_allocate(raw) and raw.count("{") == raw.count("<{")
                        and raw.count("}") == 1 + raw.count("}>")):
                    self.raw = raw
                    self._region_close_line(raw, raw.index("}"))
                else:
                    slow(raw)
                continue
            if first != "%" and first != '"' and not (first.isalpha() or first == "_"):
                slow(raw)
                continue
            if ("{" in raw or "}" in raw) and (raw.count("{") != raw.count("<{")
                                               or raw.count("}") != raw.count("}>")):
                if (raw.endswith("({") and not may_allocate(raw)
                        and raw.count("{") == 1 + raw.count("<{")
                        and raw.count("}") == raw.count("}>")
                        and raw.count("(") == raw.count(")") + 1
                        and raw.count("[") == raw.count("]")):
                    # `"op"(...) <{...}> ({`: the op and the first of its regions. Its
                    # text ends before the `{`, as when the slow path splits the line there.
                    head = head_match(raw, 0, len(raw) - 1)
                    if head is not None and raw.count('"') == 2 and head.group(2)[0] == '"':
                        self.raw = raw
                        self._simple_op(raw, head, head.group(2), head.group(1))
                        self.nesting = 1  # the "(" of "({"
                        self.nesting_line = self.line_no
                        self.brace_kinds.append("R")
                        self._open_region()
                        continue
                slow(raw)
                continue
            if raw.count("(") != raw.count(")") or raw.count("[") != raw.count("]"):
                slow(raw)
                continue
            head = head_match(raw)
            if head is None:
                slow(raw)
                continue
            results_text, name = head.groups()
            quotes = raw.count('"')
            if quotes and not (quotes == 2 and name[0] == '"'):
                slow(raw)  # strings besides the op name: let the slow path blank them
                continue
            if ((first != "%" and first != '"' and name in continuation)
                    or _second_op_may_start(raw, head.end(2))):
                slow(raw)
                continue
            self.raw = raw
            if may_allocate(raw):
                if name in _ALLOCA_NAMES and allocation_marks(raw) == 1:
                    self._simple_alloca(raw, head, results_text)
                else:
                    slow(raw)
                continue
            self._simple_op(raw, head, name, results_text)

    def finish(self) -> FileScan:
        if self.held is not None:
            self._flush_held()
        self._end_chunk(final=True)
        if self.odd_lines > _MAX_ODD_LINE_NOTES:
            self.diagnose(self.line_no, 1, f"{self.odd_lines - _MAX_ODD_LINE_NOTES} more "
                          "line(s) with control bytes or invalid UTF-8, read the same way")
        for kind, count in self.note_counts.items():
            if count > _MAX_NOTES_PER_KIND:
                self.diagnostics.append(Diagnostic(
                    self.path, self.line_no, 1, f"{count - _MAX_NOTES_PER_KIND} more note(s) "
                    f"like: {self.first_note_of_kind[kind]} (not listed)"))
        for alloca in self.allocas:
            alloca.live_end = self.live_end[alloca.index]
            alloca.live_end_line = self.live_end_line[alloca.index]
        return FileScan(self.path, self.allocas, self.chunks, self.diagnostics,
                        self.line_no, self.order, self.funcs)

    def diagnose(self, line: int, col: int, message: str, quote: str = "",
                 mapped: bool = False) -> None:
        """Note a problem. Every skipped alloca is listed; other notes are listed up to
        `_MAX_NOTES_PER_KIND` of each kind per file, and the rest counted (a line of
        500,000 `}` must not make 500,000 notes)."""
        if not message.startswith("memref.alloca skipped"):
            kind = _NOTE_DETAILS.sub("", message)
            count = self.note_counts.get(kind, 0) + 1
            self.note_counts[kind] = count
            if count == 1:
                self.first_note_of_kind[kind] = message
            elif count > _MAX_NOTES_PER_KIND:
                return
        if self.join_map is not None and not mapped and line == self.line_no and col > 0:
            line, col = self._position(col - 1)  # a column in lines read as one
        quote = quote[:4096].strip()
        if len(quote) > 120:
            quote = quote[:117] + "..."
        self.diagnostics.append(Diagnostic(self.path, line, col, message, quote))

    def feed_line(self, raw: str) -> None:
        raw = raw.rstrip("\r\n")
        self.raw = raw
        self.line_alloca_cols.clear()
        if self.in_resources:
            if "#-}" in raw:
                self.in_resources = False
            elif "memref.alloca" in raw:
                self._check_mentions(code_of(raw)[0])  # not an op: say so
            return
        code, unterminated = code_of(raw)
        stripped = code.strip()
        if not stripped:
            if raw.lstrip().startswith("//") and _SPLIT_MARKER.match(raw):
                self._split(raw)
            return
        if "}" in code and "=" in code and ("#" in code or "!" in code) and (
                self.pending_alias is None and self.pending_alloca is None):
            at = self._alias_after_close(code)
            if at is not None:  # `} loc(#loc)  #loc1 = loc(...)`: two lines in one
                self.feed_line(raw[:at])
                self._rest_of_line(raw, at)
                return
        if unterminated:
            self.diagnose(self.line_no, raw.find('"') + 1,
                          "string literal is not closed on its line; read to end of line",
                          raw)
        if self.pending_alias is not None and self._continue_alias(raw, code):
            if "memref.alloca" in raw[: len(code)]:
                self._check_mentions(code)
            return
        self.continues_alloca = False
        if self.pending_alloca is not None:
            self.continues_alloca = self._continue_alloca(code, stripped)
        elif stripped[0] == "l" and self.allocas and _TRAILING_LOC.match(code):
            self._trailing_loc(code)
        if self.pending_brace:
            self._decide_pending_brace(stripped)
        if len(self.regions) == 1 and stripped[0] in "#!" and self.nesting == 0:
            self._alias_definition(raw, code)
            if "memref.alloca" in raw[: len(code)]:
                self._check_mentions(code)
            return
        if len(self.regions) == 1 and stripped.startswith("{-#"):
            self.in_resources = "#-}" not in stripped
            return
        # What earlier lines left open (a `{` ending the last line now decided), before
        # this line adds its own brackets.
        self.nesting_before_line = self.nesting
        self.kinds_before_line = len(self.brace_kinds)
        if "{" in code or "}" in code:
            if (
                code.count("{") == code.count("}")
                and stripped[0] != "}"
                and _MAYBE_REGION_OPEN.search(code) is None
            ):
                self._segment(code, 0, len(code), after_close=False)
            else:
                self._walk_braces(code)
        else:
            self._segment(code, 0, len(code), after_close=False)
        if "memref.alloca" in raw[: len(code)]:  # the generic name is a string: blanked
            self._check_mentions(code)

    def _rest_of_line(self, raw: str, at: int) -> None:
        """Read raw[at:] as a line of its own (blanks before it keep the columns)."""
        self.feed_line(" " * at + raw[at:])

    def _split(self, raw: str) -> None:
        self._end_chunk(final=False)
        self.chunks.append(Chunk(len(self.chunks), self.line_no + 1, dump_header_pass(raw)))

    def _end_chunk(self, final: bool) -> None:
        if self.in_resources:
            self.in_resources = False
            self.diagnose(self.line_no, 1, "a '{-#' resources section is not closed before "
                          f"the end of the {'file' if final else 'chunk'}; its lines were "
                          "skipped")
        if self.pending_alias is not None:
            name, parts, _ = self.pending_alias
            self.pending_alias = None
            state, self.alias_state = self.alias_state, ""
            if state == "more":
                self._define_alias(name, parts[0])  # complete as it stands
            elif not parts:
                self.diagnose(self.line_no, len(self.raw) + 1,
                              f"the {'file' if final else 'chunk'} ends "
                              f"after '{name} =': the alias has no value")
            else:
                self._define_alias(name, " ".join(parts))
                self.diagnose(self.line_no, 1, f"alias {name} is not closed before the end "
                              f"of the {'file' if final else 'chunk'}; kept as read")
        if self.pending_alloca is not None:
            alloca, text, _, _ = self.pending_alloca
            self._alloca_failed(alloca, text, SyntaxProblem(len(text), "text ends inside the op",
                                                            True))
        if self.pending_brace:
            self.pending_brace = False
            if self.brace_kinds and self.brace_kinds[-1] == "P":
                self.brace_kinds[-1] = "R"
                self._open_region()
        if len(self.regions) > 1:
            open_frame = self.regions[1].owner
            where = (f" (opened by {open_frame.name} at line {open_frame.line})"
                     if open_frame else "")
            self.diagnose(self.line_no, 1,
                          f"{len(self.regions) - 1} region(s) still open at the end of the "
                          f"{'file' if final else 'chunk'}{where}; closed here")
            while len(self.regions) > 1:
                self._close_region()
        if self.nesting > 0:
            self._unclosed_bracket(f"at the end of the {'file' if final else 'chunk'}")
        root = self.regions[0]
        if root.cur_order >= 0:
            self._finish_op(root)
            root.cur_order = -1
        self.regions = [Region(None, 0, 0)]
        self.brace_kinds.clear()
        self.nesting = 0
        self.tracked.clear()
        self.constants.clear()


def scan_lines(path: str, lines: Iterable[str], settings: ScanSettings | None = None) -> FileScan:
    scanner = Scanner(path, settings)
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= 65536:
            scanner.feed_checked(batch)
            batch = []
    scanner.feed_checked(batch)
    return scanner.finish()


def scan_text(text: str, path: str = "<text>", settings: ScanSettings | None = None) -> FileScan:
    # Lines end at "\n" only, as MLIR counts them (str.splitlines would also split at
    # form feeds and other separators MLIR treats as text).
    """Scan MLIR held in a string.

    >>> scan = scan_text('func.func @f() {\\n  %a = memref.alloca() : memref<4xf32>\\n}')
    >>> [(a.line, a.col, a.results, a.frames[-1].name) for a in scan.allocas]
    [(2, 8, ('%a',), 'func.func')]
    """
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return scan_lines(path, _without_cr(lines) if "\r" in text else lines, settings)


def _without_cr(lines: list[str]) -> list[str]:
    """MLIR counts lines at "\n" only and reads a "\r" as a blank that also ends a `//`
    comment: CRs at the end go (CRLF, CR CR LF), a comment ended by a CR is blanked, and
    any other CR becomes a space, which keeps the columns."""
    return [_cr_as_mlir_reads_it(line) if "\r" in line else line for line in lines]


_COMMENT_TO_CR = re.compile(r"//[^\r]*\r")


def _cr_as_mlir_reads_it(line: str) -> str:
    line = line.rstrip("\r")
    if "//" in line:
        line = _COMMENT_TO_CR.sub(lambda m: " " * len(m.group()), line)
    return line.replace("\r", " ")


BLOCK_CHARS = 1 << 22


def iter_file_blocks(path: str, on_bytes: Callable[[int], None] | None = None
                     ) -> Iterator[tuple[list[str], bool]]:
    """The lines of a file without their newlines, in lists read a large block at a time
    (fast, and the memory held is one block, whatever the file's size), each with whether
    it holds control characters or invalid UTF-8 (one search per block). `on_bytes` is
    told the bytes of each block once the caller has taken it in (asks for the next)."""
    # newline="": no universal newlines, which would end a line at a lone "\r" too.
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        tail = ""
        position = 0
        while block := handle.read(BLOCK_CHARS):
            text = tail + block
            suspect = _ODD_CHARACTER.search(text) is not None
            lines = text.split("\n")
            tail = lines.pop()
            yield (_without_cr(lines) if "\r" in text else lines), suspect
            if on_bytes is not None:
                # Bytes, not characters: where the binary buffer under the text is.
                now = handle.buffer.tell()
                on_bytes(now - position)
                position = now
        if tail:
            yield _without_cr([tail]), _ODD_CHARACTER.search(tail) is not None


def scan_file(path: str, settings: ScanSettings | None = None,
              on_bytes: Callable[[int], None] | None = None) -> FileScan:
    """Scan a file; `on_bytes` (if given) is told the bytes read as the scan goes."""
    scanner = Scanner(path, settings)
    for lines, suspect in iter_file_blocks(path, on_bytes):
        scanner.feed_checked(lines, suspect)
    return scanner.finish()
