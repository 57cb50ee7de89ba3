"""Worker subprocesses (tests/durable/worker.py) that the tests read, wait on and kill.

Workers are forked by one fork server per test process (zygote.py), which has imported DBOS and
toolwire already: a worker starts in a tenth of the time a fresh interpreter takes, and is still a
process of its own that a test SIGKILLs.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

WORKER = Path(__file__).with_name("worker.py")
ZYGOTE = Path(__file__).with_name("zygote.py")
TIMEOUT = 90.0


class _ForkServer:
    """The client side of zygote.py: start children, learn their exit codes."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.server = subprocess.Popen(
            [sys.executable, str(ZYGOTE), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        theirs.close()
        self.sock = ours
        self.buffered = b""
        self.exits: dict[int, int] = {}

    def _receive(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message, or None when none came within `timeout`."""
        while b"\n" not in self.buffered:
            ready, _, _ = select.select([self.sock], [], [], timeout)
            if not ready:
                return None
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError(f"the fork server died ({self.server.wait()})")
            self.buffered += data
        line, _, self.buffered = self.buffered.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        if "exit" in message:
            self.exits[message["exit"]] = message["code"]
        return message

    def spawn(self, argv: list[str], env: dict[str, str], fds: list[int]) -> int:
        request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode() + b"\n"
        socket.send_fds(self.sock, [request], fds)
        while True:
            message = self._receive(TIMEOUT)
            if message is None:
                raise RuntimeError("the fork server did not answer")
            if "pid" in message:
                return int(message["pid"])

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code once it ended, waiting at most `timeout` (None: forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in self.exits:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0)
            if self._receive(remaining) is None:
                return None
        return self.exits[pid]


_SERVER: _ForkServer | None = None


def _fork_server() -> _ForkServer:
    global _SERVER
    if _SERVER is None or _SERVER.server.poll() is not None:
        _SERVER = _ForkServer()
    return _SERVER


class ForkedProcess:
    """`subprocess.Popen`'s interface for a child of the fork server."""

    def __init__(self, argv: list[str], env: dict[str, str], stderr: IO[bytes]) -> None:
        self.server = _fork_server()
        read, write = os.pipe()
        with open(os.devnull, "rb") as devnull:
            self.pid = self.server.spawn(argv, env, [devnull.fileno(), write, stderr.fileno()])
        os.close(write)
        # A pidfd names this very process: a signal never reaches a later process of the same pid.
        self.pidfd = os.pidfd_open(self.pid)
        self.stdout: IO[bytes] | None = open(read, "rb")  # noqa: SIM115 (closed by Worker.close)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._ended(self.server.exit_code(self.pid, 0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.server.exit_code(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            self._ended(code)
        assert self.returncode is not None
        return self.returncode

    def _ended(self, code: int | None) -> None:
        if code is not None:
            self.returncode = code
            os.close(self.pidfd)

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # ended, not yet reported
                signal.pidfd_send_signal(self.pidfd, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Worker:
    def __init__(
        self, *args: str, log: Path, env: dict[str, str] | None = None, script: Path = WORKER
    ) -> None:
        self.log = log
        self._log_file = log.open("ab")
        self.proc = ForkedProcess(
            [str(script), *args], {**os.environ, **(env or {})}, self._log_file
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
