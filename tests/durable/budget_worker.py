"""A worker process for the durable test of output budgets.

    python budget_worker.py DB RUN_ID DIR [KILL_AT]

The agent calls `dump` (a long result, cut by the budget), then `read_result` with the handle in
the marker, then answers with what it read. With KILL_AT=`model:2` the worker stops before its
second model request (printing `at model:2`) for the test to SIGKILL it there; `dump` writes one
line to DIR/effects each time it really runs.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
from worker_launch import launch

from toolwire import Agent, FunctionModel, Message, ToolResultMessage, tool
from toolwire.durable import DurableAgent, shutdown

KILL_AT = ""
DIR = Path()


@tool
def dump() -> str:
    """Every order, one a line."""
    with (DIR / "effects").open("a") as f:
        f.write("dump\n")
    return "\n".join(f"order {i}: weight {i * 7} kg" for i in range(4000))


async def decide(messages: list[Message], request: Any) -> Any:
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    if not results:
        return [("dump", {})]
    if len(results) == 1:
        if KILL_AT == "model:2":
            print(f"at {KILL_AT}", flush=True)
            await anyio.sleep_forever()
        handle = re.search(r'handle="(r_[0-9a-f]{16})"', results[0].text)
        assert handle is not None
        return [("read_result", {"handle": handle.group(1), "query": "order 3210:"})]
    return results[-1].text


async def main() -> None:
    global KILL_AT, DIR
    db, run_id, folder = sys.argv[1:4]
    KILL_AT = sys.argv[4] if len(sys.argv) > 4 else ""
    DIR = Path(folder)
    durable = DurableAgent(
        Agent(FunctionModel(decide), tools=[dump], output_budget=200), name="budgeted"
    )
    launch(db)
    print("launched", flush=True)
    outcome = await durable.run("find order 3210", run_id=run_id)
    cut = next(m for m in outcome.messages if isinstance(m, ToolResultMessage))
    print(
        json.dumps(
            {
                "text": outcome.text,
                "stop_reason": outcome.stop_reason,
                "cut": cut.text,
                "whole": cut.full_content is not None,
            }
        ),
        flush=True,
    )
    shutdown()


if __name__ == "__main__":
    anyio.run(main)
