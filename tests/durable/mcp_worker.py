"""A worker whose durable run calls a tool served over MCP by the test's process.

    python mcp_worker.py DB RUN_ID MCP_URL [KILL_AT]

With KILL_AT `mcp:after`, the worker prints `at mcp:after` once the MCP call has finished (its
step checkpointed) and waits there for the test to SIGKILL it. Otherwise it prints the result.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from worker_launch import launch

from toolwire import Agent
from toolwire.durable import DurableAgent, shutdown
from toolwire.mcp import from_mcp
from toolwire.messages import Message, ToolResultMessage
from toolwire.models.testing import FunctionModel, ModelRequest

KILL_AT = ""


async def reply(messages: list[Message], request: ModelRequest) -> Any:
    results = [m.text for m in messages if isinstance(m, ToolResultMessage)]
    if not results:
        return [("record", {"note": "paid"})]
    return f"done: {results[-1]}"


async def on_event(event: Any) -> None:
    if event.type == "function_call.completed" and KILL_AT == "mcp:after":
        print("at mcp:after", flush=True)
        await anyio.sleep_forever()


async def main() -> None:
    global KILL_AT
    db, run_id, url = sys.argv[1:4]
    KILL_AT = sys.argv[4] if len(sys.argv) > 4 else ""
    tools, client = await from_mcp(url)
    try:
        agent = Agent(FunctionModel(reply), tools=tools, subscribers=[on_event])
        durable = DurableAgent(agent, name="mcp")
        launch(db)
        print("launched", flush=True)
        outcome = await durable.run("record the payment", run_id=run_id)
        print(json.dumps({"text": outcome.text, "history": [m.kind for m in outcome.messages]}))
        shutdown()
    finally:
        await client.close()


if __name__ == "__main__":
    anyio.run(main)
