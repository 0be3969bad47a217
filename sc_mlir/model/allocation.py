"""The allocation table: one `Allocation` record per `memref.alloca`, built from a scan.

This is where raw scanner output gets its meaning: memory spaces are canonicalised,
type and attribute aliases resolved, sizes computed, locations resolved to source, and
each alloca is placed in its module, func and scope.
"""

from __future__ import annotations

import dataclasses
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from sc_mlir.model.locations import UNRESOLVED, LocationTable, SourceLocation
from sc_mlir.model.spaces import SpaceMap, resolve_attribute_alias, split_params
from sc_mlir.read.loc_table import LocationTable as TrailingTable
from sc_mlir.read.scan import Chunk, Diagnostic, FileScan, OpFrame, RawAlloca
from sc_mlir.syntax.locations import AliasLoc, Location
from sc_mlir.syntax.memref import (
    ASSUMED_ELEMENT_BITS,
    ElementType,
    MemRefType,
    bits_to_bytes,
    bytes_to_words,
    size_too_large,
    static_elements,
    total_bits,
)
from sc_mlir.syntax.parse import (
    Argument,
    OtherType,
    SyntaxProblem,
    alignment_of,
    parse_arguments,
    parse_input_types,
    parse_type,
)

# What an entry of the allocation table is: the op (or argument) that takes the memory.
ALLOCA = "alloca"  # memref.alloca: on the scoped stack
SEMAPHORE = "semaphore"  # tpu.sem_alloc: scoped like an alloca, one word per semaphore assumed
SCRATCH_OPERAND = "scratch_operand"  # a Pallas scratch buffer: a func argument, live throughout
HEAP = "heap"  # memref.alloc: listed, but not on the scoped stack
KIND_OF_OP = {"memref.alloca": ALLOCA, "tpu.sem_alloc": SEMAPHORE, "memref.alloc": HEAP}

# Ops with the AutomaticAllocationScope trait (and jax's `tpu.region`, which `run_scoped`
# lowers to): their allocas are released when control leaves the op's region.
DEFAULT_SCOPE_OPS: frozenset[str] = frozenset({
    "func.func", "tpu.region", "memref.alloca_scope", "scf.for", "scf.forall",
    "scf.parallel", "affine.for", "affine.parallel", "gpu.func", "llvm.func",
})


@dataclass(frozen=True)
class ModelSettings:
    space_map: SpaceMap = field(default_factory=SpaceMap.default)
    scope_ops: frozenset[str] = DEFAULT_SCOPE_OPS


# Not frozen (a frozen dataclass costs four times as much to build, and a dump has one per
# innermost region); nothing changes one after the builder made it.
@dataclass(slots=True)
class Placement:
    """What an alloca's enclosing ops say about it; shared by the allocas of one region."""

    module: str
    func: str
    core_type: str | None
    scratch_operands: int | None  # the func's Pallas `scratch_operands` count, if printed
    scope_op: str
    scope_start: int
    scope_end: int  # -1 if the scope op never closed
    scope_path: str
    dump_header: str | None

    def __reduce__(self) -> tuple[type[Placement], tuple[object, ...]]:
        # As `Allocation.__reduce__`: workers send one per region, by the ten thousand
        # (the dataclass's own state functions walk `fields()` for each: 2.6 us to pickle
        # and 1.2 us to unpickle, against 1.0 and 0.5 us).
        return (Placement, (self.module, self.func, self.core_type, self.scratch_operands,
                            self.scope_op, self.scope_start, self.scope_end, self.scope_path,
                            self.dump_header))


@dataclass(frozen=True, slots=True)
class Space:
    """A memref's layout and memory space: as written, and canonical."""

    layout: str | None
    memory_space: str | None
    space_id: int | None
    space_name: str

    def __reduce__(self) -> tuple[type[Space], tuple[str | None, str | None, int | None, str]]:
        # As `Allocation.__reduce__`: records travel from workers by the ten thousand.
        return (Space, (self.layout, self.memory_space, self.space_id, self.space_name))


# Not frozen: dumps hold hundreds of thousands of allocas, and a frozen dataclass costs six
# times as much to build. Nothing changes a record after the builder made it.
@dataclass(slots=True)
class Allocation:
    """One `memref.alloca`, with everything the analyses and reports need.

    Positions: `line`/`col` are the op name's position in the dump file (1-based, as MLIR
    reports it); `order` is the op's program point (ops numbered from 1 in text order,
    per file); `live_end` the program point of its last use (`last_use_line` its line in
    the dump); `scope_start`/`scope_end` the program points where its scope op begins and
    ends. What allocas share (the memref type, the enclosing ops, the memory space) is
    held once and read through properties of the same names.
    """

    file: str
    chunk: int
    name: str
    line: int
    col: int
    op_form: str
    order: int
    live_end: int
    last_use_line: int
    alignment: int | None
    words: int | None
    memref: MemRefType = field(repr=False)
    placement: Placement = field(repr=False)
    space: Space = field(repr=False)
    dynamic_shape: tuple[int | None, ...] | None = None  # `?` filled in by constants
    location: Location | None = None  # the op's loc(...), as written
    locations: LocationTable | None = field(default=None, repr=False, compare=False)
    kind: str = ALLOCA
    # For a scratch operand: its position among the func's scratch operands, which is its
    # entry in the kernel's `scratch_shapes`.
    scratch_index: int | None = None

    def __reduce__(self) -> tuple[type[Allocation], tuple[object, ...]]:
        # Workers send records back by the ten thousand: as one tuple each, rebuilt by the
        # constructor (a slots dataclass otherwise pickles through Python-level
        # __getstate__/__setstate__ that walk `fields()` for every record).
        return (Allocation, (self.file, self.chunk, self.name, self.line, self.col,
                             self.op_form, self.order, self.live_end, self.last_use_line,
                             self.alignment, self.words, self.memref, self.placement,
                             self.space, self.dynamic_shape, self.location, self.locations,
                             self.kind, self.scratch_index))

    @property
    def loc(self) -> SourceLocation:
        """The source location, resolved through the chunk's `#loc` aliases when first
        asked for (dumps hold far more aliases than any report shows)."""
        if self.locations is None or self.location is None:
            return UNRESOLVED
        return self.locations.resolve(self.location)

    # the memref type
    @property
    def type(self) -> str:
        return self.memref.text

    @property
    def shape(self) -> tuple[int | None, ...] | None:
        return self.memref.shape

    @property
    def resolved_shape(self) -> tuple[int | None, ...] | None:
        return self.dynamic_shape if self.dynamic_shape is not None else self.memref.shape

    @property
    def element_type(self) -> str:
        return self.memref.element.text

    @property
    def element_bits(self) -> int | None:
        return self.memref.element.bits

    @property
    def num_elements(self) -> int | None:
        return static_elements(self.resolved_shape)

    @property
    def bits(self) -> int | None:
        elements, bits = self.num_elements, self.element_bits
        return None if elements is None or bits is None else elements * bits

    @property
    def bytes(self) -> int | None:
        return bits_to_bytes(self.bits)

    @property
    def size_assumed(self) -> bool:
        """Whether the size rests on an assumed element width (semaphores)."""
        return self.memref.element.text in ASSUMED_ELEMENT_BITS

    # the memory space
    @property
    def layout(self) -> str | None:
        return self.space.layout

    @property
    def memory_space(self) -> str | None:
        return self.space.memory_space

    @property
    def space_id(self) -> int | None:
        return self.space.space_id

    @property
    def space_name(self) -> str:
        return self.space.space_name

    @property
    def space_key(self) -> str:
        """What groups allocations into one memory space: the id, else the name."""
        space = self.space
        return str(space.space_id) if space.space_id is not None else space.space_name

    # the enclosing ops
    @property
    def module(self) -> str:
        return self.placement.module

    @property
    def func(self) -> str:
        return self.placement.func

    @property
    def core_type(self) -> str | None:
        return self.placement.core_type

    @property
    def scratch_operands(self) -> int | None:
        return self.placement.scratch_operands

    @property
    def scope_op(self) -> str:
        return self.placement.scope_op

    @property
    def scope_path(self) -> str:
        return self.placement.scope_path

    @property
    def scope_start(self) -> int:
        return self.placement.scope_start

    @property
    def scope_end(self) -> int:
        end = self.placement.scope_end
        return end if end >= 0 else self.live_end

    @property
    def dump_header(self) -> str | None:
        return self.placement.dump_header

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


_PRETTY_SYMBOL = re.compile(
    r'\s*(?:%[^=]*=\s*)?[\w.$"]++\s+(?:(?:public|private|nested)\s+)?'
    r'@("[^"\\]*+(?:\\.[^"\\]*+)*+"|[\w$.\-]+)'
)
# Attribute names may be quoted (`{"sym_name" = "k"}`): MLIR reads both spellings.
_GENERIC_SYMBOL = re.compile(r'(?:\bsym_name|"sym_name")\s*=\s*"([^"\\]*+(?:\\.[^"\\]*+)*+)"')
_CORE_TYPE = re.compile(r'(?:tpu\.core_type|"tpu\.core_type")\s*=\s*'
                        r"#tpu\.core_type<\s*(\w+)\s*>")
_SCRATCH_OPERANDS = re.compile(r'(?:\bscratch_operands|"scratch_operands")\s*=\s*(\d+)')


def _search_from_literal(pattern: re.Pattern[str], literal: str, text: str
                         ) -> re.Match[str] | None:
    """`pattern.search(text)` for a pattern whose every match holds `literal` at its start or,
    quoted, one character in: searched from its first occurrence. A pattern that opens with
    `\\b` or an alternation gives the regex engine no prefix to skip ahead by, so a search
    from the start tries a match at each character (2 to 5 us per func header); a `\\b` at
    the new start still sees the character before it."""
    at = text.find(literal)
    return None if at < 0 else pattern.search(text, at - 1 if at else 0)


def frame_symbol(frame: OpFrame) -> str | None:
    """The symbol an op defines (`func.func @k`, `sym_name = "k"`), if any."""
    # Most region ops (loops, ifs, regions) define no symbol: a substring test rules them
    # out before either pattern runs (each needs its literal: `@`, `sym_name`).
    header = frame.header
    if "@" in header:
        m = _PRETTY_SYMBOL.match(header)
        if m is not None:
            return m.group(1).strip('"')
    m = _search_from_literal(_GENERIC_SYMBOL, "sym_name", frame.attribute_text())
    return m.group(1) if m is not None else None


def is_module_like(frame: OpFrame) -> bool:
    return frame.name == "module" or frame.name.endswith(".module")


class _ChunkContext:
    """Per-chunk lookups shared by its allocas (location table, alias texts)."""

    def __init__(self, chunk: Chunk) -> None:
        self.chunk = chunk
        self.aliases = chunk.aliases
        self.locations = LocationTable(chunk.aliases)


def build_allocations(scan: FileScan, settings: ModelSettings | None = None
                      ) -> tuple[list[Allocation], list[Diagnostic]]:
    """Turn a file's scan into allocation records, plus diagnostics for what was skipped."""
    builder = _Builder(scan, settings or ModelSettings())
    diagnostics = list(scan.diagnostics)
    scratch: list[Allocation] = []
    for func in scan.funcs:
        scratch.extend(builder.scratch_operands(func, diagnostics))
    ops = builder.build_all(scan.allocas, diagnostics)
    # Scratch operands sit at their func's program point, ahead of its ops (a stable sort).
    records = sorted([*scratch, *ops], key=lambda r: r.order) if scratch else ops
    diagnostics.extend(undefined_location_notes(scan))
    diagnostics.extend(_kind_notes(scan.path, builder.not_allocas))
    return records, diagnostics


def _kind_notes(path: str, records: list[Allocation]) -> list[Diagnostic]:
    """What the report must say about entries it counts on an assumption or not at all
    (among `records`, in order: the op records whose kind is not ALLOCA are enough)."""
    notes = []
    heap = [r for r in records if r.kind == HEAP]
    if heap:
        first = heap[0]
        notes.append(Diagnostic(
            path, first.line, first.col,
            f"{len(heap)} memref.alloc op(s) are listed but not counted: heap allocations "
            "are not on the scoped stack the E3000 check measures", first.type))
    semaphores = [r for r in records if r.kind == SEMAPHORE and r.size_assumed]
    if semaphores:
        first = semaphores[0]
        notes.append(Diagnostic(
            path, first.line, first.col,
            f"{len(semaphores)} tpu.sem_alloc op(s) counted at one 4-byte word per semaphore:"
            " an assumption, no public source states a semaphore's size", first.type))
    return notes


def undefined_location_notes(scan: FileScan) -> list[Diagnostic]:
    """Allocas whose `loc(#alias)` names an alias that is never defined (a dump cut before
    or inside its `#loc` table): one note, at the first such alloca. Problems further down
    a chain (an alias that refers to itself or to nothing) are found when the chain is
    followed, for the allocas a report shows, and listed with their location: checking
    the whole table here would cost a tenth of the run on a large dump."""
    aliases_of = {chunk.index: chunk.aliases for chunk in scan.chunks}
    if _all_defined(scan, aliases_of):
        return []
    users: dict[int, list[RawAlloca]] = {}
    for raw in scan.allocas:
        loc = raw.syntax.location if raw.syntax is not None else None
        if isinstance(loc, AliasLoc) and loc.name not in aliases_of.get(raw.chunk, {}):
            users.setdefault(raw.chunk, []).append(raw)
    notes = []
    for found in users.values():
        first = found[0]
        name = first.syntax.location.name if first.syntax and first.syntax.location else ""
        notes.append(Diagnostic(
            scan.path, first.line, first.col,
            f"{len(found)} alloca(s) refer to location aliases that are never defined "
            f"(first: {name}); their source location is unknown", first.text))
    return notes


def _all_defined(scan: FileScan, aliases_of: dict[int, Mapping[str, str]]) -> bool:
    """Whether every `loc(#alias)` of an alloca names an alias its chunk defines: asked of
    the fast reader's table once per chunk (a large dump has tens of thousands)."""
    names_of: dict[int, list[str]] = {}
    for raw in scan.allocas:
        location = raw.location  # its syntax's, without making the syntax
        if isinstance(location, AliasLoc):
            names_of.setdefault(raw.chunk, []).append(location.name)
    for chunk, names in names_of.items():
        aliases = aliases_of.get(chunk, {})
        if isinstance(aliases, TrailingTable):
            if not aliases.defines_all(names):
                return False
        elif not all(name in aliases for name in names):
            return False
    return True


class _Skip(Exception):
    pass


class _Nest(NamedTuple):
    """What a chain of frames says about the ops inside its innermost frame."""

    func_frame: OpFrame | None  # the innermost frame that defines a symbol, not a module
    scope_frame: OpFrame | None  # the innermost scope op (see ModelSettings.scope_ops)
    scope_path: str  # `func.func@k/tpu.region#0/...`: from the func (or the top) down
    # (module, func, core type, scratch operands): the same for every frame of a func
    # under one outermost frame, so made once per func and handed down.
    enclosing: tuple[str, str, str | None, int | None]


# What an alloca's body means in a chunk under a core type: form, memref, words, space,
# alignment, kind, op.
_Facts = tuple[str, MemRefType, int | None, Space, int | None, str, str]


class _SharedFacts(NamedTuple):
    """What the bodies of one fast reader's spans mean under one core type and settings."""

    settings: ModelSettings  # kept: its id is in the key
    facts: dict[int, _Facts]  # by the body's id
    bodies: list[object]  # kept: their ids are the keys


# The `_Facts` of the bodies a fast reader shares, kept for the life of the `#loc` table its
# chunks all use as their aliases (by its id: the table is a Mapping, so not hashable),
# then by core type and settings: each span of a file is built by a builder of its own,
# and the spans write the same bodies (17 spans of a 50 MB dump: 5,251 bodies worked out
# one span at a time, 322 distinct).
_SHARED_FACTS: dict[int, dict[tuple[str | None, int], _SharedFacts]] = {}
# At most this many bodies kept per table, core type and settings (emptied when full).
_SHARED_FACTS_LIMIT = 1 << 16

_NO_NEST = _Nest(None, None, "", ("", "", None, None))
# Frames at most this deep are remembered when a frame below them is worked out (`nest`).
_NESTS_KEPT_DEPTH = 64
_UNKNOWN = object()  # a symbol not yet looked for (None: the frame defines none)


class _Builder:
    """Builds records for one file, remembering what allocas share: their enclosing ops
    (keyed by the innermost one), their chunk's tables, their memory-space text."""

    def __init__(self, scan: FileScan, settings: ModelSettings) -> None:
        self.path = scan.path
        self.settings = settings
        self.contexts = {chunk.index: _ChunkContext(chunk) for chunk in scan.chunks}
        self.symbols: dict[int, str | None] = {}
        self.placements: dict[tuple[int | None, int], Placement] = {}
        self.facts: dict[int, tuple[str | None, int | None]] = {}
        self.nests: dict[int, _Nest] = {}
        self.spaces: dict[tuple[tuple[str, ...], str | None], Space] = {}
        self.typed: dict[tuple[int, int, str | None], tuple[MemRefType, int | None, Space]] = {}
        self.not_allocas: list[Allocation] = []  # op records of another kind, in order

    def symbol(self, frame: OpFrame) -> str | None:
        key = id(frame)
        found = self.symbols.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            found = self.symbols[key] = frame_symbol(frame)
        return found  # type: ignore[return-value]

    def placement(self, frames: tuple[OpFrame, ...], chunk: int) -> Placement:
        key = (id(frames[-1]) if frames else None, chunk)
        found = self.placements.get(key)
        return found if found is not None else self._new_placement(frames, chunk, key)

    def _new_placement(self, frames: tuple[OpFrame, ...], chunk: int,
                       key: tuple[int | None, int]) -> Placement:
        """The placement of the ops inside frames[-1] in `chunk`, remembered by `key`."""
        header = self.contexts[chunk].chunk.header
        if frames:
            nest = self.nest(frames)
            scope = nest.scope_frame or nest.func_frame or frames[-1]
            module, func, core_type, scratch = nest.enclosing
            found = Placement(module, func, core_type, scratch, scope.name, scope.order,
                              scope.end_order, nest.scope_path, header)
        else:
            module, func, core_type, scratch = _NO_NEST.enclosing
            found = Placement(module, func, core_type, scratch, "", 0, -1, "", header)
        self.placements[key] = found
        return found

    def nest(self, frames: tuple[OpFrame, ...]) -> _Nest:
        """What `frames` (outermost first) say about the ops inside the innermost one,
        made from what the frames above it say (remembered per frame: a frame's ancestors
        are always the same, and a deep nest must not cost depth^2). Frames deeper than
        `_NESTS_KEPT_DEPTH` are remembered only when asked for: each holds its scope path,
        as long as its depth, and a chain of 10,000 nested regions would hold 1 GB of them."""
        nests = self.nests
        # The innermost frame already worked out (the innermost itself, else most often its
        # parent), then each frame below it in turn.
        leaf = len(frames) - 1
        depth = leaf + 1
        outer = None
        while depth:
            outer = nests.get(id(frames[depth - 1]))
            if outer is not None:
                break
            depth -= 1
        if depth > leaf:
            return outer if outer is not None else _NO_NEST
        root = frames[0]
        scope_ops = self.settings.scope_ops
        make = tuple.__new__  # a NamedTuple's own constructor is a Python-level call
        # The steps of the frames passed over below `outer`'s scope path (which is then not
        # theirs: they are not remembered), joined into the next path made.
        pending: list[str] = []
        for index in range(depth, leaf + 1):
            frame = frames[index]
            name = frame.name
            header = frame.header
            trailer = frame.trailer
            kept = index < _NESTS_KEPT_DEPTH or index == leaf
            # Most frames (loops, ifs, regions) define no symbol: `frame_symbol` finds one
            # only with `@` or `sym_name` in `attribute_text()`, the header and trailer
            # parts joined by spaces (which the literals hold none of).
            if outer is not None and "@" not in header and "sym_name" not in header and (
                    not trailer or "sym_name" not in (
                        trailer[0] if len(trailer) == 1 else " ".join(trailer))):
                path = outer.scope_path
                step = f"{name}#{frame.sibling_index}"
                if not kept:
                    pending.append(step)
                elif pending:
                    path = "/".join((path, *pending, step) if path else (*pending, step))
                    pending.clear()
                else:
                    path = f"{path}/{step}" if path else step
                outer = make(_Nest, (outer.func_frame,
                                     frame if name in scope_ops else outer.scope_frame,
                                     path, outer.enclosing))
            else:
                if pending:
                    assert outer is not None
                    path = outer.scope_path
                    outer = outer._replace(scope_path="/".join(
                        (path, *pending) if path else pending))
                    pending.clear()
                outer = self._step(frame, outer, root)
            if kept:
                nests[id(frame)] = outer
        return outer  # type: ignore[return-value]

    def _step(self, frame: OpFrame, outer: _Nest | None, root: OpFrame) -> _Nest:
        """What `frame` says about the ops inside it, given what the frames above it say
        (`outer`, None for the outermost frame `root`)."""
        # The func is the innermost frame that defines a symbol and is not a module; the
        # scope path runs from it down (from the outermost frame when there is none).
        name = frame.name
        if name == "module" or name.endswith(".module"):
            symbol = None
        else:
            symbol = self.symbol(frame)
        scope_frame = frame if name in self.settings.scope_ops else None
        make = tuple.__new__
        if symbol:
            return make(_Nest, (frame, scope_frame or (outer.scope_frame if outer is not None
                                                        else None),
                                f"{name}@{symbol}", self._enclosing(frame, root)))
        if outer is None:  # the outermost frame
            return make(_Nest, (None, scope_frame, f"{name}#{frame.sibling_index}",
                                self._enclosing(None, root)))
        path = outer.scope_path
        step = f"{name}#{frame.sibling_index}"
        return make(_Nest, (outer.func_frame, scope_frame or outer.scope_frame,
                            f"{path}/{step}" if path else step, outer.enclosing))

    def _enclosing(self, func_frame: OpFrame | None, outer: OpFrame | None
                   ) -> tuple[str, str, str | None, int | None]:
        """What the module (the outermost frame, if module-like) and the func say."""
        func = (self.symbol(func_frame) if func_frame else "") or ""
        module = ""
        if outer is not None and is_module_like(outer):
            module_symbol = self.symbol(outer)
            module = f"@{module_symbol}" if module_symbol else f"module#{outer.top_index}"
        return (module, func, *self.func_facts(func_frame))

    def func_facts(self, func_frame: OpFrame | None) -> tuple[str | None, int | None]:
        """(core type, scratch operands) from a func's attributes."""
        key = id(func_frame)
        found = self.facts.get(key)
        if found is None:
            attributes = func_frame.attribute_text() if func_frame else ""
            core = _search_from_literal(_CORE_TYPE, "tpu.core_type", attributes)
            scratch = _search_from_literal(_SCRATCH_OPERANDS, "scratch_operands", attributes)
            found = self.facts[key] = (core.group(1) if core else None,
                                       int(scratch.group(1)) if scratch else None)
        return found

    def space(self, params: tuple[str, ...], aliases: dict[str, str], core_type: str | None
              ) -> Space:
        key = (params, core_type)
        found = self.spaces.get(key)
        if found is None:
            layout, raw = split_params(params, aliases)
            text = resolve_attribute_alias(raw, aliases) if raw else None
            space_id, space_name = self.settings.space_map.canonical(text, core_type)
            found = self.spaces[key] = Space(layout, raw, space_id, space_name)
        return found

    def scratch_operands(self, func: OpFrame, diagnostics: list[Diagnostic]
                         ) -> list[Allocation]:
        """A Pallas kernel's scratch buffers: the func's last `scratch_operands = N`
        arguments, live from its entry to its end (jax passes `scratch_shapes` there)."""
        _core, count = self.func_facts(func)
        if not count:
            return []
        name = self.symbol(func) or ""
        arguments = self._entry_arguments(func, name, diagnostics)
        if arguments is None:
            return []
        if len(arguments) < count:
            diagnostics.append(Diagnostic(
                self.path, func.line, func.col,
                f"func @{name} says scratch_operands = {count} but has {len(arguments)} "
                "argument(s); its scratch operands are not counted", func.header[:120]))
            return []
        frames = tuple(func.ancestors())
        where = self.placement(frames, func.chunk)
        context = self.contexts[func.chunk]
        records = []
        for index, (argument, line, col, form) in enumerate(arguments[-count:]):
            try:
                memref = _memref_of(argument.type, context.aliases)
            except _Skip as skip:
                diagnostics.append(Diagnostic(
                    self.path, line, col, f"scratch operand {argument.name} of func @{name} "
                    f"skipped: {skip}", argument.name))
                continue
            space = self.space(memref.params, context.aliases, where.core_type)
            end = func.end_order if func.end_order >= 0 else func.order
            records.append(Allocation(
                self.path, func.chunk, argument.name, line, col, form, func.order, end,
                func.end_line if func.end_line >= 0 else line, None, memref.words, memref,
                where, space, None, argument.location, context.locations,
                kind=SCRATCH_OPERAND, scratch_index=index))
        return records

    def _entry_arguments(self, func: OpFrame, name: str, diagnostics: list[Diagnostic]
                         ) -> list[tuple[Argument, int, int, str]] | None:
        """The func's arguments with their line and column in the dump, from its entry
        block's label (generic form) or its signature (pretty form). A generic func whose
        label goes on to later lines (`^bb0` or `^bb0(` then the arguments) gives its
        argument types in `function_type`; they are named `%argN`, as MLIR prints them."""
        if func.entry_block is not None:
            line, col, text = func.entry_block
            open_at = text.find("(")
            form = "generic"
            if open_at < 0:
                return self._arguments_from_function_type(func, name, diagnostics)
        else:
            text = func.header
            m = _PRETTY_SYMBOL.match(text)
            open_at = text.find("(", m.end()) if m is not None else -1
            form = "pretty"
            if open_at < 0:
                diagnostics.append(Diagnostic(
                    self.path, func.line, func.col, f"func @{name} says it has scratch "
                    "operands but its arguments are not printed; they are not counted",
                    text[:120]))
                return None
        try:
            arguments = parse_arguments(text, open_at)
        except SyntaxProblem as problem:
            if func.entry_block is not None:  # `^bb0(` with its arguments on later lines
                return self._arguments_from_function_type(func, name, diagnostics)
            diagnostics.append(Diagnostic(
                self.path, func.line, func.col, f"arguments of func @{name} do not parse "
                f"({problem.message}); its scratch operands are not counted", text[:120]))
            return None
        placed = []
        for argument in arguments:
            if func.entry_block is not None:
                line, col = func.entry_block[0], func.entry_block[1] + argument.offset
            elif argument.offset < func.first_line_chars:
                line, col = func.line, func.col + argument.offset
            else:  # on a later line of the signature, which the scanner joined
                line, col = func.line, func.col
            placed.append((argument, line, col, form))
        return placed

    def _arguments_from_function_type(self, func: OpFrame, name: str,
                                      diagnostics: list[Diagnostic]
                                      ) -> list[tuple[Argument, int, int, str]] | None:
        try:
            types = parse_input_types(func.header)
        except SyntaxProblem as problem:
            types = None
            why = f"its function_type does not parse ({problem.message})"
        else:
            why = "neither its entry block nor a function_type prints them"
        if types is None:
            diagnostics.append(Diagnostic(
                self.path, func.line, func.col, f"func @{name} says it has scratch operands "
                f"but {why}; they are not counted", func.header[:120]))
            return None
        return [(Argument(f"%arg{k}", parsed, (), None, 0), func.line, func.col, "generic")
                for k, parsed in enumerate(types)]

    def build_all(self, allocas: list[RawAlloca], diagnostics: list[Diagnostic]
                  ) -> list[Allocation]:
        """`build` on each alloca the scanner parsed, in order, with a note for each one
        skipped or too large to size. One loop with what allocas share looked up by
        identity: a region's allocas share its frames tuple, and the allocas written alike
        their parsed body (the reader's, one per distinct text), whose meaning in a chunk
        and under a core type (`_Facts`) is made once. A dump has one record per alloca."""
        path = self.path
        placements = self.placements
        facts_in: dict[tuple[int, str | None], tuple[dict[int, _Facts], list[object]]] = {}
        locations_of = {index: context.locations for index, context in self.contexts.items()}
        ops: list[Allocation] = []
        append = ops.append
        last_frames: tuple[OpFrame, ...] | None = None
        last_chunk = -1
        where: Placement | None = None
        core_type: str | None = None
        facts_here: dict[int, _Facts] = {}
        bodies_here: list[object] = []  # the bodies whose ids key `facts_here`
        locations: LocationTable | None = None
        for raw in allocas:
            chunk = raw.chunk
            frames = raw.frames
            if frames is not last_frames or chunk != last_chunk:
                key = (id(frames[-1]) if frames else None, chunk)
                where = placements.get(key)
                if where is None:
                    where = self._new_placement(frames, chunk, key)
                last_frames = frames
                # What bodies mean, and the locations, depend on the chunk and core type
                # alone: the same across most regions met one after another.
                if chunk != last_chunk or where.core_type != core_type:
                    last_chunk, core_type = chunk, where.core_type
                    known = facts_in.get((chunk, core_type))
                    if known is None:
                        known = facts_in[chunk, core_type] = self._facts_known(chunk, core_type)
                    facts_here, bodies_here = known
                    locations = locations_of[chunk]
            body = raw.body
            if body is not None:
                # Bodies are shared, and kept with their facts: their identities stay
                # distinct.
                facts = facts_here.get(id(body))
                if facts is None:
                    facts = self._facts(body[4], body[3], body[0], body[5], raw, where,
                                        diagnostics)
                    if facts is None:
                        continue
                    if len(bodies_here) >= _SHARED_FACTS_LIMIT:
                        facts_here.clear()  # found again if met again: memory stays bounded
                        bodies_here.clear()
                    facts_here[id(body)] = facts
                    bodies_here.append(body)
                location = raw.location
            else:
                syntax = raw.syntax
                if syntax is None:
                    continue  # the scanner already reported why
                facts = self._facts(syntax.type, syntax.attributes, syntax.form, syntax.op,
                                    raw, where, diagnostics)
                if facts is None:
                    continue
                location = syntax.location
            form, memref, words, space, alignment, kind, op = facts
            dynamic: tuple[int | None, ...] | None = None
            if raw.size_constants:
                dynamic = _resolve_dynamic(memref.shape, raw.size_constants)
                words = bytes_to_words(bits_to_bytes(total_bits(dynamic, memref.element.bits)))
            results = raw.results
            record = Allocation(
                path, chunk, results[0] if results else "", raw.line, raw.col, form,
                raw.order, raw.live_end, raw.live_end_line, alignment, words, memref, where,
                space, dynamic, location, locations, kind)
            append(record)
            if kind != ALLOCA:
                self.not_allocas.append(record)
            if words is None and size_too_large(record.resolved_shape):
                diagnostics.append(Diagnostic(
                    path, raw.line, raw.col, f"{op} size too large to count "
                    "(more than 2^900 elements); read with its size unknown", raw.text[:120]))
        return ops

    def _facts_known(self, chunk: int, core_type: str | None
                     ) -> tuple[dict[int, _Facts], list[object]]:
        """Where the `_Facts` of bodies in `chunk` under `core_type` are kept, by the body's
        id, with the bodies: this build's own, or shared by the builders of the chunks
        whose aliases are one fast reader's table (what a body means depends on nothing
        else of its chunk)."""
        aliases = self.contexts[chunk].aliases
        if not isinstance(aliases, TrailingTable):
            return {}, []
        by_table = _SHARED_FACTS.get(id(aliases))
        if by_table is None:
            by_table = _SHARED_FACTS[id(aliases)] = {}
            weakref.finalize(aliases, _SHARED_FACTS.pop, id(aliases), None)
        key = (core_type, id(self.settings))
        shared = by_table.get(key)
        if shared is None:
            shared = by_table[key] = _SharedFacts(self.settings, {}, [])
        return shared.facts, shared.bodies

    def _facts(self, parsed: MemRefType | OtherType,
               attributes: tuple[tuple[str, str | None], ...], form: str, op: str,
               raw: RawAlloca, where: Placement, diagnostics: list[Diagnostic]
               ) -> _Facts | None:
        """What an alloca's body means where it is, or None (with a note) when its type is
        not a memref the model can read."""
        chunk = raw.chunk
        typed = self.typed.get((id(parsed), chunk, where.core_type))
        if typed is None:
            try:
                typed = self._typed(parsed, chunk, where.core_type)
            except _Skip as skip:
                diagnostics.append(Diagnostic(self.path, raw.line, raw.col,
                                              f"{op} skipped: {skip}", raw.text))
                return None
        memref, words, space = typed
        return (form, memref, words, space, alignment_of(attributes) if attributes else None,
                KIND_OF_OP.get(op, ALLOCA), op)

    def _typed(self, parsed: MemRefType | OtherType, chunk: int, core_type: str | None
               ) -> tuple[MemRefType, int | None, Space]:
        """What a parsed type means in a chunk and for a func's core type, remembered by
        the type object's identity (allocas share a few hundred, the parser's cache)."""
        aliases = self.contexts[chunk].aliases
        memref = _memref_of(parsed, aliases)
        typed = self.typed[(id(parsed), chunk, core_type)] = (
            memref, memref.words, self.space(memref.params, aliases, core_type))
        return typed


def _memref_of(parsed: MemRefType | OtherType, aliases: dict[str, str]) -> MemRefType:
    if isinstance(parsed, MemRefType):
        return _with_aliased_element(parsed, aliases)
    text = parsed.text
    if text.startswith("!") and text in aliases:
        try:
            resolved = parse_type(resolve_attribute_alias_type(text, aliases))
        except SyntaxProblem as problem:
            raise _Skip(f"type alias {text} does not parse: {problem.message}") from None
        if isinstance(resolved, MemRefType):
            return _with_aliased_element(resolved, aliases)
        raise _Skip(f"type alias {text} is {resolved.text}, not a memref")
    if text.startswith("!") and text not in aliases:
        raise _Skip(f"result type {text} is not defined in this module (or is not a memref)")
    raise _Skip(f"result type {text} is not a memref")


def _with_aliased_element(memref: MemRefType, aliases: dict[str, str]) -> MemRefType:
    """`memref<2x!E>` with `!E = vector<4xf32>`: the element's width comes from its alias
    (the text stays as written)."""
    element = memref.element
    if element.bits is not None or not element.text.startswith("!") or not aliases:
        return memref
    definition = resolve_attribute_alias_type(element.text, aliases)
    if definition == element.text:
        return memref
    try:
        resolved = parse_type(definition)
    except SyntaxProblem:
        return memref  # an element type sc-mlir cannot size: its size stays unknown
    if isinstance(resolved, MemRefType) or resolved.bits is None:
        return memref
    return dataclasses.replace(memref, element=ElementType(element.text, resolved.bits))


def resolve_attribute_alias_type(text: str, aliases: dict[str, str], limit: int = 32) -> str:
    """Follow `!name` type aliases to their definition text."""
    for _ in range(limit):
        if text in aliases and text.startswith("!"):
            text = aliases[text].strip()
        else:
            return text
    return text


def _resolve_dynamic(shape: tuple[int | None, ...] | None,
                     constants: tuple[int | None, ...]) -> tuple[int | None, ...] | None:
    """Fill `?` dims with the values of constant size operands, in order."""
    if shape is None or None not in shape:
        return shape
    values = iter(constants)
    return tuple(d if d is not None else next(values, None) for d in shape)


# Silence "imported but unused" for names re-exported for callers' convenience.
__all__ = [
    "ALLOCA", "DEFAULT_SCOPE_OPS", "HEAP", "KIND_OF_OP", "SCRATCH_OPERAND", "SEMAPHORE",
    "Allocation", "ModelSettings", "build_allocations", "frame_symbol",
    "is_module_like", "resolve_attribute_alias",
]
