"""A differential fuzzer for sc-mlir's reader: MLIR mutants that MLIR reads the same way.

A seed (tests/read/fuzz_seeds/*.mlir) is cut into MLIR tokens and the gaps between them. A
mutant re-joins the tokens with other gaps: line breaks anywhere MLIR allows whitespace
(inside types, attribute and property dicts, `loc(...)`, alias definitions, between a
result name and its `=`), CR variants (`\\r\\n`, `\\r\\r\\n`, a lone `\\r`), blanks, comments
(including `// ------` rules that are not split markers), gaps removed next to
punctuation, and huge dimensions in alloca types. Each token's line and column in the
mutant are known as it is written (MLIR counts "\\n" only), so is the alloca op name's.

Two oracles say what the mutant's allocas are:

* MLIR's own C++ parser, through jaxlib's bindings (when jaxlib is installed): the
  mutant as written gives each alloca's func, type and resolved `loc`; the same mutant
  with its ops' `loc(...)` blanked (same length, so every position stays) gives the
  positions MLIR reports. `python tests/read/mlir_fuzz.py --write-expected` stores its answers
  on the seeds in tests/read/fuzz_seeds/expected.json; `--campaign COUNT SEED DIR` runs a
  harsher random campaign and keeps each disagreement in DIR.
* Without jaxlib: those shipped answers, with the positions the mutator computed and the
  sizes of mutated types worked out here (neither uses sc-mlir).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SEEDS = Path(__file__).resolve().parent / "fuzz_seeds"
EXPECTED = SEEDS / "expected.json"
# Elements beyond which sc-mlir counts an alloca's size as unknown (its documented limit).
MAX_COUNTED_ELEMENTS = 1 << 900

# --- tokens ----------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    "(?:[^"\\\n]|\\.)*"                        # string
  | [#!][A-Za-z_][\w$]*\.[\w$.]*(?=<)          # dialect attribute or type with a body
  | [%@#!^](?:[\w$.\-]+|"(?:[^"\\\n]|\\.)*")(?::\d+)?   # value, symbol, alias, block
  | ->
  | -?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?           # number
  | [A-Za-z_][\w$.]*                            # bare identifier, keyword, op name
  | [(){}\[\]<>,:=*?+\-]
""", re.VERBOSE)
_GAP = re.compile(r"(?:[ \t\r\n]|//[^\n]*)*")
_DIM_X = re.compile(r"x(?=[\d?\[]|[A-Za-z!])")


def tokenize(text: str) -> tuple[list[str], list[str]]:
    """Tokens, and the gaps before each token (plus the trailing gap): text ==
    gaps[0] + tokens[0] + gaps[1] + ... + tokens[-1] + gaps[-1]."""
    tokens: list[str] = []
    gaps: list[str] = []
    pos = 0
    while True:
        gap = _GAP.match(text, pos)
        assert gap is not None
        gaps.append(gap.group())
        pos = gap.end()
        if pos >= len(text):
            return tokens, gaps
        previous = tokens[-1] if tokens else ""
        # `4x8xf32`: after a dimension, an `x` is a token of its own (MLIR re-lexes there).
        if text[pos] == "x" and (previous.isdigit() or previous in ("?", "]")) and \
                _DIM_X.match(text, pos):
            tokens.append("x")
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot tokenize at {text[pos:pos + 40]!r}")
        token = m.group()
        if token[0] in "#!" and m.end() < len(text) and text[m.end()] == "<":
            token = text[pos:_balanced_end(text, m.end())]
        tokens.append(token)
        pos += len(token)


def _balanced_end(text: str, start: int) -> int:
    depth = 0
    for pos in range(start, len(text)):
        char = text[pos]
        if char in "<([{":
            depth += 1
        elif char in ">)]}" and text[pos - 1] != "-":
            depth -= 1
            if depth == 0:
                return pos + 1
    return len(text)


# --- mutants ---------------------------------------------------------------------------

# Gaps a mutant may put where the seed has whitespace (or, next to punctuation, nothing).
GAP_KINDS: tuple[str, ...] = (
    " ", "  ", "\t", "\n", "\n      ", "\n\n", "\r\n", "\r\r\n", " \r ", "\r\n  ",
    " // a comment } { memref.alloca\n", "\n// ------------------------------------\n",
)
_PUNCTUATION = set("(){}[]<>,:=")


@dataclass(frozen=True)
class Mutation:
    """Gap k of the seed becomes GAP_KINDS[kind] (kind -1: nothing, where allowed)."""

    gap: int
    kind: int


@dataclass(frozen=True)
class HugeDims:
    """Before the element type of the n-th alloca's type, `count` more dims of `value`."""

    alloca: int
    count: int
    value: int


@dataclass
class Mutant:
    text: str
    alloca_positions: list[tuple[int, int]]  # (line, col) of each alloca's op name
    extra_dims: dict[int, list[int]]  # alloca ordinal -> dims added to its type


def gap_allowed(tokens: list[str], gaps: list[str], gap: int, kind: int) -> bool:
    """Whether gap `gap` may take GAP_KINDS[kind] (or nothing, kind -1) and stay MLIR."""
    if gap == 0 or gap >= len(tokens):
        return kind >= 0 and "\r" not in GAP_KINDS[kind] and "//" not in GAP_KINDS[kind]
    left, right = tokens[gap - 1], tokens[gap]
    if kind < 0:
        return bool(gaps[gap]) and (left in _PUNCTUATION or right in _PUNCTUATION) and \
            not (left == "-" or (right == ">" and left.endswith("-")))
    return True


def mutate(text: str, mutations: list[Mutation], huge: list[HugeDims]) -> Mutant:
    tokens, gaps = tokenize(text)
    new_gaps = list(gaps)
    for m in mutations:
        if 0 <= m.gap < len(gaps) and gap_allowed(tokens, gaps, m.gap, m.kind):
            new_gaps[m.gap] = "" if m.kind < 0 else GAP_KINDS[m.kind]
    alloca_tokens = alloca_name_indices(tokens)
    insert_before: dict[int, list[str]] = {}
    extra_dims: dict[int, list[int]] = {}
    for h in huge:
        if not 0 <= h.alloca < len(alloca_tokens):
            continue
        element = _alloca_element_token(tokens, alloca_tokens[h.alloca])
        if element is None:
            continue
        insert_before.setdefault(element, []).extend([str(h.value), "x"] * h.count)
        extra_dims.setdefault(h.alloca, []).extend([h.value] * h.count)
    out: list[str] = []
    line, col = 1, 1
    positions: dict[int, tuple[int, int]] = {}

    def emit(piece: str) -> None:
        nonlocal line, col
        out.append(piece)
        newlines = piece.count("\n")
        if newlines:
            line += newlines
            col = len(piece) - piece.rfind("\n")
        else:
            col += len(piece)

    for index, token in enumerate(tokens):
        emit(new_gaps[index])
        for extra in insert_before.get(index, ()):
            emit(extra)
        if index in alloca_tokens:
            positions[index] = (line, col)
        emit(token)
    emit(new_gaps[-1])
    return Mutant("".join(out), [positions[i] for i in alloca_tokens], extra_dims)


def alloca_name_indices(tokens: list[str]) -> list[int]:
    """Token indices of alloca op names (`memref.alloca`, or `"memref.alloca"` before `(`)."""
    found = []
    for index, token in enumerate(tokens):
        if token == "memref.alloca" or (token == '"memref.alloca"' and index + 1 < len(tokens)
                                        and tokens[index + 1] == "("):
            found.append(index)
    return found


def _alloca_element_token(tokens: list[str], name_index: int) -> int | None:
    """Index of the element type token in the alloca's result memref type (after its
    dims), or None when its type is not a `memref<...>` written out or its result is
    used (a bigger type would no longer match its uses)."""
    if name_index >= 2 and tokens[name_index - 1] == "=" and \
            tokens.count(tokens[name_index - 2]) > 1:
        return None
    index = name_index + 1
    while index < len(tokens) and tokens[index] != "memref":
        if tokens[index][0] == "!" or tokens[index] in ("memref.alloca", '"memref.alloca"'):
            return None
        index += 1
    if index + 1 >= len(tokens) or tokens[index + 1] != "<":
        return None
    index += 2
    while index + 1 < len(tokens) and (tokens[index].isdigit() or tokens[index] == "?") \
            and tokens[index + 1] == "x":
        index += 2
    return index


# --- what each oracle says ---------------------------------------------------------------


@dataclass(frozen=True)
class AllocaFacts:
    line: int
    col: int
    func: str
    shape: tuple[int | None, ...] | None
    words: int | None
    space: int | str | None
    loc: tuple[str, int, int] | None

    def as_json(self) -> dict:
        return {"line": self.line, "col": self.col, "func": self.func,
                "shape": None if self.shape is None else list(self.shape),
                "words": self.words, "space": self.space,
                "loc": None if self.loc is None else list(self.loc)}


def words_of(shape: tuple[int | None, ...] | None, element_bits: int | None) -> int | None:
    """4-byte words of a static shape, rounded up once; None when dynamic or unknown."""
    if shape is None or element_bits is None or None in shape:
        return None
    elements = math.prod(d for d in shape if d is not None)
    if elements > MAX_COUNTED_ELEMENTS:
        return None
    nbytes = (elements * element_bits + 7) // 8
    return (nbytes + 3) // 4


def expected_from_seed(seed_facts: list[dict], seed_bits: list[int | None], mutant: Mutant
                       ) -> list[AllocaFacts]:
    """The shipped answers for the seed, moved to the mutant's positions, with the sizes
    of types that gained dims recomputed."""
    facts = []
    for ordinal, (fact, bits) in enumerate(zip(seed_facts, seed_bits, strict=True)):
        shape = None if fact["shape"] is None else tuple(fact["shape"])
        words = fact["words"]
        if ordinal in mutant.extra_dims and shape is not None:
            shape = (*shape, *mutant.extra_dims[ordinal])
            words = words_of(shape, bits)
        line, col = mutant.alloca_positions[ordinal]
        facts.append(AllocaFacts(line, col, fact["func"], shape, words, fact["space"],
                                 None if fact["loc"] is None else tuple(fact["loc"])))
    return facts


def sc_mlir_facts(text: str, directory: Path) -> tuple[list[AllocaFacts], list[str]]:
    """What sc-mlir reads: one fact per alloca, and its notes."""
    from sc_mlir.model.dump import load

    path = directory / "mutant.mlir"
    path.write_bytes(text.encode())
    dump = load(path, jobs=1)
    facts = []
    for r in dump.records:
        if r.kind != "alloca":
            continue  # MLIR's side lists memref.alloca ops; scratch operands and the rest
        space: int | str | None = r.memory_space
        if space is not None and re.fullmatch(r"-?\d+", space.strip()):
            space = int(space)
        loc = r.loc
        facts.append(AllocaFacts(r.line, r.col, r.func, r.shape, r.memref.words, space,
                                 (loc.file, loc.line, loc.col) if loc.file is not None
                                 else None))
    return facts, [f"{d.line}:{d.col}: {d.message}" for d in dump.diagnostics]


# --- MLIR, through jaxlib ------------------------------------------------------------------

_BUFFER_NAME = "-"  # what MLIR names a buffer parsed from a string


def mlir_available() -> bool:
    try:
        import jaxlib.mlir.ir  # noqa: F401
        from jax.experimental.mosaic.dialects import tpu  # noqa: F401
    except Exception:
        return False
    return True


_CONTEXT = None


def _context():  # type: ignore[no-untyped-def]
    global _CONTEXT
    if _CONTEXT is None:
        import os

        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        from jax._src.interpreters import mlir as jax_mlir
        from jax.experimental.mosaic.dialects import tpu

        _CONTEXT = jax_mlir.make_ir_context()
        tpu.register_dialect(_CONTEXT)
        _CONTEXT.allow_unregistered_dialects = True
    return _CONTEXT


class Invalid(Exception):
    """MLIR rejects the text."""


def mlir_facts(text: str) -> tuple[list[AllocaFacts], list[int | None]]:
    """MLIR's answer for every alloca (in program order) and each one's element width."""
    from jaxlib.mlir import ir

    with _context():
        try:
            module = ir.Module.parse(text)
        except Exception as exc:
            raise Invalid(" | ".join(str(exc).splitlines()[:3])) from None
        positioned = _without_op_locs(text)
        try:
            plain = ir.Module.parse(positioned)
        except Exception as exc:
            raise Invalid(f"blanked: {exc}") from None
        facts, bits = [], []
        for op, bare in zip(_allocas(module.operation), _allocas(plain.operation), strict=True):
            memref = ir.MemRefType(op.result.type)
            shape = tuple(None if ir.ShapedType.is_dynamic_size(d) else d for d in memref.shape)
            element_bits = _bits(memref.element_type)
            space = memref.memory_space
            space_value: int | str | None = None
            if space is not None:
                space_value = (space.value if isinstance(space, ir.IntegerAttr)
                               else str(space))
            where = _file_line_col(str(bare.location))
            assert where is not None and where[0] == _BUFFER_NAME, str(bare.location)
            facts.append(AllocaFacts(where[1], where[2], _func_of(op), shape,
                                     words_of(shape, element_bits), space_value,
                                     _resolve(str(op.location))))
            bits.append(element_bits)
        return facts, bits


def _allocas(root) -> Iterator:  # type: ignore[no-untyped-def]
    stack = [root]
    while stack:
        op = stack.pop()
        children = []
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    children.append(child.operation)
        if op.name == "memref.alloca":
            yield op
        stack.extend(reversed(children))


def _func_of(op) -> str:  # type: ignore[no-untyped-def]
    from jaxlib.mlir import ir

    parent = op.parent
    while parent is not None:
        name = parent.name
        if not (name in ("builtin.module", "module") or name.endswith(".module")) and \
                "sym_name" in parent.attributes:
            return ir.StringAttr(parent.attributes["sym_name"]).value
        parent = parent.parent
    return ""


def _bits(element) -> int | None:  # type: ignore[no-untyped-def]
    from jaxlib.mlir import ir

    if isinstance(element, ir.IndexType):
        return 64
    if isinstance(element, ir.VectorType):
        if any(element.scalable_dims):
            return None
        inner = _bits(element.element_type)
        return None if inner is None else inner * math.prod(element.shape)
    if isinstance(element, ir.ComplexType):
        inner = _bits(element.element_type)
        return None if inner is None else 2 * inner
    if isinstance(element, ir.IntegerType | ir.FloatType):
        return int(element.width)
    return None


_FILE_LINE_COL = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _file_line_col(loc: str) -> tuple[str, int, int] | None:
    m = _FILE_LINE_COL.search(loc)
    return None if m is None else (m.group(1), int(m.group(2)), int(m.group(3)))


def _resolve(printed: str) -> tuple[str, int, int] | None:
    """The innermost file location of a printed location, as sc-mlir documents it: a
    name's child, a call site's callee, a fused location's first part that has a file."""
    body = printed.strip()
    if body.startswith("loc(") and body.endswith(")"):
        body = body[4:-1]
    found = _resolve_body(body)
    if found is not None and found[0] == _BUFFER_NAME:
        return None  # no loc(...) written: MLIR's own position, not a source location
    return found


def _resolve_body(body: str) -> tuple[str, int, int] | None:
    body = body.strip()
    if body.startswith("callsite("):
        inner = body[len("callsite("):-1]
        callee, _ = _split_top(inner, " at ")
        return _resolve_body(callee)
    if body.startswith("fused"):
        start = body.index("[")
        for part in _split_all(body[start + 1:-1], ","):
            found = _resolve_body(part)
            if found is not None:
                return found
        return None
    if body.startswith('"'):
        end = re.match(r'"(?:[^"\\]|\\.)*"', body)
        assert end is not None
        rest = body[end.end():]
        if rest.startswith(":"):
            return _file_line_col(body)
        if rest.startswith("("):
            return _resolve_body(rest[1:-1])
        return None
    return None


def _split_top(text: str, separator: str) -> tuple[str, str]:
    depth, pos, in_string = 0, 0, False
    while pos < len(text):
        char = text[pos]
        if in_string:
            if char == "\\":
                pos += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "([<":
            depth += 1
        elif char in ")]>":
            depth -= 1
        elif depth == 0 and text.startswith(separator, pos):
            return text[:pos], text[pos + len(separator):]
        pos += 1
    return text, ""


def _split_all(text: str, separator: str) -> list[str]:
    parts = []
    while text:
        head, text = _split_top(text, separator)
        parts.append(head)
    return parts


def _without_op_locs(text: str) -> str:
    """Every `loc(...)` that is not an alias definition's value, blanked to spaces (line
    breaks kept): MLIR then reports each op at its own line and column."""
    tokens, gaps = tokenize(text)
    pieces: list[str] = []
    index = 0
    while index < len(tokens):
        pieces.append(gaps[index])
        token = tokens[index]
        if token == "loc" and index + 1 < len(tokens) and tokens[index + 1] == "(" and \
                not (index > 0 and tokens[index - 1] == "="):
            depth, end = 0, index + 1
            while end < len(tokens):
                depth += tokens[end] in ("(", "[") or 0
                depth -= tokens[end] in (")", "]") or 0
                if depth == 0:
                    break
                end += 1
            span = token + "".join(gaps[k] + tokens[k] for k in range(index + 1, end + 1))
            pieces.append(re.sub(r"[^\n\r]", " ", span))
            index = end + 1
            continue
        pieces.append(token)
        index += 1
    pieces.append(gaps[-1])
    return "".join(pieces)


# --- shipped answers -----------------------------------------------------------------------


def seed_files() -> list[Path]:
    return sorted(SEEDS.glob("*.mlir"))


def write_expected() -> None:
    """MLIR's answers on every seed, for runs without jaxlib."""
    answers = {}
    for seed in seed_files():
        facts, bits = mlir_facts(seed.read_text())
        answers[seed.name] = {"allocas": [f.as_json() for f in facts], "element_bits": bits}
    EXPECTED.write_text(json.dumps(answers, indent=1) + "\n")
    print(f"wrote {EXPECTED}: {sum(len(a['allocas']) for a in answers.values())} allocas "
          f"in {len(answers)} seeds")


def campaign(count: int, seed: int, keep: Path) -> None:
    """Harsher than the hypothesis test: `count` random mutants (up to 60 gaps changed
    each, half of them near an alloca), each read by MLIR and by sc-mlir; prints how many
    agree and writes each disagreement to `keep` for replay."""
    import random
    import tempfile

    rng = random.Random(seed)
    seeds = {path.name: path.read_text() for path in seed_files()}
    tokens = {name: tokenize(text) for name, text in seeds.items()}
    allocas = {name: alloca_name_indices(t) for name, (t, _) in tokens.items()}
    counts = {"agreed": 0, "disagreed": 0, "rejected by MLIR": 0}
    directory = Path(tempfile.mkdtemp())
    keep.mkdir(parents=True, exist_ok=True)
    for _ in range(count):
        name = rng.choice(sorted(seeds))
        gaps = tokens[name][1]
        mutations = []
        for _ in range(rng.randint(1, 60)):
            gap = rng.randrange(len(gaps)) if rng.random() < 0.5 else min(max(
                rng.choice(allocas[name]) + rng.randint(-25, 45), 0), len(gaps) - 1)
            mutations.append(Mutation(gap, rng.randint(-1, len(GAP_KINDS) - 1)))
        huge = [HugeDims(rng.randrange(len(allocas[name])), rng.randint(1, 140),
                         rng.choice([1, 3, 10**9, (1 << 63) - 1]))
                for _ in range(rng.randint(0, 2))]
        mutant = mutate(seeds[name], mutations, huge)
        try:
            truth, _ = mlir_facts(mutant.text)
        except Invalid:
            counts["rejected by MLIR"] += 1
            continue
        got, notes = sc_mlir_facts(mutant.text, directory)
        if got == truth and all("too large to count" in note for note in notes):
            counts["agreed"] += 1
        else:
            counts["disagreed"] += 1
            (keep / f"disagreement{counts['disagreed']}.mlir").write_bytes(mutant.text.encode())
    print(counts, f"(disagreements in {keep})")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-expected"]:
        write_expected()
    elif sys.argv[1:2] == ["--campaign"] and len(sys.argv) == 5:
        campaign(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
    else:
        print(__doc__)
        print("usage: mlir_fuzz.py --write-expected | --campaign COUNT SEED KEEP_DIR")
