"""Live tool lists: a server's `notifications/tools/list_changed` reaches a running agent.

Real peers: the SDK's low-level server (handshake era over HTTP, on a call's answer stream and
on the session's GET stream; 2026-07-28 over `subscriptions/listen`; stdio), and toolwire's
own server where it can announce changes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from live_server import SECRET, LiveServer, stamp
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp_fixtures import eventually, free_port, serve_app
from mcp_servers import sdk_app

from toolwire import Agent
from toolwire.errors import ToolNameConflictError
from toolwire.mcp import (
    McpClient,
    McpServerConfig,
    McpToolRegistry,
    StdioServerParameters,
    run_agent,
)
from toolwire.models.testing import FunctionModel
from toolwire.toolsets import ToolsetContext

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


def _names(tools: Any) -> list[str]:
    return [t.name for t in tools]


def _secret_script(steps: list[list[str]]) -> FunctionModel:
    """Reveal the secret, call it, hide it, call it again (an error result), then answer."""
    plan: list[Any] = [
        ("reveal", {}),
        ("secret", {}),
        ("hide", {}),
        ("secret", {}),
        "done",
    ]

    def decide(messages: object, request: Any) -> Any:
        steps.append(_names(request.tools))
        return plan[len(steps) - 1]

    return FunctionModel(decide)


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_a_running_agent_sees_tools_the_server_adds_and_removes(protocol: str) -> None:
    live = LiveServer()
    steps: list[list[str]] = []
    async with (
        serve_app(live.server.streamable_http_app()) as url,
        McpClient(url, protocol=protocol) as client,  # type: ignore[arg-type]
    ):
        if protocol == "auto":
            assert client.protocol_version == "2026-07-28"
        model = _secret_script(steps)
        await eventually(lambda: client.watching)
        baseline = client.tools_version

        async def settled(call: Any, result: Any) -> None:
            # Over `subscriptions/listen` a change comes on a stream of its own: the test waits
            # for it (the agent never waits; each step lists what the client knows by then).
            # In the handshake era it came on the call's own answer, so this returns at once.
            changes = {"reveal": 1, "hide": 2}.get(call.name)
            if changes is not None:
                await eventually(lambda: client.tools_version >= baseline + changes)

        agent = Agent(model, tools=[client], on_tool_result=settled)
        result = await agent.run("go")
    assert result.text == "done"
    base = ["echo", "reveal", "hide"]
    assert steps == [base, [*base, "secret"], [*base, "secret"], base, base]
    outcomes = [(t.name, t.is_error, t.result) for t in result.trace]
    assert outcomes[1] == ("secret", False, "the secret")
    # The model called a tool the server took back: a clear error result, and the run went on.
    assert outcomes[3][0] == "secret" and outcomes[3][1]
    assert 'unknown tool "secret"' in outcomes[3][2]


async def test_a_change_on_the_sessions_get_stream_is_seen_by_the_next_listing() -> None:
    live = LiveServer()
    async with (
        serve_app(live.server.streamable_http_app()) as url,
        McpClient(url, protocol="legacy") as client,
    ):
        ctx = ToolsetContext()
        await eventually(lambda: client.watching)
        first = await client.tools_for(ctx)
        assert _names(first) == ["echo", "reveal", "hide"]
        assert await client.tools_for(ctx) == first  # not listed again: nothing changed
        seen = client.tools_version
        live.tools.append(SECRET)
        # Sent outside any request: only the GET stream the client keeps open can carry it.
        await live.sessions[-1].send_tool_list_changed()
        await eventually(lambda: client.tools_version == seen + 1)
        again = await client.tools_for(ctx)
        assert _names(again) == ["echo", "reveal", "hide", "secret"]
        assert again[0] is first[0]  # unchanged tools stay the same objects (definitions cached)


async def test_the_registry_follows_changes_across_servers() -> None:
    live = LiveServer()
    async with (
        serve_app(live.server.streamable_http_app()) as live_url,
        serve_app(sdk_app()) as sdk_url,
        McpToolRegistry([McpServerConfig(sdk_url), McpServerConfig(live_url)]) as registry,
    ):
        ctx = ToolsetContext()
        names = _names(await registry.tools_for(ctx))
        # Both servers list `echo`: the later server's is prefixed with its name, reported once.
        assert "echo" in names and "live_echo" in names
        assert "secret" not in names
        assert registry.problems == ["sdk-test and live both offer 'echo'; live's is 'live_echo'"]
        live_client = registry.clients[live_url]
        await eventually(lambda: live_client.watching)
        seen = live_client.tools_version
        reveal = next(t for t in await registry.tools_for(ctx) if t.name == "reveal")
        await reveal.invoke({})
        await eventually(lambda: live_client.tools_version > seen)
        assert "secret" in _names(await registry.tools_for(ctx))
        assert len(registry.problems) == 1


async def test_stdio_server_changes_are_seen() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "live_server.py")])
    async with McpClient(params, timeout=30) as client:
        ctx = ToolsetContext()
        assert "secret" not in _names(await client.tools_for(ctx))
        seen = client.tools_version
        reveal = next(t for t in await client.tools_for(ctx) if t.name == "reveal")
        assert not (await reveal.invoke({})).is_error
        await eventually(lambda: client.tools_version > seen)
        assert "secret" in _names(await client.tools_for(ctx))


def _hostile_app() -> Any:
    """Lists `echo` twice, a tool with an empty name, and one broken entry beside `ping`."""
    listed: list[Any] = [
        {"name": "echo", "inputSchema": {"type": "object"}},
        {"name": "echo", "description": "again", "inputSchema": {"type": "object"}},
        {"name": "", "inputSchema": {"type": "object"}},
        {"name": "ping", "inputSchema": {"type": "object"}},
    ]

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> dict[str, Any]:
        return stamp(ctx, {"tools": listed})

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        return stamp(ctx, {"content": [{"type": "text", "text": f"hostile {params.name}"}]})

    server: Server[Any] = Server("hostile")
    server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, call_tool)
    return server.streamable_http_app()


async def test_run_agent_over_servers_sharing_names_and_a_hostile_one() -> None:
    steps: list[list[str]] = []

    def decide(messages: object, request: Any) -> Any:
        steps.append(_names(request.tools))
        return [("echo", {"text": "hi"}), ("hostile_echo", {}), ("ping", {}), "done"][
            len(steps) - 1
        ]

    async with serve_app(sdk_app()) as sdk_url, serve_app(_hostile_app()) as hostile_url:
        result = await run_agent(
            FunctionModel(decide), "go", servers=[sdk_url, hostile_url], max_iterations=6
        )
    assert result.text == "done"
    # The SDK server's echo is first; the hostile server's is prefixed; its second echo and its
    # unnamed tool are left out (each reported once), and its ping is offered all the same.
    assert steps[0][-2:] == ["hostile_echo", "ping"]
    assert steps[0].count("echo") == 1 and "" not in steps[0]
    assert [t.result for t in result.trace] == ["hi", "hostile echo", "hostile ping"]


async def test_without_following_changes_a_change_on_a_calls_answer_still_counts() -> None:
    live = LiveServer()
    async with (
        serve_app(live.server.streamable_http_app()) as url,
        McpClient(url, protocol="legacy", follow_changes=False) as client,
    ):
        ctx = ToolsetContext()
        reveal = next(t for t in await client.tools_for(ctx) if t.name == "reveal")
        await reveal.invoke({})
        # Announced on the call's answer, before its result: known once the call returns.
        assert client.tools_version == 1
        assert "secret" in _names(await client.tools_for(ctx))
        assert not client.watching


async def test_a_dead_server_is_reported_once_and_the_others_still_serve() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    live = LiveServer()
    async with (
        serve_app(live.server.streamable_http_app()) as url,
        McpToolRegistry([McpServerConfig(dead, timeout=5), McpServerConfig(url)]) as registry,
    ):
        for step in (1, 2):
            tools = await registry.tools_for(ToolsetContext(step=step))
            assert _names(tools) == ["echo", "reveal", "hide"]
        assert len(registry.problems) == 1
        assert "could not list its tools: not connected" in registry.problems[0]


async def test_a_registry_told_to_refuse_shared_names_fails_the_run_with_a_typed_error() -> None:
    live = LiveServer()
    async with (
        serve_app(live.server.streamable_http_app()) as live_url,
        serve_app(sdk_app()) as sdk_url,
        McpToolRegistry([sdk_url, live_url], on_conflict="error") as registry,
    ):
        agent = Agent(FunctionModel(lambda messages, request: "unreachable"), tools=[registry])
        with pytest.raises(ToolNameConflictError, match="'echo' is offered by sdk-test and live"):
            await agent.run("go")
