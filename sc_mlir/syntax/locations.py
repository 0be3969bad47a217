"""MLIR location syntax: the nodes the parser builds from `loc(...)` (resolving them to
source lines is `sc_mlir.model.locations`).

Every alloca holds one node (most often an `AliasLoc`), so the nodes have slots (a third of
the memory of a plain instance) and pickle as their constructor's arguments (workers send
them back by the ten thousand; a frozen slots dataclass otherwise pickles through
Python-level `__getstate__`/`__setstate__`).
"""

from __future__ import annotations

from collections.abc import Callable
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


# A frozen dataclass's generated `__init__` sets each field through `object.__setattr__`,
# looked up anew per field: twice the cost of setting the slots through their descriptors.
# Reading a dump builds a node per alloca and several per alias a report follows, so the
# nodes are built this way (the same parameters, defaults and frozen instances).
_set_file, _set_line, _set_col, _set_end_line, _set_end_col = (
    FileLoc.__dict__[name].__set__ for name in ("file", "line", "col", "end_line", "end_col"))
_set_name_loc_name, _set_child = (NameLoc.__dict__[name].__set__ for name in ("name", "child"))
_set_callee, _set_caller = (CallSiteLoc.__dict__[name].__set__ for name in ("callee", "caller"))
_set_metadata, _set_locations = (FusedLoc.__dict__[name].__set__
                                 for name in ("metadata", "locations"))
_set_alias_name = AliasLoc.__dict__["name"].__set__


def _file_loc_init(self: FileLoc, file: str, line: int, col: int | None,
                   end_line: int | None = None, end_col: int | None = None) -> None:
    _set_file(self, file)
    _set_line(self, line)
    _set_col(self, col)
    _set_end_line(self, end_line)
    _set_end_col(self, end_col)


def _name_loc_init(self: NameLoc, name: str, child: Location | None) -> None:
    _set_name_loc_name(self, name)
    _set_child(self, child)


def _call_site_loc_init(self: CallSiteLoc, callee: Location, caller: Location) -> None:
    _set_callee(self, callee)
    _set_caller(self, caller)


def _fused_loc_init(self: FusedLoc, metadata: str | None,
                    locations: tuple[Location, ...]) -> None:
    _set_metadata(self, metadata)
    _set_locations(self, locations)


def _alias_loc_init(self: AliasLoc, name: str) -> None:
    _set_alias_name(self, name)


def _install(cls: type, init: Callable[..., None]) -> None:
    init.__name__, init.__qualname__ = "__init__", f"{cls.__name__}.__init__"
    cls.__init__ = init  # type: ignore[misc]


_install(FileLoc, _file_loc_init)
_install(NameLoc, _name_loc_init)
_install(CallSiteLoc, _call_site_loc_init)
_install(FusedLoc, _fused_loc_init)
_install(AliasLoc, _alias_loc_init)
