"""The official conformance suite and the reference `server-everything`, both from npm.

Run `.ci/mcp-setup.sh` first; without it these tests skip locally and fail in CI. Each scenario's
checks are read one by one: a summary can pass against a server that lacks the tool (the
`tools-call-error` checks only look for `isError`), so the tests also assert that the
scenario's tool really ran in toolwire's server.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_servers import PNG, WAV

from conftest import HERE, ROOT, free_port, node_env, require_node_tool, serve_app, wait_for_port
from toolwire import ToolError, tool
from toolwire.mcp import McpClient, McpTool, StdioServerParameters, create_app
from toolwire.results import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
)

pytestmark = pytest.mark.anyio

RAN: list[str] = []


def conformance_tools() -> list[Any]:
    """The tools the server scenarios call, written as ordinary toolwire tools."""

    @tool
    def test_simple_text() -> str:
        """Simple text."""
        RAN.append("test_simple_text")
        return "This is a simple text response for testing."

    @tool
    def test_image_content() -> ImagePart:
        """An image."""
        RAN.append("test_image_content")
        return ImagePart(data=PNG, mime_type="image/png")

    @tool
    def test_audio_content() -> AudioPart:
        """Audio."""
        RAN.append("test_audio_content")
        return AudioPart(data=WAV, mime_type="audio/wav")

    @tool
    def test_embedded_resource() -> ResourcePart:
        """An embedded resource."""
        RAN.append("test_embedded_resource")
        return ResourcePart(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )

    @tool
    def test_multiple_content_types() -> list[Any]:
        """Text, image and resource."""
        RAN.append("test_multiple_content_types")
        return [
            TextPart("Multiple content types test:"),
            ImagePart(data=PNG, mime_type="image/png"),
            ResourcePart(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            ),
        ]

    @tool
    def test_error_handling() -> str:
        """Always fails."""
        RAN.append("test_error_handling")
        raise ToolError("This tool intentionally returns an error for testing")

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    }
    json_schema_tool = tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        parameters=schema,
        execute=lambda args: "ok",
    )
    return [
        test_simple_text,
        test_image_content,
        test_audio_content,
        test_embedded_resource,
        test_multiple_content_types,
        test_error_handling,
        json_schema_tool,
    ]


def read_checks(out: Path) -> list[dict[str, Any]]:
    (found,) = out.glob("*/checks.json")
    return json.loads(found.read_text())


def verdicts(checks: list[dict[str, Any]]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in checks if c["status"] != "INFO"}


SCHEMA_CHECKS = {"tool-found", "$schema", "$defs", "additionalProperties"}

# Each scenario: the checks it must report (all SUCCESS), and the tool that must have run.
SERVER_SCENARIOS: dict[str, tuple[set[str], str | None]] = {
    "server-initialize": ({"server-initialize"}, None),
    "ping": ({"ping"}, None),
    "tools-list": ({"tools-list"}, None),
    "tools-call-simple-text": ({"tools-call-simple-text"}, "test_simple_text"),
    "tools-call-image": ({"tools-call-image"}, "test_image_content"),
    "tools-call-audio": ({"tools-call-audio"}, "test_audio_content"),
    "tools-call-embedded-resource": ({"tools-call-embedded-resource"}, "test_embedded_resource"),
    "tools-call-mixed-content": ({"tools-call-mixed-content"}, "test_multiple_content_types"),
    "tools-call-error": ({"tools-call-error"}, "test_error_handling"),
    "json-schema-2020-12": ({f"json-schema-2020-12-{c}" for c in SCHEMA_CHECKS}, None),
    "dns-rebinding-protection": (
        {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
        None,
    ),
}


@pytest.mark.parametrize("scenario", list(SERVER_SCENARIOS))
async def test_server_scenario(scenario: str, tmp_path: Path) -> None:
    cli = require_node_tool("conformance")
    RAN.clear()
    async with serve_app(create_app(conformance_tools(), name="toolwire-conformance")) as url:
        with anyio.fail_after(90):
            done = await anyio.run_process(
                [cli, "server", "--url", url, "--scenario", scenario, "-o", str(tmp_path)],
                env=node_env(),
                check=False,
            )
    results = verdicts(read_checks(tmp_path))
    expected_checks, expected_tool = SERVER_SCENARIOS[scenario]
    assert set(results) == expected_checks, results
    assert set(results.values()) == {"SUCCESS"}, results
    assert done.returncode == 0, done.stdout.decode()
    if expected_tool is not None:
        assert [expected_tool] == RAN


CLIENT_SCENARIOS = {
    "initialize": {"mcp-client-initialization"},
    "tools_call": {"tool-add-numbers"},
    "sse-retry": {
        "client-sse-graceful-reconnect",
        "client-sse-retry-timing",
        "client-sse-last-event-id",
    },
}


@pytest.mark.parametrize("scenario", list(CLIENT_SCENARIOS))
async def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    cli = require_node_tool("conformance")
    command = f"{sys.executable} {HERE / 'conformance_client.py'}"
    with anyio.fail_after(90):
        done = await anyio.run_process(
            [cli, "client", "--command", command, "--scenario", scenario, "-o", str(tmp_path)],
            env=node_env(),
            cwd=ROOT,
            check=False,
        )
    results = verdicts(read_checks(tmp_path))
    # Every check the scenario defines must be there and pass, not just "nothing failed".
    assert set(results) == CLIENT_SCENARIOS[scenario], results
    assert set(results.values()) == {"SUCCESS"}, results
    assert done.returncode == 0, done.stdout.decode()


# --- server-everything ----------------------------------------------------------------------


async def test_server_everything_over_http() -> None:
    server = require_node_tool("mcp-server-everything")
    port = free_port()
    env = {**node_env(), "PORT": str(port)}
    async with await anyio.open_process([server, "streamableHttp"], env=env) as proc:
        try:
            await wait_for_port(port)
            async with McpClient(f"http://127.0.0.1:{port}/mcp") as client:
                specs = {s.name: s for s in await client.list_tools()}
                assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(specs)
                assert specs["echo"].annotations.read_only_hint is True
                assert specs["get-structured-content"].output_schema is not None

                tools = {t.name: t for t in await client.tools(prefix="ev")}
                echo = tools["ev_echo"]
                assert isinstance(echo, McpTool)
                assert (await echo.invoke({"message": "hi"})).text == "Echo: hi"
                assert "3" in (await tools["ev_get-sum"].invoke({"a": 1, "b": 2})).text

                image = await client.call_tool("get-tiny-image")
                (picture,) = [p for p in image.content if isinstance(p, ImagePart)]
                assert picture.mime_type == "image/png"
                assert picture.data is not None
                assert picture.data.startswith(b"\x89PNG")

                links = await client.call_tool("get-resource-links", {"count": 2})
                assert len([p for p in links.content if isinstance(p, ResourceLinkPart)]) == 2

                reference = await client.call_tool("get-resource-reference")
                assert any(isinstance(p, ResourcePart) for p in reference.content)

                weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
                assert isinstance(weather.structured, dict)
                assert "temperature" in weather.structured

                annotated = await client.call_tool(
                    "get-annotated-message", {"messageType": "error", "includeImage": True}
                )
                assert [type(p) for p in annotated.content] == [TextPart, ImagePart]
        finally:
            proc.kill()


async def test_server_everything_over_stdio() -> None:
    server = require_node_tool("mcp-server-everything")
    params = StdioServerParameters(command=server, args=["stdio"], env={"PATH": node_env()["PATH"]})
    async with McpClient(params, timeout=30) as client:
        specs = await client.list_tools()
        assert "get-sum" in {s.name for s in specs}
        result = await client.call_tool("get-tiny-image")
        assert any(isinstance(p, ImagePart) for p in result.content)
        encoded = base64.b64encode(b"toolwire").decode()
        echoed = await client.call_tool("echo", {"message": encoded})
        assert encoded in echoed.text
