"""Durable runs for the `toolwire web --runs` tests: the `toolwire runs` tests' worker
(tests/durable/runs_worker.py: a `shop` agent whose `refund` needs approval and whose `hold`
waits for `release`) on an SQLite file, and bounded waits on the runs' database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio

from durable.test_runs_cli import TIMEOUT, Worker
from toolwire import RunResult
from toolwire.durable import RunClient

__all__ = ["TIMEOUT", "Worker", "running_worker", "wait_finished", "wait_paused"]


@contextmanager
def running_worker(folder: Path) -> Iterator[tuple[str, Worker]]:
    """A runs database in `folder` and a worker on it (DBOS launches in a few seconds: share it
    across a module's tests)."""
    db = f"sqlite:///{folder / 'runs.sqlite'}"
    worker = Worker(db, folder / "worker.log")
    try:
        yield db, worker
    finally:
        worker.close()


async def wait_paused(db: str, run_id: str) -> list[str]:
    """Wait (bounded) until the run waits for a decision; its pending call ids."""
    with RunClient(db) as client:
        state = await client.pending(run_id, wait=TIMEOUT)
    assert state is not None, f"{run_id} did not pause"
    return [p.call.id for p in state.pending]


async def wait_finished(db: str, run_id: str) -> RunResult:
    """Wait (bounded) for the run's result."""
    with RunClient(db) as client, anyio.fail_after(TIMEOUT):
        return await client.result(run_id)
