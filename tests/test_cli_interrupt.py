"""Ctrl-C in `toolwire run`, sent as a real SIGINT to a real process (issue 29, item 3)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOOLS = '''
import time

import anyio
from toolwire import tool


@tool
def slow(expression: str) -> str:
    """Work a long time on an expression, in a thread (a plain def)."""
    print("tool started", flush=True)
    time.sleep(60)
    return "done"


@tool
async def stubborn(expression: str) -> str:
    """Work a long time and ignore the first cancellation."""
    print("tool started", flush=True)
    with anyio.CancelScope(shield=True):
        await anyio.sleep(60)
    return "done"
'''


class Running:
    """A `toolwire run` process whose merged output is read line by line, without blocking."""

    def __init__(self, tmp_path: Path, tool: str) -> None:
        (tmp_path / "slowtools.py").write_text(TOOLS)
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{tmp_path}"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolwire.cli",
                "run",
                "What is 2+3?",
                "--tools",
                f"slowtools:{tool}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=tmp_path,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")  # end of output

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            self.seen.append(line)
            if text in line:
                return
            assert line, f"ended before {text!r}: {''.join(self.seen)}"

    def rest(self) -> str:
        while (line := self.lines.get(timeout=10)) != "":
            self.seen.append(line)
        return "".join(self.seen)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for each in started:
        if each.proc.poll() is None:
            each.proc.kill()
        each.proc.wait(timeout=10)
        each.pump.join(timeout=10)  # it reads until the pipe closes, then the pipe is closed
        assert each.proc.stdout is not None
        each.proc.stdout.close()


def test_the_first_ctrl_c_ends_the_run_while_a_sync_tool_still_works(
    tmp_path: Path, running: list[Running]
) -> None:
    run = Running(tmp_path, "slow")
    running.append(run)
    run.wait_for("tool started")
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    # The tool sleeps for 60 s: returning well before means its thread was abandoned.
    assert run.proc.wait(timeout=15) == 130
    assert time.monotonic() - sent < 15
    output = run.rest()
    assert "stopped" in output
    assert 'cancelled slow({"expression": "2+3"}): its result is recorded as cancelled' in output
    assert "stop: cancelled" in output
    assert "Traceback" not in output and "Exception ignored" not in output


def test_a_second_ctrl_c_exits_at_once(tmp_path: Path, running: list[Running]) -> None:
    run = Running(tmp_path, "stubborn")
    running.append(run)
    run.wait_for("tool started")
    run.proc.send_signal(signal.SIGINT)
    # The tool shields itself from the first for 60 s: only the second can end the process soon.
    run.wait_for("stopping (Ctrl-C again to quit at once)")
    run.proc.send_signal(signal.SIGINT)
    assert run.proc.wait(timeout=15) == 130
    output = run.rest()
    assert "stopped" in output
    assert "Traceback" not in output and "Exception ignored" not in output
