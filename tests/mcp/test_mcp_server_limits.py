"""`create_app` under hostile clients: huge and stalled uploads, session floods, long names; and
the approval need of a tool, carried across MCP to toolwire's client and the agent's policy."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp_fixtures import eventually, serve_app

from toolwire import Agent, ScriptedModel, ToolAnnotations, tool
from toolwire.mcp import (
    APPROVAL_META_KEY,
    McpClient,
    McpServerConfig,
    McpToolRegistry,
    create_app,
)

pytestmark = pytest.mark.anyio

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


WIPED: list[str] = []


@tool(requires_approval=True, annotations=ToolAnnotations(destructive_hint=True))
def wipe(path: str) -> str:
    """Delete everything under a path."""
    WIPED.append(path)
    return f"wiped {path}"


@tool(annotations=ToolAnnotations(destructive_hint=True))
def prune(path: str) -> str:
    """Delete old files under a path."""
    WIPED.append(path)
    return f"pruned {path}"


@pytest.fixture
async def url() -> AsyncIterator[str]:
    app = create_app([add, wipe, prune], max_body_bytes=64 * 1024, upload_timeout=0.5)
    async with serve_app(app) as found:
        yield found


async def _raw_request(url: str, head: dict[str, str], chunks: AsyncIterator[bytes]) -> int:
    """POST a chunked body piece by piece; the status, which may come before the body ends."""
    host, port = url.removeprefix("http://").split("/")[0].split(":")
    lines = ["POST /mcp HTTP/1.1", f"host: {host}:{port}", "transfer-encoding: chunked"]
    lines += [f"{k}: {v}" for k, v in {**HEADERS, **head}.items()]
    stream = await anyio.connect_tcp(host, int(port))
    async with stream:
        await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        answer = b""
        async with anyio.create_task_group() as group:

            async def upload() -> None:
                async for chunk in chunks:
                    try:
                        await stream.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        return

            group.start_soon(upload)
            while b"\r\n" not in answer:
                answer += await stream.receive()
            group.cancel_scope.cancel()
    return int(answer.split(b" ")[1])


ERAS = [{"mcp-protocol-version": "2026-07-28"}, {"mcp-protocol-version": "2025-11-25"}]


@pytest.mark.parametrize("era", ERAS, ids=["2026-07-28", "handshake"])
async def test_a_huge_upload_is_refused_while_it_is_still_arriving(
    url: str, era: dict[str, str]
) -> None:
    sent: list[int] = []

    async def endless() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"'
        while True:  # never ends: only a server that refuses mid-upload can answer
            sent.append(16 * 1024)
            yield b"x" * 16 * 1024
            await anyio.lowlevel.checkpoint()

    with anyio.fail_after(20):
        status = await _raw_request(url, era, endless())
    assert status == 413
    assert sum(sent) < 16 * 1024 * 1024


async def test_a_declared_oversize_body_is_refused_unread(url: str) -> None:
    async with httpx2.AsyncClient() as http:
        answer = await http.post(url, content=b"{" + b" " * 70_000 + b"}", headers=HEADERS)
    assert answer.status_code == 413
    assert "65536 bytes" in answer.json()["error"]["message"]


@pytest.mark.parametrize("era", ERAS, ids=["2026-07-28", "handshake"])
async def test_a_stalled_upload_is_timed_out(url: str, era: dict[str, str]) -> None:
    async def stalls() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc":"2.0",'
        await anyio.sleep_forever()

    with anyio.fail_after(20):
        status = await _raw_request(url, era, stalls())
    assert status == 408


async def test_an_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        create_app([add], auth_token="")
    with pytest.raises(ValueError, match="empty"):
        create_app([add], auth_token="  ")


async def test_an_unknown_tool_name_is_echoed_only_in_part(url: str) -> None:
    # Over the handshake era the name travels in the body only (no `Mcp-Name` header).
    async with McpClient(url, protocol="legacy") as client:
        result = await client.call_tool("z" * 60_000)
    assert result.is_error
    assert "Unknown tool" in result.text
    assert len(result.text) < 500


async def _initialize(http: httpx2.AsyncClient, url: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "flood", "version": "0"},
        },
    }
    return await http.post(url, json=body, headers=HEADERS)


async def test_the_session_cap_and_idle_timeout_are_settings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp.server.streamable_http_manager")
    app = create_app([add], max_sessions=2, session_idle_timeout=0.5)
    probe = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    def on(session: str) -> dict[str, str]:
        return {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}

    async with serve_app(app) as url, httpx2.AsyncClient() as http:
        first = (await _initialize(http, url)).headers["mcp-session-id"]
        second = (await _initialize(http, url)).headers["mcp-session-id"]
        # At the cap the oldest idle session gives way: a newcomer is never locked out.
        third = await _initialize(http, url)
        assert third.status_code == 200
        assert (await http.post(url, json=probe, headers=on(first))).status_code == 404

        # Idle sessions close after the idle timeout (any request would keep it alive, so the
        # wait is on the SDK's record of closing it).
        await eventually(lambda: f"Session {second} idle timeout" in caplog.text, 20)
        assert (await http.post(url, json=probe, headers=on(second))).status_code == 404


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_the_approval_need_and_destructive_hint_cross_mcp(url: str, protocol: Any) -> None:
    async with McpClient(url, protocol=protocol) as client:
        tools = {t.name: t for t in await client.tools()}
    assert tools["wipe"].requires_approval
    assert tools["wipe"].annotations.destructive_hint is True
    assert tools["wipe"].spec.requires_approval
    assert not tools["prune"].requires_approval
    assert tools["prune"].annotations.destructive_hint is True
    assert not tools["add"].requires_approval


async def test_the_listing_carries_the_approval_need_in_meta(url: str) -> None:
    async with httpx2.AsyncClient() as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover"}
        headers = {**HEADERS, "mcp-protocol-version": "2026-07-28"}
        await http.post(url, json=body, headers=headers)
        listing = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/list",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
        answer = await http.post(url, json=listing, headers={**headers, "mcp-method": "tools/list"})
    tools = {t["name"]: t for t in json.loads(answer.text)["result"]["tools"]}
    assert tools["wipe"]["_meta"] == {APPROVAL_META_KEY: True}
    assert tools["wipe"]["annotations"] == {"destructiveHint": True}
    assert "_meta" not in tools["add"]


async def test_the_agent_asks_before_running_an_mcp_tool_that_needs_approval(url: str) -> None:
    WIPED.clear()
    async with McpClient(url) as client:
        tools = await client.tools()
        model = ScriptedModel([("wipe", {"path": "/data"}), "done"])
        paused = await Agent(model, tools=tools).run("clean up")
        assert paused.stop_reason == "approval_required"
        assert WIPED == []  # nothing ran on the server
        (pending,) = paused.pending
        agent = Agent(ScriptedModel([("wipe", {"path": "/data"}), "done"]), tools=tools)
        paused = await agent.run("clean up")
        done = await agent.resume(paused, approvals={paused.pending[0].call.id: True})
        assert done.stop_reason == "completed"
        assert WIPED == ["/data"]
        assert pending.reason == "approval"


async def test_the_destructive_policy_applies_to_mcp_tools(url: str) -> None:
    WIPED.clear()
    async with McpClient(url) as client:
        tools = await client.tools()
        marked = await Agent(ScriptedModel([("prune", {"path": "/a"}), "ok"]), tools=tools).run(
            "go"
        )
        assert marked.stop_reason == "completed"
        strict = await Agent(
            ScriptedModel([("prune", {"path": "/b"}), "ok"]),
            tools=tools,
            approval_policy="destructive",
        ).run("go")
        assert strict.stop_reason == "approval_required"
    assert WIPED == ["/a"]


async def test_a_client_can_ask_approval_for_every_tool_of_a_server(url: str) -> None:
    async with McpToolRegistry([McpServerConfig(url, requires_approval=True)]) as registry:
        tools = await registry.discover_tools()
    assert tools and all(t.requires_approval for t in tools)


async def test_library_serve_refuses_beyond_loopback_without_a_token() -> None:
    from toolwire.mcp import serve

    with pytest.raises(ValueError, match="allow_anonymous"):
        await serve([add], host="0.0.0.0", port=0)
    with pytest.raises(ValueError, match="empty"):
        await serve([add], host="0.0.0.0", port=0, auth_token="")
