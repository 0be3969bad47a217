"""The allocation table: one `Allocation` record per `memref.alloca`, built from a scan.

This is where raw scanner output gets its meaning: memory spaces are canonicalised,
type and attribute aliases resolved, sizes computed, locations resolved to source, and
each alloca is placed in its module, func and scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sc_mlir.locations import UNRESOLVED, LocationTable, SourceLocation
from sc_mlir.memref import MemRefType, bits_to_bytes, bytes_to_words, static_elements, total_bits
from sc_mlir.scan import Chunk, Diagnostic, FileScan, OpFrame, RawAlloca
from sc_mlir.spaces import SpaceMap, resolve_attribute_alias, split_params
from sc_mlir.syntax import OtherType, SyntaxProblem, parse_type

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


@dataclass(frozen=True)
class Allocation:
    """One `memref.alloca`, with everything the analyses and reports need.

    Positions: `line`/`col` are the op name's position in the dump file (1-based, as MLIR
    reports it); `order` is the op's program point (ops numbered from 1 in text order,
    per file); `live_end` the program point of its last use (`last_use_line` its line in
    the dump); `scope_start`/`scope_end`
    the program points where its scope op begins and ends.
    """

    file: str
    chunk: int
    module: str
    func: str
    name: str
    line: int
    col: int
    op_form: str
    type: str
    shape: tuple[int | None, ...] | None
    resolved_shape: tuple[int | None, ...] | None
    element_type: str
    element_bits: int | None
    num_elements: int | None
    bits: int | None
    bytes: int | None
    words: int | None
    memory_space: str | None
    space_id: int | None
    space_name: str
    layout: str | None
    alignment: int | None
    scope_op: str
    scope_path: str
    scope_start: int
    scope_end: int
    order: int
    live_end: int
    last_use_line: int
    core_type: str | None
    scratch_operands: int | None  # the func's Pallas `scratch_operands` count, if printed
    dump_header: str | None
    loc: SourceLocation = UNRESOLVED

    @property
    def space_key(self) -> str:
        """What groups allocations into one memory space: the id, else the name."""
        return str(self.space_id) if self.space_id is not None else self.space_name

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


_PRETTY_SYMBOL = re.compile(
    r'\s*(?:%[^=]*=\s*)?[\w.$"]+\s+(?:(?:public|private|nested)\s+)?@("(?:[^"\\]|\\.)*"|[\w$.\-]+)'
)
_GENERIC_SYMBOL = re.compile(r'\bsym_name\s*=\s*"((?:[^"\\]|\\.)*)"')
_CORE_TYPE = re.compile(r"tpu\.core_type\s*=\s*#tpu\.core_type<\s*(\w+)\s*>")
_SCRATCH_OPERANDS = re.compile(r"\bscratch_operands\s*=\s*(\d+)")


def frame_symbol(frame: OpFrame) -> str | None:
    """The symbol an op defines (`func.func @k`, `sym_name = "k"`), if any."""
    m = _PRETTY_SYMBOL.match(frame.header)
    if m is not None:
        return m.group(1).strip('"')
    m = _GENERIC_SYMBOL.search(frame.attribute_text())
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
    settings = settings or ModelSettings()
    contexts = {chunk.index: _ChunkContext(chunk) for chunk in scan.chunks}
    symbols: dict[int, str | None] = {}
    records: list[Allocation] = []
    diagnostics = list(scan.diagnostics)
    for raw in scan.allocas:
        if raw.syntax is None:
            continue  # the scanner already reported why
        context = contexts[raw.chunk]
        try:
            record = _build_one(scan.path, raw, context, settings, symbols)
        except _Skip as skip:
            diagnostics.append(Diagnostic(scan.path, raw.line, raw.col,
                                          f"memref.alloca skipped: {skip}", raw.text))
            continue
        records.append(record)
    return records, diagnostics


class _Skip(Exception):
    pass


def _symbol(frame: OpFrame, cache: dict[int, str | None]) -> str | None:
    key = id(frame)
    if key not in cache:
        cache[key] = frame_symbol(frame)
    return cache[key]


def _build_one(path: str, raw: RawAlloca, context: _ChunkContext, settings: ModelSettings,
               symbols: dict[int, str | None]) -> Allocation:
    syntax = raw.syntax
    assert syntax is not None
    memref = _memref_of(syntax.type, context.aliases)
    frames = raw.frames

    func_frame = next((f for f in reversed(frames)
                       if not is_module_like(f) and _symbol(f, symbols)), None)
    func = _symbol(func_frame, symbols) if func_frame else ""
    outer = frames[0] if frames else None
    if outer is not None and is_module_like(outer):
        module_symbol = _symbol(outer, symbols)
        module = f"@{module_symbol}" if module_symbol else f"module#{outer.top_index}"
    else:
        module = ""
    func_attributes = func_frame.attribute_text() if func_frame else ""
    core_match = _CORE_TYPE.search(func_attributes)
    core_type = core_match.group(1) if core_match else None
    scratch_match = _SCRATCH_OPERANDS.search(func_attributes)

    scope = next((f for f in reversed(frames) if f.name in settings.scope_ops), None)
    if scope is None:
        scope = func_frame or (frames[-1] if frames else None)
    path_frames = frames[frames.index(func_frame):] if func_frame in frames else frames
    scope_path = "/".join(
        f"{f.name}@{func}" if f is func_frame else f"{f.name}#{f.sibling_index}"
        for f in path_frames
    )

    layout, space_raw = split_params(memref.params, context.aliases)
    space_text = resolve_attribute_alias(space_raw, context.aliases) if space_raw else None
    space_id, space_name = settings.space_map.canonical(space_text, core_type)

    resolved = _resolve_dynamic(memref.shape, raw.size_constants)
    element_bits = memref.element.bits
    bits = total_bits(resolved, element_bits)
    nbytes = bits_to_bytes(bits)
    return Allocation(
        file=path,
        chunk=raw.chunk,
        module=module,
        func=func or "",
        name=raw.results[0] if raw.results else "",
        line=raw.line,
        col=raw.col,
        op_form=syntax.form,
        type=memref.text,
        shape=memref.shape,
        resolved_shape=resolved,
        element_type=memref.element.text,
        element_bits=element_bits,
        num_elements=static_elements(resolved),
        bits=bits,
        bytes=nbytes,
        words=bytes_to_words(nbytes),
        memory_space=space_raw,
        space_id=space_id,
        space_name=space_name,
        layout=layout,
        alignment=syntax.alignment,
        scope_op=scope.name if scope else "",
        scope_path=scope_path,
        scope_start=scope.order if scope else 0,
        scope_end=scope.end_order if scope and scope.end_order >= 0 else raw.live_end,
        order=raw.order,
        live_end=raw.live_end,
        last_use_line=raw.live_end_line,
        core_type=core_type,
        scratch_operands=int(scratch_match.group(1)) if scratch_match else None,
        dump_header=context.chunk.header,
        loc=context.locations.resolve(syntax.location),
    )


def _memref_of(parsed: MemRefType | OtherType, aliases: dict[str, str]) -> MemRefType:
    if isinstance(parsed, MemRefType):
        return parsed
    text = parsed.text
    if text.startswith("!") and text in aliases:
        try:
            resolved = parse_type(resolve_attribute_alias_type(text, aliases))
        except SyntaxProblem as problem:
            raise _Skip(f"type alias {text} does not parse: {problem.message}") from None
        if isinstance(resolved, MemRefType):
            return resolved
        raise _Skip(f"type alias {text} is {resolved.text}, not a memref")
    if text.startswith("!") and text not in aliases:
        raise _Skip(f"result type {text} is not defined in this module (or is not a memref)")
    raise _Skip(f"result type {text} is not a memref")


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
    "DEFAULT_SCOPE_OPS", "Allocation", "ModelSettings", "build_allocations", "frame_symbol",
    "is_module_like", "resolve_attribute_alias",
]
