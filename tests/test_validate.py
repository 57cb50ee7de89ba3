"""Tests for the JSON Schema validator that checks every tool call's arguments."""

from __future__ import annotations

import copy
import sys
from collections import OrderedDict
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire._validate import SchemaValidator
from toolwire.errors import ArgumentProblem, SchemaError


def rendered(schema: Any, instance: Any, **kwargs: Any) -> list[str]:
    return [p.render() for p in SchemaValidator(schema).problems(instance, **kwargs)]


def assert_valid(schema: Any, instance: Any) -> None:
    validator = SchemaValidator(schema)
    assert validator.problems(instance) == []
    assert validator.is_valid(instance)


def assert_invalid(schema: Any, instance: Any) -> list[ArgumentProblem]:
    validator = SchemaValidator(schema)
    problems = validator.problems(instance)
    assert problems, f"{instance!r} should not satisfy {schema!r}"
    assert not validator.is_valid(instance)
    return problems


# --- every keyword, passing and failing -----------------------------------------------------------

KEYWORD_CASES: list[tuple[str, Any, list[Any], list[Any]]] = [
    ("true schema", True, [1, "x", None, [], {}], []),
    ("false schema", False, [], [1, "x", None, [], {}]),
    ("empty schema", {}, [1, "x", None, [1], {"a": 1}], []),
    ("string", {"type": "string"}, ["", "abc"], [1, None, True, ["a"]]),
    ("integer", {"type": "integer"}, [0, -3, 1.0, 2**80], [1.5, "1", True, False, None]),
    ("number", {"type": "number"}, [0, 1.5, -2, 1e300], [True, "1", None, [1]]),
    ("boolean", {"type": "boolean"}, [True, False], [0, 1, "true", None]),
    ("null", {"type": "null"}, [None], [0, "", False, []]),
    ("object", {"type": "object"}, [{}, {"a": 1}, OrderedDict(a=1)], [[], "x", None]),
    ("array", {"type": "array"}, [[], [1, "a"], (1, 2)], [{}, "ab", None]),
    ("type list", {"type": ["string", "null"]}, ["a", None], [1, False]),
    ("nullable", {"type": "integer", "nullable": True}, [1, None], ["1", 1.5]),
    ("nullable enum", {"type": "string", "enum": ["a"], "nullable": True}, ["a", None], ["b"]),
    ("unknown type name", {"type": "strnig"}, [1, "x", None], []),
    ("enum", {"enum": ["c", "f", 1, None]}, ["c", "f", 1, 1.0, None], ["C", 2, True, [1]]),
    ("enum of objects", {"enum": [{"a": [1]}]}, [{"a": [1.0]}], [{"a": [True]}, {"a": []}]),
    ("const", {"const": 1}, [1, 1.0], [True, "1", 2]),
    ("const true", {"const": True}, [True], [1, 1.0, "true"]),
    ("const null", {"const": None}, [None], [0, False, ""]),
    ("const array", {"const": [1, {"b": False}]}, [[1.0, {"b": False}]], [[1, {"b": 0}], [1]]),
    ("minimum", {"minimum": 2}, [2, 2.0, 3, "x"], [1, 1.99]),
    ("maximum", {"maximum": 2.5}, [2.5, -1], [2.51, 3]),
    ("exclusiveMinimum", {"exclusiveMinimum": 0}, [0.001, 1], [0, -1]),
    ("exclusiveMaximum", {"exclusiveMaximum": 10}, [9.99], [10, 11]),
    ("draft-04 exclusive min", {"minimum": 0, "exclusiveMinimum": True}, [0.5], [0]),
    ("draft-04 exclusive max", {"maximum": 5, "exclusiveMaximum": True}, [4], [5]),
    ("draft-04 non-exclusive", {"maximum": 5, "exclusiveMaximum": False}, [5], [6]),
    ("multipleOf int", {"multipleOf": 7}, [0, 21, -14, 21.0, 7 * 10**30], [22, 3.5]),
    ("multipleOf float", {"multipleOf": 0.1}, [0.3, 0.7, 1, 12.3], [0.35, 0.01]),
    ("multipleOf cents", {"multipleOf": 0.01}, [19.99, 0.07, 100], [0.001, 19.999]),
    ("multipleOf half", {"multipleOf": 1.5}, [3, 4.5, 0], [1, 2.25]),
    ("minLength", {"minLength": 2}, ["ab", "😀😀", 5], ["a", "😀", ""]),
    ("maxLength", {"maxLength": 2}, ["ab", "😀😀", ""], ["abc", "😀😀😀"]),
    ("pattern", {"pattern": "^[a-z]+$"}, ["abc", 1], ["abc\n", "Abc", ""]),
    ("pattern searches", {"pattern": "b+"}, ["abbc", "b"], ["ac"]),
    ("pattern in class", {"pattern": "^[$]x$"}, ["$x"], ["$x\n", "ax"]),
    ("escaped dollar", {"pattern": r"^\$\d+$"}, ["$12"], ["12"]),
    ("unicode property", {"pattern": r"^\p{L}+$"}, ["abc", "école"], ["123", "a1"]),
    ("ECMA digits are ASCII", {"pattern": r"^\d+$"}, ["123"], ["١٢٣", "12\n"]),
    ("ECMA named group", {"pattern": r"^(?<y>\d{4})-\k<y>$"}, ["2024-2024"], ["2024-2025"]),
    ("ECMA dot excludes line ends", {"pattern": "^a.b$"}, ["a-b"], ["a\rb", "a\u2028b"]),
    ("empty enum", {"enum": []}, [], [1, None, "x", [], {}]),
    ("format annotation", {"type": "string", "format": "email"}, ["not an email"], [3]),
    ("unknown keyword", {"x-whatever": {"type": "string"}, "type": "integer"}, [3], ["a"]),
    ("properties", {"properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}, {"b": "x"}], [{"a": "1"}]),
    ("required", {"required": ["a", "b"]}, [{"a": 1, "b": None}, "x"], [{"a": 1}, {}]),
    ("additionalProperties false", {"properties": {"a": {}}, "additionalProperties": False},
     [{"a": 1}, {}], [{"a": 1, "b": 2}]),
    ("additionalProperties schema", {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
     [{"a": "x", "b": 2}], [{"b": "2"}]),
    ("patternProperties", {"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False},
     [{"x-a": "s"}, {}], [{"x-a": 1}, {"y": "s"}]),
    ("propertyNames", {"propertyNames": {"maxLength": 3}}, [{"abc": 1}, {}], [{"abcd": 1}]),
    ("minProperties", {"minProperties": 1}, [{"a": 1}], [{}]),
    ("maxProperties", {"maxProperties": 1}, [{"a": 1}, {}], [{"a": 1, "b": 2}]),
    ("dependentRequired", {"dependentRequired": {"card": ["cvv"]}},
     [{}, {"cvv": 1}, {"card": 1, "cvv": 2}], [{"card": 1}]),
    ("dependencies array form", {"dependencies": {"card": ["cvv"]}}, [{"card": 1, "cvv": 2}], [{"card": 1}]),
    ("dependencies schema form", {"dependencies": {"card": {"required": ["cvv"]}}}, [{"x": 1}], [{"card": 1}]),
    ("dependentSchemas", {"dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}},
     [{"a": 1, "b": "x"}, {"b": 1}], [{"a": 1, "b": 1}]),
    ("items", {"items": {"type": "integer"}}, [[], [1, 2], "x"], [[1, "2"]]),
    ("prefixItems", {"prefixItems": [{"type": "string"}, {"type": "integer"}]},
     [["a", 1], ["a"], ["a", 1, None]], [[1], ["a", "b"]]),
    ("prefixItems with items false", {"prefixItems": [{"type": "string"}], "items": False},
     [["a"], []], [["a", "b"]]),
    ("prefixItems with items schema", {"prefixItems": [{}], "items": {"type": "integer"}},
     [["x", 1, 2]], [["x", "y"]]),
    ("draft-07 tuple items", {"items": [{"type": "string"}], "additionalItems": False},
     [["a"], []], [["a", 1], [1]]),
    ("additionalItems without tuple items", {"additionalItems": False}, [[1, 2]], []),
    ("draft-07 additionalItems schema", {"items": [{}], "additionalItems": {"type": "integer"}},
     [["x", 1]], [["x", "y"]]),
    ("minItems", {"minItems": 2}, [[1, 2], {}], [[1]]),
    ("maxItems", {"maxItems": 1}, [[1], []], [[1, 2]]),
    ("uniqueItems", {"uniqueItems": True}, [[1, True], [0, False], [[1], [True]], [{"a": 1}, {"a": 2}]],
     [[1, 1.0], ["a", "a"], [{"a": [1]}, {"a": [1.0]}], [None, None]]),
    ("uniqueItems false", {"uniqueItems": False}, [[1, 1]], []),
    ("contains", {"contains": {"type": "string"}}, [["a"], [1, "b"]], [[], [1, 2]]),
    ("minContains", {"contains": {"const": 1}, "minContains": 2}, [[1, 1, 2]], [[1, 2]]),
    ("minContains 0", {"contains": {"const": 1}, "minContains": 0}, [[], [2]], []),
    ("maxContains", {"contains": {"const": 1}, "maxContains": 1}, [[1, 2]], [[1, 1], [2]]),
    ("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["a", 1], [1.5, None]),
    ("oneOf", {"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5], [3, 0.5]),
    ("allOf", {"allOf": [{"minimum": 1}, {"maximum": 3}]}, [2], [0, 4]),
    ("not", {"not": {"type": "string"}}, [1, None], ["a"]),
    ("if/then/else", {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
     ["ab", 3], ["a", 1.5]),
    ("if/then only", {"if": {"minimum": 10}, "then": {"multipleOf": 5}}, [15, 3], [12]),
    ("if without then/else", {"if": False}, [1], []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [pytest.param(s, g, b, id=name) for name, s, g, b in KEYWORD_CASES],
)
def test_keyword(schema: Any, good: list[Any], bad: list[Any]) -> None:
    for instance in good:
        assert_valid(schema, instance)
    for instance in bad:
        assert_invalid(schema, instance)


def test_subschema_booleans_inside_properties() -> None:
    schema = {"properties": {"a": True, "b": False}}
    assert_valid(schema, {"a": [1]})
    assert rendered(schema, {"b": 1}) == ["b: not allowed by the schema (received 1 (integer))"]


def test_malformed_keyword_values_are_ignored() -> None:
    schema = {
        "minLength": "3",
        "properties": {"a": "string"},
        "multipleOf": 0,
        "type": 5,
    }
    assert_valid(schema, {"a": 1})


def test_non_schema_root_is_refused() -> None:
    with pytest.raises(SchemaError, match="must be an object or a boolean"):
        SchemaValidator(cast(Any, "string"))


# --- messages and paths --------------------------------------------------------------------------

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1},
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def test_messages_an_llm_can_act_on() -> None:
    assert rendered(WEATHER, {"days": "three", "unit": "kelvin", "extra": 1}) == [
        'days: expected integer (received "three" (string))',
        'unit: expected one of "c", "f" (received "kelvin" (string))',
        "extra: unexpected property (not allowed by the schema)",
        "city: required property is missing",
    ]


def test_problem_fields() -> None:
    problems = SchemaValidator(WEATHER).problems({"city": 3, "days": 0})
    assert problems == [
        ArgumentProblem(("city",), "expected string", "3 (integer)"),
        ArgumentProblem(("days",), "expected a number >= 1", "0 (integer)"),
    ]
    missing = SchemaValidator(WEATHER).problems({})
    assert missing == [ArgumentProblem(("city",), "required property is missing", None)]


def test_unexpected_property_suggests_a_close_name() -> None:
    assert rendered(WEATHER, {"city": "Oslo", "dayz": 2}) == [
        'dayz: unexpected property (not allowed by the schema; did you mean "days"?)'
    ]


@pytest.mark.parametrize(
    ("schema", "instance", "message"),
    [
        ({"type": ["string", "null"]}, 1, "expected string or null (received 1 (integer))"),
        ({"const": "x"}, "y", 'expected exactly "x" (received "y" (string))'),
        ({"enum": ["only"]}, 1, 'expected "only" (received 1 (integer))'),
        ({"exclusiveMaximum": 3}, 3, "expected a number < 3 (received 3 (integer))"),
        ({"multipleOf": 0.5}, 0.7, "expected a multiple of 0.5 (received 0.7 (number))"),
        ({"minLength": 3}, "ab", 'expected at least 3 characters (received "ab" (string))'),
        ({"maxItems": 1}, [1, 2], "expected at most 1 item (received [1, 2] (array))"),
        (
            {"minProperties": 2},
            {"a": 1},
            'expected at least 2 properties (received {"a": 1} (object))',
        ),
        (
            {"pattern": "^a"},
            "b",
            'expected a string matching the pattern ^a (received "b" (string))',
        ),
        (
            {"not": {"type": "string"}},
            "s",
            'expected a value that is not string (received "s" (string))',
        ),
        ({"type": "boolean"}, None, "expected boolean (received null)"),
        ({"type": "string"}, {1, 2}, "expected string (received <set> (Python set))"),
        (
            {"contains": {"type": "integer"}},
            ["a"],
            'expected at least 1 item matching integer (received ["a"] (array))',
        ),
    ],
)
def test_message_wording(schema: Any, instance: Any, message: str) -> None:
    assert rendered(schema, instance) == [f"arguments: {message}"]


def test_received_is_truncated_with_sizes() -> None:
    (problem,) = SchemaValidator({"type": "integer"}).problems("x" * 500)
    assert problem.received is not None
    assert problem.received.endswith("(string of 500 characters)")
    assert len(problem.received) < 100
    (problem,) = SchemaValidator({"type": "integer"}).problems(list(range(1000)))
    assert problem.received is not None
    assert problem.received.startswith("[0, 1, 2")
    assert problem.received.endswith("(array of 1000 items)")
    (problem,) = SchemaValidator({"type": "integer"}).problems({f"k{i}": i for i in range(50)})
    assert problem.received is not None and problem.received.endswith("(object with 50 properties)")
    (problem,) = SchemaValidator({"type": "string"}).problems(10**5000)
    assert problem.received == "<a very large integer> (integer)"


def test_paths_in_nested_objects_and_arrays() -> None:
    schema = {
        "type": "object",
        "properties": {
            "orders": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "qty": {"type": "integer"},
                        "tags": {"items": {"type": "string"}},
                    },
                    "required": ["qty"],
                },
            }
        },
    }
    instance = {"orders": [{"qty": 1}, {"qty": "2", "tags": ["a", 3]}, {}]}
    problems = SchemaValidator(schema).problems(instance)
    assert [p.path for p in problems] == [
        ("orders", 1, "qty"),
        ("orders", 1, "tags", 1),
        ("orders", 2, "qty"),
    ]
    assert [p.render() for p in problems][
        1
    ] == "orders[1].tags[1]: expected string (received 3 (integer))"


def test_dependent_required_message() -> None:
    assert rendered({"dependentRequired": {"card": ["cvv"]}}, {"card": 1}) == [
        'cvv: required property is missing (required when "card" is present)'
    ]


def test_property_name_problem() -> None:
    assert rendered({"propertyNames": {"pattern": "^[a-z]+$"}}, {"ok": 1, "Bad": 2}) == [
        'Bad: property name is invalid: expected a string matching the pattern ^[a-z]+$ (received "Bad" (string))'
    ]


def test_unique_items_names_the_repeat() -> None:
    assert rendered({"uniqueItems": True}, ["a", "b", "a"]) == [
        '[2]: expected unique items (this repeats item 0) (received "a" (string))'
    ]


def test_surplus_items_are_one_problem() -> None:
    problems = SchemaValidator({"prefixItems": [{}, {}], "items": False}).problems(list(range(50)))
    assert len(problems) == 1
    assert problems[0].message == "expected at most 2 items"


def test_limit_caps_problems() -> None:
    validator = SchemaValidator({"items": {"type": "string"}})
    assert len(validator.problems(list(range(100)), limit=3)) == 3
    assert len(validator.problems(list(range(100)))) == 20
    assert validator.problems(list(range(100)), limit=0) == []


# --- combinators ----------------------------------------------------------------------------------


def test_any_of_gives_one_readable_problem() -> None:
    schema = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert rendered(schema, 1.5) == [
        "arguments: expected one of: string, integer (received 1.5 (number))"
    ]


def test_any_of_uses_ref_names_and_titles() -> None:
    schema = {
        "$defs": {"Cat": {"type": "object"}, "Dog": {"type": "object"}},
        "anyOf": [
            {"$ref": "#/$defs/Cat"},
            {"$ref": "#/$defs/Dog"},
            {"title": "Nothing", "type": "null"},
        ],
    }
    assert rendered(schema, 3) == [
        "arguments: expected one of: Cat, Dog, Nothing (received 3 (integer))"
    ]


def test_any_of_reports_the_branch_matching_the_type() -> None:
    schema = {
        "anyOf": [
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            {"type": "string"},
            {"type": "null"},
        ]
    }
    assert rendered(schema, {"city": 5}) == ["city: expected string (received 5 (integer))"]
    assert rendered(schema, {}) == ["city: required property is missing"]
    assert rendered(schema, 4) == [
        'arguments: expected one of: object with "city", string, null (received 4 (integer))'
    ]


def test_nullable_scalar_branch_explains_itself() -> None:
    schema = {
        "properties": {
            "code": {"anyOf": [{"type": "string", "pattern": "^[A-Z]{3}$"}, {"type": "null"}]}
        }
    }
    assert rendered(schema, {"code": "usd"}) == [
        'code: expected a string matching the pattern ^[A-Z]{3}$ (received "usd" (string))'
    ]


def test_one_of_with_a_discriminator_reports_that_branch() -> None:
    schema = {
        "$defs": {
            "Circle": {
                "type": "object",
                "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                "required": ["kind", "r"],
            },
            "Square": {
                "type": "object",
                "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                "required": ["kind", "side"],
            },
        },
        "oneOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}],
    }
    assert rendered(schema, {"kind": "square", "side": "2"}) == [
        'side: expected number (received "2" (string))'
    ]
    assert rendered(schema, {"kind": "triangle"}) == [
        'arguments: expected one of: Circle, Square (received {"kind": "triangle"} (object))'
    ]
    assert_valid(schema, {"kind": "circle", "r": 1})


def test_one_of_matching_twice() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    assert rendered(schema, 3) == [
        "arguments: expected exactly one of: integer, number, but it matches options 1 and 2 (received 3 (integer))"
    ]
    assert_valid(schema, 3.5)


def test_all_of_collects_every_problem() -> None:
    schema = {"allOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert [p.path for p in assert_invalid(schema, {})] == [("a",), ("b",)]


def test_conditional_reports_then_branch_problems() -> None:
    schema = {
        "properties": {"country": {"type": "string"}},
        "if": {"properties": {"country": {"const": "US"}}, "required": ["country"]},
        "then": {"required": ["zip"]},
        "else": {"required": ["postcode"]},
    }
    assert rendered(schema, {"country": "US"}) == ["zip: required property is missing"]
    assert rendered(schema, {"country": "FR"}) == ["postcode: required property is missing"]


# --- $ref -----------------------------------------------------------------------------------------


def test_refs_to_defs_and_definitions() -> None:
    schema = {
        "$defs": {"Name": {"type": "string"}},
        "definitions": {"Age": {"type": "integer"}},
        "properties": {"name": {"$ref": "#/$defs/Name"}, "age": {"$ref": "#/definitions/Age"}},
    }
    assert_valid(schema, {"name": "a", "age": 3})
    assert [p.path for p in assert_invalid(schema, {"name": 1, "age": "3"})] == [
        ("name",),
        ("age",),
    ]


def test_ref_pointer_escapes_and_percent_encoding() -> None:
    schema = {
        "$defs": {
            "a/b": {"type": "integer"},
            "c~d": {"type": "string"},
            "e f": {"type": "boolean"},
        },
        "prefixItems": [
            {"$ref": "#/$defs/a~1b"},
            {"$ref": "#/$defs/c~0d"},
            {"$ref": "#/$defs/e%20f"},
        ],
        "items": {"$ref": "#/prefixItems/0"},
    }
    assert_valid(schema, [1, "x", True, 4])
    problems = assert_invalid(schema, ["1", 2, None, "x"])
    assert [p.message for p in problems] == [
        "expected integer",
        "expected string",
        "expected boolean",
        "expected integer",
    ]


def test_ref_through_root_id() -> None:
    schema = {
        "$id": "https://example.com/s.json",
        "$defs": {"N": {"type": "integer"}},
        "properties": {"n": {"$ref": "https://example.com/s.json#/$defs/N"}},
    }
    assert_invalid(schema, {"n": "x"})


def test_ref_siblings_apply_too() -> None:
    schema = {"$defs": {"S": {"type": "string"}}, "$ref": "#/$defs/S", "maxLength": 2}
    assert_valid(schema, "ab")
    assert rendered(schema, "abc") == [
        'arguments: expected at most 2 characters (received "abc" (string))'
    ]
    assert_invalid(schema, 3)


TREE = {
    "type": "object",
    "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#"}},
    },
    "required": ["value"],
    "additionalProperties": False,
}


def test_recursive_tree_schema() -> None:
    good = {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}, {"value": 4}]}
    assert_valid(TREE, good)
    bad = {"value": 1, "children": [{"value": 2, "children": [{"value": "3"}, {"label": "x"}]}]}
    assert rendered(TREE, bad) == [
        'children[0].children[0].value: expected integer (received "3" (string))',
        "children[0].children[1].label: unexpected property (not allowed by the schema)",
        "children[0].children[1].value: required property is missing",
    ]


def test_pydantic_style_recursive_schema() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                },
                "required": ["name"],
            }
        },
        "$ref": "#/$defs/Node",
    }
    assert_valid(schema, {"name": "a", "next": {"name": "b", "next": None}})
    assert rendered(schema, {"name": "a", "next": {"name": "b", "next": {"name": 3}}}) == [
        "next.next.name: expected string (received 3 (integer))"
    ]


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("#/$defs/Missing", "there is no '\\$defs'"),
        ("#/properties/a/nope", "there is no 'nope'"),
        ("#/properties/a/type", "not a schema"),
        (
            "https://example.com/other.json",
            "no schema is known at 'https://example.com/other.json'",
        ),
        ("other.json#/x", "no schema is known at 'other.json'"),
        ("#anchor", "no such anchor"),
    ],
)
def test_unresolvable_refs_raise_schema_error(ref: str, reason: str) -> None:
    with pytest.raises(SchemaError, match=reason) as info:
        SchemaValidator({"properties": {"a": {"type": "string"}, "b": {"$ref": ref}}})
    assert str(info.value).startswith("$ref at #/properties/b: ")
    assert repr(ref) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unused_definitions_are_not_resolved() -> None:
    assert_valid({"$defs": {"Broken": {"$ref": "#/nowhere"}}, "type": "integer"}, 1)


# --- hostile input --------------------------------------------------------------------------------


def nested_lists(depth: int) -> list[Any]:
    root: list[Any] = []
    current = root
    for _ in range(depth):
        child: list[Any] = []
        current.append(child)
        current = child
    return root


def nested_dicts(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    current = root
    for _ in range(depth):
        child: dict[str, Any] = {}
        current["a"] = child
        current = child
    return root


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"$ref": "#"}},
        {"anyOf": [{"type": "array", "items": {"$ref": "#"}}, {"type": "object"}]},
        {"uniqueItems": True, "items": {"uniqueItems": True}},
        {"enum": [[[1]], "x"]},
        {"const": [[[[]]]]},
        {"contains": {"$ref": "#"}},
    ],
)
def test_deeply_nested_lists_give_one_problem(schema: dict[str, Any]) -> None:
    instance = nested_lists(10_000)
    validator = SchemaValidator(schema)
    (problem,) = validator.problems(instance)
    assert problem.message == "nested too deeply (more than 64 levels)"
    assert not validator.is_valid(instance)


def test_deeply_nested_objects_report_nested_too_deeply() -> None:
    schema = {"type": "object", "additionalProperties": {"$ref": "#"}}
    (problem,) = SchemaValidator(schema).problems(nested_dicts(10_000))
    assert problem.message == "nested too deeply (more than 64 levels)"
    assert len(problem.path) == 65
    assert_valid(schema, nested_dicts(60))


def test_max_depth_is_configurable() -> None:
    schema = {"items": {"$ref": "#"}}
    validator = SchemaValidator(schema, max_depth=3)
    assert validator.is_valid(nested_lists(3))
    (problem,) = validator.problems(nested_lists(4))
    assert problem.message == "nested too deeply (more than 3 levels)"


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"allOf": [{"$ref": "#"}]},
        {"anyOf": [{"$ref": "#"}]},
        {"not": {"$ref": "#"}},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
        {"if": {"$ref": "#"}, "then": {}},
    ],
)
def test_self_referential_schemas_terminate(schema: dict[str, Any]) -> None:
    validator = SchemaValidator(schema)
    problems = validator.problems({"a": 1})
    assert len(problems) == 1
    assert "refers to itself" in problems[0].message
    assert not validator.is_valid({"a": 1})


def test_cyclic_python_schema_object_compiles() -> None:
    schema: dict[str, Any] = {"type": "array"}
    schema["items"] = schema
    validator = SchemaValidator(schema)
    assert validator.is_valid([[], [[]]])
    assert not validator.is_valid([[], [1]])


def test_deeply_nested_schema_compiles_without_recursion() -> None:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(10_000):
        schema = {"type": "array", "items": schema}
    validator = SchemaValidator(schema)
    assert validator.is_valid([])
    assert validator.problems(nested_lists(10_000))[0].message.startswith("nested too deeply")


def test_huge_array_stops_at_limit() -> None:
    validator = SchemaValidator({"type": "array", "items": {"type": "integer"}})
    problems = validator.problems(["x"] * 100_000, limit=5)
    assert [p.path for p in problems] == [(0,), (1,), (2,), (3,), (4,)]
    assert validator.is_valid(list(range(100_000)))


def test_huge_array_unique_items() -> None:
    validator = SchemaValidator({"uniqueItems": True})
    assert validator.is_valid(list(range(100_000)))
    problems = validator.problems([1] * 100_000, limit=3)
    assert [p.path for p in problems] == [(1,), (2,), (3,)]


def test_pattern_input_is_capped_and_fails_closed() -> None:
    validator = SchemaValidator({"pattern": "^a+$"})
    assert validator.is_valid("a" * 100_000)
    (problem,) = validator.problems("a" * 100_001)
    assert "not checked" in problem.message
    assert problem.received is not None and "100001 characters" in problem.received


def test_no_recursion_error_escapes_near_the_stack_limit() -> None:
    validator = SchemaValidator({"anyOf": [{"$ref": "#"}]})
    reserve = 80

    def descend(n: int) -> list[ArgumentProblem]:
        if n > 0:
            return descend(n - 1)
        return validator.problems(1)

    problems = descend(sys.getrecursionlimit() - _stack_depth() - reserve)
    assert len(problems) == 1
    assert problems[0].path == ()


def _stack_depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth


def test_odd_python_values_do_not_crash() -> None:
    schema = {
        "properties": {"a": {"uniqueItems": True, "items": {"enum": [1]}}},
        "patternProperties": {"^1": {"type": "string"}},
        "additionalProperties": False,
    }
    problems = SchemaValidator(schema).problems({1: "x", "a": [object(), object()], b"k": 1})
    assert [p.path for p in problems] == [("a", 0), ("a", 1), ("b'k'",)]


def test_schema_is_not_mutated() -> None:
    schema = copy.deepcopy(TREE)
    SchemaValidator(schema).problems({"value": "x"})
    assert schema == TREE


# --- property tests -------------------------------------------------------------------------------

NAMES = st.text(alphabet="abcxyz", min_size=1, max_size=3)
Pair = tuple[dict[str, Any], st.SearchStrategy[Any]]


def _scalars() -> st.SearchStrategy[Pair]:
    def int_range(bounds: tuple[int, int]) -> Pair:
        low, high = sorted(bounds)
        return {"type": "integer", "minimum": low, "maximum": high}, st.integers(low, high)

    def str_len(bounds: tuple[int, int]) -> Pair:
        low, high = sorted(bounds)
        return {"type": "string", "minLength": low, "maxLength": high}, st.text(
            min_size=low, max_size=high
        )

    return st.one_of(
        st.just(({"type": "string"}, st.text(max_size=5))),
        st.just(({"type": "integer"}, st.integers())),
        st.just(({"type": "number"}, st.floats(allow_nan=False, allow_infinity=False))),
        st.just(({"type": "boolean"}, st.booleans())),
        st.just(({"type": "null"}, st.none())),
        st.just(({"type": "string", "pattern": "^[a-f]{2,4}$"}, st.from_regex(r"\A[a-f]{2,4}\Z"))),
        st.tuples(st.integers(-50, 50), st.integers(-50, 50)).map(int_range),
        st.tuples(st.integers(0, 4), st.integers(0, 4)).map(str_len),
        st.lists(st.integers(0, 9) | NAMES, min_size=1, max_size=4, unique=True).map(
            lambda vs: ({"enum": vs}, st.sampled_from(vs))
        ),
        st.integers(1, 9).map(lambda m: ({"type": "integer", "multipleOf": m}, st.integers(-99, 99).map(lambda k: k * m))),
    )  # fmt: skip


def _containers(children: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    def obj(fields: dict[str, Pair]) -> Pair:
        schema = {
            "type": "object",
            "properties": {k: s for k, (s, _) in fields.items()},
            "required": sorted(fields),
            "additionalProperties": False,
        }
        return schema, st.fixed_dictionaries({k: inst for k, (_, inst) in fields.items()})

    def arr(child: Pair) -> Pair:
        return {"type": "array", "items": child[0], "maxItems": 4}, st.lists(child[1], max_size=4)

    def any_of(options: list[Pair]) -> Pair:
        return {"anyOf": [s for s, _ in options]}, st.one_of([inst for _, inst in options])

    def nullable(child: Pair) -> Pair:
        return {"anyOf": [child[0], {"type": "null"}]}, st.none() | child[1]

    return st.one_of(
        st.dictionaries(NAMES, children, max_size=3).map(obj),
        children.map(arr),
        st.lists(children, min_size=1, max_size=3).map(any_of),
        children.map(nullable),
    )


def _via_ref(pair: Pair) -> Pair:
    return {"$defs": {"T": pair[0]}, "$ref": "#/$defs/T"}, pair[1]


TREES = st.recursive(_scalars(), _containers, max_leaves=8)
SCHEMAS = TREES.flatmap(lambda pair: st.just(pair) | st.just(_via_ref(pair)))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(NAMES, kids, max_size=3),
    max_leaves=10,
)
SAMPLES = {
    "string": "word",
    "integer": 7,
    "number": 2.5,
    "boolean": True,
    "null": None,
    "object": {},
    "array": [],
}


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_generated_instances_are_valid(data: st.DataObject) -> None:
    schema, instances = data.draw(SCHEMAS)
    validator = SchemaValidator(schema)
    instance = data.draw(instances)
    assert validator.problems(instance) == [], (schema, instance)
    assert validator.is_valid(instance)


def _accepted_types(schema: dict[str, Any]) -> set[str]:
    if "$ref" in schema:
        return _accepted_types(schema["$defs"]["T"])
    if "anyOf" in schema:
        return set().union(*(_accepted_types(s) for s in schema["anyOf"]))
    if "enum" in schema:
        return {"string" if isinstance(v, str) else "integer" for v in schema["enum"]}
    accepted = {schema["type"]}
    return accepted | ({"integer"} if "number" in accepted else set())


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(SCHEMAS, st.sampled_from(sorted(SAMPLES)))
def test_a_value_of_another_type_is_invalid(pair: Pair, kind: str) -> None:
    schema, _ = pair
    if kind in _accepted_types(schema):
        return
    validator = SchemaValidator(schema)
    problems = validator.problems(SAMPLES[kind])
    assert problems, (schema, kind)
    assert not validator.is_valid(SAMPLES[kind])
    assert problems[0].path == ()
    assert problems[0].received is not None


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data(), st.sampled_from(sorted(SAMPLES)))
def test_a_wrongly_typed_field_is_reported_at_its_path(data: st.DataObject, kind: str) -> None:
    fields = data.draw(st.dictionaries(NAMES, TREES, min_size=1, max_size=3))
    schema = {"type": "object", "properties": {k: s for k, (s, _) in fields.items()}}
    instance = data.draw(st.fixed_dictionaries({k: inst for k, (_, inst) in fields.items()}))
    key = data.draw(st.sampled_from(sorted(fields)))
    if kind in _accepted_types(fields[key][0]):
        return
    instance[key] = SAMPLES[kind]
    problems = SchemaValidator(schema).problems(instance)
    assert problems
    assert all(p.path[:1] == (key,) for p in problems)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(SCHEMAS, JSON)
def test_problems_and_is_valid_agree_on_any_instance(pair: Pair, instance: Any) -> None:
    validator = SchemaValidator(pair[0])
    problems = validator.problems(instance, limit=5)
    assert validator.is_valid(instance) == (not problems)
    assert len(problems) <= 5
    for problem in problems:
        assert problem.received is None or len(problem.received) < 160


# A differential check against the `jsonschema` package on keywords where the specification leaves
# no room for interpretation: no float multipleOf (we compare decimals, it compares binary floats)
# and no `$` in patterns (we follow ECMA-262, it follows Python).
SMALL = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.integers(-6, 6).map(lambda n: n / 2)
    | st.text(alphabet="abc", max_size=3),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(NAMES, kids, max_size=3),
    max_leaves=6,
)  # fmt: skip
TYPE_NAMES = st.sampled_from(sorted(SAMPLES))
SIZE = st.integers(0, 3)
LEAF_KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "type": TYPE_NAMES | st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True),
        "minimum": SMALL.filter(lambda v: type(v) in (int, float)),
        "exclusiveMaximum": st.integers(-3, 3),
        "multipleOf": st.integers(1, 3),
        "minLength": SIZE, "maxLength": SIZE, "pattern": st.sampled_from(["^a", "b+", "^[ab]{2}"]),
        "enum": st.lists(SMALL, min_size=1, max_size=3), "const": SMALL,
        "minItems": SIZE, "maxItems": SIZE, "uniqueItems": st.booleans(),
        "required": st.lists(NAMES, max_size=2), "minProperties": SIZE, "maxProperties": SIZE,
        "dependentRequired": st.dictionaries(NAMES, st.lists(NAMES, max_size=2), max_size=2),
    },
)  # fmt: skip


def _with_children(kids: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    two = st.lists(kids, min_size=1, max_size=2)
    return st.booleans() | st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(NAMES, kids, max_size=2),
            "patternProperties": st.dictionaries(st.sampled_from(["^a", "b"]), kids, max_size=1),
            "additionalProperties": kids, "propertyNames": kids,
            "items": kids, "prefixItems": two,
            "contains": kids, "minContains": SIZE, "maxContains": SIZE,
            "anyOf": two, "oneOf": two, "allOf": two, "not": kids, "if": kids, "then": kids, "else": kids,
            "unevaluatedProperties": kids, "unevaluatedItems": kids,
            "dependentSchemas": st.dictionaries(NAMES, kids, max_size=2),
        },
    )  # fmt: skip


KEYWORD_SCHEMAS = st.recursive(LEAF_KEYWORDS, _with_children, max_leaves=6)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(KEYWORD_SCHEMAS, st.lists(SMALL, min_size=1, max_size=4))
def test_agrees_with_the_jsonschema_package(schema: Any, instances: list[Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    reference = jsonschema.Draft202012Validator(schema)
    ours = SchemaValidator(schema)
    for instance in instances:
        assert ours.is_valid(instance) == reference.is_valid(instance), (schema, instance)


# --- dialects, references, unevaluated keywords, patterns -------------------------------------

DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_draft7_ignores_keywords_beside_ref_and_2020_12_applies_them() -> None:
    body = {"$defs": {"S": {"type": "string"}}, "$ref": "#/$defs/S", "maxLength": 2}
    assert_invalid(body, "abc")
    assert_valid({"$schema": DRAFT7, **body}, "abc")
    assert_invalid({"$schema": DRAFT7, **body}, 3)


def test_the_declared_dialect_decides_which_keywords_exist() -> None:
    schema = {"prefixItems": [{"type": "integer"}], "dependentRequired": {"a": ["b"]}}
    assert_invalid(schema, ["x"])
    assert_invalid(schema, {"a": 1})
    assert_valid({"$schema": DRAFT7, **schema}, ["x"])
    assert_valid({"$schema": DRAFT7, **schema}, {"a": 1})


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"^\$schema at #: unknown dialect"):
        SchemaValidator({"$schema": "https://example.com/my-dialect", "type": "string"})


def test_unevaluated_properties_sees_through_all_of() -> None:
    schema = {
        "allOf": [{"properties": {"name": {"type": "string"}}}],
        "properties": {"age": {"type": "integer"}},
        "unevaluatedProperties": False,
    }
    assert_valid(schema, {"name": "a", "age": 3})
    assert rendered(schema, {"name": "a", "nmae": "b"}) == [
        'nmae: unexpected property (not allowed by the schema; did you mean "name"?)'
    ]


def test_unevaluated_properties_counts_only_the_passing_any_of_branch() -> None:
    schema = {
        "anyOf": [
            {"properties": {"kind": {"const": "a"}, "x": {}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}, "y": {}}, "required": ["kind"]},
        ],
        "unevaluatedProperties": False,
    }
    assert_valid(schema, {"kind": "a", "x": 1})
    problems = assert_invalid(schema, {"kind": "a", "y": 1})
    assert [p.path for p in problems] == [("y",)]


def test_unevaluated_items() -> None:
    schema = {"prefixItems": [{"type": "string"}], "unevaluatedItems": False}
    assert_valid(schema, ["a"])
    assert rendered(schema, ["a", 2]) == [
        "[1]: unexpected item (not allowed by the schema) (received 2 (integer))"
    ]


def test_dynamic_ref_extends_a_recursive_schema() -> None:
    tree = {
        "$id": "https://example.com/tree",
        "$dynamicAnchor": "node",
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$dynamicRef": "#node"}}},
    }
    strict = {
        "$id": "https://example.com/strict-tree",
        "$dynamicAnchor": "node",
        "$ref": "tree",
        "unevaluatedProperties": False,
    }
    validator = SchemaValidator(strict, documents={"https://example.com/tree": tree})
    assert validator.is_valid({"children": [{"children": []}]})
    problems = validator.problems({"children": [{"childrn": []}]})
    assert [p.path for p in problems] == [("children", 0, "childrn")]


def test_documents_supply_other_schemas_and_anchors() -> None:
    docs = {
        "https://example.com/defs.json": {"$defs": {"id": {"$anchor": "id", "type": "integer"}}}
    }
    schema = {"properties": {"a": {"$ref": "https://example.com/defs.json#id"}}}
    validator = SchemaValidator(schema, documents=docs)
    assert validator.is_valid({"a": 1})
    assert [p.render() for p in validator.problems({"a": "1"})] == [
        'a: expected integer (received "1" (string))'
    ]


def test_an_id_in_data_is_not_an_identifier() -> None:
    schema = {"enum": [{"$id": "https://example.com/x"}], "$ref": "https://example.com/x"}
    with pytest.raises(SchemaError, match=r"^\$ref at #: cannot resolve .*no schema is known"):
        SchemaValidator(schema)


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"\p{Script=Greek}", "scripts"),
        (r"(?P<name>x)", "not ECMA-262 group syntax"),
        (r"a++", "cannot follow a quantifier"),
        (r"\a", "not an escape ECMA-262 defines"),
        (r"(?<=a+)b", "cannot be compiled"),
    ],
)
def test_patterns_that_cannot_be_honoured_are_refused(pattern: str, reason: str) -> None:
    with pytest.raises(SchemaError, match=reason) as info:
        SchemaValidator({"properties": {"code": {"type": "string", "pattern": pattern}}})
    assert str(info.value).startswith("pattern at #/properties/code: ")
    with pytest.raises(SchemaError, match=r"^patternProperties at #: "):
        SchemaValidator({"patternProperties": {pattern: {}}})


def test_a_tool_with_a_refused_schema_fails_when_it_is_built() -> None:
    from toolwire import tool

    schema = {"type": "object", "properties": {"w": {"type": "string", "pattern": r"\p{Greek}"}}}
    with pytest.raises(SchemaError, match=r"tool 'greek': pattern at #/properties/w: "):
        tool(name="greek", parameters=schema)


# A second differential check, against jsonschema-rs, which reads patterns as ECMA-262 does: here
# patterns with \d, \w, \s, $ and Unicode text are fair game, and so are float multipleOf values
# written as decimals (both compare the decimal a JSON number was written as).
ECMA_TEXT = st.text(alphabet="ab1٣ _\n\u00a0é", max_size=4)
ECMA_SMALL = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | ECMA_TEXT,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(NAMES | ECMA_TEXT, kids, max_size=3),
    max_leaves=6,
)
ECMA_PATTERNS = st.sampled_from(
    [r"^\d+$", r"\w", r"^\s*$", "a$", r"^\S+$", r"^[^\d]*$", r"\bb", r"^(?<x>a)b",
     r"^\p{L}+$", r"\P{Nd}", "^.$", r"^[\w\s]+$"]
)  # fmt: skip
ECMA_LEAVES = st.fixed_dictionaries(
    {},
    optional={
        "type": TYPE_NAMES, "pattern": ECMA_PATTERNS, "minLength": SIZE, "const": ECMA_SMALL,
        "enum": st.lists(ECMA_SMALL, max_size=2), "required": st.lists(NAMES, max_size=2, unique=True),
    },
)  # fmt: skip


def _ecma_children(kids: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.booleans() | st.fixed_dictionaries(
        {},
        optional={
            "properties": st.dictionaries(NAMES, kids, max_size=2),
            "patternProperties": st.dictionaries(ECMA_PATTERNS, kids, max_size=1),
            "additionalProperties": kids, "propertyNames": kids, "items": kids,
            "anyOf": st.lists(kids, min_size=1, max_size=2), "allOf": st.lists(kids, min_size=1, max_size=2),
            "unevaluatedProperties": kids, "unevaluatedItems": kids, "not": kids,
        },
    )  # fmt: skip


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.recursive(ECMA_LEAVES, _ecma_children, max_leaves=5),
    st.lists(ECMA_SMALL, min_size=1, max_size=4),
)
def test_agrees_with_jsonschema_rs_on_ecma_patterns(schema: Any, instances: list[Any]) -> None:
    import jsonschema_rs

    reference = jsonschema_rs.Draft202012Validator(schema)
    ours = SchemaValidator(schema)
    for instance in instances:
        assert ours.is_valid(instance) == reference.is_valid(instance), (schema, instance)


def test_exponential_work_is_bounded_and_fails_closed() -> None:
    schema: dict[str, Any] = {"properties": {"a": {"type": "string"}}}
    for _ in range(30):  # each level doubles the work of an invalid instance
        schema = {"anyOf": [schema, {"allOf": [schema]}]}
    validator = SchemaValidator(schema, max_steps=20_000)
    assert not validator.is_valid({"a": 1})
    assert [p.message for p in validator.problems({"a": 1})] == [
        "cannot be validated: checking it against this schema takes too much work"
    ]
    assert validator.is_valid({"a": "x"})  # a valid instance takes the first branch at once
