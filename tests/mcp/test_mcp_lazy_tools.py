"""`McpTool` checks and compiles a listed schema at the tool's first use, not at listing."""

from __future__ import annotations

import logging

import pytest

from toolwire import ToolArgumentsError, ToolNameError
from toolwire.mcp import McpClient, McpTool
from toolwire.mcp._content import McpToolSpec

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
