"""The JSON Schema rules toolwire relies on, checked once when a tool is built.

Shared with the dialect compilers (`_dialects`): the JSON type names, the keywords that hold
subschemas, and how a place in a schema is written in messages (`properties.a.type`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from .errors import SchemaError

__all__ = [
    "JSON_TYPES",
    "NAME_RULES",
    "SCHEMA_LISTS",
    "SCHEMA_MAPS",
    "SCHEMA_VALUES",
    "SCHEMA_VALUES_2020",
    "as_dict",
    "as_list",
    "check_schema",
    "name_problem",
    "where",
]

JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
SCHEMA_VALUES = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
SCHEMA_VALUES_2020 = ("propertyNames", "unevaluatedItems", "unevaluatedProperties")


def as_dict(value: Any) -> dict[str, Any] | None:
    """`value` as a schema object, or `None` when it is not a dict."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | None:
    """`value` as a list, or `None` when it is not one."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def _mapping(value: Any) -> dict[str, Any] | None:
    # Any mapping is a schema object (a MappingProxyType too), as the compilers take it.
    return dict(cast(Mapping[str, Any], value)) if isinstance(value, Mapping) else None


def where(path: tuple[str, ...]) -> str:
    """A place in a schema as messages write it: `properties.a.type`, or `(root)`."""
    return ".".join(path) if path else "(root)"


_NUMBER_KEYS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_COUNT_KEYS = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
)


def check_schema(schema: Any, path: tuple[str, ...] = ()) -> None:
    """Refuse a schema that breaks the JSON Schema meta-schema where toolwire relies on it.

    Checked: `type` names JSON types; `properties` and the other maps hold schemas; `required` is
    a list of names; `anyOf`/`oneOf`/`allOf` are non-empty lists of schemas; `enum` is a list;
    bounds are numbers and counts non-negative integers; `pattern` and `$ref` are strings.

    Raises:
        SchemaError: the first problem, with its place (`properties.a.type`).
    """
    if isinstance(schema, bool):
        return
    if (node := _mapping(schema)) is None:
        raise SchemaError(
            f"{where(path)}: a schema must be an object or a boolean, got {schema!r}."
        )
    kind = node.get("type")
    if kind is not None:
        names = [kind] if isinstance(kind, str) else as_list(kind)
        if names is None:  # an empty list is each dialect's to judge
            raise SchemaError(f"{where((*path, 'type'))}: must be a type name or a list of them.")
        for name in names:
            if not isinstance(name, str) or name not in JSON_TYPES:
                known = ", ".join(sorted(JSON_TYPES))
                raise SchemaError(
                    f"{where((*path, 'type'))}: unknown type {name!r} (JSON types: {known})."
                )
    for key in SCHEMA_MAPS:
        if key in node and _mapping(node[key]) is None:
            raise SchemaError(f"{where((*path, key))}: must be an object, got {node[key]!r}.")
    if "required" in node:
        required = as_list(node["required"])
        if required is None or not all(isinstance(r, str) for r in required):
            raise SchemaError(
                f"{where((*path, 'required'))}: must be a list of property names, "
                f"got {node['required']!r}."
            )
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node and not as_list(node[key]):
            raise SchemaError(f"{where((*path, key))}: must be a non-empty list of schemas.")
    if "enum" in node and as_list(node["enum"]) is None:
        raise SchemaError(f"{where((*path, 'enum'))}: must be a list of values.")
    for key in ("pattern", "$ref"):
        if key in node and not isinstance(node[key], str):
            raise SchemaError(f"{where((*path, key))}: must be a string, got {node[key]!r}.")
    for key in _NUMBER_KEYS & node.keys():
        value = node[key]
        # draft-04 writes exclusiveMinimum/exclusiveMaximum as booleans.
        if isinstance(value, bool) and key not in ("exclusiveMinimum", "exclusiveMaximum"):
            raise SchemaError(f"{where((*path, key))}: must be a number, got {value!r}.")
        if not isinstance(value, int | float):
            raise SchemaError(f"{where((*path, key))}: must be a number, got {value!r}.")
    for key in _COUNT_KEYS & node.keys():
        value = node[key]
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        if isinstance(value, bool) or not whole or value < 0:
            raise SchemaError(
                f"{where((*path, key))}: must be a non-negative integer, got {value!r}."
            )
    for key in (*SCHEMA_VALUES, *SCHEMA_VALUES_2020):
        value = node.get(key)
        if key in node and not isinstance(value, bool) and _mapping(value) is None:
            if key == "items" and as_list(value) is not None:
                continue  # the draft-07 tuple form, checked below
            raise SchemaError(f"{where((*path, key))}: must be a schema, got {value!r}.")
    for key in SCHEMA_MAPS:
        for name, sub in (_mapping(node.get(key)) or {}).items():
            check_schema(sub, (*path, key, name))
    for key in SCHEMA_LISTS:
        for i, sub in enumerate(as_list(node.get(key)) or []):
            check_schema(sub, (*path, f"{key}[{i}]"))
    for key in (*SCHEMA_VALUES, *SCHEMA_VALUES_2020):
        if isinstance(node.get(key), Mapping | bool):
            check_schema(node[key], (*path, key))


# A provider's rule holds for its strict dialect too.
_OPENAI_NAMES = (
    re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "letters, digits, '_' and '-', at most 64 characters",
)
_ANTHROPIC_NAMES = (
    re.compile(r"[A-Za-z0-9_-]{1,128}"),
    "letters, digits, '_' and '-', at most 128 characters",
)

# The tool names each dialect accepts, as its provider documents them (keyed by dialect; the MCP rule is the
# specification's, 2025-11-25), with the words a message uses.
NAME_RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "openai-strict": _OPENAI_NAMES,
    "openai": _OPENAI_NAMES,
    "anthropic": _ANTHROPIC_NAMES,
    "anthropic-strict": _ANTHROPIC_NAMES,
    "gemini": (
        re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
        "a letter or '_' first, then letters, digits, '_', '.', ':' and '-', at most 64 characters",
    ),
    "mcp": (
        re.compile(r"[A-Za-z0-9_.-]{1,128}"),
        "letters, digits, '_', '.' and '-', at most 128 characters",
    ),
}


def name_problem(name: str, dialect: str) -> str | None:
    """Why `dialect` refuses the tool name `name`, or `None` when it accepts it."""
    pattern, rule = NAME_RULES[dialect]
    if pattern.fullmatch(name):
        return None
    return f"{dialect} refuses the tool name {name!r}: it takes {rule}"
