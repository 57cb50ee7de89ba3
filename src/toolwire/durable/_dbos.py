"""The DBOS backend: one run is one DBOS workflow, each model request and tool call one step.

A run's workflow id is the caller's run id, so starting the same id twice gives the same run.
After a crash, DBOS replays the workflow on the next launch (or on another worker): steps that
finished return their checkpoint without running again; the step that was running when the
process died runs once more, which is why tools get `ToolContext.idempotency_key`.

Checkpoints are toolwire's own JSON (the history's round-trip format), not pickles, so a worker
of a newer toolwire still reads them; a run's result and its paused state are written with the
run codec (`RunResult.to_json`), which keeps every field.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from .._extras import require_extra

require_extra("durable", "dbos", needed_by="durable runs")

from dbos import DBOS, DBOSConfig, SetWorkflowID, WorkflowHandleAsync  # noqa: E402

from .._loop import run as run_loop  # noqa: E402
from .._run_result import RunResult  # noqa: E402
from .._steps import idempotency_key  # noqa: E402
from ..agent import Agent  # noqa: E402
from ..messages import (  # noqa: E402
    AssistantMessage,
    Message,
    ToolCallBlock,
    ToolResultMessage,
    dump_history,
    load_history,
)
from ..models.base import Completion, Model  # noqa: E402
from ..models.testing import ScriptedModel  # noqa: E402
from ..models.wrappers import WrapperModel  # noqa: E402
from ..usage import Cost, Usage  # noqa: E402

__all__ = [
    "DECISIONS",
    "PENDING",
    "QUEUE",
    "DurableAgent",
    "launch",
    "load_completion",
    "shutdown",
    "workflow_args",
    "workflow_name",
]

DECISIONS = "toolwire.decisions"
PENDING = "toolwire.pending"
QUEUE = "toolwire.runs"
_DEFAULT_APPROVAL_WAIT = 7 * 24 * 3600.0


def launch(
    database_url: str = "sqlite:///toolwire-runs.sqlite",
    *,
    name: str = "toolwire",
    application_version: str = "toolwire-1",
    executor_id: str | None = None,
    log_level: str = "ERROR",
    poll_interval: float = 1.0,
) -> None:
    """Start DBOS on a system database and recover this worker's unfinished runs.

    Build every `DurableAgent` before calling it: recovery finds a run's workflow by the agent's
    name.

    Args:
        database_url: `sqlite:///path` (embedded, one process) or `postgresql://...` (many).
        name: The DBOS application name.
        application_version: DBOS recovers only runs started under the same version. toolwire
            pins it (rather than letting DBOS hash the workflow source, which is toolwire's and
            would not change with your code): bump it when a deployment changes what a run does,
            and finish or cancel the old version's runs with a worker that still runs it.
        executor_id: This worker's id, stable across its restarts and distinct from every
            other worker's: a worker starting under an id puts the runs left unfinished under
            that id back on the queue. DBOS's default (`DBOS__VMID`, else `"local"`) suits one
            worker only.
        log_level: The level of DBOS's own log (the `dbos` logger). `"ERROR"` keeps it quiet:
            no start-up and migration lines, no warning when a run is recovered; `"INFO"`
            shows them all.
        poll_interval: Seconds between two looks at the database for what it cannot announce:
            with SQLite, a decision or an event a waiting run expects; with either database,
            runs put on the queue. Lower hands them over sooner for more database reads
            (tests use 0.05); it also bounds how long `shutdown()` waits for DBOS's threads.

    Every launched worker also takes runs from the queue `QUEUE` (`RunClient.start`,
    `DurableAgent.enqueue`), so with a Postgres URL any number of workers share the runs.
    """
    config: DBOSConfig = {
        "name": name,
        "system_database_url": database_url,
        "application_version": application_version,
        "log_level": log_level,
        "notification_listener_polling_interval_sec": poll_interval,
    }
    if executor_id is not None:
        config["executor_id"] = executor_id
    DBOS(config=config)
    DBOS.launch()
    # Queues live in the database and a launched process takes work from every one of them.
    # DBOS refuses its blocking register_queue on a thread running an event loop, and launch()
    # is blocking anyway (it migrates the database): register from a helper thread then.
    register = functools.partial(DBOS.register_queue, QUEUE, polling_interval_sec=poll_interval)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        register()
    else:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(register).result()


def shutdown() -> None:
    """Stop DBOS in this process (runs in flight resume on the next launch)."""
    DBOS.destroy(destroy_registry=False)


# --- checkpoints as JSON ------------------------------------------------------------------------


def _dump_completion(completion: Completion) -> str:
    return json.dumps(
        {
            "message": json.loads(dump_history([completion.message])),
            "usage": dataclasses.asdict(completion.usage),
            "finish_reason": completion.finish_reason,
            "raw_finish_reason": completion.raw_finish_reason,
            "model": completion.model,
        }
    )


def load_completion(data: str) -> Completion:
    raw = json.loads(data)
    message = load_history(json.dumps(raw["message"]))[0]
    assert isinstance(message, AssistantMessage)
    return Completion(
        message=message,
        usage=Usage(**raw["usage"]),
        finish_reason=raw["finish_reason"],
        raw_finish_reason=raw["raw_finish_reason"],
        model=raw["model"],
    )


def workflow_name(agent_name: str) -> str:
    """The DBOS workflow name of a `DurableAgent`'s runs."""
    return f"toolwire.run.{agent_name}"


def workflow_args(
    prompt: str | None,
    history: Sequence[Message] | None,
    approvals: Mapping[str, bool | str] | None,
    results: Mapping[str, Any] | None,
) -> tuple[str | None, str | None, dict[str, bool | str] | None, dict[str, Any] | None]:
    """A run's workflow arguments, the same whichever process starts or enqueues it."""
    return (
        prompt,
        dump_history(history) if history is not None else None,
        dict(approvals) if approvals is not None else None,
        dict(results) if results is not None else None,
    )


# --- the backend --------------------------------------------------------------------------------


def _scripted(model: Model) -> bool:
    """Whether `model` (or the model a wrapper wraps) answers from a script, in order."""
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return isinstance(model, ScriptedModel)


class _DBOSBackend:
    """Runs each step as a DBOS step of the current workflow.

    Args:
        run_id: The run (the workflow id).
        replay_script: The model answers from a script (`ScriptedModel`): a replayed model step
            asks it again (and keeps the checkpoint), so the script stands where the run's
            history does when the first step that is not a checkpoint asks it.
    """

    def __init__(self, run_id: str, *, replay_script: bool = False) -> None:
        self.run_id = run_id
        self.replay_script = replay_script
        self._tool_steps = 0

    async def model_step(self, step: Callable[[], Awaitable[Completion]]) -> Completion:
        ran = False

        async def checkpointed() -> str:
            nonlocal ran
            ran = True
            return _dump_completion(await step())

        data = await DBOS.run_step_async({"name": "model"}, checkpointed)
        if not ran and self.replay_script:
            # An offline script has no side effects: asking it moves it past the answer the
            # checkpoint holds, which a recovered process's fresh script has not given yet.
            await step()
        return load_completion(data)

    def tool_step(
        self, call: ToolCallBlock, step: Callable[[str], Awaitable[ToolResultMessage]]
    ) -> Awaitable[ToolResultMessage]:
        # Tool steps reach the backend in a fixed order (the loop's turnstile), so counting them
        # gives each call the same position on every replay.
        self._tool_steps += 1
        key = idempotency_key(self.run_id, self._tool_steps, call.id)

        async def checkpointed() -> str:
            return dump_history([await step(key)])

        async def run() -> ToolResultMessage:
            data = await DBOS.run_step_async({"name": f"tool:{call.name}"}, checkpointed)
            message = load_history(data)[0]
            assert isinstance(message, ToolResultMessage)
            return message

        # A task starts in creation order on the event loop, and DBOS numbers a step when it
        # starts: creating the task here, while the loop holds the turn's call order, fixes the
        # step's number whatever order the calls finish in.
        return asyncio.ensure_future(run())


def _merge(first: RunResult, later: RunResult, start: int) -> RunResult:
    """One result for a run that paused and went on inside the same workflow."""
    totals = (first.cost.total, later.cost.total)
    cost = (
        Cost(totals[0] + totals[1])
        if totals[0] is not None and totals[1] is not None
        else Cost(None, first.cost.reason or later.cost.reason)
    )
    return dataclasses.replace(
        later,
        new_messages=later.messages[start:],
        usage=first.usage + later.usage,
        cost=cost,
        trace=[*first.trace, *later.trace],
        iterations=first.iterations + later.iterations,
    )


class DurableAgent:
    """An `Agent` whose runs are durable DBOS workflows.

    Build it before `launch()`, in every process that runs or recovers its runs, with the same
    `name`.

    Args:
        agent: The agent (model, tools, run configuration) every run of this name uses.
        name: Names the workflow in the database; stable across deployments.
        approval_wait: Seconds a run paused for approval waits for `decide()` before it ends
            with `stop_reason="approval_required"`; `0` ends it at once, as `Agent.run` does.
    """

    def __init__(
        self, agent: Agent, *, name: str, approval_wait: float = _DEFAULT_APPROVAL_WAIT
    ) -> None:
        self.agent = agent
        self.name = name
        self.approval_wait = approval_wait

        async def workflow(
            prompt: str | None,
            history: str | None,
            approvals: dict[str, bool | str] | None,
            results: dict[str, Any] | None,
        ) -> str:
            return await self._run_workflow(prompt, history, approvals, results)

        self._workflow = DBOS.workflow(name=workflow_name(name))(workflow)

    async def _run_workflow(
        self,
        prompt: str | None,
        history: str | None,
        approvals: dict[str, bool | str] | None,
        results: dict[str, Any] | None,
    ) -> str:
        run_id = DBOS.workflow_id
        assert run_id is not None
        config = self.agent.loop_config()
        backend = _DBOSBackend(run_id, replay_script=_scripted(config.model))
        config = dataclasses.replace(config, backend=backend)
        past = load_history(history) if history is not None else None
        result = await run_loop(config, prompt, past, approvals=approvals, results=results)
        start = len(result.messages) - len(result.new_messages)
        while result.pending and self.approval_wait > 0:
            await DBOS.set_event_async(PENDING, result.to_json())
            decision = await DBOS.recv_async(DECISIONS, timeout_seconds=self.approval_wait)
            # Cleared as soon as the wait ends, so no one reads the old pause as current (and
            # decides it a second time) while the run goes on. A run that never paused has
            # nothing to clear, and no step spent on it.
            await DBOS.set_event_async(PENDING, None)
            if decision is None:
                break
            later = await run_loop(
                config,
                None,
                result.messages,
                approvals=decision.get("approvals") or {},
                results=decision.get("results") or {},
            )
            result = _merge(result, later, start)
        return result.to_json()

    async def start(
        self,
        prompt: str | None = None,
        *,
        run_id: str,
        history: Sequence[Message] | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a run in this process (or find the one already under `run_id`); returns `run_id`."""
        with SetWorkflowID(run_id):
            await DBOS.start_workflow_async(
                self._workflow, *workflow_args(prompt, history, approvals, results)
            )
        return run_id

    async def enqueue(
        self,
        prompt: str | None = None,
        *,
        run_id: str,
        history: Sequence[Message] | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> str:
        """Put a run on the queue for any launched worker to take; returns `run_id`.

        A run already under `run_id` (queued, running or finished) is left as it is: the id
        names one run. `RunClient.start` does the same from a process that runs no runs.
        """
        queue = await DBOS.retrieve_queue_async(QUEUE)
        assert queue is not None, "launch() registers the queue"
        with SetWorkflowID(run_id):
            await queue.enqueue_async(
                self._workflow, *workflow_args(prompt, history, approvals, results)
            )
        return run_id

    async def run(
        self,
        prompt: str | None = None,
        *,
        run_id: str,
        history: Sequence[Message] | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """Start the run (or join it) and wait for its result; see `Agent.run`."""
        # The handle of a run this process executes awaits it; one found by id would poll the
        # database (a second at a time), which made every run last at least a second.
        with SetWorkflowID(run_id):
            handle: WorkflowHandleAsync[str] = await DBOS.start_workflow_async(
                self._workflow, *workflow_args(prompt, history, approvals, results)
            )
        return RunResult.from_json(
            await handle.get_result(), output_type=self.agent.config.output_type
        )
