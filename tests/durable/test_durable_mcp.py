"""An MCP tool call in a durable run is a checkpointed step like any other: once it finished,
a worker that recovers the run never calls the MCP server again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from toolwire import tool
from toolwire.cli import running_server

from .processes import TIMEOUT

pytestmark = pytest.mark.anyio

WORKER = Path(__file__).with_name("mcp_worker.py")


def _start(*args: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as errors:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            [sys.executable, str(WORKER), *args],
            stdout=subprocess.PIPE,
            stderr=errors,
            stdin=subprocess.DEVNULL,
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def _read_until(proc: subprocess.Popen[bytes], text: str, log: Path) -> str:
    """Lines of `proc` until one holds `text` (bounded by the worker timeout)."""
    assert proc.stdout is not None
    seen = ""
    while text not in seen:
        line = proc.stdout.readline().decode()
        if not line:
            raise AssertionError(f"worker exited before {text!r}; log:\n{log.read_text()}")
        seen += line
    return seen


async def test_a_finished_mcp_call_is_not_repeated_after_a_crash(tmp_path: Path) -> None:
    calls: list[str] = []

    @tool
    def record(note: str) -> str:
        """Record a note (a side effect the test counts)."""
        calls.append(note)
        return f"recorded {note}"

    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    log = tmp_path / "worker.log"
    async with running_server([record]) as url:
        first = _start(db, "pay-1", url, "mcp:after", log=log)
        try:
            with anyio.fail_after(TIMEOUT):
                await anyio.to_thread.run_sync(
                    _read_until, first, "at mcp:after", log, abandon_on_cancel=True
                )
        finally:
            _stop(first)
        assert calls == ["paid"]

        second = _start(db, "pay-1", url, log=log)
        try:
            with anyio.fail_after(TIMEOUT):
                out = await anyio.to_thread.run_sync(
                    _read_until, second, "}", log, abandon_on_cancel=True
                )
        finally:
            _stop(second)
    result = json.loads(out.splitlines()[-1])
    assert result["text"] == "done: recorded paid"
    assert result["history"] == ["user", "assistant", "tool_result", "assistant"]
    # The recovered run took the MCP call's result from its checkpoint.
    assert calls == ["paid"]
