"""Who holds the scratch: the entries on the stack at its peak, grouped by where they come
from (the resolved source line, the source file, or the outermost name location).

The groups are taken at the stack peak, the point the cheapest fix is planned at (see
`plan_fix`), so that their words plus the alignment gaps between them add up to the stack
peak exactly. When the stack crosses its bound the peak is at or after the first crossing.

>>> import sc_mlir
>>> report = sc_mlir.load(sc_mlir.example_path()).analyze().reports[0]
>>> up = roll_up(report, "source")
>>> for g in up.groups:
...     print(g.key, g.n_allocas, g.words)
model/embedding.py:88 5 117200
model/embedding.py:89 1 23440
model/embedding.py:74 1 64
>>> up.padding_words, up.total_words == report.stack_peak_words
(0, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from sc_mlir.analysis.report import PlacedAlloca, SpaceReport
from sc_mlir.model.allocation import Allocation

NO_SOURCE = "(no source location)"
NO_NAME = "(no name location)"


def _by_source(record: Allocation) -> str:
    loc = record.loc
    return f"{loc.file}:{loc.line}" if loc.file is not None else NO_SOURCE


def _by_file(record: Allocation) -> str:
    loc = record.loc
    return loc.file if loc.file is not None else NO_SOURCE


def _by_name(record: Allocation) -> str:
    names = record.loc.names
    return names[0] if names else NO_NAME


# What each `--group-by` keys an entry on.
GROUPINGS: dict[str, Callable[[Allocation], str]] = {
    "source": _by_source, "file": _by_file, "name": _by_name,
}


@dataclass(frozen=True)
class Group:
    """Entries on the stack at the peak that share a key."""

    key: str
    n_allocas: int
    words: int
    percent: float  # of the stack peak
    members: tuple[PlacedAlloca, ...] = field(repr=False)


@dataclass(frozen=True)
class Rollup:
    """One (func, space) rolled up: `groups` largest first; their words plus
    `padding_words` equal `total_words`, the stack peak."""

    by: str
    total_words: int
    padding_words: int
    groups: tuple[Group, ...]
    # the entry whose placement reaches the peak
    peak_entry: PlacedAlloca | None = field(repr=False)

    @property
    def padding_percent(self) -> float:
        return _percent(self.padding_words, self.total_words)


class GroupRow(NamedTuple):
    """A group as the terminal shows it: its entries counted, not held."""

    key: str
    n_allocas: int
    words: int
    percent: float


@dataclass(frozen=True, slots=True)
class RollupOutline:
    """What the terminal shows of a roll-up, made where its file was read: each group's
    key, entries, words and percent (largest first), without the entries themselves."""

    by: str
    total_words: int
    padding_words: int
    padding_percent: float
    groups: tuple[GroupRow, ...]
    peak_name: str | None  # the entry whose placement reaches the peak
    peak_line: int | None

    @classmethod
    def of(cls, rollup: Rollup) -> RollupOutline:
        peak = rollup.peak_entry
        return cls(rollup.by, rollup.total_words, rollup.padding_words,
                   rollup.padding_percent,
                   tuple(GroupRow(g.key, g.n_allocas, g.words, g.percent)
                         for g in rollup.groups),
                   peak.name if peak is not None else None,
                   peak.record.line if peak is not None else None)


def _percent(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def roll_up(report: SpaceReport, by: str) -> Rollup:
    """The entries on the stack at `report`'s peak, grouped `by` "source", "file" or
    "name"."""
    if by not in GROUPINGS:
        raise ValueError(f"cannot group by {by!r}: expected one of {', '.join(GROUPINGS)}")
    key_of = GROUPINGS[by]
    on_stack = [report.allocas[i] for i in report.peak_stack]
    members: dict[str, list[PlacedAlloca]] = {}
    for placed in on_stack:
        members.setdefault(key_of(placed.record), []).append(placed)
    total = report.stack_peak_words
    groups = [Group(key, len(found), sum(p.words for p in found),
                    _percent(sum(p.words for p in found), total), tuple(found))
              for key, found in members.items()]
    groups.sort(key=lambda g: (-g.words, g.key))
    padding = sum(p.padding for p in on_stack)
    peak = (report.allocas[report.stack_peak_index]
            if report.stack_peak_index is not None else None)
    return Rollup(by, total, padding, tuple(groups), peak)


def shown_roll_up(report: SpaceReport, by: str) -> RollupOutline | None:
    """What the terminal shows of a report's roll-up: None when nothing is on its stack
    (the terminal shows no roll-up then)."""
    return RollupOutline.of(roll_up(report, by)) if report.stack_peak_words > 0 else None
