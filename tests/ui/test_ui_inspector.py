"""The MCP server inspector of `toolwire web`: its API against a real toolwire MCP server on a
free port (listings, every dialect's schema and cost, a call, the raw JSON-RPC exchange)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2
import pytest
from ui_helpers import serve

from toolwire import Agent, ScriptedModel, tool
from toolwire._web import web_app
from toolwire._web.wire import Exchange, Recording
from toolwire.mcp import create_app, prompt, resource
from toolwire.prebuilt import calculator

pytestmark = pytest.mark.anyio

TOKEN = "a-test-token-long-enough-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}
SERVER_TOKEN = "the-inspected-server-token-0123456789"
HOSTILE = '<img src=x onerror="window.pwned=1">\x1b[31mred'


@tool(name="shout_loud")
def shout(text: str, times: int = 1, loud: bool = True) -> str:
    """<script>window.pwned=2</script>Echo it."""
    return text.upper() * times if loud else text


@resource("config://app", mime_type="application/json")
def app_config() -> dict[str, str]:
    """The application's settings."""
    return {"theme": "dark"}


@prompt
def review(code: str) -> str:
    """Ask for a review."""
    return f"Review: {code}"


@pytest.fixture
async def mcp_url() -> AsyncIterator[str]:
    app = create_app(
        [calculator, shout],
        resources=[app_config],
        prompts=[review],
        name=HOSTILE,
        auth_token=SERVER_TOKEN,
    )
    async with serve(app) as base:
        yield f"{base}/mcp"


@pytest.fixture
async def page() -> AsyncIterator[httpx.AsyncClient]:
    app = web_app(
        Agent(ScriptedModel([])),
        token=TOKEN,
        allowed_hosts=["127.0.0.1"],
        info={"model": "m", "tools": []},
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH, timeout=60
    ) as http:
        try:
            yield http
        finally:
            await http.post("/api/inspector/disconnect", json={})


def sent_methods(exchange: list[dict[str, Any]]) -> list[str]:
    return [
        json.loads(e["body"]).get("method", "")
        for e in exchange
        if e["direction"] == "sent" and e["body"].startswith("{")
    ]


async def test_connect_lists_tools_resources_prompts_and_records_the_exchange(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    answer = await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["server"]["name"] == HOSTILE  # passed on as data; the page shows it as text
    assert [t["name"] for t in found["tools"]] == ["calculator", "shout_loud"]
    assert found["tools"][1]["description"].startswith("<script>")
    assert [r["uri"] for r in found["resources"]] == ["config://app"]
    assert [p["name"] for p in found["prompts"]] == ["review"]
    methods = sent_methods(found["exchange"])
    assert "tools/list" in methods and "resources/list" in methods and "prompts/list" in methods
    received = [e for e in found["exchange"] if e["direction"] == "received"]
    assert any('"tools"' in e["body"] and "calculator" in e["body"] for e in received)
    assert all(json.loads(e["body"])["jsonrpc"] == "2.0" for e in received if e["body"])
    assert all(SERVER_TOKEN not in e["body"] for e in found["exchange"])


async def test_a_tool_compiled_for_every_dialect_with_changes_and_cost(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    answer = (await page.post("/api/inspector/tool", json={"name": "shout_loud"})).json()
    by_dialect = {d["dialect"]: d for d in answer["dialects"]}
    assert set(by_dialect) == {
        "openai-strict",
        "openai",
        "anthropic",
        "anthropic-strict",
        "gemini",
        "mcp",
    }
    strict = by_dialect["openai-strict"]
    assert strict["schema"]["additionalProperties"] is False
    assert sorted(strict["schema"]["required"]) == ["loud", "text", "times"]
    assert any("times" in change for change in strict["changes"])  # made nullable, reported
    assert all(d["tokens"] > 0 for d in answer["dialects"])
    assert answer["inputSchema"]["properties"]["times"]["type"] == "integer"


async def test_calling_a_tool_shows_its_result_and_the_call_on_the_wire(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    body = {"name": "calculator", "arguments": {"expression": "6*7"}}
    answer = (await page.post("/api/inspector/call", json=body)).json()
    assert (answer["isError"], answer["text"]) == (False, "42")
    assert sent_methods(answer["exchange"])[-1] == "tools/call"
    assert any(e["direction"] == "received" and "42" in e["body"] for e in answer["exchange"][-3:])
    failed = await page.post(
        "/api/inspector/call", json={"name": "calculator", "arguments": {"expression": "1/"}}
    )
    assert failed.json()["isError"] is True
    log = (await page.get("/api/inspector/exchange")).json()["exchange"]
    assert log == failed.json()["exchange"]


async def test_bad_input_and_refused_connections(mcp_url: str, page: httpx.AsyncClient) -> None:
    no_token = await page.post(
        "/api/inspector/connect", json={"url": mcp_url}, headers={"authorization": ""}
    )
    assert no_token.status_code == 401
    other_site = await page.post(
        "/api/inspector/connect",
        json={"url": mcp_url},
        headers={"origin": "http://evil.example"},
    )
    assert other_site.status_code == 403
    scheme = await page.post("/api/inspector/connect", json={"url": "file:///etc/passwd"})
    assert scheme.status_code == 400
    early = await page.post("/api/inspector/call", json={"name": "calculator", "arguments": {}})
    assert early.status_code == 400 and "connect" in early.json()["error"]
    refused = await page.post("/api/inspector/connect", json={"url": mcp_url})  # no server token
    assert refused.status_code == 502 and "401" in refused.text
    unknown = await page.post("/api/inspector/tool", json={"name": "calculator"})
    assert unknown.status_code == 400  # the refused connection left nothing connected


async def test_sse_answers_are_recorded_event_by_event_as_they_arrive() -> None:
    # Servers of the handshake era answer with SSE streams; the events come in any chunking.
    events = [{"jsonrpc": "2.0", "method": "notifications/progress"}, {"jsonrpc": "2.0", "id": 1}]
    body = "".join(f"event: message\r\ndata: {json.dumps(e)}\r\n\r\n" for e in events).encode()
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    record = Exchange()
    recording = Recording(record, httpx2.MockTransport(answer))
    async with (
        httpx2.AsyncClient(transport=recording) as http,
        http.stream("POST", "http://mcp.test/mcp", json={"id": 1}) as response,
    ):
        got = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert got == body  # passed on untouched
    sent, *received = list(record.entries)
    assert (sent["direction"], json.loads(sent["body"])) == ("sent", {"id": 1})
    assert [json.loads(e["body"]) for e in received] == events
    assert {e["http"] for e in received} == {"200 text/event-stream"}
