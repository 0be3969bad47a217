"""Ops in program order: a line cut into op segments at region braces and at ops that
start mid-line, each op numbered, its results bound and its operands used."""

from __future__ import annotations

import re

from sc_mlir.read.allocas import _ALLOCA_NAMES
from sc_mlir.read.lexicon import (
    _CONTINUATION_WORDS,
    _HEAD,
    _MAX_HEADER_LINES,
    _MID_OP_OR_BARE,
    _NEW_OP,
    _OP_AFTER_CLOSE,
    _OP_LINE_START,
    _passes_values_out,
    _results_of,
    blank_strings,
    bracket_balance,
)
from sc_mlir.read.regions import Region
from sc_mlir.syntax.parse import SyntaxProblem


class OpReading:
    """`Scanner`'s op reading (state: `order`, `last_op_line`, and each region's current op).
    Methods of `Scanner`; see `sc_mlir.read.scan`."""

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
                label_end = _label_end(code, start, end)
                self._block_label(code[start:label_end], start, label_end)
                self._count_nesting(code[start:label_end])
                if label_end < end:
                    # `^bb0(%i: index): %v = "x.view"(%a)`: ops after the label.
                    self._segment(code, label_end, end, after_close=False)
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
        on: a `_MID_OP` or `_MID_BARE_OP` match (a result list's first name, for a later
        one) where the brackets opened since then are all closed. After a region's `}`, an
        op name (`}  func.func @g() {`) starts one too."""
        found: list[int] = []
        raw = self.raw
        after = start
        depth = open_before
        first = start
        while first < end and raw[first] in " \t":
            first += 1
        # After a region's `}`, an op may start at the text's first character
        # (`} %v = "x.view"(%a)`): nothing of the closed op's comes before it.
        search_from = first if after_close else first + 1
        if after_close:
            m = _OP_AFTER_CLOSE.match(code, start, end)
            if m is not None and m.group(1) not in _CONTINUATION_WORDS:
                # `}  func.func @g() {`: an op, and the ops after it on the line are
                # looked for as after any op's start.
                found.append(m.start(1))
                after, depth, search_from = m.start(1), 0, m.end(1)
        blanked = False
        for m in _MID_OP_OR_BARE.finditer(raw, search_from, end):
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
                # `%p, %q = op`: a later name of a result list, whose first name starts
                # the op (unless the list is the results of the op going on).
                at = _result_list_start(raw, start, before)
                if at < search_from:
                    continue
            depth += bracket_balance(code[after:at])
            after = at
            if depth <= 0:
                found.append(at)
                depth = 0
        return found

    def _raw_slice(self, start: int, end: int) -> str:
        return self.raw[start:end]

    def _next_op(self, head: re.Match[str]) -> Region:
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

    def _start_op(self, code: str, start: int, end: int, region: Region) -> None:
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

    def _finish_op(self, region: Region) -> None:
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


def _result_list_start(raw: str, start: int, comma: int) -> int:
    """Where the result list that has a `,` at `comma` starts (its first `%`), walking back
    over `%name` and `%name:N` items and the commas between them; -1 when what comes
    before the comma is no such list whose first name follows a blank or a closing
    bracket (an operand list, `(%a, %q = ...`, is none)."""
    at = comma
    while True:
        at -= 1
        while at > start and raw[at] in " \t":
            at -= 1
        end = at + 1
        while at > start and (raw[at].isalnum() or raw[at] in "_$.-:"):
            at -= 1
        if raw[at] != "%" or end - at < 2:
            return -1
        name_start = at
        at -= 1
        while at > start and raw[at] in " \t":
            at -= 1
        if at >= start and raw[at] == ",":
            continue
        return name_start if at < start or raw[name_start - 1] in " \t)]>}" else -1


def _label_end(code: str, start: int, end: int) -> int:
    """Where a block label that starts code[start:end] ends: past the `:` after its name
    and its argument list (whose types may hold brackets), else `end`."""
    at = code.index("^", start) + 1
    while at < end and (code[at].isalnum() or code[at] in "_$.-"):
        at += 1
    if at < end and code[at] == "(":
        depth = 0
        while at < end:
            char = code[at]
            depth += (char in "([<{") - (char in ")]}" or (char == ">" and code[at - 1] != "-"))
            at += 1
            if depth == 0:
                break
    while at < end and code[at] in " \t":
        at += 1
    if at < end and code[at] == ":":
        return at + 1
    return end
