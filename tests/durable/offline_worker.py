"""A worker process for the durable tests of typed output and offline models.

    python offline_worker.py typed DB RUN_ID DIR [LOG_LEVEL]   run a typed run, print its output
    python offline_worker.py join DB RUN_ID DIR                join the finished typed run
    python offline_worker.py scripted DB RUN_ID DIR [KILL_AT]  a ScriptedModel run, killable
    python offline_worker.py searched DB RUN_ID DIR [KILL_AT]  the same, its tool deferred

`scripted` pauses at `tool:ORDER:before` when told (printing `at tool:ORDER:before`) for the test
to SIGKILL it there; side effects go to DIR/effects, one line per call that really ran.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pydantic
from worker_launch import launch

from toolwire import Agent, ToolContext, deferred, tool
from toolwire.durable import DurableAgent, RunClient, shutdown
from toolwire.models.testing import FunctionModel, ScriptedModel

KILL_AT = ""
DIR = Path()


class City(pydantic.BaseModel):
    name: str
    population: int


@dataclass
class Town:
    name: str


def described(value: Any) -> dict[str, Any]:
    return {"type": type(value).__name__, "value": pydantic.TypeAdapter(Any).dump_python(value)}


def typed_agent() -> DurableAgent:
    model = FunctionModel(lambda messages, request: '{"name": "Oslo", "population": 709000}')
    return DurableAgent(Agent(model, output_type=City), name="typed")


@tool
async def charge(order: str, ctx: ToolContext) -> str:
    """Charge an order."""
    if f"tool:{order}:before" == KILL_AT:
        print(f"at {KILL_AT}", flush=True)
        await anyio.sleep_forever()
    with (DIR / "effects").open("a") as f:
        f.write(f"{order} {ctx.idempotency_key}\n")
    return f"charged {order}"


def scripted_agent() -> DurableAgent:
    script = ScriptedModel(
        [("charge", {"order": "a"}), ("charge", {"order": "b"}), '{"name": "done"}']
    )
    return DurableAgent(Agent(script, tools=[charge], output_type=Town), name="scripted")


def searched_agent() -> DurableAgent:
    # `charge` is deferred: found by the search in the first step, callable after it.
    script = ScriptedModel(
        [
            ("search_tools", {"query": "charge an order"}),
            ("charge", {"order": "a"}),
            ("charge", {"order": "b"}),
            '{"name": "done"}',
        ]
    )
    return DurableAgent(Agent(script, tools=deferred(charge), output_type=Town), name="searched")


async def main() -> None:
    global KILL_AT, DIR
    mode, db, run_id, folder = sys.argv[1:5]
    extra = sys.argv[5] if len(sys.argv) > 5 else ""
    DIR = Path(folder)
    if mode in ("typed", "join"):
        durable = typed_agent()
        launch(db, log_level=extra or "ERROR")
        print("launched", flush=True)
        outcome = await durable.run("a city", run_id=run_id)
        with RunClient(db) as client:
            read = await client.result(run_id, output_type=City)
            untyped = await client.result(run_id)
        print(
            json.dumps(
                {
                    "output": described(outcome.output),
                    "client": described(read.output),
                    "untyped": described(untyped.output),
                    "stop_reason": outcome.stop_reason,
                }
            ),
            flush=True,
        )
        shutdown()
        return
    KILL_AT = extra
    durable = searched_agent() if mode == "searched" else scripted_agent()
    launch(db)
    print("launched", flush=True)
    outcome = await durable.run("charge a then b", run_id=run_id)
    print(json.dumps({"output": described(outcome.output), "text": outcome.text}), flush=True)
    shutdown()


if __name__ == "__main__":
    anyio.run(main)
