"""Resumable answer streams (SEP-1699), spoken as a raw 2025-11-25 client over HTTP.

A tool lets go of its stream (`release_stream`); the client reconnects with `Last-Event-ID` and
gets the answer. Another session presenting the same event id gets nothing: every client
numbers its requests from 1, and one session's answers must never reach another.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp_fixtures import serve_app

from toolwire import ToolContext, tool
from toolwire.mcp import create_app, prompt, release_stream

pytestmark = pytest.mark.anyio

VERSION = "2025-11-25"
BASE = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@tool
async def slow_report(ctx: ToolContext) -> str:
    """Lets go of its stream, then answers."""
    released = await release_stream(ctx)
    return f"report ready (released: {released})"


async def sse_events(response: httpx.Response) -> list[dict[str, Any]]:
    """The events of an SSE answer until its first JSON-RPC result (or its end)."""
    events: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    async for line in response.aiter_lines():
        if line == "":
            done, current = current, {}
            if done:
                events.append(done)
                if '"result"' in done.get("data", ""):
                    break
            continue
        field, _, value = line.partition(":")
        current[field] = value.removeprefix(" ")
    if current:
        events.append(current)
    return events


async def open_session(http: httpx.AsyncClient, url: str) -> str:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    async with http.stream("POST", url, json=init, headers=BASE) as answer:
        assert answer.status_code == 200
        session = answer.headers["mcp-session-id"]
        await sse_events(answer)
    headers = {**BASE, "mcp-session-id": session, "mcp-protocol-version": VERSION}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=note, headers=headers)).status_code == 202
    return session


async def test_a_released_stream_is_resumed_by_its_own_session_only() -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "slow_report", "arguments": {}},
    }
    async with (
        serve_app(create_app([slow_report], resumable=True)) as url,
        httpx.AsyncClient(timeout=20) as http,
    ):
        mine = await open_session(http, url)
        headers = {**BASE, "mcp-session-id": mine, "mcp-protocol-version": VERSION}
        async with http.stream("POST", url, json=call, headers=headers) as answer:
            events = await sse_events(answer)
        # Only the priming event: an id to resume from and how long to wait first.
        (priming,) = events
        assert priming["data"] == ""
        assert priming["retry"] == "1000"
        last = priming["id"]

        # Another session (which numbers its requests the same way) cannot have it.
        other = await open_session(http, url)
        stranger = {**headers, "mcp-session-id": other, "last-event-id": last}
        with anyio.fail_after(10):
            async with http.stream("GET", url, headers=stranger) as refused:
                leaked = await sse_events(refused) if refused.status_code == 200 else []
        assert not any("report ready" in e.get("data", "") for e in leaked)

        resume = {**headers, "last-event-id": last}
        with anyio.fail_after(10):
            async with http.stream("GET", url, headers=resume) as resumed:
                assert resumed.status_code == 200
                replayed = await sse_events(resumed)
        results = [json.loads(e["data"]) for e in replayed if e.get("data")]
        (result,) = [r for r in results if r.get("id") == 2]
        assert result["result"]["content"][0]["text"] == "report ready (released: True)"


async def test_without_resumable_a_tool_keeps_its_stream() -> None:
    async with (
        serve_app(create_app([slow_report])) as url,
        httpx.AsyncClient(timeout=20) as http,
    ):
        session = await open_session(http, url)
        headers = {**BASE, "mcp-session-id": session, "mcp-protocol-version": VERSION}
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "slow_report"},
        }
        async with http.stream("POST", url, json=call, headers=headers) as answer:
            events = await sse_events(answer)
    (only,) = events
    assert "id" not in only  # no priming event: nothing to resume from
    assert "report ready (released: False)" in only["data"]


@tool
def quiet_add(a: int, b: int) -> int:
    """Adds; never talks back."""
    return a + b


async def _answer_type(app: Any, name: str, arguments: dict[str, Any]) -> str:
    async with serve_app(app) as url, httpx.AsyncClient(timeout=20) as http:
        session = await open_session(http, url)
        headers = {**BASE, "mcp-session-id": session, "mcp-protocol-version": VERSION}
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        async with http.stream("POST", url, json=call, headers=headers) as answer:
            await answer.aread()
            return answer.headers["content-type"].split(";")[0]


async def test_answers_are_json_unless_something_served_may_talk_back() -> None:
    # Nothing can talk: the cheaper single JSON body.
    assert await _answer_type(create_app([quiet_add]), "quiet_add", {"a": 1, "b": 2}) == (
        "application/json"
    )
    # A tool taking a ToolContext may: every answer is a stream it can talk on.
    talking = create_app([quiet_add, slow_report])
    assert await _answer_type(talking, "quiet_add", {"a": 1, "b": 2}) == "text/event-stream"

    # A prompt or resource function taking one counts too; and the choice can be forced.
    async def hello(ctx: ToolContext) -> str:
        return "hi"

    with_prompt = create_app([quiet_add], prompts=[prompt(hello)])
    assert await _answer_type(with_prompt, "quiet_add", {"a": 1, "b": 2}) == "text/event-stream"
    forced = create_app([quiet_add, slow_report], json_response=True)
    assert await _answer_type(forced, "quiet_add", {"a": 1, "b": 2}) == "application/json"
