"""Strict mode's nulls: `NullDropper` removes nulls sent for optional properties that refuse null."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import tool
from toolwire._arguments import NullDropper


def test_references_are_followed_by_pointer_not_by_last_name() -> None:
    # Two subschemas end in the same name: only the JSON Pointer tells them apart.
    schema: dict[str, Any] = {
        "$defs": {
            "A": {"$defs": {"inner": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
            "inner": {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}},
        },
        "type": "object",
        "properties": {
            "strict": {"$ref": "#/$defs/A/$defs/inner"},
            "loose": {"$ref": "#/$defs/inner"},
        },
    }
    drop = NullDropper(schema)
    assert drop({"strict": {"n": None}, "loose": {"n": None}}) == {
        "strict": {},
        "loose": {"n": None},
    }


def test_nulls_inside_arrays_and_any_of_objects() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "items": {"type": "object", "properties": {"x": {"type": "string"}}},
            },
            "pick": {
                "anyOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}},
                    {"type": "object", "properties": {"b": {"type": "integer"}}},
                ]
            },
        },
        "required": ["rows"],
    }
    drop = NullDropper(schema)
    for _ in range(2):  # the second call answers from what the first one computed
        assert drop({"rows": [{"x": None}, {"x": "k"}], "pick": {"b": None}}) == {
            "rows": [{}, {"x": "k"}],
            "pick": {},
        }
    assert drop({"rows": None}) == {"rows": None}  # required: the null stays, validation decides


def test_a_strict_tool_keeps_null_inside_text_values() -> None:
    @tool
    def search(query: str, limit: int = 5) -> str:
        """Search.

        Args:
            query: Words.
            limit: Most results.
        """
        return query

    assert search.strict
    assert search.parse_args('{"query": "null pointer", "limit": null}') == {
        "query": "null pointer"
    }
    assert search.parse_args('{"query": "null", "limit": 3}') == {"query": "null", "limit": 3}


@pytest.mark.anyio
async def test_a_strict_raw_schema_tool_drops_the_nulls_it_refuses() -> None:
    seen: list[dict[str, Any]] = []
    t = tool(
        name="find",
        parameters={
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["q"],
            "additionalProperties": False,
        },
        execute=seen.append,
    )
    assert t.strict
    assert t.parse_args('{"q": "null", "n": null}') == {"q": "null"}
    result = await t.invoke('{"q": "a", "n": null}')
    assert not result.is_error
    assert seen == [{"q": "a"}]
    failed = await t.invoke('{"q": null, "n": null}')
    assert failed.is_error
    assert "q: expected string (received null)" in failed.text


def test_a_dropper_is_needed_only_when_an_optional_property_refuses_null() -> None:
    nullable = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
        "required": ["q"],
    }
    assert not NullDropper(nullable).needed
    nested = {
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/Q"}},
        "required": ["q"],
        "$defs": {"Q": {"type": "object", "properties": {"page": {"type": "integer"}}}},
    }
    assert NullDropper(nested).needed
    assert NullDropper(nested)({"q": {"page": None}}) == {"q": {}}
