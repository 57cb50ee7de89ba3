"""`record`: a standard `dataclass` whose `__repr__`, `__eq__` and `__hash__` are shared functions.

Why not plain `@dataclass`: on Python 3.11 the decorator writes each generated method as source
text and compiles it (`exec`), several per class; with about a hundred classes behind
`from toolwire import Agent, tool, model`, those compiles were the largest single cost of the import
(measured with cProfile: about 400 `exec` calls, ~40% of toolwire's own import time). Only
`__init__` (and, for frozen classes, the guards against assignment) differ enough between classes
to be worth generating; `__repr__`, `__eq__` and `__hash__` here are closures over each class's
field names, built without compiling anything, and behave as the generated ones do: the same
`Name(field=value, ...)` text (recursion shown as `...`), equality only between instances of the
same class over the `compare` fields, a hash over the hashed fields for frozen classes, and
unhashable instances otherwise. The class stays a real dataclass (`dataclasses.fields`, `replace`,
`asdict`, Pydantic's adapters all see it as one).
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["empty_dict", "empty_list", "record", "unguarded"]

_T = TypeVar("_T")


def empty_list() -> list[Any]:
    """A new empty list: a record field's `default_factory` (`list[Citation]` would type it too,
    but calling a subscripted `list` costs several times a plain call; plain `list` leaves the
    field's type unknown to the type checker)."""
    return []


def empty_dict() -> dict[Any, Any]:
    """A new empty dict: a record field's `default_factory` (see `empty_list`)."""
    return {}


def unguarded(cls: type[Any]) -> type[Any]:
    """A class with the slots of the frozen record `cls` and no guard against assignment.

    For a record built on every request: its own `__init__` sets each field through
    `object.__setattr__`, several times slower than a plain store. An instance of this class
    (`object.__new__`), its fields stored plainly, then given `cls` as its `__class__` (the
    layouts are the same, so Python allows it), is a `cls` like any other, frozen from then on.
    """
    return type(f"_Unguarded{cls.__name__}", (), {"__slots__": cls.__slots__})


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _: ()
    get = operator.attrgetter(*names)
    if len(names) == 1:
        return lambda obj: (get(obj),)
    return get


def _add_methods(cls: type[Any], *, eq: bool, frozen: bool, explicit_hash: bool) -> None:
    fields = dataclasses.fields(cls)
    shown = tuple(f.name for f in fields if f.repr)
    compared = _values(tuple(f.name for f in fields if f.compare))
    hashed = _values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash)))

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    methods: dict[str, Any] = {"__repr__": __repr__}
    if eq:
        methods["__eq__"] = __eq__
    for name, method in methods.items():
        if name not in cls.__dict__:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    # The rules `dataclass` follows for `__hash__` when `eq` is on and `unsafe_hash` off.
    if eq and not explicit_hash:
        if frozen:
            __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
            cls.__hash__ = __hash__  # type: ignore[method-assign]
        else:
            cls.__hash__ = None  # type: ignore[assignment]


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(
    *,
    frozen: bool = False,
    kw_only: bool = False,
    eq: bool = True,
    slots: bool = True,
    init: bool = True,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[_T] | None = None,
    /,
    *,
    frozen: bool = False,
    kw_only: bool = False,
    eq: bool = True,
    slots: bool = True,
    init: bool = True,
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """`dataclasses.dataclass(frozen=..., kw_only=..., eq=..., slots=..., init=...)`, built faster.

    `slots` defaults to on, as most toolwire records use it; `init=False` is for a class that
    writes its own `__init__` (`RunConfig` stores only the options it is given).
    """

    def wrap(cls: type[_T]) -> type[_T]:
        own_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
        explicit_hash = not (
            own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in cls.__dict__)
        )
        made = dataclasses.dataclass(
            cls, repr=False, eq=False, frozen=frozen, kw_only=kw_only, slots=slots, init=init
        )
        _add_methods(made, eq=eq, frozen=frozen, explicit_hash=explicit_hash)
        return made

    return wrap if cls is None else wrap(cls)
