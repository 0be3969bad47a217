"""Compile logs -> the SparseCore allocation failures they report.

Logs arrive in many shapes: plain text, text with ANSI colours, Python tracebacks
(`XlaRuntimeError: INTERNAL: ...`), JSON lines whose messages are escaped strings, and
lines wrapped by log collectors (cut at a fixed width, sometimes mid-word, often with a
timestamp in front of every piece). Each physical line is normalised (colours and
log prefixes removed, JSON strings decoded) and the lines are joined without separators,
so a wrapped message reads as one; the message patterns allow any whitespace, or none,
between their words. The op text of a `note: see current operation:` is read with the
same Lark grammar as the dump (`syntax.parse_alloca`). Nothing is ever evaluated.

>>> [f] = read_log_text(
...     "Hlo-Op: result.1:279:1: error: 'memref.alloca' op current allocation offset upper "
...     "bound (140704 words) exceeds the legitimate user allocatable offset upper bound "
...     "(131071 words) in memory space 201 when allocating 23440 words.")
>>> (f.location, f.offset_upper_bound_words, f.bound_words, f.memory_space, f.allocating_words)
('result.1:279:1', 140704, 131071, '201', 23440)
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from sc_mlir.model.spaces import parse_space_id
from sc_mlir.syntax.parse import AllocaSyntax, SyntaxProblem, parse_alloca
from sc_mlir.syntax.patterns import SSA_RESULTS

_ANSI = re.compile(r"\x1b\[[0-9;?]*+[ -/]*+[@-~]|\x1b\][^\x07\x1b]*+\x07|\x1b[()][0-9A-Za-z]")
# Prefixes that loggers put in front of every (wrapped) line.
_LOG_PREFIX = re.compile(
    r"^(?:"
    r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+:\d+\]\s?"  # glog / absl
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"(?:\s+\[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|E|W|I)\]?)?\s*[:|\-]?\s?"
    r")"
)
_ESCAPES = re.compile(r"\\(u001b|x1b|n|t|r|\"|\\|/)")
_ESCAPE_VALUES = {"u001b": "\x1b", "x1b": "\x1b", "n": "\n", "t": "\t", "r": "", '"': '"',
                  "\\": "\\", "/": "/"}


def _words(text: str) -> str:
    """A phrase whose words may be separated by any whitespace, or none (wrapped logs)."""
    return r"\s*".join(re.escape(word) for word in text.split())


_SPACE_NAMES = r"tile_spmem|TileSpmem|spmem|Spmem|smem|Smem|hbm|HBM|sflag|sync_flags"
_E3000 = re.compile(
    _words("current allocation offset upper bound") + r"\s*\(\s*(?P<upper>\d+)\s*words?\s*\)\s*"
    + _words("exceeds the legitimate user allocatable offset upper bound")
    + r"\s*\(\s*(?P<bound>\d+)\s*words?\s*\)\s*" + _words("in memory space")
    + rf"\s*(?P<space>\d+|{_SPACE_NAMES}|[A-Za-z_]\w*?(?=\s*(?:when|\.|,|;|$)))"
    + r"(?:\s*" + _words("when allocating") + r"\s*(?P<alloc>\d+)\s*words?)?",
    re.IGNORECASE,
)
_LOCATION_BEFORE = re.compile(
    r"(?P<loc>(?:\"[^\"]+\"|[\w.\-/]+)(?::\d+){1,2})\s*:\s*error\s*:", re.IGNORECASE)
_NOTE = re.compile(_words("note: see current operation:") + r"\s*", re.IGNORECASE)
_NOTE_OP_START = re.compile(rf'(?:{SSA_RESULTS}\s*=\s*)?(?:"memref\.alloca"|memref\.alloca)')
_E3001 = re.compile(_words("No viable logical replica count"), re.IGNORECASE)
_KEY_VALUE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)")
_FIXED_SIZE = re.compile(
    _words("Fixed size allocations") + r"\s*\((?P<fixed>[^()]*)\)\s*"
    + _words("do not fit in") + r"\s*(?P<where>\w+)\s*\((?P<capacity>[^()]*)\)",
    re.IGNORECASE,
)
_AMOUNT = re.compile(r"(\d[\d,_]*)\s*(words?|bytes?|[KMG]i?B|B)?", re.IGNORECASE)

# How far around an anchor the reader looks for the parts of one message.
_BEFORE = 400
_NOTE_WINDOW = 4000
_CHUNK = 1 << 20
_OVERLAP = 1 << 15


@dataclass(frozen=True)
class AllocationFailure:
    """An E3000 allocation failure, with its numbers as the compiler printed them."""

    log_lines: tuple[int, ...]  # every line where this failure is reported (1-based)
    text: str
    offset_upper_bound_words: int
    bound_words: int
    memory_space: str  # as printed: "201" or "tile_spmem"
    allocating_words: int | None
    location: str | None = None  # "result.1:279:1"
    code: str | None = None  # "E3000" when printed
    note_op: str | None = None
    note: AllocaSyntax | None = None
    kind: str = "E3000"

    @property
    def log_line(self) -> int:
        return self.log_lines[0]

    @property
    def space_id(self) -> int | None:
        try:
            return parse_space_id(self.memory_space)
        except ValueError:
            return None

    @property
    def location_parts(self) -> tuple[str, int | None, int | None] | None:
        """("result.1", 279, 1) from "result.1:279:1"."""
        if not self.location:
            return None
        parts = self.location.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return parts[0].strip('"'), int(parts[1]), int(parts[2])
        parts = self.location.rsplit(":", 1)
        if len(parts) == 2 and parts[1].isdigit():
            return parts[0].strip('"'), int(parts[1]), None
        return None

    def key(self) -> tuple[object, ...]:
        return (self.location, self.offset_upper_bound_words, self.bound_words,
                self.memory_space.lower(), self.allocating_words, self.note_op)


@dataclass(frozen=True)
class ReplicaCountFailure:
    """E3001: no viable logical replica count; the metadata numbers as printed."""

    log_lines: tuple[int, ...]
    text: str
    numbers: dict[str, int] = field(default_factory=dict)
    kind: str = "E3001"

    @property
    def log_line(self) -> int:
        return self.log_lines[0]

    def key(self) -> tuple[object, ...]:
        return (self.kind, tuple(sorted(self.numbers.items())))


@dataclass(frozen=True)
class FixedSizeFailure:
    """`Fixed size allocations (...) do not fit in TileSpmem (...)`."""

    log_lines: tuple[int, ...]
    text: str
    fixed: str
    capacity: str
    where: str
    fixed_amount: tuple[int, str] | None
    capacity_amount: tuple[int, str] | None
    kind: str = "fixed-size"

    @property
    def log_line(self) -> int:
        return self.log_lines[0]

    def key(self) -> tuple[object, ...]:
        return (self.kind, self.fixed, self.capacity, self.where)


Failure = AllocationFailure | ReplicaCountFailure | FixedSizeFailure


def normalise_line(line: str) -> str:
    """One physical log line, without colours, log prefix or JSON escaping.

    >>> normalise_line('I1129 17:14:44.123 99 compiler.cc:12] \\x1b[31merror\\x1b[0m')
    'error'
    >>> normalise_line('{"severity": "ERROR", "message": "a \\\\"memref.alloca\\\\" op"}')
    'ERROR a "memref.alloca" op'
    """
    line = line.rstrip("\r\n")
    stripped = line.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            decoded = json.loads(stripped)
        except ValueError:
            pass
        else:
            line = " ".join(_strings(decoded))
    if "\\" in line:
        line = _ESCAPES.sub(lambda m: _ESCAPE_VALUES[m.group(1)], line)
    line = _ANSI.sub("", line)
    return _LOG_PREFIX.sub("", line, count=1)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class _Joined:
    """Normalised lines joined without separators, with a map back to line numbers."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []  # offset of each part in the joined text
        self.lines: list[int] = []  # its line number in the log
        self.length = 0
        self.base = 0  # absolute offset of the first kept part

    def add(self, text: str, line_no: int) -> None:
        self.parts.append(text)
        self.starts.append(self.base + self.length)
        self.lines.append(line_no)
        self.length += len(text)

    def text(self) -> str:
        return "".join(self.parts)

    def line_at(self, absolute: int) -> int:
        return self.lines[max(bisect_right(self.starts, absolute) - 1, 0)]

    def keep_tail(self, keep: int) -> None:
        """Drop all but about `keep` characters at the end (the overlap between chunks)."""
        total = self.length
        dropped = 0
        while len(self.parts) > 1 and total - dropped - len(self.parts[0]) >= keep:
            dropped += len(self.parts[0])
            self.parts.pop(0)
            self.starts.pop(0)
            self.lines.pop(0)
        self.base += dropped
        self.length -= dropped


def read_log_lines(lines: Iterable[str]) -> list[Failure]:
    """All failures in a log given as lines (streamed; memory stays bounded)."""
    joined = _Joined()
    found: dict[tuple[object, ...], Failure] = {}
    seen_at: set[tuple[str, int]] = set()
    for line_no, line in enumerate(lines, 1):
        joined.add(normalise_line(line), line_no)
        if joined.length >= _CHUNK:
            _search(joined, found, seen_at, final=False)
            joined.keep_tail(_OVERLAP)
    _search(joined, found, seen_at, final=True)
    return sorted(found.values(), key=lambda f: f.log_line)


def read_log_text(text: str) -> list[Failure]:
    # Lines end at "\n" only, as in the dump (a progress bar's lone "\r" ends no line).
    return read_log_lines(text.split("\n"))


def read_log(path: str) -> list[Failure]:
    with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:
        return read_log_lines(handle)


def _search(joined: _Joined, found: dict[tuple[object, ...], Failure],
            seen_at: set[tuple[str, int]], final: bool) -> None:
    text = joined.text()
    limit = len(text) if final else max(len(text) - _OVERLAP, 0)
    anchors = [m for m in _E3000.finditer(text)]
    for index, m in enumerate(anchors):
        if m.start() >= limit or ("E3000", joined.base + m.start()) in seen_at:
            continue
        seen_at.add(("E3000", joined.base + m.start()))
        next_start = anchors[index + 1].start() if index + 1 < len(anchors) else len(text)
        failure = _allocation_failure(text, m, next_start, joined.line_at(joined.base + m.start()))
        _remember(found, failure)
    for m in _E3001.finditer(text):
        if m.start() >= limit or ("E3001", joined.base + m.start()) in seen_at:
            continue
        seen_at.add(("E3001", joined.base + m.start()))
        tail = text[m.end() : m.end() + 2000]
        stop = tail.find(")")
        body = tail[: stop if stop >= 0 else len(tail)]
        numbers = {k: int(v) for k, v in _KEY_VALUE.findall(body)}
        _remember(found, ReplicaCountFailure((joined.line_at(joined.base + m.start()),),
                                             _clip(text, m.start(), m.end() + len(body) + 1),
                                             numbers))
    for m in _FIXED_SIZE.finditer(text):
        if m.start() >= limit or ("fixed", joined.base + m.start()) in seen_at:
            continue
        seen_at.add(("fixed", joined.base + m.start()))
        _remember(found, FixedSizeFailure(
            (joined.line_at(joined.base + m.start()),), _clip(text, m.start(), m.end()),
            m.group("fixed").strip(), m.group("capacity").strip(), m.group("where"),
            _amount(m.group("fixed")), _amount(m.group("capacity"))))


def _remember(found: dict[tuple[object, ...], Failure], failure: Failure) -> None:
    """The same failure is often logged twice (compiler, then exception): keep one."""
    key = failure.key()
    if key in found:
        first = found[key]
        merged = tuple(sorted(set(first.log_lines) | set(failure.log_lines)))
        found[key] = type(first)(**{**first.__dict__, "log_lines": merged})  # type: ignore[arg-type]
    else:
        found[key] = failure


def _clip(text: str, start: int, end: int) -> str:
    return re.sub(r"\s+", " ", text[start:end]).strip()


def _allocation_failure(text: str, m: re.Match[str], next_anchor: int, line_no: int
                        ) -> AllocationFailure:
    before = text[max(m.start() - _BEFORE, 0) : m.start()]
    location = None
    locations = list(_LOCATION_BEFORE.finditer(before))
    if locations:
        location = locations[-1].group("loc")
    code = "E3000" if re.search(r"E3000|CompileTimeSparseCoreAllocationFailure", before) else None
    note_op, note = _note(text, m.end(), min(next_anchor, m.end() + _NOTE_WINDOW))
    alloc = m.group("alloc")
    return AllocationFailure(
        log_lines=(line_no,),
        text=_clip(text, m.start(), m.end()),
        offset_upper_bound_words=int(m.group("upper")),
        bound_words=int(m.group("bound")),
        memory_space=m.group("space"),
        allocating_words=int(alloc) if alloc else None,
        location=location,
        code=code,
        note_op=note_op,
        note=note,
    )


def _note(text: str, start: int, end: int) -> tuple[str | None, AllocaSyntax | None]:
    """The op in `note: see current operation: ...`, read with the alloca grammar."""
    m = _NOTE.search(text, start, end)
    if m is None:
        return None, None
    op = _NOTE_OP_START.match(text, m.end())
    if op is None:
        return _clip(text, m.end(), min(m.end() + 200, end)) or None, None
    # The op ends with its result type; read until its angle brackets balance.
    stop = _end_of_type(text, op.end(), min(end, op.end() + 2000))
    candidate = text[op.start() : stop]
    try:
        return _clip(candidate, 0, len(candidate)), parse_alloca(candidate)
    except SyntaxProblem:
        return _clip(candidate, 0, len(candidate)), None


def _end_of_type(text: str, start: int, end: int) -> int:
    """Offset just after the first `memref<...>` (balanced) found after `start`."""
    at = text.find("memref<", start, end)
    if at < 0:
        return end
    depth = 0
    i = at + len("memref")
    while i < end:
        char = text[i]
        if char == "<":
            depth += 1
        elif char == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return end


def _amount(text: str) -> tuple[int, str] | None:
    m = _AMOUNT.search(text)
    if m is None:
        return None
    return int(m.group(1).replace(",", "").replace("_", "")), (m.group(2) or "").lower()
