"""2026-07-28 requests with JSON answers, served by toolwire's single-request path, against what
the SDK's own session manager answers for the same server.

`create_app(json_response=True)` answers a plain 2026-07-28 request without the SDK's HTTP
machinery around its request kernel, and hands every other request to the SDK; the reference
serves the very same low-level server through the SDK's manager alone. Every request (good
ones, and each way one can be refused) must get the same status, content type and JSON-RPC body
from both, in either mode.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx
import pytest
from mcp_fixtures import same_answers, serve_app
from pydantic import Field

from toolwire import ToolContext, tool
from toolwire.mcp import McpClient, build_server, create_app
from toolwire.mcp._modern import ModernJson, has_param_headers  # pyright: ignore[reportPrivateUsage]
from toolwire.mcp.server import _security  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": MODERN,
}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def fail(reason: str) -> str:
    """Raise with the reason."""
    raise RuntimeError(reason)


@tool
def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Say where (its argument travels in an `Mcp-Param-Region` header too)."""
    return region


@tool
async def busy(ctx: ToolContext) -> str:
    """Report progress, then answer."""
    await ctx.report_progress(0.5, 1.0)
    return "done"


TOOLS = [add, fail, where, busy]


def reference_app(stateless: bool) -> Any:
    """The same server, served by the SDK's own session manager (JSON answers)."""
    server = build_server(TOOLS, subscriptions=not stateless)
    return server.streamable_http_app(
        json_response=True,
        stateless_http=stateless,
        transport_security=_security(None, True),
    )


def call(
    method: str, params: dict[str, Any] | None = None, id: Any = 1, meta: bool = True
) -> bytes:
    given = dict(params or {})
    if meta:
        given["_meta"] = ENVELOPE
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": given}).encode()


def named(method: str, name: str) -> dict[str, str]:
    return {**HEADERS, "mcp-method": method, "mcp-name": name}


TOOLS_CALL = {**HEADERS, "mcp-method": "tools/call"}
Headers = dict[str, str] | list[tuple[str, str]]

CASES: dict[str, tuple[Headers, bytes]] = {
    "tools/call": (named("tools/call", "add"), call("tools/call", {"name": "add", "arguments": {"a": 20, "b": 22}}, id=7)),
    "tools/call with a string id": (named("tools/call", "add"), call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, id="c-1")),
    "a tool that raises": (named("tools/call", "fail"), call("tools/call", {"name": "fail", "arguments": {"reason": "no"}})),
    "arguments of the wrong type": (named("tools/call", "add"), call("tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})),
    "an unknown tool": (named("tools/call", "nope"), call("tools/call", {"name": "nope", "arguments": {}})),
    "no arguments": (named("tools/call", "add"), call("tools/call", {"name": "add"})),
    "params that are not params": (TOOLS_CALL, call("tools/call", {"arguments": {}})),
    "a tool that reports progress": (named("tools/call", "busy"), call("tools/call", {"name": "busy", "arguments": {}, "_meta": {**ENVELOPE, "progressToken": 3}})),
    "tools/list": ({**HEADERS, "mcp-method": "tools/list"}, call("tools/list")),
    "ping": ({**HEADERS, "mcp-method": "ping"}, call("ping")),
    "an unknown method": ({**HEADERS, "mcp-method": "nothing/here"}, call("nothing/here")),
    "an unknown log level": ({**HEADERS, "mcp-method": "logging/setLevel"}, call("logging/setLevel", {"level": "loud"})),
    "initialize": ({**HEADERS, "mcp-method": "initialize"}, call("initialize", {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})),
    "the Mcp-Param header agreeing": ({**named("tools/call", "where"), "mcp-param-region": "north"}, call("tools/call", {"name": "where", "arguments": {"region": "north"}})),
    "the Mcp-Param header disagreeing": ({**named("tools/call", "where"), "mcp-param-region": "south"}, call("tools/call", {"name": "where", "arguments": {"region": "north"}})),
    "the Mcp-Param header missing": (named("tools/call", "where"), call("tools/call", {"name": "where", "arguments": {"region": "north"}})),
    "an Mcp-Param header twice": ([*named("tools/call", "where").items(), ("mcp-param-region", "north"), ("mcp-param-region", "north")], call("tools/call", {"name": "where", "arguments": {"region": "north"}})),
    "an Mcp-Param header on a tool without one": ({**named("tools/call", "add"), "mcp-param-region": "north"}, call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})),
    "no envelope": ({**HEADERS, "mcp-method": "ping"}, call("ping", meta=False)),
    "the method header disagreeing": ({**HEADERS, "mcp-method": "tools/list"}, call("ping")),
    "the name header disagreeing": (named("tools/call", "fail"), call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})),
    "no method header": (HEADERS, call("ping")),
    "a routing header twice": ([*HEADERS.items(), ("mcp-method", "ping"), ("mcp-method", "ping")], call("ping")),
    "an envelope of another version": ({**HEADERS, "mcp-method": "ping"}, call("ping").replace(MODERN.encode(), b"2099-01-01", 1)),
    "an unsupported version": ({**HEADERS, "mcp-method": "ping", "mcp-protocol-version": "2099-01-01"}, call("ping").replace(MODERN.encode(), b"2099-01-01")),
    "a notification": ({**HEADERS, "mcp-method": "notifications/initialized"}, b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    "a posted response": (HEADERS, b'{"jsonrpc":"2.0","id":5,"result":{}}'),
    "a null id": ({**HEADERS, "mcp-method": "ping"}, call("ping", id=None)),
    "not JSON": (HEADERS, b"{not json"),
    "not JSON-RPC": (HEADERS, b'{"hello":"world"}'),
    "a batch": (HEADERS, b"[" + call("ping") + b"]"),
    "no JSON accepted": ({**HEADERS, "accept": "text/event-stream", "mcp-method": "ping"}, call("ping")),
    "any type accepted": ({**HEADERS, "accept": "*/*", "mcp-method": "ping"}, call("ping")),
    "a JSON-like content type": ({**HEADERS, "content-type": "text/plain", "mcp-method": "ping"}, call("ping")),
    "a content type with parameters": ({**HEADERS, "content-type": "application/json; charset=utf-8", "mcp-method": "ping"}, call("ping")),
    "a foreign Host": ({**HEADERS, "host": "evil.example", "mcp-method": "ping"}, call("ping")),
    "a foreign Origin": ({**HEADERS, "origin": "http://evil.example", "mcp-method": "ping"}, call("ping")),
    "a local Origin": ({**HEADERS, "origin": "http://localhost:3000", "mcp-method": "ping"}, call("ping")),
    "subscriptions/listen without SSE": ({**HEADERS, "accept": "application/json", "mcp-method": "subscriptions/listen"}, call("subscriptions/listen", {"notifications": {}})),
}  # fmt: skip


def essence(response: httpx.Response) -> tuple[int, str, Any]:
    kind = response.headers.get("content-type", "")
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return response.status_code, kind, body


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
async def test_every_answer_is_the_sdks_answer(stateless: bool) -> None:
    ours = create_app(TOOLS, stateless=stateless, json_response=True)
    found = await same_answers(ours, reference_app(stateless), CASES, essence)
    # The cases do reach the paths they are named for.
    answer = found["tools/call"][0]
    assert answer[:2] == (200, "application/json")
    assert answer[2]["id"] == 7 and answer[2]["result"]["content"][0]["text"] == "42"
    assert answer[2]["result"]["resultType"] == "complete"
    assert found["the Mcp-Param header agreeing"][0][2]["result"]["content"][0]["text"] == "north"
    assert found["the Mcp-Param header disagreeing"][0][0] == 400
    assert found["an Mcp-Param header twice"][0][0] == 400
    assert found["the name header disagreeing"][0][0] == 400
    assert found["a routing header twice"][0][0] == 400
    assert found["an unknown method"][0][0] == 404
    assert found["a notification"][0][0] == 202
    assert found["no JSON accepted"][0][0] == 406
    assert found["a foreign Host"][0][0] == 421
    assert found["a tool that reports progress"][0][2]["result"]["content"][0]["text"] == "done"


async def test_a_client_calls_through_it_in_both_modes() -> None:
    for stateless in (False, True):
        app = create_app(TOOLS, stateless=stateless, json_response=True)
        async with serve_app(app) as url, McpClient(url, protocol="modern") as client:
            assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"
            assert (await client.call_tool("where", {"region": "east"})).text == "east"
            assert {t.name for t in await client.list_tools()} == {t.name for t in TOOLS}


def test_only_a_schema_declaring_a_header_is_given_to_the_sdks_check() -> None:
    """The SDK walks the schema it is given on every call; one without `x-mcp-header` can fail
    no check, so `build_server` gives it none."""
    assert has_param_headers(where.definition("mcp").parameters)
    assert not has_param_headers(add.definition("mcp").parameters)
    assert not has_param_headers(None)
    server = build_server(TOOLS)
    lookup = server.get_tool_input_schema
    assert lookup is not None
    assert lookup("where") == where.definition("mcp").parameters
    assert lookup("add") is None


async def test_header_verdicts_are_remembered_in_bounded_memory() -> None:
    """The SDK's Host/Origin verdict is remembered per distinct value, but a caller sending a
    new Origin on every request cannot make that memory grow without end."""
    handed: list[str] = []

    async def manager(scope: Any, receive: Any, send: Any) -> None:
        handed.append(dict(scope["headers"])[b"origin"].decode())
        await send({"type": "http.response.start", "status": 403, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = ModernJson(build_server(TOOLS), manager, _security(None, True))
    body = call("ping")
    headers = [(k.encode(), v.encode()) for k, v in {**HEADERS, "mcp-method": "ping"}.items()]
    sent: list[Any] = []

    async def receive() -> Any:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    for i in range(300):
        sent.clear()
        origin = (b"origin", f"http://o{i}.example".encode())
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(b"host", b"127.0.0.1:8000"), *headers, origin],
        }
        await app(scope, receive, send)
        assert sent[0]["status"] == 403
    assert len(handed) == 300  # every foreign Origin was refused by the SDK itself
    assert 0 < len(app._allowed) <= 256  # pyright: ignore[reportPrivateUsage]
