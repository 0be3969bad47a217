"""MLIR locations resolved to source: `#loc` alias tables and their chains (the syntax
nodes are `sc_mlir.syntax.locations`).

An op's `loc(#loc38)` usually points into a chain of aliases: name locations wrap
call sites, call sites wrap file locations. Resolution follows the chain and keeps what a
user needs: the innermost file location (the callee's, for a call site), the names met on
the way (outermost first), and the callers' file locations (innermost caller first).

>>> table = LocationTable({"#loc1": 'loc("k.py":10:4 to :9)', "#loc2": 'loc("run_scoped"(#loc1))'})
>>> r = table.resolve(AliasLoc("#loc2"))
>>> (r.file, r.line, r.col, r.names)
('k.py', 10, 4, ('run_scoped',))
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sc_mlir.read.loc_table import LocationTable as TrailingTable
from sc_mlir.syntax.locations import (
    AliasLoc,
    CallSiteLoc,
    FileLoc,
    FusedLoc,
    Location,
    NameLoc,
    UnknownLoc,
)
from sc_mlir.syntax.parse import (
    PRINTED_CALLSITE,
    PRINTED_FILE,
    PRINTED_FUSED,
    PRINTED_LOCATION,
    PRINTED_NAME,
    parse_location,
)

# --- resolved -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where an op came from in the user's program."""

    file: str | None = None
    line: int | None = None
    col: int | None = None
    end_line: int | None = None
    end_col: int | None = None
    names: tuple[str, ...] = ()
    callers: tuple[FileLoc, ...] = ()
    problems: tuple[str, ...] = ()

    def short(self) -> str:
        """`file:line:col`, or the innermost name, or an empty string."""
        if self.file is not None:
            parts = [self.file, str(self.line)]
            if self.col is not None:
                parts.append(str(self.col))
            return ":".join(parts)
        return self.names[-1] if self.names else ""


UNRESOLVED = SourceLocation()

# A chain longer than this is a cycle the visited-set missed or an adversarial table.
_MAX_STEPS = 10_000
_MAX_CALLERS = 64


@dataclass
class LocationTable:
    """The `#alias = loc(...)` definitions of one module (or split chunk).

    Definitions are kept as raw text and parsed only when an op refers to them: real dumps
    carry thousands of aliases and only the allocas' chains matter.
    """

    raw: dict[str, str]
    parse: Callable[[str], Location] | None = None
    _parsed: dict[str, Location | None] = field(default_factory=dict)
    _errors: dict[str, str] = field(default_factory=dict)
    _resolved: dict[Location, SourceLocation] = field(default_factory=dict)
    _resolved_aliases: dict[str, SourceLocation] = field(default_factory=dict)
    # Aliases whose answer depends on the order they were resolved in (they reached an
    # alias loop): this chunk's own. The others are in `_shared`.
    _by_alias: dict[str, SourceLocation] = field(default_factory=dict)
    _in_progress: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # With the default parser, printed locations are read from their match (`_printed`).
        self._reads_printed = self.parse is None
        # Aliases whose answer reached no loop: the same whichever alias was resolved first.
        self._shared: dict[str, SourceLocation] = {}
        # Loops met so far (an alias resolved while this count grew reached one).
        self._loops_met = 0
        if self.parse is None and isinstance(self.raw, TrailingTable):
            # The fast reader gives each chunk of a file the same table: what its values
            # parse to is the same for all of them, and so is what an alias that reaches no
            # loop resolves to (in a table with loops, which alias resolves to what depends
            # on which was asked first: those stay each chunk's own, in `_by_alias`).
            self._parsed = self.raw.parsed  # type: ignore[assignment]
            self._errors = self.raw.parse_errors
            self._shared = _shared_answers(self.raw)

    def lookup(self, name: str) -> tuple[Location | None, str | None]:
        if name in self._parsed:
            return self._parsed[name], self._errors.get(name)
        text = self.raw.get(name)
        if text is None:
            self._parsed[name] = None
            self._errors[name] = f"location alias {name} is not defined"
            return None, self._errors[name]
        if self.parse is None:
            self.parse = _default_parser()
        parse = self.parse
        try:
            loc: Location | None = parse(text)
        except RecursionError:
            raise  # the resolver's own depth, not the text: `resolve` falls back
        except Exception as exc:  # any grammar failure becomes a reported problem
            loc = None
            self._errors[name] = f"location alias {name} does not parse: {_first_line(exc)}"
        self._parsed[name] = loc
        return loc, self._errors.get(name)

    def resolve(self, loc: Location | None) -> SourceLocation:
        """Follow aliases, names, call sites and fused locations to a source location.

        Each alias is resolved once: what an alias resolves to does not depend on how it
        was reached, and ops share long chains (`loc(#loc38)` -> name -> call site ...).
        """
        if loc is None:
            return UNRESOLVED
        if type(loc) is AliasLoc:
            # What ops refer to: kept by the alias's name, whose hash the str caches (an
            # AliasLoc equals another by its name only, and hashes in Python).
            cached = self._resolved_aliases.get(loc.name)
            if cached is None:
                cached = self._resolved_aliases[loc.name] = self._resolve_first(loc)
            return cached
        cached = self._resolved.get(loc)
        if cached is None:
            cached = self._resolved[loc] = self._resolve_first(loc)
        return cached

    def _resolve_first(self, loc: Location) -> SourceLocation:
        try:
            # `_memo`'s answer for an alias, without its dispatch.
            return self._alias(loc.name) if type(loc) is AliasLoc else self._memo(loc)
        except RecursionError:  # a chain deeper than the interpreter's stack
            return self._resolve(loc)

    def _memo(self, loc: Location | None) -> SourceLocation:
        # Plain isinstance tests, most frequent first: a report resolves tens of thousands
        # of aliases, and a `match` on class patterns costs twice as much per node.
        if isinstance(loc, AliasLoc):
            return self._alias(loc.name)
        if isinstance(loc, NameLoc):
            return _named(loc.name, self._memo(loc.child))
        if isinstance(loc, FileLoc):
            return SourceLocation(loc.file, loc.line, loc.col, loc.end_line, loc.end_col)
        if isinstance(loc, CallSiteLoc):
            inner = self._memo(loc.callee)
            return _called(inner, self._memo(loc.caller))
        if isinstance(loc, FusedLoc):
            return self._fused(loc.locations)
        return UNRESOLVED  # None, UnknownLoc

    def _alias(self, name: str) -> SourceLocation:
        found = self._shared.get(name)
        if found is not None:
            return found
        found = self._by_alias.get(name)
        if found is not None:
            self._loops_met += 1  # an answer that reached a loop: so does the asker's
            return found
        if name in self._in_progress:
            self._loops_met += 1
            return SourceLocation(problems=(f"location alias {name} refers to itself",))
        loops_before = self._loops_met
        self._in_progress.add(name)
        try:
            printed = None
            if self._reads_printed and name not in self._parsed:
                text = self.raw.get(name)
                if text is not None:
                    printed = _match_printed(text)
            if printed is not None:
                found = self._printed(printed)
            else:
                target, error = self.lookup(name)
                found = self._memo(target)
                if error:
                    found = SourceLocation(found.file, found.line, found.col,
                                           found.end_line, found.end_col, found.names,
                                           found.callers, (*found.problems, error))
        finally:
            self._in_progress.discard(name)
        if self._loops_met == loops_before:
            shared = self._shared
            if len(shared) >= _SHARED_LIMIT:
                shared.clear()  # answers found again if asked again: memory stays bounded
            shared[name] = found
        else:
            self._by_alias[name] = found
        return found

    def _printed(self, m: re.Match[str]) -> SourceLocation:
        """What `_memo` makes of the nodes `parse_location` would build from a printed
        location (`match_printed_location`), without building them: an alias's text is
        read once per chunk, and most are of these shapes."""
        shape = m.lastindex
        if shape == PRINTED_FILE:
            return SourceLocation(m[1], int(m[2]), int(m[3]))
        if shape == PRINTED_NAME:
            return _named(m[4], self._alias(m[5]))
        if shape == PRINTED_CALLSITE:
            inner = self._alias(m[6])
            return _called(inner, self._alias(m[7]))
        if shape == PRINTED_FUSED:
            return self._fused_aliases(m[8].split(", "))
        return self._alias(m[9])

    def _fused_aliases(self, names: list[str]) -> SourceLocation:
        """`_fused` of the parts `AliasLoc(name)` for `names`, without making the nodes."""
        return _first_with_file(map(self._alias, names))

    def _fused(self, parts: tuple[Location, ...]) -> SourceLocation:
        # The first part with a file is the answer, and the parts after it are left
        # unresolved: XLA fuses two or more chains and the first usually has a file, so
        # most of their aliases are never needed. (It also keeps an alias loop through a
        # later part from caching an answer that depends on which alias was resolved
        # first.)
        return _first_with_file(map(self._memo, parts))

    def _resolve(self, loc: Location) -> SourceLocation:
        names: list[str] = []
        problems: list[str] = []
        callers: list[FileLoc] = []
        main = self._follow(loc, names, problems, callers, caller_depth=0)
        if main is None:
            return SourceLocation(names=tuple(names), callers=tuple(callers),
                                  problems=tuple(problems))
        return SourceLocation(main.file, main.line, main.col, main.end_line, main.end_col,
                              tuple(names), tuple(callers), tuple(problems))

    def _follow(self, loc: Location, names: list[str], problems: list[str],
                callers: list[FileLoc], caller_depth: int | None) -> FileLoc | None:
        """Walk one path of the location tree iteratively (chains can be long).

        Callers are collected only when `caller_depth` is not None, and only down to
        _MAX_CALLERS nested call sites.
        """
        seen_aliases: set[str] = set()
        # A call site's problems come after its callee's, as `_memo` gives them: each
        # caller's are held back until the walk ends, and the outermost come last.
        held_back: list[list[str]] = []
        current: Location | None = loc
        try:
            for _ in range(_MAX_STEPS):
                match current:
                    case None | UnknownLoc():
                        return None
                    case FileLoc():
                        return current
                    case NameLoc(name=name, child=child):
                        names.append(name)
                        current = child
                    case CallSiteLoc(callee=callee, caller=caller):
                        if caller_depth is not None and caller_depth < _MAX_CALLERS:
                            held_back.append([])
                            frame = self._follow(caller, [], held_back[-1], callers,
                                                 caller_depth + 1)
                            if frame is not None:
                                callers.insert(0, frame)
                        current = callee
                    case FusedLoc(locations=parts):
                        current = self._first_with_file(parts)
                    case AliasLoc(name=name):
                        if name in seen_aliases:
                            problems.append(f"location alias {name} refers to itself")
                            return None
                        seen_aliases.add(name)
                        current, error = self.lookup(name)
                        if error:
                            problems.append(error)
            problems.append("location chain too long")
            return None
        finally:
            for caller_problems in reversed(held_back):
                problems.extend(caller_problems)

    def _first_with_file(self, parts: tuple[Location, ...]) -> Location | None:
        """The first fused part that leads to a file location (else the first part)."""
        for part in parts:
            if self._follow(part, [], [], [], caller_depth=None) is not None:
                return part
        return parts[0] if parts else None


# What the aliases of a fast reader's table resolve to when they reach no loop, kept for
# the table's life (by its id: the table is a Mapping, so not hashable): the chunks and
# spans of one file each have their `LocationTable`, and their allocas share chains.
_SHARED_ANSWERS: dict[int, dict[str, SourceLocation]] = {}
# At most this many kept per table (a few MB; a span's own answers went with its records,
# and a large dump's spans resolve far more aliases between them).
_SHARED_LIMIT = 1 << 16


def _shared_answers(table: TrailingTable) -> dict[str, SourceLocation]:
    answers = _SHARED_ANSWERS.get(id(table))
    if answers is None:
        answers = _SHARED_ANSWERS[id(table)] = {}
        weakref.finalize(table, _SHARED_ANSWERS.pop, id(table), None)
    return answers


# `match_printed_location` itself (its pattern's fullmatch), one call less per alias.
_match_printed = PRINTED_LOCATION.fullmatch


def _named(name: str, r: SourceLocation) -> SourceLocation:
    """A name location's answer: its child's, with the name first."""
    return SourceLocation(r.file, r.line, r.col, r.end_line, r.end_col, (name, *r.names),
                          r.callers, r.problems)


def _called(inner: SourceLocation, outer: SourceLocation) -> SourceLocation:
    """A call site's answer: the callee's, with the caller's file first among its callers."""
    frame = (() if outer.file is None else
             (FileLoc(outer.file, outer.line or 0, outer.col, outer.end_line, outer.end_col),))
    callers = (*inner.callers, *frame, *outer.callers)[:_MAX_CALLERS]
    return SourceLocation(inner.file, inner.line, inner.col, inner.end_line, inner.end_col,
                          inner.names, callers, inner.problems + outer.problems)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _default_parser() -> Callable[[str], Location]:
    return parse_location


def _first_with_file(resolved: Iterator[SourceLocation]) -> SourceLocation:
    """A fused location's answer: the first of its parts, resolved in turn (lazily: the
    parts after the answer are never resolved), that has a file, else the first part."""
    first: SourceLocation | None = None
    for location in resolved:
        if location.file is not None:
            return location
        if first is None:
            first = location
    return first if first is not None else UNRESOLVED
