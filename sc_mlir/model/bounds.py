"""How many words each memory space may hold, and the alignment assumed for its allocas.

Only one bound comes from a real compiler message: space 201 (TileSpmem) -> 131071 words.
`--chip` takes TileSpmem and TensorCore VMEM from jax's per-chip table (docs/SEMANTICS.md §9,
`CHIPS`); every other space is unknown until the user gives it (`--bound`, a config file)
or a log states it. Each
value remembers where it came from, so reports can say so.

>>> b = Bounds.default()
>>> b.bound_for(201, "tile_spmem"), b.bound_for(202, "spmem")
((131071, 'built-in (the E3000 message)'), (None, 'unknown'))
>>> b.with_chip("v6e").bound_for(201, "tile_spmem")[0], b.with_chip("7x").bound_for(None, "vmem")[0]
(65535, 16777216)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sc_mlir.model.spaces import NAME_ALIASES, parse_space_id
from sc_mlir.syntax.memref import WORD_BYTES

MIB = 1024 * 1024
KIB = 1024
TPU_INFO = "jax 0.10.2, pallas/mosaic/tpu_info.py"


@dataclass(frozen=True)
class ChipMemory:
    """What jax's per-chip table states (`TpuInfo`), in bytes: TensorCore VMEM per core,
    and SparseCore VMEM per vector subcore (None where the table gives no SparseCore)."""

    tensor_core_vmem_bytes: int
    sparse_core_vmem_bytes: int | None

    def bounds(self, chip: str) -> dict[str, tuple[int, str]]:
        """Words per space key, each with where it comes from.

        TileSpmem (201): the SparseCore VMEM in words minus one, the "last legal offset"
        reading of 131071 = 131072 - 1 in the E3000 message (an inference). TensorCore
        VMEM (`vmem` in a TensorCore func): its capacity in words; Mosaic's scoped-VMEM
        limit may be set lower (`vmem_limit_bytes`), which only the user knows.
        """
        found = {"vmem": (self.tensor_core_vmem_bytes // WORD_BYTES,
                          f"chip {chip}: TensorCore vmem_capacity_bytes "
                          f"{self.tensor_core_vmem_bytes // MIB} MiB / 4 ({TPU_INFO}); "
                          "a kernel's vmem_limit_bytes may lower it")}
        if self.sparse_core_vmem_bytes is not None:
            found["201"] = (self.sparse_core_vmem_bytes // WORD_BYTES - 1,
                            f"chip {chip}: SparseCore vmem_capacity_bytes "
                            f"{self.sparse_core_vmem_bytes // KIB} KiB per vector subcore"
                            f" / 4 - 1 ({TPU_INFO})")
        return found


# jax's table, chip by chip (SMEM is left out: space 0 serves TensorCore and SparseCore
# funcs alike, and the table states only the TensorCore's).
CHIPS: dict[str, ChipMemory] = {
    "v4": ChipMemory(16 * MIB, None),
    "v5e": ChipMemory(128 * MIB, None),
    "v5p": ChipMemory(64 * MIB, 512 * KIB),
    "v6e": ChipMemory(128 * MIB, 256 * KIB),
    "7x": ChipMemory(64 * MIB, 512 * KIB),
    "8i": ChipMemory(192 * MIB, 512 * KIB),
}
CHIP_ALIASES = {"tpu7x": "7x", "7": "7x", "v7x": "7x", "tpu8i": "8i", "v6": "v6e",
                "v5lite": "v5e", "v5litepod": "v5e", "tpuv4": "v4"}

BUILTIN_SOURCE = "built-in (the E3000 message)"
DEFAULT_ALIGN_BYTES = WORD_BYTES


def space_key(space_id: int | None, space_name: str) -> str:
    """The key a bound or an alignment is stored under: the id, else the name."""
    return str(space_id) if space_id is not None else space_name.lower()


def parse_space_key(text: str) -> str:
    """`201`, `tile_spmem`, `TileSpmem` -> "201"; other names (e.g. `vmem`) stay names."""
    text = text.strip()
    try:
        return str(parse_space_id(text))
    except ValueError:
        return text.lower()


def normalise_chip(chip: str) -> str:
    key = chip.strip().lower()
    key = CHIP_ALIASES.get(key, key)
    if key not in CHIPS:
        raise ValueError(f"unknown chip {chip!r}; choose one of {', '.join(CHIPS)}")
    return key


@dataclass(frozen=True)
class Bounds:
    """Bounds (words) and default alignments (bytes) per space key, with their sources."""

    words: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    align_bytes: Mapping[str, tuple[int, str]] = field(default_factory=dict)

    @classmethod
    def default(cls) -> Bounds:
        return cls({"201": (131071, BUILTIN_SOURCE)}, {})

    def bound_for(self, space_id: int | None, space_name: str) -> tuple[int | None, str]:
        value = self.words.get(space_key(space_id, space_name))
        return value if value is not None else (None, "unknown")

    def align_for(self, space_id: int | None, space_name: str) -> tuple[int, str]:
        value = self.align_bytes.get(space_key(space_id, space_name))
        return value if value is not None else (DEFAULT_ALIGN_BYTES, "default: one word")

    def with_chip(self, chip: str) -> Bounds:
        key = normalise_chip(chip)
        words = dict(self.words)
        words.update(CHIPS[key].bounds(key))
        return replace(self, words=words)

    def with_bounds(self, values: Mapping[str, int], source: str) -> Bounds:
        words = dict(self.words)
        for key, value in values.items():
            if value < 0:
                raise ValueError(f"bound for {key} must not be negative")
            words[parse_space_key(key)] = (int(value), source)
        return replace(self, words=words)

    def with_alignments(self, values: Mapping[str, int], source: str) -> Bounds:
        align = dict(self.align_bytes)
        for key, value in values.items():
            # (A whole float such as 64.0 is taken, as before; true is not a number here.)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or value != int(value):
                raise ValueError(f"alignment for {key} ({source}) must be a whole number "
                                 f"of bytes, not {value!r}")
            if value <= 0:
                raise ValueError(f"alignment for {key} ({source}) must be positive")
            # As MLIR's own `alignment` (its verifier refuses others): 3 would be read as
            # one word and 6 as two, an alignment nobody asked for.
            whole = int(value)
            if whole & (whole - 1):
                raise ValueError(f"alignment for {key} ({source}) must be a power of two "
                                 f"(bytes), not {whole}")
            align[parse_space_key(key)] = (whole, source)
        return replace(self, align_bytes=align)


def parse_assignments(items: list[str] | None, what: str) -> dict[str, int]:
    """`["201=131071", "spmem=65536"]` -> {"201": 131071, "spmem": 65536}.

    >>> parse_assignments(["201=131071", "tile_spmem = 1_000"], "--bound")
    {'201': 131071, 'tile_spmem': 1000}
    """
    result: dict[str, int] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"{what} takes SPACE=NUMBER (an id or a name), got {item!r}")
        try:
            result[key.strip()] = int(value.strip().replace("_", ""), 0)
        except ValueError:
            raise ValueError(f"{what} {item!r}: {value.strip()!r} is not a whole number") from None
    return result


# --- config file ------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Settings read from `sc-mlir.toml` or `[tool.sc-mlir]` in `pyproject.toml`."""

    path: str | None = None
    chip: str | None = None
    bounds: dict[str, int] = field(default_factory=dict)
    align: dict[str, int] = field(default_factory=dict)
    spaces: dict[str, int | str] = field(default_factory=dict)
    scope_ops: tuple[str, ...] | None = None
    run_once_ops: tuple[str, ...] | None = None


def read_config(path: str | Path) -> Config:
    """Settings from a given file: `sc-mlir.toml` style, or a `pyproject.toml`."""
    path = Path(path)
    table = _read_toml(path)
    if path.name == "pyproject.toml":
        table = table.get("tool", {}).get("sc-mlir", {})
        return _config_from(table, f"{path} [tool.sc-mlir]")
    return _config_from(table, str(path))


def find_config(directory: str | Path = ".") -> Config:
    """The config in `directory`: `sc-mlir.toml` first, else `pyproject.toml`'s table."""
    base = Path(directory)
    own = base / "sc-mlir.toml"
    if own.is_file():
        return _config_from(_read_toml(own), str(own))
    pyproject = base / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("sc-mlir")
        if isinstance(table, dict):
            return _config_from(table, f"{pyproject} [tool.sc-mlir]")
    return Config()


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: a run without a config file never loads the TOML parser

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read config: {exc}") from None


def _config_from(table: dict[str, Any], path: str) -> Config:
    def numbers(name: str) -> dict[str, int]:
        value = table.get(name, {})
        if not isinstance(value, dict) or not all(isinstance(v, int) for v in value.values()):
            raise ValueError(f"{path}: '{name}' must be a table of SPACE = whole number")
        return {str(k): v for k, v in value.items()}

    def names(name: str) -> tuple[str, ...] | None:
        value = table.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{path}: '{name}' must be a list of op names")
        return tuple(value)

    spaces = table.get("spaces", {})
    if not isinstance(spaces, dict):
        raise ValueError(f"{path}: 'spaces' must be a table of raw text = space id or name")
    chip = table.get("chip")
    if chip is not None and not isinstance(chip, str):
        raise ValueError(f"{path}: 'chip' must be a string")
    return Config(path, chip, numbers("bounds"), numbers("align"), dict(spaces),
                  names("scope_ops"), names("run_once_ops"))


def build_bounds(config: Config | None = None, chip: str | None = None,
                 bounds: Bounds | Mapping[str, int] | None = None,
                 align: Mapping[str, int] | None = None, *, bounds_source: str = "--bound",
                 align_source: str = "--align") -> Bounds:
    """The one bounds builder, for the CLI and the Python API alike. Later wins: built-in
    < config file (chip, then bounds, then alignments) < `chip` < `bounds` < `align`.
    A ready `Bounds` is taken as it is (only `align` goes on top). Each value keeps its
    source (`bounds_source`, `align_source`) for the report.

    >>> b = build_bounds(None, "v6e", {"202": 1000}, bounds_source="bounds=...")
    >>> b.bound_for(201, "tile_spmem")[0], b.bound_for(202, "spmem")
    (65535, (1000, 'bounds=...'))
    """
    if isinstance(bounds, Bounds):
        result = bounds
    else:
        result = Bounds.default()
        if config is not None and config.chip:
            result = result.with_chip(config.chip)
        if config is not None and config.bounds:
            result = result.with_bounds(config.bounds, f"config {config.path}")
        if config is not None and config.align:
            result = result.with_alignments(config.align, f"config {config.path}")
        if chip:
            result = result.with_chip(chip)
        if bounds:
            result = result.with_bounds(dict(bounds), bounds_source)
    if align:
        result = result.with_alignments(dict(align), align_source)
    return result


__all__ = [
    "CHIPS", "NAME_ALIASES", "Bounds", "Config", "build_bounds",
    "find_config", "parse_assignments", "parse_space_key", "read_config", "space_key",
]
