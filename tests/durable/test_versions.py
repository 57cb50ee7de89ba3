"""Deployments: a worker of a new application version leaves the runs an older version started
alone; a worker still running the old version finishes them (docs/durable.md, "Versions")."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from toolwire.durable import RunClient, RunInfo

from .processes import Worker


async def _info(db: str, run_id: str) -> RunInfo:
    with RunClient(db) as runs:
        return await runs.info(run_id)


def test_a_new_version_leaves_an_old_run_to_a_worker_of_its_version(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    log = tmp_path / "worker.log"
    run_id = "order-run"
    first = Worker("run", db, run_id, str(tmp_path), "tool:a:during", log=log)
    first.wait_for("at tool:a:during")
    first.kill()

    # Same worker id, new version: launch() picks the runs to recover (by id AND version)
    # before the worker says it is ready, and finds none.
    upgraded = Worker(
        "serve",
        db,
        "local",
        str(tmp_path),
        log=log,
        env={"TOOLWIRE_TEST_APP_VERSION": "v2", "TOOLWIRE_TEST_DBOS_LOG_LEVEL": "INFO"},
    )
    upgraded.wait_for("ready")
    info = anyio.run(_info, db, run_id)
    upgraded.kill()
    assert info.status == "PENDING"
    assert info.app_version == "toolwire-1"
    assert "No workflows to recover from application version v2" in log.read_text()

    old = Worker("run", db, run_id, str(tmp_path), log=log)
    decider = None
    try:
        old.wait_for("launched")
        decider = Worker("decide", db, run_id, str(tmp_path), log=log)
        out = old.wait_for('"stop_reason"')
        assert old.finish() == 0, log.read_text()
        decider.wait_for("decided")
    finally:
        if decider is not None:
            decider.finish()
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["stop_reason"] == "completed"
    assert outcome["text"] == "all done"
    # Tool a ran under the first worker and again under the old version's worker (it was in
    # flight at the kill); the upgraded worker never touched the run.
    attempts = (tmp_path / "attempts").read_text().splitlines()
    assert [a.split()[:2] for a in attempts].count(["charge", "a"]) == 2
    effects = (tmp_path / "effects").read_text().splitlines()
    assert len(effects) == len(set(effects)) == 5
