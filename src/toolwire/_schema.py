"""Typed Python functions to JSON Schema plus a validator, and validation errors a model can act on.

A function's parameters become a `TypedDict` validated by one Pydantic `TypeAdapter`: validation
yields the keyword arguments directly (no model instance to unpack), and parameters the model left
out fall back to the function's own defaults.

A function whose parameters are all `str`, `int`, `float` or `bool` (or one of them `| None`), the
usual tool, gets the same schema and the same pydantic-core validator built directly
(`_scalar_signature`): Pydantic's schema generation around a `TypeAdapter` (its generator modules,
its plugin lookup through the installed packages' metadata) was most of the first run of a script
with such a tool, for a result written out in a few lines.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, Required, cast, get_args, get_origin

import docstring_parser
import pydantic
import pydantic_core
import typing_extensions
from pydantic_core import core_schema

from ._record import record
from ._validate import describe_received
from .errors import ArgumentProblem
from .results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart, ToolResult

if TYPE_CHECKING:
    # Reached at run time as `pydantic.json_schema` once a `TypeAdapter` exists (see
    # `no_field_titles`): a program whose tools all take scalars never loads it.
    import pydantic.json_schema

__all__ = [
    "ArgumentValidator",
    "FunctionSignature",
    "inspect_function",
    "is_async_callable",
    "no_field_titles",
    "problems_from_validation_error",
    "takes_context",
    "value_schema",
]


@functools.cache
def no_field_titles() -> type[pydantic.json_schema.GenerateJsonSchema]:
    """Pydantic's JSON Schema generator without the title it gives every field after its name
    ("City" for `city`: noise in a model's context).

    Made on first use, after a `TypeAdapter` or a model: `pydantic.TypeAdapter` is one of
    Pydantic's lazily loaded names, and its module loads `pydantic.json_schema` (about a third of
    Pydantic), which a run whose tools all take scalars does not need.
    """

    def field_title_should_be_set(self: Any, schema: Any) -> bool:
        return False

    base = pydantic.json_schema.GenerateJsonSchema
    return type("NoFieldTitles", (base,), {"field_title_should_be_set": field_title_should_be_set})


class ArgumentValidator(typing.Protocol):
    """What validates a tool's arguments (a pydantic-core `SchemaValidator`, or the one a
    `TypeAdapter` holds)."""

    def validate_json(self, input: str | bytes, /) -> Any:
        """Validate a JSON text into keyword arguments."""
        ...

    def validate_python(self, input: Any, /) -> Any:
        """Validate a mapping into keyword arguments."""
        ...


@record(frozen=True)
class FunctionSignature:
    """What toolwire learned from a function's signature and docstring.

    Attributes:
        description: The docstring's summary and body, without the parameter sections.
        parameters: The JSON Schema of the arguments the model provides.
        validator: Validates a JSON string or a mapping into keyword arguments (pydantic-core's
            validator: `validate_json`, `validate_python`).
        context_param: The parameter that receives the `ToolContext`, if any.
        positional: Positional-only parameters, passed by position in this order.
        is_async: Whether calling the function returns an awaitable.
        output_schema: The JSON Schema of an object return type, else `None`.
    """

    description: str
    parameters: dict[str, Any]
    validator: ArgumentValidator
    context_param: str | None
    positional: tuple[str, ...]
    is_async: bool
    output_schema: dict[str, Any] | None


def _is_context_type(hint: Any, context_type: type) -> bool:
    if hint is context_type:
        return True
    origin = get_origin(hint)
    if origin is Annotated:
        return _is_context_type(get_args(hint)[0], context_type)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        return len(args) == 1 and _is_context_type(args[0], context_type)
    return False


def _docstring(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    raw = inspect.getdoc(fn)
    if not raw:
        return "", {}
    parsed = docstring_parser.parse(raw)
    parts = [p for p in (parsed.short_description, parsed.long_description) if p]
    params = {p.arg_name: " ".join(p.description.split()) for p in parsed.params if p.description}
    return "\n\n".join(parts), params


_UPGRADED: dict[Any, Any] = {}


def _upgrade_typeddicts(hint: Any, depth: int = 0) -> Any:
    """Replace `typing.TypedDict` classes inside a hint with `typing_extensions` clones.

    Pydantic refuses `typing.TypedDict` before Python 3.12, yet users write it; the clone has the
    same keys, requiredness, types and docstring, and validates to the same plain dict.
    """
    if sys.version_info >= (3, 12) or depth > 20:
        return hint
    if typing_extensions.is_typeddict(hint) and type(hint).__module__ == "typing":
        found = _UPGRADED.get(hint)
        if found is None:
            fields = {
                key: (Required if key in hint.__required_keys__ else NotRequired)[
                    _upgrade_typeddicts(value, depth + 1)
                ]
                for key, value in typing.get_type_hints(hint, include_extras=True).items()
            }
            found: Any = typing_extensions.TypedDict(hint.__name__, fields)  # pyright: ignore[reportCallIssue, reportArgumentType]
            found.__doc__ = hint.__doc__
            found.__module__ = hint.__module__
            _UPGRADED[hint] = found
        return found
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is None or not args or origin is typing.Literal:
        return hint
    new_args = tuple(_upgrade_typeddicts(a, depth + 1) for a in args)
    if new_args == args:
        return hint
    if origin is Annotated:
        return Annotated[new_args[0], *hint.__metadata__]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new_args]  # noqa: UP007 - rebuilds any union, both spellings
    if isinstance(hint, types.GenericAlias):
        return types.GenericAlias(origin, new_args)
    return hint.copy_with(new_args)


@functools.cache
def _field_info() -> type[Any]:
    """Pydantic's `FieldInfo` (what `pydantic.Field()` makes), through its lazily loaded `Field`."""
    made: object = pydantic.Field()
    return type(made)


def _has_field_description(hint: Any) -> bool:
    if get_origin(hint) is not Annotated:
        return False
    return any(isinstance(m, _field_info()) and m.description for m in get_args(hint)[1:])


def is_async_callable(fn: Callable[..., Any]) -> bool:
    # An object whose __call__ is `async def` is as async as a coroutine function.
    call = type(fn).__call__ if not inspect.isroutine(fn) else None  # pyright: ignore[reportUnknownMemberType]
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _signature(fn: Callable[..., Any]) -> tuple[str, inspect.Signature, dict[str, Any]]:
    """`fn`'s name for messages, its signature and its resolved type hints."""
    name = getattr(fn, "__qualname__", None) or repr(fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"Cannot read the signature of {name}: {exc}") from exc
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"Cannot resolve the type hints of {name}: {exc}") from exc
    return name, signature, hints


def takes_context(fn: Callable[..., Any], context_type: type) -> bool:
    """Whether `fn` has a parameter of `context_type`, as `inspect_function` finds it, without
    building a schema for the others (an MCP server asks this of every tool it serves).

    Raises:
        TypeError: the signature or the hints cannot be read.
    """
    _, signature, hints = _signature(fn)
    return any(
        _is_context_type(hints.get(param.name), context_type)
        for param in signature.parameters.values()
    )


def inspect_function(fn: Callable[..., Any], context_type: type) -> FunctionSignature:
    """Build the argument schema and validator of a typed function.

    Raises:
        TypeError: a parameter has no type hint, is `*args`/`**kwargs`, or a hint cannot be resolved
            or turned into a schema.
    """
    name, signature, hints = _signature(fn)
    description, param_docs = _docstring(fn)
    given: list[tuple[str, Any, str | None, Any]] = []  # name, hint, doc, default
    context_param: str | None = None
    positional: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"{name}: parameter {param.name!r} is *args/**kwargs; a tool's parameters must "
                "be named so the model can fill them"
            )
        if param.name not in hints:
            raise TypeError(f"{name}: parameter {param.name!r} has no type hint")
        hint = _upgrade_typeddicts(hints[param.name])
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)  # the context too: it can only be passed by position
        if _is_context_type(hint, context_type):
            context_param = param.name
            continue
        given.append((param.name, hint, param_docs.get(param.name), param.default))

    td_name = f"{getattr(fn, '__name__', 'tool')}_arguments"
    scalar = _scalar_signature(td_name, given)
    if scalar is not None:
        validator, parameters = scalar
        return FunctionSignature(
            description=description,
            parameters=parameters,
            validator=validator,
            context_param=context_param,
            positional=tuple(positional),
            is_async=is_async_callable(fn),
            output_schema=_output_schema(hints.get("return", inspect.Signature.empty)),
        )
    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for key, hint, doc, default in given:
        if doc and not _has_field_description(hint):
            hint = Annotated[hint, pydantic.Field(description=doc)]
        if default is inspect.Parameter.empty:
            fields[key] = Required[hint]
        else:
            fields[key] = NotRequired[hint]
            defaults[key] = default
    typed_dict: Any = typing_extensions.TypedDict(td_name, fields)  # pyright: ignore[reportCallIssue, reportArgumentType]
    typed_dict.__pydantic_config__ = pydantic.ConfigDict(extra="forbid")
    try:
        adapter: pydantic.TypeAdapter[dict[str, Any]] = pydantic.TypeAdapter(typed_dict)
        parameters = adapter.json_schema(schema_generator=no_field_titles())
    except pydantic.PydanticUserError as exc:
        raise TypeError(f"{name}: cannot build a schema for its parameters: {exc}") from exc
    except pydantic_core.SchemaError as exc:
        raise TypeError(f"{name}: cannot build a schema for its parameters: {exc}") from exc
    parameters.pop("title", None)
    parameters.setdefault("properties", {})
    for key, value in defaults.items():
        # A default that is not JSON stays out of the schema; Python still applies it.
        with contextlib.suppress(pydantic_core.PydanticSerializationError):
            parameters["properties"][key]["default"] = pydantic_core.to_jsonable_python(value)

    return FunctionSignature(
        description=description,
        parameters=parameters,
        validator=cast(ArgumentValidator, adapter.validator),  # a plugin may wrap it
        context_param=context_param,
        positional=tuple(positional),
        is_async=is_async_callable(fn),
        output_schema=_output_schema(hints.get("return", inspect.Signature.empty)),
    )


_PLAIN_RETURNS: tuple[Any, ...] = (
    inspect.Signature.empty,
    None,
    type(None),
    str,
    bytes,
    Any,
    object,
    # Not objects either: no schema to build to find out.
    int,
    float,
    bool,
)

_SCALARS: dict[Any, tuple[str, Callable[[], core_schema.CoreSchema]]] = {
    str: ("string", core_schema.str_schema),
    int: ("integer", core_schema.int_schema),
    float: ("number", core_schema.float_schema),
    bool: ("boolean", core_schema.bool_schema),
}
"""The parameter types `_scalar_signature` handles: JSON Schema type, pydantic-core schema."""


def _scalar(hint: Any) -> tuple[dict[str, Any], core_schema.CoreSchema] | None:
    """A `str`/`int`/`float`/`bool` hint, or one of them `| None`, as Pydantic would write it."""
    known = _SCALARS.get(hint)
    if known is not None:
        return {"type": known[0]}, known[1]()
    if get_origin(hint) in (typing.Union, types.UnionType):
        args = get_args(hint)
        if len(args) == 2 and args[1] is type(None):
            inner = _SCALARS.get(args[0])
            if inner is not None:
                shown = {"anyOf": [{"type": inner[0]}, {"type": "null"}]}
                return shown, core_schema.nullable_schema(inner[1]())
    return None


def _scalar_signature(
    title: str, given: Sequence[tuple[str, Any, str | None, Any]]
) -> tuple[ArgumentValidator, dict[str, Any]] | None:
    """The schema and validator `TypeAdapter` makes for parameters that are all scalars (keys
    sorted as Pydantic sorts them), or `None` for any other signature."""
    properties: dict[str, Any] = {}
    fields: dict[str, core_schema.TypedDictField] = {}
    required: list[str] = []
    for name, hint, doc, default in given:
        scalar = _scalar(hint)
        if scalar is None:
            return None
        shown, schema = scalar
        if doc:
            shown = dict(sorted({**shown, "description": doc}.items()))
        missing = default is inspect.Parameter.empty
        if missing:
            required.append(name)
        else:
            with contextlib.suppress(pydantic_core.PydanticSerializationError):
                shown["default"] = pydantic_core.to_jsonable_python(default)
        properties[name] = shown
        fields[name] = core_schema.typed_dict_field(schema, required=missing)
    config = core_schema.CoreConfig(title=title, extra_fields_behavior="forbid")
    validator = pydantic_core.SchemaValidator(
        core_schema.typed_dict_schema(fields, extra_behavior="forbid", config=config), config
    )
    parameters: dict[str, Any] = {"additionalProperties": False, "properties": properties}
    if required:
        parameters["required"] = required
    parameters["type"] = "object"
    return validator, parameters


_CONTENT_TYPES = (TextPart, ImagePart, AudioPart, ResourcePart, ResourceLinkPart, ToolResult)


def _output_schema(hint: Any) -> dict[str, Any] | None:
    """The JSON Schema of a structured (object) return type, for MCP's `outputSchema`."""
    if get_origin(hint) is Annotated:
        hint = get_args(hint)[0]
    if hint in _PLAIN_RETURNS or get_origin(hint) in (typing.Union, types.UnionType):
        return None
    # Content parts and results are content, not structured data: nothing to declare.
    inner = get_args(hint)[0] if get_origin(hint) in (list, tuple) and get_args(hint) else hint
    if isinstance(inner, type) and issubclass(inner, _CONTENT_TYPES):
        return None
    try:
        schema = value_schema(_upgrade_typeddicts(hint))
    except (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError):
        return None
    if schema.get("type") != "object" or (
        "additionalProperties" in schema and "properties" not in schema
    ):
        return None
    return schema


def value_adapter(hint: Any) -> pydantic.TypeAdapter[Any]:
    """A validator for any type Pydantic understands (`typing.TypedDict`s work on 3.11 too)."""
    return pydantic.TypeAdapter(_upgrade_typeddicts(hint))


def value_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of any type Pydantic understands (models, TypedDicts, dataclasses...)."""
    return value_adapter(hint).json_schema(schema_generator=no_field_titles())


_MESSAGES: dict[str, str] = {
    "missing": "required property is missing",
    "extra_forbidden": "unexpected property (not allowed by the schema)",
}


_NO_DATA: Any = object()


def problems_from_validation_error(
    error: pydantic.ValidationError, data: Any = _NO_DATA
) -> list[ArgumentProblem]:
    """Turn Pydantic's errors into toolwire's `ArgumentProblem`s.

    Args:
        error: What Pydantic reported.
        data: The decoded arguments, when known: Pydantic's locations then lose the names it gives
            union members (`int`, `list[int]`, a model's name...), which are no place in the input.
    """
    problems: list[ArgumentProblem] = []
    seen: set[tuple[tuple[str | int, ...], str, str | None]] = set()
    for item in error.errors(include_url=False, include_context=False):
        kind = item["type"]
        if kind == "json_invalid":
            problems.append(
                ArgumentProblem((), f"the arguments are not valid JSON: {item['msg'][14:]}")
            )
            continue
        path: tuple[str | int, ...] = tuple(item["loc"])
        if data is not _NO_DATA:
            path = _input_path(path, data, keep_last=kind == "missing")
        message = _MESSAGES.get(kind) or _lower_first(item["msg"])
        received = None if kind in _MESSAGES else describe_received(item.get("input"))
        if (path, message, received) in seen:
            continue
        seen.add((path, message, received))
        problems.append(ArgumentProblem(path, message, received))
    return problems


def _input_path(loc: tuple[str | int, ...], data: Any, *, keep_last: bool) -> tuple[str | int, ...]:
    """The part of a Pydantic location that names keys and indexes of the input itself."""
    out: list[str | int] = []
    current = data
    for i, part in enumerate(loc):
        if isinstance(current, Mapping) and isinstance(part, str):
            mapping = typing.cast(Mapping[str, Any], current)
            if part in mapping:
                out.append(part)
                current = mapping[part]
                continue
            if keep_last and i == len(loc) - 1:
                out.append(part)  # the missing property itself
                continue
        elif isinstance(current, list | tuple) and isinstance(part, int):
            seq = typing.cast(Sequence[Any], current)
            if 0 <= part < len(seq):
                out.append(part)
                current = seq[part]
                continue
        # Otherwise the step is a union member's name (or a tag Pydantic adds), not input.
    return tuple(out)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text
