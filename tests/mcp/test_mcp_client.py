"""toolwire's client against the official SDK's server: listing, content types, annotations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp_fixtures import HERE, serve_app
from mcp_servers import PNG, WAV, sdk_app

from toolwire import ToolAnnotations, ToolRegistry, ToolTimeoutError
from toolwire.mcp import McpClient, McpConnectionError, McpTool, StdioServerParameters, from_mcp
from toolwire.results import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("protocol", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")]
)
async def test_lists_every_page_with_annotations_and_output_schema(
    protocol: Literal["auto", "legacy"], version: str
) -> None:
    async with serve_app(sdk_app()) as url, McpClient(url, protocol=protocol) as client:
        assert client.protocol_version == version
        # Only the handshake era has sessions.
        assert (client.session_id is None) == (protocol == "auto")
        specs = await client.list_tools()
        assert [s.name for s in specs] == [
            "echo",
            "everything",
            "weather",
            "fail",
            "region",
            "slow",
        ]
        echo = specs[0]
        assert echo.description == "Echo the text back."
        assert echo.annotations == ToolAnnotations(
            title="Echo", read_only_hint=True, idempotent_hint=True
        )
        assert specs[2].output_schema is not None
        assert specs[2].output_schema["required"] == ["city", "celsius"]
        assert client.server_info is not None
        assert client.server_info["name"] == "sdk-test"


async def test_maps_every_content_type() -> None:
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        result = await client.call_tool("everything")
    assert not result.is_error
    assert result.content == [
        TextPart("hello"),
        ImagePart(data=PNG, mime_type="image/png"),
        AudioPart(data=WAV, mime_type="audio/wav"),
        ResourcePart(uri="test://t", mime_type="text/plain", text="inline"),
        ResourcePart(uri="test://b", blob=b"\x00\x01"),
        ResourceLinkPart(
            uri="test://link", name="link", description="a link", mime_type="text/html"
        ),
    ]


async def test_structured_content_and_is_error() -> None:
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        weather = await client.call_tool("weather", {"city": "Lima"})
        failed = await client.call_tool("fail")
    assert weather.structured == {"city": "Lima", "celsius": 4.5}
    assert failed.is_error
    assert failed.text == "it broke"


async def test_tools_are_ordinary_toolwire_tools() -> None:
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        tools = await client.tools(prefix="sdk")
        registry = ToolRegistry(tools)
        echo = registry.get("sdk_echo")
        assert isinstance(echo, McpTool)
        assert echo.spec.name == "echo"
        assert echo.strict is False
        assert echo.annotations.read_only_hint is True
        assert registry.get("sdk_weather").output_schema is not None
        assert echo.definition("openai").parameters["properties"] == {"text": {"type": "string"}}
        assert (await echo.invoke('{"text": "hi"}')).text == "hi"
        # Arguments are checked locally before anything goes over the wire.
        bad = await echo.invoke({"text": 3})
        assert bad.is_error
        assert "text" in bad.text


async def test_from_mcp_returns_tools_and_the_open_client() -> None:
    async with serve_app(sdk_app()) as url:
        tools, client = await from_mcp(url, headers={"x-test": "1"})
        try:
            assert {t.name for t in tools} >= {"echo", "everything"}
            assert client.connected
        finally:
            await client.close()
        assert not client.connected


async def test_unknown_server_tool_is_an_error_result() -> None:
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        result = await client.call_tool("missing")
    assert result.is_error


async def test_stdio_server() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "mcp_servers.py"), "sdk-stdio"],
        cwd=str(Path.cwd()),
    )
    async with McpClient(params, timeout=30) as client:
        assert client.server_info is not None
        specs = await client.list_tools()
        assert len(specs) == 6
        result = await client.call_tool("everything")
        assert [type(p).__name__ for p in result.content] == [
            "TextPart",
            "ImagePart",
            "AudioPart",
            "ResourcePart",
            "ResourcePart",
            "ResourceLinkPart",
        ]
        assert (await client.call_tool("echo", {"text": "over stdio"})).text == "over stdio"


async def test_not_connected_is_a_clear_error() -> None:
    client = McpClient("http://127.0.0.1:1/mcp")
    with pytest.raises(RuntimeError, match="not connected"):
        await client.list_tools()


async def test_stdio_server_that_dies_mid_call() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_servers.py"), "sdk-stdio"]
    )
    async with McpClient(params, timeout=30) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("die")
    assert result.is_error
    assert "may or may not have run" in result.text


async def test_stdio_timeout_is_a_timeout_error_result() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_servers.py"), "sdk-stdio"]
    )
    async with McpClient(params, timeout=30) as client:
        result = await client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert result.is_error
        assert isinstance(result.error, ToolTimeoutError)
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"


async def test_param_headers_are_sent_and_a_mismatch_relists() -> None:
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        assert client.protocol_version == "2026-07-28"
        # Not listed yet: the server refuses the call without its Mcp-Param header, the client
        # lists the tools and sends the call once more.
        first = await client.call_tool("region", {"region": "eu-west"})
        assert first.text == "eu-west", first.text
        second = await client.call_tool("region", {"region": "sa-east"})
        assert second.text == "sa-east"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("pass", "closed the connection"),  # exits before the handshake
        ("import sys; sys.stdin.read()", "did not answer the handshake"),  # never answers
    ],
    ids=["exits", "silent"],
)
async def test_stdio_server_that_fails_the_handshake(script: str, message: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", script])
    client = McpClient(params, timeout=1)
    with anyio.fail_after(20), pytest.raises(McpConnectionError, match=message):
        await client.connect()
    assert not client.connected


async def test_user_headers_replace_ours_whatever_their_case() -> None:
    seen: list[list[tuple[bytes, bytes]]] = []
    inner = sdk_app()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append(list(scope["headers"]))
        await inner(scope, receive, send)

    headers = {
        "Authorization": "Bearer from-headers",
        "X-Trace": "abc",
        "Accept": "application/json, text/event-stream",
    }
    async with (
        serve_app(recording) as url,
        McpClient(url, auth_token="tok", headers=headers) as client,
    ):
        await client.list_tools()
    assert seen
    for request in seen:
        names = [name.lower() for name, _ in request]
        assert names.count(b"authorization") == 1
        assert names.count(b"accept") == 1
        assert dict(request)[b"authorization"] == b"Bearer tok"  # auth_token wins
        assert dict(request)[b"x-trace"] == b"abc"
