"""Alloca capture: which op names allocate, finding each alloca's text (on one line or
spread over several), handing it to the grammar (`syntax.parse_alloca`), and reporting
every one that cannot be read."""

from __future__ import annotations

import dataclasses
import re

from sc_mlir.read.lexicon import (
    _BRACE,
    _CONTINUATION_WORDS,
    _MAX_OP_LINES,
    _NEW_OP,
    _NEXT_STATEMENT,
    _OP_LINE_START,
    _constant_value,
    _results_of,
    blank_strings,
    bracket_balance,
)
from sc_mlir.read.records import Diagnostic, RawAlloca
from sc_mlir.read.regions import Region
from sc_mlir.syntax.parse import (
    AllocaSyntax,
    SyntaxProblem,
    parse_alloca,
    parse_alloca_line,
    parse_location,
)

_PRETTY_MENTION = re.compile(r'(?<![\w$.])memref\.alloca(?![\w$.])')

_GENERIC_MENTION = re.compile(r'"memref\.alloca"[ \t]*\(')


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


class AllocaCapture:
    """`Scanner`'s alloca capture (state: `allocas`, `pending_alloca`,
    `line_alloca_cols`, `join_text_starts`). Methods of `Scanner`; see `sc_mlir.read.scan`."""

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
        try:
            syntax = parse_alloca_line(results_text or "", text, head.start(2) - op_start)
        except SyntaxProblem:
            self._parse_alloca(alloca, text, lines_added=0)  # reports where, or continues
            return
        alloca.syntax = syntax
        if syntax.dynamic_sizes:
            alloca.size_constants = tuple(_constant_value(self.constants.get(n))
                                          for n in syntax.dynamic_sizes)

    def _alloca(self, head: re.Match[str], start: int, end: int, results: tuple[str, ...],
                region: Region) -> None:
        op_start = head.start("results") if head.group("results") else head.start("name")
        raw_text = self.raw[op_start:end].rstrip()
        alloca = self._register_alloca(head.start("name") + 1, op_start + 1, raw_text, results,
                                       region)
        self._parse_alloca(alloca, raw_text, lines_added=0)

    def _register_alloca(self, col: int, text_col: int, text: str, results: tuple[str, ...],
                         region: Region) -> RawAlloca:
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
