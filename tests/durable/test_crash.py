"""A worker process SIGKILLed at many points of a durable run; a new worker finishes the run.

Each test starts a worker that pauses at one named point and says so on stdout; the test waits for
that line (bounded), kills the worker, starts a fresh one on the same database and checks that
the run completed with its conversation whole and every side effect done once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .processes import Worker

KILL_POINTS = [
    *(f"model:{n}:{when}" for n in range(1, 5) for when in ("before", "after")),
    *(f"tool:{order}:{when}" for order in "abcdr" for when in ("before", "during", "after")),
    "approval:wait",
]


def run_with_crash(db: str, folder: Path, point: str | None) -> dict[str, object]:
    run_id = "order-run"
    log = folder / "worker.log"
    # The decider is a RunClient, which needs the tables a worker creates at launch: it starts
    # once a worker says it launched. Killed while it waits for approval, the run must not be
    # decided before the kill (a decision then races the worker's own watcher and lets the run
    # end first), so the decider waits for the second worker there; for the other points it
    # starts with the first (points after the approval need the decision to get there).
    late = point == "approval:wait"
    decider = None
    try:
        if point is not None:
            first = Worker("run", db, run_id, str(folder), point, log=log)
            first.wait_for("launched")
            if not late:
                decider = Worker("decide", db, run_id, str(folder), log=log)
            first.wait_for(f"at {point}")
            first.kill()
        second = Worker("run", db, run_id, str(folder), log=log)
        if decider is None:
            second.wait_for("launched")
            decider = Worker("decide", db, run_id, str(folder), log=log)
        out = second.wait_for('"stop_reason"')
        assert second.finish() == 0, log.read_text()
        assert decider.wait_for("decided")
    finally:
        if decider is not None:
            decider.finish()
    return json.loads(out.strip().splitlines()[-1])


def check_whole(folder: Path, outcome: dict[str, object]) -> None:
    assert outcome["stop_reason"] == "completed"
    assert outcome["text"] == "all done"
    assert outcome["history"] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "tool_result",
        "tool_result",
        "tool_result",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert outcome["results"] == [
        "charge a: ok",
        "charge b: ok",
        "charge c: ok",
        "charge d: ok",
        "refund r: ok",
    ]
    effects = (folder / "effects").read_text().splitlines()
    assert len(effects) == 5
    assert len(set(effects)) == 5
    assert all(key.startswith("order-run:") for key in effects)


def test_run_without_crash(database: str, tmp_path: Path) -> None:
    outcome = run_with_crash(database, tmp_path, None)
    check_whole(tmp_path, outcome)
    # No crash: every tool ran once, the model was asked once per turn.
    assert len((tmp_path / "attempts").read_text().splitlines()) == 5
    assert (tmp_path / "model").read_text().split() == ["0", "1", "4", "5"]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_killed_worker_resumes(database: str, tmp_path: Path, point: str) -> None:
    outcome = run_with_crash(database, tmp_path, point)
    check_whole(tmp_path, outcome)
    asked = (tmp_path / "model").read_text().split()
    attempts = (tmp_path / "attempts").read_text().splitlines()
    if point.startswith("model:") and point.endswith(":before"):
        # The request in flight is asked again; every finished one is not.
        again = {"1": "0", "2": "1", "3": "4", "4": "5"}[point.split(":")[1]]
        assert sorted(asked) == sorted(["0", "1", "4", "5", again])
        assert len(attempts) == 5
    elif point.startswith("tool:") and (
        point.endswith((":before", ":during")) or point[5] in "bcd"
    ):
        assert asked == ["0", "1", "4", "5"]
        # Only calls in flight run again: the one killed in, or, in the parallel turn, any of
        # the three that had not finished.
        assert 5 <= len(attempts) <= 8
    else:
        # Killed between steps: nothing runs twice.
        assert asked == ["0", "1", "4", "5"]
        assert len(attempts) == 5
