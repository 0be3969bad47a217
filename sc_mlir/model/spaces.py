"""Memory spaces: raw text -> canonical id and name, per docs/SEMANTICS.md §2.

| id  | name       | also printed as                                              |
|-----|------------|--------------------------------------------------------------|
| 0   | smem       | no memory space (MLIR drops 0), `#tpu.memory_space<smem>`    |
| 201 | tile_spmem | `#tpu.memory_space<vmem>` in SparseCore vector-subcore funcs |
| 202 | spmem      | `#tpu.memory_space<vmem_shared>`                             |
| 203 | hbm        | `#tpu.memory_space<hbm>`                                     |
| 204 | sflag      | `#tpu.memory_space<semaphore_mem>`                           |

`vmem` means TileSpmem only inside a func with
`tpu.core_type = #tpu.core_type<sc_vector_subcore>`; in a TensorCore kernel it is the
TensorCore's VMEM and stays a named space of its own ("vmem"). The mapping is data:
`SpaceMap.with_overrides` lets a user change it.

>>> m = SpaceMap.default()
>>> m.canonical(None, None), m.canonical("201", None), m.canonical("2 : i32", None)
((0, 'smem'), (201, 'tile_spmem'), (2, '2'))
>>> vmem = "#tpu.memory_space<vmem>"
>>> m.canonical(vmem, "sc_vector_subcore"), m.canonical(vmem, None)
((201, 'tile_spmem'), (None, 'vmem'))
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

SPACE_NAMES: dict[int, str] = {0: "smem", 201: "tile_spmem", 202: "spmem", 203: "hbm", 204: "sflag"}

# Names users and newer compilers print for the same spaces.
NAME_ALIASES: dict[str, int] = {
    "smem": 0,
    "tile_spmem": 201,
    "tilespmem": 201,
    "spmem": 202,
    "hbm": 203,
    "sflag": 204,
    "sync_flags": 204,
}

_TPU_SPACE = re.compile(r"#tpu\.memory_space<\s*(\w+)\s*>")
_INTEGER_SPACE = re.compile(r"\s*(-?\d+)\s*(?::\s*\w+)?\s*")
_STRING_SPACE = re.compile(r'\s*"([^"]*)"\s*')
_LAYOUT = re.compile(r"\s*(?:affine_map<|strided<|#[\w$]+\.[\w$]*(?:tiled|layout))")
_ALIAS = re.compile(r"\s*(#[\w$.\-]+)\s*")

SC_VECTOR_SUBCORE = "sc_vector_subcore"


@dataclass(frozen=True)
class TpuSpaceRule:
    """`#tpu.memory_space<keyword>` -> id, optionally only for funcs of some core types."""

    keyword: str
    space_id: int
    core_types: frozenset[str] | None = None  # None: any func


DEFAULT_TPU_RULES: tuple[TpuSpaceRule, ...] = (
    TpuSpaceRule("vmem", 201, frozenset({SC_VECTOR_SUBCORE})),
    TpuSpaceRule("vmem_shared", 202),
    TpuSpaceRule("smem", 0),
    TpuSpaceRule("hbm", 203),
    TpuSpaceRule("semaphore_mem", 204),
)


@dataclass(frozen=True)
class SpaceMap:
    """How raw memory-space text maps to (id, name). Overrides map raw text to an id."""

    tpu_rules: tuple[TpuSpaceRule, ...] = DEFAULT_TPU_RULES
    overrides: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def default(cls) -> SpaceMap:
        return cls()

    def with_overrides(self, overrides: Mapping[str, int | str]) -> SpaceMap:
        """Add `raw text -> id` overrides (an id may be given by name: "tile_spmem")."""
        resolved = dict(self.overrides)
        for raw, target in overrides.items():
            resolved[raw.strip()] = parse_space_id(target)
        return SpaceMap(self.tpu_rules, resolved)

    def canonical(self, raw: str | None, core_type: str | None) -> tuple[int | None, str]:
        """(space id or None, space name) for a memref's raw memory-space text."""
        if raw is None:
            return 0, SPACE_NAMES[0]
        text = raw.strip()
        if text in self.overrides:
            space = self.overrides[text]
            return space, SPACE_NAMES.get(space, str(space))
        if m := _INTEGER_SPACE.fullmatch(text):
            space = int(m.group(1))
            return space, SPACE_NAMES.get(space, str(space))
        if m := _STRING_SPACE.fullmatch(text):
            name = m.group(1)
            if name.lower() in NAME_ALIASES:
                space = NAME_ALIASES[name.lower()]
                return space, SPACE_NAMES[space]
            return None, name
        if m := _TPU_SPACE.fullmatch(text):
            keyword = m.group(1)
            for rule in self.tpu_rules:
                if rule.keyword == keyword and (
                    rule.core_types is None or core_type in rule.core_types
                ):
                    return rule.space_id, SPACE_NAMES.get(rule.space_id, str(rule.space_id))
            return None, keyword
        return None, text


def parse_space_id(value: int | str) -> int:
    """An id from `201`, `"201"` or a name such as `tile_spmem` / `TileSpmem`.

    >>> parse_space_id("TileSpmem"), parse_space_id("203"), parse_space_id(0)
    (201, 203, 0)
    """
    if isinstance(value, int):
        return value
    text = value.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    key = text.lower().replace("-", "_")
    if key in NAME_ALIASES:
        return NAME_ALIASES[key]
    raise ValueError(f"unknown memory space {value!r}; use an id or one of "
                     f"{', '.join(sorted(NAME_ALIASES))}")


def split_params(params: tuple[str, ...], aliases: Mapping[str, str]
                 ) -> tuple[str | None, str | None]:
    """Tell a memref's layout from its memory space: (layout, memory_space), raw texts.

    Two parameters are always layout then space. A single one is a layout when it is (or is
    an alias of) an `affine_map`, `strided` or a dialect layout such as `#tpu.tiled<...>`.

    >>> split_params(("#map",), {"#map": "affine_map<(d0) -> (d0)>"})
    ('#map', None)
    >>> split_params(("#tpu.memory_space<vmem>",), {}), split_params(("strided<[1]>", "3"), {})
    ((None, '#tpu.memory_space<vmem>'), ('strided<[1]>', '3'))
    """
    if not params:
        return None, None
    if len(params) >= 2:
        return params[0], params[1]
    only = params[0]
    if _LAYOUT.match(resolve_attribute_alias(only, aliases)):
        return only, None
    return None, only


def resolve_attribute_alias(text: str, aliases: Mapping[str, str], limit: int = 32) -> str:
    """Follow `#name` -> its definition text, a bounded number of times."""
    for _ in range(limit):
        m = _ALIAS.fullmatch(text)
        if m is None or m.group(1) not in aliases:
            return text
        text = aliases[m.group(1)]
    return text


def space_matches(wanted: int | str, space_id: int | None, space_name: str,
                  memory_space: str | None = None) -> bool:
    """Whether a space selector (`--space`, `Analysis.select`, `DiffResult.select`...)
    names this memory space: the one rule for all of them. An id (201) matches the id; a
    known name (`tile_spmem`, `spmem`...) matches its id; any name also matches the space's
    own name or its raw text as printed (`vmem`, `#tpu.memory_space<vmem>`), ignoring case.

    >>> space_matches("201", 201, "tile_spmem"), space_matches("TileSpmem", 201, "x")
    (True, True)
    >>> space_matches("vmem", 201, "tile_spmem", "vmem"), space_matches(202, 201, "tile_spmem")
    (True, False)
    """
    text = str(wanted).strip()
    if text.lstrip("-").isdigit():
        return space_id == int(text)
    lowered = text.lower()
    if lowered in NAME_ALIASES and space_id == NAME_ALIASES[lowered]:
        return True
    return lowered in (space_name.lower(), (memory_space or "").lower())
