"""RunClient on its own: starting runs by id on the queue, polling, and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire.durable import RunClient
from toolwire.errors import RunsDatabaseError

from .processes import Worker

pytestmark = pytest.mark.anyio


@pytest.fixture
def runs_db(database: str, tmp_path: Path) -> str:
    """A runs database a worker has launched on (and left): the schema is DBOS's to create."""
    worker = Worker("serve", database, "w1", str(tmp_path), log=tmp_path / "w1.log")
    worker.wait_for("ready")
    worker.kill()
    return database


async def test_starting_an_id_twice_queues_one_run(runs_db: str) -> None:
    with RunClient(runs_db) as runs:
        assert await runs.start("billing", "charge 42", run_id="order-42") == "order-42"
        assert await runs.start("billing", "charge 43", run_id="order-42") == "order-42"
        listed = await runs.list()
        info = await runs.info("order-42")
        # No worker is running: the run waits on the queue, taken by nobody yet.
        assert await runs.poll("order-42") is None
    assert [r.run_id for r in listed] == ["order-42"]
    assert info.status == "ENQUEUED"
    assert info.agent == "billing"
    assert info.worker is None


async def test_an_id_of_another_agents_run_is_refused(runs_db: str) -> None:
    with RunClient(runs_db) as runs:
        await runs.start("billing", "charge 42", run_id="order-42")
        with pytest.raises(ValueError, match="run 'order-42' is a run of 'billing', not of 'mail'"):
            await runs.start("mail", "send it", run_id="order-42")
        assert [r.agent for r in await runs.list()] == ["billing"]


async def test_unknown_runs_and_workers(runs_db: str) -> None:
    with RunClient(runs_db) as runs:
        with pytest.raises(KeyError):
            await runs.poll("no-such-run")
        assert await runs.recover("no-such-worker") == []


def test_a_database_no_worker_set_up_is_refused(tmp_path: Path, fresh_postgres: str) -> None:
    for url in (f"sqlite:///{tmp_path / 'empty.sqlite'}", fresh_postgres):
        with pytest.raises(RunsDatabaseError, match="is not a runs database yet"):
            RunClient(url)


def test_unreachable_and_malformed_urls_are_refused() -> None:
    with pytest.raises(RunsDatabaseError, match="cannot reach the runs database") as caught:
        RunClient("postgresql://toolwire:secret@127.0.0.1:1/runs")
    assert "secret" not in str(caught.value)
    with pytest.raises(RunsDatabaseError, match="not a database URL"):
        RunClient("runs.sqlite")
    with pytest.raises(RunsDatabaseError, match="not mysql"):
        RunClient("mysql://localhost/runs")
