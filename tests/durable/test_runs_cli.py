"""`toolwire runs` against real processes: a worker runs durable runs on a SQLite file, and the
command, in its own processes, lists, shows, decides, cancels and resumes them."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from _ports import free_port
from toolwire import RunResult
from toolwire.cli import main
from toolwire.durable import RunClient
from toolwire.messages import ToolResultMessage

WORKER = Path(__file__).with_name("runs_worker.py")
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90.0


class Worker:
    """`runs_worker.py` in a subprocess, driven through its stdin and stdout."""

    def __init__(self, db: str, log: Path, *executor_id: str) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), db, *executor_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
        )
        self.out = b""
        self.seen = 0
        self.wait_for("ready")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def wait_for(self, text: str) -> None:
        """Wait for the next `text` on stdout after the last one waited for (bounded)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + TIMEOUT
        while (at := self.out.find(text.encode(), self.seen)) < 0:
            ready, _, _ = select.select([self.proc.stdout], [], [], deadline - time.monotonic())
            chunk = os.read(self.proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"no {text!r} from the worker; log:\n{self.log.read_text()}")
            self.out += chunk
        self.seen = at + len(text)

    def start(self, run_id: str, *turns: str) -> str:
        self.send(f"start {run_id} {' '.join(turns)}")
        self.wait_for(f"started {run_id}")
        return run_id

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()  # the worker's signal to shut down
        try:
            self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self._log_file.close()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('runs') / 'runs.sqlite'}"


@pytest.fixture(scope="module")
def worker(db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    started = Worker(db, tmp_path_factory.mktemp("log") / "worker.log")
    try:
        yield started
    finally:
        started.close()


@dataclasses.dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def runs(*args: str) -> Done:
    """`toolwire runs ARGS` in this process (most checks: a process each would take seconds)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["runs", *args])
    return Done(code, out.getvalue(), err.getvalue())


def runs_in_a_process(*args: str, env: dict[str, str] | None = None) -> Done:
    """`toolwire runs ARGS` as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "runs", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    return Done(done.returncode, done.stdout, done.stderr)


def ok(*args: str) -> str:
    done = runs(*args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def fails(*args: str) -> str:
    done = runs(*args)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ")
    return done.stderr


def paused(db: str, run_id: str) -> list[str]:
    """Wait until the run waits for a decision; its pending call ids."""

    async def main() -> list[str]:
        with RunClient(db) as client:
            state = await client.pending(run_id, wait=TIMEOUT)
        assert state is not None, f"{run_id} did not pause"
        return [p.call.id for p in state.pending]

    return anyio.run(main)


def finished(db: str, run_id: str) -> Any:
    """Wait (bounded) for the run's result."""

    async def main() -> Any:
        with RunClient(db) as client, anyio.fail_after(TIMEOUT):
            return await client.result(run_id)

    return anyio.run(main)


def shown(db: str, run_id: str) -> dict[str, Any]:
    return json.loads(ok("show", run_id, "--db", db, "--json"))


# --- seeing runs ---------------------------------------------------------------------------------


def test_list_and_show_a_finished_run_and_one_waiting_for_approval(db: str, worker: Worker) -> None:
    worker.start("seen-done", "charge:a")
    worker.start("seen-wait", "charge:b", "refund:c")
    assert finished(db, "seen-done").text == "done: 1 call(s), last: charged a"
    (call_id,) = paused(db, "seen-wait")

    done = runs_in_a_process("list", "--db", db)
    assert done.returncode == 0, done.stderr
    table = done.stdout
    rows = {line.split()[1]: line for line in table.splitlines() if "seen-" in line}
    assert "succeeded" in rows["seen-done"] and "shop" in rows["seen-done"]
    assert "waiting (1 call)" in rows["seen-wait"]

    # At 80 columns the dates stay whole, each on one line (issue 29, item 9).
    narrow = runs_in_a_process("list", "--db", db, env={"COLUMNS": "80"})
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    dates = re.findall(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", narrow.stdout)
    assert len(dates) >= 4, narrow.stdout

    listed = json.loads(ok("list", "--db", db, "--json"))
    mine = {r["run_id"]: r for r in listed if r["run_id"].startswith("seen-")}
    assert mine["seen-done"]["status"] == "SUCCESS" and not mine["seen-done"]["waiting"]
    assert mine["seen-wait"]["status"] == "PENDING" and mine["seen-wait"]["waiting"]
    assert mine["seen-wait"]["pending"] == [
        {"call_id": call_id, "name": "refund", "arguments": {"order": "c"}, "needs": "approval"}
    ]
    assert mine["seen-wait"]["app_version"] == "toolwire-1"
    assert mine["seen-wait"]["created_at"] <= mine["seen-wait"]["updated_at"]

    waiting_only = json.loads(ok("list", "--db", db, "--json", "--status", "waiting"))
    assert "seen-wait" in [r["run_id"] for r in waiting_only]
    assert all(r["waiting"] for r in waiting_only)
    done_only = json.loads(ok("list", "--db", db, "--json", "--status", "SUCCEEDED"))
    assert "seen-done" in [r["run_id"] for r in done_only]
    assert {r["status"] for r in done_only} == {"SUCCESS"}
    assert len(json.loads(ok("list", "--db", db, "--json", "--limit", "1"))) == 1
    assert json.loads(ok("list", "--db", db, "--json", "--agent", "nobody")) == []

    done = runs_in_a_process("show", "seen-wait", "--db", db)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "waiting (1 call)" in text
    assert f'[{call_id}] refund({{"order": "c"}})  needs approval' in text
    assert "toolwire runs approve seen-wait" in text
    conversation = text.split("conversation (4 messages):")[1].splitlines()[1:]
    assert [line.split()[0] for line in conversation] == ["user", "assistant", "tool", "assistant"]
    assert "charge:b refund:c" in conversation[0]
    assert "charged b" in conversation[2]
    assert f'-> refund({{"order": "c"}}) [{call_id}]' in conversation[3]

    done = shown(db, "seen-done")
    assert done["state"] == "succeeded"
    assert done["result"]["text"] == "done: 1 call(s), last: charged a"
    assert done["result"]["stop_reason"] == "completed"
    # The whole result, in the run codec's form: it reads back as a RunResult.
    assert RunResult.from_json(done["result"]).text == done["result"]["text"]
    assert [m["kind"] for m in done["messages"]] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert "stopped  completed" in ok("show", "seen-done", "--db", db)


# --- deciding --------------------------------------------------------------------------------------


def test_approve_lets_the_waiting_run_finish(db: str, worker: Worker) -> None:
    worker.start("approved", "refund:a")
    (call_id,) = paused(db, "approved")
    said = ok("approve", "approved", "--db", db)
    assert f'approved [{call_id}] refund({{"order": "a"}})' in said
    result = finished(db, "approved")
    assert result.text == "done: 1 call(s), last: refunded a"
    assert shown(db, "approved")["state"] == "succeeded"


def test_deny_tells_the_model_why_and_the_run_finishes(db: str, worker: Worker) -> None:
    worker.start("denied", "refund:a+refund:b")
    assert len(paused(db, "denied")) == 2
    said = ok("deny", "denied", "--db", db, "--reason", "not today")
    assert said.count("refused [") == 2
    result = finished(db, "denied")
    assert result.text == "done: 2 call(s), last: Error: not approved: not today"
    refusals = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert [(m.is_error, m.text) for m in refusals] == [
        (True, "Error: not approved: not today")
    ] * 2


def test_a_mixed_decision_approves_some_calls_and_refuses_others(db: str, worker: Worker) -> None:
    worker.start("mixed", "refund:a+refund:b")
    first, second = paused(db, "mixed")
    said = ok("approve", "mixed", first, "--deny", second, "--db", db)
    assert f"approved [{first}]" in said and f"refused [{second}]" in said
    result = finished(db, "mixed")
    texts = [m.text for m in result.messages if isinstance(m, ToolResultMessage)]
    assert texts == ["refunded a", "Error: not approved: the user refused this call"]


def test_a_decision_that_does_not_fit_is_refused_and_the_run_keeps_waiting(
    db: str, worker: Worker
) -> None:
    worker.start("picky", "refund:a+refund:b")
    first, second = paused(db, "picky")
    assert "no call with id 'call_nope'" in fails("approve", "picky", "call_nope", "--db", db)
    # Refusing one call leaves the other undecided: the run would fail on it, so it is not sent.
    undecided = fails("deny", "picky", first, "--db", db)
    assert f"undecided calls: {second} (refund: needs approval or a refusal)" in undecided
    assert "--result takes CALL_ID=TEXT" in fails("approve", "picky", "--result", "x", "--db", db)
    assert shown(db, "picky")["waiting"]
    ok("approve", "picky", "--db", db)
    assert finished(db, "picky").text.startswith("done: 2 call(s)")
    assert "is not waiting for a decision (it has succeeded)" in fails(
        "approve", "picky", "--db", db
    )


def test_a_result_answers_a_call_without_running_it(db: str, worker: Worker) -> None:
    worker.start("answered", "refund:a")
    (call_id,) = paused(db, "answered")
    said = ok("approve", "answered", "--result", f"{call_id}=refunded by hand", "--db", db)
    assert f"answered [{call_id}]" in said
    assert finished(db, "answered").text == "done: 1 call(s), last: refunded by hand"


# --- steering --------------------------------------------------------------------------------------


def test_cancel_and_resume_a_run_waiting_for_approval(db: str, worker: Worker) -> None:
    worker.start("paused-cancel", "charge:a", "refund:b")
    paused(db, "paused-cancel")
    assert "cancelled run paused-cancel" in ok("cancel", "paused-cancel", "--db", db)
    cancelled = shown(db, "paused-cancel")
    assert cancelled["status"] == "CANCELLED" and cancelled["state"] == "cancelled"
    assert not cancelled["waiting"]
    # Rebuilt from its checkpoints: the prompt, the model's turns and the charge's result.
    assert [m["kind"] for m in cancelled["messages"]] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert "already cancelled" in ok("cancel", "paused-cancel", "--db", db)
    assert "is not waiting for a decision (it is cancelled)" in fails(
        "approve", "paused-cancel", "--db", db
    )

    assert "resumed run paused-cancel" in ok("resume", "paused-cancel", "--db", db)
    paused(db, "paused-cancel")
    ok("approve", "paused-cancel", "--db", db)
    result = finished(db, "paused-cancel")
    assert result.text == "done: 2 call(s), last: refunded b"
    assert [m.kind for m in result.messages].count("assistant") == 3
    assert "has succeeded: a finished run is not resumed" in fails(
        "resume", "paused-cancel", "--db", db
    )
    assert "has already succeeded: nothing to cancel" in fails(
        "cancel", "paused-cancel", "--db", db
    )


def test_cancel_a_run_inside_a_tool_and_resume_it(db: str, worker: Worker) -> None:
    worker.start("held", "hold:h", "charge:c")
    worker.wait_for("holding h")
    assert "is running" in fails("resume", "held", "--db", db)
    assert "toolwire runs recover local" in fails("resume", "held", "--db", db)
    ok("cancel", "held", "--db", db)
    worker.send("release")  # the call in flight ends; the cancelled run takes no further step
    assert shown(db, "held")["status"] == "CANCELLED"
    ok("resume", "held", "--db", db)
    # The call that was in flight when the run was cancelled has no checkpoint: it runs again.
    worker.wait_for("holding h")
    worker.send("release")
    result = finished(db, "held")
    assert result.text == "done: 2 call(s), last: charged c"
    assert [t.name for t in result.trace] == ["hold", "charge"]


def test_start_queues_a_run_and_recover_hands_a_dead_workers_runs_over(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'fleet.sqlite'}"
    first = Worker(db, tmp_path / "a.log", "worker-a")
    second: Worker | None = None
    try:
        said = ok("start", "shop", "hold:h charge:c", "--run-id", "fleet", "--db", db)
        assert "queued run fleet of shop" in said
        first.wait_for("holding h")
        assert shown(db, "fleet")["worker"] == "worker-a"
        first.kill()
        second = Worker(db, tmp_path / "b.log", "worker-b")
        # A dead worker's runs stay with it until someone says it is gone.
        assert shown(db, "fleet")["status"] == "PENDING"
        assert "queued run fleet (was in worker worker-a)" in ok("recover", "worker-a", "--db", db)
        second.wait_for("holding h")
        second.send("release")
        result = finished(db, "fleet")
        assert result.text == "done: 2 call(s), last: charged c"
        assert shown(db, "fleet")["worker"] == "worker-b"
        assert "worker worker-a has no unfinished runs" in ok("recover", "worker-a", "--db", db)

        waited = ok("start", "shop", "charge:z", "--run-id", "fleet-2", "--wait", "--db", db)
        assert waited == "done: 1 call(s), last: charged z\n"
        # The same id again is the same run: nothing runs twice.
        assert ok("start", "shop", "charge:y", "--run-id", "fleet-2", "--wait", "--db", db) == (
            waited
        )
        paused_run = fails("start", "shop", "refund:r", "--run-id", "fleet-3", "--wait", "--db", db)
        assert "run fleet-3 waits for a decision" in paused_run
        assert "is a run of 'shop', not of 'other'" in fails(
            "start", "other", "charge:a", "--run-id", "fleet-3", "--db", db
        )
    finally:
        first.close()
        if second is not None:
            second.close()


# --- errors ------------------------------------------------------------------------------------------


def test_errors_say_what_is_wrong_in_one_line(db: str, worker: Worker, tmp_path: Path) -> None:
    assert "no run 'nope' in sqlite:///" in fails("show", "nope", "--db", db)
    assert "no run 'nope'" in fails("cancel", "nope", "--db", db)
    assert "no run 'nope'" in fails("approve", "nope", "--db", db)

    missing = tmp_path / "missing.sqlite"
    assert f"no runs database at {missing}" in fails("list", "--db", str(missing))
    assert not missing.exists()  # looking did not create it

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).close()
    assert "is not a runs database yet (no worker has launched on it)" in fails(
        "list", "--db", f"sqlite:///{other}"
    )

    port = free_port()  # nothing listens there
    unreachable = fails("list", "--db", f"postgresql://me:s3cret@127.0.0.1:{port}/runs")
    assert f"cannot reach the runs database postgresql://me:***@127.0.0.1:{port}/runs" in (
        unreachable
    )
    assert "s3cret" not in unreachable
    assert "a runs database is sqlite:///<path> or postgresql://..., not mysql:" in fails(
        "list", "--db", "mysql://h/db"
    )
    assert "--status 'lost'" in fails("list", "--db", db, "--status", "lost")


def test_the_database_comes_from_the_environment(
    db: str, worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    worker.start("from-env", "charge:e")
    finished(db, "from-env")
    monkeypatch.setenv("TOOLWIRE_RUNS_DB", db)
    done = runs("show", "from-env")
    assert done.returncode == 0, done.stderr
    assert "succeeded" in done.stdout


def test_without_the_durable_extra_the_command_names_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['dbos'] = None\n"  # as if dbos were not installed
        "from toolwire.cli import main\n"
        f"sys.exit(main(['runs', 'list', '--db', {str(tmp_path / 'runs.sqlite')!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 1
    assert done.stderr == (
        "error: the 'dbos' package, needed by durable runs, is not installed: "
        "pip install 'toolwire[durable]'\n"
    )


@pytest.mark.parametrize(
    "command", ["list", "show", "approve", "deny", "cancel", "resume", "recover", "start"]
)
def test_every_runs_command_has_help_with_an_example(command: str) -> None:
    done = runs(command, "--help")
    assert done.returncode == 0
    assert f"Example: toolwire runs {command}" in " ".join(done.stdout.split())
