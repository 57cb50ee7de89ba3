"""A worker process for the crash tests: runs one durable run, pausing where it is told to die.

    python worker.py run DB RUN_ID DIR [KILL_AT]   start (or recover) the run, print its result
    python worker.py decide DB RUN_ID DIR          approve the run's pending calls, from outside
    python worker.py serve DB ID DIR [KILL_AT]     a worker under executor id ID, taking queued runs
    python worker.py client DB RUN_ID DIR          start the run on the queue (twice), approve, wait
    python worker.py recover DB ID DIR             hand a dead worker's runs to the live ones
    python worker.py enqueue DB RUN_ID DIR         a worker that queues the run (twice), runs it

At the point named KILL_AT the first worker to get there prints `at KILL_AT by ID` and waits
forever (others go on): the test, which waits for that line, SIGKILLs it there. Side effects go to DIR/effects (one line per key, kept
once: the tool deduplicates by its idempotency key); every attempt goes to DIR/attempts, and
every model request to DIR/model. Workers launch through `worker_launch.launch`
(`poll_interval=0.05`): with SQLite a decision reaches a waiting run, and a queued run a worker,
in a twentieth of a second, not a second.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
from worker_launch import launch

from toolwire import Agent, ToolContext, tool
from toolwire.durable import DurableAgent, RunClient, shutdown
from toolwire.messages import Message, ToolResultMessage
from toolwire.models.testing import FunctionModel, ModelRequest

KILL_AT = ""
DIR = Path()
EXECUTOR = "local"


def claim(point: str) -> bool:
    """True for the first process to reach `point` (of all workers sharing DIR)."""
    try:
        os.close(os.open(DIR / f"paused-at-{point}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


async def pause(point: str) -> None:
    if point == KILL_AT and claim(point):
        print(f"at {point} by {EXECUTOR}", flush=True)
        await anyio.sleep_forever()


def append(name: str, line: str) -> None:
    with (DIR / name).open("a") as f:
        f.write(line + "\n")


async def effect(order: str, ctx: ToolContext, kind: str) -> str:
    key = ctx.idempotency_key
    assert key is not None
    await pause(f"tool:{order}:before")
    append("attempts", f"{kind} {order} {key}")
    effects = DIR / "effects"
    done = effects.read_text().splitlines() if effects.exists() else []
    if key not in done:
        append("effects", key)
    await pause(f"tool:{order}:during")
    return f"{kind} {order}: ok"


@tool
async def charge(order: str, ctx: ToolContext) -> str:
    """Charge an order."""
    return await effect(order, ctx, "charge")


@tool(requires_approval=True)
async def refund(order: str, ctx: ToolContext) -> str:
    """Refund an order (needs approval)."""
    return await effect(order, ctx, "refund")


async def reply(messages: list[Message], request: ModelRequest) -> Any:
    answered = sum(isinstance(m, ToolResultMessage) for m in messages)
    append("model", str(answered))
    iteration = {0: 1, 1: 2, 4: 3, 5: 4}[answered]
    await pause(f"model:{iteration}:before")
    if answered == 0:
        return [("charge", {"order": "a"})]
    if answered == 1:
        return [("charge", {"order": o}) for o in ("b", "c", "d")]
    if answered == 4:
        return [("refund", {"order": "r"})]
    return "all done"


RESPONSES = 0


async def on_event(event: Any) -> None:
    global RESPONSES
    if event.type == "model.response":
        # Counted here, not taken from event.iteration: the run goes on after an approval in a
        # second pass of the loop, whose iterations count from 1 again.
        RESPONSES += 1
        await pause(f"model:{RESPONSES}:after")
    elif event.type == "function_call.completed":
        await pause(f"tool:{event.arguments and json.loads(event.arguments)['order']}:after")


def build() -> DurableAgent:
    agent = Agent(FunctionModel(reply), tools=[charge, refund], subscribers=[on_event])
    return DurableAgent(agent, name="crash")


async def watch_approval(db: str, run_id: str) -> None:
    with RunClient(db) as client:
        state = await client.pending(run_id, wait=60)
    if state is not None:
        await pause("approval:wait")


def summary(outcome: Any) -> dict[str, Any]:
    return {
        "stop_reason": outcome.stop_reason,
        "text": outcome.text,
        "history": [m.kind for m in outcome.messages],
        "results": [m.text for m in outcome.messages if isinstance(m, ToolResultMessage)],
    }


async def start_and_wait(db: str, run_id: str) -> None:
    with RunClient(db) as runs:
        first = await runs.start("crash", "charge everything", run_id=run_id)
        again = await runs.start("crash", "a different prompt", run_id=run_id)
        print(f"started {first} {again}", flush=True)
        # The run cannot finish before this client approves its refund.
        assert await runs.poll(run_id) is None
        state = await runs.pending(run_id, wait=120)
        assert state is not None, "the run is not waiting for approval"
        await runs.decide(run_id, approvals={p.call.id: True for p in state.pending})
        outcome = await runs.result(run_id)
        polled = await runs.poll(run_id)
        assert polled is not None
        assert polled.messages == outcome.messages
        info = await runs.info(run_id)
        listed = [r.run_id for r in await runs.list()]
    print(json.dumps({**summary(outcome), "worker": info.worker, "runs": listed}), flush=True)


async def main() -> None:
    global KILL_AT, DIR, EXECUTOR
    mode, db, run_id, folder = sys.argv[1:5]
    KILL_AT = sys.argv[5] if len(sys.argv) > 5 else ""
    DIR = Path(folder)
    durable = build()
    if mode == "client":
        await start_and_wait(db, run_id)
        return
    if mode == "recover":
        with RunClient(db) as runs:
            moved = await runs.recover(run_id)
        print(f"recovered {' '.join(moved)}", flush=True)
        return
    if mode == "enqueue":
        launch(db, executor_id="solo")
        print("launched", flush=True)
        first = await durable.enqueue("charge everything", run_id=run_id)
        again = await durable.enqueue("a different prompt", run_id=run_id)
        print(f"started {first} {again}", flush=True)
        with RunClient(db) as runs:
            outcome = await runs.result(run_id)
            info = await runs.info(run_id)
            listed = [r.run_id for r in await runs.list()]
        print(json.dumps({**summary(outcome), "worker": info.worker, "runs": listed}), flush=True)
        shutdown()
        return
    if mode == "serve":
        EXECUTOR = run_id
        # A deployment of a new version (tests/durable/test_versions.py) names another one.
        version = os.environ.get("TOOLWIRE_TEST_APP_VERSION", "toolwire-1")
        # DBOS is quiet by default; a test reading its log asks for it.
        level = os.environ.get("TOOLWIRE_TEST_DBOS_LOG_LEVEL", "ERROR")
        launch(
            db,
            executor_id=EXECUTOR,
            application_version=version,
            log_level=level,
        )
        print("ready", flush=True)
        await anyio.sleep_forever()
    if mode == "decide":
        with RunClient(db) as client:
            state = await client.pending(run_id, wait=60)
            assert state is not None, "the run is not waiting for approval"
            await client.decide(run_id, approvals={p.call.id: True for p in state.pending})
        print("decided", flush=True)
        return
    launch(db)
    print("launched", flush=True)
    async with anyio.create_task_group() as group:
        if KILL_AT == "approval:wait":
            group.start_soon(watch_approval, db, run_id)
        outcome = await durable.run("charge everything", run_id=run_id)
        group.cancel_scope.cancel()
    print(json.dumps(summary(outcome)), flush=True)
    shutdown()


if __name__ == "__main__":
    anyio.run(main)
