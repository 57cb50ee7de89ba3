"""A worker process for the durable test of an agent calling an agent as a tool.

    python agents_worker.py DB RUN_ID DIR [KILL_AT]

The boss calls the `worker` agent as a tool; the worker charges two orders. With KILL_AT
(`tool:ORDER:before`) the charge of ORDER waits there (printing `at tool:ORDER:before`) for the test
to SIGKILL the process; side effects go to DIR/effects, one line per charge that really ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from worker_launch import launch

from toolwire import Agent, ToolContext, tool
from toolwire.durable import DurableAgent, shutdown
from toolwire.models.testing import ScriptedModel

KILL_AT = ""
DIR = Path()


@tool
async def charge(order: str, ctx: ToolContext) -> str:
    """Charge an order."""
    if f"tool:{order}:before" == KILL_AT:
        print(f"at {KILL_AT}", flush=True)
        await anyio.sleep_forever()
    with (DIR / "effects").open("a") as f:
        f.write(f"{order} {ctx.idempotency_key}\n")
    return f"charged {order}"


def boss_agent() -> DurableAgent:
    worker = Agent(
        ScriptedModel([("charge", {"order": "a"}), ("charge", {"order": "b"}), "Charged a and b."]),
        name="worker",
        tools=[charge],
    )
    boss = Agent(
        ScriptedModel([("worker", {"input": "charge a then b"}), "All charged."]),
        name="boss",
        tools=[worker.as_tool()],
    )
    return DurableAgent(boss, name="boss")


async def main() -> None:
    global KILL_AT, DIR
    db, run_id, folder = sys.argv[1:4]
    KILL_AT = sys.argv[4] if len(sys.argv) > 4 else ""
    DIR = Path(folder)
    durable = boss_agent()
    launch(db)
    print("launched", flush=True)
    outcome = await durable.run("charge my orders", run_id=run_id)
    print(
        json.dumps(
            {
                "text": outcome.text,
                "tool_result": outcome.trace[0].result,
                "children": [c.name for c in outcome.trace[0].children],
                "requests": {k: u.requests for k, u in outcome.usage_by_agent.items()},
            }
        ),
        flush=True,
    )
    shutdown()


if __name__ == "__main__":
    anyio.run(main)
