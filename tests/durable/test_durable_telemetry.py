"""Tracing a durable run: the same span tree as a plain run, and after a crash, the recovering
worker's spans show only the steps it ran again (checkpointed ones return without running)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("traced_worker.py")
TIMEOUT = 90.0


def run_worker(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(WORKER), *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def wait_for_line(proc: subprocess.Popen[bytes], text: bytes) -> None:
    """Read the worker's stdout until `text` appears, at most TIMEOUT seconds."""
    assert proc.stdout is not None
    seen = b""
    deadline = time.monotonic() + TIMEOUT
    while text not in seen:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([proc.stdout], [], [], max(remaining, 0))
        if not ready:
            raise AssertionError(f"no {text!r} from the worker within {TIMEOUT}s")
        # The pipe itself, not the buffered file: bytes left in Python's buffer are invisible
        # to select() and would stall the wait until the deadline.
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise AssertionError(f"the worker exited before {text!r}")
        seen += chunk


def test_a_durable_run_has_the_span_tree_of_a_plain_run(tmp_path: Path) -> None:
    out = run_worker("compare", str(tmp_path / "runs.sqlite"))
    assert out["texts"] == ["Sunny.", "Sunny."]
    run = [
        "invoke_agent weather",
        [["chat weather-1", []], ["execute_tool lookup", []], ["chat weather-1", []]],
    ]
    assert out["plain"] == ["plain request", [run]]
    # The durable run's span is the caller's child, as a plain run's is.
    assert out["durable"] == ["durable request", [run]]


def test_a_recovered_run_shows_only_the_steps_run_again(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.sqlite")
    crashing = subprocess.Popen(
        [sys.executable, str(WORKER), "crash", db, "run-9"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        wait_for_line(crashing, b"at tool")  # the first model step is checkpointed by now
    finally:
        crashing.kill()
        crashing.wait()
        assert crashing.stdout is not None
        crashing.stdout.close()

    out = run_worker("recover", db, "run-9")
    assert out["texts"] == ["Sunny."]
    # The first model request returned its checkpoint: no span. The tool call that was running
    # at the crash ran again, and so did the model request after it.
    assert out["recovered"] == [
        "invoke_agent weather",
        [["execute_tool lookup", []], ["chat weather-1", []]],
    ]
