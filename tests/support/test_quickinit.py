"""`quick_init` builds the same frozen objects as the dataclass's own `__init__`."""

from __future__ import annotations

import inspect
from dataclasses import FrozenInstanceError, InitVar, dataclass, field, fields

import pytest

from sc_mlir.support.quickinit import quick_init


def _pair(slots: bool) -> tuple[type, type]:
    """The same class twice: as the dataclass makes it, and with quick_init."""

    def make() -> type:
        @dataclass(frozen=True, slots=slots)
        class Record:
            name: str
            line: int
            col: int | None = None
            parts: tuple[str, ...] = field(default_factory=tuple)
            tags: list[str] = field(default_factory=list, hash=False)
            note: str = field(default="", kw_only=True)

        return Record

    return make(), quick_init(make())


@pytest.mark.parametrize("slots", [True, False])
def test_the_same_objects_as_the_generated_init(slots):
    generated, quick = _pair(slots)
    calls = [(("a", 1), {}), (("a", 1, 3), {}), (("a", 1), {"parts": ("x",), "note": "n"}),
             ((), {"name": "b", "line": 2, "col": None, "tags": ["t"]})]
    for args, kwargs in calls:
        expected, got = generated(*args, **kwargs), quick(*args, **kwargs)
        assert [getattr(got, f.name) for f in fields(quick)] == [
            getattr(expected, f.name) for f in fields(generated)]
        assert repr(got) == repr(expected)
        assert hash(got) == hash(expected)
        with pytest.raises(FrozenInstanceError):
            got.line = 5
    # A default factory is called per object, as the generated __init__ does.
    assert quick("a", 1).tags is not quick("a", 1).tags


@pytest.mark.parametrize("slots", [True, False])
def test_the_same_signature(slots):
    generated, quick = _pair(slots)
    theirs = inspect.signature(generated).parameters
    ours = inspect.signature(quick).parameters
    assert list(ours) == list(theirs)
    for name, parameter in theirs.items():
        assert ours[name].kind == parameter.kind
        assert ours[name].annotation == parameter.annotation
        if name not in ("parts", "tags"):  # a factory's default shows as a sentinel
            assert ours[name].default == parameter.default
    with pytest.raises(TypeError):
        quick("a")  # a required field missing
    with pytest.raises(TypeError):
        quick("a", 1, None, (), [], "positional note")  # note is keyword-only


def test_refuses_what_it_would_build_differently():
    @dataclass
    class Plain:
        x: int

    @dataclass(frozen=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class WithInitVar:
        x: int
        scale: InitVar[int] = 1

    @dataclass(frozen=True)
    class Derived:
        x: int
        y: int = field(init=False, default=0)

    @dataclass(frozen=True)
    class Clash:
        _store: int

    for cls in (Plain, Checked, WithInitVar, Derived, Clash):
        with pytest.raises(TypeError):
            quick_init(cls)


def test_the_package_records_built_quickly_keep_every_field():
    """Every class the package gives a quick __init__ stores each argument in its own field
    (a field missed or swapped would fail here)."""
    import sc_mlir.analysis.report as report
    import sc_mlir.model.locations as model_locations
    import sc_mlir.syntax.locations as syntax_locations
    import sc_mlir.syntax.parse as parse

    modules = (report, model_locations, syntax_locations, parse)
    quick = [cls for module in modules for cls in vars(module).values()
             if isinstance(cls, type) and cls.__module__ == module.__name__
             and getattr(getattr(cls.__init__, "__code__", None), "co_filename", None)
             == "<string>" and cls.__init__.__module__ == module.__name__]
    assert quick, "no class uses quick_init"
    for cls in quick:
        values = {f.name: object() for f in fields(cls)}
        built = cls(**values)
        assert all(getattr(built, name) is value for name, value in values.items()), cls
