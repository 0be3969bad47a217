"""MLIR location syntax: the nodes the parser builds from `loc(...)` (resolving them to
source lines is `sc_mlir.model.locations`)."""

from __future__ import annotations

from dataclasses import dataclass

# --- syntax ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnknownLoc:
    pass


@dataclass(frozen=True, slots=True)
class FileLoc:
    file: str
    line: int
    col: int | None
    end_line: int | None = None
    end_col: int | None = None


@dataclass(frozen=True, slots=True)
class NameLoc:
    name: str
    child: Location | None


@dataclass(frozen=True, slots=True)
class CallSiteLoc:
    callee: Location
    caller: Location


@dataclass(frozen=True, slots=True)
class FusedLoc:
    metadata: str | None
    locations: tuple[Location, ...]


@dataclass(frozen=True, slots=True)
class AliasLoc:
    name: str


Location = UnknownLoc | FileLoc | NameLoc | CallSiteLoc | FusedLoc | AliasLoc
