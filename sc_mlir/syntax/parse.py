"""Lark parsers for the `memref.alloca` op, MLIR types and locations.

The grammar files in `grammar/` are the single place where this syntax lives; this module
loads them once (LALR, contextual lexer) and turns parse trees into plain records.

>>> op = parse_alloca('%a = memref.alloca() {alignment = 64} : memref<8x128xbf16, 201> loc(#l)')
>>> op.results, op.form, op.alignment, op.type.shape, op.type.element, op.type.params
(('%a',), 'pretty', 64, (8, 128), ElementType(text='bf16', bits=16), ('201',))
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sc_mlir.syntax.locations import (
    AliasLoc,
    CallSiteLoc,
    FileLoc,
    FusedLoc,
    Location,
    NameLoc,
    UnknownLoc,
)
from sc_mlir.syntax.memref import (
    ASSUMED_ELEMENT_BITS,
    MAX_DIMENSION,
    ElementType,
    MemRefType,
    parse_dimension_list,
    scalar,
)
from sc_mlir.syntax.patterns import SSA_RESULTS

if TYPE_CHECKING:
    from lark import Lark, Token
    from lark.exceptions import UnexpectedInput


@dataclass(frozen=True, slots=True)
class OtherType:
    """A type that is not a memref: kept as text, with its storage width when known."""

    text: str
    bits: int | None


ParsedType = MemRefType | OtherType


_LEADING_INTEGER = re.compile(r"\s*(-?\d+)")


@dataclass(frozen=True, slots=True)
class AllocaSyntax:
    """One allocating op as written: `memref.alloca`, `memref.alloc` or `tpu.sem_alloc`."""

    results: tuple[str, ...]
    form: str  # "pretty" or "generic"
    dynamic_sizes: tuple[str, ...]
    symbol_operands: tuple[str, ...]
    attributes: tuple[tuple[str, str | None], ...]
    type: ParsedType
    location: Location | None
    op: str = "memref.alloca"

    @property
    def alignment(self) -> int | None:
        """The `alignment` attribute in bytes (`alignment = 64 : i64` -> 64)."""
        return alignment_of(self.attributes)


def alignment_of(attributes: tuple[tuple[str, str | None], ...]) -> int | None:
    """The `alignment` attribute in bytes, from an op's attributes (`AllocaSyntax.alignment`)."""
    for name, value in attributes:
        if name == "alignment" and value is not None:
            m = _LEADING_INTEGER.match(value)
            if m:
                return int(m.group(1))
    return None


@dataclass(frozen=True, slots=True)
class Argument:
    """One entry argument of a region (`%arg4: memref<16xf32, 201> loc(#loc3)`)."""

    name: str
    type: ParsedType
    attributes: tuple[tuple[str, str | None], ...]
    location: Location | None
    offset: int  # where it starts in the text given to `parse_arguments`


class SyntaxProblem(ValueError):
    """Text that does not parse: where (0-based offset into the text) and what was expected."""

    def __init__(self, offset: int, message: str, incomplete: bool) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.incomplete = incomplete


# --- grammar loading -----------------------------------------------------------------


def grammar_dir() -> Path:
    """Where the .lark files are: inside the installed package, else the source tree."""
    from importlib import resources  # here: most runs build no grammar

    packaged = resources.files("sc_mlir") / "grammar"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "grammar"


@cache
def _parser(grammar: str, start: str | tuple[str, ...]) -> Lark:
    # lark is imported when a grammar is first needed: the fast paths read most dumps
    # without one, and the import costs a run more than reading a small file.
    from lark import Lark

    starts = list(start) if isinstance(start, tuple) else [start]
    return Lark.open(
        str(grammar_dir() / grammar),
        parser="lalr",
        lexer="contextual",
        start=starts,
        propagate_positions=True,
        maybe_placeholders=True,
        # Building the LALR tables takes a quarter of a second; lark pickles them and
        # rebuilds them when the grammar or lark changes. Its default place is the shared
        # temporary directory, where anyone could plant a pickle: ours is a private one.
        cache=_private_cache_file(f"{Path(grammar).stem}-{'-'.join(starts)}-"
                                  f"{_grammars_digest()}") or False,
    )


@cache
def _grammars_digest() -> str:
    """A digest of every grammar file: lark checks only the main grammar's text against
    its cache, so an edited imported grammar (memref_type.lark, imported by alloca.lark)
    would leave a stale parser in the cache."""
    import hashlib  # as lark: only once a grammar is needed

    digest = hashlib.sha256()
    for path in sorted(grammar_dir().glob("*.lark")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _private_cache_file(name: str) -> str | None:
    """A file in the user's own cache directory (created 0700), or None if there is no
    such directory we alone can write."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "sc-mlir")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.stat(directory)
    except OSError:
        return None
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return None
    return os.path.join(directory, f"lark-{name}.cache")


def alloca_parser() -> Lark:
    """Start symbols: alloca_op, alloca_body, result_list, location."""
    return _parser("alloca.lark", ("alloca_op", "alloca_body", "result_list"))


def location_parser() -> Lark:
    return _parser("location.lark", "location")


def type_parser() -> Lark:
    return _parser("memref_type.lark", "type")


def arguments_parser() -> Lark:
    """Start symbols: argument_list, input_types."""
    return _parser("arguments.lark", ("argument_list", "input_types"))


def warm_parsers() -> None:
    """Build the grammars now (before forking workers, which then share them)."""
    alloca_parser()
    location_parser()
    type_parser()


# --- tree -> records -------------------------------------------------------------------


def _rule(tree_data: Any) -> str:
    """Imported rules carry a namespace (`memref_type__memref_type`); drop it."""
    return str(tree_data).rsplit("__", 1)[-1]


class _RecordRules:
    """The transformer's rules (`_records_transformer` makes it a lark `Transformer` when a
    grammar is first used). Dispatches on the rule name without its namespace, so one
    transformer serves the rules whether they were parsed directly or imported into
    another grammar."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        handler = getattr(self, "r_" + _rule(data), None)
        if handler is None:
            from lark import Tree

            return Tree(data, children, meta)
        return handler(children, meta)

    def _span(self, meta: Any) -> str:
        return self.text[meta.start_pos : meta.end_pos]

    # types
    def r_memref_type(self, children: list[Any], meta: Any) -> MemRefType:
        dims, element, params = children
        shape = parse_dimension_list(str(dims)) if dims is not None else ()
        return MemRefType(self._span(meta), shape, _element(element), params)

    def r_unranked_memref_type(self, children: list[Any], meta: Any) -> MemRefType:
        _, element, params = children
        return MemRefType(self._span(meta), None, _element(element), params)

    def r_memref_params(self, children: list[Any], meta: Any) -> tuple[str, ...]:
        return tuple(children)

    def r_attribute_value(self, children: list[Any], meta: Any) -> str:
        return self._span(meta)

    def r_builtin_type(self, children: list[Any], meta: Any) -> OtherType:
        element = scalar(str(children[0]))
        return OtherType(element.text, element.bits)

    def r_vector_type(self, children: list[Any], meta: Any) -> OtherType:
        dims, element = children
        shape = parse_dimension_list(str(dims)) if dims is not None else ()
        scalable = dims is not None and "[" in str(dims)
        bits = _element(element).bits
        if bits is not None and not scalable:
            for d in shape:
                bits *= d or 0
        return OtherType(self._span(meta), None if scalable else bits)

    def r_complex_type(self, children: list[Any], meta: Any) -> OtherType:
        bits = _element(children[0]).bits
        return OtherType(self._span(meta), None if bits is None else 2 * bits)

    def r_tensor_type(self, children: list[Any], meta: Any) -> OtherType:
        return OtherType(self._span(meta), None)

    def r_tuple_type(self, children: list[Any], meta: Any) -> OtherType:
        return OtherType(self._span(meta), None)

    def r_dialect_type(self, children: list[Any], meta: Any) -> OtherType:
        text = self._span(meta)
        return OtherType(text, ASSUMED_ELEMENT_BITS.get(text))

    def r_angle_group(self, children: list[Any], meta: Any) -> str:
        return self._span(meta)

    # locations
    def r_location(self, children: list[Any], meta: Any) -> Location:
        return children[0]

    def r_unknown_loc(self, children: list[Any], meta: Any) -> Location:
        return UnknownLoc()

    def r_file_loc(self, children: list[Any], meta: Any) -> Location:
        file, line, col, end = children
        end_line, end_col = (None, None) if end is None else end
        if end_line is None and end_col is not None:
            end_line = int(line)
        return FileLoc(_unquote(file), int(line), None if col is None else int(col),
                       end_line, end_col)

    def r_range_same_line(self, children: list[Any], meta: Any) -> tuple[None, int]:
        return (None, int(children[0]))

    def r_range_other_line(self, children: list[Any], meta: Any) -> tuple[int, int]:
        return (int(children[0]), int(children[1]))

    def r_name_loc(self, children: list[Any], meta: Any) -> Location:
        name, child = children
        return NameLoc(_unquote(name), child)

    def r_callsite_loc(self, children: list[Any], meta: Any) -> Location:
        return CallSiteLoc(children[0], children[1])

    def r_fused_loc(self, children: list[Any], meta: Any) -> Location:
        metadata, *parts = children
        return FusedLoc(metadata, tuple(p for p in parts if p is not None))

    def r_fused_metadata(self, children: list[Any], meta: Any) -> str:
        return children[0]

    def r_alias_loc(self, children: list[Any], meta: Any) -> Location:
        return AliasLoc(str(children[0]))

    # the op
    def r_alloca_op(self, children: list[Any], meta: Any) -> AllocaSyntax:
        results, body, location = children
        return _assemble(results or (), body, location)

    def r_result_list(self, children: list[Any], meta: Any) -> tuple[str, ...]:
        return tuple(str(c) for c in children)

    def r_value_uses(self, children: list[Any], meta: Any) -> tuple[str, ...]:
        return tuple(str(c) for c in children)

    def r_symbol_operands(self, children: list[Any], meta: Any) -> tuple[str, ...]:
        return children[0] or ()

    def r_pretty_alloca(self, children: list[Any], meta: Any) -> tuple[Any, ...]:
        op, sizes, symbols, alignment, attributes, parsed_type = children
        merged = ((alignment,) if alignment else ()) + (attributes or ())
        return ("pretty", sizes or (), symbols or (), merged, parsed_type, str(op))

    def r_pretty_sem_alloc(self, children: list[Any], meta: Any) -> tuple[Any, ...]:
        op, attributes, parsed_type = children
        return ("pretty", (), (), attributes or (), parsed_type, str(op))

    def r_inline_alignment(self, children: list[Any], meta: Any) -> tuple[str, str]:
        return ("alignment", str(children[0]))

    def r_generic_alloca(self, children: list[Any], meta: Any) -> tuple[Any, ...]:
        op, sizes, properties, attributes, (_inputs, result) = children
        merged = (properties or ()) + (attributes or ())
        # The generic form cannot tell size operands from symbol operands without
        # operandSegmentSizes; read it when present.
        dynamic, symbolic = _split_generic_operands(sizes or (), merged)
        return ("generic", dynamic, symbolic, merged, result, str(op).strip('"'))

    def r_properties(self, children: list[Any], meta: Any) -> tuple[Any, ...]:
        return children[0]

    def r_attr_dict(self, children: list[Any], meta: Any) -> tuple[tuple[str, str | None], ...]:
        return tuple(c for c in children if c is not None)

    def r_attr_entry(self, children: list[Any], meta: Any) -> tuple[str, str | None]:
        name, value = children
        return (_unquote(name) if str(name).startswith('"') else str(name), value)

    def r_argument_list(self, children: list[Any], meta: Any) -> tuple[Argument, ...]:
        return tuple(c for c in children if c is not None)

    def r_input_types(self, children: list[Any], meta: Any) -> tuple[ParsedType, ...]:
        return tuple(c for c in children if c is not None)

    def r_argument(self, children: list[Any], meta: Any) -> Argument:
        name, parsed_type, attributes, location = children
        return Argument(str(name), parsed_type, attributes or (), location, meta.start_pos)

    def r_function_type(self, children: list[Any], meta: Any) -> tuple[Any, Any]:
        # children: the input types (None for an empty list) then the result type(s).
        values = [c for c in children if c is not None]
        if not values:
            raise ValueError("function type without a result")
        return tuple(values[:-1]), values[-1]


@cache
def _records_transformer() -> type[_RecordRules]:
    from lark import Transformer

    return type("_ToRecords", (_RecordRules, Transformer), {})


def _element(parsed: Any) -> ElementType:
    if isinstance(parsed, MemRefType):
        return ElementType(parsed.text, None)
    if isinstance(parsed, OtherType):
        return ElementType(parsed.text, parsed.bits)
    return ElementType(str(parsed), None)


def _unquote(token: Token | str) -> str:
    text = str(token)
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1]
    if "\\" in text:
        text = re.sub(r"\\(\\|\"|n|t|[0-9A-Fa-f]{2})", _unescape_one, text)
    return text


def _unescape_one(m: re.Match[str]) -> str:
    code = m.group(1)
    simple = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}
    return simple.get(code) or chr(int(code, 16))


_SEGMENTS = re.compile(r"(?:array<i32:\s*|dense<\[?)\s*(\d+)\s*(?:,\s*(\d+)\s*)?")


def _split_generic_operands(
    operands: tuple[str, ...], attributes: tuple[tuple[str, str | None], ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    for name, value in attributes:
        if name in ("operandSegmentSizes", "operand_segment_sizes") and value:
            m = _SEGMENTS.search(value)
            if m:
                n_dynamic = int(m.group(1))
                return operands[:n_dynamic], operands[n_dynamic:]
    return operands, ()


# --- entry points ---------------------------------------------------------------------


def _problem(exc: UnexpectedInput, text: str) -> SyntaxProblem:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(exc, UnexpectedEOF):
        return SyntaxProblem(len(text), f"text ends early; expected {_expected(exc.expected)}",
                             incomplete=True)
    if isinstance(exc, UnexpectedToken):
        token = exc.token
        if token.type == "$END":
            return SyntaxProblem(len(text), f"text ends early; expected {_expected(exc.expected)}",
                                 incomplete=True)
        offset = token.start_pos if token.start_pos is not None else 0
        return SyntaxProblem(offset, f"unexpected {str(token)!r}; expected "
                             f"{_expected(exc.expected)}", incomplete=False)
    if isinstance(exc, UnexpectedCharacters):
        offset = exc.pos_in_stream or 0
        return SyntaxProblem(offset, f"unexpected character {text[offset:offset + 1]!r}",
                             incomplete=False)
    return SyntaxProblem(0, str(exc), incomplete=False)


_READABLE = {
    "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'",
    "RBRACE": "'}'", "LESSTHAN": "'<'", "MORETHAN": "'>'", "COMMA": "','", "COLON": "':'",
    "EQUAL": "'='", "$END": "end of text",
}


def _expected(names: Any) -> str:
    readable = sorted({_READABLE.get(n, n.rsplit("__", 1)[-1]) for n in names or ()})
    if len(readable) > 6:
        readable = [*readable[:6], "..."]
    return ", ".join(readable) or "more text"


def _run(parser: Lark, text: str, start: str | None = None) -> Any:
    from lark.exceptions import UnexpectedInput

    try:
        tree = parser.parse(text, start=start) if start else parser.parse(text)
    except UnexpectedInput as exc:
        raise _problem(exc, text) from None
    try:
        return _records_transformer()(text).transform(tree)
    except RecursionError:
        raise SyntaxProblem(0, "nesting too deep to read", incomplete=False) from None
    except Exception as exc:  # lark wraps transformer errors in VisitError
        cause = getattr(exc, "orig_exc", exc)
        raise SyntaxProblem(0, str(cause), incomplete=False) from None


_BodyParts = tuple[str, tuple[str, ...], tuple[str, ...], tuple[Any, ...], ParsedType, str]


def _assemble(results: tuple[str, ...], body: _BodyParts, location: Location | None
              ) -> AllocaSyntax:
    form, sizes, symbols, attributes, parsed_type, op = body
    return AllocaSyntax(results, form, sizes, symbols, attributes, parsed_type, location, op)


def parse_alloca(text: str) -> AllocaSyntax:
    """Parse one `memref.alloca` op (result names to trailing location).

    Raises SyntaxProblem, whose offset counts from the start of `text`. The result names,
    the op body and the location are parsed (and cached) separately, with the same grammar:
    a dump repeats one body under many names and one location under many ops.
    """
    parts = split_alloca_text(text)
    if parts is None:
        return _run(alloca_parser(), text, "alloca_op")
    (results_text, _), (body_text, _), (loc_text, _) = parts
    try:
        results = _parse_results(results_text) if results_text else ()
        body = parse_alloca_body(body_text)
        location = parse_location(loc_text) if loc_text else None
    except SyntaxProblem:
        # Report the problem as the whole-op grammar sees it, with its offset.
        return _run(alloca_parser(), text, "alloca_op")
    return _assemble(results, body, location)


def parse_alloca_parts(results_text: str, body: str, loc_text: str) -> AllocaSyntax:
    """An op already split into result names, body and trailing `loc(...)` (or ""). Raises
    SyntaxProblem (with offsets into the part, so callers report via `parse_alloca`)."""
    results = _parse_results(results_text) if results_text else ()
    return _assemble(results, parse_alloca_body(body),
                     parse_location(loc_text) if loc_text else None)


def parse_alloca_line(results_text: str, text: str, body_at: int) -> AllocaSyntax:
    """An op alone on its line: `text` from its first result name to its end, its op name at
    `body_at`; a trailing ` loc(...)` is split off and each part parsed (and cached) alone.
    Raises SyntaxProblem (offsets into a part: report through `parse_alloca`)."""
    loc_at = text.rfind(" loc(")
    if loc_at > body_at and text.endswith(")"):
        return parse_alloca_parts(results_text, text[body_at:loc_at], text[loc_at + 1 :])
    return parse_alloca_parts(results_text, text[body_at:], "")


AllocaBody = _BodyParts


@lru_cache(maxsize=1 << 16)
def parse_alloca_body(text: str) -> AllocaBody:
    """An allocating op from its name to its type (no results, no location), as the parts
    `AllocaSyntax` takes after `results`. Raises SyntaxProblem (not cached: Python's cache
    keeps results only)."""
    return _common_body(text) or _parse_body(text)


# The shapes MLIR prints for an allocating op (operands only as a pretty op's sizes and
# symbols), read without the grammar (building the grammar's parse of a distinct body costs
# about 0.3 ms, and a dump holds hundreds: the first read of each would dominate a small
# file). Anything else, or anything these patterns are unsure of, goes to the grammar;
# tests/syntax/test_syntax_fast_paths.py holds both to the same answers.
# The builtin scalar types other than integers, as the grammar's BUILTIN_TYPE names them.
_BUILTIN_NAMES = r"index|bf16|tf32|f16|f32|f64|f80|f128|f8E[0-9A-Z]+|f6E[0-9A-Z]+|f4E[0-9A-Z]+|none"
_COMMON_MEMREF = re.compile(
    r"memref<((?:(?:[0-9]{1,18}|\?)x)*)"
    rf"((?:[su]?i[0-9]{{1,4}}|{_BUILTIN_NAMES})(?![\w$.])|![A-Za-z_][\w$.]*)"
    r"((?:, (?:[0-9]+|#[A-Za-z_][\w$.]*(?:<[A-Za-z_][\w$.]*>)?))*)>")
# The value names a pretty op takes: its dynamic sizes in `(...)`, its symbols in `[...]`.
_COMMON_USES = r"((?:%[\w$.\-]+(?:#[0-9]+)?(?:, %[\w$.\-]+(?:#[0-9]+)?)*)?)"
_COMMON_BODY = re.compile(
    r'(?:"(memref\.alloca|memref\.alloc|tpu\.sem_alloc)"\(\)(?: <\{([^{}"]*)\}>)? : \(\) -> '
    rf"|(memref\.alloca|memref\.alloc)\({_COMMON_USES}\)(?:\[{_COMMON_USES}\])?"
    r"(?: \{([^{}\"]*)\})? : "
    r"|(tpu\.sem_alloc)(?: \{([^{}\"]*)\})? : )(memref<.*>)")
_COMMON_ENTRY = re.compile(
    r"([A-Za-z_][\w$.\-]*) = (array<\w+: [0-9, ]*>|[\w.\-]+(?: : [\w.]+)?)(?=, |$)")


def _common_body(text: str) -> AllocaBody | None:
    body = _COMMON_BODY.fullmatch(text)
    if body is None:
        return None
    memref = _common_memref(body.group(9))
    if memref is None:
        return None
    (generic_op, generic_attrs, pretty_op, sizes, symbols, pretty_attrs, sem_op,
     sem_attrs) = body.groups()[:8]
    attributes = _common_attributes(generic_attrs or pretty_attrs or sem_attrs or "")
    if attributes is None:
        return None
    if generic_op is not None:
        return ("generic", (), (), attributes, memref, generic_op)
    return ("pretty", tuple(sizes.split(", ")) if sizes else (),
            tuple(symbols.split(", ")) if symbols else (), attributes, memref,
            pretty_op or sem_op)


def _common_attributes(text: str) -> tuple[tuple[str, str | None], ...] | None:
    """`alignment = 64 : i64, operandSegmentSizes = array<i32: 0, 0>`, or None."""
    attributes: list[tuple[str, str | None]] = []
    at = 0
    while at < len(text):
        entry = _COMMON_ENTRY.match(text, at)
        if entry is None:
            return None
        attributes.append((entry.group(1), entry.group(2)))
        at = entry.end()
        if at < len(text):
            if not text.startswith(", ", at):
                return None
            at += 2
    return tuple(attributes)


def _common_memref(text: str) -> MemRefType | None:
    m = _COMMON_MEMREF.fullmatch(text)
    if m is None:
        return None
    dims, element_text, params = m.groups()
    shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1])
    if any(d is not None and d > MAX_DIMENSION for d in shape):
        return None
    if element_text[0] == "!":
        element = ElementType(element_text, ASSUMED_ELEMENT_BITS.get(element_text))
    else:
        element = scalar(element_text)
    return MemRefType(text, shape, element, tuple(params[2:].split(", ")) if params else ())


@lru_cache(maxsize=1 << 16)
def _parse_body(text: str) -> _BodyParts:
    return _run(alloca_parser(), text, "alloca_body")


_SINGLE_RESULT = re.compile(SSA_RESULTS)


def _parse_results(text: str) -> tuple[str, ...]:
    # One result name is the grammar's RESULT_NAME token exactly; lists go to the grammar.
    if _SINGLE_RESULT.fullmatch(text):
        return (text,)
    return _parse_result_list(text)


@lru_cache(maxsize=1 << 12)
def _parse_result_list(text: str) -> tuple[str, ...]:
    return _run(alloca_parser(), text, "result_list")


_QUOTED_OP_NAME = re.compile(r'^\s*"(?:memref\.alloca?|tpu\.sem_alloc)"')
_RESULTS_PREFIX = re.compile(r"\s*(%[^=\"]*)=\s*")
_LOC_SCAN = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|[(\[{]|[)\]}]|(?<![\w$.])loc\(')

Part = tuple[str, int]


def split_alloca_text(text: str) -> tuple[Part, Part, Part] | None:
    """Split an op into (result names, body, trailing `loc(...)`), each with its offset.

    >>> split_alloca_text('%a = memref.alloca() : memref<4xf32> loc("f":1:2)')
    (('%a', 0), ('memref.alloca() : memref<4xf32>', 5), ('loc("f":1:2)', 37))
    """
    results_text, body_at = "", 0
    if text.lstrip().startswith("%"):
        m = _RESULTS_PREFIX.match(text)
        if m is None:
            return None
        results_text, body_at = m.group(1).rstrip(), m.end()
    # Common case: no string before the last ` loc(` and balanced brackets before it, so
    # that `loc(` is the trailing location (what the general scan below would find).
    last = text.rfind(" loc(")
    if last > body_at:
        prefix = text[body_at:last]
        if '"' not in _QUOTED_OP_NAME.sub("", prefix, count=1) and (
            prefix.count("(") == prefix.count(")") and prefix.count("[") == prefix.count("]")
            and prefix.count("{") == prefix.count("}")
        ):
            return ((results_text, text.find(results_text) if results_text else 0),
                    (prefix.rstrip(), body_at), (text[last + 1 :].strip(), last + 1))
    loc_at = len(text)
    depth = 0
    for m in _LOC_SCAN.finditer(text, body_at):
        token = m.group()
        if token[0] in "([{" and len(token) == 1:
            depth += 1
        elif token in (")", "]", "}"):
            depth -= 1
        elif token == "loc(" and depth == 0:
            loc_at = m.start()
            break
    body = text[body_at:loc_at].rstrip()
    location = text[loc_at:].strip()
    return ((results_text, text.find(results_text) if results_text else 0),
            (body, body_at), (location, loc_at))


# The location shapes that make up almost every dump, read without the parser. Each
# pattern accepts only text the grammar in location.lark accepts, and gives the same
# record (tests check this); anything else goes to the grammar.
_ALIAS = r"(#[A-Za-z_0-9][\w$.\-]*)"
# A string literal, unrolled (no alternation per character: Python's engine is slow at it).
_QUOTED = r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"'
_FAST_ALIAS = re.compile(rf"loc\(\s*{_ALIAS}\s*\)")
_FAST_FILE = re.compile(
    rf"loc\(\s*{_QUOTED}\s*:\s*([0-9]+)\s*(?::\s*([0-9]+)\s*)?"
    r"(?:to\s*(?::\s*([0-9]+)|([0-9]+)\s*:\s*([0-9]+))\s*)?\)")
_FAST_NAME = re.compile(rf"loc\(\s*{_QUOTED}\s*(?:\(\s*{_ALIAS}\s*\)\s*)?\)")
_FAST_CALLSITE = re.compile(rf"loc\(\s*callsite\(\s*{_ALIAS}\s+at\s+{_ALIAS}\s*\)\s*\)")
# `loc(fused[#loc2, #loc1])`: XLA's tables hold tens of thousands.
_FAST_FUSED = re.compile(rf"loc\(\s*fused\s*\[\s*{_ALIAS}((?:\s*,\s*#[A-Za-z_0-9][\w$.\-]*)*)"
                         r"\s*\]\s*\)")
_ALIAS_NAME = re.compile(r"#[A-Za-z_0-9][\w$.\-]*")
# The same shapes spelt as MLIR prints them (no spaces but the printer's, no escapes): one
# match, its last group telling the shape. Dumps hold hundreds of thousands.
_PRINTED_LOCATION = re.compile(
    r'loc\((?:"([^"\\\n]*)":([0-9]+):([0-9]+)'  # 1-3: a file, line and column
    rf'|"([^"\\\n]*)"\({_ALIAS}\)'  # 4-5: a name and its child
    rf"|callsite\({_ALIAS} at {_ALIAS}\)"  # 6-7
    r"|fused\[(#[A-Za-z_0-9][\w$.\-]*(?:, #[A-Za-z_0-9][\w$.\-]*)*)\]"  # 8
    rf"|{_ALIAS})\)")  # 9
# Which shape `_PRINTED_LOCATION` matched, by the match's `lastindex` (else 9: an alias).
PRINTED_FILE, PRINTED_NAME, PRINTED_CALLSITE, PRINTED_FUSED = 3, 5, 7, 8
_PRINTED_FILE, _PRINTED_NAME, _PRINTED_CALLSITE, _PRINTED_FUSED = (
    PRINTED_FILE, PRINTED_NAME, PRINTED_CALLSITE, PRINTED_FUSED)


# `match_printed_location`'s pattern, for readers that call its fullmatch directly.
PRINTED_LOCATION = _PRINTED_LOCATION


def match_printed_location(text: str) -> re.Match[str] | None:
    """`text` matched as MLIR prints the common location shapes, or None. `lastindex` says
    which: PRINTED_FILE (groups 1-3 the file, line and column), PRINTED_NAME (4-5 the
    name and its child alias), PRINTED_CALLSITE (6-7 the callee and caller aliases),
    PRINTED_FUSED (8 the aliases, joined by `, `), else an alias (9). What `parse_location`
    makes of such a text is exactly these (tests hold them equal), so a reader that needs
    no nodes (`model.locations` resolving a table's aliases) reads the match instead."""
    return _PRINTED_LOCATION.fullmatch(text)


def _fast_location(text: str) -> Location | None:
    m = _PRINTED_LOCATION.fullmatch(text)
    if m is not None:
        shape = m.lastindex
        if shape == _PRINTED_FILE:
            return FileLoc(m[1], int(m[2]), int(m[3]))
        if shape == _PRINTED_NAME:
            return NameLoc(m[4], AliasLoc(m[5]))
        if shape == _PRINTED_CALLSITE:
            return CallSiteLoc(AliasLoc(m[6]), AliasLoc(m[7]))
        if shape == _PRINTED_FUSED:
            return FusedLoc(None, tuple(map(AliasLoc, m[8].split(", "))))
        return AliasLoc(m[9])
    return _spaced_location(text)


def _spaced_location(text: str) -> Location | None:
    kind = text[4:5] if text[4:5] != " " else text[4:].lstrip()[:1]
    if kind == "#":
        m = _FAST_ALIAS.fullmatch(text)
        return AliasLoc(m.group(1)) if m else None
    if kind == "c":
        m = _FAST_CALLSITE.fullmatch(text)
        return CallSiteLoc(AliasLoc(m.group(1)), AliasLoc(m.group(2))) if m else None
    if kind == "u":
        return UnknownLoc() if text == "loc(unknown)" else None
    if kind == "f":
        m = _FAST_FUSED.fullmatch(text)
        if m is None:
            return None
        return FusedLoc(None, (AliasLoc(m.group(1)),
                               *(AliasLoc(name) for name in _ALIAS_NAME.findall(m.group(2)))))
    if kind != '"':
        return None
    if m := _FAST_FILE.fullmatch(text):
        return _file_loc(_unquote('"' + m.group(1) + '"'), *m.groups()[1:])
    if m := _FAST_NAME.fullmatch(text):
        name, child = m.groups()
        return NameLoc(_unquote('"' + name + '"'), AliasLoc(child) if child else None)
    return None


def _file_loc(file: str, line: str, col: str | None, same_line_col: str | None,
              end_line: str | None, end_col: str | None) -> FileLoc:
    """A file location from the digits a pattern matched (`to :C` ends on its own line), as
    the grammar's `r_file_loc` makes it."""
    end: tuple[int | None, int | None] = (None, None)
    if same_line_col is not None:
        end = (int(line), int(same_line_col))
    elif end_line is not None:
        end = (int(end_line), int(end_col))  # type: ignore[arg-type]
    return FileLoc(file, int(line), None if col is None else int(col), *end)


def parse_common_location(text: str) -> Location | None:
    """`loc(...)` in one of the shapes dumps mostly hold (an alias, a file, a name, a
    callsite of aliases, fused aliases, unknown), read without the grammar; None for any
    other shape (then `parse_location` reads it)."""
    return _fast_location(text)


def parse_location(text: str) -> Location:
    """Parse `loc(...)`. Raises SyntaxProblem."""
    return _fast_location(text) or _inline_location(text) or _parse_location_with_grammar(text)


# Locations written inside one another rather than through aliases, as jax prints some
# (`loc("run_scoped"("k.py":122:4 to :61))`, `loc(callsite("f"("k.py":88:12) at
# "k.py":84:4))`, `loc(fused["k.py":89:12, "shard"])`): read without the grammar, whose
# import and building cost a small dump's run a fifth of its time. Only as MLIR prints
# them (its spacing, no escapes in strings); anything else is left to the grammar, and
# tests/syntax/test_syntax_fast_paths.py holds the two to the same answers.
_INLINE_FILE = re.compile(r'"([^"\\\n]*)":([0-9]+)(?::([0-9]+))?'
                          r"(?: to (?::([0-9]+)|([0-9]+):([0-9]+)))?")
_INLINE_NAME = re.compile(r'"([^"\\\n]*)"')
_INLINE_DEPTH = 64


class _NotInline(Exception):
    """A text `_inline_location` leaves to the grammar."""


def _inline_location(text: str) -> Location | None:
    if not (text.startswith("loc(") and text.endswith(")")):
        return None
    try:
        location, end = _inline_at(text, 4, 0)
    except _NotInline:
        return None
    return location if end == len(text) - 1 else None


def _inline_at(text: str, at: int, depth: int) -> tuple[Location, int]:
    """The location written from text[at], and where it ends."""
    if depth > _INLINE_DEPTH:
        raise _NotInline
    if text.startswith('"', at):
        if m := _INLINE_FILE.match(text, at):
            return _file_loc(*m.groups()), m.end()
        m = _INLINE_NAME.match(text, at)
        if m is None:
            raise _NotInline
        at = m.end()
        if not text.startswith("(", at):
            return NameLoc(m.group(1), None), at
        child, at = _inline_at(text, at + 1, depth + 1)
        if not text.startswith(")", at):
            raise _NotInline
        return NameLoc(m.group(1), child), at + 1
    if text.startswith("callsite(", at):
        callee, at = _inline_at(text, at + 9, depth + 1)
        if not text.startswith(" at ", at):
            raise _NotInline
        caller, at = _inline_at(text, at + 4, depth + 1)
        if not text.startswith(")", at):
            raise _NotInline
        return CallSiteLoc(callee, caller), at + 1
    if text.startswith("fused[", at):
        at += 6
        parts: list[Location] = []
        if not text.startswith("]", at):
            while True:
                part, at = _inline_at(text, at, depth + 1)
                parts.append(part)
                if not text.startswith(", ", at):
                    break
                at += 2
        if not text.startswith("]", at):
            raise _NotInline
        return FusedLoc(None, tuple(parts)), at + 1
    if text.startswith("unknown", at):
        return UnknownLoc(), at + 7
    if m := _ALIAS_NAME.match(text, at):
        return AliasLoc(m.group()), m.end()
    raise _NotInline


@lru_cache(maxsize=1 << 14)
def _parse_location_with_grammar(text: str) -> Location:
    return _run(location_parser(), text)


@lru_cache(maxsize=1 << 12)
def parse_type(text: str) -> ParsedType:
    """Parse a type such as `memref<4xf32, 201>` or `f32`. Raises SyntaxProblem."""
    return _run(type_parser(), text)


_ARGUMENT_SCAN = re.compile(r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|[()]')


def _closing_paren(text: str, open_at: int) -> int:
    """Where the `(` at text[open_at] closes (the index after its `)`). Raises
    SyntaxProblem when it does not."""
    depth = 0
    for m in _ARGUMENT_SCAN.finditer(text, open_at):
        token = m.group()
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
            if depth == 0:
                return m.end()
    raise SyntaxProblem(len(text), "the argument list is not closed", incomplete=True)


_FUNCTION_TYPE = re.compile(r"\bfunction_type\s*=\s*\(")


def parse_input_types(text: str) -> tuple[ParsedType, ...] | None:
    """The input types of the `function_type = (...) -> ...` property in an op's text, or
    None when it has none. Raises SyntaxProblem.

    >>> [t.text for t in parse_input_types('<{function_type = (i32, memref<4xf32, 201>) -> ()}>')]
    ['i32', 'memref<4xf32, 201>']
    """
    m = _FUNCTION_TYPE.search(text)
    if m is None:
        return None
    open_at = m.end() - 1
    listed = text[open_at : _closing_paren(text, open_at)]
    return _run(arguments_parser(), listed, "input_types")


def parse_arguments(text: str, open_at: int) -> tuple[Argument, ...]:
    """The argument list whose `(` is at text[open_at], to its matching `)`; offsets count
    from the start of `text`. Raises SyntaxProblem (also when the list is not closed).

    >>> args = parse_arguments('^bb0(%arg0: i32, %arg1: memref<4xf32, 201> loc(unknown)):', 4)
    >>> [(a.name, a.type.text if hasattr(a.type, "text") else a.type, a.offset) for a in args]
    [('%arg0', 'i32', 5), ('%arg1', 'memref<4xf32, 201>', 17)]
    """
    listed = _parse_argument_list(text[open_at : _closing_paren(text, open_at)])
    return tuple(replace(a, offset=a.offset + open_at) for a in listed)


@lru_cache(maxsize=1 << 10)
def _parse_argument_list(text: str) -> tuple[Argument, ...]:
    fast = _fast_argument_list(text)
    return fast if fast is not None else _run(arguments_parser(), text, "argument_list")


# One entry argument as a Pallas kernel's signature prints it (`%arg2: memref<1024xf32,
# #tpu.memory_space<hbm>> loc(unknown)`): a memref, a builtin or a plain dialect type, then
# perhaps a location, then `, ` or the list's end. Read without the grammar, whose building
# cost each run that counted a kernel's scratch operands a fifth of a small dump's time;
# anything else (attributes, other types, other spacing) is left to it, and
# tests/syntax/test_syntax_fast_paths.py holds the two to the same answers.
_FAST_ARGUMENT = re.compile(
    r"(%[\w$.\-]+): (memref<[^<>]*(?:<[^<>]*>[^<>]*)*>|![A-Za-z_][\w$.]*(?![\w$.<])"
    rf"|(?:[su]?i[0-9]+|{_BUILTIN_NAMES})(?![\w$.]))"
    r"(?: (loc\((?:[^()\n]|\([^()\n]*\))*\)))?(, |\)\Z)")


def _fast_argument_list(text: str) -> tuple[Argument, ...] | None:
    """What the grammar reads of `(...)`, for lists in the shapes `_FAST_ARGUMENT` takes; None
    for any other."""
    if text == "()":
        return ()
    arguments: list[Argument] = []
    at = 1
    while True:
        m = _FAST_ARGUMENT.match(text, at)
        if m is None:
            return None
        name, type_text, loc_text, separator = m.groups()
        parsed: ParsedType | None
        if type_text[0] == "m":
            parsed = _common_memref(type_text)
            if parsed is None:
                return None
        elif type_text[0] == "!":
            parsed = OtherType(type_text, ASSUMED_ELEMENT_BITS.get(type_text))
        else:
            element = scalar(type_text)
            parsed = OtherType(element.text, element.bits)
        location = None
        if loc_text is not None:
            location = _fast_location(loc_text) or _inline_location(loc_text)
            if location is None:
                return None
        arguments.append(Argument(name, parsed, (), location, at))
        if separator != ", ":
            return tuple(arguments)
        at = m.end()
