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
above them, `Diagnostic` for anything skipped.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from sc_mlir.syntax.parse import (
    AllocaSyntax,
    SyntaxProblem,
    parse_alloca,
    parse_alloca_parts,
    parse_location,
)

# --- settings --------------------------------------------------------------------------

# Ops whose regions run once per execution of the op. A use inside such a region is a
# use at that point; inside any other region-holding op (a loop, or an op sc-mlir does not
# know) the value must stay live until the op ends, because the region may run again.
DEFAULT_RUN_ONCE_OPS: frozenset[str] = frozenset({
    "tpu.region", "scf.if", "scf.index_switch", "scf.execute_region", "affine.if",
    "memref.alloca_scope", "func.func", "gpu.func", "llvm.func", "spirv.func", "tt.func",
    "builtin.module", "module", "gpu.module", "spirv.module", "gpu.launch", "func",
})

# Ops whose results are views of (alias) their memref operand.
DEFAULT_VIEW_OPS: frozenset[str] = frozenset({
    "memref.subview", "memref.cast", "memref.reinterpret_cast", "memref.view",
    "memref.expand_shape", "memref.collapse_shape", "memref.transpose",
    "memref.memory_space_cast", "memref.assume_alignment",
    "memref.extract_strided_metadata", "tpu.memref_slice", "tpu.memref_squeeze",
    "tpu.memref_reshape", "tpu.memref_bitcast", "bufferization.to_tensor",
    "arith.select", "builtin.unrealized_conversion_cast",
})

# Ops known to read through a memref without producing a view of it, although their
# pretty form prints a memref type. Everything else with results of memref type is
# treated as a view (conservative: it can only lengthen a live range).
DEFAULT_NON_VIEW_OPS: frozenset[str] = frozenset({
    "memref.load", "affine.load", "vector.load", "vector.maskedload",
    "vector.transfer_read", "vector.gather", "vector.expandload", "affine.vector_load",
    "tpu.vector_load", "tpu.load", "tpu.strided_load", "memref.dim", "memref.rank",
    "memref.atomic_rmw", "memref.extract_aligned_pointer_as_index",
})


@dataclass(frozen=True)
class ScanSettings:
    run_once_ops: frozenset[str] = DEFAULT_RUN_ONCE_OPS
    view_ops: frozenset[str] = DEFAULT_VIEW_OPS
    non_view_ops: frozenset[str] = DEFAULT_NON_VIEW_OPS


# --- records ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnostic:
    """Something sc-mlir skipped or could not read, and where."""

    file: str
    line: int
    col: int
    message: str
    quote: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}"
        quote = f"\n    {self.quote}" if self.quote else ""
        return f"{where}: {self.message}{quote}"


@dataclass(eq=False)
class OpFrame:
    """An op that holds regions (func, module, loop, tpu.region...), as met by the scanner."""

    name: str
    order: int
    line: int
    col: int
    header: str
    results: tuple[str, ...]
    parent: OpFrame | None
    sibling_index: int
    loop_like: bool
    chunk: int
    top_index: int = -1  # position among the top-level ops of the file
    end_order: int = -1
    end_line: int = -1  # the line where its last region closes
    first_line_chars: int = 0  # how much of `header` is the op's first line
    # The first block's label of its first region, when printed (`^bb0(%arg0: ...):`, as
    # the generic form names a func's arguments): line, 1-based column, text.
    entry_block: tuple[int, int, str] | None = None
    trailer: list[str] = field(default_factory=list)
    pending: set[int] | None = None  # allocas whose live range reaches this op's end

    def attribute_text(self) -> str:
        """Header and the text after its regions (generic form prints attrs there)."""
        return self.header if not self.trailer else self.header + " " + " ".join(self.trailer)

    def ancestors(self) -> list[OpFrame]:
        chain: list[OpFrame] = []
        frame: OpFrame | None = self
        while frame is not None:
            chain.append(frame)
            frame = frame.parent
        chain.reverse()
        return chain


@dataclass(eq=False)
class RawAlloca:
    """A `memref.alloca` op found by the scanner, before the model gives it meaning."""

    index: int  # ordinal among the file's allocas
    order: int  # program point
    line: int
    col: int  # 1-based column of the op name
    text_col: int  # 1-based column where `text` starts (its first result name)
    text: str
    results: tuple[str, ...]
    frames: tuple[OpFrame, ...]  # region-holding ops around it, outermost first
    chunk: int
    syntax: AllocaSyntax | None = None
    size_constants: tuple[int | None, ...] = ()  # values of the dynamic size operands
    live_end: int = -1
    live_end_line: int = -1  # dump line of the op at live_end


@dataclass
class Chunk:
    """One module or `// -----` chunk: its aliases and where its text starts."""

    index: int
    line: int
    header: str | None = None  # pass name from an `IR Dump After ...` line
    aliases: dict[str, str] = field(default_factory=dict)


@dataclass
class FileScan:
    path: str
    allocas: list[RawAlloca]
    chunks: list[Chunk]
    diagnostics: list[Diagnostic]
    lines: int
    ops: int
    funcs: list[OpFrame] = field(default_factory=list)  # func-like ops (`*.func`, `func`)


# --- lexical helpers -------------------------------------------------------------------

# MLIR's rule (mlir/lib/Support/ToolUtilities.cpp): `// -----` not followed by another
# dash ("doesn't have any dash post"; a longer rule of dashes is a near miss, a comment).
# `// -----// IR Dump After` headers are separators.
_SPLIT_MARKER = re.compile(r"\s*// -----(?!-)")
_DUMP_HEADER = re.compile(r"IR Dump (?:Before|After) ")
# Every pattern here runs in time linear in the line: no two ways to match the same text
# (string bodies are unrolled, alternatives start with different characters), so a
# pathological line costs what a long plain one does (bench/pathological.py).
_STRING_OR_COMMENT = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+("?)|//')
_HEAD = re.compile(
    r"[ \t]*(?:(?P<results>%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*)[ \t]*=[ \t]*)?"
    r"(?P<name>\"[^\"\n]*\"|[A-Za-z_][\w$.]*)"
)
# A whole line that is one plain op: its head (groups 1 and 2 as in _HEAD), then only text
# without strings, comment marks or backslashes, where braces appear only as `<{...}>`
# properties or a one-line `{name = ...}` attribute dict. Unrolled: Python's engine is slow
# at an alternation per character.
_PLAIN = r'[^{}<"/\\\n]*'
_SIMPLE_LINE = re.compile(
    r"[ \t]*(?:(%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*)[ \t]*=[ \t]*)?"
    r'("[\w.$\-]+"|[A-Za-z_][\w$.]*)'
    + _PLAIN
    + r'(?:(?:<\{[^{}"/\\\n]*\}>|\{[ \t]*[A-Za-z_][\w$.\-]*[ \t]*(?:[=,][^{}"/\\\n]*)?\}|<(?!\{))'
    + _PLAIN
    + r")*"
)
_SSA = re.compile(r"%[\w$.\-]+")
_RESULT_NAME = re.compile(r"%[\w$.\-]+")
_BLOCK_ARG = re.compile(r"(%[\w$.\-]+)[ \t]*:")
_BRACE = re.compile(r"[{}]")
# A `{` that does not open an attribute dictionary on the same line.
_MAYBE_REGION_OPEN = re.compile(r'(?<!<)\{(?![ \t]*(?:[\w$.\-]+|"[^"\n]*")[ \t]*[=,}])')
_DICT_ENTRY = re.compile(r'[ \t]*(?:[A-Za-z_][\w$.\-]*|"[^"\n]*")[ \t]*[=,]')
_DICT_AFTER_BRACE = re.compile(r'[ \t]*(?:(?:[A-Za-z_][\w$.\-]*|"[^"\n]*")[ \t]*[=,}]|\})')
REPLACEMENT = "\ufffd"
# Control characters MLIR text never holds (tab, CR and LF aside), and U+FFFD, which is
# what invalid UTF-8 decodes to. A crashed compile can leave NUL blocks in a dump; an ESC
# from a dump must not reach a terminal.
_CONTROL_CHARACTER = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
_ODD_CHARACTER = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\ufffd]")
_MAX_ODD_LINE_NOTES = 20
_MAX_NOTES_PER_KIND = 20
# What varies between notes of one kind: numbers, names, quoted text.
_NOTE_DETAILS = re.compile(r"\d+|[#!@%][\w$.\-]+|'[^']*'|\([^()]*\)")
# An op with results, which never sits inside another op's brackets.
_NEW_OP = re.compile(r'[ \t]*%[\w$.\-]++(?::\d+)?+(?:[ \t]*,[ \t]*%[\w$.\-]++(?::\d+)?+)*+'
                     r'[ \t]*=[ \t]*(?:"[\w$.\-]+"[ \t]*\(|[A-Za-z_][\w$]*\.[\w$.]+)')
_BLANKS_TO_END = re.compile(r"\s*+$")
# A line that starts an op of its own: results and `=`, then an op name (a string followed
# by `(` alone may be a name location going on: `loc(callsite(` then `"f"("a.py":1:2)`).
_OP_LINE_START = re.compile(r'[ \t]*+%[\w$.\-]++(?::\d++)?+(?:[ \t]*+,[ \t]*+%[\w$.\-]++'
                            r'(?::\d++)?+)*+[ \t]*+=[ \t]*+(?:"|[A-Za-z_][\w$]*+\.)')
# A line that is only result names (`%a`, `%a, %b =`): its op goes on on the next line.
_RESULTS_ONLY = re.compile(r"[ \t]*%[\w$.\-]++(?::\d++)?+(?:[ \t]*,[ \t]*%[\w$.\-]++(?::\d++)?+)*+"
                           r"[ \t]*+[,=]?[ \t]*+")
_ALIAS_NAME_ALONE = re.compile(r"[ \t]*([#!][\w$.\-]+)[ \t]*")
# A top-level op after an alias value on the same line.
_OP_AFTER_VALUE = re.compile(r'(?<![\w$.\-#!%@^"])(module\b|"[\w$.\-]++"[ \t]*+\(|'
                             r'[A-Za-z_][\w$]*+\.[\w$.]++)')
_ALIAS_IN_LINE = re.compile(r"(?<![\w$.\-#!%@^\"])[#!][\w$.\-]++[ \t]*+=(?![=>])")
_ALIAS_NAME_AT_END = re.compile(r"(?<=[\s)>\]}\"])[ \t]*+([#!][\w$.\-]++)[ \t]*+$")
_NEXT_ALIAS = re.compile(r"(?<=[\s)>\]}])[ \t]*+([#!][\w$.\-]++)[ \t]*+=")
# Result names after a region's `{` or an op's `)`, their `=` on the next line.
_RESULTS_TAIL = re.compile(r"[{)>\]][ \t]*+%[\w$.\-]++(?::\d++)?+"
                           r"(?:[ \t]*+,[ \t]*+%[\w$.\-]++(?::\d++)?+)*+[ \t]*+[,=]?$")
_OP_AFTER_CLOSE = re.compile(r"[ \t]*+([A-Za-z_][\w$]*+\.[\w$.]++)(?=[ \t(]|$)")
_NEXT_STATEMENT = re.compile(r'(?:[A-Za-z_][\w$]*+(?:\.[\w$.]++)?+|"[\w$.\-]++"|%[\w$.\-]++)'
                             r'(?![\w$.(])|"[\w$.\-]++"[ \t]*+\(')
_PROPERTIES = re.compile(r"<\s*\{[^{}]*\}\s*>")
_BARE_WORD = re.compile(r"[#!]?[A-Za-z_][\w$.]*")
_LOC_KEYWORD_AT_END = re.compile(r"(?<![\w$.#!%@\-])loc$")
_OPEN_DICT_ENTRY = re.compile(r'\{[ \t]*+(?:[A-Za-z_][\w$.\-]*+|"[^"\n]*")[ \t]*+$')
_TRAILING_LOC = re.compile(r"[ \t]*loc[ \t]*\(")
# Last characters of a line whose op cannot end there (`%a = memref.alloca() :`); blanks
# after them send the line to the careful test.
_OPEN_ENDINGS = frozenset(":=, \t")
# Where a second op may start on a line, after a blank: `%x = dialect.op`, `%x = "op"`, a
# generic `"dialect.op"(`, or a statement-form `memref.alloca(`. Taken as an op start
# only where the brackets opened since the previous op are closed (`_op_starts`). One
# result name only: a pattern over a comma list would rescan it from every `%`.
_MID_OP = re.compile(r'(?<=[ \t)\]>}])(?:%[\w$.\-]++(?::\d++)?+[ \t]*+=[ \t]*+'
                     r'(?:"[\w$.\-]++"|[A-Za-z_][\w$]*+\.[\w$.]++)|"[\w$.\-]++"[ \t]*+\(|'
                     r'memref\.alloca[ \t]*+\()')
_ALIAS_DEF = re.compile(r"[ \t]*([#!][\w$.\-]+)[ \t]*=[ \t]*")
# Greedy on purpose (a lazy value followed by optional blanks backtracks at every
# character); batches with trailing blanks are read line by line instead.
_ALIAS_PAIR = re.compile(r"^(#[\w$.\-]+)[ \t]*=[ \t]*([^ \t\n][^\n]*)$", re.MULTILINE)
_ALIAS_BATCH = 512
_CONSTANT = re.compile(
    r"(?:value[ \t]*=[ \t]*|constant\"?[ \t]+)(-?\d+)[ \t]*:[ \t]*(?:index|[su]?i\d+)"
)
_PRETTY_MENTION = re.compile(r'(?<![\w$.])memref\.alloca(?![\w$.])')
_GENERIC_MENTION = re.compile(r'"memref\.alloca"[ \t]*\(')
_CONTINUATION_WORDS = frozenset({
    "attributes", "to", "step", "iter_args", "else", "do", "ins", "outs", "loc", "at",
    "shared_outs", "reduce", "init", "dimensions", "by", "into", "from",
})
# The ops captured as allocations (grammar/alloca.lark): the scoped `memref.alloca`, the
# heap's `memref.alloc` and Mosaic's semaphores, `tpu.sem_alloc`.
ALLOCATION_OPS = ("memref.alloca", "memref.alloc", "tpu.sem_alloc")
_ALLOCA_NAMES = frozenset(name for op in ALLOCATION_OPS for name in (op, f'"{op}"'))


def may_allocate(text: str) -> bool:
    """Whether text may hold an allocating op ("memref.alloc" is in "memref.alloca" too)."""
    return "memref.alloc" in text or "tpu.sem_alloc" in text


def allocation_marks(text: str) -> int:
    return text.count("memref.alloc") + text.count("tpu.sem_alloc")


_ALLOCATION_OP = re.compile(r"memref\.alloca?(?![\w$.])|tpu\.sem_alloc")
_SKIPPED = re.compile(r"(?:memref\.alloca?|tpu\.sem_alloc) skipped: ")


def allocation_op_in(text: str) -> str:
    """The allocating op an op's text names ("memref.alloca" when it names none)."""
    m = _ALLOCATION_OP.search(text)
    return m.group() if m is not None else "memref.alloca"


def is_skipped_allocation(diagnostic: Diagnostic) -> bool:
    """Whether a note says an allocating op could not be read."""
    return _SKIPPED.match(diagnostic.message) is not None
_MISSING = object()
# An op whose text never completes (a lost `>`) is given up after this many lines.
_MAX_OP_LINES = 64
# Enough of a region op's header lines to find its symbol and attributes.
_MAX_HEADER_LINES = 64


def blank_strings(line: str) -> tuple[str, bool]:
    """The code part of a line: string contents replaced by spaces (same length), the
    comment cut off. Also says whether a string was left unterminated.

    >>> blank_strings('"a.b"(%0) {s = "x{%y"} // memref.alloca')
    ('"   "(%0) {s = "    "} ', False)
    """
    pieces: list[str] = []
    pos = 0
    unterminated = False
    for m in _STRING_OR_COMMENT.finditer(line):
        token = m.group()
        if token == "//":
            pieces.append(line[pos : m.start()])
            return "".join(pieces), unterminated
        if not m.group(1):
            unterminated = True
        pieces.append(line[pos : m.start()])
        pieces.append('"' + " " * (len(token) - 2) + token[-1] if len(token) >= 2 else '"')
        pos = m.end()
    pieces.append(line[pos:])
    return "".join(pieces), unterminated


def dump_header_pass(line: str) -> str | None:
    """The pass named by `// -----// IR Dump After Pass (arg) //----- //`, if any.

    >>> dump_header_pass("// -----// IR Dump After Canonicalizer (canonicalize) //----- //")
    'Canonicalizer (canonicalize)'
    """
    m = _DUMP_HEADER.search(line)
    if m is None:
        return None
    rest = line[m.end():]
    cut = rest.find("//-----")
    return (rest if cut < 0 else rest[:cut]).strip()


def code_of(line: str) -> tuple[str, bool]:
    """Fast path of `blank_strings` for lines whose strings cannot hide anything: no
    escapes, and no brace, value name or comment marker inside a string."""
    quotes = line.count('"')
    if quotes == 0 or (quotes % 2 == 0 and "\\" not in line
                       and not any("{" in s or "}" in s or "%" in s or "//" in s
                                   for s in line.split('"')[1::2])):
        cut = line.find("//")
        return (line if cut < 0 else line[:cut]), False
    return blank_strings(line)


# --- the scanner -----------------------------------------------------------------------


class _Region:
    """A region on the scanner's stack, and the op currently being read inside it."""

    __slots__ = (
        "_frames",
        "alloca_ids",
        "child_counts",
        "cur_extra",
        "cur_frame",
        "cur_head",
        "cur_line",
        "cur_order",
        "cur_pending",
        "depth",
        "had_ops",
        "labels",
        "multi_block",
        "owner",
        "saved_nesting",
        "saved_nesting_line",
        "undo",
        "used",
    )

    def __init__(self, owner: OpFrame | None, depth: int, saved_nesting: int) -> None:
        self.owner = owner
        self.depth = depth
        self._frames: tuple[OpFrame, ...] | None = None
        self.undo: list[tuple[dict, str, object]] = []
        self.had_ops = False
        self.labels = 0
        self.multi_block = False
        self.alloca_ids: list[int] = []
        self.used: set[int] | None = None
        self.child_counts: dict[str, int] = {}
        # The op being read in this region: its program point, the match of its head
        # (name and results are read from it only if the op opens a region), its line,
        # header text from continuation lines, and its frame once it has a region.
        self.cur_order = -1
        self.cur_head: re.Match[str] | None = None
        self.cur_line = 0
        self.cur_extra: list[str] | None = None
        self.cur_frame: OpFrame | None = None
        self.cur_pending: set[int] | None = None
        self.saved_nesting = saved_nesting
        self.saved_nesting_line = 0

    @property
    def frames(self) -> tuple[OpFrame, ...]:
        """The region-holding ops around this region, outermost first. Made when an alloca
        needs them: a tuple per region would cost depth^2 in a deep nest."""
        frames = self._frames
        if frames is None:
            frames = self._frames = tuple(self.owner.ancestors()) if self.owner else ()
        return frames


class Scanner:
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
        self.regions: list[_Region] = [_Region(None, 0, 0)]
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

    # -- driving ---------------------------------------------------------------------

    def feed_checked(self, lines: list[str], suspect: bool | None = None) -> None:
        """`feed_block`, after replacing control characters (NUL, ESC...) with spaces (the
        columns stay, and an op after a run of NULs is still read) and reporting them and
        invalid UTF-8 (already U+FFFD), line by line. `suspect` says
        whether the block may hold any (None: look)."""
        if suspect is None:
            suspect = any(_ODD_CHARACTER.search(line) for line in lines)
        if suspect:
            first = self.line_no + 1
            for offset, line in enumerate(lines):
                m = _ODD_CHARACTER.search(line)
                if m is not None:
                    lines[offset] = self._odd_line(line, m, first + offset)
        self.feed_block(lines)

    def _odd_line(self, line: str, m: re.Match[str], line_no: int) -> str:
        self.odd_lines += 1
        char = m.group()
        if self.odd_lines <= _MAX_ODD_LINE_NOTES:
            what = ("invalid UTF-8 in the text; its bytes read as U+FFFD" if char == REPLACEMENT
                    else f"control byte 0x{ord(char):02x}" + (" (NUL)" if char == "\0" else "")
                    + " in the text; read as a space")
            cleaned = _CONTROL_CHARACTER.sub(" ", line)
            self.diagnose(line_no, m.start() + 1, what, cleaned)
            return cleaned
        return _CONTROL_CHARACTER.sub(" ", line)

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
                            and name in continuation)):
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
            if first != "%" and first != '"' and name in continuation:
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

    def _next_op(self, head: re.Match[str]) -> _Region:
        """A one-line op starts in the current region: the previous one ends, this one
        gets the next program point."""
        region = self.regions[-1]
        if region.cur_order >= 0 and (region.cur_pending or region.cur_frame is not None):
            self._finish_op(region)
        self.order += 1
        self.last_op_line = self.line_no
        region.had_ops = True
        region.cur_order = self.order
        region.cur_head = head
        region.cur_line = self.line_no
        region.cur_extra = None
        return region

    def _simple_op(self, raw: str, head: re.Match[str], name: str, results_text: str | None
                   ) -> None:
        """A complete op on one line with no regions, no strings but its name, no comment:
        what `_start_op` does, without the checks that such a line cannot need."""
        region = self._next_op(head)
        results: tuple[str, ...] = ()
        if results_text:
            results = _results_of(results_text)
            tracked, constants = self.tracked, self.constants
            for result in results:
                if result in tracked or result in constants:
                    self._shadow(results, region)
                    break
        ids: frozenset[int] = frozenset()
        name_end = head.end(2)
        if self.tracked and raw.find("%", name_end) >= 0:
            ids = self._uses(raw, name_end, len(raw), region)
        bare = name[1:-1] if name[0] == '"' else name
        if results:
            if bare == "arith.constant":
                self._bind(self.constants, results[0], raw, region)
            elif ids and self._makes_view(bare, raw[name_end:], name[0] == '"'):
                for result in results:
                    self._bind(self.tracked, result, ids, region)
        elif ids and _passes_values_out(bare):
            self._yielded(ids)

    def _simple_alloca(self, raw: str, head: re.Match[str], results_text: str | None) -> None:
        """A `memref.alloca` alone on its line, with no string but its name."""
        region = self._next_op(head)
        results = _results_of(results_text) if results_text else ()
        if results and (self.tracked or self.constants):
            self._shadow(results, region)
        op_start = head.start(1) if results_text else head.start(2)
        text = raw[op_start:].rstrip()
        alloca = self._register_alloca(head.start(2) + 1, op_start + 1, text, results, region)
        self.line_alloca_cols.clear()
        body_at = head.start(2) - op_start
        loc_at = text.rfind(" loc(")
        try:
            if loc_at > body_at and text.endswith(")"):
                syntax = parse_alloca_parts(results_text or "", text[body_at:loc_at],
                                            text[loc_at + 1 :])
            else:
                syntax = parse_alloca_parts(results_text or "", text[body_at:], "")
        except SyntaxProblem:
            self._parse_alloca(alloca, text, lines_added=0)  # reports where, or continues
            return
        alloca.syntax = syntax
        if syntax.dynamic_sizes:
            alloca.size_constants = tuple(_constant_value(self.constants.get(n))
                                          for n in syntax.dynamic_sizes)

    def _region_close_line(self, raw: str, at: int) -> None:
        """`}) : (...) -> () loc(...)`: one region closes; the rest belongs to its op."""
        self.brace_kinds.pop()
        self._close_region()
        trailer = raw[at + 1 :]
        if trailer.strip():
            m = _OP_AFTER_CLOSE.match(raw, at + 1)
            if m is not None and m.group(1) not in _CONTINUATION_WORDS:
                # `}  func.func @g() {`: the trailer is the next op (no strings or
                # comments on this line: the raw text is its code)
                self.nesting_before_line = self.nesting
                self._segment(raw, at + 1, len(raw), after_close=True)
                return
            region = self.regions[-1]
            if region.cur_frame is not None:
                region.cur_frame.trailer.append(trailer)
            if self.tracked and "%" in trailer:
                self._uses(trailer, 0, len(trailer), region)
            self._count_nesting(trailer)

    def _alias_run(self, lines: list[str], start: int) -> int:
        """Take the plain one-line alias definitions from lines[start:] (the `#loc` tables
        that close a dump are tens of thousands of them), a batch at a time: a batch is
        taken whole when every line is `#name = value` and nothing in it needs the line-
        by-line reading (brackets other than parentheses, comments, escapes, strings or
        parentheses left open). Returns how many lines were taken."""
        aliases = self.chunks[-1].aliases
        count = len(lines)
        index = start
        while index < count:
            end = index
            limit = min(index + _ALIAS_BATCH, count)
            while end < limit and lines[end][:1] == "#":
                end += 1
            if end < count and end > index and (
                    lines[end].lstrip()[:1] in "(<[{=/"
                    or _BARE_WORD.fullmatch(lines[end - 1].partition("=")[2].strip())):
                end -= 1  # the last value may go on on the next line: read it line by line
            if end <= index:
                break
            text = "\n".join(lines[index:end])
            if ("<" in text or "[" in text or "{" in text or "\\" in text or "//" in text
                    or text.count("=") != end - index  # two definitions on a line
                    or may_allocate(text)
                    or "\t" in text or " \n" in text or text.endswith(" ")
                    or text.count("(") != text.count(")") or text.count('"') % 2):
                break
            pairs = _ALIAS_PAIR.findall(text)
            if len(pairs) != end - index:
                break
            new = dict(pairs)
            if len(new) != len(pairs) or not aliases.keys().isdisjoint(new.keys()):
                break  # a name defined twice: read line by line, which reports it
            aliases.update(new)
            index = end
        return index - start

    def _alias_line(self, raw: str) -> None:
        """`#name = value` at the top level, on one line or opening a multi-line value."""
        self.raw = raw
        m = _ALIAS_DEF.match(raw)
        if (m is None or raw.count('"') % 2 or may_allocate(raw)
                or _OP_AFTER_VALUE.search(raw, m.end())):
            self.feed_line(raw)
            return
        value = raw[m.end():].strip()
        if "<" in value or "[" in value or "{" in value:
            still_open = bracket_balance(value)
        else:
            still_open = value.count("(") - value.count(")")
        self._start_alias(m.group(1), value, still_open)

    # -- ops spread over lines -------------------------------------------------------

    def _hold(self, raw: str) -> bool:
        """Hold a line whose op goes on (MLIR allows a line break wherever it allows a
        blank): a `<` or `[` left open, or only result names. False: read it now."""
        code, unterminated = code_of(raw)
        first = code.lstrip()[:1]
        if not first or first == "^" or (len(self.regions) == 1 and first in "#!"):
            return False  # comments, block labels, alias definitions (their own rule)
        if unterminated:
            return False  # a string cannot span lines: joined, the quotes would pair up anew
        if not _goes_on(code):
            return False
        if self.nesting > 0 and code.rstrip().endswith(":"):
            return False  # `unknown)):` ends a block label whose arguments span lines
        self.held = [(self.line_no, raw[: len(code)])]
        return True

    def _add_to_held(self, raw: str) -> bool:
        """The line after held ones: add it (True), or, when it cannot go on the held op
        (a new op, a block label, a region's end, too many lines), read the held lines as
        they are and then this one as usual (False)."""
        held = self.held
        assert held is not None
        code, unterminated = code_of(raw)
        stripped = code.strip()
        if not stripped and not unterminated:
            return True  # a blank or comment line inside the op
        if (unterminated or _NEW_OP.match(code) or _OP_LINE_START.match(code)
                or stripped[0] == "^"
                or len(held) >= _MAX_OP_LINES
                or (stripped[0] == "}" and stripped[:2] != "}>" and not _dict_open(
                    code_of(" ".join(text for _, text in held))[0]))):
            self._flush_held()
            return False
        held.append((self.line_no, raw[: len(code)]))
        if _goes_on(code_of(" ".join(text for _, text in held))[0]):
            return True
        self._flush_held()
        return True

    def _flush_held(self) -> None:
        """Read the held lines as one: blanks join them, and `join_map` says where each
        piece was (line numbers and columns as MLIR counts them)."""
        held = self.held
        assert held is not None
        self.held = None
        pieces: list[str] = []
        join_map: list[tuple[int, int, int]] = []
        offset = 0
        for k, (line_no, line) in enumerate(held):
            text = line if k == 0 else line.lstrip(" \t")
            if k:
                pieces.append(" ")
                offset += 1
            join_map.append((offset, line_no, len(line) - len(text) + 1))
            pieces.append(text)
            offset += len(text)
        now = self.line_no
        self.line_no = held[0][0]
        self.join_map = join_map if len(held) > 1 else None
        try:
            self.feed_line("".join(pieces))
        finally:
            self.join_map = None
            self.join_text_starts.clear()
            self.line_no = now

    def _position(self, offset: int) -> tuple[int, int]:
        """Line and column of a 0-based offset in the line being read."""
        join_map = self.join_map
        if join_map is None:
            return self.line_no, offset + 1
        k = bisect.bisect_right(join_map, (offset, 1 << 62, 0)) - 1
        start, line, col = join_map[max(k, 0)]
        return line, col + (offset - start)

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

    # -- lines and segments ----------------------------------------------------------

    def _walk_braces(self, code: str) -> None:
        """Split a line at region braces; text between them is op text. Whether a piece
        starts an op depends on what was open where it starts: an attribute dict it opens
        itself (`%a = op() {x = 1,` going on next line) does not make it a continuation."""
        start = 0
        after_close = False
        nesting_at_start = self.nesting
        for m in _BRACE.finditer(code):
            pos = m.start()
            if code[pos] == "{":
                kind = self._brace_kind(code, pos)
                if kind == "D":
                    self.brace_kinds.append("D")
                    if self.nesting == 0:
                        self.nesting_line = self.line_no
                    self.nesting += 1
                    continue
                self._segment(code, start, pos, after_close, nesting_at_start)
                start = pos + 1
                if kind == "P":
                    self.brace_kinds.append("P")
                    self.pending_brace = True
                    return  # nothing but blanks after it
                self.brace_kinds.append("R")
                self._open_region()
                after_close = False
                nesting_at_start = self.nesting
            else:
                kind = self.brace_kinds.pop() if self.brace_kinds else "?"
                if kind == "D":
                    self.nesting = max(self.nesting - 1, 0)
                    continue
                self._segment(code, start, pos, after_close, nesting_at_start)
                start = pos + 1
                if kind == "R":
                    self._close_region()
                else:
                    self.diagnose(self.line_no, pos + 1,
                                  "'}' closes nothing that is open; ignored", self.raw)
                after_close = True
                nesting_at_start = self.nesting
        self._segment(code, start, len(code), after_close, nesting_at_start)

    def _brace_kind(self, code: str, pos: int) -> str:
        # Matching at pos, not on a slice: a line of n braces must not copy n^2 characters.
        if pos > 0 and code[pos - 1] == "<":
            return "D"  # `<{` opens properties
        if _BLANKS_TO_END.match(code, pos + 1):
            return "P"
        if _DICT_AFTER_BRACE.match(code, pos + 1):
            return "D"
        return "R"

    def _decide_pending_brace(self, stripped: str) -> None:
        """A `{` ended the last line: a region, unless this line starts a dict entry."""
        self.pending_brace = False
        if not self.brace_kinds or self.brace_kinds[-1] != "P":
            return
        if _DICT_ENTRY.match(stripped):
            self.brace_kinds[-1] = "D"
            if self.nesting == 0:
                self.nesting_line = self.line_no - 1  # the `{` ended the previous line
            self.nesting += 1
        else:
            self.brace_kinds[-1] = "R"
            self._open_region()

    def _segment(self, code: str, start: int, end: int, after_close: bool,
                 nesting_at_start: int | None = None) -> None:
        """Op text between region braces (or a whole line); `nesting_at_start`: the open
        brackets and dicts where it starts (default: now)."""
        text = code[start:end]
        open_before = self.nesting if nesting_at_start is None else nesting_at_start
        if not text.strip():
            return
        region = self.regions[-1]
        if (start == 0 and self.nesting_before_line > 0 and not after_close
                and (_NEW_OP.match(self.raw, start, end)
                     or _OP_LINE_START.match(self.raw, start, end))):
            # A line that starts `%x = dialect.op` cannot be inside an op's brackets: the
            # earlier lines left one open.
            self._recover_before_op()
            open_before = 0
        continuing = after_close or open_before > 0 or (start == 0 and self.continues_alloca)
        if not continuing:
            first = text.lstrip()[0]
            if first == "^":
                self._block_label(text, start, end)
                self._count_nesting(text)
                return
            if first not in '%"' and not (first.isalpha() or first == "_"):
                continuing = True
            elif first != "%" and first != '"':
                word = re.match(r"[\w$.]+", text.lstrip())
                if word is not None and word.group() in _CONTINUATION_WORDS:
                    continuing = True
        starts = self._op_starts(code, start, end, open_before, after_close)
        if continuing:
            first_end = starts[0] if starts else end
            if after_close:
                if region.cur_frame is not None:
                    region.cur_frame.trailer.append(self._raw_slice(start, first_end))
            elif region.cur_frame is None and region.cur_head is not None:
                extra = region.cur_extra
                if extra is None:
                    extra = region.cur_extra = []
                if len(extra) < _MAX_HEADER_LINES:
                    extra.append(self._raw_slice(start, first_end))
            self._uses(code, start, first_end, region)
        else:
            starts.insert(0, start)
        # Each op on the line, up to the next one (`%a = memref.alloca() : memref<4xf32>
        # "tpu.yield"() : () -> ()` is two ops).
        for k, op_start in enumerate(starts):
            self._start_op(code, op_start, starts[k + 1] if k + 1 < len(starts) else end,
                           region)
        self._count_nesting(text)

    def _op_starts(self, code: str, start: int, end: int, open_before: int,
                   after_close: bool = False) -> list[int]:
        """Where further ops start in code[start:end], after the text of the one going
        on: a `_MID_OP` match where the brackets opened since then are all closed. After
        a region's `}`, an op name (`}  func.func @g() {`) starts one too."""
        found: list[int] = []
        raw = self.raw
        if after_close:
            m = _OP_AFTER_CLOSE.match(code, start, end)
            if m is not None and m.group(1) not in _CONTINUATION_WORDS:
                return [m.start(1)]
        after = start
        depth = open_before
        first = start
        while first < end and raw[first] in " \t":
            first += 1
        blanked = False
        for m in _MID_OP.finditer(raw, first + 1, end):
            at = m.start()
            if not blanked and '"' in raw:
                # `code_of` keeps strings that hide no brace or comment: blank them all
                # here, so a mention inside a string (`"x memref.alloca("`) is not an op.
                # Once per line: a line of nested ops has a segment per op.
                if self.blanked_for is not raw:
                    self.blanked_code = blank_strings(raw)[0]
                    self.blanked_for = raw
                code = self.blanked_code
                blanked = True
            if at + 1 >= len(code) or code[at] != raw[at]:
                continue  # inside a string: blanked in code
            if raw[at] == '"' and code[at + 1] == raw[at + 1]:
                continue  # a string's closing quote, not a quoted op name (blanked in code)
            before = at - 1
            while before > start and raw[before] in " \t":
                before -= 1
            if raw[at] != "%":
                if raw[before] == "=":
                    continue  # the name of the op whose results precede it
            elif raw[before] == ",":
                continue  # `%a, %b = op`: a later name of the same op's result list
            depth += bracket_balance(code[after:at])
            after = at
            if depth <= 0:
                found.append(at)
                depth = 0
        return found

    def _count_nesting(self, text: str) -> None:
        delta = text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if delta:
            if self.nesting == 0:
                self.nesting_line = self.line_no
            self.nesting = max(self.nesting + delta, 0)

    def _unclosed_bracket(self, what: str) -> None:
        self.diagnose(self.line_no, 1, f"'(' or '[' opened at line {self.nesting_line} is "
                      f"never closed; assumed closed {what}", self.raw)
        self.nesting = 0

    def _recover_before_op(self) -> None:
        """Close what earlier lines left open (brackets, and attribute dicts still open
        among the braces), keeping what this line opened itself."""
        own_nesting = self.nesting - self.nesting_before_line
        own_kinds = self.brace_kinds[self.kinds_before_line:]
        inherited = self.brace_kinds[: self.kinds_before_line]
        while inherited and inherited[-1] == "D":
            inherited.pop()
        self._unclosed_bracket("before this op")
        self.brace_kinds[:] = inherited + own_kinds
        self.nesting = max(own_nesting, 0)

    def _raw_slice(self, start: int, end: int) -> str:
        return self.raw[start:end]

    # -- ops -------------------------------------------------------------------------

    def _extend(self, ids: Iterable[int]) -> None:
        """These allocas are used up to the op numbered self.order."""
        end = self.order
        live_end = self.live_end
        for aid in ids:
            if live_end[aid] < end:
                live_end[aid] = end
                self.live_end_line[aid] = self.last_op_line

    def _finish_op(self, region: _Region) -> None:
        if region.cur_pending:
            self._extend(region.cur_pending)
            region.cur_pending = None
        frame = region.cur_frame
        if frame is not None:
            frame.end_order = self.order
            if frame.pending:
                self._extend(frame.pending)
                frame.pending = None
            region.cur_frame = None

    def _start_op(self, code: str, start: int, end: int, region: _Region) -> None:
        if self.pending_alloca is not None:
            # An earlier alloca still waits for its type, and another op starts: it ends
            # here (and is reported), rather than being dropped by the next alloca.
            alloca, text, _, complaint = self.pending_alloca
            self._alloca_failed(alloca, text, complaint or SyntaxProblem(
                len(text), "the op's text ends before its type is complete", False))
        if region.cur_order >= 0:
            self._finish_op(region)
        self.order += 1
        self.last_op_line = self.line_no
        region.had_ops = True
        head = _HEAD.match(self.raw, start, end)
        if head is None:  # cannot happen for text starting with % " or a letter
            self._uses(code, start, end, region)
            return
        name = head.group("name")
        results_text = head.group("results")
        results = _results_of(results_text) if results_text else ()
        region.cur_order = self.order
        region.cur_head = head
        region.cur_line = self.line_no
        region.cur_extra = None
        if results and (self.tracked or self.constants):
            self._shadow(results, region)
        ids = self._uses(code, head.end(), end, region)
        if name in _ALLOCA_NAMES:
            self._alloca(head, start, end, results, region)
            return
        if results:
            bare = name.strip('"')
            if bare == "arith.constant":
                self._bind(self.constants, results[0], code[head.start("name"):end], region)
            elif ids and self._makes_view(bare, code[head.end() : end], name[0] == '"'):
                for result in results:
                    self._bind(self.tracked, result, ids, region)
        elif ids and _passes_values_out(name.strip('"')):
            self._yielded(ids)

    def _makes_view(self, name: str, operands_and_types: str, generic: bool) -> bool:
        settings = self.settings
        if name in settings.view_ops:
            return True
        if name in settings.non_view_ops:
            return False
        rest = operands_and_types
        if "->" in rest:
            return "memref<" in rest.rsplit("->", 1)[1]
        if generic:
            return True  # result types follow the regions: assume a view
        if " to " in rest:
            return "memref<" in rest.rsplit(" to ", 1)[1]
        if " : " in rest:
            return "memref<" in rest.rsplit(" : ", 1)[1]
        return True

    def _yielded(self, ids: frozenset[int]) -> None:
        """Values yielded out of a region become (aliases among) the owner's results."""
        if len(self.regions) < 2:
            return
        owner = self.regions[-1].owner
        if owner is None or not owner.results:
            return
        parent = self.regions[-2]
        for result in owner.results:
            merged = self.tracked.get(result, frozenset()) | ids
            self._bind(self.tracked, result, merged, parent)

    def _bind(self, table: dict, name: str, value: object, region: _Region) -> None:
        region.undo.append((table, name, table.get(name, _MISSING)))
        table[name] = value

    def _shadow(self, names: Iterable[str], region: _Region) -> None:
        for name in names:
            if name in self.tracked:
                self._bind(self.tracked, name, frozenset(), region)
                del self.tracked[name]
            if name in self.constants:
                self._bind(self.constants, name, 0, region)
                del self.constants[name]

    def _uses(self, code: str, start: int, end: int, region: _Region) -> frozenset[int]:
        """Record uses of tracked values in code[start:end]; return the allocas they reach."""
        tracked = self.tracked
        if not tracked or code.find("%", start, end) < 0:  # not `in code`: n^2 on a long line
            return frozenset()
        found: frozenset[int] = frozenset()
        for token in _SSA.findall(code, start, end):
            ids = tracked.get(token)
            if ids:
                found = found | ids
        if found:
            for aid in found:
                self._use(aid)
        return found

    def _use(self, aid: int) -> None:
        regions = self.regions
        depth = self.def_depth[aid]
        for k in range(depth + 1, len(regions)):
            owner = regions[k].owner
            if owner is not None and owner.loop_like:
                if owner.pending is None:
                    owner.pending = set()
                owner.pending.add(aid)
                break
        else:
            current = regions[-1]
            if current.cur_pending is None:
                current.cur_pending = set()
            current.cur_pending.add(aid)
        current = regions[-1]
        if current.used is None:
            current.used = set()
        current.used.add(aid)

    def _alloca(self, head: re.Match[str], start: int, end: int, results: tuple[str, ...],
                region: _Region) -> None:
        op_start = head.start("results") if head.group("results") else head.start("name")
        raw_text = self.raw[op_start:end].rstrip()
        alloca = self._register_alloca(head.start("name") + 1, op_start + 1, raw_text, results,
                                       region)
        self._parse_alloca(alloca, raw_text, lines_added=0)

    def _register_alloca(self, col: int, text_col: int, text: str, results: tuple[str, ...],
                         region: _Region) -> RawAlloca:
        """A new alloca at the current op: live until it is used, its results bound to it."""
        aid = len(self.allocas)
        self.line_alloca_cols.append(col)
        line = self.line_no
        if self.join_map is not None:  # an op spread over lines: where its parts were
            self.join_text_starts[aid] = text_col - 1
            line, col = self._position(col - 1)
            text_col = self._position(text_col - 1)[1]
        alloca = RawAlloca(aid, self.order, line, col, text_col, text, results,
                           region.frames, len(self.chunks) - 1)
        self.allocas.append(alloca)
        self.live_end.append(self.order)
        self.live_end_line.append(self.line_no)
        self.def_depth.append(region.depth)
        region.alloca_ids.append(aid)
        ids = frozenset((aid,))
        for result in results:
            self._bind(self.tracked, result, ids, region)
        return alloca

    def _parse_alloca(self, alloca: RawAlloca, text: str, lines_added: int) -> None:
        try:
            syntax = parse_alloca(text)
        except SyntaxProblem as problem:
            whole = self._alloca_before_next_op(text, problem)
            if whole is not None:
                text, syntax = whole
                self.pending_alloca = None
                alloca.text = text
                alloca.syntax = syntax
                alloca.size_constants = tuple(_constant_value(self.constants.get(n))
                                              for n in syntax.dynamic_sizes)
                return
            # Brackets still open: the op goes on (or the text was cut), whatever token
            # the grammar stopped at. Stopped at the last word: it may be cut too, which
            # the next line tells (a new op: the grammar's complaint stands).
            incomplete = problem.incomplete or bracket_balance(blank_strings(text)[0]) > 0
            rest = text[problem.offset:].strip()
            last_word = not rest or not any(c.isspace() for c in rest)
            if (incomplete or last_word) and lines_added < _MAX_OP_LINES:
                self.pending_alloca = (alloca, text, lines_added,
                                       None if incomplete else problem)
                return
            self._alloca_failed(alloca, text, problem)
            return
        self.pending_alloca = None
        alloca.text = text
        alloca.syntax = syntax
        alloca.size_constants = tuple(_constant_value(self.constants.get(n))
                                      for n in syntax.dynamic_sizes)

    @staticmethod
    def _alloca_before_next_op(text: str, problem: SyntaxProblem
                               ) -> tuple[str, AllocaSyntax] | None:
        """`%a = memref.alloca() : memref<4xf32> return`: the grammar stops at a word after
        a complete alloca, which can only be the next op (MLIR needs no line break
        between ops). The alloca without it, if that is complete."""
        if problem.incomplete or problem.offset <= 0 or not _NEXT_STATEMENT.match(
                text, problem.offset):
            return None
        before = text[: problem.offset].rstrip()
        try:
            return before, parse_alloca(before)
        except SyntaxProblem:
            return None

    def _alloca_failed(self, alloca: RawAlloca, text: str, problem: SyntaxProblem) -> None:
        self.pending_alloca = None
        before = text[: problem.offset]
        newlines = before.count("\n")
        start = self.join_text_starts.get(alloca.index)
        if start is not None and not newlines:
            line, col = self._position(start + len(before))
            self.diagnose(line, col, f"memref.alloca skipped: {problem.message}",
                          text[:200], mapped=True)
            return
        if newlines:
            line, col = alloca.line + newlines, len(before) - before.rfind("\n")
        else:
            line, col = alloca.line, alloca.text_col + len(before)
        quote = text.split("\n")[newlines] if text else ""
        self.diagnose(line, col, f"{allocation_op_in(text)} skipped: {problem.message}", quote)

    def _continue_alloca(self, code: str, stripped: str) -> bool:
        """An alloca's text did not end on its line: add this line if it continues it
        (True). The text is cut where MLIR needs more (`memref<4` or `:`): anything but a
        new op continues it."""
        assert self.pending_alloca is not None
        alloca, text, lines_added, complaint = self.pending_alloca
        first = stripped[0]
        dict_open = bool(self.brace_kinds) and self.brace_kinds[-1] == "D"
        if complaint is None or (first == "}" and dict_open):
            starts_op = first == "^" or (first == "}" and stripped[:2] != "}>"
                                         and not dict_open) or _NEW_OP.match(code) is not None \
                or _OP_LINE_START.match(code) is not None
        else:
            starts_op = first in '%"^}' or (
                (first.isalpha() or first == "_") and self.nesting == 0
                and stripped.split(None, 1)[0] not in _CONTINUATION_WORDS
            )
        if starts_op:
            self._alloca_failed(alloca, text, complaint or SyntaxProblem(
                len(text), "the op's text ends before its type is complete", False))
            return False
        starts = self._op_starts(code, 0, len(code), 0)  # `: memref<4xf32> %b = ...`
        end = starts[0] if starts else len(code)
        if "}" in code:  # `> loc(#loc3) }`: the region's end is not the alloca's
            blanked = blank_strings(text)[0]  # an alloca has no region: its `{` open dicts
            depth = max(blanked.count("{") - blanked.count("}"), 0)
            for m in _BRACE.finditer(code, 0, end):
                if code[m.start()] == "{":
                    depth += 1
                elif code.startswith("}>", m.start()):
                    continue
                elif depth == 0:
                    end = m.start()
                    break
                else:
                    depth -= 1
        self._parse_alloca(alloca, text + "\n" + self.raw[:end].rstrip(), lines_added + 1)
        return True

    def _trailing_loc(self, code: str) -> None:
        """`loc(...)` alone on the line after an alloca that was complete without it: the
        alloca's location (MLIR reads a line break there as a blank)."""
        alloca = self.allocas[-1]
        syntax = alloca.syntax
        if (syntax is None or syntax.location is not None or alloca.line >= self.line_no
                or alloca.order != self.regions[-1].cur_order):
            return
        start = code.index("loc")
        depth = 0
        for end in range(code.index("(", start), len(code)):
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            if depth == 0:
                break
        else:
            return
        try:
            location = parse_location(self.raw[start : end + 1])
        except SyntaxProblem:
            return  # not a location after all: the line is read as it stands
        alloca.syntax = dataclasses.replace(syntax, location=location)

    def _block_label(self, text: str, start: int, end: int) -> None:
        region = self.regions[-1]
        owner = region.owner
        if (owner is not None and not region.had_ops and not region.labels
                and owner.entry_block is None):
            owner.entry_block = (self.line_no, start + 1, self.raw[start:end])
        if region.cur_order >= 0:
            self._finish_op(region)
            region.cur_order = -1
        if region.had_ops or region.labels:
            region.multi_block = True
        region.labels += 1
        args = _BLOCK_ARG.findall(text)
        if args and (self.tracked or self.constants):
            self._shadow(args, region)

    def _check_mentions(self, code: str) -> None:
        """Every `memref.alloca` op name in code must be an op the scanner registered.

        An op name is `memref.alloca` outside strings, or the string `"memref.alloca"`
        followed by `(` (the generic form); any other string that says memref.alloca is
        data, not an op.
        """
        registered = set(self.line_alloca_cols)
        if (len(registered) == 1 and code.count("memref.alloca") == 1
                and code.find("memref.alloca") + 1 in registered
                and self.raw.count("memref.alloca") == 1):
            return  # the one mention on the line is the op just registered
        blanked, _ = blank_strings(self.raw[: len(code)])
        for m in _PRETTY_MENTION.finditer(blanked):
            if m.start() + 1 not in registered:
                self._unregistered_mention(m.start())
        for m in _GENERIC_MENTION.finditer(self.raw, 0, len(code)):
            at = m.start()
            # The string itself, blanked: an opening quote, 13 blanks, a closing quote (not
            # two other strings' quotes around a bare memref.alloca).
            whole_string = (blanked[at] == '"' and blanked[at + 14] == '"'
                            and not blanked[at + 1 : at + 14].strip())
            if whole_string and at + 1 not in registered:
                self._unregistered_mention(at)

    def _unregistered_mention(self, pos: int) -> None:
        self.diagnose(self.line_no, pos + 1,
                      "memref.alloca appears where no op starts; not counted", self.raw)

    # -- regions ---------------------------------------------------------------------

    def _open_region(self) -> None:
        parent = self.regions[-1]
        frame = parent.cur_frame
        if frame is None:
            head = parent.cur_head
            if parent.cur_order < 0 or head is None:
                # A region with no op in front of it: give it an anonymous owner.
                self.order += 1
                self.last_op_line = self.line_no
                parent.cur_order = self.order
                parent.cur_line = self.line_no
                parent.had_ops = True
                name, results, col, header = "<anonymous>", (), 1, ""
                first_line_chars = 0
            else:
                name = head.group(2).strip('"')
                results_text = head.group(1)
                results = _results_of(results_text) if results_text else ()
                col = head.start(2) + 1
                # Up to the end of this op's text, not of the line: a line of nested ops
                # must not give each of them the rest of the line.
                header = head.string[head.start(1) if results_text else head.start(2)
                                     : head.endpos]
                first_line_chars = len(header)
                if parent.cur_extra:
                    header = " ".join([header, *parent.cur_extra])
            sibling = parent.child_counts.get(name, 0)
            parent.child_counts[name] = sibling + 1
            frame = OpFrame(
                name=name,
                order=parent.cur_order,
                line=parent.cur_line,
                col=col,
                header=header.strip(),
                results=results,
                parent=parent.owner,
                sibling_index=sibling,
                loop_like=name not in self.settings.run_once_ops,
                chunk=len(self.chunks) - 1,
                first_line_chars=first_line_chars,
            )
            if name == "func" or name.endswith(".func"):
                self.funcs.append(frame)
            if parent.owner is None:
                frame.top_index = self.top_count
                self.top_count += 1
            parent.cur_frame = frame
        region = _Region(frame, len(self.regions), self.nesting)
        region.saved_nesting_line = self.nesting_line
        self.regions.append(region)
        self.nesting = 0

    def _close_region(self) -> None:
        if len(self.regions) == 1:
            return
        if self.nesting > 0:
            self._unclosed_bracket("where its region ends")
        region = self.regions.pop()
        if region.cur_order >= 0:
            self._finish_op(region)
        end = self.order
        if region.multi_block:
            # Branches between blocks may loop: whatever this region defines or uses from
            # outside stays live to its end.
            def_depth = self.def_depth
            self._extend(aid for aid in [*region.alloca_ids, *(region.used or ())]
                         if def_depth[aid] <= region.depth)
        for table, name, previous in reversed(region.undo):
            if previous is _MISSING:
                table.pop(name, None)
            else:
                table[name] = previous
        parent = self.regions[-1]
        if region.used:
            outer = {aid for aid in region.used if self.def_depth[aid] < region.depth}
            if outer:
                if parent.used is None:
                    parent.used = set()
                parent.used |= outer
        if region.owner is not None:
            region.owner.end_order = end
            region.owner.end_line = self.line_no
        self.nesting = region.saved_nesting
        self.nesting_line = region.saved_nesting_line

    # -- file structure --------------------------------------------------------------

    def _alias_definition(self, raw: str, code: str) -> None:
        m = _ALIAS_DEF.match(raw)
        if m is None:
            alone = _ALIAS_NAME_ALONE.fullmatch(code)
            if alone is not None:  # `#loc1` and its `= ...` on the next line
                self.pending_alias = (alone.group(1), [], 0)
                self.alias_state = "="
                return
            self.diagnose(self.line_no, 1, "top-level '#' or '!' line is not an alias "
                          "definition; skipped", raw)
            return
        end = self._value_end(code, m.end(), 0)
        self._start_alias(m.group(1), raw[m.end() : end].strip(),
                          bracket_balance(code[m.end() : end]))
        if end < len(code):
            self._rest_of_line(raw, end)

    def _start_alias(self, name: str, value: str, still_open: int) -> None:
        if still_open <= 0 and "=" in value:
            for m in _NEXT_ALIAS.finditer(value):
                if bracket_balance(value[: m.start()]) == 0:  # `#a = loc(...) #b = ...`
                    self._start_alias(name, value[: m.start()].strip(), 0)
                    rest = value[m.end() :].strip()
                    self._start_alias(m.group(1), rest, bracket_balance(rest))
                    return
        if still_open <= 0 and (last := _ALIAS_NAME_AT_END.search(value)) is not None and (
                bracket_balance(value[: last.start(1)]) == 0):
            # `#loc1 = loc(...) #loc2` and `= loc(...)` on the next line
            self._start_alias(name, value[: last.start(1)].strip(), 0)
            self.pending_alias = (last.group(1), [], 0)
            self.alias_state = "="
            return
        if still_open > 0 or not value:  # no value yet: it is on the next line
            self.pending_alias = (name, [value] if value else [], still_open)
            self.alias_state = ""
        elif _BARE_WORD.fullmatch(value):  # `loc`: its `(...)` may be on the next line
            self.pending_alias = (name, [value], 0)
            self.alias_state = "more"
        else:
            self._define_alias(name, value)

    def _continue_alias(self, raw: str, code: str) -> bool:
        """An alias definition spans lines until its brackets close (MLIR allows a line
        break between any two tokens). False: this line is not part of it (the alias is
        defined as read, or noted) and is read as usual."""
        assert self.pending_alias is not None
        name, parts, still_open = self.pending_alias
        end = self._value_end(code, 0, still_open)
        rest_at = end if end < len(code) else -1
        piece = raw[:end].strip()
        piece_code = code[:end].strip()
        state = self.alias_state
        self.alias_state = ""
        if state == "=":
            if not piece.startswith("="):
                self.pending_alias = None
                self.diagnose(self.line_no, 1, f"alias {name} has no '=' and no value; "
                              "skipped", raw)
                return False
            piece, piece_code = piece[1:].strip(), piece_code[1:]
            if not piece:
                return True  # the value is on the next line
        elif state == "more" and piece[:1] not in "(<[{":
            self.pending_alias = None
            self._define_alias(name, parts[0])
            return False
        parts.append(piece)
        still_open += bracket_balance(piece_code)
        if still_open > 0 and len(parts) < _MAX_OP_LINES * 16 and rest_at < 0:
            self.pending_alias = (name, parts, still_open)
            return True
        self.pending_alias = None
        self._start_alias(name, " ".join(parts), still_open)
        if rest_at >= 0:
            if self.pending_alias is not None:  # `!T = i32 module {`: complete after all
                self.pending_alias = None
                self.alias_state = ""
                self._define_alias(name, " ".join(parts))
            self._rest_of_line(raw, rest_at)
        return True

    @staticmethod
    def _value_end(code: str, start: int, open_before: int) -> int:
        """Where an alias value ends on this line: at the first top-level op after it
        (`!S = memref<8xf32, 201> module {`: MLIR needs no line break there), else at
        the end of the line."""
        for m in _OP_AFTER_VALUE.finditer(code, start):
            if open_before + bracket_balance(code[start : m.start()]) <= 0:
                return m.start(1)
        return len(code)

    def _alias_after_close(self, code: str) -> int | None:
        """Where an alias definition starts after the `}` that closes the last open
        region on this line (MLIR needs no line break there), if it does."""
        for m in _ALIAS_IN_LINE.finditer(code):
            before = code[: m.start()]
            if (before.count("}") - before.count("{") >= len(self.regions) - 1 >= 0
                    and "}" in before and before.count("(") == before.count(")")):
                return m.start()
        return None

    def _rest_of_line(self, raw: str, at: int) -> None:
        """Read raw[at:] as a line of its own (blanks before it keep the columns)."""
        self.feed_line(" " * at + raw[at:])

    def _define_alias(self, name: str, value: str) -> None:
        aliases = self.chunks[-1].aliases
        if name in aliases:
            # MLIR rejects a redefinition; the first one is the one kept.
            self.diagnose(self.line_no, 1, f"alias {name} is defined again; this definition "
                          "is ignored (the first one is used)", self.raw)
            return
        aliases[name] = value

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
        self.regions = [_Region(None, 0, 0)]
        self.brace_kinds.clear()
        self.nesting = 0
        self.tracked.clear()
        self.constants.clear()


def _results_of(results_text: str) -> tuple[str, ...]:
    """`%a` -> ("%a",); `%a, %b:2` -> ("%a", "%b")."""
    if "," not in results_text and ":" not in results_text:
        return (results_text,)
    return tuple(_RESULT_NAME.findall(results_text))


def _constant_value(definition: str | None) -> int | None:
    """The integer an `arith.constant` line defines, if it is one."""
    if definition is None:
        return None
    m = _CONSTANT.search(definition)
    return int(m.group(1)) if m else None


def bracket_balance(code: str) -> int:
    """Open minus closed brackets of all kinds (`->`, `>=` and `<=` are not brackets).

    >>> bracket_balance("#enc = #sparse_tensor.encoding<{ map = (d0) -> (d0)")
    2
    >>> bracket_balance("}>")
    -2
    """
    opens = code.count("<") + code.count("(") + code.count("[") + code.count("{")
    closes = code.count(">") + code.count(")") + code.count("]") + code.count("}")
    not_closing = code.count("->") + code.count(">=")
    not_opening = code.count("<=")
    return (opens - not_opening) - (closes - not_closing)


def _goes_on(code: str) -> bool:
    """Whether an op's text cannot end with this code: a `<` or `[` left open, only result
    names, or a last token after which MLIR needs more (`:`, `->`, `=`, `,`)."""
    if _angle_square_balance(code) > 0 or _RESULTS_ONLY.fullmatch(code):
        return True
    end = code.rstrip()
    if _LOC_KEYWORD_AT_END.search(end) or _OPEN_DICT_ENTRY.search(end) or _dict_open(code):
        return True  # `loc` before its `(`; `{alignment` before its `= 64 : i64}`
    if end.lstrip().startswith("loc") and code.count("(") > code.count(")"):
        return True  # a location alone on its line, going on
    if end.endswith(("memref.alloca", '"memref.alloca"')) or _RESULTS_TAIL.search(end):
        return True  # an op name before its operands; results before their `=`
    if end.endswith("{") and "memref.alloca" in code:
        # An alloca has no region: a `{` before its type opens its attribute dict.
        after = _PROPERTIES.sub("", code[code.rfind("memref.alloca") :])
        return ":" not in after
    if end.endswith(","):
        # A list going on in parentheses or an attribute dict is read as it always was.
        return code.count("(") == code.count(")") and "{" not in code
    return end.endswith((":", "->", "=")) and not end.endswith(("==", "<=", ">="))


def _line_may_go_on(raw: str) -> bool:
    """Cheap test, for every line, before `_goes_on`: may the op on this line go on on the
    next one? Most lines of a dump end with their `loc(...)` and are done in two tests."""
    last = raw[-1:]
    if last == ")":
        # Most lines end with their `loc(...)`: the op is complete. Otherwise a `<` may be
        # left open (`<{function_type = (i32)` before `-> ()}>` on the next line).
        if ("<" in raw or "[" in raw) and raw.rfind("loc(") < 0 and _maybe_open(raw):
            return True
        # A `loc(...)` alone on its line, going on (`loc("n"("f.py":5:6)` then `)`).
        return _TRAILING_LOC.match(raw) is not None and raw.count("(") > raw.count(")")
    if ("<" in raw or "[" in raw) and _maybe_open(raw):
        return True
    if last in _OPEN_ENDINGS or raw.endswith(("->", "loc", "alloca", 'alloca"')):
        return True
    if "%" in raw and ("//" in raw or _RESULTS_ONLY.fullmatch(raw)
                       or ((last.isalnum() or last in "_$.-") and _RESULTS_TAIL.search(raw))):
        return True
    if "{" in raw and ((last == "{" and "memref.alloca" in raw) or (
            raw.count("{") > raw.count("}") and (_OPEN_DICT_ENTRY.search(raw)
                                                 or _dict_open(raw)))):
        return True
    return "loc" in raw and raw.count("(") > raw.count(")")


def _dict_open(code: str) -> bool:
    """Whether the innermost `{` of code still open opens an attribute dict."""
    if code.count("{") <= code.count("}"):
        return False
    still_open: list[int] = []
    for m in _BRACE.finditer(code):
        if code[m.start()] == "{":
            still_open.append(m.start())
        elif still_open:
            still_open.pop()
    return bool(still_open) and _DICT_AFTER_BRACE.match(code, still_open[-1] + 1) is not None


def _maybe_open(raw: str) -> bool:
    """Cheap test before `_angle_square_balance`: a `<` or `[` may be left open."""
    angles = raw.count("<")
    if angles and angles + raw.count("->") > raw.count(">"):
        return True
    return "[" in raw and raw.count("[") > raw.count("]")


def _angle_square_balance(code: str) -> int:
    """Open `<` and `[` not closed in code (`->`, `>=`, `<=` are not brackets); an op
    whose type or location is cut by a line break leaves one open."""
    angles = code.count("<") - code.count("<=") - (code.count(">") - code.count("->")
                                                   - code.count(">="))
    return max(angles, 0) + max(code.count("[") - code.count("]"), 0)


def _passes_values_out(name: str) -> bool:
    """Terminators whose operands become the results of the op that holds the region."""
    return name.endswith("yield") or name == "scf.condition" or (
        name.endswith(".return") and name != "func.return")


# --- entry points ----------------------------------------------------------------------


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
