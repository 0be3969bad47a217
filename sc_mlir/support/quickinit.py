"""`quick_init`: a frozen dataclass built at the cost of a plain one.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__`
(a frozen class forbids its own `__setattr__`), looked up again for every field: building
one costs about twice what a plain class does. A dump builds records by the hundred
thousand. `quick_init` gives such a class an `__init__` with the same signature that sets
each field the way the class's own storage takes it: through the slot's descriptor for a
`slots=True` class, into `__dict__` otherwise. The instances are the same (equal, hashed,
pickled and still frozen); only their construction is cheaper. The fields are read from the
class itself, so the rule lives here once, not as a field list beside each class.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

_Class = TypeVar("_Class", bound=type)


_PREFIXES = ("_set_", "_default_", "_factory_")


def quick_init(cls: _Class) -> _Class:
    """Replace the `__init__` of a frozen dataclass `cls` (apply it above `@dataclass`).

    Raises TypeError for what the quick `__init__` would not do as the generated one does:
    a class that is not a frozen dataclass, has a `__post_init__`, `InitVar`s, or fields
    left out of `__init__`.

    >>> from dataclasses import dataclass, FrozenInstanceError
    >>> @quick_init
    ... @dataclass(frozen=True, slots=True)
    ... class Point:
    ...     x: int
    ...     y: int = 0
    >>> Point(1) == Point(x=1, y=0)
    True
    >>> try:
    ...     Point(1).x = 2
    ... except FrozenInstanceError:
    ...     print("still frozen")
    still frozen
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which quick_init would skip")
    all_fields = getattr(cls, "__dataclass_fields__", {})
    init_fields = dataclasses.fields(cls)
    if len(all_fields) != len(init_fields) or not all(f.init for f in init_fields):
        raise TypeError(f"{cls.__name__} has InitVars or fields outside __init__")
    reserved = [f.name for f in init_fields
                if f.name in ("self", "_store", "_MISSING") or f.name.startswith(_PREFIXES)]
    if reserved:
        raise TypeError(f"{cls.__name__}: field names the quick __init__ uses itself: {reserved}")
    namespace: dict[str, Any] = {}
    positional: list[str] = []
    keyword_only: list[str] = []
    body: list[str] = []
    slotted = "__slots__" in cls.__dict__
    if not slotted:
        body.append("    _store = self.__dict__")
    for number, field in enumerate(init_fields):
        name = field.name
        if field.default is not dataclasses.MISSING:
            namespace[f"_default_{number}"] = field.default
            parameter = f"{name}=_default_{number}"
        elif field.default_factory is not dataclasses.MISSING:
            # As the generated __init__: a sentinel default, the factory called per object.
            namespace[f"_factory_{number}"] = field.default_factory
            parameter = f"{name}=_MISSING"
            body.append(f"    if {name} is _MISSING: {name} = _factory_{number}()")
        else:
            parameter = name
        (keyword_only if field.kw_only else positional).append(parameter)
        if slotted:
            namespace[f"_set_{number}"] = cls.__dict__[name].__set__
            body.append(f"    _set_{number}(self, {name})")
        else:
            body.append(f"    _store[{name!r}] = {name}")
    namespace["_MISSING"] = dataclasses.MISSING
    parameters = ", ".join(["self", *positional, *(["*", *keyword_only] if keyword_only else [])])
    source = f"def __init__({parameters}):\n" + "\n".join(body or ["    pass"]) + "\n"
    exec(source, namespace)  # the source holds only the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    cls.__init__ = init  # type: ignore[misc]
    return cls
