"""Cost of a durable run's checkpoints: toolwire's DBOS backend against a bare DBOS step and
against pydantic-ai's DBOS integration, on SQLite and on Postgres.

Every run is the same script, answered in process with no network: the model calls `bump` once,
then twice in parallel, then once more, then answers; 4 model requests and 4 tool calls, each a
checkpointed DBOS step. The runs are durable workflows of their framework:
- bare DBOS: one workflow making 8 `DBOS.run_step_async` steps that return a short string (the
  floor: what DBOS itself costs per step);
- toolwire: `DurableAgent.run`;
- pydantic-ai: an `Agent` with the `DBOSDurability` capability run inside a `@DBOS.workflow`,
  its tool a `@DBOS.step` (pydantic-ai makes model requests steps itself; function tools are
  steps when decorated, which is what its docs ask of tools with side effects).
Each run gets a new workflow id; every workflow returns its whole history as JSON. Printed per
database: time per run and per checkpointed step, each framework's cost per step above the bare
DBOS step, the steps DBOS recorded per run, and the ratio toolwire / pydantic-ai (goal: at most
1). A step's cost is mostly the database's commit (SQLite syncs its file each time), so on a
loaded machine the spread between batches can exceed a framework's own cost.

Postgres: a throwaway server started with `initdb`/`pg_ctl` (tests/_postgres.py), or
`--postgres URL` for an existing one (its DBOS tables are made in that database);
`--no-postgres` skips it.

Run: `make bench` or `.venv/bin/python benchmarks/durable.py`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNS = 20
REPEATS = 5
STEPS = 8  # 4 model requests + 4 tool calls
SCRIPT: list[list[int]] = [[1], [2, 3], [4]]  # the calls of each turn (bump's argument)

Runner = Callable[[str], Awaitable[Any]]


async def bump(n: int) -> int:
    """Add one."""
    return n + 1


# --- bare DBOS -------------------------------------------------------------------------------------


def bare_dbos() -> Runner:
    from dbos import DBOS, SetWorkflowID

    async def step() -> str:
        return '{"ok": true}'

    @DBOS.workflow(name="bench.bare")
    async def workflow() -> str:
        outputs = [await DBOS.run_step_async({"name": "bare"}, step) for _ in range(STEPS)]
        return "[" + ",".join(outputs) + "]"

    async def run(run_id: str) -> Any:
        with SetWorkflowID(run_id):
            handle = await DBOS.start_workflow_async(workflow)
        return await handle.get_result()

    return run


# --- toolwire ---------------------------------------------------------------------------------


def toolwire() -> Runner:
    from toolwire import Agent, FunctionModel, tool
    from toolwire.durable import DurableAgent
    from toolwire.messages import Message, ToolResultMessage
    from toolwire.models.testing import ModelRequest

    def reply(messages: list[Message], request: ModelRequest) -> Any:
        answered = sum(isinstance(m, ToolResultMessage) for m in messages)
        done = 0
        for turn in SCRIPT:
            if answered == done:
                return [("bump", {"n": n}) for n in turn]
            done += len(turn)
        return "done"

    agent = Agent(FunctionModel(reply), tools=[tool(bump)])
    durable = DurableAgent(agent, name="bench")

    async def run(run_id: str) -> Any:
        result = await durable.run("go", run_id=run_id)
        assert result.text == "done" and len(result.trace) == 4, result.stop_reason
        return result

    return run


# --- pydantic-ai ------------------------------------------------------------------------------


def pydantic_ai() -> Runner | None:
    try:
        from dbos import DBOS, SetWorkflowID
        from pydantic_ai import Agent
        from pydantic_ai.durable_exec.dbos import DBOSDurability
        from pydantic_ai.messages import (
            ModelMessage,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel
    except ImportError:
        return None

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered = sum(
            isinstance(part, ToolReturnPart)
            for m in messages
            if isinstance(m, ModelRequest)
            for part in m.parts
        )
        done = 0
        for turn in SCRIPT:
            if answered == done:
                return ModelResponse(
                    parts=[ToolCallPart("bump", {"n": n}, tool_call_id=f"c{n}") for n in turn]
                )
            done += len(turn)
        return ModelResponse(parts=[TextPart("done")])

    step_bump = DBOS.step(name="bench.pydantic_ai.bump")(bump)
    agent = Agent(
        FunctionModel(reply), name="bench_pai", tools=[step_bump], capabilities=[DBOSDurability()]
    )

    @DBOS.workflow(name="bench.pydantic_ai")
    async def workflow(prompt: str) -> bytes:
        result = await agent.run(prompt)
        assert result.output == "done", result.output
        return result.all_messages_json()

    async def run(run_id: str) -> Any:
        with SetWorkflowID(run_id):
            handle = await DBOS.start_workflow_async(workflow, "go")
        return await handle.get_result()

    return run


# --- measuring --------------------------------------------------------------------------------


def launch(url: str) -> None:
    from dbos import DBOS, DBOSConfig

    config: DBOSConfig = {
        "name": "toolwire-bench",
        "system_database_url": url,
        "application_version": "bench",
    }
    DBOS(config=config)
    DBOS.launch()
    logging.getLogger("dbos").setLevel(logging.WARNING)


def shutdown() -> None:
    from dbos import DBOS

    DBOS.destroy(destroy_registry=False)


async def batch(run: Runner, label: str) -> float:
    """Seconds per run over RUNS runs, one after another."""
    ids = [f"{label}-{uuid.uuid4().hex}" for _ in range(RUNS)]
    start = time.perf_counter()
    for run_id in ids:
        await run(run_id)
    return (time.perf_counter() - start) / RUNS


async def steps_of(run_id_prefix: str) -> int:
    """Checkpointed steps of one run (the last one of `run_id_prefix`), as DBOS recorded them."""
    from dbos import DBOS

    (status,) = await DBOS.list_workflows_async(
        workflow_id_prefix=run_id_prefix, limit=1, sort_desc=True
    )
    return len(await DBOS.list_workflow_steps_async(status.workflow_id))


async def measure(url: str, runners: dict[str, Runner]) -> dict[str, tuple[float, int]]:
    """Best seconds per run and DBOS steps per run, for each runner on one database.

    The batches take turns, in a rotating order, so a slow spell of the machine (or of the
    database warming up) does not land on one framework alone.
    """
    launch(url)
    try:
        labels = list(runners)
        best = dict.fromkeys(labels, float("inf"))
        for label in labels:  # warm-up: imports, schemas, the database's first pages
            await runners[label](f"{label.replace(' ', '-')}-warm-{uuid.uuid4().hex}")
        for repeat in range(REPEATS):
            for label in labels[repeat % len(labels) :] + labels[: repeat % len(labels)]:
                seconds = await batch(runners[label], label.replace(" ", "-"))
                best[label] = min(best[label], seconds)
        return {label: (best[label], await steps_of(label.replace(" ", "-"))) for label in labels}
    finally:
        shutdown()


def report(database: str, figures: dict[str, tuple[float, int]]) -> None:
    print(f"\n{database}: per run ({STEPS} checkpointed steps: 4 model requests, 4 tool calls)")
    print(f"{'':>14}{'ms/run':>10}{'us/step':>10}{'above bare, us/step':>22}{'DBOS steps':>12}")
    bare = figures["bare DBOS"][0]
    for label, (seconds, recorded) in figures.items():
        above = "" if label == "bare DBOS" else f"{(seconds - bare) / STEPS * 1e6:>22.0f}"
        print(
            f"{label:>14}{seconds * 1e3:>10.1f}{seconds / STEPS * 1e6:>10.0f}"
            f"{above:>22}{recorded:>12}"
        )
    if "pydantic-ai" in figures:
        tw, pai = figures["toolwire"][0], figures["pydantic-ai"][0]
        print(f"toolwire / pydantic-ai: {tw / pai:.2f}x per run")


@contextlib.contextmanager
def postgres(url: str | None, scratch: Path) -> Iterator[str]:
    if url is not None:
        yield url
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from _postgres import running_postgres  # pyright: ignore[reportMissingImports]

    with running_postgres(scratch) as started:  # pyright: ignore[reportUnknownVariableType]
        yield started  # pyright: ignore[reportUnknownArgumentType]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="use this Postgres database")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()

    runners: dict[str, Runner] = {"bare DBOS": bare_dbos(), "toolwire": toolwire()}
    pai = pydantic_ai()
    if pai is None:
        print("pydantic-ai's DBOS integration: not installed (pip install -e '.[bench]')")
    else:
        runners["pydantic-ai"] = pai
    print(
        f"durable runs: best of {REPEATS} batches of {RUNS} runs each, one run after another, "
        "the frameworks' batches taking turns (scripted model, no network)"
    )
    with tempfile.TemporaryDirectory() as scratch:
        sqlite = f"sqlite:///{Path(scratch) / 'bench.sqlite'}"
        report("SQLite", await measure(sqlite, runners))
        if not args.no_postgres:
            with postgres(args.postgres, Path(scratch)) as url:
                report("Postgres", await measure(url, runners))


if __name__ == "__main__":
    asyncio.run(main())
