"""The approval gate: a paused run never resumes while a call that needs approval is undecided.

Every way to resume goes through `resume_turn`'s check (plain, streamed, durable, and with a tool
served over MCP); without it the unapproved call would run. Each test asserts the refusal names
the undecided call and that no tool ran, not even the approved one (the turn is refused whole).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire import Agent, RunResult, ScriptedModel, tool
from toolwire.cli import running_server
from toolwire.mcp import McpClient

pytestmark = pytest.mark.anyio

RAN: list[str] = []
WORKER = Path(__file__).parent / "durable" / "approval_worker.py"


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order (needs approval)."""
    RAN.append(order)
    return f"refunded {order}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _agent() -> Agent:
    model = ScriptedModel([[("refund", {"order": "a"}), ("refund", {"order": "b"})], "done"])
    return Agent(model, tools=[refund])


async def _paused(agent: Agent) -> tuple[RunResult, str, str]:
    paused = await agent.run("refund a and b")
    assert paused.stop_reason == "approval_required"
    first, second = (p.call.id for p in paused.pending)
    assert RAN == []
    return paused, first, second


async def test_resume_refuses_an_undecided_call() -> None:
    agent = _agent()
    paused, first, second = await _paused(agent)
    with pytest.raises(ValueError, match=rf"undecided calls: {second} \(refund: needs approval\)"):
        await agent.resume(paused, approvals={first: True})
    assert RAN == []


@pytest.mark.parametrize("approvals", [{}, None])
async def test_run_with_history_refuses_when_no_call_is_decided(
    approvals: dict[str, bool] | None,
) -> None:
    agent = _agent()
    paused, first, second = await _paused(agent)
    if approvals is None:
        # No decisions at all: the history's open calls are repaired (answered with an error),
        # never run.
        done = await agent.run(history=paused.messages)
        assert RAN == []
        assert done.stop_reason == "completed"
        return
    with pytest.raises(ValueError, match=f"undecided calls: {first} .*, {second} "):
        await agent.run(history=paused.messages, approvals=approvals)
    assert RAN == []


async def test_a_refusal_of_one_call_does_not_approve_the_other() -> None:
    agent = _agent()
    paused, first, second = await _paused(agent)
    with pytest.raises(ValueError, match=f"undecided calls: {second} "):
        await agent.resume(paused, approvals={first: "no"})
    assert RAN == []


async def test_streamed_resume_refuses_an_undecided_call() -> None:
    agent = _agent()
    async with agent.run_stream("refund a and b") as stream:
        async for _ in stream:
            pass
    paused = stream.result
    assert paused.stop_reason == "approval_required"
    first, second = (p.call.id for p in paused.pending)

    async def resume_streamed() -> None:
        async with agent.run_stream(history=paused.messages, approvals={first: True}) as resumed:
            async for _ in resumed:
                pass

    with pytest.raises(ValueError, match=f"undecided calls: {second} "):
        await resume_streamed()
    assert RAN == []


def test_durable_resume_refuses_an_undecided_call(tmp_path: Path) -> None:
    # DBOS is process-wide, so the durable run lives in its own process (on SQLite: fast).
    done = subprocess.run(
        [sys.executable, str(WORKER), f"sqlite:///{tmp_path / 'runs.sqlite'}", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["paused"] == "approval_required"
    assert report["pending"] == 2
    assert "undecided calls" in report.get("error", ""), report
    assert "needs approval" in report["error"]
    assert report["ran"] == []


async def test_mcp_resume_refuses_an_undecided_call() -> None:
    async with running_server([refund]) as url, McpClient(url) as client:
        tools = await client.tools()
        assert [t.requires_approval for t in tools] == [True]
        model = ScriptedModel([[("refund", {"order": "a"}), ("refund", {"order": "b"})], "done"])
        agent = Agent(model, tools=tools)
        paused, first, second = await _paused(agent)
        with pytest.raises(ValueError, match=f"undecided calls: {second} "):
            await agent.resume(paused, approvals={first: True})
        # The server's tool (in this process) never ran; approving both then runs both.
        assert RAN == []
        done = await agent.resume(paused, approvals={first: True, second: True})
    assert done.stop_reason == "completed"
    assert sorted(RAN) == ["a", "b"]
