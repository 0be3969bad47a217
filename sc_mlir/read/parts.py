"""Scan one large file on several cores: split it between top-level funcs, scan the parts in
worker processes, and join them into the `FileScan` a single pass would have produced.

A part that starts at a func line needs the state the scanner had there. Between two funcs
of a module that state is small and the same everywhere: the module's region is open and
nothing else is. So each worker first scans the file's *prefix* (everything before the first
top-level func: dump header, aliases, the module's opening line), then jumps to its part
with the line numbers it has in the file. At the end of a part the worker checks that it is
back in that state (the module region open, no bracket, string, alias, alloca or brace left
pending, no value names bound); if any part is not, the file is scanned again in one pass.

Program points (`order`) are counted per part and shifted by the ops of the parts before;
the prefix's frames (the module op) are the first part's, completed with what the last part
saw (the module's end and its trailing attributes).
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

from sc_mlir.read.progress import BytesRead, count_in_worker
from sc_mlir.read.scan import (
    Chunk,
    FileScan,
    OpFrame,
    RawAlloca,
    Scanner,
    ScanSettings,
    scan_file,
)
from sc_mlir.support.gcpause import paused_gc

if TYPE_CHECKING:  # types only: a pool's module is imported where a pool runs
    from concurrent.futures import Executor, Future

# Below this size one process is faster than starting workers and joining their results.
MIN_PART_BYTES = 4 << 20
# The prefix is scanned by every worker; a file whose funcs start later is not split.
MAX_PREFIX_BYTES = 1 << 20
# What a byte of the trailing `#loc` table costs to scan, relative to a byte of ops.
ALIAS_TABLE_COST = 0.2
# A top-level func inside a module, pretty or generic, as printed by MLIR (two spaces).
_FUNC_START = re.compile(rb'\n  (?:func\.func |"func\.func"\(\))')
# Lines of a part fed to the scanner at a time, between two reports of the bytes scanned.
LINES_PER_REPORT = 65536
# How often (seconds) the bytes of the workers are reported while this process waits.
REPORT_EVERY = 0.2


@dataclass(frozen=True)
class Part:
    """Bytes [start, end) of the file; `lines_before` newlines come before `start`."""

    index: int
    start: int
    end: int
    lines_before: int
    last: bool


@dataclass
class PartScan:
    """What one worker read: records in its own numbering, and the state it ended in."""

    part: Part
    allocas: list[RawAlloca]
    diagnostics: list
    aliases: dict[str, str]
    prefix_frames: list[OpFrame]  # this worker's copies of the prefix's frames
    prefix_ops: int
    prefix_lines: int
    end_order: int
    line_no: int
    child_counts: dict[str, int]  # ops per name met so far in the module's region
    prefix_child_counts: dict[str, int]
    top_count: int
    odd_lines: int  # lines with control characters or invalid UTF-8
    problem: str | None  # why this part cannot be joined (None: it can)
    funcs: list[OpFrame] = field(default_factory=list)


def plan_parts(path: str, jobs: int, min_part_bytes: int | None = None
               ) -> tuple[int, list[Part]]:
    """The prefix's length and the parts, or (0, []) when the file should be read whole."""
    with open(path, "rb") as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # empty file
            return 0, []
        with data:
            size = len(data)
            smallest = MIN_PART_BYTES if min_part_bytes is None else min_part_bytes
            count = min(jobs, size // max(smallest, 1))
            if count < 2:
                return 0, []
            first = _FUNC_START.search(data)
            # Universal newlines would count a lone "\r" as a line end, and "// -----"
            # starts a new chunk with its own state: both are read in one pass.
            if (first is None or first.start() + 1 > MAX_PREFIX_BYTES or data.find(b"\r") >= 0
                    or data.find(b"// -----") >= 0):
                return 0, []
            prefix = first.start() + 1
            # Lines of the alias table after the module cost a fraction of an op line each;
            # this process scans the last part, with the table, so it gets fewer ops.
            body_end = max(data.rfind(b"\n}"), prefix)
            weight = (body_end - prefix) + ALIAS_TABLE_COST * (size - body_end)
            starts = [prefix]
            for k in range(1, count):
                target = prefix + int(weight * k / count)
                found = _FUNC_START.search(data, max(min(target, body_end), starts[-1]) - 1)
                if found is None:
                    break
                if found.start() + 1 > starts[-1]:
                    starts.append(found.start() + 1)
            if len(starts) < 2:
                return 0, []
            bounds = [*starts, size]
            parts = []
            lines_before = data[:prefix].count(b"\n")
            for index, (start, end) in enumerate(pairwise(bounds)):
                parts.append(Part(index, start, end, lines_before, index == len(starts) - 1))
                lines_before += data[start:end].count(b"\n")
            return prefix, parts


def _lines(raw: bytes) -> list[str]:
    lines = raw.decode("utf-8", errors="replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def scan_part(path: str, prefix_bytes: int, part: Part, settings: ScanSettings,
              on_bytes: BytesRead = count_in_worker) -> PartScan:
    """Scan the prefix, then one part (runs in a worker process; `on_bytes` is told the
    bytes of the part as they are scanned, which in a worker go to the shared count)."""
    with paused_gc():
        return _scan_part(path, prefix_bytes, part, settings, on_bytes)


def _scan_part(path: str, prefix_bytes: int, part: Part, settings: ScanSettings,
               on_bytes: BytesRead) -> PartScan:
    with open(path, "rb") as handle:
        prefix = handle.read(prefix_bytes)
        handle.seek(part.start)
        text = handle.read(part.end - part.start)
    scanner = Scanner(path, settings)
    scanner.feed_checked(_lines(prefix))
    lines = _lines(text)
    if scanner.pending_brace and lines:
        # `module {`: whether the brace opens a region is decided by the next line, the
        # part's first func line, as in one pass.
        scanner._decide_pending_brace(lines[0].strip())
    problem = None
    if len(scanner.regions) != 2 or scanner.allocas or not _at_rest(scanner):
        problem = "the text before the first func does not leave one open module"
    prefix_frames = [region.owner for region in scanner.regions[1:]]
    module_region = scanner.regions[-1]
    prefix_child_counts = dict(module_region.child_counts)
    prefix_ops, prefix_lines = scanner.order, scanner.line_no
    prefix_diagnostics = len(scanner.diagnostics)
    scanner.line_no = part.lines_before
    reported = 0
    for start in range(0, len(lines), LINES_PER_REPORT):
        batch = lines[start:start + LINES_PER_REPORT]
        scanner.feed_checked(batch)
        # Characters stand for bytes here; the last report makes up the difference.
        scanned = min(sum(map(len, batch)) + len(batch), len(text) - reported)
        on_bytes(scanned)
        reported += scanned
    on_bytes(len(text) - reported)
    child_counts = dict(module_region.child_counts)
    if part.last:
        scan = scanner.finish()
        allocas = scan.allocas
    else:
        if module_region.cur_order >= 0:
            scanner._finish_op(module_region)  # what the next func's first line would do
        if problem is None and not (
            len(scanner.regions) == 2 and scanner.regions[1] is module_region
            and _at_rest(scanner) and not module_region.labels and not module_region.used
            and len(scanner.chunks) == 1 and scanner.top_count == 1
        ):
            problem = f"part {part.index} does not end between two funcs"
        allocas = scanner.allocas
        for alloca in allocas:
            alloca.live_end = scanner.live_end[alloca.index]
            alloca.live_end_line = scanner.live_end_line[alloca.index]
    diagnostics = scanner.diagnostics if part.index == 0 else \
        scanner.diagnostics[prefix_diagnostics:]
    return PartScan(part, allocas, diagnostics, scanner.chunks[0].aliases, prefix_frames,
                    prefix_ops, prefix_lines, scanner.order, scanner.line_no, child_counts,
                    prefix_child_counts, scanner.top_count, scanner.odd_lines, problem,
                    scanner.funcs)


def _at_rest(scanner: Scanner) -> bool:
    return (scanner.nesting == 0 and not scanner.pending_brace and scanner.pending_alloca is None
            and scanner.pending_alias is None and not scanner.in_resources
            and scanner.held is None
            and not scanner.tracked and not scanner.constants
            and scanner.brace_kinds == ["R"] and len(scanner.chunks) == 1)


def join_parts(path: str, parts: list[PartScan]) -> FileScan | None:
    """One FileScan from the parts, numbered as one pass would; None if they do not join."""
    if not parts or any(p.problem for p in parts) or not parts[-1].part.last:
        return None
    if any(p.odd_lines for p in parts):
        return None  # their notes are capped per file: one pass words them as it should
    first = parts[0]
    allocas: list[RawAlloca] = []
    funcs: list[OpFrame] = []
    diagnostics = []
    aliases: dict[str, str] = {}
    order_shift = 0
    sibling_shift: dict[str, int] = {}
    for scanned in parts:
        if (len(scanned.prefix_frames) != len(first.prefix_frames)
                or scanned.prefix_ops != first.prefix_ops):
            return None
        renumber = _Renumbering(scanned, first.prefix_frames, order_shift, dict(sibling_shift))
        base = len(allocas)
        for alloca in scanned.allocas:
            alloca.index += base
            alloca.order += order_shift
            alloca.live_end += order_shift
            alloca.frames = renumber.frames(alloca.frames)
            allocas.append(alloca)
        funcs.extend(renumber.frame(func) for func in scanned.funcs)
        diagnostics.extend(scanned.diagnostics)
        aliases.update(scanned.aliases)
        if scanned.part.last:
            renumber.complete_prefix_frames()
        for name, count in scanned.child_counts.items():
            sibling_shift[name] = (sibling_shift.get(name, 0) + count
                                   - scanned.prefix_child_counts.get(name, 0))
        order_shift += scanned.end_order - scanned.prefix_ops
    chunk = Chunk(0, 1)
    chunk.aliases = aliases
    return FileScan(path, allocas, [chunk], diagnostics, parts[-1].line_no,
                    order_shift + first.prefix_ops, funcs)


class _Renumbering:
    """Moves one part's frames into the whole file's numbering: program points shifted by
    the ops before the part, sibling indices in the module by the funcs before it, and the
    part's copies of the prefix frames replaced by the first part's."""

    def __init__(self, scanned: PartScan, canonical: list[OpFrame], order_shift: int,
                 sibling_shift: dict[str, int]) -> None:
        self.scanned = scanned
        self.canonical = canonical
        self.order_shift = order_shift
        self.sibling_shift = sibling_shift
        self.prefix_ops = scanned.prefix_ops
        self.innermost = scanned.prefix_frames[-1]
        self.mapping = {id(mine): ours
                        for mine, ours in zip(scanned.prefix_frames, canonical, strict=True)}
        self.moved: set[int] = set()
        self.tuples: dict[int, tuple[OpFrame, ...]] = {}

    def frames(self, frames: tuple[OpFrame, ...]) -> tuple[OpFrame, ...]:
        found = self.tuples.get(id(frames))
        if found is None:
            found = self.tuples[id(frames)] = tuple(self.frame(f) for f in frames)
        return found

    def frame(self, frame: OpFrame) -> OpFrame:
        mapped = self.mapping.get(id(frame))
        if mapped is not None:
            return mapped
        if id(frame) not in self.moved:
            self.moved.add(id(frame))
            frame.order += self.order_shift
            if frame.end_order > self.prefix_ops:
                frame.end_order += self.order_shift
            if frame.parent is self.innermost:
                frame.sibling_index += self.sibling_shift.get(frame.name, 0)
            if frame.parent is not None:
                frame.parent = self.mapping.get(id(frame.parent), frame.parent)
        return frame

    def complete_prefix_frames(self) -> None:
        """The last part saw the prefix's ops end (the module's `}` and what follows it)."""
        for mine, ours in zip(self.scanned.prefix_frames, self.canonical, strict=True):
            ended_here = mine.end_order > self.prefix_ops
            ours.end_order = mine.end_order + (self.order_shift if ended_here else 0)
            ours.trailer = mine.trailer


def wait_reporting(future: Future, on_bytes: BytesRead | None) -> None:
    """Wait for a worker's future, telling `on_bytes` (with 0 new bytes of this process)
    every `REPORT_EVERY` seconds, so the progress shows what the workers scan meanwhile."""
    from concurrent.futures import wait as wait_for  # only where a pool runs

    if on_bytes is None:
        wait_for([future])
        return
    while not wait_for([future], timeout=REPORT_EVERY).done:
        on_bytes(0)


def scan_file_in_parts(path: str, settings: ScanSettings, jobs: int, pool: Executor,
                       min_part_bytes: int | None = None, on_bytes: BytesRead | None = None
                       ) -> FileScan:
    """`scan_file`, split across this process and `jobs - 1` of the pool's workers when the
    file is large enough and splits cleanly. Gives what `scan_file` gives. `on_bytes` is
    told the bytes this process scans (the workers add theirs to the shared count).

    This process scans the last part itself: it holds the location alias table, by far the
    largest thing to send between processes, and the workers' parts are small to send."""
    prefix, parts = plan_parts(path, jobs, min_part_bytes)
    if not parts:
        return scan_file(path, settings, on_bytes)
    try:
        futures = [pool.submit(scan_part, path, prefix, part, settings)
                   for part in parts[:-1]]
        last = scan_part(path, prefix, parts[-1], settings,
                         on_bytes if on_bytes is not None else _ignore)
        for future in futures:
            wait_reporting(future, on_bytes)
        joined = join_parts(path, [*(f.result() for f in futures), last])
    except Exception:  # a worker died (out of memory, a broken pool): read it here
        joined = None
    return joined if joined is not None else scan_file(path, settings, on_bytes)


def _ignore(nbytes: int) -> None:
    """A `BytesRead` that nobody listens to."""
