"""Worker subprocesses (tests/durable/worker.py) that the tests read, wait on and kill."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")
TIMEOUT = 90.0


class Worker:
    def __init__(
        self, *args: str, log: Path, env: dict[str, str] | None = None, script: Path = WORKER
    ) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env} if env else None,
        )
        self.out = b""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._log_file.close()

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> str:
        """Read stdout until `text` appears (the worker's own signal), at most `timeout`."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while text.encode() not in self.out:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(remaining, 0))
            if not ready:
                self.close()
                raise AssertionError(f"no {text!r} within {timeout}s; log:\n{self.log.read_text()}")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                code = self.proc.wait()
                self.close()
                raise AssertionError(
                    f"worker exited ({code}) before {text!r}; log:\n{self.log.read_text()}"
                )
            self.out += chunk
        return self.out.decode()

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.close()

    def finish(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self.close()


def wait_for_any(workers: list[Worker], text: str, timeout: float = TIMEOUT) -> Worker:
    """The first of `workers` to print `text`, waiting at most `timeout` in all."""
    deadline = time.monotonic() + timeout
    while True:
        for worker in workers:
            if text.encode() in worker.out:
                return worker
        remaining = deadline - time.monotonic()
        pipes = {w.proc.stdout: w for w in workers if w.proc.stdout is not None}
        ready, _, _ = select.select(list(pipes), [], [], max(remaining, 0))
        if not ready:
            logs = "\n".join(w.log.read_text() for w in workers)
            raise AssertionError(f"no worker printed {text!r} within {timeout}s; logs:\n{logs}")
        for pipe in ready:
            worker = pipes[pipe]
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                raise AssertionError(
                    f"worker exited ({worker.proc.wait()}) before {text!r}; "
                    f"log:\n{worker.log.read_text()}"
                )
            worker.out += chunk
