"""The fast reader's liveness: where each alloca is last used, found by `bytes.find` of the
names derived from it (the alloca's results, then a round at a time the views and yielded
values made from them) over the text where each is in scope; and the constants of size
operands. A mixin of the reader in `sc_mlir.read.events`, as the careful reader's concerns
are mixins of its `Scanner` (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from sc_mlir.read.event_regions import Region, Unvouched
from sc_mlir.read.lexicon import (
    _HEAD,
    _constant_value,
    _passes_values_out,
    _results_of,
)
from sc_mlir.read.records import OpFrame
from sc_mlir.read.scan import Scanner

_PLAIN_OP: tuple[str, object] = ("plain", None)
_HEAD_BYTES = re.compile(_HEAD.pattern.encode())
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.-")


class UseSearch:
    """The reader's uses and last uses (state it reads: `data`, `allocas`, `alloca_region`,
    `alloca_line_end`, `line_kind`, `event_offsets`, `event_lines`, `transitions`,
    `transition_regions`, `non_op_lines`, `frame_end_line`, `first_body_line`,
    `no_view_ops`, `settings`; it writes `live_end`, `live_end_line`). Methods of
    `sc_mlir.read.events._Reader`."""

    def _constant_of(self, name: str, before: int, region: Region) -> int | None:
        """What `Scanner` keeps for a size operand: the value of the `arith.constant` that
        defines it, if that is the nearest definition in scope (else None)."""
        data = self.data
        token = name.encode()
        at = data.rfind(token, self.body_start, before)
        while at >= 0:
            if data[at + len(token)] not in _NAME_BYTES:
                line_start = data.rfind(b"\n", 0, at) + 1
                line = self._line_of(line_start)
                kind, _ = self.line_kind.get(line, _PLAIN_OP)
                if kind == "label":
                    if self._encloses(self._region_at(at), region):
                        raise Unvouched("a size operand that is a block argument")
                elif kind != "comment":
                    text = self._line(line_start)
                    head = _HEAD.match(text)
                    if (head is not None and head.group(1)
                            and at - line_start < head.end(1)
                            and self._encloses(self._region_at(at), region)):
                        results = _results_of(head.group(1))
                        if head.group(2).strip('"') == "arith.constant" and results[0] == name:
                            return _constant_value(text)
                        return None  # defined by another op: no constant
            at = data.rfind(token, self.body_start, at)
        return None

    @staticmethod
    def _encloses(outer: Region, inner: Region) -> bool:
        walk: Region | None = inner
        while walk is not None:
            if walk is outer:
                return True
            walk = walk.parent
        return False

    # -- uses ------------------------------------------------------------------------

    def _line_of(self, offset: int) -> int:
        i = bisect_right(self.event_offsets, offset) - 1
        return self.event_lines[i] + self.data.count(b"\n", self.event_offsets[i], offset)

    def _region_at(self, offset: int) -> Region:
        return self.transition_regions[bisect_right(self.transitions, offset) - 1]

    def _liveness(self) -> None:
        """Last uses: the names the allocas define, then the views and yielded values made
        from them, a round at a time, each round one search over the text."""
        entries: list[_Binding] = []
        for alloca, region, scope_start in zip(self.allocas, self.alloca_region,
                                               self.alloca_line_end, strict=True):
            for name in alloca.results:
                entries.append(_Binding(name, frozenset((alloca.index,)), scope_start,
                                        region.end, alloca.line))
        while entries:
            entries = self._search(entries)

    def _search(self, entries: list[_Binding]) -> list[_Binding]:
        """Uses of these bindings, each found by `bytes.find` over the text where it is in
        scope; returns the bindings they make (views, yields)."""
        data = self.data
        find = data.find
        name_bytes = _NAME_BYTES
        # Each use one int, offset << 24 | the binding's index: ints sort fast.
        if len(entries) >= 1 << 24:
            raise Unvouched("more names than this reader counts")
        found: list[int] = []
        # A later use never ends earlier (it is in the same op, or in a loop that ends
        # later): only each alloca's last occurrence can move its last use. The others
        # are still read, for the views and yields they make and to vouch for them.
        last: dict[int, int] = {}
        for number, entry in enumerate(entries):
            name = entry.name.encode()
            size = len(name)
            end = entry.scope_end
            p = find(name, entry.scope_start, end)
            final = -1
            while p >= 0:
                after = p + size
                if data[after] not in name_bytes:
                    found.append(p << 24 | number)
                    final = p
                p = find(name, after, end)
            if final >= 0:
                for aid in entry.ids:
                    if last.get(aid, -1) < final:
                        last[aid] = final
        found.sort()
        finals = set(last.values())
        made: list[_Binding] = []
        line_start = line_end = -1
        line_ids: frozenset[int] = frozenset()
        line_offset = 0
        extends = False
        rfind, index, count = data.rfind, data.index, data.count
        line = counted_to = 0
        mask = (1 << 24) - 1
        found.append(len(data) << 24)  # past the end: closes the last line's group
        line_kind, no_view_ops, head_match = self.line_kind, self.no_view_ops, _HEAD_BYTES.match
        for key in found:
            p = key >> 24
            if p < line_end:
                line_ids = line_ids | entries[key & mask].ids
                extends = extends or p in finals
                continue
            if line_start >= 0:
                # Most lines only use these values: a plain op with no results, or whose
                # results are never views, and no last use here. Those are passed over
                # here (a name in a string there changes nothing either); `_use_line`
                # reads the others.
                inert = False
                if not extends and line not in line_kind:
                    raw = data[line_start:line_end]
                    if raw.lstrip()[:1] == b"%":
                        head = head_match(raw)
                        inert = (head is not None and bool(head.group(1))
                                 and line_offset - line_start >= head.end(1)
                                 and head.group(2).strip(b'"') in no_view_ops)
                    else:
                        inert = (b"yield" not in raw and b"return" not in raw
                                 and b"condition" not in raw)
                if not inert:
                    made.extend(self._use_line(line_start, line_end, line, line_offset,
                                               line_ids, extends))
            if p >= len(data):
                break
            line_start = rfind(b"\n", 0, p) + 1
            line_end = index(b"\n", p)
            if counted_to:
                line += count(b"\n", counted_to, line_start)
            else:
                line = self._line_of(line_start)
            counted_to = line_start
            line_ids = entries[key & mask].ids
            line_offset = p
            extends = p in finals
        return made

    def _use_line(self, line_start: int, line_end: int, line: int, first_use: int,
                  ids: frozenset[int], extends: bool) -> list[_Binding]:
        """The tracked values named on one line: where they are used, and what the line's
        op makes of them (`extends`: the line holds the last use of one of them)."""
        data = self.data
        kind, what = self.line_kind.get(line, _PLAIN_OP)
        raw = data[line_start:line_end]
        if kind == "comment":
            return []
        if kind == "label" or kind == "alloca":
            raise Unvouched("a tracked value on a label or an allocation line")
        quotes = raw.count(b'"')
        if quotes and (quotes > 2 or raw.lstrip()[:1] != b'"') and (
                b"%" in b"".join(raw.split(b'"')[1::2])):
            raise Unvouched("a value name inside a string")
        text = raw.decode()
        made: list[_Binding] = []
        if kind == "plain":
            head = _HEAD.match(text)
            if head is None:
                raise Unvouched("an op this reader does not read")
            results_text = head.group(1)
            if results_text and first_use - line_start < head.end(1):
                # A tracked name among the results: its own definition (a view's), or a
                # name defined again.
                raise Unvouched("a tracked name defined again")
            name = head.group(2)
            bare = name.strip('"')
            if results_text:
                if bare != "arith.constant" and self._makes_view(
                        bare, text[head.end(2):], name[0] == '"'):
                    region = self._region_at(first_use)
                    made = [_Binding(r, ids, line_end, region.end, line)
                            for r in _results_of(results_text)]
            elif _passes_values_out(bare):
                region = self._region_at(first_use)
                owner = region.owner
                if owner is not None and owner.results and region.parent is not None:
                    made = [_Binding(r, ids, line_end, region.parent.end, -1)
                            for r in owner.results]
            if extends:
                order = (line - self.first_body_line) - bisect_left(self.non_op_lines, line) + 1
                self._extend(ids, self._region_at(first_use), order, line)
            return made
        frame = what
        assert isinstance(frame, OpFrame)
        region = self._region_at(first_use)
        if kind == "op":
            head = _HEAD.match(text)
            assert head is not None
            if head.group(1) and first_use - line_start < head.end(1):
                raise Unvouched("a tracked name defined again")
            if frame.results and self._makes_view(
                    frame.name, text[head.end(2):text.rstrip().rfind("{")],
                    head.group(2)[0] == '"'):
                made = [_Binding(r, ids, line_end, region.end, line) for r in frame.results]
        self._extend(ids, region, frame.end_order, self.frame_end_line[id(frame)])
        return made

    def _extend(self, ids: frozenset[int], region: Region, end: int, end_line: int) -> None:
        """`Scanner._use`: a use inside a loop below the value's region lasts to the loop's
        end (the outermost such loop), else to the end of the op that uses it."""
        live_end, live_end_line = self.live_end, self.live_end_line
        for aid in ids:
            depth = self.alloca_region[aid].depth
            target_end, target_line = end, end_line
            walk: Region | None = region
            while walk is not None and walk.depth > depth:
                owner = walk.owner
                if owner is not None and owner.loop_like:
                    target_end = owner.end_order
                    target_line = self.frame_end_line[id(owner)]
                walk = walk.parent
            if live_end[aid] < target_end:
                live_end[aid] = target_end
                live_end_line[aid] = target_line

    def _makes_view(self, name: str, operands_and_types: str, generic: bool) -> bool:
        return Scanner._makes_view(self, name, operands_and_types, generic)  # type: ignore[arg-type]


class _Binding:
    """A name bound to allocas, in scope over data[scope_start:scope_end]."""

    __slots__ = ("def_line", "ids", "name", "scope_end", "scope_start")

    def __init__(self, name: str, ids: frozenset[int], scope_start: int, scope_end: int,
                 def_line: int) -> None:
        self.name = name
        self.ids = ids
        self.scope_start = scope_start
        self.scope_end = scope_end
        self.def_line = def_line
