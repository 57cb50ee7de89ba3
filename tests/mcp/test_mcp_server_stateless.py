"""A stateless server's handshake-era JSON answers, served in the request's own task, against
what the SDK's own stateless session manager answers for the same server.

`create_app(stateless=True)` answers these requests without the SDK's per-request session; the
reference below serves the very same low-level server through the SDK's manager. Every request
(good ones, and each way a request can be refused) must get the same status, content type and
JSON-RPC body from both.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp_fixtures import same_answers, serve_app

from toolwire import ToolContext, tool
from toolwire.mcp import LOCAL_HOSTS, McpClient, build_server, create_app
from toolwire.mcp.server import _security  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.anyio

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
VERSION = {"mcp-protocol-version": "2025-11-25"}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def fail(reason: str) -> str:
    """Raise with the reason."""
    raise RuntimeError(reason)


TOOLS = [add, fail]


def reference_app() -> Any:
    """The same server, served by the SDK's own stateless manager (JSON answers)."""
    server = build_server(TOOLS)
    return server.streamable_http_app(
        json_response=True,
        stateless_http=True,
        transport_security=_security(None, True),
    )


def request(method: str, params: dict[str, Any] | None = None, id: int = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


INIT = request(
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
)

CASES: dict[str, tuple[dict[str, str], bytes]] = {
    "initialize": (HEADERS, INIT),
    "initialize, an older version": (
        HEADERS,
        request(
            "initialize",
            {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
    ),
    "tools/list": ({**HEADERS, **VERSION}, request("tools/list")),
    "tools/list without a version header": (HEADERS, request("tools/list")),
    "tools/call": (
        {**HEADERS, **VERSION},
        request("tools/call", {"name": "add", "arguments": {"a": 20, "b": 22}}, id=7),
    ),
    "tools/call with a string id": (
        {**HEADERS, **VERSION},
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "call-1",
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
            }
        ).encode(),
    ),
    "a tool that raises": (
        {**HEADERS, **VERSION},
        request("tools/call", {"name": "fail", "arguments": {"reason": "no"}}),
    ),
    "arguments of the wrong type": (
        {**HEADERS, **VERSION},
        request("tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}}),
    ),
    "an unknown tool": (
        {**HEADERS, **VERSION},
        request("tools/call", {"name": "nope", "arguments": {}}),
    ),
    "params that are not params": (
        {**HEADERS, **VERSION},
        request("tools/call", {"arguments": {}}),
    ),
    "an unknown method": ({**HEADERS, **VERSION}, request("nothing/here")),
    "ping": ({**HEADERS, **VERSION}, request("ping")),
    "an unknown log level": (
        {**HEADERS, **VERSION},
        request("logging/setLevel", {"level": "loud"}),
    ),
    "a notification": (
        {**HEADERS, **VERSION},
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    ),
    "a cancellation": (
        {**HEADERS, **VERSION},
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}',
    ),
    "a posted response": ({**HEADERS, **VERSION}, b'{"jsonrpc":"2.0","id":5,"result":{}}'),
    "not JSON": ({**HEADERS, **VERSION}, b"{not json"),
    "not JSON-RPC": ({**HEADERS, **VERSION}, b'{"hello":"world"}'),
    "a batch": ({**HEADERS, **VERSION}, b"[" + request("ping") + b"]"),
    "no JSON accepted": (
        {"accept": "text/event-stream", "content-type": "application/json", **VERSION},
        request("ping"),
    ),
    "any type accepted": (
        {"accept": "*/*", "content-type": "application/json", **VERSION},
        request("ping"),
    ),
    "no content type": ({"accept": "application/json"}, request("ping")),
    "a JSON-like content type": (
        {"accept": "application/json", "content-type": "application/jsonx"},
        request("ping"),
    ),
    "a content type with parameters": (
        {"accept": "application/json", "content-type": "application/json; charset=utf-8"},
        request("ping"),
    ),
    "a foreign Host": ({**HEADERS, "host": "evil.example"}, request("ping")),
    "a foreign Origin": ({**HEADERS, "origin": "http://evil.example"}, request("ping")),
    "a local Origin": ({**HEADERS, "origin": "http://localhost:3000"}, request("ping")),
    "an unsupported version": (
        {**HEADERS, "mcp-protocol-version": "1999-01-01"},
        request("ping"),
    ),
}


def essence(response: httpx.Response) -> tuple[int, str, Any]:
    kind = response.headers.get("content-type", "")
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error: dict[str, Any] = body["error"]
        message = str(error.get("message", ""))
        if message.startswith(("Parse error", "Validation error")):
            # pydantic's own wording (with its version's URL) after the first words.
            error["message"] = message.split(":")[0]
    return response.status_code, kind, body


async def test_every_answer_is_the_sdks_answer() -> None:
    ours, theirs = create_app(TOOLS, stateless=True), reference_app()
    assert LOCAL_HOSTS  # the default Host list, on both sides
    found = await same_answers(ours, theirs, CASES, essence)
    # The cases do reach the paths they are named for.
    assert found["tools/call"][0][0] == 200
    assert found["tools/call"][0][2]["result"]["content"][0]["text"] == "42"
    assert found["a notification"][0][0] == 202
    assert found["not JSON"][0][0] == 400
    assert found["a foreign Host"][0][0] == 421
    assert found["no JSON accepted"][0][0] == 406
    assert "mcp-session-id" not in str(found)


async def test_no_answer_carries_a_session_id() -> None:
    app = create_app(TOOLS, stateless=True)
    async with serve_app(app) as url, httpx.AsyncClient(timeout=30) as http:
        for headers, body in (
            (HEADERS, INIT),
            ({**HEADERS, **VERSION}, request("tools/list")),
            ({**HEADERS, **VERSION}, b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
        ):
            response = await http.post(url, content=body, headers=headers)
            assert response.status_code in (200, 202)
            assert "mcp-session-id" not in response.headers


async def test_a_tool_that_talks_gets_no_way_to_ask() -> None:
    """With JSON answers forced, a stateless tool's question fails inside the tool (there is
    no stream for it) and its progress goes nowhere; the call still gets its answer."""
    asked: list[str] = []

    @tool
    async def ask(ctx: ToolContext) -> str:
        """Ask the client something."""
        await ctx.report_progress(0.5, 1.0)
        try:
            await ctx.elicit("Go on?", {"type": "object", "properties": {}})
        except Exception as exc:
            asked.append(type(exc).__name__)
        return "done"

    app = create_app([ask], stateless=True, json_response=True)
    async with serve_app(app) as url, McpClient(url, protocol="legacy") as client:
        with anyio.fail_after(30):
            result = await client.call_tool("ask", {})
    assert result.text == "done"
    assert len(asked) == 1
