"""MLIR location syntax: the nodes the parser builds from `loc(...)` (resolving them to
source lines is `sc_mlir.model.locations`).

Every alloca holds one node (most often an `AliasLoc`), so the nodes have slots (a third of
the memory of a plain instance) and pickle as their constructor's arguments (workers send
them back by the ten thousand; a frozen slots dataclass otherwise pickles through
Python-level `__getstate__`/`__setstate__`).
"""

from __future__ import annotations

from dataclasses import dataclass

# --- syntax ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnknownLoc:
    def __reduce__(self) -> tuple[type[UnknownLoc], tuple[()]]:
        return (UnknownLoc, ())


@dataclass(frozen=True, slots=True)
class FileLoc:
    file: str
    line: int
    col: int | None
    end_line: int | None = None
    end_col: int | None = None

    def __reduce__(self) -> tuple[type[FileLoc], tuple[object, ...]]:
        return (FileLoc, (self.file, self.line, self.col, self.end_line, self.end_col))


@dataclass(frozen=True, slots=True)
class NameLoc:
    name: str
    child: Location | None

    def __reduce__(self) -> tuple[type[NameLoc], tuple[object, ...]]:
        return (NameLoc, (self.name, self.child))


@dataclass(frozen=True, slots=True)
class CallSiteLoc:
    callee: Location
    caller: Location

    def __reduce__(self) -> tuple[type[CallSiteLoc], tuple[object, ...]]:
        return (CallSiteLoc, (self.callee, self.caller))


@dataclass(frozen=True, slots=True)
class FusedLoc:
    metadata: str | None
    locations: tuple[Location, ...]

    def __reduce__(self) -> tuple[type[FusedLoc], tuple[object, ...]]:
        return (FusedLoc, (self.metadata, self.locations))


@dataclass(frozen=True, slots=True)
class AliasLoc:
    name: str

    def __reduce__(self) -> tuple[type[AliasLoc], tuple[object, ...]]:
        return (AliasLoc, (self.name,))


Location = UnknownLoc | FileLoc | NameLoc | CallSiteLoc | FusedLoc | AliasLoc
