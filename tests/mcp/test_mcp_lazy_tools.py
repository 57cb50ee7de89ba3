"""`McpTool` checks and compiles a listed schema at the tool's first use, not at listing, and
`McpToolSpec` keeps the listed schemas compact until they are read."""

from __future__ import annotations

import collections
import copy
import json
import logging
import pickle

import pytest

from toolwire import ToolArgumentsError, ToolNameError
from toolwire.mcp import McpClient, McpTool
from toolwire.mcp._content import McpProtocolError, McpToolSpec, SharedValues, parse_tool_spec

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
}
DANGLING = {"type": "object", "properties": {"where": {"$ref": "#/$defs/nowhere"}}}


def _client() -> McpClient:
    # Never connected: nothing here may reach a server.
    return McpClient("http://127.0.0.1:9/mcp")


async def test_a_lazily_compiled_tool_still_rejects_invalid_arguments() -> None:
    client = _client()
    weather = McpTool(client, McpToolSpec(name="weather", input_schema=SCHEMA))
    assert weather.parse_args('{"city": "Oslo", "days": 2}') == {"city": "Oslo", "days": 2}
    with pytest.raises(ToolArgumentsError, match="days"):
        weather.parse_args({"city": "Oslo", "days": 0})
    # A call with bad arguments is refused before the (unconnected) client is asked.
    result = await weather.invoke('{"days": "two"}')
    assert result.is_error
    assert isinstance(result.error, ToolArgumentsError)
    assert "city" in result.text and "days" in result.text
    assert client.problems == []


async def test_a_malformed_listed_schema_is_reported_at_first_use_and_left_to_the_server(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = _client()
    broken = McpTool(client, McpToolSpec(name="broken", input_schema=DANGLING))
    assert client.problems == []  # listing it checked nothing
    with caplog.at_level(logging.WARNING, logger="toolwire"):
        definition = broken.definition("openai")
    assert definition.name == "broken"
    assert definition.parameters["type"] == "object"
    assert len(client.problems) == 1
    assert "'broken'" in client.problems[0] and "nowhere" in client.problems[0]
    assert "nowhere" in caplog.text
    # Any object passes locally (the server still validates); no second report.
    assert broken.parse_args('{"where": 3}') == {"where": 3}
    assert broken.parameters == {"type": "object", "properties": {}}
    assert len(client.problems) == 1
    # A call fails as a result the model sees, never as an exception: here the client is not
    # connected.
    result = await broken.invoke({"where": 3})
    assert result.is_error


def test_a_name_no_provider_takes_is_refused_when_listed() -> None:
    with pytest.raises(ToolNameError):
        McpTool(_client(), McpToolSpec(name="two words", input_schema=SCHEMA))


def test_a_spec_keeps_its_schemas_compact_and_hands_out_fresh_copies() -> None:
    spec = McpToolSpec(
        name="weather",
        description="Forecast.",
        input_schema=SCHEMA,
        output_schema={"type": "object"},
    )
    assert spec.input_schema == SCHEMA
    assert spec.output_schema == {"type": "object"}
    first = spec.input_schema
    first["properties"]["city"]["type"] = "integer"  # the caller's copy, not the spec's
    assert spec.input_schema == SCHEMA
    assert spec.input_schema is not spec.input_schema
    assert McpToolSpec(name="bare").input_schema == {"type": "object", "properties": {}}
    assert McpToolSpec(name="bare").output_schema is None
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        spec.input_schema = {}  # type: ignore[misc]


def test_specs_compare_copy_and_pickle_by_value() -> None:
    spec = McpToolSpec(name="weather", input_schema=SCHEMA, title="Weather", requires_approval=True)
    same = McpToolSpec(
        name="weather",
        input_schema=json.loads(json.dumps(SCHEMA)),
        title="Weather",
        requires_approval=True,
    )
    assert spec == same
    assert spec != McpToolSpec(name="weather", input_schema={"type": "object"})
    # Equal values compare equal whatever their key order.
    assert McpToolSpec(name="w", input_schema={"type": "object", "required": []}) == McpToolSpec(
        name="w", input_schema={"required": [], "type": "object"}
    )
    assert spec != McpToolSpec(name="weather", input_schema=SCHEMA, requires_approval=False)
    for copied in (copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
        assert copied == spec
        assert copied.input_schema == SCHEMA and copied.title == "Weather"
    assert "input_schema={'type': 'object'" in repr(spec) and "name='weather'" in repr(spec)
    match spec:
        case McpToolSpec(name, _, {"required": required}):
            assert (name, required) == ("weather", ["city"])
        case _:
            pytest.fail("a spec matches by position as the dataclass it was did")


def test_a_spec_takes_any_json_mapping_and_refuses_what_json_cannot_hold() -> None:
    ordered = collections.OrderedDict(type="object", required=("city",))
    assert McpToolSpec(name="t", input_schema=ordered).input_schema == {
        "type": "object",
        "required": ["city"],
    }
    with pytest.raises(TypeError):
        McpToolSpec(name="t", input_schema=collections.OrderedDict(default=object()))


def test_a_listing_keeps_equal_schemas_and_descriptions_once() -> None:
    shared = SharedValues()
    entries = [
        {
            "name": f"t{n}",
            "description": "Same words.",
            "inputSchema": json.loads(json.dumps(SCHEMA)),
        }
        for n in range(3)
    ]
    specs = [parse_tool_spec(entry, shared) for entry in entries]
    assert [s.input_schema for s in specs] == [SCHEMA] * 3
    assert specs[0].description is specs[1].description is specs[2].description
    # The compact form is shared too: one object for the three equal schemas.
    assert len({id(s._input) for s in specs}) == 1


def test_a_listed_schema_too_deep_to_keep_leaves_that_tool_out() -> None:
    deep: dict[str, object] = {"type": "object"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(McpProtocolError, match="'deep'"):
        parse_tool_spec({"name": "deep", "inputSchema": deep})


def test_a_listing_of_distinct_tools_stops_holding_a_table_of_them() -> None:
    shared = SharedValues()
    distinct = [f"description {n}" for n in range(5000)]
    assert [shared.take(text) for text in distinct] == distinct
    again = "description 4999"
    assert shared.take(again) is again  # the table was dropped: nothing to share with
    repeating = SharedValues()
    first = [repeating.take(f"d{n % 100}") for n in range(5000)]
    assert repeating.take("d7") is first[7]
