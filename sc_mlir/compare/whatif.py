"""What if: apply edits to the allocation table and re-simulate, without recompiling.

Edits (resize, drop, scale, a default alignment) are applied to copies of the allocation
records; the stack, liveness and packed simulations and the verdicts run again on them,
and the answer is the `DiffResult` of `sc-mlir diff`, with the table as read as BEFORE
and the edited table as AFTER. Entries are paired by identity (their place in the dump),
not by the diff's matching heuristics: nothing moved, only sizes changed.

Selectors name the entries an edit applies to:

* `%232`: the SSA name, in every func that has it; `FUNC:%232` in funcs named FUNC
  (shell-style wildcards allowed); scratch operands by their argument (`%arg6`);
* `model/embedding.py:89` or `FILE:LINE:COL`: every entry whose resolved source location
  is there, or whose op is at that line of a dump file (`result.1:279`);
* `@gather_rows`: every entry with that name location in its chain.

>>> import sc_mlir
>>> analysis = sc_mlir.load(sc_mlir.example_path()).analyze()
>>> change = analysis.what_if(resize={"%231": 11720, "%232": 11720})
>>> [(c.space_label, c.before.stack_peak_words, c.after.stack_peak_words, c.after.verdict)
...  for c in change.spaces][:1]
[('201 (tile_spmem)', 140704, 117264, 'fits')]
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from sc_mlir.analysis import Analysis, SpaceReport, analyze_records
from sc_mlir.analysis.report import FITS, UNKNOWN_BOUND
from sc_mlir.compare.diff import (
    KIND,
    Added,
    AllocaView,
    DiffResult,
    Edit,
    SpaceChange,
    SpaceView,
    _edit,
    views_from_analysis,
)
from sc_mlir.model.allocation import HEAP, Allocation
from sc_mlir.model.bounds import Bounds
from sc_mlir.syntax.memref import bits_to_bytes, bytes_to_words

SSA, SOURCE, NAME = "ssa", "source", "name"


class EditError(ValueError):
    """An edit that cannot be applied: a selector that does not read or matches nothing,
    a size that is not a number, two edits of one entry."""


@dataclass(frozen=True)
class Selector:
    """Which entries an edit applies to (see the module's docstring)."""

    text: str
    kind: str  # SSA, SOURCE or NAME
    name: str | None = None  # the SSA name (`%232`) or the name location (`gather_rows`)
    func: str | None = None  # for `FUNC:%232`: a func name or pattern
    file: str | None = None
    line: int | None = None
    col: int | None = None

    def matches(self, record: Allocation) -> bool:
        if self.kind == SSA:
            return record.name == self.name and (
                self.func is None or fnmatch.fnmatchcase(record.func, self.func))
        if self.kind == NAME:
            return self.name in record.loc.names
        loc = record.loc
        assert self.file is not None
        at_source = (loc.file is not None and _same_file(self.file, loc.file)
                     and loc.line == self.line and (self.col is None or loc.col == self.col))
        in_dump = (_same_file(self.file, record.file) and record.line == self.line
                   and (self.col is None or record.col == self.col))
        return at_source or in_dump


def _same_file(written: str, actual: str) -> bool:
    """`embedding.py` or `model/embedding.py` names `/src/model/embedding.py`."""
    return (actual == written or actual.endswith("/" + written)
            or os.path.basename(actual) == written)


def parse_selector(text: str) -> Selector:
    """Read a selector.

    >>> parse_selector("%232").kind, parse_selector("lookup:%232").func
    ('ssa', 'lookup')
    >>> s = parse_selector("model/embedding.py:89")
    >>> (s.kind, s.file, s.line, s.col)
    ('source', 'model/embedding.py', 89, None)
    >>> parse_selector("@gather_rows").name
    'gather_rows'
    """
    written = text.strip()
    if written.startswith("%"):
        return Selector(written, SSA, name=written)
    func, sep, name = written.rpartition(":%")
    if sep and func:
        return Selector(written, SSA, name="%" + name, func=func.lstrip("@"))
    if written.startswith("@") and len(written) > 1:
        return Selector(written, NAME, name=written[1:].strip('"'))
    parts = written.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdecimal() and parts[2].isdecimal() and parts[0]:
        return Selector(written, SOURCE, file=parts[0].strip('"'), line=int(parts[1]),
                        col=int(parts[2]))
    parts = written.rsplit(":", 1)
    if len(parts) == 2 and parts[1].isdecimal() and parts[0]:
        return Selector(written, SOURCE, file=parts[0].strip('"'), line=int(parts[1]))
    raise EditError(f"cannot read the selector {text!r}: expected %NAME, FUNC:%NAME, "
                    "FILE:LINE, FILE:LINE:COL or @NAME")


@dataclass(frozen=True)
class Edits:
    """What to change. `resize`: selector -> words; `drop`: selectors; `scale`: selector ->
    factor (a number or its text, e.g. "0.5" or "1/2"), rounded up to whole elements of the
    buffer's type; `align`: space -> default alignment in bytes for AFTER."""

    resize: Mapping[str, int] = field(default_factory=dict)
    drop: Sequence[str] = ()
    scale: Mapping[str, float | str | Fraction] = field(default_factory=dict)
    align: Mapping[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """The edits as command-line options.

        >>> Edits(resize={"%1": 8}, drop=["%2"], scale={"a.py:3": "1/2"}).describe()
        '--resize %1=8 --scale a.py:3=1/2 --drop %2'
        """
        parts = [f"--resize {s}={w}" for s, w in self.resize.items()]
        parts += [f"--scale {s}={f}" for s, f in self.scale.items()]
        parts += [f"--drop {s}" for s in self.drop]
        parts += [f"--align {s}={b}" for s, b in self.align.items()]
        return " ".join(parts)


def parse_factor(value: float | str | Fraction) -> Fraction:
    """An exact factor: `0.5`, `"0.5"`, `"1/2"` -> Fraction(1, 2)."""
    try:
        factor = Fraction(str(value).strip()) if not isinstance(value, Fraction) else value
    except (ValueError, ZeroDivisionError):
        raise EditError(f"scale factor {value!r} is not a number") from None
    if factor < 0:
        raise EditError(f"scale factor {value} must not be negative")
    return factor


def scaled_words(record: Allocation, factor: Fraction) -> int:
    """The words of `record` with its elements scaled by `factor`, rounded up to whole
    elements (then bytes and words round up as for any buffer)."""
    elements, bits = record.num_elements, record.element_bits
    if elements is None or bits is None:
        raise EditError(f"cannot scale {record.name or 'the entry'} at "
                        f"{os.path.basename(record.file)}:{record.line}: its size is unknown "
                        f"({record.type}); use --resize with a number of words")
    new_elements = -(-elements * factor.numerator // factor.denominator)
    words = bytes_to_words(bits_to_bytes(new_elements * bits))
    assert words is not None
    return words


def candidates(selector: Selector, records: Iterable[Allocation]) -> list[str]:
    """Selectors of the same kind that would match something, nearest first."""
    texts: set[str] = set()
    for r in records:
        if selector.kind == SSA and r.name:
            texts.add(f"{r.func}:{r.name}" if selector.func is not None else r.name)
        elif selector.kind == NAME:
            texts.update("@" + name for name in r.loc.names)
        elif selector.kind == SOURCE:
            if r.loc.file is not None:
                texts.add(f"{r.loc.file}:{r.loc.line}")
            texts.add(f"{os.path.basename(r.file)}:{r.line}")
    near = difflib.get_close_matches(selector.text, sorted(texts), n=5, cutoff=0.4)
    return near or sorted(texts)[:5]


def select(selector: Selector, records: Sequence[Allocation], option: str) -> list[int]:
    """Indices of the entries `selector` matches; none is an error naming the nearest."""
    found = [i for i, r in enumerate(records) if selector.matches(r)]
    if not found:
        near = candidates(selector, records)
        hint = (f"; nearest: {', '.join(near)}" if near
                else "; no entry to choose from (check --space and --func)" if not records
                else "")
        raise EditError(f"{option} {selector.text}: matches no entry{hint}")
    return found


def _split(item: str, option: str) -> tuple[str, str]:
    selector, sep, value = item.rpartition("=")
    if not sep or not selector.strip() or not value.strip():
        raise EditError(f"{option} {item!r}: expected SELECTOR=VALUE")
    return selector.strip(), value.strip()


def edits_from_options(resize: Sequence[str] = (), drop: Sequence[str] = (),
                       scale: Sequence[str] = (), align: Mapping[str, int] | None = None
                       ) -> Edits:
    """`--resize %1=8 --scale a.py:3=0.5 --drop %2` as `Edits` (values checked)."""
    sizes: dict[str, int] = {}
    for item in resize:
        selector, value = _split(item, "--resize")
        try:
            words = int(value.replace("_", ""))
        except ValueError:
            raise EditError(f"--resize {item}: {value!r} is not a whole number of words"
                            ) from None
        if words < 0:
            raise EditError(f"--resize {item}: words must not be negative")
        if selector in sizes:
            raise EditError(f"--resize {selector} is given twice ({sizes[selector]} and "
                            f"{words} words)")
        sizes[selector] = words
    factors: dict[str, float | str | Fraction] = {}
    for item in scale:
        selector, value = _split(item, "--scale")
        parse_factor(value)  # checked now; kept as written for the report
        if selector in factors:
            raise EditError(f"--scale {selector} is given twice ({factors[selector]} and "
                            f"{value})")
        factors[selector] = value
    return Edits(sizes, tuple(d.strip() for d in drop), factors, dict(align or {}))


def apply_edits(records: Sequence[Allocation], edits: Edits) -> list[Allocation]:
    """Copies of `records` with the edits applied (dropped entries left out). Heap entries
    are not on the stack: selectors do not see them, and they are kept as they are."""
    stacked = [r for r in records if r.kind != HEAP]
    words: dict[int, int] = {}
    dropped: set[int] = set()
    by: dict[int, str] = {}

    def claim(index: int, option: str) -> None:
        if index in by:
            r = stacked[index]
            raise EditError(f"{option} and {by[index]} both select {r.name or 'an entry'} "
                            f"({r.func}, {os.path.basename(r.file)}:{r.line}): give one edit "
                            "per entry")
        by[index] = option

    for text, size in edits.resize.items():
        option = f"--resize {text}={size}"
        if isinstance(size, bool) or not isinstance(size, int | float) or int(size) != size:
            raise EditError(f"{option}: {size!r} is not a whole number of words")
        if size < 0:
            raise EditError(f"{option}: words must not be negative")
        for i in select(parse_selector(text), stacked, "--resize"):
            claim(i, option)
            words[i] = int(size)
    for text, value in edits.scale.items():
        factor = parse_factor(value)
        option = f"--scale {text}={value}"
        for i in select(parse_selector(text), stacked, "--scale"):
            claim(i, option)
            words[i] = scaled_words(stacked[i], factor)
    for text in edits.drop:
        for i in select(parse_selector(text), stacked, "--drop"):
            claim(i, f"--drop {text}")
            dropped.add(i)
    edited = [replace(r, words=words[i]) if i in words else r
              for i, r in enumerate(stacked) if i not in dropped]
    return edited + [r for r in records if r.kind == HEAP]


def what_if(records: Sequence[Allocation], bounds: Bounds, edits: Edits, root: str = "",
            before_name: str = "as read", after_name: str | None = None) -> DiffResult:
    """BEFORE: `records` analysed with `bounds`; AFTER: the same with `edits` applied."""
    after_bounds = (bounds.with_alignments(dict(edits.align), "what-if --align")
                    if edits.align else bounds)
    edited = apply_edits(records, edits)
    before = analyze_records(records, bounds)
    # The views keep the last chunk of each (file, func, space); which one is last must be
    # decided on BEFORE, or dropping every entry of that chunk would compare another.
    latest: dict[tuple[str, str, str], int] = {}
    for report in before:
        key = _view_key(report)
        latest[key] = max(latest.get(key, report.chunk), report.chunk)
    after = [r for r in analyze_records(edited, after_bounds)
             if latest.get(_view_key(r)) == r.chunk]
    return diff_by_identity(
        views_from_analysis(Analysis(before, bounds=bounds), root),
        views_from_analysis(Analysis(after, bounds=after_bounds), root),
        before_name, after_name or f"{before_name} with {edits.describe() or 'no edit'}")


def _view_key(report: SpaceReport) -> tuple[str, str, str]:
    space = str(report.space_id) if report.space_id is not None else report.space_name
    return (report.file, report.func, space)


def _identity(view: AllocaView) -> tuple[object, ...]:
    return (view.kind, view.order, view.line, view.name, view.scratch_index)


def emptied(view: SpaceView) -> SpaceView:
    """A (func, space) whose every entry was dropped: nothing on its stack."""
    return replace(view, stack_peak_words=0, liveness_peak_words=0, packed_peak_words=0,
                   verdict=FITS if view.bound_words is not None else UNKNOWN_BOUND,
                   allocas=())


def diff_by_identity(before: Sequence[SpaceView], after: Sequence[SpaceView],
                     before_name: str, after_name: str) -> DiffResult:
    """The diff of two analyses of one program: spaces and entries paired by their place
    in the dump."""
    remaining = {(v.program, v.func, v.space_key): v for v in after}
    spaces: list[SpaceChange] = []
    edits: list[Edit] = []
    for b in before:
        a = remaining.pop((b.program, b.func, b.space_key), None) or emptied(b)
        change = SpaceChange(b, a)
        spaces.append(change)
        left = {_identity(x): x for x in a.allocas}
        for x in b.allocas:
            edits.append(_edit(change.func, change.space_label, x, left.pop(_identity(x), None)))
        edits.extend(Added(change.func, change.space_label, y) for y in left.values())
    for a in remaining.values():
        spaces.append(SpaceChange(None, a))
        edits.extend(Added(a.func, a.space_label, y) for y in a.allocas)
    spaces.sort(key=lambda c: (-abs(c.delta_words), c.func, c.space_label))
    edits.sort(key=lambda e: (-abs(e.delta_words), KIND[type(e)] == "unchanged", e.func,
                              e.space))
    return DiffResult(before_name, after_name, tuple(spaces), tuple(edits))


def analysis_what_if(analysis: Analysis, edits: Edits) -> DiffResult:
    """`Analysis.what_if`: the analysis's own entries and bounds, edited."""
    records = [placed.record for report in analysis.reports for placed in report.allocas]
    return what_if(records, analysis.bounds, edits, before_name="analysis",
                   after_name=f"what if {edits.describe() or '(no edit)'}")
