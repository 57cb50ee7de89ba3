"""`RunClient`: see and steer durable runs from any process, without running any of them.

A client reads and writes the runs' database only; it never picks up a run, so a process that
approves or cancels runs cannot end up executing one (a launched DBOS process would recover and
run workflows left on its queue).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._extras import require_extra

require_extra("durable", "dbos", needed_by="durable runs")

from dbos import DBOSClient, WorkflowHandleAsync  # noqa: E402
from sqlalchemy import make_url  # noqa: E402  (sqlalchemy comes with dbos)
from sqlalchemy.exc import SQLAlchemyError  # noqa: E402

from .._run_result import RunResult  # noqa: E402
from ..errors import RunsDatabaseError  # noqa: E402
from ..messages import AssistantMessage, Message, UserMessage, load_history  # noqa: E402
from ._dbos import (  # noqa: E402
    DECISIONS,
    PENDING,
    QUEUE,
    load_completion,
    workflow_args,
    workflow_name,
)

__all__ = ["RunClient", "RunInfo"]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run as the database holds it.

    Attributes:
        run_id: The caller-given run id.
        status: DBOS's status: `PENDING` (running or waiting), `ENQUEUED`, `SUCCESS`, `ERROR`,
            `CANCELLED`, `MAX_RECOVERY_ATTEMPTS_EXCEEDED`.
        agent: The `DurableAgent` name the run belongs to.
        created_at: Milliseconds since the epoch.
        updated_at: Milliseconds since the epoch.
        app_version: The application version the run is pinned to.
        error: Why it failed, when it did.
        worker: The executor id of the worker that runs (or ran) it; `None` while queued.
    """

    run_id: str
    status: str
    agent: str
    created_at: int | None
    updated_at: int | None
    app_version: str | None
    error: str | None
    worker: str | None = None


_PREFIX = workflow_name("")
_FINISHED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _info(s: Any) -> RunInfo:
    return RunInfo(
        run_id=s.workflow_id,
        status=s.status,
        agent=s.name.removeprefix(_PREFIX),
        created_at=s.created_at,
        updated_at=s.updated_at,
        app_version=s.app_version,
        error=None if s.error is None else str(s.error),
        worker=s.executor_id,
    )


class RunClient:
    """A connection to a runs database (`sqlite:///path` or `postgresql://...`)."""

    def __init__(self, database_url: str) -> None:
        """Connect to the database.

        Raises:
            RunsDatabaseError: Not a `sqlite:` or `postgresql:` URL, the database cannot be
                reached, or no worker has launched on it (a worker creates DBOS's tables; a
                client does not).
        """
        try:
            url = make_url(database_url)
        except SQLAlchemyError as exc:
            raise RunsDatabaseError(f"not a database URL: {database_url!r}") from exc
        if url.get_backend_name() not in ("sqlite", "postgresql"):
            raise RunsDatabaseError(
                f"a runs database is sqlite:///<path> or postgresql://..., not {url.drivername}:"
            )
        shown = url.render_as_string(hide_password=True)
        try:
            self._client = DBOSClient(system_database_url=database_url)
        except SQLAlchemyError as exc:
            raise RunsDatabaseError(
                f"cannot reach the runs database {shown}: {_first_line(exc)}"
            ) from exc
        try:
            self._client.list_workflows(limit=1, load_input=False, load_output=False)
        except SQLAlchemyError as exc:
            self._client.destroy()
            raise RunsDatabaseError(
                f"{shown} is not a runs database yet (no worker has launched on it): {_first_line(exc)}"
            ) from exc

    def close(self) -> None:
        self._client.destroy()

    def __enter__(self) -> RunClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def list(
        self,
        *,
        limit: int | None = None,
        status: str | Sequence[str] | None = None,
        agent: str | None = None,
    ) -> list[RunInfo]:
        """Toolwire runs, newest first.

        Args:
            limit: At most this many.
            status: Only runs in this DBOS status (or these).
            agent: Only runs of this `DurableAgent` name.
        """
        statuses = await self._client.list_workflows_async(
            limit=limit,
            status=status if status is None or isinstance(status, str) else list(status),
            name=None if agent is None else _PREFIX + agent,
            sort_desc=True,
            load_input=False,
            load_output=False,
        )
        return [_info(s) for s in statuses if s.name.startswith(_PREFIX)]

    async def info(self, run_id: str) -> RunInfo:
        """One run; `KeyError` when the database has no run of that id."""
        for run in await self._list_one(run_id):
            return run
        raise KeyError(run_id)

    async def _list_one(self, run_id: str) -> list[RunInfo]:
        statuses = await self._client.list_workflows_async(
            workflow_ids=[run_id], load_input=False, load_output=False
        )
        return [_info(s) for s in statuses if s.name.startswith(_PREFIX)]

    async def conversation(self, run_id: str) -> list[Message]:
        """The run's conversation as the database holds it; `KeyError` for an unknown run.

        A finished run's is its result's; a run waiting for a decision has its paused state's.
        Any other (in progress, cancelled, failed) is rebuilt from its input and checkpoints: the
        model's answers and the results of the tools that ran, without the results a decision
        gave (refusals, answers to external calls) since those are not steps.
        """
        statuses = await self._client.list_workflows_async(
            workflow_ids=[run_id], load_input=True, load_output=True
        )
        found = [s for s in statuses if s.name.startswith(_PREFIX)]
        if not found:
            raise KeyError(run_id)
        status = found[0]
        if status.status == "SUCCESS" and isinstance(status.output, str):
            return RunResult.from_json(status.output).messages
        paused = await self.pending(run_id)
        if paused is not None:
            return paused.messages
        messages: list[Message] = []
        args: Any = (status.input or {}).get("args") or ()
        if len(args) >= 2:
            prompt, history = args[0], args[1]
            if isinstance(history, str):
                messages.extend(load_history(history))
            if isinstance(prompt, str):
                messages.append(UserMessage.of(prompt))
        for step in await self._client.list_workflow_steps_async(run_id):
            output = step["output"]
            if step["error"] is not None or not isinstance(output, str):
                continue
            if step["function_name"] == "model":
                messages.append(load_completion(output).message)
            elif step["function_name"].startswith("tool:"):
                messages.extend(load_history(output))
        return messages

    async def start(
        self,
        agent: str,
        prompt: str | None = None,
        *,
        run_id: str,
        history: Sequence[Message] | None = None,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> str:
        """Put a run of the `DurableAgent` named `agent` on the queue; returns `run_id`.

        Any launched worker that has built that agent takes it (a worker of the newest
        application version, as the run names none). Starting an id that already names a run
        leaves that run as it is and returns its id: call it again after a timeout or a crash
        without starting the run twice.

        Raises:
            ValueError: `run_id` names a run of another agent.
        """
        name = workflow_name(agent)
        known = await self._client.list_workflows_async(
            workflow_ids=[run_id], load_input=False, load_output=False
        )
        if known and known[0].name != name:
            raise ValueError(
                f"run {run_id!r} is a run of {known[0].name.removeprefix(_PREFIX)!r}, "
                f"not of {agent!r}"
            )
        await self._client.enqueue_async(
            {"queue_name": QUEUE, "workflow_name": name, "workflow_id": run_id},
            *workflow_args(prompt, history, approvals, results),
        )
        return run_id

    async def result(self, run_id: str, *, output_type: Any = None) -> RunResult:
        """Wait for the run to finish and return its result (raises what the run raised).

        Args:
            run_id: The run.
            output_type: The agent's `output_type`, to read `output` back as that type (a client
                does not build agents); `None` leaves it as decoded JSON.
        """
        handle: WorkflowHandleAsync[str] = await self._client.retrieve_workflow_async(run_id)
        return RunResult.from_json(await handle.get_result(), output_type=output_type)

    async def poll(self, run_id: str, *, output_type: Any = None) -> RunResult | None:
        """The run's result when it has finished, `None` while it is queued or running.

        Raises what the run raised when it failed; `KeyError` when there is no such run.
        `output_type` is `result`'s.
        """
        if (await self.info(run_id)).status not in _FINISHED:
            return None
        return await self.result(run_id, output_type=output_type)

    async def recover(self, worker: str) -> list[str]:
        """Hand the unfinished runs of a worker that is gone to the live workers.

        The runs go back on the queue (each goes on from its last finished step, in whichever
        worker takes it); a worker restarted under the same id does the same by itself. Call it
        only for a worker known to be dead: a live worker would go on running its runs too.

        Returns:
            The ids of the runs handed over.
        """
        statuses = await self._client.list_workflows_async(
            status="PENDING", executor_id=worker, load_input=False, load_output=False
        )
        sys_db = self._client._sys_db  # pyright: ignore[reportPrivateUsage]
        moved: list[str] = []
        for status in statuses:
            if not status.name.startswith(_PREFIX):
                continue
            # Conditional on the row still being this worker's: a run another recoverer already
            # handed over (and a live worker took) is left alone.
            if await asyncio.to_thread(
                sys_db.reenqueue_for_recovery, status.workflow_id, [worker], QUEUE
            ):
                moved.append(status.workflow_id)
        return moved

    async def pending(self, run_id: str, wait: float = 0.0) -> RunResult | None:
        """The run's state while it waits for a decision, or `None` when it is not waiting.

        Args:
            run_id: The run.
            wait: Seconds to wait for the run to reach a pause (`0`: look once).
        """
        data: Any = await self._client.get_event_async(run_id, PENDING, timeout_seconds=wait)
        return None if data is None else RunResult.from_json(data)

    async def decide(
        self,
        run_id: str,
        *,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> None:
        """Answer a run waiting for approval; the run goes on in its worker.

        Args:
            run_id: The run.
            approvals: Call id to `True` (approve), `False` or a reason (refuse).
            results: Call id to the result to use instead of running the call.

        Raises:
            ValueError: The run is not waiting for a decision, or this one leaves a pending call
                undecided or names a call the paused turn does not hold (checked here because
                the run itself would fail on it).
        """
        approvals = dict(approvals or {})
        results = dict(results or {})
        state = await self.pending(run_id)
        if state is None:
            raise ValueError(f"run {run_id!r} is not waiting for a decision")
        _check_decision(state, approvals, results)
        await self._client.send_async(
            run_id, {"approvals": approvals, "results": results}, DECISIONS
        )

    async def cancel(self, run_id: str) -> None:
        """Stop a run: its worker stops it at its next step; it can be resumed later."""
        await self._client.cancel_workflow_async(run_id)

    async def resume(self, run_id: str) -> None:
        """Put a cancelled run back on the queue, to go on from its last finished step.

        A worker of the run's application version picks it up. A failed run (`ERROR`) stays
        failed (DBOS does not resume it); a finished one is left as it is.
        """
        await self._client.resume_workflow_async(run_id)


def _check_decision(
    state: RunResult, approvals: Mapping[str, bool | str], results: Mapping[str, Any]
) -> None:
    last = state.messages[-1] if state.messages else None
    turn = {c.id for c in last.tool_calls} if isinstance(last, AssistantMessage) else set[str]()
    # A call a sub-agent paused on is named "<calling call>/<its id>" (see docs/agents.md).
    turn |= {p.call.id for p in state.pending}
    unknown = sorted({*approvals, *results} - turn)
    if unknown:
        raise ValueError(
            "the paused turn has no call with id "
            + ", ".join(repr(i) for i in unknown)
            + "; it waits on "
            + ", ".join(repr(p.call.id) for p in state.pending)
        )
    undecided: list[str] = []
    for pending in state.pending:
        call = pending.call
        verdict = approvals.get(call.id)
        refused = verdict is not None and verdict is not True
        if call.id in results or refused:
            continue
        if pending.reason == "external":
            undecided.append(f"{call.id} ({call.name}: needs a result or a refusal)")
        elif verdict is None:
            undecided.append(f"{call.id} ({call.name}: needs approval or a refusal)")
    if undecided:
        raise ValueError("undecided calls: " + ", ".join(undecided))
