"""Output budgets in a durable run (DBOS on SQLite, real worker processes): a run killed after a
cut result was checkpointed, and recovered by a new process, reads the whole result through the
handle in its history (the replayed step is cut again the same way and kept again) without
running the tool twice."""

from __future__ import annotations

import json
from pathlib import Path

from .processes import Worker

SCRIPT = Path(__file__).with_name("budget_worker.py")


def test_a_recovered_run_reads_the_cut_result_its_history_names(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    first = Worker(db, "budget-1", str(tmp_path), "model:2", log=log, script=SCRIPT)
    try:
        first.wait_for("at model:2")
    finally:
        first.kill()
    assert (tmp_path / "effects").read_text().split() == ["dump"]
    # A new process: its memory store starts empty, and the replayed `dump` step fills it.
    second = Worker(db, "budget-1", str(tmp_path), log=log, script=SCRIPT)
    out = second.wait_for('"stop_reason"')
    assert second.finish() == 0, log.read_text()
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["stop_reason"] == "completed"
    assert "order 3210: weight 22470 kg" in outcome["text"]
    assert "left out here" in outcome["cut"] and outcome["whole"]
    # The tool ran once: the recovered run took its checkpoint.
    assert (tmp_path / "effects").read_text().split() == ["dump"]
