"""A long-lived worker for the `toolwire runs` tests: it runs durable runs until stdin closes.

    python runs_worker.py DB [EXECUTOR_ID]

Commands, one per stdin line:
    start RUN_ID TURN...   start a run whose model makes one turn per TURN, each a `+`-joined
                           list of calls `tool:order` (tools: charge, refund (needs approval),
                           hold (waits for `release`)), then answers `done: N call(s)`;
                           prints `started RUN_ID`
    release                let every `hold` call in flight finish

The worker prints `ready` once DBOS is launched. Each `hold` call prints `holding ORDER`.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import anyio.to_thread
from worker_launch import launch

from toolwire import Agent, tool
from toolwire.durable import DurableAgent, shutdown
from toolwire.messages import Message, ToolResultMessage, UserMessage
from toolwire.models.testing import FunctionModel, ModelRequest

RELEASE = anyio.Event()


def say(line: str) -> None:
    print(line, flush=True)


@tool
def charge(order: str) -> str:
    """Charge an order."""
    return f"charged {order}"


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order (needs approval)."""
    return f"refunded {order}"


@tool
async def hold(order: str) -> str:
    """Wait until the test says `release`."""
    say(f"holding {order}")
    await RELEASE.wait()
    return f"held {order}"


def reply(messages: list[Message], request: ModelRequest) -> Any:
    prompt = next(m.text for m in messages if isinstance(m, UserMessage))
    turns = [turn.split("+") for turn in prompt.split()]
    answered = sum(isinstance(m, ToolResultMessage) for m in messages)
    done = 0
    for calls in turns:
        if answered == done:
            return [
                (name, {"order": order}) for name, _, order in (c.partition(":") for c in calls)
            ]
        done += len(calls)
    last = next(m for m in reversed(messages) if isinstance(m, ToolResultMessage))
    return f"done: {answered} call(s), last: {last.text}"


async def commands(durable: DurableAgent) -> None:
    global RELEASE
    while line := await anyio.to_thread.run_sync(sys.stdin.readline):
        words = line.split()
        if words[0] == "start":
            run_id = await durable.start(" ".join(words[2:]), run_id=words[1])
            say(f"started {run_id}")
        elif words[0] == "release":
            RELEASE.set()
            RELEASE = anyio.Event()


async def main() -> None:
    db = sys.argv[1]
    agent = Agent(FunctionModel(reply), tools=[charge, refund, hold])
    durable = DurableAgent(agent, name="shop")
    launch(db, executor_id=sys.argv[2] if len(sys.argv) > 2 else None)
    say("ready")
    try:
        await commands(durable)
    finally:
        shutdown()


if __name__ == "__main__":
    anyio.run(main)
