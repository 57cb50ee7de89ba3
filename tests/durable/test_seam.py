"""The loop's step backend seam: every model request and tool call goes through the backend."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from toolwire import (
    Agent,
    FunctionCallStarted,
    RunEvent,
    ScriptedModel,
    ToolCallBlock,
    ToolContext,
    ToolResultMessage,
    tool,
)
from toolwire.agent import Agent as AgentClass
from toolwire.durable import StepBackend, idempotency_key
from toolwire.models.base import Completion

pytestmark = pytest.mark.anyio


class RecordingBackend:
    """Runs the steps in process and records them, the way a durable backend sees them."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.steps: list[str] = []

    async def model_step(self, step: Callable[[], Awaitable[Completion]]) -> Completion:
        self.steps.append("model")
        return await step()

    def tool_step(
        self, call: ToolCallBlock, step: Callable[[str], Awaitable[ToolResultMessage]]
    ) -> Awaitable[ToolResultMessage]:
        (value,) = json.loads(call.arguments).values()
        self.steps.append(f"tool:{value}")
        return step(idempotency_key(self.run_id, len(self.steps), call.id))


async def run_with(agent: AgentClass, backend: StepBackend, prompt: str) -> Any:
    from toolwire import _loop  # pyright: ignore[reportPrivateUsage]

    config = dataclasses.replace(agent.loop_config(), backend=backend)
    return await _loop.run(config, prompt, None)


async def test_steps_go_through_the_backend_with_an_idempotency_key() -> None:
    keys: list[str | None] = []

    @tool
    def pay(order: str, ctx: ToolContext) -> str:
        """Pay."""
        keys.append(ctx.idempotency_key)
        return f"paid {order}"

    model = ScriptedModel([("pay", {"order": "x"}), "done"])
    backend = RecordingBackend("run-7")
    result = await run_with(Agent(model, tools=[pay]), backend, "go")
    assert result.text == "done"
    assert backend.steps == ["model", "tool:x", "model"]
    call_id = result.trace[0].call_id
    assert keys == [f"run-7:2:{call_id}"]


async def test_without_a_backend_tools_get_no_key() -> None:
    keys: list[str | None] = []

    @tool
    def pay(order: str, ctx: ToolContext) -> str:
        """Pay."""
        keys.append(ctx.idempotency_key)
        return "paid"

    await Agent(ScriptedModel([("pay", {"order": "x"}), "done"]), tools=[pay]).run("go")
    assert keys == [None]


async def test_parallel_calls_reach_the_backend_in_call_order() -> None:
    # Each call's start is held until the next call has started, so the calls come to the
    # backend's door in reverse; the backend still sees them in the turn's order, which is what
    # makes a replay find each call's checkpoint.
    started = {str(i): anyio.Event() for i in range(4)}

    async def hold(event: RunEvent) -> None:
        if isinstance(event, FunctionCallStarted):
            n = json.loads(event.arguments)["n"]
            started[n].set()
            if n != "3":
                await started[str(int(n) + 1)].wait()

    @tool
    async def work(n: str) -> str:
        """Work."""
        return n

    calls = [("work", {"n": str(i)}) for i in range(4)]
    agent = Agent(ScriptedModel([calls, "done"]), tools=[work], subscribers=[hold])
    backend = RecordingBackend("run-8")
    with anyio.fail_after(10):
        result = await run_with(agent, backend, "go")
    assert backend.steps[1:5] == [f"tool:{i}" for i in range(4)]
    assert [m.text for m in result.messages if isinstance(m, ToolResultMessage)] == [
        "0",
        "1",
        "2",
        "3",
    ]


async def test_unknown_tools_and_sequential_tools_keep_the_order() -> None:
    @tool
    async def fast(n: str) -> str:
        """Fast."""
        return n

    @tool(sequential=True)
    async def alone(n: str) -> str:
        """Alone."""
        return n

    calls = [
        ("fast", {"n": "0"}),
        ("nope", {"n": "1"}),
        ("alone", {"n": "2"}),
        ("fast", {"n": "3"}),
    ]
    backend = RecordingBackend("run-9")
    with anyio.fail_after(10):
        result = await run_with(
            Agent(ScriptedModel([calls, "done"]), tools=[fast, alone]), backend, "go"
        )
    assert backend.steps == ["model", "tool:0", "tool:2", "tool:3", "model"]
    assert result.trace[1].is_error
    assert "unknown tool" in result.trace[1].result


def test_the_seam_imports_no_dbos() -> None:
    code = (
        "import sys, toolwire, toolwire.agent, toolwire.durable\n"
        "from toolwire.durable import StepBackend, idempotency_key\n"
        "assert 'dbos' not in sys.modules, 'dbos was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
