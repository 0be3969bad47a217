"""The fast reader's liveness: where each alloca is last used, found by a search for each
name derived from it (the alloca's results, then a round at a time the views and yielded
values made from them) over the text where it is in scope; and the constants of size
operands. Every line a name is found on is read: most in a first pass, by a few C calls
and the class of the text before the use (read once per distinct text), which shows them
plain ops that make nothing of the value; the others, and each alloca's last use, as the
line reader reads them. A mixin of the reader in `sc_mlir.read.events`, as the careful
reader's concerns are mixins of its `Scanner` (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from operator import attrgetter, itemgetter

from sc_mlir.read.allocas import ALLOCATION_OPS
from sc_mlir.read.event_regions import Region, Unvouched
from sc_mlir.read.lexicon import (
    _BARE_OP,
    _HEAD,
    _MID_OP,
    _constant_value,
    _passes_values_out,
    _results_of,
    outside_strings_and_dicts,
)
from sc_mlir.read.records import OpFrame, RawAlloca
from sc_mlir.read.scan import Scanner

_PLAIN_OP: tuple[str, object] = ("plain", None)
_HEAD_BYTES = re.compile(_HEAD.pattern.encode())
# `_HEAD`'s results.
_RESULTS = rb"%[\w$.\-]+(?::\d+)?(?:[ \t]*,[ \t]*%[\w$.\-]+(?::\d+)?)*"
_ALLOCATION_OP_NAMES = frozenset(op.encode() for op in ALLOCATION_OPS)
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
        bindings = _Round()
        allocas = self.allocas
        if len(self.alloca_region) != len(allocas) or len(self.alloca_line_end) != len(allocas):
            raise ValueError("allocas, their regions and their lines' ends differ in number")
        results = list(map(_RESULTS_OF, allocas))
        if set(map(len, results)) <= {1}:
            # One name each (the common case): the columns built by C calls.
            bindings.names = list(map(_FIRST, results))
            bindings.owners = list(map(_INDEX_OF, allocas))
            bindings.starts = list(self.alloca_line_end)
            bindings.ends = list(map(_END_OF, self.alloca_region))
        else:
            names, owners = bindings.names.append, bindings.owners.append
            starts, ends = bindings.starts.append, bindings.ends.append
            for alloca, region, scope_start in zip(allocas, self.alloca_region,
                                                   self.alloca_line_end, strict=True):
                for name in alloca.results:
                    names(name)
                    owners(alloca.index)
                    starts(scope_start)
                    ends(region.end)
        while bindings.names:
            made = self._search(bindings)
            bindings = _Round()
            for binding in made:
                bindings.add(binding.name, binding.ids, binding.scope_start, binding.scope_end)

    def _search(self, bindings: _Round) -> list[_Binding]:
        """Uses of these bindings, each name found by one regex over the text where it is
        in scope; returns the bindings they make (views, yields)."""
        data = self.data
        names, owners = bindings.names, bindings.owners
        starts, ends = bindings.starts, bindings.ends
        # Each use one int, offset << 24 | the binding's number: ints sort fast.
        if len(names) >= 1 << 24:
            raise Unvouched("more names than this reader counts")
        found: list[int] = []
        # A later use never ends earlier (it is in the same op, or in a loop that ends
        # later): only each alloca's last occurrence can move its last use. The others
        # are still read, for the views and yields they make and to vouch for them.
        last: dict[int, int] = {}
        finders = _FINDERS
        scanned = _scanned_together(data, names, starts, ends)
        for number, name in enumerate(names):
            hits = scanned.get(number)
            if hits is None:
                finder = finders.get(name) or _uses_of(name)
                # A scope ends where a line starts: the name-end guard, which sees no
                # further than the scope's end, never misses a name character there.
                hits = [m.start() << 24 | number
                        for m in finder(data, starts[number], ends[number])]
            if hits:
                found += hits
                final = hits[-1] >> 24
                owner = owners[number]
                if type(owner) is int:
                    if last.get(owner, -1) < final:
                        last[owner] = final
                else:
                    for aid in owner:  # type: ignore[union-attr]
                        if last.get(aid, -1) < final:
                            last[aid] = final
        if not found:
            return []
        found.sort()
        finals = sorted(set(last.values()))
        finals.append(len(data))  # past the end: no line holds it
        # First pass, a few C calls a line: the lines `_plain_inert` would pass over that
        # the class of the text before their first use (`_prefix_class`, read once per
        # distinct text) shows to be such are passed over; the others are kept, in text
        # order, for the second pass.
        prefix_class = _prefix_classes(self.no_view_ops)
        rfind, index, count, find = data.rfind, data.index, data.count, data.find
        final_at = 0
        next_final = finals[0]
        line_end = -1
        kept: list[tuple[int, int, int, bool, int]] = []
        for key in found:
            p = key >> 24
            if p < line_end:
                continue
            line_start = rfind(b"\n", 0, p) + 1
            line_end = index(b"\n", p)
            while next_final < line_start:
                final_at += 1
                next_final = finals[final_at]
            prefix = data[line_start:p]
            kind = prefix_class.get(prefix)
            if kind is None:
                kind = prefix_class[prefix] = _templated_class(prefix, self.no_view_ops,
                                                               prefix_class)
            if kind == _NOT_PLAIN_OP or data[line_end - 1] == _OPEN_BRACE:
                plain = _NOT_PLAIN  # (a line that opens a region is its op's)
            elif kind == _PLAIN_RESULTS:
                plain = _PLAIN
            elif count(b'"', p, line_end) == kind:
                plain = _PLAIN_NO_STRING
            else:
                # A string besides the op's name: as `_plain_inert`, no terminator's word.
                plain = _PLAIN if all(find(word, line_start, line_end) < 0
                                      for word in _TERMINATOR_WORDS) else _NOT_PLAIN
            extends = next_final < line_end
            if extends or plain == _NOT_PLAIN:
                kept.append((key, line_start, line_end, extends, plain))
        found.append(len(data) << 24)  # past the end: closes the last line's names
        made: list[_Binding] = []
        non_op_lines, first_body_line = self.non_op_lines, self.first_body_line
        transitions, transition_regions = self.transitions, self.transition_regions
        extend_one = self._extend_one
        event_offsets, event_lines = self.event_offsets, self.event_lines
        # The kept lines come in text order: each search below starts where the last
        # one ended.
        at = region_at = non_ops_at = event = 0
        # The last kept line's start and number: lines are counted on from it, not from
        # the last event, which may lie thousands of lines back (a func whose allocas are
        # all used after the last of them counted its tail once per use).
        counted_at = counted_line = -1
        for first_key, line_start, line_end, extends, plain in kept:
            event = bisect_right(event_offsets, line_start, event) - 1
            if counted_at > event_offsets[event]:
                line = counted_line + count(b"\n", counted_at, line_start)
            else:
                line = event_lines[event] + count(b"\n", event_offsets[event], line_start)
            counted_at, counted_line = line_start, line
            first_use = first_key >> 24
            if not extends and self._plain_inert(line, line_start, line_end, first_use):
                continue
            at = bisect_left(found, first_key, at)
            owner = owners[first_key & _NUMBER_MASK]
            # The common case: one name on the line, bound to one alloca.
            single = found[at + 1] >> 24 >= line_end and type(owner) is int
            if plain == _PLAIN_NO_STRING or (
                    plain == _PLAIN and not self._name_in_string(line_start, line_end)):
                # What `_use_line` does with a last use on a plain op that makes no view.
                non_ops_at = bisect_left(non_op_lines, line, non_ops_at)
                order = (line - first_body_line) - non_ops_at + 1
                region_at = bisect_right(transitions, first_use, region_at)
                region = transition_regions[region_at - 1]
                region_at -= 1
                if single:
                    extend_one(owner, region, order, line)  # type: ignore[arg-type]
                else:
                    # An alloca met twice is extended twice alike: no set of them.
                    use = at
                    while found[use] >> 24 < line_end:
                        owner = owners[found[use] & _NUMBER_MASK]
                        if type(owner) is int:
                            extend_one(owner, region, order, line)
                        else:
                            for aid in owner:  # type: ignore[union-attr]
                                extend_one(aid, region, order, line)
                        use += 1
            else:
                ids = (frozenset((owner,)) if single  # type: ignore[arg-type]
                       else self._ids_on_line(found, at, line_end, owners))
                made.extend(self._use_line(line_start, line_end, line, first_use, ids,
                                           extends))
        return made

    @staticmethod
    def _ids_on_line(found: list[int], at: int, line_end: int,
                     owners: list[int | frozenset[int]]) -> frozenset[int]:
        """The allocas bound to the names used from found[at] to the line's end."""
        ids: set[int] = set()
        while found[at] >> 24 < line_end:
            owner = owners[found[at] & _NUMBER_MASK]
            if type(owner) is int:
                ids.add(owner)
            else:
                ids.update(owner)  # type: ignore[arg-type]
            at += 1
        return frozenset(ids)

    def _name_in_string(self, line_start: int, line_end: int) -> bool:
        """`_use_line`'s test of a value name inside a string on a plain op's line."""
        data = self.data
        return (data.find(b'"', line_start, line_end) >= 0
                and _value_name_in_string(data[line_start:line_end]))

    def _plain_inert(self, line: int, line_start: int, line_end: int, first_use: int) -> bool:
        """Whether a line only uses these values: a plain op with no results, or whose
        results are never views, not a line of another kind. (A name in a string there
        changes nothing either.)"""
        if line in self.line_kind:
            return False
        raw = self.data[line_start:line_end]
        if raw.lstrip()[:1] == b"%":
            head = _HEAD_BYTES.match(raw)
            return (head is not None and bool(head.group(1))
                    and first_use - line_start >= head.end(1)
                    and head.group(2).strip(b'"') in self.no_view_ops)
        return not any(word in raw for word in _TERMINATOR_WORDS)

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
        if _value_name_in_string(raw):
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
        for aid in ids:
            self._extend_one(aid, region, end, end_line)

    def _extend_one(self, aid: int, region: Region, end: int, end_line: int) -> None:
        depth = self.alloca_region[aid].depth
        target_end, target_line = end, end_line
        walk: Region | None = region
        while walk is not None and walk.depth > depth:
            owner = walk.owner
            if owner is not None and owner.loop_like:
                target_end = owner.end_order
                target_line = self.frame_end_line[id(owner)]
            walk = walk.parent
        if self.live_end[aid] < target_end:
            self.live_end[aid] = target_end
            self.live_end_line[aid] = target_line

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


class _Round:
    """One round's names, as columns: the name, the alloca it is bound to (an int, or the
    allocas a view or yield of several is bound to), and the text where it is in scope."""

    __slots__ = ("ends", "names", "owners", "starts")

    def __init__(self) -> None:
        self.names: list[str] = []
        self.owners: list[int | frozenset[int]] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, name: str, owner: int | frozenset[int], scope_start: int,
            scope_end: int) -> None:
        self.names.append(name)
        self.owners.append(owner)
        self.starts.append(scope_start)
        self.ends.append(scope_end)


_NUMBER_MASK = (1 << 24) - 1
_RESULTS_OF: Callable[[RawAlloca], tuple[str, ...]] = attrgetter("results")
_FIRST: Callable[[tuple[str, ...]], str] = itemgetter(0)
_INDEX_OF: Callable[[RawAlloca], int] = attrgetter("index")
_END_OF: Callable[[Region], int] = attrgetter("end")
_FINDERS: dict[str, Callable[[bytes, int, int], Iterator[re.Match[bytes]]]] = {}
_FINDERS_KEPT = 1 << 16


def _uses_of(name: str) -> Callable[[bytes, int, int], Iterator[re.Match[bytes]]]:
    """The occurrences of a value name (not the start of a longer one), compiled once per
    distinct name: dumps reuse the same few names in every func."""
    finder = _FINDERS.get(name)
    if finder is None:
        if len(_FINDERS) >= _FINDERS_KEPT:
            _FINDERS.clear()
        finder = _FINDERS[name] = re.compile(
            re.escape(name.encode()) + rb"(?![\w$.\-])").finditer
    return finder

# A search per name reads its scope once for each name: a func of 20,000 allocas read its
# body 20,000 times (8.6 s for 2 MB). Names sharing a scope's end are found by one search
# for every value name instead when the searches per name would read more than this many
# times their joined scope (each name a search costs a literal search over its scope; the
# shared one a Python step per value name in it, a few times as dear per byte).
_SCAN_TOGETHER_RATIO = 16
_SCAN_TOGETHER_MIN_NAMES = 32
# Every value name (`%` and a name's characters, as long as it goes: as `_uses_of`'s
# guard, a name is not the start of a longer one). A `#` result number is not part of it.
_ANY_NAME = re.compile(rb"%[\w$.\-]+")
_PLAIN_NAME = re.compile(r"%[\w$.\-]+\Z", re.ASCII)


def _scanned_together(data: bytes, names: list[str], starts: list[int],
                      ends: list[int]) -> dict[int, list[int]]:
    """The uses (`_search`'s keys) of the bindings whose names are searched for together:
    those of a scope's end shared by many names that a search each would read their
    scope too many times over. Each group's text is read once for every value name."""
    scanned: dict[int, list[int]] = {}
    # (Counted in C first: most dumps have no such group, and a list per scope's end for
    # 65,000 names cost 20 to 140 ms, garbage collections included.)
    shared = {end for end, names_there in Counter(ends).items()
              if names_there >= _SCAN_TOGETHER_MIN_NAMES}
    if not shared:
        return scanned
    by_end: dict[int, list[int]] = {}
    for number, end in enumerate(ends):
        if end in shared:
            by_end.setdefault(end, []).append(number)
    for end, numbers in by_end.items():
        start = min(starts[number] for number in numbers)
        each = sum(end - starts[number] for number in numbers)
        if each <= _SCAN_TOGETHER_RATIO * (end - start):
            continue
        wanted: dict[bytes, list[int]] = {}
        for number in numbers:
            if _PLAIN_NAME.match(names[number]):
                wanted.setdefault(names[number].encode(), []).append(number)
                scanned[number] = []
        for match in _ANY_NAME.finditer(data, start, end):
            bound = wanted.get(match.group())
            if bound is not None:
                at = match.start()
                for number in bound:
                    if at >= starts[number]:
                        scanned[number].append(at << 24 | number)
    return scanned


# `_HEAD`, possessive: the head of a line's text before its first use.
_PREFIX_HEAD = re.compile(
    rb"[ \t]*+(?:(" + _RESULTS + rb")[ \t]*=[ \t]*)?(\"[^\"\n]*\"|[A-Za-z_][\w$.]*+)")
_OPEN_BRACE = ord("{")
_TERMINATOR_WORDS = (b"yield", b"return", b"condition")
# Where the careful reader sees a second op start on a line (`lexicon._MID_OP`), in bytes.
_MID_OP_BYTES = re.compile(_MID_OP.pattern.encode())


def _value_name_in_string(raw: bytes) -> bool:
    """Whether a line's text holds a `%` inside a string other than a generic op's quoted
    name (which is the line's first string when it starts the line)."""
    quotes = raw.count(b'"')
    return bool(quotes) and (quotes > 2 or raw.lstrip()[:1] != b'"') and (
        b"%" in b"".join(raw.split(b'"')[1::2]))

# What the first pass found of a line: not shown plain; plain, with no string but the
# op's name; plain (a string may hold a value name: `_use_line` declines that).
_NOT_PLAIN, _PLAIN_NO_STRING, _PLAIN = 0, 1, 2


# `_prefix_class`: not a plain op's line; a plain op's with results that are never
# views; a plain op's without results, a string before the use; else (0 or more) a plain
# op's without results, with the quotes the rest of the line holds when its only string
# is the op's name.
_NOT_PLAIN_OP, _PLAIN_RESULTS, _PLAIN_STRING_BEFORE_USE = -3, -2, -1
_PREFIX_CLASSES: dict[frozenset[bytes], dict[bytes, int]] = {}


def _prefix_classes(no_view_ops: frozenset[bytes]) -> dict[bytes, int]:
    """`_prefix_class` of each text seen, for these settings."""
    classes = _PREFIX_CLASSES.get(no_view_ops)
    if classes is None or len(classes) >= _FINDERS_KEPT:
        classes = _PREFIX_CLASSES[no_view_ops] = {}
    return classes


# A value name's `%` and characters, as templates write them (`_templated_class`).
_VALUE_NAME_BYTES = re.compile(rb"%[\w$.]+")


def _templated_class(prefix: bytes, no_view_ops: frozenset[bytes],
                     classes: dict[bytes, int]) -> int:
    """`_prefix_class(prefix)`, read once for the texts alike but for their value names
    (`memref.store %15, `): the class reads a name as a whole (a `%`, then characters that
    none of its patterns treats apart), so the text with each name's characters after its
    `%` made one `_` is of the same class, and raises alike. Not a text whose strings hold
    a `%` (it may be no name's; the op's quoted name is one of them). Its template is kept
    among `classes`, with its own class. (Read each, the distinct texts of a 5 MB dump
    cost 5 ms.)"""
    if b'"' in prefix and b"%" in b"".join(prefix.split(b'"')[1::2]):
        return _prefix_class(prefix, no_view_ops)
    template = _VALUE_NAME_BYTES.sub(b"%_", prefix)
    kind = classes.get(template)
    if kind is None:
        kind = classes[template] = _prefix_class(template, no_view_ops)
    return kind


def _prefix_class(prefix: bytes, no_view_ops: frozenset[bytes]) -> int:
    """What the text of a line before its first tracked use says of the line, when it does
    not open a region. A plain op's head lies whole in that text, with the op's name and
    results `_HEAD` reads from the whole line (the name ends where a use begins), unless
    a use is among the results: then no head matches it. Lines of other kinds (a region's
    end, a label, a comment) do not start with an op's name; an allocation's has no
    class."""
    head = _PREFIX_HEAD.match(prefix)
    if head is None:
        return _NOT_PLAIN_OP
    if _MID_OP_BYTES.search(prefix, head.end()) or _BARE_OP.search(
            outside_strings_and_dicts(prefix[head.end():].decode())):
        # A second op on the line, before the use (`"x.y"() : () -> ()  %v = "x.view"(%a`,
        # `... -> () memref.store %f, %a`): the careful reader counts it and reads what it
        # makes.
        raise Unvouched("two ops on one line")
    op = head[2]
    bare = op.strip(b'"')
    if bare in _ALLOCATION_OP_NAMES:
        return _NOT_PLAIN_OP
    if head[1] is not None:
        return _PLAIN_RESULTS if bare in no_view_ops else _NOT_PLAIN_OP
    if any(word in bare for word in _TERMINATOR_WORDS):
        return _NOT_PLAIN_OP  # it may pass values out
    rest_quotes = op.count(b'"') - prefix.count(b'"')
    return rest_quotes if rest_quotes >= 0 else _PLAIN_STRING_BEFORE_USE
