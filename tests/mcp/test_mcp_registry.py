"""Several servers at once, server directories, and the agent loop over MCP tools."""

from __future__ import annotations

import pytest
from mcp_fixtures import free_port, serve_app
from mcp_servers import sdk_app, toolwire_app

from toolwire.mcp import (
    McpRegistry,
    McpServerConfig,
    McpServerInfo,
    McpToolRegistry,
    StaticMcpRegistry,
    run_agent,
)

pytestmark = pytest.mark.anyio


async def test_discovers_every_server_and_survives_a_failing_one() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    async with serve_app(toolwire_app()) as first, serve_app(sdk_app()) as second:
        configs = [
            McpServerConfig(first, prefix="tw"),
            McpServerConfig(dead, timeout=5),
            McpServerConfig(second, prefix="sdk"),
        ]
        async with McpToolRegistry(configs) as registry:
            tools = await registry.discover_tools()
            names = [t.name for t in tools]
            assert names[:2] == ["tw_add", "tw_record"]
            assert "sdk_echo" in names
            assert set(registry.failures) == {dead}
            assert set(registry.clients) == {first, second}
            by_name = {t.name: t for t in tools}
            assert (await by_name["tw_add"].invoke({"a": 1, "b": 2})).text == "3"
            assert (await by_name["sdk_echo"].invoke({"text": "x"})).text == "x"
            # Discovering again reuses the open connections.
            clients = dict(registry.clients)
            assert len(await registry.discover_tools()) == len(tools)
            assert registry.clients == clients
        assert registry.clients == {}
        assert all(not c.connected for c in clients.values())


async def test_static_registry_searches_names_case_insensitively() -> None:
    directory = StaticMcpRegistry(
        McpServerInfo("GitHub", "http://127.0.0.1:1/mcp", tools=["search_issues"]),
        McpServerInfo("weather", "http://127.0.0.1:2/mcp"),
    )
    assert isinstance(directory, McpRegistry)
    assert [s.name for s in await directory.search("git")] == ["GitHub"]
    assert [s.name for s in await directory.search("THER")] == ["weather"]
    assert await directory.search("nothing") == []
    assert len(await directory.discover()) == 2


async def test_run_agent_over_mcp_tools() -> None:
    from toolwire.models.testing import ScriptedModel

    model = ScriptedModel([("add", {"a": 20, "b": 22}), "The answer is 42."])
    async with serve_app(toolwire_app()) as url:
        result = await run_agent(model, "What is 20 + 22?", servers=[url], max_iterations=4)
    assert result.text == "The answer is 42."
    (entry,) = result.trace
    assert "42" in repr(entry)


async def test_one_server_listed_twice_gets_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.mcp import McpClient

    connected: list[McpClient] = []
    real_connect = McpClient.connect

    async def connect(self: McpClient) -> None:
        await real_connect(self)
        connected.append(self)

    monkeypatch.setattr(McpClient, "connect", connect)
    async with serve_app(toolwire_app()) as url:
        configs = [McpServerConfig(url, prefix="a"), McpServerConfig(url, prefix="b")]
        async with McpToolRegistry(configs) as registry:
            names = {t.name for t in await registry.discover_tools()}
            assert {"a_add", "b_add"} <= names
        # Every connection opened was kept, and so closed by the registry: none leaked.
        assert len(connected) == 1
        assert not connected[0].connected
