"""`toolwire serve --stateless --workers N`: one listening port served by N worker processes.

The supervisor (the `toolwire serve` process) opens the listening socket, then starts N fresh
Python processes that inherit it and each run uvicorn on it; the kernel hands each incoming
connection to one of them. Why this shape rather than another:

- One inherited socket, not SO_REUSEPORT sockets: the accept queue is shared, so connections
  still waiting when a worker dies are taken by the others instead of being reset; port 0 works
  (the port is chosen once); and it behaves alike on Linux and macOS, whose SO_REUSEPORT does
  not spread connections.
- Fresh interpreters, not forks of the supervisor: forking a process that runs an event loop or
  threads is unsafe, and a fresh worker loads the tools itself, as a single server would.
- This small supervisor, not uvicorn's `workers=`: that one wants the app as an import string, so
  the tools, token and options would travel through the environment, and its workers outlive a
  supervisor killed with SIGKILL. Here each worker holds one end of a socket pair whose other end
  only the supervisor has: the plan (token included) arrives on it, never in argv or the
  environment, and when the supervisor dies, however it dies, the worker reads EOF and stops.

Workers run in their own session, so a terminal's Ctrl-C reaches the supervisor alone, which stops
them all with SIGTERM (graceful: requests in flight finish), then SIGKILL past `STOP_TIMEOUT`. A
worker that dies is reported and replaced; one that cannot start stops the whole server with its
error, and so do deaths more frequent than `max(5, N)` a minute.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import typing
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, field
from typing import Any

import anyio
import anyio.abc

from ._cli_common import CliError
from ._cli_tools import load_tools, prebuilt_tools
from ._record import record
from ._serve_app import app_options, uvicorn_server
from .errors import ToolwireError

__all__ = ["STARTUP_TIMEOUT", "STOP_TIMEOUT", "WorkerPlan", "supervise", "worker_main"]

STARTUP_TIMEOUT = 120.0
"""Seconds a worker may take to load its tools and accept connections."""

STOP_TIMEOUT = 10.0
"""Seconds workers get to stop gracefully (uvicorn's own shutdown takes 5 at most) before SIGKILL."""

_DEATH_WINDOW = 60.0
_MAX_MESSAGE = 64 * 1024
# `-c` rather than `-m`: the module is then imported once, under its own name.
_ENTRY = "from toolwire._serve_workers import worker_main; worker_main()"


@record(slots=False)
class WorkerPlan:
    """What each worker serves: the tool specs as given to `serve`, and `create_app`'s options.

    Attributes:
        tools: `--tools` specs (`module:attribute`, `file.py:attribute`).
        prebuilt: Serve the prebuilt tools too.
        app_options: Keyword arguments for `create_app` (JSON values only).
        debug: Print a worker's traceback when it cannot start.
    """

    tools: list[str]
    prebuilt: bool
    app_options: dict[str, Any] = field(default_factory=dict[str, Any])
    debug: bool = False


class _StartFailed(Exception):
    pass


class _Supervisor:
    def __init__(
        self, listener: socket.socket, plan: WorkerPlan, count: int, report: Callable[[str], None]
    ) -> None:
        self.listener = listener
        self.plan = json.dumps(asdict(plan)).encode() + b"\n"
        self.count = count
        self.report = report
        self.processes: dict[int, anyio.abc.Process] = {}
        self.controls: dict[int, socket.socket] = {}
        self.ready: list[int] = []
        self.tool_count = 0
        self.failure: str | None = None
        self.all_ready = anyio.Event()  # also set when the server stops before that
        self.done = anyio.Event()  # a stop was asked for, or the server failed
        self.slots_left = count
        self.slots_done = anyio.Event()
        self.deaths: deque[float] = deque()

    def stop(self, failure: str | None = None) -> None:
        if not self.done.is_set():
            self.failure = failure
        self.done.set()
        self.all_ready.set()

    def signal_all(self, signum: signal.Signals) -> None:
        for process in list(self.processes.values()):
            if process.returncode is None:
                # One that exited between the check and the signal is reaped by its slot.
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signum)

    async def slot(self) -> None:
        try:
            await self._keep_one_running()
        finally:
            self.slots_left -= 1
            if not self.slots_left:
                self.slots_done.set()

    async def _keep_one_running(self) -> None:
        replacing: int | None = None
        while not self.done.is_set():
            try:
                process = await self._launch()
            except _StartFailed as exc:
                if self.done.is_set():
                    return
                if not self.all_ready.is_set():
                    self.stop(str(exc))  # the first start: the plan itself is wrong
                    return
                if self._too_many_deaths():
                    self.stop(f"workers keep failing; the last one: {exc}")
                    return
                self.report(f"a new worker could not start ({exc}); trying again")
                continue
            if replacing is not None:
                self.report(f"worker {process.pid} started in place of worker {replacing}")
            code = await process.wait()
            del self.processes[process.pid]
            self.controls.pop(process.pid).close()
            if self.done.is_set():
                return
            self.report(f"worker {process.pid} {_ended(code)}; starting another")
            if self._too_many_deaths():
                self.stop(f"workers keep dying (more than {self._budget()} in a minute)")
                return
            replacing = process.pid

    def _budget(self) -> int:
        return max(5, self.count)

    def _too_many_deaths(self) -> bool:
        now = time.monotonic()
        self.deaths.append(now)
        while self.deaths and self.deaths[0] < now - _DEATH_WINDOW:
            self.deaths.popleft()
        return len(self.deaths) > self._budget()

    async def _launch(self) -> anyio.abc.Process:
        """A worker that accepts connections, or `_StartFailed` saying why there is none."""
        ours, theirs = socket.socketpair()
        try:
            process = await anyio.open_process(
                [sys.executable, "-c", _ENTRY, str(self.listener.fileno()), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=None,
                stderr=None,
                pass_fds=(self.listener.fileno(), theirs.fileno()),
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # from now on only the worker holds that end
        self.processes[process.pid] = process
        failure: str | None = None
        try:
            if self.done.is_set():  # stopped while it started: signal_all may have missed it
                process.terminate()
            ours.sendall(self.plan)
            answer: dict[str, Any] | None = None
            with anyio.move_on_after(STARTUP_TIMEOUT) as waited:
                answer = await _read_message(ours)
            if waited.cancelled_caught:
                failure = f"a worker did not start within {STARTUP_TIMEOUT:g} s"
            elif answer is None:
                failure = f"a worker {_ended(await process.wait())} before it was ready"
            elif "error" in answer:
                failure = str(answer["error"])
            else:
                self.tool_count = int(answer.get("ready", 0))
                self.ready.append(process.pid)
                if len(self.ready) == self.count:
                    self.all_ready.set()
                # Kept open for the worker's life: its closing tells the worker to stop.
                self.controls[process.pid] = ours
                return process
        except OSError as exc:
            failure = f"a worker could not be given its plan: {exc}"
        finally:
            if failure is not None:
                ours.close()
                with anyio.CancelScope(shield=True):
                    if process.returncode is None:
                        process.kill()
                    await process.wait()
                    self.processes.pop(process.pid, None)
        raise _StartFailed(failure)


async def _read_message(control: socket.socket) -> dict[str, Any] | None:
    """One JSON line from the other end, or `None` when it closes first."""
    control.setblocking(False)
    data = b""
    while not data.endswith(b"\n"):
        await anyio.wait_readable(control)
        try:
            chunk = control.recv(_MAX_MESSAGE)
        except BlockingIOError:
            continue
        except OSError:
            return None
        if not chunk or len(data) > _MAX_MESSAGE:
            return None
        data += chunk
    try:
        message: Any = json.loads(data)
    except ValueError:
        return {"error": "a worker answered with something other than JSON"}
    return typing.cast(dict[str, Any], message) if isinstance(message, dict) else None


def _ended(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


async def supervise(
    listener: socket.socket,
    url: str,
    plan: WorkerPlan,
    count: int,
    *,
    announce: Callable[[str], None],
    report: Callable[[str], None],
) -> None:
    """Serve `listener` from `count` worker processes until SIGINT or SIGTERM.

    `announce` gets the URL once every worker accepts connections; `report` gets what happens to
    workers.

    Raises:
        CliError: a worker could not start (its own error), or workers kept dying.
    """
    supervisor = _Supervisor(listener, plan, count, report)
    try:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as group:

                async def on_signals() -> None:
                    async for _ in signals:
                        if supervisor.done.is_set():  # a second Ctrl-C: no more waiting
                            supervisor.signal_all(signal.SIGKILL)
                        supervisor.stop()

                group.start_soon(on_signals)
                for _ in range(count):
                    group.start_soon(supervisor.slot)
                await supervisor.all_ready.wait()
                if not supervisor.done.is_set():
                    pids = ", ".join(map(str, supervisor.ready))
                    announce(url)
                    report(
                        f"serving {supervisor.tool_count} tools at {url} with {count} workers "
                        f"(pids {pids}; Ctrl-C stops)"
                    )
                await supervisor.done.wait()
                supervisor.signal_all(signal.SIGTERM)
                with anyio.move_on_after(STOP_TIMEOUT) as graceful:
                    await supervisor.slots_done.wait()
                if graceful.cancelled_caught:
                    report(f"workers still running after {STOP_TIMEOUT:g} s: killing them")
                    supervisor.signal_all(signal.SIGKILL)
                    await supervisor.slots_done.wait()
                group.cancel_scope.cancel()
    finally:
        # Whatever ended the supervisor, no worker outlives it (they would also see the socket
        # pair close, but not before the kernel has reaped this process).
        with anyio.CancelScope(shield=True):
            supervisor.signal_all(signal.SIGKILL)
            for process in list(supervisor.processes.values()):
                await process.wait()
            for control in supervisor.controls.values():
                control.close()
    if supervisor.failure is not None:
        raise CliError(supervisor.failure)


# --- in the worker --------------------------------------------------------------------------------


def worker_main() -> None:
    """A worker's entry point: `python -c ... LISTEN_FD CONTROL_FD`, started by `supervise`."""
    listen_fd, control_fd = int(sys.argv[1]), int(sys.argv[2])
    control = socket.socket(fileno=control_fd)
    plan = _receive_plan(control)
    if plan is None:
        sys.exit(1)  # the supervisor is already gone
    try:
        app, tool_count = _build(plan)
    except Exception as exc:
        if plan.debug:
            traceback.print_exc()
        _tell(control, {"error": _explain(exc)})
        sys.exit(1)
    listener = socket.socket(fileno=listen_fd)
    anyio.run(_serve, app, tool_count, listener, control)


def _receive_plan(control: socket.socket) -> WorkerPlan | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = control.recv(_MAX_MESSAGE)
        if not chunk:
            return None
        data += chunk
    return WorkerPlan(**json.loads(data))


def _build(plan: WorkerPlan) -> tuple[Any, int]:
    from .mcp import create_app

    tools = load_tools(plan.tools) + (prebuilt_tools() if plan.prebuilt else [])
    if not tools:
        raise CliError("nothing to serve: pass --prebuilt and/or --tools module:attribute")
    return create_app(tools, **app_options(plan.app_options)), len(tools)


def _explain(exc: Exception) -> str:
    # The words the single-process `serve` would print for the same failure.
    if isinstance(exc, CliError | ToolwireError | OSError | ValueError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _tell(control: socket.socket, message: dict[str, Any]) -> None:
    # When the supervisor is gone the message has no reader; the worker stops on its own.
    with contextlib.suppress(OSError):
        control.sendall(json.dumps(message).encode() + b"\n")


async def _serve(
    app: Any, tool_count: int, listener: socket.socket, control: socket.socket
) -> None:
    server = uvicorn_server(app, on_started=lambda: _tell(control, {"ready": tool_count}))
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with anyio.create_task_group() as group:

            async def run() -> None:
                await server.serve(sockets=[listener])
                group.cancel_scope.cancel()

            async def on_signals() -> None:
                async for _ in signals:
                    if server.should_exit:
                        server.force_exit = True
                    server.should_exit = True

            async def watch_supervisor() -> None:
                control.setblocking(False)
                while True:
                    await anyio.wait_readable(control)
                    try:
                        if not control.recv(_MAX_MESSAGE):
                            break
                    except BlockingIOError:
                        continue
                    except OSError:
                        break
                # Orphaned: stop as on SIGTERM, and make sure a stuck shutdown cannot keep the
                # process (and the shared port) alive.
                server.should_exit = True
                timer = threading.Timer(STOP_TIMEOUT, os._exit, args=(1,))
                timer.daemon = True
                timer.start()

            group.start_soon(run)
            group.start_soon(on_signals)
            group.start_soon(watch_supervisor)
