"""MemRef types and their sizes in bits, bytes and 4-byte words.

A word is 4 bytes (docs/SEMANTICS.md §3). Sub-word element types pack: a memref of 3 x bf16
holds 48 bits = 6 bytes = 2 words, rounded up once per allocation, never per element.

>>> t = MemRefType("memref<23440xf32, 201>", (23440,), scalar("f32"), ("201",))
>>> (t.num_elements, t.bytes, t.words)
(23440, 93760, 23440)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

WORD_BYTES = 4

# Storage widths of MLIR's builtin scalar types. `index` is 64 bits in MLIR's default
# data layout; tf32 has 19 significant bits but is stored in 32.
_FIXED_BITS = {
    "index": 64,
    "bf16": 16,
    "f16": 16,
    "tf32": 32,
    "f32": 32,
    "f64": 64,
    "f80": 80,
    "f128": 128,
}
# Dialect element types whose size no public source states, with the width sc-mlir
# assumes and says it assumes: a Mosaic semaphore is taken to be one 4-byte word (sync
# flags are counters; docs/SEMANTICS.md §2 maps their space, 204, to sync flags).
ASSUMED_ELEMENT_BITS = {
    "!tpu.dma_semaphore": 32,
    "!tpu.semaphore": 32,
}
_INTEGER = re.compile(r"[su]?i(\d+)")
_SMALL_FLOAT = re.compile(r"f([468])E\w+")


@dataclass(frozen=True, slots=True)
class ElementType:
    """An element type and its storage width (None when sc-mlir cannot know it)."""

    text: str
    bits: int | None

    def __reduce__(self) -> tuple[type[ElementType], tuple[str, int | None]]:
        # Records travel from worker processes by the ten thousand: a frozen slots
        # dataclass otherwise pickles through state functions that walk `fields()`.
        return (ElementType, (self.text, self.bits))


def scalar(text: str) -> ElementType:
    """The element type for a builtin scalar type name.

    >>> scalar("bf16").bits, scalar("i1").bits, scalar("f8E4M3FN").bits, scalar("none").bits
    (16, 1, 8, None)
    """
    if text in _FIXED_BITS:
        return ElementType(text, _FIXED_BITS[text])
    if m := _INTEGER.fullmatch(text):
        return ElementType(text, int(m.group(1)))
    if m := _SMALL_FLOAT.fullmatch(text):
        return ElementType(text, int(m.group(1)))
    return ElementType(text, None)


def product(values: tuple[int, ...]) -> int:
    return math.prod(values)


@dataclass(frozen=True, slots=True)
class MemRefType:
    """A ranked or unranked memref type, as written, with its size when it is static.

    `shape` holds None for each `?` dimension; `shape` is None for an unranked memref.
    `params` are the raw texts after the element type: a layout, a memory space, or both.
    Which is which can depend on `#alias` definitions, so `spaces.split_params` decides.
    """

    text: str
    shape: tuple[int | None, ...] | None
    element: ElementType
    params: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[type[MemRefType], tuple[object, ...]]:
        # As ElementType's: one per record sent back from a worker.
        return (MemRefType, (self.text, self.shape, self.element, self.params))

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def num_elements(self) -> int | None:
        return static_elements(self.shape)

    @property
    def bits(self) -> int | None:
        return total_bits(self.shape, self.element.bits)

    @property
    def bytes(self) -> int | None:
        return bits_to_bytes(self.bits)

    @property
    def words(self) -> int | None:
        return bytes_to_words(self.bytes)


# Sizes are exact integers up to this many elements; a type beyond it (hundreds of dims of
# 10^9: valid MLIR) is counted as of unknown size, with a note (`size_too_large`). Below
# it every size can be printed (Python refuses ints of more than 4300 digits) and turned
# into a float (plots, percentages) without overflow.
MAX_COUNTED_ELEMENTS = 1 << 900
# MLIR's dimensions are 64-bit signed integers.
MAX_DIMENSION = (1 << 63) - 1


def static_elements(shape: tuple[int | None, ...] | None) -> int | None:
    """Number of elements, or None when any dimension is dynamic, the rank unknown, or the
    count beyond `MAX_COUNTED_ELEMENTS` (stopped early: a long product costs time).

    >>> static_elements((4, 8)), static_elements((4, None)), static_elements((10**9,) * 400)
    (32, None, None)
    """
    if shape is None or any(d is None for d in shape):
        return None
    if 0 in shape:
        return 0
    count = 1
    for d in shape:
        count *= d  # type: ignore[operator]
        if count > MAX_COUNTED_ELEMENTS:
            return None
    return count


def size_too_large(shape: tuple[int | None, ...] | None) -> bool:
    """Whether a static shape has more elements than sc-mlir counts exactly."""
    return (shape is not None and None not in shape and 0 not in shape
            and static_elements(shape) is None)


def total_bits(shape: tuple[int | None, ...] | None, element_bits: int | None) -> int | None:
    elements = static_elements(shape)
    if elements is None or element_bits is None:
        return None
    return elements * element_bits


def bits_to_bytes(bits: int | None) -> int | None:
    return None if bits is None else -(-bits // 8)


def bytes_to_words(nbytes: int | None) -> int | None:
    return None if nbytes is None else -(-nbytes // WORD_BYTES)


def parse_dimension_list(text: str) -> tuple[int | None, ...]:
    """`4x?x8x` (also `2 x `, `1024 × 64 × `) -> (4, None, 8).

    >>> parse_dimension_list("4x?x8x"), parse_dimension_list("2 x "), parse_dimension_list("")
    ((4, None, 8), (2,), ())
    """
    dims: list[int | None] = []
    for part in re.split(r"[x×]", text):
        part = part.strip()
        if not part:
            continue
        if part == "?":
            dims.append(None)
            continue
        digits = part.strip("[] \t\n")
        if len(digits) > 19 and digits.lstrip("0") and len(digits.lstrip("0")) > 19:
            raise ValueError(f"dimension {digits[:20]}... does not fit in 64 bits "
                             "(MLIR rejects it)")
        value = int(digits)
        if value > MAX_DIMENSION:
            raise ValueError(f"dimension {value} does not fit in 64 bits (MLIR rejects it)")
        dims.append(value)
    return tuple(dims)
