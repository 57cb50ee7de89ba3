"""One round of calls over each `McpTransport`: Streamable HTTP (uvicorn on 127.0.0.1), stdio (a
subprocess) and in-process ASGI (no socket), each against toolwire's server and the SDK's."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp_fixtures import HERE, ROOT, eventually, serve_app
from transport_servers import Probe, sdk_app, toolwire_app

from toolwire import ToolTimeoutError
from toolwire.mcp import McpClient, StdioServerParameters

pytestmark = pytest.mark.anyio

Transport = Literal["http", "stdio", "asgi"]
Server = Literal["toolwire", "sdk"]

ROUNDS = [
    pytest.param(transport, server, protocol, id=f"{transport}-{server}-{protocol}")
    for transport in ("http", "stdio", "asgi")
    for server in ("toolwire", "sdk")
    # Over stdio the SDK's client always handshakes.
    for protocol in (("legacy",) if transport == "stdio" else ("auto", "legacy"))
]


class Round:
    """A client connected over one transport, and what its server's probe saw."""

    def __init__(self, client: McpClient, probe: Probe, log: Path | None) -> None:
        self.client = client
        self.probe = probe
        self.log = log

    async def seen(self, news: Literal["started", "cancelled"]) -> None:
        if self.log is None:  # the server runs in this process
            await (self.probe.started if news == "started" else self.probe.cancelled).wait()
            return
        log = anyio.Path(self.log)
        # The server is another process: its news arrives in the file.
        await eventually(lambda: self._logged(log, news))

    @staticmethod
    async def _logged(log: anyio.Path, news: str) -> bool:
        return await log.exists() and news in (await log.read_text()).split()


@asynccontextmanager
async def connected(
    transport: Transport, server: Server, protocol: Any, tmp_path: Path
) -> AsyncIterator[Round]:
    probe = Probe()
    app = toolwire_app(probe) if server == "toolwire" else sdk_app(probe)
    if transport == "http":
        async with serve_app(app) as url, McpClient(url, protocol=protocol, timeout=30) as client:
            yield Round(client, probe, None)
    elif transport == "stdio":
        log = tmp_path / "probe.log"
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(HERE / "transport_servers.py"), server, str(log)],
            cwd=str(ROOT),
        )
        async with McpClient(params, timeout=30) as client:
            yield Round(client, probe, log)
    else:
        async with McpClient(app, protocol=protocol, timeout=30) as client:
            yield Round(client, probe, None)


@pytest.mark.parametrize(("transport", "server", "protocol"), ROUNDS)
async def test_list_call_error_and_timeout(
    transport: Transport, server: Server, protocol: str, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        async with connected(transport, server, protocol, tmp_path) as round_:
            client = round_.client
            if protocol == "auto":
                assert client.protocol_version == "2026-07-28"
                assert client.session_id is None
            else:
                assert client.protocol_version == "2025-11-25"
                assert (client.session_id is not None) == (transport != "stdio")
            assert client.server_info is not None
            assert client.server_info["name"] == f"{server}-round"

            names = {spec.name for spec in await client.list_tools()}
            assert {"add", "broken", "pause"} <= names

            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert not added.is_error, added.text
            assert added.text == "5"

            failed = await client.call_tool("broken")
            assert failed.is_error
            assert "the tool broke on purpose" in failed.text

            late = await client.call_tool("pause", {"seconds": 60}, timeout=0.5)
            assert late.is_error
            assert isinstance(late.error, ToolTimeoutError)
            await round_.seen("cancelled")  # the server stopped the call too

            again = await client.call_tool("add", {"a": 1, "b": 1})
            assert again.text == "2"


@pytest.mark.parametrize(("transport", "server", "protocol"), ROUNDS)
async def test_a_call_cancelled_by_its_caller_stops_on_the_server(
    transport: Transport, server: Server, protocol: str, tmp_path: Path
) -> None:
    with anyio.fail_after(60):
        async with connected(transport, server, protocol, tmp_path) as round_:
            client = round_.client
            await client.list_tools()
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "pause", {"seconds": 60})
                await round_.seen("started")
                tg.cancel_scope.cancel()
            await round_.seen("cancelled")
            after = await client.call_tool("add", {"a": 20, "b": 22})
            assert after.text == "42"
