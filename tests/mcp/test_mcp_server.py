"""toolwire's server, checked with the official SDK client, raw HTTP and toolwire's client."""

from __future__ import annotations

import sys

import anyio
import httpx
import pytest
from mcp_fixtures import HERE, eventually, free_port, serve_app, wait_for_port
from mcp_servers import CALLS, PNG, WAV, sdk_app, toolwire_app, toolwire_tools
from pydantic import BaseModel

from mcp import Client
from toolwire import ToolAnnotations
from toolwire.mcp import (
    McpAuthError,
    McpClient,
    StdioServerParameters,
    build_server,
    create_app,
    serve,
)
from toolwire.results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart

pytestmark = pytest.mark.anyio

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_lists_and_calls(mode: str) -> None:
    async with serve_app(toolwire_app()) as url, Client(url, mode=mode) as client:
        listed = await client.list_tools()
        by_name = {t.name: t for t in listed.tools}
        assert set(by_name) == {
            "add",
            "record",
            "pause",
            "slow_write",
            "media",
            "forecast",
            "broken",
        }
        add = by_name["add"]
        assert add.description == "Add two integers."
        assert add.input_schema["required"] == ["a", "b"]
        assert add.annotations is not None
        assert add.annotations.read_only_hint is True
        assert add.title == "Add"
        assert (
            by_name["forecast"].output_schema is None
            or "properties" in by_name["forecast"].output_schema
        )

        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0].text == "5"  # type: ignore[union-attr]
        assert not result.is_error

        broken = await client.call_tool("broken", {})
        assert broken.is_error
        assert broken.content[0].text == "the tool broke on purpose"  # type: ignore[union-attr]

        invalid = await client.call_tool("add", {"a": "x", "b": 1})
        assert invalid.is_error
        assert "Invalid arguments" in invalid.content[0].text  # type: ignore[union-attr]

        media = await client.call_tool("media", {})
        assert [c.type for c in media.content] == [
            "text",
            "image",
            "audio",
            "resource",
            "resource",
            "resource_link",
        ]


async def test_toolwire_round_trip_keeps_every_part() -> None:
    async with serve_app(toolwire_app()) as url, McpClient(url) as client:
        media = await client.call_tool("media")
        forecast = await client.call_tool("forecast", {"city": "Quito"})
        unknown = await client.call_tool("nope")
    assert media.content == [
        TextPart("hi"),
        ImagePart(data=PNG, mime_type="image/png"),
        AudioPart(data=WAV, mime_type="audio/wav"),
        ResourcePart(uri="test://r", mime_type="text/plain", text="inline"),
        ResourcePart(uri="test://b", mime_type="application/octet-stream", blob=b"\x00"),
        ResourceLinkPart(uri="test://l", name="l", description="d", mime_type="text/html"),
    ]
    assert forecast.structured == {"city": "Quito", "celsius": 21}
    assert unknown.is_error
    assert "Unknown tool 'nope'" in unknown.text


async def test_output_schema_and_annotations_are_listed() -> None:
    from toolwire import tool

    @tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
    def drop(table: str) -> dict[str, int]:
        """Drop a table."""
        return {"rows": 0}

    async with serve_app(build_server([drop]).streamable_http_app()) as url, McpClient(url) as c:
        (spec,) = await c.list_tools()
    assert spec.annotations == ToolAnnotations(destructive_hint=True, open_world_hint=False)
    assert spec.output_schema == drop.output_schema


class Weather(BaseModel):
    city: str
    celsius: float


async def test_results_that_break_the_output_schema_are_error_results() -> None:
    # The SDK's client refuses (raises on) structured content that breaks a tool's output
    # schema, so the server must not send it: such a result goes out as an error result.
    from toolwire import tool
    from toolwire.results import text_result

    @tool
    def good(city: str) -> Weather:
        """Right shape."""
        return Weather(city=city, celsius=4.5)

    @tool
    def partial(city: str) -> Weather:
        """A required field missing."""
        return {"city": city}  # type: ignore[return-value]  # pyright: ignore[reportReturnType]

    @tool
    def unstructured(city: str) -> Weather:
        """No structured content at all."""
        return text_result(f"sunny in {city}")  # type: ignore[return-value]  # pyright: ignore[reportReturnType]

    app = create_app([good, partial, unstructured])
    async with serve_app(app) as url, Client(url) as sdk:
        await sdk.list_tools()
        ok = await sdk.call_tool("good", {"city": "Lima"})
        assert not ok.is_error
        assert ok.structured_content == {"city": "Lima", "celsius": 4.5}
        for name in ("partial", "unstructured"):
            bad = await sdk.call_tool(name, {"city": "Lima"})
            assert bad.is_error, name
            assert "output schema" in bad.content[0].text  # type: ignore[union-attr]


async def test_tools_returning_content_parts_list_no_output_schema() -> None:
    from toolwire import tool

    @tool
    def picture() -> ImagePart:
        """A picture."""
        return ImagePart(data=PNG, mime_type="image/png")

    @tool
    def note() -> ResourcePart:
        """A note."""
        return ResourcePart(uri="test://n", mime_type="text/plain", text="hi")

    async with serve_app(create_app([picture, note])) as url, Client(url) as sdk:
        listed = {t.name: t for t in (await sdk.list_tools()).tools}
        assert listed["picture"].output_schema is None
        assert listed["note"].output_schema is None
        # The SDK's client would refuse the result if the listing promised structured content.
        image = await sdk.call_tool("picture", {})
        assert not image.is_error
        assert [c.type for c in image.content] == ["image"]
        assert [c.type for c in (await sdk.call_tool("note", {})).content] == ["resource"]


async def test_pagination() -> None:
    app = toolwire_app(page_size=2)
    async with serve_app(app) as url:
        async with McpClient(url) as client:
            assert len(await client.list_tools()) == 7
        async with Client(url) as sdk:
            first = await sdk.list_tools()
            assert len(first.tools) == 2
            assert first.next_cursor is not None


async def test_bearer_token_is_required() -> None:
    async with serve_app(toolwire_app(auth_token="s3cret-s3cret-s3cret")) as url:
        async with McpClient(url, auth_token="s3cret-s3cret-s3cret") as client:
            assert (await client.call_tool("add", {"a": 1, "b": 1})).text == "2"
        for token in (None, "wrong"):
            with pytest.raises(McpAuthError):
                await McpClient(url, auth_token=token).connect()
        async with httpx.AsyncClient() as http:
            response = await http.post(url, json=INIT, headers=HEADERS)
            # The scheme is case-insensitive (RFC 7235); the token is not.
            lower = await http.post(
                url, json=INIT, headers={**HEADERS, "authorization": "bearer s3cret-s3cret-s3cret"}
            )
            wrong_case = await http.post(
                url, json=INIT, headers={**HEADERS, "authorization": "Bearer S3CRET"}
            )
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert lower.status_code == 200
        assert wrong_case.status_code == 401


async def test_dns_rebinding_protection_is_on_by_default() -> None:
    async with serve_app(toolwire_app()) as url, httpx.AsyncClient() as http:
        evil = await http.post(
            url,
            json=INIT,
            headers={**HEADERS, "host": "evil.example.com", "origin": "http://evil.example.com"},
        )
        bad_origin = await http.post(
            url, json=INIT, headers={**HEADERS, "origin": "http://evil.example.com"}
        )
        local = await http.post(url, json=INIT, headers={**HEADERS, "host": "localhost"})
    assert 400 <= evil.status_code < 500
    assert 400 <= bad_origin.status_code < 500
    assert local.status_code == 200


async def test_allowed_hosts_opt_in() -> None:
    app = toolwire_app(allowed_hosts=["tools.example.com"])
    async with serve_app(app) as url, httpx.AsyncClient() as http:
        ok = await http.post(url, json=INIT, headers={**HEADERS, "host": "tools.example.com"})
        local = await http.post(url, json=INIT, headers=HEADERS)
    assert ok.status_code == 200
    assert local.status_code == 421 or 400 <= local.status_code < 500


async def test_stateless_mode_keeps_no_session() -> None:
    async with serve_app(toolwire_app(stateless=True)) as url:
        async with McpClient(url) as client:
            assert client.session_id is None
            assert (await client.call_tool("add", {"a": 20, "b": 22})).text == "42"
        async with httpx.AsyncClient() as http:
            # Any request stands alone: no initialize, no session id.
            call = {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
            response = await http.post(url, json=call, headers=HEADERS)
        assert response.status_code == 200
        assert "mcp-session-id" not in response.headers


async def test_each_call_reaches_the_tool() -> None:
    CALLS.clear()
    async with serve_app(toolwire_app()) as url, McpClient(url) as client:
        await client.call_tool("record", {"note": "x"})
    assert CALLS == ["record"]


def test_duplicate_names_are_refused() -> None:
    tools = toolwire_tools()
    with pytest.raises(ValueError, match="already registered"):
        build_server([*tools, tools[0]])


async def test_serve_over_http() -> None:
    port = free_port()
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(toolwire_tools(), port=port, auth_token="t-t-t-t-t-t-t-t-t-t"))
        await wait_for_port(port)
        async with McpClient(
            f"http://127.0.0.1:{port}/mcp", auth_token="t-t-t-t-t-t-t-t-t-t"
        ) as client:
            assert (await client.call_tool("add", {"a": 3, "b": 4})).text == "7"
        tg.cancel_scope.cancel()


async def test_serve_over_stdio() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_servers.py"), "toolwire-stdio"]
    )
    async with McpClient(params, timeout=30) as client:
        assert client.server_info is not None
        assert client.server_info["name"] == "toolwire-stdio"
        assert len(await client.list_tools()) == 7
        assert (await client.call_tool("add", {"a": 3, "b": 4})).text == "7"
        assert (await client.call_tool("broken")).is_error


def test_public_names() -> None:
    import toolwire.mcp

    assert toolwire.mcp.__all__ == sorted(toolwire.mcp.__all__)
    assert all(hasattr(toolwire.mcp, name) for name in toolwire.mcp.__all__)


async def test_remote_tools_can_be_served_again() -> None:
    # A proxy: the SDK server's tools, listed by toolwire's client, served by toolwire's server.
    async with serve_app(sdk_app()) as upstream, McpClient(upstream) as remote:
        proxy = create_app(await remote.tools(prefix="up"), name="proxy")
        async with serve_app(proxy) as url, McpClient(url) as client:
            specs = {s.name: s for s in await client.list_tools()}
            assert specs["up_echo"].annotations.read_only_hint is True
            assert specs["up_weather"].output_schema is not None
            media = await client.call_tool("up_everything")
            assert [p.kind for p in media.content] == [
                "text",
                "image",
                "audio",
                "resource",
                "resource",
                "resource_link",
            ]
            weather = await client.call_tool("up_weather", {"city": "Lima"})
            assert weather.structured == {"city": "Lima", "celsius": 4.5}


async def test_closing_the_client_ends_its_session() -> None:
    async with serve_app(toolwire_app()) as url:
        client = McpClient(url, protocol="legacy")
        await client.connect()
        session = client.session_id
        assert session is not None
        await client.close()
        # The DELETE ended it: the server no longer knows the id.
        async with httpx.AsyncClient() as http:
            stale = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={
                    **HEADERS,
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                },
            )
        assert stale.status_code == 404


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_call_the_client_gives_up_on_stops_on_the_server(protocol: str) -> None:
    # 2026-07-28 cancels by closing the answer stream; with JSON answers nothing on the
    # server listens for that unless toolwire does. The handshake era sends a notification.
    from toolwire import tool

    events: list[str] = []

    @tool
    async def slow(seconds: float) -> str:
        """Sleep."""
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            events.append("cancelled")
            raise
        return "done"

    @tool
    def ping() -> str:
        """Answer at once."""
        return "pong"

    async with (
        serve_app(create_app([slow, ping])) as url,
        McpClient(url, protocol=protocol) as client,  # type: ignore[arg-type]
    ):
        result = await client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert result.is_error
        await eventually(lambda: events == ["cancelled"], 10)
        assert (await client.call_tool("ping")).text == "pong"
