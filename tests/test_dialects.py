"""Tests for the per-provider schema compilers in `toolwire._dialects`."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import datetime
from enum import Enum
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from toolwire._dialects import DIALECTS, CompiledSchema, Dialect, compile_dialect, strict_problem
from toolwire.errors import SchemaError, UnsupportedError

try:
    import jsonschema
except ImportError:  # pragma: no cover - jsonschema comes with the mcp extra
    jsonschema = None


def valid(instance: Any, schema: dict[str, Any]) -> bool:
    """Whether a real JSON Schema validator accepts the instance."""
    return jsonschema.Draft202012Validator(schema).is_valid(instance)


# Schemas found valid against the 2020-12 meta-schema, by their canonical JSON. Every check walks
# the whole meta-schema, and the property tests below check outputs that are often one schema
# (three dialects that change nothing below the root give the same output): each distinct schema
# is still checked, once.
_META_VALID: set[str] = set()


def check_meta_schema(schema: dict[str, Any]) -> None:
    if jsonschema is None:
        return
    key = json.dumps(schema, sort_keys=True)
    if key not in _META_VALID:
        jsonschema.Draft202012Validator.check_schema(schema)
        _META_VALID.add(key)


# What OpenAI documents as accepted in strict mode (Structured Outputs "Supported schemas").
STRICT_ALLOWED = {
    "type", "description", "title", "properties", "required", "additionalProperties", "items",
    "anyOf", "enum", "$ref", "$defs", "definitions", "pattern", "format", "multipleOf",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
}  # fmt: skip
STRICT_FORMATS = {
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
}
# Gemini's Schema object (an OpenAPI 3.0 subset), minus `title`, which toolwire strips.
GEMINI_ALLOWED = {
    "type", "format", "description", "nullable", "enum", "items", "properties", "required",
    "anyOf", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
    "minProperties", "maxProperties", "propertyOrdering", "default", "example",
}  # fmt: skip


def subschemas(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema object in a compiled schema, with a readable path."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            yield from subschemas(sub, f"{path}.{key}.{name}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from subschemas(sub, f"{path}.{key}[{i}]")
    for key in ("items", "additionalProperties", "not"):
        yield from subschemas(schema.get(key), f"{path}.{key}")


def is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def resolve(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for token in ref.lstrip("#").split("/")[1:]:
        node = node[token]
    return node


def check_strict(out: dict[str, Any]) -> None:
    """The invariants OpenAI's strict mode demands of every schema it accepts."""
    assert out["type"] == "object"
    assert "anyOf" not in out
    for path, node in subschemas(out):
        assert set(node) <= STRICT_ALLOWED, path
        if "$ref" in node:
            assert set(node) == {"$ref"}, path
            assert isinstance(resolve(out, node["$ref"]), dict), path
        if path and ("$defs" in node or "definitions" in node):
            pytest.fail(f"nested definitions at {path}")
        if is_object(node):
            assert node["additionalProperties"] is False, path
            assert node["required"] == list(node["properties"]), path
        if "format" in node:
            assert node["format"] in STRICT_FORMATS, path
        assert "type" in node or "anyOf" in node or "$ref" in node, path


def check_gemini(out: dict[str, Any]) -> None:
    assert out["type"] == "object"
    text = json.dumps(out)
    for banned in ('"$ref"', '"$defs"', '"definitions"', '"additionalProperties"', '"const"'):
        assert banned not in text
    for path, node in subschemas(out):
        assert set(node) <= GEMINI_ALLOWED, path
        assert not isinstance(node.get("type"), list), path
        assert node.get("type") != "null", path
        if "enum" in node:
            assert all(isinstance(v, str) for v in node["enum"]), path
        if node.get("type") == "object" and path:
            assert node["properties"], path
        assert set(node.get("required", [])) <= set(node.get("properties", {})), path
        if "properties" in node:
            assert node.get("type") == "object", path


# -- Pydantic-generated schemas ---------------------------------------------------------


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Address(pydantic.BaseModel):
    street: str
    zip: str | None = None


class Node(pydantic.BaseModel):
    value: int
    children: list[Node] = []


class Order(TypedDict):
    name: str
    color: Color
    when: datetime
    addresses: list[Address]
    billing: Address | None
    kind: Literal["a", "b"]
    pair: tuple[int, str]
    note: pydantic.Json[Any] | None


class WithCounts(TypedDict):
    counts: dict[str, int]


class Described(pydantic.BaseModel):
    home: Address = pydantic.Field(description="Where they live")
    size: int = pydantic.Field(3, ge=1, le=10)
    email: str = pydantic.Field(pattern=r"^\S+@\S+$", min_length=3)


def order_schema() -> dict[str, Any]:
    return pydantic.TypeAdapter(Order).json_schema()


ORDER_EXAMPLE = {
    "name": "n",
    "color": "red",
    "when": "2024-01-01T00:00:00Z",
    "addresses": [{"street": "s", "zip": None}],
    "billing": None,
    "kind": "a",
    "pair": [1, "x"],
    "note": None,
}

# Real MCP `inputSchema`s, as servers built on zod-to-json-schema and the Python SDK send them.
MCP_READ_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "tail": {"type": "number", "description": "Only the last N lines"},
        "head": {"type": "number", "description": "Only the first N lines"},
    },
    "required": ["path"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
MCP_EDIT_FILE = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Text to search for"},
                    "newText": {"type": "string", "description": "Text to replace with"},
                },
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
        "dryRun": {"type": "boolean", "default": False, "description": "Preview only"},
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
MCP_NO_ARGS = {"type": "object"}
MCP_PYTHON_SDK = {
    "$defs": {
        "Unit": {"enum": ["c", "f"], "title": "Unit", "type": "string"},
    },
    "properties": {
        "city": {"title": "City", "type": "string"},
        "unit": {"$ref": "#/$defs/Unit", "default": "c"},
        "days": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "default": None,
            "title": "Days",
        },
    },
    "required": ["city"],
    "title": "get_forecastArguments",
    "type": "object",
}
MCP_SCHEMAS = [MCP_READ_FILE, MCP_EDIT_FILE, MCP_NO_ARGS, MCP_PYTHON_SDK]


def changes_at(compiled: CompiledSchema, path: str) -> list[str]:
    return [c for c in compiled.changes if c.startswith(f"{path}: ")]


# -- all dialects ------------------------------------------------------------------------


def test_dialects_are_listed() -> None:
    assert DIALECTS == ("openai-strict", "openai", "anthropic", "anthropic-strict", "gemini", "mcp")


def test_public_names() -> None:
    from toolwire import _dialects

    assert set(_dialects.__all__) == {
        "DIALECTS",
        "CompiledSchema",
        "Dialect",
        "compile_dialect",
        "strict_problem",
    }


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="Unknown schema dialect"):
        compile_dialect({"type": "object"}, "cohere")  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "schema",
    [order_schema(), Described.model_json_schema(), *MCP_SCHEMAS],
    ids=["order", "described", "read_file", "edit_file", "no_args", "python_sdk"],
)
def test_input_is_never_mutated_and_output_is_fresh(dialect: str, schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    first = compile_dialect(schema, dialect)  # type: ignore[arg-type]
    assert schema == before
    assert first.dialect == dialect
    snapshot = copy.deepcopy(first.schema)
    for _, node in subschemas(first.schema):
        for value in node.values():
            if isinstance(value, list):
                value.append("mutated")
        node["mutated"] = True
    second = compile_dialect(schema, dialect)  # type: ignore[arg-type]
    assert second.schema == snapshot
    assert second.changes == first.changes
    assert schema == before


@pytest.mark.parametrize("dialect", DIALECTS)
def test_output_is_deterministic(dialect: str) -> None:
    runs = [compile_dialect(order_schema(), dialect) for _ in range(3)]  # type: ignore[arg-type]
    texts = {json.dumps(r.schema) for r in runs}
    assert len(texts) == 1
    assert len({r.changes for r in runs}) == 1


@pytest.mark.parametrize("dialect", DIALECTS)
def test_dangling_ref_is_a_schema_error_naming_the_path(dialect: str) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}
    with pytest.raises(
        SchemaError, match=r"properties\.a: '\$ref' '#/\$defs/Missing' points nowhere"
    ):
        compile_dialect(schema, dialect)  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_non_object_root_is_unsupported(dialect: str) -> None:
    with pytest.raises(UnsupportedError, match=r"\(root\): tool arguments must be an object"):
        compile_dialect({"type": "string"}, dialect)  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_missing_root_type_and_properties_are_added(dialect: str) -> None:
    compiled = compile_dialect({"description": "no arguments"}, dialect)  # type: ignore[arg-type]
    assert compiled.schema["type"] == "object"
    assert compiled.schema["properties"] == {}
    assert any('set "type": "object"' in c for c in changes_at(compiled, "(root)"))
    assert any("added empty 'properties'" in c for c in changes_at(compiled, "(root)"))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_root_ref_is_inlined(dialect: str) -> None:
    schema = {
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "$ref": "#/$defs/Point",
    }
    compiled = compile_dialect(schema, dialect)  # type: ignore[arg-type]
    assert compiled.schema["type"] == "object"
    assert "x" in compiled.schema["properties"]
    assert "$ref" not in compiled.schema
    assert "inlined the root '$ref' '#/$defs/Point'" in compiled.changes[0]


def test_a_mapping_that_is_not_a_dict_is_accepted() -> None:
    from types import MappingProxyType

    schema = MappingProxyType({"type": "object", "properties": MappingProxyType({})})
    assert compile_dialect(schema, "gemini").schema == {"type": "object", "properties": {}}


def test_a_schema_that_is_not_a_mapping_is_a_schema_error() -> None:
    with pytest.raises(SchemaError):
        compile_dialect([], "openai")  # type: ignore[arg-type]


# -- openai, anthropic, mcp: light touch ---------------------------------------------------


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
def test_light_dialects_drop_dollar_schema_and_keep_the_rest(dialect: str) -> None:
    compiled = compile_dialect(MCP_EDIT_FILE, dialect)  # type: ignore[arg-type]
    expected = {k: v for k, v in MCP_EDIT_FILE.items() if k != "$schema"}
    assert compiled.schema == expected
    assert compiled.changes == (f"(root): dropped '$schema' (not supported by {dialect})",)


def test_mcp_keeps_everything_including_dollar_schema() -> None:
    compiled = compile_dialect(MCP_EDIT_FILE, "mcp")
    assert compiled.schema == MCP_EDIT_FILE
    assert compiled.changes == ()


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "mcp"])
def test_light_dialects_keep_keywords_strict_mode_would_drop(dialect: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "minLength": 2}},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "any": {},
            "choice": {"oneOf": [{"type": "string"}, {"const": 3}]},
        },
    }
    assert compile_dialect(schema, dialect).schema == schema  # type: ignore[arg-type]


@pytest.mark.parametrize("schema", MCP_SCHEMAS, ids=["read", "edit", "none", "sdk"])
def test_mcp_schemas_compile_for_every_dialect(schema: dict[str, Any]) -> None:
    check_strict(compile_dialect(schema, "openai-strict").schema)
    check_gemini(compile_dialect(schema, "gemini").schema)
    for dialect in ("openai", "anthropic", "mcp"):
        out = compile_dialect(schema, dialect).schema  # type: ignore[arg-type]
        assert out["type"] == "object"
        assert "properties" in out


# -- openai-strict -------------------------------------------------------------------------


def test_strict_closes_objects_and_makes_optional_properties_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["F", "C"]},
            "where": {"type": "object", "properties": {"lat": {"type": "number"}}},
        },
        "required": ["location"],
    }
    compiled = compile_dialect(schema, "openai-strict")
    out = compiled.schema
    assert out["additionalProperties"] is False
    assert out["required"] == ["location", "unit", "where"]
    assert out["properties"]["location"] == {"type": "string"}
    assert out["properties"]["unit"] == {"type": ["string", "null"], "enum": ["F", "C", None]}
    where = out["properties"]["where"]
    assert where["anyOf"][1] == {"type": "null"}
    assert where["anyOf"][0]["additionalProperties"] is False
    assert where["anyOf"][0]["properties"]["lat"] == {"type": ["number", "null"]}
    assert changes_at(compiled, "properties.unit") == [
        "properties.unit: made required and nullable (openai-strict requires every property; "
        "null stands for a missing value)"
    ]
    assert any(
        "'additionalProperties' to false" in c for c in changes_at(compiled, "properties.where")
    )
    check_strict(out)
    if jsonschema is not None:
        assert valid({"location": "x", "unit": None, "where": None}, out)
        assert not valid({"location": "x", "unit": "K", "where": None}, out)
        assert not valid({"location": "x", "unit": None, "where": None, "extra": 1}, out)


def test_strict_reports_dropped_keywords_with_their_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "uniqueItems": True,
            },
            "site": {"type": "string", "format": "uri", "maxLength": 200},
        },
        "required": ["tags", "site"],
    }
    compiled = compile_dialect(schema, "openai-strict")
    assert (
        "properties.tags.items: dropped 'minLength' (not supported by openai-strict)"
        in compiled.changes
    )
    assert (
        "properties.tags: dropped 'uniqueItems' (not supported by openai-strict)"
        in compiled.changes
    )
    assert (
        "properties.site: dropped 'format' 'uri' (not supported by openai-strict)"
        in compiled.changes
    )
    assert (
        "properties.site: dropped 'maxLength' (not supported by openai-strict)" in compiled.changes
    )
    assert compiled.schema["properties"]["site"] == {"type": "string"}
    check_strict(compiled.schema)


def test_strict_keeps_the_documented_constraints() -> None:
    props = {
        "user": {"type": "string", "pattern": "^@[a-z]+$"},
        "mail": {"type": "string", "format": "email"},
        "temp": {"type": "number", "minimum": -130, "maximum": 130, "multipleOf": 0.5},
        "above": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 9},
        "steps": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
        "when": {"type": "string", "format": "date-time", "description": "d", "title": "When"},
    }
    schema = {"type": "object", "properties": props, "required": list(props)}
    compiled = compile_dialect(schema, "openai-strict")
    assert compiled.schema["properties"] == props
    assert compiled.changes == (
        "(root): set 'additionalProperties' to false (was unset; objects are closed)",
    )


def test_strict_adds_null_to_an_enum_that_lacks_it() -> None:
    schema = {
        "type": "object",
        "properties": {"unit": {"type": ["string", "null"], "enum": ["F", "C"]}},
    }
    out = compile_dialect(schema, "openai-strict").schema
    assert out["properties"]["unit"] == {"type": ["string", "null"], "enum": ["F", "C", None]}
    if jsonschema is not None:
        assert valid({"unit": None}, out)


def test_strict_drops_default() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 3}}}
    compiled = compile_dialect(schema, "openai-strict")
    assert compiled.schema["properties"]["n"] == {"type": ["integer", "null"]}
    assert "properties.n: dropped 'default' (not supported by openai-strict)" in compiled.changes


def test_strict_rewrites_one_of_const_and_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "shape": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "version": {"const": 2},
            "label": {"type": "string", "nullable": True},
            "mode": {"enum": ["x", 1]},
        },
        "required": ["shape", "version", "label", "mode"],
    }
    compiled = compile_dialect(schema, "openai-strict")
    props = compiled.schema["properties"]
    assert props["shape"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["version"] == {"enum": [2], "type": "integer"}
    assert props["label"] == {"type": ["string", "null"]}
    assert props["mode"] == {"enum": ["x", 1], "type": ["string", "integer"]}
    assert any(
        "replaced 'oneOf' with 'anyOf'" in c for c in changes_at(compiled, "properties.shape")
    )
    assert any("replaced 'const'" in c for c in changes_at(compiled, "properties.version"))
    assert (
        "properties.label: replaced 'nullable' with a 'null' type ('nullable' is not JSON Schema)"
        in compiled.changes
    )
    check_strict(compiled.schema)


def test_strict_pydantic_schema_keeps_plain_refs_and_validates_real_arguments() -> None:
    compiled = compile_dialect(order_schema(), "openai-strict")
    out = compiled.schema
    check_strict(out)
    assert out["properties"]["color"] == {"$ref": "#/$defs/Color"}
    assert out["properties"]["addresses"]["items"] == {"$ref": "#/$defs/Address"}
    assert out["properties"]["billing"] == {
        "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]
    }
    assert out["$defs"]["Address"]["required"] == ["street", "zip"]
    assert out["properties"]["when"]["format"] == "date-time"
    assert out["properties"]["pair"]["items"] == {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }
    if jsonschema is not None:
        assert valid(ORDER_EXAMPLE, out)
        assert not valid({**ORDER_EXAMPLE, "color": "blue"}, out)
        assert not valid({k: v for k, v in ORDER_EXAMPLE.items() if k != "billing"}, out)


def test_strict_inlines_a_ref_with_siblings() -> None:
    compiled = compile_dialect(Described.model_json_schema(), "openai-strict")
    home = compiled.schema["properties"]["home"]
    assert home["description"] == "Where they live"
    assert home["properties"]["street"] == {"title": "Street", "type": "string"}
    assert home["additionalProperties"] is False
    assert "$defs" not in compiled.schema
    assert (
        "properties.home: inlined '$ref' '#/$defs/Address' "
        "(openai-strict rejects keywords next to '$ref')" in compiled.changes
    )
    assert "$defs.Address: dropped (nothing refers to it any more)" in compiled.changes
    email = compiled.schema["properties"]["email"]
    assert email["pattern"] == r"^\S+@\S+$"
    assert "minLength" not in email
    check_strict(compiled.schema)


def test_strict_handles_recursive_pydantic_models() -> None:
    compiled = compile_dialect(pydantic.TypeAdapter(Node).json_schema(), "openai-strict")
    out = compiled.schema
    check_strict(out)
    children = out["properties"]["children"]["anyOf"][0]
    assert children["items"] == {"$ref": "#/$defs/Node"}
    assert out["$defs"]["Node"]["additionalProperties"] is False
    tree = {"value": 1, "children": [{"value": 2, "children": None}]}
    if jsonschema is not None:
        assert valid(tree, out)
        assert not valid({"value": 1, "children": [{"value": "x", "children": None}]}, out)


def test_strict_wraps_a_recursive_ref_with_siblings_in_any_of() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/T", "description": "the tree"}},
        "required": ["root"],
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}},
                "required": ["kids"],
            }
        },
    }
    compiled = compile_dialect(schema, "openai-strict")
    assert compiled.schema["properties"]["root"] == {
        "description": "the tree",
        "anyOf": [{"$ref": "#/$defs/T"}],
    }
    assert "T" in compiled.schema["$defs"]
    check_strict(compiled.schema)


def test_strict_merges_all_of() -> None:
    schema = {
        "type": "object",
        "properties": {
            "single": {"allOf": [{"$ref": "#/$defs/A"}], "description": "one"},
            "both": {
                "allOf": [
                    {"$ref": "#/$defs/A"},
                    {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
                ]
            },
        },
        "required": ["single", "both"],
        "$defs": {
            "A": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
        },
    }
    compiled = compile_dialect(schema, "openai-strict")
    props = compiled.schema["properties"]
    assert props["single"]["description"] == "one"
    assert props["single"]["properties"] == {"a": {"type": "string"}}
    assert props["both"]["properties"] == {"a": {"type": "string"}, "b": {"type": "integer"}}
    assert props["both"]["required"] == ["a", "b"]
    assert "properties.single: inlined the single schema of 'allOf'" in compiled.changes
    assert "properties.both: merged the 2 schemas of 'allOf'" in compiled.changes
    check_strict(compiled.schema)


def test_all_of_merges_an_empty_properties_object() -> None:
    parts = [
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"a": {"type": "string"}}},
    ]
    schema = {"type": "object", "properties": {"x": {"allOf": parts}}, "required": ["x"]}
    for dialect in ("openai-strict", "gemini"):
        out = compile_dialect(schema, dialect).schema  # type: ignore[arg-type]
        assert list(out["properties"]["x"]["properties"]) == ["a"]


def test_strict_refuses_an_all_of_it_cannot_merge() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
    }
    with pytest.raises(
        UnsupportedError,
        match=r"properties\.x: openai-strict cannot express an 'allOf' of different types",
    ):
        compile_dialect(schema, "openai-strict")


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            "'additionalProperties' with a schema",
        ),
        ({"type": "object"}, "an object without declared properties"),
        ({"type": "object", "additionalProperties": True}, "an object without declared properties"),
        ({"description": "anything"}, "a schema without a type"),
        ({}, "a schema without a type"),
        ({"type": "array"}, "an array without 'items'"),
        (True, "the schema `true`"),
        ({"$ref": "https://example.com/s.json"}, "only local JSON pointers"),
    ],
)
def test_strict_refuses_what_it_cannot_express_naming_the_path(prop: Any, message: str) -> None:
    schema = {"type": "object", "properties": {"p": {"type": "array", "items": prop}}}
    with pytest.raises(UnsupportedError) as info:
        compile_dialect(schema, "openai-strict")
    assert str(info.value).startswith("properties.p.items: openai-strict cannot express ")
    assert message in str(info.value)
    assert strict_problem(schema) == str(info.value)


def test_strict_refuses_a_pydantic_dict_field() -> None:
    schema = pydantic.TypeAdapter(WithCounts).json_schema()
    problem = strict_problem(schema)
    assert problem is not None
    assert problem.startswith("properties.counts: ")


def test_strict_refuses_a_union_at_the_root() -> None:
    schema = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}
    with pytest.raises(UnsupportedError, match=r"\(root\): openai-strict cannot express a union"):
        compile_dialect(schema, "openai-strict")


def test_strict_accepts_an_object_root_without_properties_as_no_arguments() -> None:
    compiled = compile_dialect(MCP_NO_ARGS, "openai-strict")
    assert compiled.schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }


class Empty(pydantic.BaseModel):
    pass


class HasEmpty(pydantic.BaseModel):
    options: Empty


def test_an_empty_model_is_a_closed_empty_object_for_strict_and_unsupported_by_gemini() -> None:
    schema = HasEmpty.model_json_schema()
    out = compile_dialect(schema, "openai-strict").schema
    check_strict(out)
    assert out["$defs"]["Empty"] == {
        "properties": {},
        "title": "Empty",
        "type": "object",
        "additionalProperties": False,
        "required": [],
    }
    with pytest.raises(
        UnsupportedError,
        match=r"^properties\.options: gemini cannot express an object with no properties",
    ):
        compile_dialect(schema, "gemini")


def test_strict_refuses_a_free_form_root() -> None:
    assert strict_problem({"type": "object", "additionalProperties": True}) is not None
    assert (
        strict_problem({"type": "object", "patternProperties": {"^x": {"type": "string"}}})
        is not None
    )


def test_strict_allows_extra_properties_closing_an_object_that_declares_some() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": True,
    }
    compiled = compile_dialect(schema, "openai-strict")
    assert compiled.schema["additionalProperties"] is False
    assert (
        "(root): set 'additionalProperties' to false (was true; objects are closed)"
        in compiled.changes
    )


def test_strict_limits_are_checked() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(12):
        deep = {"type": "object", "properties": {"x": deep}, "required": ["x"]}
    with pytest.raises(UnsupportedError, match="nested over"):
        compile_dialect(deep, "openai-strict")
    shallow: dict[str, Any] = {"type": "string"}
    for _ in range(10):
        shallow = {"type": "object", "properties": {"x": shallow}, "required": ["x"]}
    assert strict_problem(shallow) is None
    many = {"type": "object", "properties": {"e": {"enum": list(range(1001))}}, "required": ["e"]}
    with pytest.raises(UnsupportedError, match=r"1001 enum values \(the limit is 1000\)"):
        compile_dialect(many, "openai-strict")


def test_strict_problem_is_none_for_a_good_schema() -> None:
    assert strict_problem(order_schema()) is None
    assert strict_problem(MCP_READ_FILE) is None


def test_strict_reports_required_names_without_a_property() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "ghost"]}
    compiled = compile_dialect(schema, "openai-strict")
    assert compiled.schema["required"] == ["a"]
    assert "(root): dropped 'ghost' from 'required' (no such property)" in compiled.changes


def test_strict_supports_draft_7_definitions() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/P"}},
        "required": ["p"],
        "definitions": {
            "P": {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}
        },
    }
    out = compile_dialect(schema, "openai-strict").schema
    assert out["properties"]["p"] == {"$ref": "#/definitions/P"}
    assert out["definitions"]["P"]["additionalProperties"] is False
    check_strict(out)
    inlined = compile_dialect(schema, "gemini").schema
    assert inlined["properties"]["p"] == {
        "type": "object",
        "properties": {"q": {"type": "integer"}},
        "required": ["q"],
    }
    check_gemini(inlined)


# -- gemini --------------------------------------------------------------------------------


def test_gemini_inlines_refs_and_turns_optional_into_nullable() -> None:
    compiled = compile_dialect(order_schema(), "gemini")
    out = compiled.schema
    check_gemini(out)
    props = out["properties"]
    assert props["color"] == {"enum": ["red", "green"], "type": "string"}
    assert props["billing"]["nullable"] is True
    assert props["billing"]["type"] == "object"
    assert props["billing"]["properties"]["zip"] == {
        "type": "string",
        "default": None,
        "nullable": True,
    }
    assert props["addresses"]["items"]["required"] == ["street"]
    assert props["when"] == {"format": "date-time", "type": "string"}
    assert (
        "properties.color: inlined '$ref' '#/$defs/Color' (gemini has no references)"
        in compiled.changes
    )
    assert "properties.name: dropped 'title' (not supported by gemini)" in compiled.changes
    assert (
        "(root): dropped '$defs' (gemini has no references; each use is inlined)"
        in compiled.changes
    )


def test_gemini_refuses_recursion_naming_the_path() -> None:
    with pytest.raises(
        UnsupportedError,
        match=r"^properties\.children\.items: gemini cannot express the recursive '\$ref'",
    ):
        compile_dialect(pydantic.TypeAdapter(Node).json_schema(), "gemini")


def test_gemini_refuses_a_dict() -> None:
    with pytest.raises(
        UnsupportedError,
        match=r"^properties\.counts: gemini cannot express an object without declared properties",
    ):
        compile_dialect(pydantic.TypeAdapter(WithCounts).json_schema(), "gemini")


def test_gemini_rewrites_types_and_keywords() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"], "format": "uri", "examples": ["x"]},
            "b": {"const": "fixed"},
            "c": {"type": "integer", "enum": [1, 2, 3], "description": "Level"},
            "d": {"type": "number", "exclusiveMinimum": 0, "format": "double"},
            "e": {"oneOf": [{"type": "string"}, {"type": "integer", "format": "int32"}]},
            "f": {"type": ["string", "integer"], "minLength": 2, "minimum": 5},
            "g": {
                "type": "object",
                "properties": {"x": {"type": "string"}},
                "additionalProperties": False,
                "required": ["x", "y"],
            },
            "h": {"enum": ["on", "off", None]},
        },
        "required": ["a", "zzz"],
    }
    compiled = compile_dialect(schema, "gemini")
    props = compiled.schema["properties"]
    check_gemini(compiled.schema)
    assert props["a"] == {"type": "string", "nullable": True}
    assert props["b"] == {"enum": ["fixed"], "type": "string"}
    assert props["c"] == {"type": "integer", "description": "Level (Allowed values: 1, 2, 3.)"}
    assert props["d"] == {"type": "number", "format": "double", "minimum": 0}
    assert props["e"] == {"anyOf": [{"type": "string"}, {"type": "integer", "format": "int32"}]}
    assert props["f"] == {
        "anyOf": [{"type": "string", "minLength": 2}, {"type": "integer", "minimum": 5}]
    }
    assert props["g"] == {
        "type": "object",
        "properties": {"x": {"type": "string"}},
        "required": ["x"],
    }
    assert props["h"] == {"enum": ["on", "off"], "type": "string", "nullable": True}
    assert compiled.schema["required"] == ["a"]
    changes = set(compiled.changes)
    assert "(root): dropped '$schema' (not supported by gemini)" in changes
    assert "properties.a: dropped 'format' 'uri' (not supported by gemini)" in changes
    assert "properties.a: dropped 'examples' (not supported by gemini)" in changes
    assert "properties.g: dropped 'additionalProperties' (not supported by gemini)" in changes
    assert "properties.g: dropped 'y' from 'required' (no such property)" in changes
    assert "(root): dropped 'zzz' from 'required' (no such property)" in changes
    assert any("moved the non-string 'enum'" in c for c in changes_at(compiled, "properties.c"))
    assert any(
        "'exclusiveMinimum' with 'minimum'" in c for c in changes_at(compiled, "properties.d")
    )


def test_gemini_keeps_a_union_with_null_as_nullable_any_of() -> None:
    schema = {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}},
    }
    props = compile_dialect(schema, "gemini").schema["properties"]
    assert props["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}


def test_gemini_refuses_a_union_at_the_root() -> None:
    with pytest.raises(UnsupportedError, match=r"^\(root\): gemini cannot express a union"):
        compile_dialect(
            {"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}, "gemini"
        )


# -- property tests ------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d"])
DEFS = {
    "Leaf": {"type": "string", "minLength": 1, "title": "Leaf"},
    "Tree": {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
    },
    "Unused": {"type": "object"},
}
LEAVES = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 5),
            "pattern": st.just("^x"),
            "format": st.sampled_from(["email", "uri", "date-time"]),
            "title": st.just("T"),
            "default": st.just("x"),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(),
            "exclusiveMaximum": st.integers(),
            "multipleOf": st.just(2),
        },
    ),
    st.just({"type": "boolean", "description": "flag"}),
    st.fixed_dictionaries(
        {
            "enum": st.lists(
                st.sampled_from(["x", "y", 1, None]), min_size=1, max_size=3, unique=True
            )
        }
    ),
    st.fixed_dictionaries({"const": st.sampled_from(["k", 3, None])}),
    st.just({"type": ["string", "null"]}),
    st.just({"type": "string", "nullable": True}),
    st.just({"$ref": "#/$defs/Leaf"}),
    st.just({"$ref": "#/$defs/Leaf", "description": "via a reference"}),
    st.just({"$ref": "#/$defs/Tree"}),
    st.just({}),
    st.just({"type": "object", "additionalProperties": {"type": "integer"}}),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.fixed_dictionaries(
        {"type": st.just("object"), "properties": st.dictionaries(NAMES, children, max_size=3)},
        optional={
            "required": st.lists(NAMES, max_size=3, unique=True),
            "additionalProperties": st.sampled_from([True, False]),
            "title": st.just("O"),
        },
    )
    return st.one_of(
        objects,
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": children},
            optional={"minItems": st.integers(0, 3), "uniqueItems": st.just(True)},
        ),
        st.fixed_dictionaries(
            {"type": st.just("array"), "prefixItems": st.lists(children, min_size=1, max_size=2)}
        ),
        st.sampled_from(["anyOf", "oneOf"]).flatmap(
            lambda key: st.fixed_dictionaries({key: st.lists(children, min_size=1, max_size=3)})
        ),
        st.fixed_dictionaries({"allOf": st.lists(objects, min_size=1, max_size=2)}),
    )


SCHEMAS = st.recursive(LEAVES, _extend, max_leaves=8)
ROOTS = st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(NAMES, SCHEMAS, max_size=4)},
    optional={
        "required": st.lists(NAMES, max_size=4, unique=True),
        "$schema": st.just("http://json-schema.org/draft-07/schema#"),
    },
).map(lambda root: {**root, "$defs": copy.deepcopy(DEFS)})
PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(ROOTS)
def test_strict_output_is_refused_or_satisfies_the_strict_rules(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    problem = strict_problem(schema)
    if problem is not None:
        with pytest.raises(UnsupportedError) as info:
            compile_dialect(schema, "openai-strict")
        assert str(info.value) == problem
        assert schema == before
        return
    compiled = compile_dialect(schema, "openai-strict")
    assert schema == before
    check_strict(compiled.schema)
    check_meta_schema(compiled.schema)
    assert compile_dialect(schema, "openai-strict") == compiled


@PROPERTY_SETTINGS
@given(ROOTS)
def test_gemini_output_is_refused_or_has_no_references_or_json_schema_only_keywords(
    schema: dict[str, Any],
) -> None:
    before = copy.deepcopy(schema)
    try:
        compiled = compile_dialect(schema, "gemini")
    except UnsupportedError:
        assert schema == before
        return
    assert schema == before
    check_gemini(compiled.schema)
    assert compile_dialect(schema, "gemini") == compiled


@PROPERTY_SETTINGS
@given(ROOTS)
def test_light_dialects_change_nothing_below_the_root(schema: dict[str, Any]) -> None:
    for dialect in ("openai", "anthropic", "mcp"):
        compiled = compile_dialect(schema, dialect)  # type: ignore[arg-type]
        expected = {k: v for k, v in schema.items() if dialect == "mcp" or k != "$schema"}
        assert compiled.schema == expected
        check_meta_schema(compiled.schema)


HOSTILE_KEYS = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "enum",
        "const",
        "nullable",
        "additionalProperties",
        "format",
        "patternProperties",
        "minimum",
        "maxLength",
        "default",
        "title",
        "not",
        "a",
        "b",
    ]
)
HOSTILE_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.sampled_from(["object", "string", "array", "null", "#", "#/$defs/a", "#/properties/a"])
    | st.sampled_from(["#/definitions/a", "#/a/b", "x", "http://example.com/s", "#anchor"]),
)
HOSTILE = st.dictionaries(
    HOSTILE_KEYS,
    st.recursive(
        HOSTILE_SCALARS,
        lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(HOSTILE_KEYS, c, max_size=4)),
        max_leaves=15,
    ),
    max_size=6,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HOSTILE)
def test_hostile_schemas_only_raise_documented_errors(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    for dialect in DIALECTS:
        try:
            compiled = compile_dialect(schema, dialect)
        except (SchemaError, UnsupportedError):
            continue  # any other exception fails the test
        finally:
            assert schema == before
        assert compiled.schema["type"] == "object"
        json.dumps(compiled.schema)


def test_an_empty_type_list_is_refused_for_gemini_not_crashed_on() -> None:
    # Found by the hostile-schema property test: `{"type": []}` matches no value at all.
    with pytest.raises(UnsupportedError, match="empty 'type' list"):
        compile_dialect({"properties": {"type": {"type": []}}}, "gemini")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unknown_type_is_refused_by_every_dialect(dialect: Dialect) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "strng"}}}
    with pytest.raises(SchemaError, match=r"properties\.a\.type: unknown type 'strng'"):
        compile_dialect(schema, dialect)
