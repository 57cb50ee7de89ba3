"""Faults against real servers: restarts, kills, slow tools, malformed answers, dead servers."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from mcp_servers import SDK_EVENTS, malformed_app, sdk_app

from conftest import eventually, free_port, serve_app
from toolwire import ToolTimeoutError
from toolwire.mcp import McpClient, McpConnectionError

pytestmark = pytest.mark.anyio


async def test_restart_mid_session_opens_a_new_session_and_repeats(server_process: Any) -> None:
    server = await server_process("toolwire")
    async with McpClient(server.url, protocol="legacy") as client:
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
        first_session = client.session_id
        await server.restart()
        # 404 for the old session id: the call was not processed, so even a non-idempotent tool
        # is repeated once, in a new session.
        recorded = await client.call_tool("record", {"note": "after restart"})
        assert not recorded.is_error, recorded.text
        assert recorded.text == "recorded after restart"
        assert client.session_id not in (None, first_session)
        assert (await client.call_tool("add", {"a": 2, "b": 2})).text == "4"


async def test_restart_without_sessions_is_invisible(server_process: Any) -> None:
    server = await server_process("toolwire")
    async with McpClient(server.url) as client:
        assert client.protocol_version == "2026-07-28"
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
        await server.restart()
        recorded = await client.call_tool("record", {"note": "after restart"})
        assert recorded.text == "recorded after restart"


async def test_killed_mid_call_read_only_tool_is_retried_then_reported(
    server_process: Any,
) -> None:
    server = await server_process("toolwire")
    async with McpClient(server.url, timeout=30) as client:
        await client.list_tools()
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def call() -> None:
                results.append(await client.call_tool("pause", {"seconds": 30}))

            tg.start_soon(call)
            await eventually(lambda: server.log_contains("pause started"))
            await server.kill()
        (result,) = results
        assert result.is_error
        assert "could not be called" in result.text
        assert isinstance(result.error, McpConnectionError)


async def test_killed_mid_call_other_tool_may_or_may_not_have_run(server_process: Any) -> None:
    server = await server_process("toolwire")
    async with McpClient(server.url, timeout=30) as client:
        await client.list_tools()
        async with anyio.create_task_group() as tg:
            results: list[Any] = []

            async def call() -> None:
                results.append(await client.call_tool("slow_write", {"seconds": 30}))

            tg.start_soon(call)
            await eventually(lambda: server.log_contains("slow_write started"))
            await server.kill()
        (result,) = results
        assert result.is_error
        assert "may or may not have run" in result.text
        # The client stays usable once the server is back.
        await server.start()
        assert (await client.call_tool("add", {"a": 5, "b": 5})).text == "10"


async def test_dead_server_gives_an_error_result_not_a_hang(server_process: Any) -> None:
    server = await server_process("toolwire")
    async with McpClient(server.url, timeout=10) as client:
        await server.kill()
        with anyio.fail_after(15):
            result = await client.call_tool("add", {"a": 1, "b": 1})
    assert result.is_error
    assert "could not be called" in result.text


async def test_unreachable_server_fails_to_connect() -> None:
    with anyio.fail_after(15), pytest.raises(McpConnectionError, match="Cannot reach"):
        await McpClient(f"http://127.0.0.1:{free_port()}/mcp").connect()


async def test_timeout_closes_the_answer_stream_in_the_per_request_era() -> None:
    SDK_EVENTS.clear()
    async with serve_app(sdk_app()) as url, McpClient(url) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert isinstance(result.error, ToolTimeoutError)
        # Closing the stream is this era's cancellation: the server stops the handler.
        await eventually(lambda: "slow cancelled" in SDK_EVENTS, 10)
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"


async def test_timeout_cancels_the_call_on_the_server() -> None:
    sent: list[dict[str, Any]] = []

    async def record(request: httpx2.Request) -> None:
        if request.method == "POST":
            sent.append(json.loads(request.content))

    SDK_EVENTS.clear()
    async with (
        serve_app(sdk_app()) as url,
        httpx2.AsyncClient(event_hooks={"request": [record]}) as http,
        McpClient(url, http_client=http, protocol="legacy") as client,
    ):
        result = await client.call_tool("slow", {"seconds": 30}, timeout=0.5)
        assert result.is_error
        assert isinstance(result.error, ToolTimeoutError)
        assert result.text == "Tool 'slow' timed out after 0.5 seconds."
        call = next(m for m in sent if m.get("method") == "tools/call")
        cancel = next(m for m in sent if m.get("method") == "notifications/cancelled")
        assert cancel["params"]["requestId"] == call["id"]
        await eventually(lambda: "slow cancelled" in SDK_EVENTS, 10)
        # The session survives the timeout.
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"


@pytest.mark.parametrize("name", ["not_object", "bad_content", "bad_base64", "unknown_type"])
async def test_malformed_results_become_error_results(name: str) -> None:
    async with serve_app(malformed_app()) as url, McpClient(url) as client:
        result = await client.call_tool(name)
        assert result.is_error
        assert "malformed result" in result.text
        # The client stays usable after a malformed answer.
        assert (await client.call_tool("bad_content")).is_error


async def test_invalid_json_becomes_an_error_result() -> None:
    async with serve_app(malformed_app()) as url, McpClient(url) as client:
        result = await client.call_tool("not_json")
    assert result.is_error
    assert "invalid JSON" in result.text
