# Provider documentation these rules were taken from (read for the rules; the wording here is ours):
#   https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
#   https://platform.openai.com/docs/guides/function-calling#strict-mode
#   https://ai.google.dev/api/caching#Schema
#   https://ai.google.dev/gemini-api/docs/function-calling
#   https://firebase.google.com/docs/reference/js/ai.schemashared
#   https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use
#   https://platform.claude.com/docs/en/build-with-claude/structured-outputs
#   https://modelcontextprotocol.io/specification/2025-06-18/server/tools
#   https://modelcontextprotocol.io/community/seps/1613-establish-json-schema-2020-12-as-default-dialect-f
"""Compile a tool's argument schema into the JSON Schema dialect each provider accepts.

A tool's schema may come from Pydantic, an MCP server, a user's dict or another library. Providers
each accept a different subset of JSON Schema and answer 400 at run time for the rest, so the
schema is compiled once per dialect and every change is reported with the path where it happened.
Dropping a constraint is acceptable because toolwire still validates the arguments locally against
the original schema; what a dialect cannot express at all raises `UnsupportedError`.

- `openai-strict`: every object closed (`additionalProperties: false`) with every property
  required, optional ones made nullable; only the documented keywords kept; `$ref` kept when
  alone (recursion is supported) and inlined when it has siblings; no `anyOf` at the root;
  documented size limits checked.
- `openai`, `anthropic`, `mcp`: light touch; the root becomes `type: object` with `properties`;
  `$schema` is dropped for OpenAI and Anthropic (Claude rejects dialects it does not support).
- `anthropic-strict`: Anthropic's strict tool use (`_dialect_anthropic`): the light form with every
  object closed and the keywords strict mode does not take dropped; optional properties stay
  optional; recursion and free-form dicts cannot be expressed.
- `gemini`: the OpenAPI 3.0 subset of Gemini's `Schema`: references inlined (recursion cannot be
  expressed), type lists turned into `nullable`/`anyOf`, string-only enums, few formats.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, cast
from urllib.parse import unquote

from ._dialect_anthropic import strict_anthropic
from ._record import record
from ._schema_check import JSON_TYPES as _JSON_TYPES
from ._schema_check import SCHEMA_LISTS as _SCHEMA_LISTS
from ._schema_check import SCHEMA_MAPS as _SCHEMA_MAPS
from ._schema_check import SCHEMA_VALUES as _SCHEMA_VALUES
from ._schema_check import SCHEMA_VALUES_2020 as _SCHEMA_VALUES_2020
from ._schema_check import as_dict as _as_dict
from ._schema_check import as_list as _as_list
from ._schema_check import check_schema
from ._schema_check import where as _where
from .errors import SchemaError, UnsupportedError

__all__ = ["DIALECTS", "CompiledSchema", "Dialect", "compile_dialect", "strict_problem"]

Dialect = Literal["openai-strict", "openai", "anthropic", "anthropic-strict", "gemini", "mcp"]
DIALECTS: tuple[Dialect, ...] = (
    "openai-strict",
    "openai",
    "anthropic",
    "anthropic-strict",
    "gemini",
    "mcp",
)

_Schema = dict[str, Any]
_Path = tuple[str, ...]
_Step = Callable[[Any, _Path], _Schema]
_MISSING: Any = object()
_CHARS = "characters in property names, definition names and enum values"
_FREE_FORM = "an object without declared properties (a free-form dict)"
_EVERY_PROPERTY = "openai-strict requires every property; null stands for a missing value"

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "example", "$comment", "deprecated"}
)
# Where a keyword only makes sense for one type; providers reject it elsewhere.
_OWNER: dict[str, str] = {"properties": "object", "required": "object", "items": "array"}
_OWNER["additionalProperties"] = "object"

_STRICT_KEYWORDS = frozenset(
    {"type", "description", "title", "properties", "required", "additionalProperties", "items"}
    | {"anyOf", "enum", "$ref", "pattern", "format", "multipleOf", "minimum", "maximum"}
    | {"exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"}
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_STRICT_LIMITS = {"properties": 5000, "enum values": 1000, _CHARS: 120_000}
_STRICT_MAX_DEPTH = 10  # objects below the root
_STRICT_BIG_ENUM = (250, 15_000)  # over this many strings, at most this many characters

# `title` is in the current v1beta Schema, but older Gemini versions rejected it and it only
# repeats the property name, so it goes.
_GEMINI_KEYWORDS = frozenset(
    {"type", "format", "description", "nullable", "enum", "items", "properties", "required"}
    | {"anyOf", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength"}
    | {"pattern", "minProperties", "maxProperties", "propertyOrdering", "default", "example"}
)
# The Gemini Developer API fails requests with other string formats.
_GEMINI_FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
# Which keywords go to which branch when a type list is split into `anyOf` for Gemini.
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_BY_TYPE: dict[str, frozenset[str]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format", "enum"}),
    "number": _NUMERIC | {"format", "enum"},
    "integer": _NUMERIC | {"format", "enum"},
    "array": frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"}),
    "object": frozenset({"properties", "required", "additionalProperties", "patternProperties"})
    | {"minProperties", "maxProperties", "propertyOrdering"},
    "boolean": frozenset({"enum"}),
}
_TYPE_SPECIFIC = frozenset[str]().union(*_BY_TYPE.values())


@record(frozen=True)
class CompiledSchema:
    """A schema compiled for one dialect.

    Attributes:
        schema: The schema to send; a fresh copy the caller may mutate.
        changes: What was changed, one line each, starting with the JSON path.
        dialect: The dialect it was compiled for.
    """

    schema: dict[str, Any]
    changes: tuple[str, ...]
    dialect: Dialect


def compile_dialect(schema: Mapping[str, Any], dialect: Dialect) -> CompiledSchema:
    """Compile a tool's argument schema for one provider dialect.

    Args:
        schema: A JSON Schema describing the tool's arguments; never mutated.
        dialect: One of `DIALECTS`.

    Returns:
        The compiled schema with a report of every change.

    Raises:
        UnsupportedError: The dialect cannot express the schema; the message names the path.
        SchemaError: The schema is broken, e.g. a `$ref` that points nowhere.
    """
    if dialect not in DIALECTS:
        raise UnsupportedError(f"Unknown schema dialect {dialect!r}; expected one of {DIALECTS}.")
    if not isinstance(schema, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise SchemaError(f"A tool schema must be a JSON object, not {type(schema).__name__}.")
    check_schema(schema)  # the same rules in every dialect, also for a schema given bare
    compiler = _Compiler(cast(_Schema, _thaw(schema)), dialect)
    if dialect == "openai-strict":
        out = compiler.strict()
    elif dialect == "gemini":
        out = compiler.gemini()
    elif dialect == "anthropic-strict":
        out = strict_anthropic(compiler.light(), compiler.changes)
    else:
        out = compiler.light()
    # A final copy guarantees that no two places of the result share a list or a dict.
    return CompiledSchema(cast(_Schema, _thaw(out)), tuple(compiler.changes), dialect)


def strict_problem(schema: Mapping[str, Any]) -> str | None:
    """Say why OpenAI's strict mode cannot express a schema, or return `None` when it can.

    Args:
        schema: A JSON Schema describing a tool's arguments.

    Returns:
        The reason, naming the JSON path, or `None`.
    """
    try:
        compile_dialect(schema, "openai-strict")
    except (UnsupportedError, SchemaError) as exc:
        return str(exc)
    return None


def _thaw(value: Any) -> Any:
    """Deep-copy JSON-like data into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in cast(Mapping[str, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_thaw(v) for v in cast("list[Any]", value)]
    return value


def _children(node: _Schema, path: _Path, *, defs: bool = True) -> Iterator[tuple[Any, _Path]]:
    """Yield the subschemas of a schema with their paths."""
    for key in _SCHEMA_MAPS:
        if (mapping := _as_dict(node.get(key))) and (defs or key not in ("$defs", "definitions")):
            yield from ((sub, (*path, key, name)) for name, sub in mapping.items())
    for key in _SCHEMA_LISTS:
        if members := _as_list(node.get(key)):
            yield from ((sub, (*path, f"{key}[{i}]")) for i, sub in enumerate(members))
    for key in (*_SCHEMA_VALUES, *_SCHEMA_VALUES_2020):
        if isinstance(node.get(key), dict):
            yield node[key], (*path, key)


def _refs_in(node: Any) -> Iterator[str]:
    todo = [node]
    while todo:
        if (schema := _as_dict(todo.pop())) is not None:
            if isinstance(ref := schema.get("$ref"), str):
                yield ref
            todo.extend(sub for sub, _ in _children(schema, (), defs=False))


def _types(node: _Schema) -> list[str]:
    value = node.get("type")
    if isinstance(value, str):
        return [value]
    return [t for t in _as_list(value) or [] if isinstance(t, str)]


def _json_type(value: Any) -> str:
    kinds = (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
        (list, "array"),
    )
    found = (name for kind, name in kinds if isinstance(value, kind))
    return "null" if value is None else next(found, "object")


def _accepts_null(node: _Schema) -> bool:
    values = _as_list(node.get("enum"))
    if values is not None and None not in values:
        return False
    if "type" in node:
        return "null" in _types(node)
    if (branches := _as_list(node.get("anyOf"))) is not None:
        return any((b := _as_dict(branch)) is not None and _accepts_null(b) for branch in branches)
    return values is not None


def _is_null_schema(node: Any) -> bool:
    if (schema := _as_dict(node)) is None:
        return False
    if "const" in schema:
        return schema["const"] is None
    return schema.get("type") == "null" or schema.get("enum") == [None]


def _nullable(node: _Schema) -> _Schema:
    """Let a compiled strict schema also accept null."""
    if _accepts_null(node):
        return node
    types = _types(node)
    if types and "anyOf" not in node and not {"object", "array"} & set(types):
        node["type"] = types if "null" in types else [*types, "null"]
        if (values := _as_list(node.get("enum"))) is not None:
            node["enum"] = [*values, None]
        return node
    if (branches := _as_list(node.get("anyOf"))) is not None and "type" not in node:
        node["anyOf"] = [*branches, {"type": "null"}]
        return node
    return {"anyOf": [node, {"type": "null"}]}


def _union(schemas: list[_Schema]) -> _Schema:
    unique = {json.dumps(s, sort_keys=True): s for s in reversed(schemas)}
    members = list(reversed(unique.values()))
    return members[0] if len(members) == 1 else {"anyOf": members}


def _is_free_form(node: _Schema) -> bool:
    """An object with keys it does not declare: a dict."""
    extra = node.get("additionalProperties")
    free = extra is True or isinstance(extra, dict) or "patternProperties" in node
    return free and not node.get("properties")


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


class _Compiler:
    """One compilation: the source schema, the dialect and the report being written."""

    def __init__(self, source: _Schema, dialect: Dialect) -> None:
        self.source = source
        self.dialect = dialect
        self.changes: list[str] = []
        self.root_ref: str | None = None
        self._inlining: list[str] = []  # references being inlined, to stop on recursion
        self._recursive: dict[str, bool] = {}
        self._kept: dict[tuple[str, str], None] = {}  # definitions a kept `$ref` points to

    # -- shared machinery ------------------------------------------------------------------

    def note(self, path: _Path, text: str) -> None:
        self.changes.append(f"{_where(path)}: {text}")

    def drop(self, node: _Schema, path: _Path, key: str) -> None:
        value = node.pop(key)
        shown = f" {value!r}" if key == "format" else ""
        self.note(path, f"dropped '{key}'{shown} (not supported by {self.dialect})")

    def unsupported(self, path: _Path, text: str) -> UnsupportedError:
        return UnsupportedError(f"{_where(path)}: {self.dialect} cannot express {text}.")

    def as_schema(self, raw: Any, path: _Path) -> _Schema:
        if isinstance(raw, bool):
            raise self.unsupported(path, f"the schema `{str(raw).lower()}`")
        if (node := _as_dict(raw)) is None:
            raise SchemaError(f"{_where(path)}: expected a schema object, got {raw!r}.")
        return dict(node)

    def resolve(self, ref: Any, path: _Path) -> Any:
        """A fresh copy of the part of the source schema a local `$ref` points to."""
        if not isinstance(ref, str):
            raise SchemaError(f"{_where(path)}: '$ref' must be a string, got {ref!r}.")
        pointer = unquote(ref[1:])
        if not ref.startswith("#") or (pointer and not pointer.startswith("/")):
            raise self.unsupported(path, f"the '$ref' {ref!r} (only local JSON pointers work)")
        node: Any = self.source
        for token in map(_unescape, pointer.split("/")[1:] if pointer else []):
            if (mapping := _as_dict(node)) is not None and token in mapping:
                node = mapping[token]
            elif (items := _as_list(node)) and token.isdigit() and int(token) < len(items):
                node = items[int(token)]
            else:
                raise SchemaError(f"{_where(path)}: '$ref' {ref!r} points nowhere.")
        return _thaw(node)

    def check_refs(self, node: Any, path: _Path) -> None:
        """Fail early on any local `$ref` that points nowhere, used or not."""
        if (schema := _as_dict(node)) is None:
            return
        if isinstance(ref := schema.get("$ref"), str) and ref.startswith("#/"):
            self.resolve(ref, path)
        for sub, sub_path in _children(schema, path):
            self.check_refs(sub, sub_path)

    def is_recursive(self, ref: str) -> bool:
        if ref not in self._recursive:
            seen: set[str] = set()
            todo = list(_refs_in(self.resolve(ref, ())))
            while todo and ref not in seen:
                current = todo.pop()
                if current not in seen and (current == "#" or current.startswith("#/")):
                    seen.add(current)
                    todo.extend(_refs_in(self.resolve(current, ())))
            self._recursive[ref] = ref in seen
        return self._recursive[ref]

    def merge(self, base: _Schema, extra: _Schema, path: _Path) -> _Schema:
        """One schema meaning both (as `allOf` does); `extra`'s annotations win."""
        out = dict(base)
        for key, value in extra.items():
            mine = out.get(key, _MISSING)
            if mine is _MISSING or mine == value or key in _ANNOTATIONS:
                out[key] = value
            elif key == "properties" and isinstance(value, dict) and isinstance(mine, dict):
                props = dict(cast(_Schema, mine))
                for name, sub in cast(_Schema, value).items():
                    same = name not in props or props[name] == sub
                    props[name] = sub if same else {"allOf": [props[name], sub]}
                out[key] = props
            elif key == "required" and isinstance(value, list) and isinstance(mine, list):
                out[key] = list(
                    dict.fromkeys([*cast("list[Any]", mine), *cast("list[Any]", value)])
                )
            elif key == "items" and isinstance(value, dict) and isinstance(mine, dict):
                out[key] = {"allOf": [mine, value]}
            elif key == "type":
                out[key] = self.common_type(_types(out), _types({"type": value}), path)
            elif key == "additionalProperties" and False in (value, mine):
                out[key] = False
            elif key.startswith(("min", "exclusiveMin")) and _numbers(mine, value):
                out[key] = max(mine, cast(Any, value))
            elif key.startswith(("max", "exclusiveMax")) and _numbers(mine, value):
                out[key] = min(mine, cast(Any, value))
            else:
                raise self.unsupported(path, f"an 'allOf' with conflicting '{key}' values")
        return out

    def common_type(self, mine: list[str], theirs: list[str], path: _Path) -> str | list[str]:
        both = [t for t in mine if t in theirs or (t == "integer" and "number" in theirs)]
        both += [t for t in theirs if t == "integer" and "number" in mine and t not in both]
        if not both:
            raise self.unsupported(path, "an 'allOf' of different types")
        return both[0] if len(both) == 1 else both

    def flatten_ref(self, node: Any, path: _Path, refs: list[str]) -> Any:
        """Replace a top-level `$ref` by its target merged with the siblings, recording it."""
        while (schema := _as_dict(node)) is not None and "$ref" in schema:
            rest = dict(schema)
            ref = rest.pop("$ref")
            if ref in self._inlining or ref in refs:
                raise self.unsupported(path, f"the recursive '$ref' {ref!r} (no references)")
            target = self.resolve(ref, path)
            refs.append(ref)
            if (body := _as_dict(target)) is not None:
                node = self.merge(body, rest, path)
            else:
                node = rest if target is True and rest else target
        return node

    def inline(self, node: Any, path: _Path, refs: list[str], then: _Step) -> _Schema:
        self._inlining.extend(refs)
        try:
            return then(node, path)
        finally:
            del self._inlining[len(self._inlining) - len(refs) :]

    def merge_all_of(self, node: _Schema, path: _Path, then: _Step) -> _Schema:
        if not (parts := _as_list(node.pop("allOf"))):
            raise SchemaError(f"{_where(path)}: 'allOf' must be a non-empty list.")
        refs: list[str] = []
        merged: _Schema = {}
        for i, part in enumerate(parts):
            part = self.flatten_ref(part, (*path, f"allOf[{i}]"), refs)
            if part is not True:
                merged = self.merge(merged, self.as_schema(part, (*path, f"allOf[{i}]")), path)
        merged = self.merge(merged, node, path)
        what = (
            "inlined the single schema" if len(parts) == 1 else f"merged the {len(parts)} schemas"
        )
        self.note(path, f"{what} of 'allOf'")
        return self.inline(merged, path, refs, then)

    def prepare(self, node: _Schema, path: _Path) -> None:
        """Rewrite `oneOf` and `const` (neither dialect has them) and add an implied type."""
        if "oneOf" in node:
            if "anyOf" in node:
                raise self.unsupported(path, "'oneOf' next to 'anyOf'")
            node["anyOf"] = node.pop("oneOf")
            self.note(path, "replaced 'oneOf' with 'anyOf' (exclusivity is still checked locally)")
        if "const" in node:
            node["enum"] = [node.pop("const")]
            self.note(path, "replaced 'const' with a one-value 'enum'")
        if (branches := node.get("anyOf")) is not None and not _as_list(branches):
            raise SchemaError(f"{_where(path)}: 'anyOf' must be a non-empty list.")
        for name in _types(node):
            if name not in _JSON_TYPES:
                raise SchemaError(f"{_where(path)}: unknown type {name!r}.")
        if "type" in node:
            return
        if "properties" in node:
            node["type"] = "object"
        elif "items" in node or "prefixItems" in node:
            node["type"] = "array"
        elif values := _as_list(node.get("enum")):
            found = list(dict.fromkeys(map(_json_type, values)))
            if "integer" in found and "number" in found:
                found.remove("integer")
            node["type"] = found[0] if len(found) == 1 else found
        else:
            return
        self.note(path, f"added the implied type {json.dumps(node['type'])}")

    def finish(self, node: _Schema, path: _Path, allowed: frozenset[str]) -> None:
        """Drop keywords the dialect does not know, or that belong to another type."""
        types = _types(node)
        for key in list(node):
            owner = _OWNER.get(key)
            if key not in allowed or (owner and types and owner not in types):
                self.drop(node, path, key)

    def tuple_items(self, node: _Schema, path: _Path, step: _Step) -> None:
        """Turn a tuple into `items` accepting any of its members (neither dialect has tuples)."""
        items = node.pop("items", _MISSING)
        prefix = node.pop("prefixItems", None)
        if (old_form := _as_list(items)) is not None:
            prefix, items = old_form, _MISSING
        if (members := _as_list(prefix)) is not None:
            schemas = [step(s, (*path, f"prefixItems[{i}]")) for i, s in enumerate(members)]
            if items is not _MISSING and items is not False:
                schemas.append(step(items, (*path, "items")))
            node["items"] = _union(schemas)
            self.note(path, "replaced tuple 'prefixItems' with 'items' taking any of its members")
        elif items is _MISSING:
            raise self.unsupported(path, "an array without 'items' (any item)")
        else:
            node["items"] = step(items, (*path, "items"))

    def object_parts(self, node: _Schema, path: _Path) -> tuple[_Schema, list[Any]]:
        props, required = node.get("properties", {}), node.get("required", [])
        props, required = _as_dict(props), _as_list(required)
        if props is None or required is None or not all(isinstance(r, str) for r in required):
            raise SchemaError(
                f"{_where(path)}: 'properties' must be an object and 'required' a list of names."
            )
        return props, required

    def prepare_root(self) -> _Schema:
        """The root as an object schema: a root `$ref` inlined, `type` and `properties` set."""
        root = cast(_Schema, _thaw(self.source))
        self.check_refs(root, ())
        if "$ref" in root:
            ref = root.pop("$ref")
            if (target := _as_dict(self.resolve(ref, ()))) is None:
                raise SchemaError(f"(root): '$ref' {ref!r} does not point to a schema object.")
            root, self.root_ref = self.merge(target, root, ()), ref
            self.note((), f"inlined the root '$ref' {ref!r} (tool arguments need an object root)")
        types = _types(root)
        if "object" not in types and "type" in root:
            shown = json.dumps(root["type"])
            raise UnsupportedError(f"(root): tool arguments must be an object, not type {shown}.")
        if root.get("nullable") is not None:
            # Arguments are always an object, never null: a nullable root would make strict mode
            # wrap the root in anyOf, which providers reject.
            root.pop("nullable")
            self.note((), "dropped 'nullable' (tool arguments are always an object)")
        if root.get("type") != "object":
            root["type"] = "object"
            self.note((), 'set "type": "object" (tool arguments are an object)')
        if "properties" not in root:
            root["properties"] = {}
            self.note((), "added empty 'properties'")
        self.object_parts(root, ())
        return root

    # -- openai, anthropic, mcp -----------------------------------------------------------

    def light(self) -> _Schema:
        root = self.prepare_root()
        if self.dialect != "mcp" and "$schema" in root:
            self.drop(root, (), "$schema")
        return root

    # -- openai-strict ----------------------------------------------------------------------

    def strict(self) -> _Schema:
        root = self.prepare_root()
        root.pop("$defs", None)  # emitted again below, with only what is still referenced
        root.pop("definitions", None)
        if "$schema" in root:
            self.drop(root, (), "$schema")
        if "anyOf" in root or "oneOf" in root:
            raise self.unsupported((), "a union ('anyOf') at the root")
        out = self.strict_node(root, ())
        done: dict[tuple[str, str], _Schema] = {}
        while pending := [key for key in self._kept if key not in done]:
            for container, name in pending:
                body = _thaw(self.source[container][name])
                done[container, name] = self.strict_node(body, (container, name))
        for container in ("$defs", "definitions"):
            for name in _as_dict(self.source.get(container)) or {}:
                if (container, name) in done:
                    out.setdefault(container, {})[name] = done[container, name]
                else:
                    self.note((container, name), "dropped (nothing refers to it any more)")
        self.check_strict_limits(out)
        return out

    def strict_node(self, raw: Any, path: _Path) -> _Schema:
        node = self.as_schema(raw, path)
        if "$ref" in node:
            return self.strict_ref(node, path)
        if "allOf" in node:
            return self.merge_all_of(node, path, self.strict_node)
        if (nullable := node.pop("nullable", None)) is not None:
            done = "replaced 'nullable' with a 'null' type" if nullable is True else "dropped it"
            self.note(path, f"{done} ('nullable' is not JSON Schema)")
        self.prepare(node, path)
        if "type" not in node and "anyOf" not in node:
            raise self.unsupported(path, "a schema without a type (any value)")
        if branches := _as_list(node.get("anyOf")):
            steps = enumerate(branches)
            node["anyOf"] = [self.strict_node(b, (*path, f"anyOf[{i}]")) for i, b in steps]
        types = _types(node)
        if "object" in types:
            self.strict_object(node, path)
        if "array" in types:
            self.tuple_items(node, path, self.strict_node)
        if "format" in node and str(node["format"]) not in _STRICT_FORMATS:
            self.drop(node, path, "format")
        self.finish(node, path, _STRICT_KEYWORDS)
        return _nullable(node) if nullable is True else node

    def strict_ref(self, node: _Schema, path: _Path) -> _Schema:
        ref = node["$ref"]
        self.resolve(ref, path)  # a clear error, with this path, for a bad reference
        parts = unquote(ref[1:]).split("/")
        by_name = len(parts) == 3 and parts[0] == "" and parts[1] in ("$defs", "definitions")
        if len(node) == 1 and (ref == "#" or by_name):
            if by_name:
                self._kept[parts[1], _unescape(parts[2])] = None
            return node
        if self.is_recursive(ref):
            if len(node) == 1:
                raise self.unsupported(path, f"the recursive '$ref' {ref!r} to a nested location")
            # Strict mode rejects keywords next to `$ref` but accepts them next to `anyOf`.
            node["anyOf"] = [{"$ref": node.pop("$ref")}]
            self.note(path, "moved '$ref' into 'anyOf' (openai-strict rejects its siblings)")
            return self.strict_node(node, path)
        refs: list[str] = []
        merged = self.flatten_ref(node, path, refs)
        why = "keywords next to '$ref'" if len(node) > 1 else "'$ref' to nested locations"
        self.note(path, f"inlined '$ref' {ref!r} (openai-strict rejects {why})")
        return self.inline(merged, path, refs, self.strict_node)

    def strict_object(self, node: _Schema, path: _Path) -> None:
        props, required = self.object_parts(node, path)
        extra = node.get("additionalProperties", _MISSING)
        if _as_dict(extra):
            raise self.unsupported(path, "'additionalProperties' with a schema (a free-form dict)")
        # `properties: {}` declares an empty object (a Pydantic model without fields), while no
        # `properties` at all means any object.
        if _is_free_form(node) or ("properties" not in node and extra is not False):
            raise self.unsupported(path, _FREE_FORM)
        if extra is not False:
            was = "unset" if extra is _MISSING else json.dumps(extra)
            self.note(path, f"set 'additionalProperties' to false (was {was}; objects are closed)")
            node["additionalProperties"] = False
        out: _Schema = {}
        for name, sub in props.items():
            out[name] = self.strict_node(sub, (*path, "properties", name))
            if name not in required:
                made = "required" if _accepts_null(out[name]) else "required and nullable"
                out[name] = _nullable(out[name])
                self.note((*path, "properties", name), f"made {made} ({_EVERY_PROPERTY})")
        for name in required:
            if name not in out:
                self.note(path, f"dropped {name!r} from 'required' (no such property)")
        node["properties"], node["required"] = out, list(out)

    def check_strict_limits(self, root: _Schema) -> None:
        totals = dict.fromkeys(_STRICT_LIMITS, 0)

        def visit(node: Any, path: _Path, depth: int) -> None:
            if (schema := _as_dict(node)) is None:
                return
            if (props := _as_dict(schema.get("properties")) or {}) and depth > _STRICT_MAX_DEPTH:
                raise self.unsupported(path, f"objects nested over {depth - 1} levels deep")
            values = _as_list(schema.get("enum")) or []
            strings = [v for v in values if isinstance(v, str)]
            defs = [
                *(_as_dict(schema.get("$defs")) or ()),
                *(_as_dict(schema.get("definitions")) or ()),
            ]
            totals["properties"] += len(props)
            totals["enum values"] += len(values)
            totals[_CHARS] += sum(map(len, [*props, *defs, *strings]))
            count, chars = _STRICT_BIG_ENUM
            if len(strings) > count and sum(map(len, strings)) > chars:
                raise self.unsupported(
                    path, f"over {count} enum strings of over {chars} characters"
                )
            for sub, sub_path in _children(schema, path):
                visit(sub, sub_path, depth + (sub_path[len(path)] == "properties"))

        visit(root, (), 0)
        for what, limit in _STRICT_LIMITS.items():
            if totals[what] > limit:
                raise self.unsupported((), f"{totals[what]} {what} (the limit is {limit})")

    # -- gemini -----------------------------------------------------------------------------

    def gemini(self) -> _Schema:
        root = self.prepare_root()
        for key in ("$defs", "definitions"):
            if key in root:
                del root[key]
                self.note((), f"dropped '{key}' (gemini has no references; each use is inlined)")
        if "anyOf" in root or "oneOf" in root:
            raise self.unsupported((), "a union ('anyOf') at the root")
        if _is_free_form(root):
            raise self.unsupported((), _FREE_FORM)
        self._inlining.extend(["#", *([self.root_ref] if self.root_ref else [])])
        return self.gemini_node(root, ())

    def gemini_node(self, raw: Any, path: _Path) -> _Schema:
        if raw is True:
            self.note(path, "replaced the schema `true` with {}")
            return {}
        node = self.as_schema(raw, path)
        if "$ref" in node:
            refs: list[str] = []
            merged = self.flatten_ref(node, path, refs)
            self.note(path, f"inlined '$ref' {refs[0]!r} (gemini has no references)")
            return self.inline(merged, path, refs, self.gemini_node)
        if "allOf" in node:
            return self.merge_all_of(node, path, self.gemini_node)
        self.prepare(node, path)
        if branches := _as_list(node.get("anyOf")):
            kept = [b for b in branches if not _is_null_schema(b)]
            if not kept:
                raise self.unsupported(path, "a value that can only be null")
            if len(kept) < len(branches):
                node["nullable"] = True
                self.note(path, "replaced the null branch of 'anyOf' with 'nullable'")
            if len(kept) == 1:
                del node["anyOf"]
                self.note(path, "unwrapped the only other branch of 'anyOf'")
                return self.gemini_node(self.merge(self.as_schema(kept[0], path), node, path), path)
            node["anyOf"] = [
                self.gemini_node(b, (*path, f"anyOf[{i}]")) for i, b in enumerate(kept)
            ]
        types = _types(node)
        names = [t for t in types if t != "null"]
        if types and not names:
            raise self.unsupported(path, "a value that can only be null")
        if isinstance(node.get("type"), list):
            if not types:
                raise self.unsupported(path, "an empty 'type' list (no value satisfies it)")
            if len(names) < len(types):
                node["nullable"] = True
            if len(names) > 1:
                return self.gemini_split(node, names, path)
            node["type"] = names[0]
            self.note(path, "replaced the type list with one type and 'nullable'")
        kind = node.get("type")
        if kind == "object":
            self.gemini_object(node, path)
        if kind == "array":
            self.tuple_items(node, path, self.gemini_node)
        self.gemini_enum(node, path)
        for bound, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(node.get(bound), int | float) and inclusive not in node:
                node[inclusive] = node.pop(bound)
                self.note(path, f"replaced '{bound}' with '{inclusive}' (no exclusive bounds)")
        if "format" in node and str(node["format"]) not in _GEMINI_FORMATS.get(str(kind), ()):
            self.drop(node, path, "format")
        self.finish(node, path, _GEMINI_KEYWORDS)
        return node

    def gemini_split(self, node: _Schema, names: list[str], path: _Path) -> _Schema:
        """Turn `type: [a, b]` into `anyOf` branches, each with its own type's keywords."""
        if "anyOf" in node:
            raise self.unsupported(path, "a type list next to 'anyOf'")
        base = {k: v for k, v in node.items() if k not in _TYPE_SPECIFIC and k != "type"}
        base["anyOf"] = [
            {"type": n, **{k: v for k, v in node.items() if k in _BY_TYPE[n]}} for n in names
        ]
        self.note(path, "replaced the type list with 'anyOf' (gemini takes one type)")
        return self.gemini_node(base, path)

    def gemini_object(self, node: _Schema, path: _Path) -> None:
        props, required = self.object_parts(node, path)
        if path and (_is_free_form(node) or "properties" not in node):
            raise self.unsupported(path, _FREE_FORM)
        if path and not props:  # Gemini answers "should be non-empty for OBJECT type"
            raise self.unsupported(path, "an object with no properties")
        out = {
            name: self.gemini_node(sub, (*path, "properties", name)) for name, sub in props.items()
        }
        node["properties"] = out
        node.pop("required", None)
        if kept := [name for name in required if name in out]:
            node["required"] = kept
        for name in required:
            if name not in out:
                self.note(path, f"dropped {name!r} from 'required' (no such property)")

    def gemini_enum(self, node: _Schema, path: _Path) -> None:
        if (values := _as_list(node.get("enum"))) is None:
            return
        if None in values:
            values = [v for v in values if v is not None]
            node["nullable"] = True
            self.note(path, "replaced null in 'enum' with 'nullable'")
        node["enum"] = values
        if values and all(isinstance(v, str) for v in values):
            return
        # Gemini enums hold strings only; the allowed values still guide the model as prose.
        del node["enum"]
        if values:
            hint = "Allowed values: " + ", ".join(json.dumps(v) for v in values) + "."
            text = node.get("description")
            node["description"] = f"{text} ({hint})" if isinstance(text, str) and text else hint
            self.note(path, "moved the non-string 'enum' into the description (strings only)")
