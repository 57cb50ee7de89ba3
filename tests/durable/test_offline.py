"""Durable runs of typed output and of offline models, in real worker processes.

A typed run returns its typed value in the worker and in a second process joining the finished
run; a `ScriptedModel` run killed mid-way and recovered by a new process goes on from where its
history stands (no reply given twice, no side effect run twice); DBOS stays quiet unless asked.
"""

from __future__ import annotations

import json
from pathlib import Path

from .processes import Worker

SCRIPT = Path(__file__).with_name("offline_worker.py")


def _outcome(worker: Worker, log: Path) -> dict[str, object]:
    out = worker.wait_for('"output"')
    assert worker.finish() == 0, log.read_text()
    return json.loads(out.strip().splitlines()[-1])


def test_a_typed_run_returns_its_type_in_the_worker_and_in_a_joining_process(
    database: str, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    city = {"type": "City", "value": {"name": "Oslo", "population": 709000}}
    first = _outcome(
        Worker("typed", database, "city-1", str(tmp_path), log=log, script=SCRIPT), log
    )
    assert first["stop_reason"] == "completed"
    assert first["output"] == city
    assert first["client"] == city
    # A client told no type reads the JSON back as it is.
    assert first["untyped"] == {"type": "dict", "value": city["value"]}
    # A second process joins the finished run: the stored result, typed again.
    joined = _outcome(
        Worker("join", database, "city-1", str(tmp_path), log=log, script=SCRIPT), log
    )
    assert joined["output"] == city and joined["client"] == city
    # DBOS said nothing on either launch (its log is opt-in: launch(log_level=...)).
    assert "dbos" not in log.read_text()


def test_dbos_logs_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    _outcome(Worker("typed", db, "city-2", str(tmp_path), "INFO", log=log, script=SCRIPT), log)
    assert "Initializing DBOS" in log.read_text()


def test_a_scripted_run_recovered_after_a_kill_goes_on_from_its_history(
    database: str, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    first = Worker(
        "scripted", database, "script-1", str(tmp_path), "tool:b:before", log=log, script=SCRIPT
    )
    try:
        first.wait_for("at tool:b:before")
    finally:
        first.kill()
    # Killed in the second call: the first call's result and both model answers are checkpoints.
    assert (tmp_path / "effects").read_text().split()[0::2] == ["a"]
    second = Worker("scripted", database, "script-1", str(tmp_path), log=log, script=SCRIPT)
    outcome = _outcome(second, log)
    # A script started over would charge `a` again and answer with its first reply.
    assert outcome["output"] == {"type": "Town", "value": {"name": "done"}}
    effects = (tmp_path / "effects").read_text().split()
    assert effects[0::2] == ["a", "b"]
    assert effects[1].startswith("script-1:1:") and effects[3].startswith("script-1:2:")
    # The recovery went by without a word from DBOS (it warns by default).
    assert "dbos" not in log.read_text() and "WARNING" not in log.read_text()


def test_tools_found_by_search_stay_found_after_a_kill(database: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    args = ("searched", database, "search-1", str(tmp_path))
    first = Worker(*args, "tool:b:before", log=log, script=SCRIPT)
    try:
        first.wait_for("at tool:b:before")
    finally:
        first.kill()
    second = Worker(*args, log=log, script=SCRIPT)
    outcome = _outcome(second, log)
    assert outcome["output"] == {"type": "Town", "value": {"name": "done"}}
    # The recovered run knows `charge` was found (from its replayed history): the call after
    # the kill runs instead of being told to search first.
    assert (tmp_path / "effects").read_text().split()[0::2] == ["a", "b"]
