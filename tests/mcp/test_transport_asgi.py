"""The in-process transport: what only it does (apps, lifespans, streaming without a socket), and
how `McpClient(x)` picks a transport for what it is given."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from hostile_server import Hostile
from mcp_servers import malformed_app
from starlette.applications import Starlette
from transport_servers import Probe, sdk_app, toolwire_app

from toolwire import tool
from toolwire.mcp import (
    AsgiTransport,
    HttpTransport,
    McpAuthError,
    McpClient,
    McpClientOptions,
    McpConnectionError,
    McpProtocolError,
    McpTransport,
    StdioServerParameters,
    StdioTransport,
    create_app,
)
from toolwire.mcp.elicitation import Elicitation, ElicitationAnswer

pytestmark = pytest.mark.anyio


async def test_a_server_asks_for_input_mid_call_over_the_open_answer_stream() -> None:
    # The SDK's server sends progress, then an elicitation request, on the call's SSE answer and
    # waits for our reply: a transport that waited for the whole answer could never reply.
    asked: list[str] = []

    async def person(request: Elicitation) -> ElicitationAnswer:
        asked.append(request.message)
        return ElicitationAnswer("accept", {"word": "streamed"})

    with anyio.fail_after(30):
        async with McpClient(sdk_app(Probe()), elicitation=person) as client:
            result = await client.call_tool("ask")
    assert not result.is_error, result.text
    assert result.text == "streamed"
    assert asked == ["Say a word"]


async def test_credentials_and_the_address_reach_the_app() -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    def app() -> Any:
        return create_app([ping], auth_token="s3cret-token-for-tests", path="/tools")

    url = "http://localhost:9000/tools"
    async with McpClient(
        AsgiTransport(app(), url=url, auth_token="s3cret-token-for-tests")
    ) as client:
        assert (await client.call_tool("ping")).text == "pong"
    with anyio.fail_after(30), pytest.raises(McpAuthError, match="refused our credentials"):
        await McpClient(AsgiTransport(app(), url=url)).connect()


async def test_an_app_whose_startup_fails_is_a_connection_error() -> None:
    inner = sdk_app(Probe())

    async def failing(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.failed", "message": "no database"})
            return
        await inner(scope, receive, send)

    client = McpClient(failing)
    with (
        anyio.fail_after(30),
        pytest.raises(McpConnectionError, match="startup failed: no database"),
    ):
        await client.connect()
    assert not client.connected


async def test_an_app_without_a_lifespan_is_served() -> None:
    inner = malformed_app()

    async def bare(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise RuntimeError(f"unsupported scope {scope['type']}")
        await inner(scope, receive, send)

    with anyio.fail_after(30):
        async with McpClient(bare) as client:
            assert client.server_info == {"name": "malformed", "version": "0"}
            result = await client.call_tool("bad_content")
    assert result.is_error
    assert isinstance(result.error, McpProtocolError)


async def test_an_app_that_raises_answers_500() -> None:
    inner = malformed_app()

    async def raising(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            message = await receive()
            if json.loads(message["body"]).get("method") == "tools/call":
                raise RuntimeError("the app broke")

            async def replay() -> Any:
                return message

            await inner(scope, replay, send)
            return
        await inner(scope, receive, send)

    with anyio.fail_after(30):
        async with McpClient(raising) as client:
            result = await client.call_tool("anything")
    assert result.is_error
    assert "HTTP 500" in result.text


async def test_caps_hold_in_process() -> None:
    app: Any = Hostile()  # typed with plain dicts, not the ASGI mappings
    with anyio.fail_after(30):
        async with McpClient(app, max_answer_bytes=1024 * 1024) as client:
            for name in ("endless_sse_line", "endless_sse_event", "endless_json"):
                result = await client.call_tool(name)
                assert result.is_error
                assert "larger than 1 MiB (max_answer_bytes)" in result.text
            # An answer split at awkward places (CRLF torn across chunks) still reads.
            assert (await client.call_tool("echo_sse")).text == "ok"


async def test_a_stream_cut_mid_event_is_a_dropped_connection() -> None:
    async def cut(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise RuntimeError("no lifespan")
        if scope["method"] == "DELETE":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        request = json.loads((await receive())["body"])
        if "id" not in request:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "cut", "version": "0"},
        }
        if request["method"] == "tools/call":
            headers = [(b"content-type", b"text/event-stream")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            half = b'data: {"jsonrpc":"2.0","id":' + str(request["id"]).encode() + b',"res'
            await send({"type": "http.response.body", "body": half, "more_body": True})
            return  # the app ends mid-event, as a server process that died would
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})

    with anyio.fail_after(30):
        async with McpClient(cut, protocol="legacy") as client:
            result = await client.call_tool("write", repeatable=False)
    assert result.is_error
    assert isinstance(result.error, McpConnectionError)
    assert result.error.may_have_run
    assert "may or may not have run" in result.text


class Recording:
    """A transport of one's own: wraps another and notes each request's method."""

    def __init__(self, inner: McpTransport) -> None:
        self.inner = inner
        self.methods: list[str] = []
        self.options: McpClientOptions | None = None

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.inner.server_info

    @property
    def session_id(self) -> str | None:
        return self.inner.session_id

    @property
    def protocol_version(self) -> str | None:
        return self.inner.protocol_version

    async def open(self, options: McpClientOptions) -> None:
        self.options = options
        await self.inner.open(options)

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        self.methods.append(method)
        return await self.inner.request(method, params, repeatable=repeatable, limit=limit)

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        self.inner.remember_tools(schemas)

    async def close(self) -> None:
        await self.inner.close()


async def test_a_transport_of_ones_own_is_used_as_given() -> None:
    recording = Recording(AsgiTransport(toolwire_app(Probe())))
    assert isinstance(recording, McpTransport)
    async with McpClient(recording, client_name="recorder", timeout=12) as client:
        assert client.transport is recording
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
        assert client.protocol_version == "2026-07-28"
    assert recording.methods == ["tools/list", "tools/call"]
    assert recording.options is not None
    assert (recording.options.name, recording.options.timeout) == ("recorder", 12)


async def test_mcpclient_picks_the_transport_for_what_it_is_given() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", "pass"])
    app: Starlette = sdk_app(Probe())
    by_url = McpClient("http://127.0.0.1:1/mcp")
    by_params = McpClient(params)
    by_app = McpClient(app, headers={"x-test": "1"})
    assert type(by_url.transport) is HttpTransport
    assert type(by_params.transport) is StdioTransport
    assert type(by_app.transport) is AsgiTransport
    for client in (by_url, by_params, by_app):
        assert isinstance(client.transport, McpTransport)
    assert repr(by_url) == "McpClient('http://127.0.0.1:1/mcp')"
    assert repr(by_params) == f"McpClient({sys.executable!r})"
    assert repr(by_app).startswith("McpClient(AsgiTransport(")


async def test_options_a_transport_does_not_take_are_refused() -> None:
    params = StdioServerParameters(command=sys.executable)
    with pytest.raises(ValueError, match="headers, protocol: HTTP options"):
        McpClient(params, headers={"a": "b"}, protocol="legacy")
    with pytest.raises(ValueError, match="auth_token: HTTP options"):
        McpClient(HttpTransport("http://127.0.0.1:1/mcp"), auth_token="t")
    with pytest.raises(ValueError, match="http_client"):
        McpClient(sdk_app(Probe()), http_client=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not int"):
        McpClient(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="give auth_token or auth"):
        McpClient("http://127.0.0.1:1/mcp", auth_token="t", auth=object())  # type: ignore[arg-type]
