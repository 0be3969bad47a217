"""Which pass crossed the bound: a timeline of every (func, memory space) over the chunks of
a print-after-all dump.

A dump written with `--xla_sc_print_after_all` (MLIR's `--mlir-print-ir-after-all`) holds
the module after every pass: `// -----// IR Dump After PassName (pass-arg) //----- //`
headers in one file, or one file per pass. Each chunk is read and analysed on its own and
then dropped (`read_timelines` streams: what it keeps is one small `PassStep` per chunk and
func and space, plus the latest chunk's report of each (func, space), to diff against the
next one), so memory does not grow with the number of passes.

The result is data: a `Timeline` per (stream, module, func, memory space) with its steps in
pass order, the first pass after which the stack peak crosses the bound, and what that pass
changed (the edits of `sc_mlir.compare.diff` between the chunk before it and the chunk after
it); when nothing crosses, the pass that grew the stack peak most.

>>> from sc_mlir.compare.passes import parse_pass_header
>>> h = parse_pass_header(
...     "// -----// IR Dump After CSEPass: cse ('func.func' operation: @k) //----- //")
>>> h.when, h.name, h.arg, h.anchor
('after', 'CSEPass', 'cse', '@k')
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from sc_mlir.analysis import (
    ALLOCATOR_LIMITED,
    FITS,
    OVERFLOW,
    UNKNOWN_BOUND,
    Analysis,
    SpaceReport,
    analyze_records,
)
from sc_mlir.compare.diff import KIND, Edit, SpaceView, diff_views, views_from_analysis
from sc_mlir.model.allocation import build_allocations
from sc_mlir.model.bounds import Bounds
from sc_mlir.model.dump import LoadSettings
from sc_mlir.model.spaces import space_matches
from sc_mlir.read.discover import discover
from sc_mlir.read.scan import Chunk, Diagnostic, Scanner, dump_header_pass, iter_file_blocks
from sc_mlir.support.gcpause import paused_gc

CROSSING_VERDICTS = frozenset({OVERFLOW, ALLOCATOR_LIMITED})

# --- pass headers ------------------------------------------------------------------------

_SPLIT_LINE = re.compile(r"\s*// -----")
# `('func.func' operation: @k)` or `('builtin.module' operation)` at the end of a header:
# the op the pass ran on, when the dump is not printed at module scope.
_ANCHOR = re.compile(r"\s*\('(?P<op>[^']*)' operation(?::\s*(?P<symbol>[^)]*))?\)$")
# MLIR up to 2024: `Canonicalizer (canonicalize)`; a failed pass: `Name Failed (arg)`.
_OLD_STYLE = re.compile(r"(?P<name>.*?)(?P<failed>\s+Failed)?\s+\((?P<arg>[^()]*)\)$")
# Later MLIR: `CanonicalizerPass: canonicalize{max-iterations=10 ...}`.
_NEW_STYLE = re.compile(r"(?P<name>[^\s:]+)(?P<failed>\s+Failed)?:\s*(?P<arg>[^\s{]+)")


@dataclass(frozen=True)
class PassHeader:
    """What an `IR Dump Before/After` header says."""

    when: str  # "after" or "before"
    name: str  # the pass's display name, e.g. CSEPass
    arg: str | None  # its command-line argument, e.g. cse (options dropped)
    failed: bool  # MLIR prints `Failed` when the pass failed: the IR the error was on
    anchor: str | None  # the op it ran on (`@k`, or the op name), when printed
    text: str  # the header after `IR Dump After`, as written


def parse_pass_header(line: str) -> PassHeader | None:
    """The pass named by a `// -----// IR Dump After ... //----- //` line, else None.

    >>> parse_pass_header("// -----// IR Dump After Canonicalizer (canonicalize) //----- //")
    PassHeader(when='after', name='Canonicalizer', arg='canonicalize', failed=False, \
anchor=None, text='Canonicalizer (canonicalize)')
    """
    text = dump_header_pass(line)
    if text is None:
        return None
    when = "before" if "IR Dump Before" in line else "after"
    rest = text
    anchor = None
    m = _ANCHOR.search(rest)
    if m is not None:
        anchor = (m.group("symbol") or m.group("op")).strip()
        rest = rest[: m.start()].rstrip()
    m = _NEW_STYLE.match(rest) or _OLD_STYLE.match(rest)
    if m is None:
        failed = rest.endswith(" Failed")
        name = rest.removesuffix(" Failed").strip()
        return PassHeader(when, name, None, failed, anchor, text)
    return PassHeader(when, m.group("name").strip(), m.group("arg").strip() or None,
                      bool(m.group("failed")), anchor, text)


# --- the records -------------------------------------------------------------------------


@dataclass(frozen=True)
class PassStep:
    """One (func, memory space) after one pass."""

    index: int  # the pass's position in its stream (0-based), the same for every func
    pass_name: str
    arg: str | None
    file: str
    chunk: int  # which chunk of `file` (0-based)
    stack_peak_words: int
    liveness_peak_words: int
    packed_peak_words: int
    verdict: str
    failed: bool = False  # the header says the pass failed

    @property
    def label(self) -> str:
        return self.arg or self.pass_name


@dataclass(frozen=True)
class PassChange:
    """What one pass did to a (func, memory space): the stack peak before and after it, and
    the allocas it added, removed, resized or moved (largest change first)."""

    index: int
    pass_name: str
    arg: str | None
    file: str
    chunk: int
    stack_before_words: int | None  # None: the first dump; the IR before it is not dumped
    stack_after_words: int
    edits: tuple[Edit, ...]

    @property
    def delta_stack_words(self) -> int | None:
        if self.stack_before_words is None:
            return None
        return self.stack_after_words - self.stack_before_words


@dataclass(frozen=True)
class Timeline:
    """A (func, memory space) through the passes of one stream of dumps."""

    stream: str  # the file, or the directory of one-file-per-pass dumps
    module: str  # `@name`, or "" when the dumps do not name it
    func: str
    memory_space: str | None
    space_id: int | None
    space_name: str
    bound_words: int | None
    steps: tuple[PassStep, ...]
    first_crossing: PassChange | None
    largest_growth: PassChange | None  # only when nothing crosses

    @property
    def space_label(self) -> str:
        return f"{self.space_id} ({self.space_name})" if self.space_id is not None \
            else self.space_name

    @property
    def crosses(self) -> bool:
        return self.first_crossing is not None


@dataclass
class PassTimelines:
    """Every timeline of a dump, and the notes on the input."""

    source: str
    timelines: list[Timeline]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    passes: int = 0  # pass dumps read (chunks with an `IR Dump After` header, or files)
    skipped_before: int = 0  # `IR Dump Before` chunks (the state after the previous pass)

    @property
    def has_crossing(self) -> bool:
        return any(t.crosses for t in self.timelines)

    def select(self, spaces: Iterable[str] | None = None, funcs: Iterable[str] | None = None
               ) -> PassTimelines:
        """The timelines of some spaces (ids or names) and funcs (wildcards allowed)."""
        import fnmatch

        kept = self.timelines
        if spaces:
            wanted = list(spaces)
            # A timeline has the space fields of a report: the one selector rule applies.
            kept = [t for t in kept
                    if any(space_matches(s, t.space_id, t.space_name, t.memory_space)
                           for s in wanted)]
        if funcs:
            patterns = list(funcs)
            kept = [t for t in kept if any(fnmatch.fnmatchcase(t.func, p) for p in patterns)]
        return PassTimelines(self.source, kept, self.diagnostics, self.passes,
                             self.skipped_before)

    def timeline(self, func: str, space: int | str) -> Timeline:
        found = self.select([str(space)], [func]).timelines
        found = [t for t in found if t.func == func]
        if not found:
            raise KeyError(f"no timeline of func {func!r} in space {space!r}")
        if len(found) > 1:
            where = ", ".join(f"{t.stream} {t.module}".strip() for t in found[:5])
            raise KeyError(f"func {func!r} space {space!r} has {len(found)} timelines ({where})")
        return found[0]


# --- building timelines from analysed chunks ------------------------------------------------


@dataclass(frozen=True)
class PassChunk:
    """One analysed chunk: which pass it follows and the reports of its (func, space)s."""

    stream: str
    file: str
    chunk: int
    pass_name: str
    arg: str | None
    failed: bool
    reports: Sequence[SpaceReport]
    funcs: frozenset[tuple[str, str]]  # (module, func) printed in the chunk, allocas or not
    readable: bool = True  # False: its analysis failed; it still counts as a pass


@dataclass
class _Track:
    """A timeline being built: its steps so far and the allocas of its latest step."""

    module: str
    func: str
    space_key: str
    memory_space: str | None
    space_id: int | None
    space_name: str
    bound_words: int | None
    steps: list[PassStep] = field(default_factory=list)
    # The latest dump's allocas: a report (made into a view only when a pass is diffed,
    # as resolving every location of every dump would cost a fifth of the run) or a view.
    latest: SpaceReport | SpaceView | None = None
    first_crossing: PassChange | None = None
    largest_growth: PassChange | None = None


def module_key(module: str) -> str:
    """`@name` is kept; `module#3` (the 3rd top-level op, unnamed) says nothing about which
    module it is, and a func printed alone has none."""
    return module if module.startswith("@") else ""


class TimelineBuilder:
    """Feed it analysed chunks in pass order (`add`); `finish` gives the timelines.

    Per (stream, module, func, space) it keeps the steps and the latest chunk's allocas
    only: a chunk's reports can be dropped once `add` returns.
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.tracks: dict[tuple[str, str, str, str], _Track] = {}
        self.index: dict[str, int] = {}  # stream -> pass steps seen
        # (stream, module, func) -> the steps where the func was printed, to give a space
        # that appears late the zero steps before it
        self.seen: dict[tuple[str, str, str], list[tuple[int, str, str | None, str, int, bool]]]
        self.seen = {}
        # an unnamed func (printed alone by a func-scoped pass) belongs to the last named
        # module of its stream that holds it
        self.module_of: dict[tuple[str, str], str] = {}

    def add(self, chunk: PassChunk) -> None:
        index = self.index.get(chunk.stream, 0)
        self.index[chunk.stream] = index + 1
        if not chunk.readable:
            return  # said in a diagnostic; the passes after it keep their numbers
        funcs: set[tuple[str, str]] = set()
        for module, func in chunk.funcs:
            funcs.add((self._module(chunk.stream, module, func), func))
        by_key: dict[tuple[str, str, str, str], SpaceReport] = {}
        for report in chunk.reports:
            module = self._module(chunk.stream, report.module, report.func)
            funcs.add((module, report.func))
            key = (chunk.stream, module, report.func, _space_key(report))
            if key not in by_key:  # one report per (module, func, space) and chunk
                by_key[key] = report
        for module, func in funcs:
            self.seen.setdefault((chunk.stream, module, func), []).append(
                (index, chunk.pass_name, chunk.arg, chunk.file, chunk.chunk, chunk.failed))
        for key, report in by_key.items():
            track = self.tracks.get(key)
            if track is None:
                track = self.tracks[key] = self._new_track(key, report, index)
            self._step(track, index, chunk, report.stack_peak_words,
                       report.liveness_peak_words, report.packed_peak_words, report.verdict,
                       report)
        # A (func, space) whose func is printed but has no alloca left in that space.
        for key, track in self.tracks.items():
            stream, module, func, _ = key
            if stream != chunk.stream or key in by_key or (module, func) not in funcs:
                continue
            empty = _empty_view(track, chunk.file)
            self._step(track, index, chunk, 0, 0, 0, _fit_verdict(track.bound_words), empty)

    def _module(self, stream: str, module: str, func: str) -> str:
        named = module_key(module)
        if named:
            self.module_of[(stream, func)] = named
            return named
        return self.module_of.get((stream, func), "")

    def _new_track(self, key: tuple[str, str, str, str], report: SpaceReport, index: int
                   ) -> _Track:
        stream, module, func, space_key = key
        track = _Track(module, func, space_key, report.memory_space, report.space_id,
                       report.space_name, report.bound_words)
        # The func was printed before without allocas in this space: those passes left
        # nothing in it.
        for (i, name, arg, file, chunk, failed) in self.seen.get((stream, module, func), []):
            if i < index:
                track.steps.append(PassStep(i, name, arg, file, chunk, 0, 0, 0,
                                            _fit_verdict(report.bound_words), failed))
        if track.steps:
            track.latest = _empty_view(track, report.file)
        return track

    def _step(self, track: _Track, index: int, chunk: PassChunk, stack: int, live: int,
              packed: int, verdict: str, view: SpaceReport | SpaceView) -> None:
        previous = track.steps[-1] if track.steps else None
        track.steps.append(PassStep(index, chunk.pass_name, chunk.arg, chunk.file, chunk.chunk,
                                    stack, live, packed, verdict, chunk.failed))
        crossing = verdict in CROSSING_VERDICTS
        if track.first_crossing is None and crossing and (
                previous is None or previous.verdict not in CROSSING_VERDICTS):
            track.first_crossing = self._change(track, chunk, index, previous, stack, view)
        elif (track.first_crossing is None and previous is not None
              and stack > previous.stack_peak_words
              and (track.largest_growth is None
                   or stack - previous.stack_peak_words
                   > (track.largest_growth.delta_stack_words or 0))):
            track.largest_growth = self._change(track, chunk, index, previous, stack, view)
        track.latest = view

    def _change(self, track: _Track, chunk: PassChunk, index: int, previous: PassStep | None,
                stack: int, view: SpaceReport | SpaceView) -> PassChange:
        edits: tuple[Edit, ...] = ()
        if track.latest is not None:
            result = diff_views([self._view(track.latest)], [self._view(view)], "before",
                                "after")
            edits = tuple(e for e in result.allocations if KIND[type(e)] != "unchanged")
        return PassChange(index, chunk.pass_name, chunk.arg, chunk.file, chunk.chunk,
                          previous.stack_peak_words if previous else None, stack, edits)

    def _view(self, side: SpaceReport | SpaceView) -> SpaceView:
        return side if isinstance(side, SpaceView) else _view_of(side, self.root)

    def finish(self) -> list[Timeline]:
        timelines = []
        for (stream, _module, _func, _space), t in self.tracks.items():
            timelines.append(Timeline(
                stream=stream, module=t.module, func=t.func, memory_space=t.memory_space,
                space_id=t.space_id, space_name=t.space_name, bound_words=t.bound_words,
                steps=tuple(t.steps), first_crossing=t.first_crossing,
                largest_growth=None if t.first_crossing else t.largest_growth))
        # Those that cross first, earliest crossing first; then by largest growth.
        timelines.sort(key=lambda t: (
            t.first_crossing is None,
            t.first_crossing.index if t.first_crossing else 0,
            -(t.largest_growth.delta_stack_words or 0) if t.largest_growth else 0,
            t.stream, t.module, t.func, t.space_label))
        return timelines


def _space_key(report: SpaceReport) -> str:
    return str(report.space_id) if report.space_id is not None else report.space_name


def _fit_verdict(bound: int | None) -> str:
    return UNKNOWN_BOUND if bound is None else FITS


def _view_of(report: SpaceReport, root: str) -> SpaceView:
    (view,) = views_from_analysis(Analysis([report]), root)
    return view


def _empty_view(track: _Track, file: str) -> SpaceView:
    label = (f"{track.space_id} ({track.space_name})" if track.space_id is not None
             else track.space_name)
    return SpaceView(program=os.path.basename(file), func=track.func,
                     space_key=track.space_key, space_label=label,
                     memory_space=track.memory_space, bound_words=track.bound_words,
                     stack_peak_words=0, liveness_peak_words=0, packed_peak_words=0,
                     verdict=_fit_verdict(track.bound_words), allocas=())


# --- pass order across files -----------------------------------------------------------------

_NUMBER = re.compile(r"(\d+)")
# XLA names its dump files `module_0007.<name>...`: the module's id keeps modules apart.
_XLA_MODULE = re.compile(r"(module_\d+)(?=[._-])")
_SEQUENCE = re.compile(r"(?:^|(?<=[._\-]))\d+(?=[._\-]|$)")
_PASS_IN_NAME = re.compile(r"^[._\-]*(?:after[._\-])?", re.IGNORECASE)


def natural_key(name: str) -> tuple[tuple[int, str, int], ...]:
    """Numbers in a name compared as numbers: `2_cse` before `10_dce`.

    >>> sorted(["10_dce.mlir", "2_cse.mlir", "0_9_x.mlir"], key=natural_key)
    ['0_9_x.mlir', '2_cse.mlir', '10_dce.mlir']
    """
    return tuple((1, "", int(part)) if part.isdigit() else (0, part.lower(), 0)
                 for part in _NUMBER.split(name) if part)


def stream_of(path: str) -> str:
    """The stream a one-file-per-pass dump belongs to: its directory, plus XLA's module id
    when the name starts with one (`module_0007.k.0003.after_cse.mlir`)."""
    directory = os.path.dirname(path)
    m = _XLA_MODULE.match(os.path.basename(path))
    return os.path.join(directory, m.group(1)) if m else directory


def pass_from_name(path: str) -> str:
    """A pass name for a file without header: what follows the last number in its name that
    stands alone between separators (`mem2reg` holds a 2 that does not).

    >>> pass_from_name("dump/0_2_canonicalize.mlir"), pass_from_name("m.9.after_mem2reg.mlir")
    ('canonicalize', 'mem2reg')
    """
    name = os.path.basename(path)
    stem = name[:-5] if name.endswith(".mlir") else name
    numbers = list(_SEQUENCE.finditer(stem))
    tail = stem[numbers[-1].end():] if numbers else stem
    tail = _PASS_IN_NAME.sub("", tail)
    return tail or stem


# --- reading a dump, one chunk at a time -------------------------------------------------------


@dataclass(frozen=True)
class RawChunk:
    """The lines of one chunk of a file, without the split line that starts it."""

    file: str
    chunk: int
    first_line: int  # the line number of lines[0]
    header: PassHeader | None
    header_text: str | None
    lines: list[str]
    suspect: bool  # may hold control characters or invalid UTF-8


def iter_chunks(path: str, blocks: Iterable[tuple[list[str], bool]] | None = None
                ) -> Iterator[RawChunk]:
    """The chunks of a file, one at a time (only one chunk's lines are held)."""
    lines: list[str] = []
    suspect = False
    first_line = 1
    line_no = 0
    chunk = 0
    header: PassHeader | None = None
    header_text: str | None = None
    for block, block_suspect in (blocks if blocks is not None else iter_file_blocks(path)):
        start = 0
        for offset, line in enumerate(block):
            if line[:1] in (" ", "/", "\t") and line.lstrip().startswith("// -----") \
                    and _SPLIT_LINE.match(line):
                lines.extend(block[start:offset])
                suspect = suspect or block_suspect
                yield RawChunk(path, chunk, first_line, header, header_text, lines, suspect)
                lines = []
                suspect = False
                chunk += 1
                first_line = line_no + offset + 2
                header = parse_pass_header(line)
                header_text = dump_header_pass(line)
                start = offset + 1
        lines.extend(block[start:])
        suspect = suspect or block_suspect
        line_no += len(block)
    yield RawChunk(path, chunk, first_line, header, header_text, lines, suspect)


_FUNC_DEF = re.compile(r'\s*(?:%[^=]*=\s*)?(?:[\w$]+\.)?func(?:\.func)?\s+(?:(?:private|public|'
                       r'nested)\s+)*@("[^"]*"|[\w$.\-]+)')
_GENERIC_FUNC = re.compile(r'"(?:[\w$]+\.)?func(?:\.func)?"\(.*sym_name\s*=\s*"([^"]*)"')
_MODULE_DEF = re.compile(r'\s*(?:builtin\.)?module\s+@("[^"]*"|[\w$.\-]+)')


def printed_funcs(lines: Sequence[str]) -> dict[str, str]:
    """Funcs defined in a chunk (pretty `func.func @k` or generic `sym_name = "k"` on the
    op's first line), with or without allocas, each with the `@name` of the module printed
    above it ("" when none is named).

    >>> printed_funcs(["module @m {", "  func.func private @k() {", "  }", "}"])
    {'k': '@m'}
    """
    found: dict[str, str] = {}
    module = ""
    for line in lines:
        if "module" in line:
            m = _MODULE_DEF.match(line)
            if m is not None:
                module = "@" + m.group(1).strip('"')
        if "func" not in line:
            continue
        m = _FUNC_DEF.match(line) or _GENERIC_FUNC.match(line.lstrip())
        if m is not None:
            found.setdefault(m.group(1).strip('"'), module)
    return found


def analyse_chunk(raw: RawChunk, settings: LoadSettings, bounds: Bounds
                  ) -> tuple[list[SpaceReport], list[Diagnostic], set[tuple[str, str]]]:
    """Scan, build and analyse one chunk on its own (its `#loc` table is its own)."""
    scanner = Scanner(raw.file, settings.scan)
    scanner.line_no = raw.first_line - 1
    scanner.chunks[0] = Chunk(0, raw.first_line, raw.header_text)
    scanner.feed_checked(raw.lines, raw.suspect)
    scan = scanner.finish()
    records, diagnostics = build_allocations(scan, settings.model)
    for record in records:
        record.chunk = raw.chunk
    reports = analyze_records(records, bounds)
    funcs = {(r.module, r.func) for r in records}
    return reports, diagnostics, funcs


def _order_files(files: list[str]) -> list[tuple[str, str]]:
    """(file, stream) in pass order within each stream of one-file-per-pass dumps."""
    ordered = [(path, stream_of(path)) for path in files]
    ordered.sort(key=lambda item: (item[1], natural_key(os.path.basename(item[0]))))
    return ordered


def read_timelines(path: str | os.PathLike[str], bounds: Bounds | None = None,
                   settings: LoadSettings | None = None,
                   spaces: Sequence[str] | None = None, funcs: Sequence[str] | None = None,
                   ) -> PassTimelines:
    """Every (func, memory space) through the passes of a dump (a file or a directory).

    Pass order: the order of `IR Dump After` headers within a file; across the files of a
    directory that hold one dump each, the numbers in their names, compared as numbers.
    Chunks that are not pass dumps (`// -----` without a header, in a file of several) are
    timelines of their own: they are different modules, never steps of one.
    """
    bounds = bounds or Bounds.default()
    settings = settings or LoadSettings()
    root = str(path)
    files, skipped = discover(path)
    diagnostics = [Diagnostic(s.path, 0, 0, f"file skipped: {s.reason}") for s in skipped]
    builder = TimelineBuilder(root)
    counts = {"pass": 0, "before": 0}
    with paused_gc():
        for file, stream in _order_files(files):
            try:
                for chunk in _file_chunks(file, stream, settings, bounds, spaces, funcs,
                                          diagnostics, counts):
                    builder.add(chunk)
            except OSError as exc:
                diagnostics.append(Diagnostic(file, 0, 0, "file skipped: cannot read: "
                                              f"{exc.strerror or exc}"))
    if counts["before"]:
        diagnostics.append(Diagnostic(root, 0, 0, f"{counts['before']} 'IR Dump Before' "
                                      "chunk(s) not used: the IR before a pass is the IR "
                                      "after the pass before it"))
    return PassTimelines(root, builder.finish(), diagnostics, counts["pass"], counts["before"])


def _file_chunks(file: str, stream: str, settings: LoadSettings, bounds: Bounds,
                 spaces: Sequence[str] | None, funcs: Sequence[str] | None,
                 diagnostics: list[Diagnostic], counts: dict[str, int]
                 ) -> Iterator[PassChunk]:
    """The analysed pass chunks of one file, each with its stream. Whether a file is a
    stream of its own (several pass dumps) or one step of its directory's stream (one
    dump) is known at its second dump: until then one analysed chunk waits."""
    pending: PassChunk | None = None
    pending_has_header = False
    several = False
    for raw in iter_chunks(file):
        if raw.header is not None and raw.header.when == "before":
            counts["before"] += 1
            continue
        if raw.header is None and not any(line.strip() for line in raw.lines):
            continue  # nothing before the first header (or an empty file)
        chunk = _analysed(raw, settings, bounds, spaces, funcs, diagnostics)
        counts["pass"] += 1
        if pending is None and not several:
            pending, pending_has_header = chunk, raw.header is not None
            continue
        if pending is not None:
            several = True
            yield _in_stream(pending, pending_has_header, file)
            pending = None
        yield _in_stream(chunk, raw.header is not None, file)
    if pending is not None:
        if several:
            yield _in_stream(pending, pending_has_header, file)
        else:  # one dump in the file: a step of the directory's stream
            name = pending.pass_name if pending_has_header else pass_from_name(file)
            arg = pending.arg if pending_has_header else name
            yield replace(pending, stream=stream, pass_name=name, arg=arg)


def _in_stream(chunk: PassChunk, has_header: bool, file: str) -> PassChunk:
    """A chunk of a file of several: a pass dump is a step of the file's stream; a chunk
    without header (`// -----`) is a module of its own."""
    if has_header:
        return replace(chunk, stream=file)
    return replace(chunk, stream=f"{file}#{chunk.chunk}")


def _analysed(raw: RawChunk, settings: LoadSettings, bounds: Bounds,
              spaces: Sequence[str] | None, funcs: Sequence[str] | None,
              diagnostics: list[Diagnostic]) -> PassChunk:
    try:
        reports, notes, with_allocas = analyse_chunk(raw, settings, bounds)
    except Exception as exc:  # a bug must cost one chunk, not the whole dump
        diagnostics.append(Diagnostic(raw.file, raw.first_line, 1, "chunk skipped: sc-mlir "
                                      f"failed on it ({type(exc).__name__}: {exc}); please "
                                      "report this with the file"))
        return PassChunk("", raw.file, raw.chunk, raw.header.name if raw.header else "",
                         raw.header.arg if raw.header else None, False, [], frozenset(),
                         readable=False)
    diagnostics.extend(notes)
    if spaces or funcs:
        reports = Analysis(reports).select(spaces, funcs).reports
    header = raw.header
    modules = {func: module for module, func in with_allocas}
    present = frozenset((modules.get(f, module), f)
                        for f, module in printed_funcs(raw.lines).items())
    present |= frozenset(with_allocas)
    if header is not None:
        return PassChunk("", raw.file, raw.chunk, header.name, header.arg, header.failed,
                         reports, present)
    return PassChunk("", raw.file, raw.chunk, f"chunk {raw.chunk}", None, False, reports,
                     present)


def timelines_from_analysis(analysis: Analysis, root: str = "") -> PassTimelines:
    """The timelines of an analysis already in memory (`sc_mlir.load(...).analyze()`): the
    same steps as `read_timelines`, for dumps small enough to hold whole. A func is a step
    of a pass only where it has allocas (the analysis keeps no other trace of it)."""
    groups: dict[tuple[str, int], list[SpaceReport]] = {}
    for report in analysis.reports:
        groups.setdefault((report.file, report.chunk), []).append(report)
    headed: dict[str, int] = {}
    for (file, _chunk), reports in groups.items():
        if reports[0].dump_header is not None:
            headed[file] = headed.get(file, 0) + 1
    chunks_of: dict[str, int] = {}
    for file, _chunk in groups:
        chunks_of[file] = chunks_of.get(file, 0) + 1
    order = sorted(groups, key=lambda key: (stream_of(key[0]),
                                            natural_key(os.path.basename(key[0])), key[1]))
    builder = TimelineBuilder(root)
    passes = 0
    for file, chunk in order:
        reports = sorted(groups[(file, chunk)], key=lambda r: (r.func, r.space_label))
        text = reports[0].dump_header
        header = parse_pass_header(f"IR Dump After {text}") if text is not None else None
        if header is not None and headed[file] > 1:
            stream, name, arg, failed = file, header.name, header.arg, header.failed
        elif header is not None:
            stream, name, arg, failed = stream_of(file), header.name, header.arg, header.failed
        elif chunks_of[file] == 1:
            stream, name, arg, failed = stream_of(file), pass_from_name(file), None, False
            arg = name
        else:
            stream, name, arg, failed = f"{file}#{chunk}", f"chunk {chunk}", None, False
        passes += 1
        builder.add(PassChunk(stream, file, chunk, name, arg, failed, reports,
                              frozenset((r.module, r.func) for r in reports)))
    return PassTimelines(root, builder.finish(), list(analysis.diagnostics), passes)
