"""Brackets and regions: which `{` opens a region and which a dictionary, the regions on
the stack and the op that owns each, block labels, and recovery from brackets left open."""

from __future__ import annotations

import re

from sc_mlir.read.lexicon import (
    _BLANKS_TO_END,
    _BLOCK_ARG,
    _BRACE,
    _CONTINUATION_WORDS,
    _DICT_AFTER_BRACE,
    _DICT_ENTRY,
    _MID_OP_OR_BARE,
    _MISSING,
    _OP_AFTER_CLOSE,
    _results_of,
)
from sc_mlir.read.records import OpFrame


class Region:
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


class RegionTracking:
    """`Scanner`'s bracket and region bookkeeping (state: `regions`, `brace_kinds`,
    `nesting`, `pending_brace`). Methods of `Scanner`; see `sc_mlir.read.scan`."""

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

    def _region_close_line(self, raw: str, at: int) -> None:
        """`}) : (...) -> () loc(...)`: one region closes; the rest belongs to its op."""
        self.brace_kinds.pop()
        self._close_region()
        trailer = raw[at + 1 :]
        if trailer.strip():
            m = _OP_AFTER_CLOSE.match(raw, at + 1)
            if (m is not None and m.group(1) not in _CONTINUATION_WORDS) or (
                    _MID_OP_OR_BARE.search(raw, at + 1)):
                # `}  func.func @g() {`, `} %v = memref.cast %a ...`, `} return`: an op
                # starts on the line, read as a line's ops are (no strings or comments on
                # this line: the raw text is its code)
                self.nesting_before_line = self.nesting
                self._segment(raw, at + 1, len(raw), after_close=True)
                return
            region = self.regions[-1]
            if region.cur_frame is not None:
                region.cur_frame.trailer.append(trailer)
            if self.tracked and "%" in trailer:
                self._uses(trailer, 0, len(trailer), region)
            self._count_nesting(trailer)

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
        region = Region(frame, len(self.regions), self.nesting)
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
