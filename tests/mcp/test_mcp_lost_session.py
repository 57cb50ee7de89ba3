"""A server that forgets our session, signalled as MCP asks (404) or as the TypeScript SDK does (400).

`server-everything`, the reference server, answers an unknown session id with HTTP 400 "Bad Request:
No valid session ID provided"; restarting it under a live client must cost one new handshake, not
every later call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest
from mcp_fixtures import free_port, node_env, require_node_tool, wait_for_port

from toolwire.mcp import McpClient

pytestmark = pytest.mark.anyio


class Everything:
    """server-everything over Streamable HTTP on a fixed port, restartable."""

    def __init__(self) -> None:
        self.command = require_node_tool("mcp-server-everything")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc: anyio.abc.Process | None = None

    async def start(self) -> None:
        env = {**node_env(), "PORT": str(self.port)}
        self.proc = await anyio.open_process(
            [self.command, "streamableHttp"], env=env, stdout=None, stderr=None
        )
        await wait_for_port(self.port)

    async def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            with anyio.fail_after(10):
                await proc.wait()
            await proc.aclose()
        # The port must be free again before the next start binds it.
        with anyio.fail_after(10):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", self.port)
                except OSError:
                    return
                await stream.aclose()
                await anyio.sleep(0.02)


@asynccontextmanager
async def everything() -> AsyncIterator[Everything]:
    server = Everything()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_restarting_server_everything_under_a_live_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="toolwire.mcp")
    async with everything() as server, McpClient(server.url, timeout=30) as client:
        specs = {s.name: s for s in await client.list_tools()}
        assert "get-sum" in specs
        first = client.session_id
        assert first is not None  # it keeps sessions, so a restart loses ours
        assert (await client.call_tool("echo", {"message": "before"})).text == "Echo: before"

        await server.stop()
        await server.start()

        # The toggle is neither read-only nor idempotent: the 400 says the request was refused
        # before it ran, so it is repeated in a new session all the same.
        toggle = specs["toggle-simulated-logging"].annotations
        assert not toggle.read_only_hint and not toggle.idempotent_hint
        toggled = await client.call_tool("toggle-simulated-logging")
        assert not toggled.is_error, toggled.text
        assert "logging" in toggled.text.lower()
        assert client.session_id not in (None, first)
        total = await client.call_tool("get-sum", {"a": 2, "b": 3})
        assert "5" in total.text
        again = await client.call_tool("echo", {"message": "after"})
        assert again.text == "Echo: after"
    [renewal] = [r for r in caplog.records if r.name == "toolwire.mcp"]
    assert renewal.levelno == logging.INFO
    assert f"MCP session {first} at {server.url} was lost; renewed as" in renewal.getMessage()


async def test_server_everything_answers_a_lost_session_with_400() -> None:
    # Pins the behaviour the recovery above exists for, so a change upstream shows here.
    import httpx2

    async with everything() as server, httpx2.AsyncClient() as http:
        answer = await http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "accept": "application/json, text/event-stream",
                "mcp-session-id": "not-a-session",
                "mcp-protocol-version": "2025-11-25",
            },
        )
        assert answer.status_code == 400
        assert "session" in answer.text.lower()
