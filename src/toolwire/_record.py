"""`record`: a standard `dataclass` whose methods are built without compiling source per class.

Why not plain `@dataclass`: on Python 3.11 the decorator writes each generated method as source
text and compiles it (`exec`): `__init__`, `__repr__` and `__eq__` for every class, plus
`__setattr__` and `__delattr__` for frozen ones. With about a hundred classes behind
`from toolwire import Agent, tool, model`, those compiles were the largest single cost of the
import (measured with cProfile: about 400 `exec` calls, ~40% of toolwire's own import time, and
still a third of it with `__init__` and the frozen guards left to `dataclass`). Here:

- `__repr__`, `__eq__` and `__hash__` are closures over each class's field names, built without
  compiling anything, and behave as the generated ones do: the same `Name(field=value, ...)` text
  (recursion shown as `...`), equality only between instances of the same class over the
  `compare` fields, a hash over the hashed fields for frozen classes, unhashable instances
  otherwise.
- a frozen class's `__setattr__` / `__delattr__` guards are closures too, raising
  `FrozenInstanceError` exactly where `dataclass`'s do (and a frozen slotted class gets the
  `__getstate__` / `__setstate__` that let `copy` and `pickle` rebuild it).
- `__init__` is the same code `dataclass` would compile (its parameters, defaults, default
  factories, `init=False` fields, frozen assignment through `object.__setattr__`, the call to
  `__post_init__`), compiled once per *shape* (which fields take a parameter, which have a
  factory, keyword-only or not, frozen or not) with placeholder names, then renamed for each
  class (`CodeType.replace`): the classes of one shape share one compile, so an instance is
  built by the same bytecode at the same speed as a dataclass's.

The class stays a real dataclass (`dataclasses.fields`, `replace`, `asdict`, Pydantic's adapters
all see it as one, `__dataclass_params__` says what it is). The rare cases this does not cover
(an `InitVar`, a field named `self`, a frozen dataclass base) go through `dataclass` itself.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
import types
from collections.abc import Callable
from typing import Any, TypeVar, cast, dataclass_transform, overload

from . import _record_shapes

__all__ = ["empty_dict", "empty_list", "init_source", "record", "unguarded"]

_T = TypeVar("_T")
_MISSING: Any = dataclasses.MISSING


class _Factory:
    """The default of a parameter whose field has a default factory (shown as `<factory>`)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()

_TEMPLATES: dict[str, types.CodeType] = {
    source: template.__code__ for source, template in _record_shapes.SHAPES.items()
}
"""`__init__` code by its source with placeholder names: one compile per shape (the shapes behind
the first line come compiled, with `_record_shapes`'s byte code)."""


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


def _add_methods(
    cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], *, eq: bool, explicit_hash: bool
) -> None:
    frozen = cls.__dataclass_params__.frozen
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
    _set_methods(cls, methods)
    # The rules `dataclass` follows for `__hash__` when `eq` is on and `unsafe_hash` off.
    if eq and not explicit_hash:
        if frozen:
            __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
            cls.__hash__ = __hash__  # type: ignore[method-assign]
        else:
            cls.__hash__ = None  # type: ignore[assignment]


def _set_methods(cls: type[Any], methods: dict[str, Any]) -> None:
    """Set the methods the class does not define itself, named as `dataclass` names them."""
    for name, method in methods.items():
        if name not in cls.__dict__:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)


def _add_frozen_guards(
    cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], *, slots: bool
) -> None:
    names = frozenset(f.name for f in fields)
    error = dataclasses.FrozenInstanceError

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise error(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise error(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    methods: dict[str, Any] = {"__setattr__": __setattr__, "__delattr__": __delattr__}
    if slots:
        # Slotted and frozen: `copy` and `pickle` restore the state past the guards.
        def __getstate__(self: Any) -> list[Any]:
            return [getattr(self, f.name) for f in fields]

        def __setstate__(self: Any, state: list[Any]) -> None:
            for f, value in zip(fields, state, strict=False):
                object.__setattr__(self, f.name, value)

        methods["__getstate__"] = __getstate__
        methods["__setstate__"] = __setstate__
    _set_methods(cls, methods)


def init_source(signature: str, lines: list[str], name: str = "__init__") -> str:
    """The source of an `__init__` template (`_record_shapes` holds the same, compiled)."""
    body = "\n    ".join(lines) or "pass"
    return f"def {name}({signature}):\n    {body}\n"


def _add_init(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> None:
    """`__init__` as `dataclass` writes it, from a code template shared by classes of one shape."""
    params = [f for f in fields if f.init and not f.kw_only]
    keywords = [f for f in fields if f.init and f.kw_only]
    seen_default = False
    for f in params:
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if has_default:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    index = {f.name: i for i, f in enumerate(fields)}
    scope: dict[str, Any] = {
        "__builtins__": __builtins__,
        "__name__": cls.__module__,
        "_rec_set": object.__setattr__,
        "_rec_factory": _FACTORY,
    }
    lines: list[str] = []
    for i, f in enumerate(fields):
        if f.init:
            value = f"_p{i}"
            if f.default_factory is not _MISSING:
                scope[f"_f{i}"] = f.default_factory
                value = f"_f{i}() if _p{i} is _rec_factory else _p{i}"
        elif f.default_factory is not _MISSING:
            scope[f"_f{i}"] = f.default_factory
            value = f"_f{i}()"
        elif f.default is not _MISSING:
            scope[f"_d{i}"] = f.default
            value = f"_d{i}"
        else:
            continue
        lines.append(f"_rec_set(self, '_a{i}', {value})" if frozen else f"self._a{i} = {value}")
    if hasattr(cls, "__post_init__"):
        lines.append("self.__post_init__()")
    signature = ", ".join(
        ["self", *(f"_p{index[f.name]}" for f in params)]
        + (["*", *(f"_p{index[f.name]}" for f in keywords)] if keywords else [])
    )
    source = init_source(signature, lines)
    template = _TEMPLATES.get(source)
    if template is None:
        made: dict[str, Any] = {}
        exec(compile(source, "<record>", "exec"), {}, made)  # once per shape
        template = _TEMPLATES[source] = made["__init__"].__code__
    names = {f"_a{i}": f.name for i, f in enumerate(fields)}
    names.update((f"_p{i}", f.name) for i, f in enumerate(fields))
    code = template.replace(
        co_varnames=tuple(names.get(n, n) for n in template.co_varnames),
        co_names=tuple(names.get(n, n) for n in template.co_names),
        co_consts=tuple(names.get(c, c) if isinstance(c, str) else c for c in template.co_consts),
        co_name="__init__",
        co_qualname=f"{cls.__qualname__}.__init__",
    )
    defaults = tuple(
        _FACTORY if f.default_factory is not _MISSING else f.default
        for f in params
        if f.default is not _MISSING or f.default_factory is not _MISSING
    )
    init = types.FunctionType(code, scope, "__init__", defaults or None)
    keyword_defaults = {
        f.name: _FACTORY if f.default_factory is not _MISSING else f.default
        for f in keywords
        if f.default is not _MISSING or f.default_factory is not _MISSING
    }
    if keyword_defaults:
        init.__kwdefaults__ = keyword_defaults
    init.__annotations__ = {**{f.name: f.type for f in (*params, *keywords)}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init


_ORDINARY = object()
"""Stands for an ordinary string annotation while `dataclass` reads the class."""


def _ordinary(hint: str) -> bool:
    return "ClassVar" not in hint and "InitVar" not in hint and "KW_ONLY" not in hint


def _plain_enough(cls: type[Any]) -> bool:
    """Whether `record` can build the class's methods itself (else `dataclass` does)."""
    annotations = inspect.get_annotations(cls)
    if "self" in annotations or any("InitVar" in str(a) for a in annotations.values()):
        return False
    for base in cls.__mro__[1:]:
        params = base.__dict__.get("__dataclass_params__")
        if params is not None and params.frozen:
            return False  # `dataclass` refuses a non-frozen class over a frozen one
    return True


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
        undocumented = not cls.__doc__
        plain = _plain_enough(cls)
        real = inspect.get_annotations(cls) if plain else None
        if real:
            # `dataclass` matches each string annotation against three patterns (ClassVar,
            # InitVar, KW_ONLY): a fifth of its work here. The ones that cannot be any of them
            # are shown to it as a plain type and given back right after.
            cls.__annotations__ = {
                name: _ORDINARY if isinstance(hint, str) and _ordinary(hint) else hint
                for name, hint in real.items()
            }
        try:
            # `plain`: nothing compiled here; `__init__` and the frozen guards are added below.
            made: type[Any] = dataclasses.dataclass(
                cls,
                repr=False,
                eq=False,
                frozen=frozen and not plain,
                kw_only=kw_only,
                slots=slots,
                init=init and not plain,
            )
        finally:
            if real:
                cls.__annotations__ = real
        fields = dataclasses.fields(made)
        if real:
            made.__annotations__ = real
            for f in fields:
                if f.type is _ORDINARY:
                    f.type = real[f.name]
        params: Any = made.__dataclass_params__
        if plain:
            params.init, params.frozen = init, frozen
            if init and "__init__" not in made.__dict__:
                _add_init(made, fields, frozen)
            if frozen:
                _add_frozen_guards(made, fields, slots=slots)
            if undocumented:  # what `dataclass` writes, from the real signature
                made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
        params.repr, params.eq = True, eq
        _add_methods(made, fields, eq=eq, explicit_hash=explicit_hash)
        return cast(type[_T], made)

    return wrap if cls is None else wrap(cls)
