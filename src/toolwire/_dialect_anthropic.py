# Provider documentation these rules were taken from (read for the rules; the wording here is ours):
#   https://platform.claude.com/docs/en/build-with-claude/structured-outputs
#   (strict tool use, "JSON Schema limitations"; generally available, no beta header)
"""The `anthropic-strict` dialect: a tool schema as Anthropic's strict tool use takes it.

Anthropic's strict mode (`strict: true` on a tool) constrains the model's tool input to the schema,
for a subset of JSON Schema: every object closed (`additionalProperties: false`); no numeric bounds
(`minimum`, `maximum`, `multipleOf`, exclusive bounds), no string lengths, no array bounds beyond
`minItems` 0 or 1; a few string formats; simple `pattern`s (no backreferences, lookaround or
`\\b`); enums of primitive values; local `$ref`s but no recursion. Unlike OpenAI's strict mode,
optional properties stay optional (no null stands in for them).

`strict_anthropic` rewrites a schema already compiled for the light `anthropic` dialect, writing
every change into the report; what it cannot express raises `UnsupportedError`, and the tool then
goes out without `strict`. A dropped constraint is still checked by toolwire's own validation.
`strict_over_limits` checks the per-request caps (strict tools, optional and union parameters).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from ._schema_check import as_dict, as_list, where
from .errors import UnsupportedError

__all__ = ["STRICT_LIMITS", "strict_anthropic", "strict_over_limits"]

_Schema = dict[str, Any]
_Path = tuple[str, ...]
_NAME = "anthropic-strict"

_KEPT = frozenset(
    {"type", "description", "title", "default", "properties", "required"}
    | {"additionalProperties", "items", "anyOf", "allOf", "enum", "const", "$ref"}
    | {"$defs", "definitions", "format", "pattern", "minItems"}
)
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_UNSUPPORTED_REGEX = re.compile(r"\(\?<?[=!]|\\b|\\B|\\[1-9]|\\k<")
_PRIMITIVES = (str, int, float, bool, type(None))

STRICT_LIMITS = {"strict tools": 20, "optional parameters": 24, "union parameters": 16}
"""Anthropic's caps on one request's strict tools, over all their schemas together."""


def strict_anthropic(schema: _Schema, changes: list[str]) -> _Schema:
    """`schema` (compiled for `anthropic`) rewritten for Anthropic's strict mode, in place;
    each change appended to `changes`.

    Raises:
        UnsupportedError: something strict mode cannot express (a free-form dict, a recursive
            `$ref`, a tuple, a non-primitive enum), naming the path.
    """
    _Pass(schema, changes).node(schema, ())
    return schema


def strict_over_limits(schemas: Sequence[Mapping[str, Any]]) -> str | None:
    """Why these strict tool schemas, sent together, pass Anthropic's per-request caps
    (`STRICT_LIMITS`), or `None` when they fit."""
    optional = unions = 0
    for schema in schemas:
        for node in _nodes(schema):
            props = as_dict(node.get("properties")) or {}
            required = set(as_list(node.get("required")) or ())
            optional += sum(1 for name in props if name not in required)
            unions += sum(1 for sub in props.values() if _is_union(sub))
    counts = {
        "strict tools": len(schemas),
        "optional parameters": optional,
        "union parameters": unions,
    }
    over = [
        f"{counts[k]} {k} (at most {limit})"
        for k, limit in STRICT_LIMITS.items()
        if counts[k] > limit
    ]
    return "; ".join(over) if over else None


def _is_union(node: Any) -> bool:
    schema = as_dict(node) or {}
    return "anyOf" in schema or isinstance(schema.get("type"), list)


def _nodes(node: Any) -> Iterator[_Schema]:
    """Every subschema (objects only), the root first."""
    if (schema := as_dict(node)) is None:
        return
    yield schema
    for key in ("properties", "$defs", "definitions"):
        for sub in (as_dict(schema.get(key)) or {}).values():
            yield from _nodes(sub)
    for key in ("anyOf", "allOf"):
        for sub in as_list(schema.get(key)) or ():
            yield from _nodes(sub)
    yield from _nodes(schema.get("items"))


class _Pass:
    def __init__(self, root: _Schema, changes: list[str]) -> None:
        self.root = root
        self.changes = changes
        self.visiting: list[str] = []

    def note(self, path: _Path, text: str) -> None:
        self.changes.append(f"{where(path)}: {text}")

    def unsupported(self, path: _Path, text: str) -> UnsupportedError:
        return UnsupportedError(f"{where(path)}: {_NAME} cannot express {text}.")

    def drop(self, node: _Schema, path: _Path, key: str, why: str) -> None:
        node.pop(key)
        self.note(path, f"dropped '{key}' ({_NAME} {why}; toolwire still checks it)")

    def node(self, raw: Any, path: _Path) -> None:
        if not isinstance(raw, dict):
            raise self.unsupported(path, f"the schema {raw!r} (any value)")
        node = cast(_Schema, raw)
        if "$ref" in node:
            self.ref(str(node["$ref"]), path)
        if "oneOf" in node and "anyOf" not in node:
            node["anyOf"] = node.pop("oneOf")
            self.note(path, "replaced 'oneOf' with 'anyOf' (exclusivity is still checked locally)")
        self.tuple_items(node, path)
        self.keywords(node, path)
        types = node.get("type")
        is_object = types == "object" or (isinstance(types, list) and "object" in types)
        if is_object or "properties" in node:
            self.object(node, path)
        self.children(node, path)

    def tuple_items(self, node: _Schema, path: _Path) -> None:
        """A tuple becomes `items` taking any of its members (strict mode has no tuples)."""
        members = as_list(node.get("prefixItems"))
        rest = node.get("items")
        if (old_form := as_list(rest)) is not None:
            members, rest = old_form, None
        if members is None:
            return
        node.pop("prefixItems", None)
        schemas: list[Any] = [*members, *([rest] if isinstance(rest, dict) else [])]
        node["items"] = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        self.note(path, "replaced tuple 'prefixItems' with 'items' taking any of its members")

    def keywords(self, node: _Schema, path: _Path) -> None:
        for key in [k for k in node if k not in _KEPT]:
            self.drop(node, path, key, "takes no such constraint")
        if "format" in node and (
            not isinstance(node["format"], str) or node["format"] not in _FORMATS
        ):
            self.drop(node, path, "format", f"takes no format {node['format']!r}")
        if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
            self.drop(node, path, "minItems", "takes minItems 0 or 1 only")
        pattern = node.get("pattern")
        if isinstance(pattern, str) and _UNSUPPORTED_REGEX.search(pattern):
            self.drop(node, path, "pattern", "takes no lookaround, backreference or \\b")
        values = as_list(node.get("enum"))
        if values is not None and not all(isinstance(v, _PRIMITIVES) for v in values):
            raise self.unsupported(path, "an 'enum' of objects or arrays")
        if "const" in node and not isinstance(node["const"], _PRIMITIVES):
            raise self.unsupported(path, "a 'const' object or array")
        for part in as_list(node.get("allOf")) or ():
            if isinstance(part, dict) and "$ref" in part:
                raise self.unsupported(path, "an 'allOf' with a '$ref'")

    def object(self, node: _Schema, path: _Path) -> None:
        extra = node.get("additionalProperties", None)
        if isinstance(extra, dict) or "properties" not in node:
            raise self.unsupported(path, "an object without declared properties (a free-form dict)")
        if extra is not False:
            node["additionalProperties"] = False
            was = "unset" if extra is None else repr(extra)
            self.note(path, f"set 'additionalProperties' to false (was {was}; {_NAME} needs it)")

    def children(self, node: _Schema, path: _Path) -> None:
        visit: Callable[[Any, _Path], None] = self.node
        for key in ("properties", "$defs", "definitions"):
            for name, sub in (as_dict(node.get(key)) or {}).items():
                visit(sub, (*path, key, name))
        for key in ("anyOf", "allOf"):
            for i, sub in enumerate(as_list(node.get(key)) or ()):
                visit(sub, (*path, f"{key}[{i}]"))
        if "items" in node:
            visit(node["items"], (*path, "items"))

    def ref(self, ref: str, path: _Path) -> None:
        """Refuse a `$ref` that comes back to itself (strict mode has no recursion)."""
        if ref == "#" or ref in self.visiting:
            raise self.unsupported(path, f"the recursive '$ref' {ref!r}")
        target: Any = self.root
        for token in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
            target = (as_dict(target) or {}).get(token.replace("~1", "/").replace("~0", "~"))
        self.visiting.append(ref)
        try:
            for sub in _nodes(target):
                if isinstance(inner := sub.get("$ref"), str):
                    self.ref(inner, path)
        finally:
            self.visiting.pop()
