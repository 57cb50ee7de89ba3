"""Many workers on Postgres: runs go on a queue, a client elsewhere starts and waits for them.

Two worker processes (executor ids worker-a and worker-b) take runs from the queue; a client
process starts a run by id (twice: one run), approves its refund and waits for its result. The
worker that takes the run is SIGKILLed in the middle of the parallel turn, with a tool in flight.
Without DBOS Conductor nothing notices a dead worker by itself: its runs stay with it until a
worker starts under its id again (startup recovery puts them back on the queue) or a
`RunClient.recover(worker)` hands them over. Both ways are tested; each run completes with its
conversation whole and each side effect done once.
"""

from __future__ import annotations

import json
from pathlib import Path

from .processes import Worker, wait_for_any
from .test_crash import check_whole

RUN_ID = "order-run"
KILL_AT = "tool:c:during"


def start_pair(db: str, folder: Path) -> tuple[list[Worker], Worker]:
    log = folder / "worker.log"
    workers = [
        Worker("serve", db, name, str(folder), KILL_AT, log=folder / f"{name}.log")
        for name in ("worker-a", "worker-b")
    ]
    for worker in workers:
        worker.wait_for("ready")
    client = Worker("client", db, RUN_ID, str(folder), log=log)
    return workers, client


def finish(client: Worker, folder: Path) -> dict[str, object]:
    out = client.wait_for('"stop_reason"')
    assert client.finish() == 0, (folder / "worker.log").read_text()
    assert f"started {RUN_ID} {RUN_ID}" in out
    return json.loads(out.strip().splitlines()[-1])


def check_once(folder: Path, outcome: dict[str, object]) -> None:
    check_whole(folder, outcome)
    # One run under the id, though it was started twice; each turn asked once, and only the
    # calls of the parallel turn that had not finished ran again.
    assert outcome["runs"] == [RUN_ID]
    assert (folder / "model").read_text().split() == ["0", "1", "4", "5"]
    assert 5 <= len((folder / "attempts").read_text().splitlines()) <= 8


def test_dead_workers_run_is_handed_to_the_live_worker(fresh_postgres: str, tmp_path: Path) -> None:
    workers, client = start_pair(fresh_postgres, tmp_path)
    try:
        dead = wait_for_any(workers, f"at {KILL_AT} by")
        name = dead.out.decode().split(" by ")[-1].split()[0]
        dead.kill()
        recover = Worker("recover", fresh_postgres, name, str(tmp_path), log=tmp_path / "r.log")
        assert recover.wait_for("recovered").strip().endswith(f"recovered {RUN_ID}")
        assert recover.finish() == 0
        outcome = finish(client, tmp_path)
    finally:
        for worker in [*workers, client]:
            worker.close()
    check_once(tmp_path, outcome)
    survivor = {"worker-a": "worker-b", "worker-b": "worker-a"}[name]
    assert outcome["worker"] == survivor


def test_dead_workers_run_goes_on_when_it_restarts(fresh_postgres: str, tmp_path: Path) -> None:
    workers, client = start_pair(fresh_postgres, tmp_path)
    try:
        dead = wait_for_any(workers, f"at {KILL_AT} by")
        name = dead.out.decode().split(" by ")[-1].split()[0]
        dead.kill()
        # Under the same executor id, its startup recovery puts the run back on the queue; the
        # restarted worker or the other one takes it.
        workers.append(
            Worker("serve", fresh_postgres, name, str(tmp_path), log=tmp_path / "restarted.log")
        )
        outcome = finish(client, tmp_path)
    finally:
        for worker in [*workers, client]:
            worker.close()
    check_once(tmp_path, outcome)
    assert outcome["worker"] in ("worker-a", "worker-b")


def test_a_worker_enqueues_a_run_and_takes_it(database: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    solo = Worker("enqueue", database, RUN_ID, str(tmp_path), log=log)
    solo.wait_for("launched")
    decider = Worker("decide", database, RUN_ID, str(tmp_path), log=log)
    try:
        outcome = finish(solo, tmp_path)
        assert decider.wait_for("decided")
    finally:
        decider.close()
        solo.close()
    assert outcome["worker"] == "solo"
    check_whole(tmp_path, outcome)
    assert outcome["runs"] == [RUN_ID]
    assert (tmp_path / "model").read_text().split() == ["0", "1", "4", "5"]
    assert len((tmp_path / "attempts").read_text().splitlines()) == 5
