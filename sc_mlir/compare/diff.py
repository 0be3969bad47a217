"""Diff two dumps (or two saved analyses) after a config change.

The result is data: small frozen records, one per alloca (`Added`, `Removed`, `Resized`,
`Moved`, `Unchanged`) and one per (func, memory space) (`SpaceChange`). Every delta is
AFTER minus BEFORE: "+" means it grew in AFTER. Renderers format these records; the
matching heuristics (`match_spaces`, `match_allocas`) live apart from them.

Matching never relies on SSA numbers, which change from run to run:

* programs and funcs are matched by symbol name, first exactly, then with numeric
  suffixes and numbered file names (`module_0007` vs `module_0009`) ignored;
* allocas by a signature that survives renumbering: source location and name chain,
  scope path, element type and rank; then without the source line (code that moved);
  then by order within the same scope.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sc_mlir.analysis import Analysis, PlacedAlloca, SpaceReport, analyze
from sc_mlir.model.allocation import ALLOCA, SCRATCH_OPERAND
from sc_mlir.model.bounds import Bounds
from sc_mlir.model.dump import Dump
from sc_mlir.model.spaces import space_matches

if TYPE_CHECKING:
    pass

T = TypeVar("T")

# --- the views being compared ----------------------------------------------------------------


@dataclass(frozen=True)
class AllocaView:
    """What the diff needs to know of one alloca."""

    name: str
    words: int | None
    type: str
    element_type: str
    rank: int | None
    scope_path: str
    line: int
    order: int
    loc_file: str | None
    loc_line: int | None
    loc_col: int | None
    loc_names: tuple[str, ...]
    kind: str = ALLOCA
    scratch_index: int | None = None  # for a scratch operand: its scratch_shapes entry

    @property
    def loc(self) -> str:
        if self.loc_file is None:
            return self.loc_names[-1] if self.loc_names else ""
        parts = [self.loc_file, str(self.loc_line)]
        if self.loc_col is not None:
            parts.append(str(self.loc_col))
        return ":".join(parts)


@dataclass(frozen=True)
class SpaceView:
    """One (program, func, memory space) of one side."""

    program: str  # the file, relative to the dump's root
    func: str
    space_key: str
    space_label: str
    memory_space: str | None
    bound_words: int | None
    stack_peak_words: int
    liveness_peak_words: int
    packed_peak_words: int
    verdict: str
    allocas: tuple[AllocaView, ...]

    @property
    def over_words(self) -> int:
        """Words over the bound (0 when it fits or the bound is unknown)."""
        if self.bound_words is None:
            return 0
        return max(self.stack_peak_words - self.bound_words, 0)

    @property
    def crossing(self) -> bool:
        return self.bound_words is not None and self.stack_peak_words > self.bound_words


def _space_key(space_id: int | None, space_name: str) -> str:
    return str(space_id) if space_id is not None else space_name


def _label(space_id: int | None, space_name: str) -> str:
    return f"{space_id} ({space_name})" if space_id is not None else space_name


def _relative(file: str, root: str) -> str:
    if os.path.isdir(root):
        try:
            return os.path.relpath(file, root)
        except ValueError:
            return file
    return os.path.basename(file)


def views_from_analysis(analysis: Analysis, root: str) -> list[SpaceView]:
    """One view per (file, func, space); of several chunks (print-after-all) the last."""
    latest: dict[tuple[str, str, str], SpaceReport] = {}
    for report in analysis.reports:
        key = (report.file, report.func, _space_key(report.space_id, report.space_name))
        if key not in latest or report.chunk > latest[key].chunk:
            latest[key] = report
    return [_view(report, root) for report in latest.values()]


def _view(report: SpaceReport, root: str) -> SpaceView:
    return SpaceView(
        program=_relative(report.file, root), func=report.func,
        space_key=_space_key(report.space_id, report.space_name),
        space_label=_label(report.space_id, report.space_name),
        memory_space=report.memory_space, bound_words=report.bound_words,
        stack_peak_words=report.stack_peak_words,
        liveness_peak_words=report.liveness_peak_words,
        packed_peak_words=report.packed_peak_words, verdict=report.verdict,
        allocas=tuple(_alloca(p) for p in report.allocas),
    )


def _alloca(placed: PlacedAlloca) -> AllocaView:
    r = placed.record
    return AllocaView(r.name, r.words, r.type, r.element_type,
                      None if r.shape is None else len(r.shape), r.scope_path, r.line, r.order,
                      r.loc.file, r.loc.line, r.loc.col, r.loc.names, r.kind, r.scratch_index)


def views_from_json(path: str) -> list[SpaceView]:
    """Views from a saved `sc-mlir analyze --format json`. A file that is not one (a field
    missing or of the wrong type) is a ValueError naming the field."""
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except RecursionError:
            raise ValueError(f"{path}: nested too deep to be a saved analysis") from None
        except ValueError as exc:  # not JSON, or not UTF-8
            raise ValueError(f"{path}: not a saved analysis: {exc}") from None
    if not isinstance(data, dict) or "spaces" not in data or "allocations" not in data:
        raise ValueError(f"{path}: not a saved analysis with every alloca (save it with "
                         "'sc-mlir analyze --format json --allocations')")
    saved = _Saved(path)
    root = str(data.get("path", ""))
    rows: dict[tuple[str, int, str, str], list[tuple[str, dict]]] = defaultdict(list)
    for where, row in saved.records(data, "allocations"):
        key = (saved.get(row, where, "file", str), saved.get(row, where, "chunk", int, 0),
               saved.get(row, where, "func", str), saved.space_key(row, where))
        rows[key].append((where, row))
    latest: dict[tuple[str, str, str], tuple[str, dict]] = {}
    for where, space in saved.records(data, "spaces"):
        key = (saved.get(space, where, "file", str), saved.get(space, where, "func", str),
               saved.space_key(space, where))
        chunk = saved.get(space, where, "chunk", int, 0)
        if key not in latest or chunk > latest[key][1].get("chunk", 0):
            latest[key] = (where, space)
    views = []
    for (file, func, space_key), (where, space) in latest.items():
        allocas = sorted((saved.alloca(where_row, row) for where_row, row
                          in rows[(file, space.get("chunk", 0), func, space_key)]),
                         key=lambda view: view.order)
        views.append(SpaceView(
            program=_relative(file, root), func=func, space_key=space_key,
            space_label=_label(space.get("space_id"), space.get("space_name", "")),
            memory_space=saved.get(space, where, "memory_space", str, None),
            bound_words=saved.get(space, where, "bound_words", int, None),
            stack_peak_words=saved.get(space, where, "stack_peak_words", int),
            liveness_peak_words=saved.get(space, where, "liveness_peak_words", int),
            packed_peak_words=saved.get(space, where, "packed_peak_words", int, 0),
            verdict=saved.get(space, where, "verdict", str),
            allocas=tuple(allocas),
        ))
    return views


_REQUIRED = object()
_KIND_NAMES = {str: "a string", int: "an integer", list: "a list"}


class _Saved:
    """The fields of a saved analysis, each checked for its type as it is read."""

    def __init__(self, path: str) -> None:
        self.path = path

    def records(self, data: dict, key: str) -> list[tuple[str, dict]]:
        items = data[key]
        if not isinstance(items, list):
            raise self.wrong(key, "a list", items)
        found = []
        for number, item in enumerate(items):
            where = f"{key}[{number}]"
            if not isinstance(item, dict):
                raise self.wrong(where, "an object", item)
            found.append((where, item))
        return found

    def get(self, record: dict, where: str, key: str, kind: type, default: object = _REQUIRED
            ) -> Any:
        value = record.get(key, default)
        if value is _REQUIRED:
            raise ValueError(f"{self.path}: {where} has no {key!r}: not a saved analysis "
                             "(save it with 'sc-mlir analyze --format json --allocations')")
        if value is None and default is None:
            return None
        # (JSON's true and false are ints to Python, not to a reader of the file.)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise self.wrong(f"{where}.{key}", _KIND_NAMES[kind], value)
        return value

    def space_key(self, record: dict, where: str) -> str:
        return _space_key(self.get(record, where, "space_id", int, None),
                          self.get(record, where, "space_name", str, ""))

    def alloca(self, where: str, row: dict) -> AllocaView:
        def get(key: str, kind: type, default: object = None) -> Any:
            return self.get(row, where, key, kind, default)

        shape = get("shape", list)
        names = get("loc_names", list)
        if names is not None and not all(isinstance(name, str) for name in names):
            raise self.wrong(f"{where}.loc_names", "a list of strings", names)
        return AllocaView(
            get("name", str, ""), get("words", int), get("type", str, ""),
            get("element_type", str, ""), None if shape is None else len(shape),
            get("scope_path", str, ""), get("line", int, 0), get("order", int, 0),
            get("loc_file", str), get("loc_line", int), get("loc_col", int),
            tuple(names or ()), get("kind", str) or ALLOCA, get("scratch_index", int))

    def wrong(self, where: str, expected: str, value: object) -> ValueError:
        shown = json.dumps(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return ValueError(f"{self.path}: {where} should be {expected}, not {shown}")


# --- the records -------------------------------------------------------------------------


@dataclass(frozen=True)
class Added:
    func: str
    space: str
    after: AllocaView

    @property
    def delta_words(self) -> int:
        return self.after.words or 0


@dataclass(frozen=True)
class Removed:
    func: str
    space: str
    before: AllocaView

    @property
    def delta_words(self) -> int:
        return -(self.before.words or 0)


@dataclass(frozen=True)
class Resized:
    func: str
    space: str
    before: AllocaView
    after: AllocaView

    @property
    def delta_words(self) -> int:
        return (self.after.words or 0) - (self.before.words or 0)


@dataclass(frozen=True)
class Moved:
    """Same size, but in another scope (or at another source location)."""

    func: str
    space: str
    before: AllocaView
    after: AllocaView

    @property
    def delta_words(self) -> int:
        return 0


@dataclass(frozen=True)
class Unchanged:
    func: str
    space: str
    before: AllocaView
    after: AllocaView

    @property
    def delta_words(self) -> int:
        return 0


Edit = Added | Removed | Resized | Moved | Unchanged
KIND = {Added: "added", Removed: "removed", Resized: "resized", Moved: "moved",
        Unchanged: "unchanged"}


@dataclass(frozen=True)
class SpaceChange:
    """A (func, memory space) before -> after; one side is None when it is unmatched."""

    before: SpaceView | None
    after: SpaceView | None

    @property
    def func(self) -> str:
        side = self.after or self.before
        assert side is not None
        return side.func

    @property
    def func_before(self) -> str | None:
        return self.before.func if self.before else None

    @property
    def space_label(self) -> str:
        side = self.after or self.before
        assert side is not None
        return side.space_label

    @property
    def memory_space(self) -> str | None:
        side = self.after or self.before
        assert side is not None
        return side.memory_space

    @property
    def delta_words(self) -> int:
        """Stack peak, AFTER minus BEFORE."""
        return ((self.after.stack_peak_words if self.after else 0)
                - (self.before.stack_peak_words if self.before else 0))

    @property
    def liveness_delta_words(self) -> int:
        return ((self.after.liveness_peak_words if self.after else 0)
                - (self.before.liveness_peak_words if self.before else 0))

    @property
    def still_over_words(self) -> int:
        return self.after.over_words if self.after else 0

    @property
    def now_free_words(self) -> int | None:
        """Room left under the bound in AFTER (None when the bound is unknown)."""
        if self.after is None or self.after.bound_words is None:
            return None
        return max(self.after.bound_words - self.after.stack_peak_words, 0)


@dataclass(frozen=True)
class DiffResult:
    before: str
    after: str
    spaces: tuple[SpaceChange, ...]
    allocations: tuple[Edit, ...]

    @property
    def changed(self) -> list[Edit]:
        """The allocas that changed (every edit but `Unchanged`), largest change first."""
        return [e for e in self.allocations if not isinstance(e, Unchanged)]

    def select(self, spaces: Sequence[str] | None = None) -> DiffResult:
        if not spaces:
            return self
        def keep(label: str) -> bool:
            # A saved analysis keeps the printed label only: `201 (tile_spmem)` or `name`.
            key, _, rest = label.partition(" (")
            space_id = int(key) if key.lstrip("-").isdigit() else None
            name = rest.removesuffix(")") if rest else key
            return any(space_matches(w, space_id, name) for w in spaces)

        return DiffResult(self.before, self.after,
                          tuple(c for c in self.spaces if keep(c.space_label)),
                          tuple(e for e in self.allocations if keep(e.space)))

    @property
    def after_crosses(self) -> bool:
        return any(c.after is not None and c.after.crossing for c in self.spaces)

    @property
    def regressed(self) -> bool:
        return any(c.delta_words > 0 for c in self.spaces if c.before and c.after)


# --- matching ------------------------------------------------------------------------------

_DIGITS = re.compile(r"\d+")


def strip_number(name: str) -> str:
    """`fusion.123` -> `fusion`, `kernel_7` -> `kernel`, `step` -> `step`.

    >>> strip_number("fusion.123"), strip_number("kernel_7"), strip_number("k2v")
    ('fusion', 'kernel', 'k2v')
    """
    end = len(name)
    # From the end: digits, each run optionally after one separator (a loop rather than a
    # regex: `(?:[._-]?\d+)+$` backtracks exponentially on long digit runs).
    while end > 0 and name[end - 1].isdecimal():
        while end > 0 and name[end - 1].isdecimal():
            end -= 1
        if end > 1 and name[end - 1] in "._-" and name[end - 2].isdecimal():
            end -= 1
        elif end > 0 and name[end - 1] in "._-":
            end -= 1
            break
    return name[:end] or name


def program_pattern(program: str) -> str:
    """`sc/module_0007.lookup.mlir` -> `sc/module_#.lookup.mlir`."""
    return _DIGITS.sub("#", program)


def match_spaces(before: list[SpaceView], after: list[SpaceView]
                 ) -> list[tuple[SpaceView | None, SpaceView | None]]:
    """Pair views by ever looser keys; what is left unpaired stands alone."""
    keys = (
        lambda v: (v.program, v.func, v.space_key),
        lambda v: (program_pattern(v.program), v.func, v.space_key),
        lambda v: (program_pattern(v.program), strip_number(v.func), v.space_key),
        lambda v: (v.func, v.space_key),
        lambda v: (strip_number(v.func), v.space_key),
    )
    left = list(before)
    right = list(after)
    pairs: list[tuple[SpaceView | None, SpaceView | None]] = []
    for key in keys:
        pairs.extend(_pair_by(left, right, key))
    pairs.extend((b, None) for b in left)
    pairs.extend((None, a) for a in right)
    return pairs


def _pair_by(left: list[T], right: list[T], key: Callable[[T], Hashable]
             ) -> list[tuple[T, T]]:
    """Pair items with equal keys, in order; remove them from `left` and `right`."""
    buckets: dict[Hashable, list[T]] = defaultdict(list)
    for item in right:
        buckets[key(item)].append(item)
    pairs: list[tuple[T, T]] = []
    kept_left: list[T] = []
    for item in left:
        bucket = buckets.get(key(item))
        if bucket:
            match = bucket.pop(0)
            pairs.append((item, match))
            right.remove(match)
        else:
            kept_left.append(item)
    left[:] = kept_left
    return pairs


def _scope_in_func(path: str) -> str:
    """A scope path without the func's name (funcs are matched already)."""
    head, sep, rest = path.partition("/")
    if head.startswith("func.func@") or "@" in head:
        return head.split("@", 1)[0] + (sep + rest if sep else "")
    return path


def _scratch_position(a: AllocaView) -> object:
    """A scratch operand is its kernel's `scratch_shapes` entry: matched by position and
    type (Pallas prints its argument's location as unknown); other entries never here."""
    if a.kind != SCRATCH_OPERAND:
        return object()  # equal to nothing: left for the keys below
    return (a.scratch_index, a.element_type, a.rank, a.loc_file, a.loc_line, a.loc_col)


def _scratch_by_type(a: AllocaView) -> object:
    """A scratch_shapes entry added or removed before this one shifts its position."""
    if a.kind != SCRATCH_OPERAND:
        return object()
    return (a.element_type, a.rank, a.loc_file, a.loc_line, a.loc_col)


def _signature_exact(a: AllocaView) -> tuple[object, ...]:
    return (a.kind, a.loc_file, a.loc_line, a.loc_col, a.loc_names,
            _scope_in_func(a.scope_path), a.element_type, a.rank)


def _signature_no_line(a: AllocaView) -> tuple[object, ...]:
    return (a.kind, a.loc_file, a.loc_names, _scope_in_func(a.scope_path), a.element_type,
            a.rank)


def _signature_source(a: AllocaView) -> tuple[object, ...]:
    """Same source (file, line, col, names) and element type, in any scope: a move."""
    return (a.kind, a.loc_file, a.loc_line, a.loc_col, a.loc_names, a.element_type, a.rank)


def _order_in_scope(a: AllocaView) -> tuple[object, ...]:
    return (a.kind, _scope_in_func(a.scope_path), a.element_type, a.rank)


def match_allocas(before: Sequence[AllocaView], after: Sequence[AllocaView]
                  ) -> list[tuple[AllocaView | None, AllocaView | None]]:
    left = sorted(before, key=lambda a: a.order)
    right = sorted(after, key=lambda a: a.order)
    pairs: list[tuple[AllocaView | None, AllocaView | None]] = []
    for key in (_scratch_position, _scratch_by_type, _signature_exact, _signature_no_line,
                _signature_source):
        pairs.extend(_pair_by(left, right, key))
    # Last resort: the n-th alloca of a scope (same element type and rank) in each.
    pairs.extend(_pair_by(left, right, _order_in_scope))
    pairs.extend((b, None) for b in left)
    pairs.extend((None, a) for a in right)
    return pairs


def _edit(func: str, space: str, before: AllocaView | None, after: AllocaView | None) -> Edit:
    if before is None:
        assert after is not None
        return Added(func, space, after)
    if after is None:
        return Removed(func, space, before)
    if (before.words or 0) != (after.words or 0):
        return Resized(func, space, before, after)
    if (_scope_in_func(before.scope_path) != _scope_in_func(after.scope_path)
            or (before.loc_file, before.loc_line, before.loc_names)
            != (after.loc_file, after.loc_line, after.loc_names)):
        return Moved(func, space, before, after)
    return Unchanged(func, space, before, after)


def diff_views(before: list[SpaceView], after: list[SpaceView], before_name: str,
               after_name: str) -> DiffResult:
    spaces: list[SpaceChange] = []
    edits: list[Edit] = []
    for b, a in match_spaces(before, after):
        change = SpaceChange(b, a)
        spaces.append(change)
        pairs = match_allocas(b.allocas if b else (), a.allocas if a else ())
        edits.extend(_edit(change.func, change.space_label, x, y) for x, y in pairs)
    spaces.sort(key=lambda c: (-abs(c.delta_words), c.func, c.space_label))
    edits.sort(key=lambda e: (-abs(e.delta_words), KIND[type(e)] == "unchanged", e.func,
                              e.space))
    return DiffResult(before_name, after_name, tuple(spaces), tuple(edits))


def side_views(side: Dump | str | os.PathLike[str], bounds: Bounds,
               load_dump: Callable[[str], Dump]) -> tuple[list[SpaceView], str]:
    """One side of a diff and its name, from whatever the user gave: a loaded dump, a
    saved analysis (`analyze --format json --allocations`), or a dump's path, which
    `load_dump` reads (the API and the CLI load differently: progress bar, exit codes).
    The one "dump or saved analysis" rule, for `sc_mlir.diff` and `sc-mlir diff`."""
    if isinstance(side, Dump):
        return views_from_analysis(analyze(side, bounds), side.path), side.path
    path = str(side)
    if is_saved_analysis(path):
        return views_from_json(path), path
    return views_from_analysis(analyze(load_dump(path), bounds), path), path


def is_saved_analysis(path: str) -> bool:
    """A JSON file (MLIR text never starts with `{`)."""
    p = Path(path)
    if not p.is_file():
        return False
    with open(p, "rb") as handle:
        head = handle.read(64).lstrip()
    return p.suffix == ".json" or head.startswith(b"{")
