"""Faults against real servers: restarts, kills, slow tools, malformed answers, dead servers."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import httpx2
import pytest
from mcp_fixtures import HERE, eventually, free_port, serve_app
from mcp_servers import SDK_EVENTS, malformed_app, mismatch_app, sdk_app

from toolwire import ToolTimeoutError
from toolwire.mcp import McpClient, McpConnectionError, McpProtocolError, StdioServerParameters

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


@pytest.mark.parametrize("name", ["bad_content", "bad_base64"])
async def test_malformed_results_over_stdio_become_error_results(name: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_servers.py"), "malformed-stdio"]
    )
    async with McpClient(params, timeout=30) as client:
        result = await client.call_tool(name)
        assert result.is_error
        assert "malformed result" in result.text
        assert (await client.call_tool("bad_content")).is_error


async def test_invalid_json_becomes_an_error_result() -> None:
    async with serve_app(malformed_app()) as url, McpClient(url) as client:
        result = await client.call_tool("not_json")
    assert result.is_error
    assert "invalid JSON" in result.text


async def _check_output_schema_results(client: McpClient) -> None:
    await client.list_tools()
    right = await client.call_tool("right")
    assert not right.is_error, right.text
    assert right.structured == {"celsius": 4.5}
    for name in ("wrong_type", "missing"):
        result = await client.call_tool(name)
        assert result.is_error, name
        assert "malformed result" in result.text
        assert "output schema" in result.text
        assert isinstance(result.error, McpProtocolError)
    failed = await client.call_tool("failed")
    assert failed.is_error
    assert failed.text == "it broke"


async def test_structured_content_breaking_the_output_schema_is_an_error_result() -> None:
    async with serve_app(mismatch_app()) as url, McpClient(url) as client:
        await _check_output_schema_results(client)


async def test_structured_content_breaking_the_output_schema_over_stdio() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "mcp_servers.py"), "mismatch-stdio"]
    )
    # The SDK's stdio client raises on such results; the call must still answer with a result.
    async with McpClient(params, timeout=30) as client:
        await _check_output_schema_results(client)


async def test_listing_whose_cursors_never_end_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    import toolwire.mcp.client

    async def endpoint(request: Request) -> Response:
        body = json.loads(await request.body())
        if "id" not in body:
            return Response(status_code=202)
        if body["method"] == "initialize":
            result: Any = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "endless", "version": "0"},
            }
        elif body["method"] == "tools/list":
            page = int((body.get("params") or {}).get("cursor") or 0)
            result = {"tools": [{"name": f"t{page}"}], "nextCursor": str(page + 1)}
        else:
            return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601}})
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    monkeypatch.setattr(toolwire.mcp.client, "_MAX_PAGES", 5)
    app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])
    async with serve_app(app) as url, McpClient(url, protocol="legacy") as client:
        # A truncated listing would pass for the whole one; say so instead.
        with pytest.raises(McpProtocolError, match="pages"):
            await client.list_tools()


async def test_a_failed_session_renewal_is_tried_again_on_the_next_call() -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    state: dict[str, Any] = {"sessions": 0, "live": None, "refuse_init": 0}

    async def endpoint(request: Request) -> Response:
        if request.method == "DELETE":
            return Response(status_code=200)
        body = json.loads(await request.body())
        if body.get("method") == "initialize":
            if state["refuse_init"]:
                state["refuse_init"] -= 1
                return Response("starting up", status_code=503)
            state["sessions"] += 1
            state["live"] = f"s{state['sessions']}"
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "flaky", "version": "0"},
            }
            return JSONResponse(
                {"jsonrpc": "2.0", "id": body["id"], "result": result},
                headers={"mcp-session-id": state["live"]},
            )
        session = request.headers.get("mcp-session-id")
        if session is None:
            return Response("Bad Request: missing session id", status_code=400)
        if session != state["live"]:
            return Response(status_code=404)
        if "id" not in body:
            return Response(status_code=202)
        result = {"content": [{"type": "text", "text": f"ran in {session}"}]}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST", "DELETE"])])
    async with serve_app(app) as url, McpClient(url, protocol="legacy") as client:
        assert (await client.call_tool("t")).text == "ran in s1"
        # The server restarts (our session is gone) and refuses the first handshake.
        state["live"], state["refuse_init"] = "other", 1
        first = await client.call_tool("t")
        assert first.is_error
        # The next call opens the session the last one could not.
        second = await client.call_tool("t")
        assert second.text == "ran in s2", second.text


async def test_a_call_cancelled_by_its_caller_is_cancelled_on_the_server() -> None:
    # A caller's own deadline (an agent's tool timeout, say) must stop the tool on the server
    # too, not only the client's `timeout`.
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
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("slow", {"seconds": 30})
        assert scope.cancelled_caught
        await eventually(lambda: "slow cancelled" in SDK_EVENTS, 10)
        call = next(m for m in sent if m.get("method") == "tools/call")
        cancel = next(m for m in sent if m.get("method") == "notifications/cancelled")
        assert cancel["params"]["requestId"] == call["id"]
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
