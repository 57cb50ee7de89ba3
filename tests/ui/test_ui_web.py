"""`toolwire web`: the page and its API (token, Host and Origin checks, the chat's AG-UI stream
with its timeline events), and the command itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_ui_ag_ui import add, refund, scripted_turns
from ui_helpers import ROOT, sse_data

from toolwire import Agent, FunctionModel, ScriptedModel, tool
from toolwire._web import web_app

pytestmark = pytest.mark.anyio

TOKEN = "a-test-token-long-enough-0123456789"
HOSTS = ["127.0.0.1", "localhost", "[::1]"]


def app_for(agent: Agent) -> Any:
    return web_app(agent, token=TOKEN, allowed_hosts=HOSTS, info={"model": "m", "tools": []})


def client(app: Any, **headers: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765", headers=headers)


AUTH = {"authorization": f"Bearer {TOKEN}"}


async def test_the_page_is_served_without_a_token_and_loads_nothing_from_elsewhere() -> None:
    async with client(app_for(Agent(ScriptedModel([])))) as http:
        page = await http.get("/")
        script = await http.get("/static/app.js")
        missing = await http.get("/static/../__init__.py")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "http" not in page.text.replace("http-equiv", "")  # no CDN, no outside URL
    assert script.status_code == 200 and "textContent" in script.text
    assert "innerHTML" not in script.text  # data never becomes markup
    assert missing.status_code == 404


async def test_the_api_needs_the_token() -> None:
    async with client(app_for(Agent(ScriptedModel([])))) as http:
        without = await http.get("/api/info")
        wrong = await http.get("/api/info", headers={"authorization": "Bearer nope"})
        right = await http.get("/api/info", headers=AUTH)
    assert (without.status_code, wrong.status_code) == (401, 401)
    assert right.json() == {"model": "m", "tools": [], "stdio": False}


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 421),  # DNS rebinding: a page naming another host
        ({"origin": "http://evil.example"}, 403),  # another site's page posting here
        ({"content-type": "text/plain"}, 400),  # a form's "simple" request, no CORS preflight
    ],
)
async def test_requests_from_elsewhere_are_refused(headers: dict[str, str], status: int) -> None:
    agent = Agent(ScriptedModel(["never"]))
    body = b'{"threadId": "t", "runId": "r", "messages": []}'
    async with client(app_for(agent)) as http:
        sent = {"content-type": "application/json", **AUTH, **headers}
        response = await http.post("/api/agui", content=body, headers=sent)
    assert response.status_code == status
    assert agent.model.requests == []  # pyright: ignore[reportAttributeAccessIssue]


async def test_the_chat_stream_carries_a_timeline_of_the_run() -> None:
    agent = Agent(ScriptedModel([("add", {"a": 1, "b": 2}), "3."]), tools=[add])
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "1+2"}],
    }
    async with client(app_for(agent)) as http:
        response = await http.post("/api/agui", json=body, headers=AUTH)
    events = sse_data(response.text)
    trace = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "toolwire.trace"]
    assert [t["kind"] for t in trace] == ["model", "tool", "model"]
    assert trace[1]["name"] == "add" and trace[1]["result"] == "3"
    assert trace[1]["seconds"] >= 0 and trace[0]["inputTokens"] > 0
    assert events[-1]["result"]["stopReason"] == "completed"
    # The offline model has no price: each request says so, and why.
    assert trace[0]["cost"] is None and "offline" in trace[0]["costReason"]


async def test_each_model_request_in_the_timeline_carries_its_cost() -> None:
    # Priced from the same tables as the run's total, by the provider that answered.
    model = ScriptedModel([("add", {"a": 1, "b": 2}), "3."], model_name="gpt-4o", provider="openai")
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "1+2"}],
    }
    async with client(app_for(Agent(model, tools=[add]))) as http:
        response = await http.post("/api/agui", json=body, headers=AUTH)
    events = sse_data(response.text)
    trace = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "toolwire.trace"]
    requests = [t for t in trace if t["kind"] == "model"]
    costs = [Decimal(t["cost"]) for t in requests]
    assert len(costs) == 2 and all(c > 0 for c in costs)
    assert [t["costReason"] for t in requests] == [None, None]
    total = events[-1]["result"]["cost"]
    assert sum(costs) == Decimal(total)  # the requests add up to the run's cost


async def test_a_refusal_and_an_approval_through_the_page_api() -> None:
    agent = Agent(FunctionModel(scripted_turns), tools=[refund])
    question = {"id": "u", "role": "user", "content": "Refund order 7"}
    async with client(app_for(agent)) as http:
        first = sse_data(
            (
                await http.post(
                    "/api/agui",
                    json={"threadId": "t", "runId": "r1", "messages": [question]},
                    headers=AUTH,
                )
            ).text
        )
        (interrupt,) = first[-1]["outcome"]["interrupts"]
        call = {"id": interrupt["toolCallId"], "type": "function"}
        call["function"] = {"name": "refund", "arguments": '{"order": 7}'}
        messages = [question, {"id": "a", "role": "assistant", "toolCalls": [call]}]
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        body = {"threadId": "t", "runId": "r2", "messages": messages, "resume": resume}
        second = sse_data((await http.post("/api/agui", json=body, headers=AUTH)).text)
    assert [e["content"] for e in second if e["type"] == "TOOL_CALL_RESULT"] == ["refunded order 7"]


def test_the_command_prints_a_url_with_a_token_serves_the_page_and_stops_on_ctrl_c(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolwire.cli",
            "web",
            "--model",
            "test",
            "--prebuilt",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOOLWIRE_TEST_MARKER": "ui-web"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
        base, _, token = url.partition("/#token=")
        assert len(token) >= 16
        page = httpx.get(base + "/", timeout=20)
        assert page.status_code == 200 and "toolwire" in page.text
        info = httpx.get(
            base + "/api/info", headers={"authorization": f"Bearer {token}"}, timeout=20
        )
        assert "calculator" in [t["name"] for t in info.json()["tools"]]
        assert httpx.get(base + "/api/info", timeout=20).status_code == 401
        body = {
            "threadId": "t",
            "runId": "r",
            "messages": [{"id": "u", "role": "user", "content": "2*21"}],
        }
        answer = httpx.post(
            base + "/api/agui", json=body, headers={"authorization": f"Bearer {token}"}, timeout=60
        )
        events = sse_data(answer.text)
        assert events[-1]["type"] == "RUN_FINISHED", events[-3:]
        assert any(e["type"] == "TOOL_CALL_RESULT" and "42" in e["content"] for e in events)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 0, stderr
        assert "stopped" in stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)


async def test_a_10_mb_result_reaches_the_page_whole_and_the_timeline_cut() -> None:
    @tool
    def big() -> str:
        """Return a lot."""
        return "x" * 10_000_000

    agent = Agent(ScriptedModel([("big", {}), "done"]), tools=[big])
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "go"}],
    }
    async with client(app_for(agent)) as http:
        response = await http.post("/api/agui", json=body, headers=AUTH)
    events = sse_data(response.text)
    (result,) = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    # The page gets the result as the run has it (whole, unless an output budget cut it
    # first), shows 2,000 characters and a "show all" button; the timeline holds 4,000.
    shown = len(result["content"])
    assert shown > 4000
    (entry,) = [
        e["value"] for e in events if e["type"] == "CUSTOM" and e["value"]["kind"] == "tool"
    ]
    assert (len(entry["result"]), entry["resultChars"]) == (4000, shown)
