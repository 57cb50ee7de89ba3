"""A fork server for the durable tests' worker processes: `python zygote.py FD`.

Importing toolwire.durable (DBOS, SQLAlchemy, psycopg) costs 1.5 s of CPU, and the durable tests
start about two hundred worker processes. This process imports those libraries once, then forks
one child per request arriving on the Unix socket FD; a child becomes what `python SCRIPT ARGS...`
would be (its own argv, environment, working directory and stdio, `__main__` run from the script,
a normal interpreter exit) without paying for the imports again. Each child is a real process of
its own: the tests SIGKILL it exactly as before.

Protocol (one JSON object per line): a request `{"argv": [...], "env": {...}, "cwd": "..."}`
carries three descriptors (stdin, stdout, stderr) and is answered `{"pid": N}`; when a child ends,
`{"exit": N, "code": C}` follows (C as `subprocess` reports it: negative for a signal). The server
exits when the socket closes.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
from typing import Any

# The libraries the worker scripts import; nothing is started, only imported. The names are
# imported, not just their packages: `toolwire` and `toolwire.durable` load a name's module when
# it is first asked for (PEP 562), so `import toolwire.durable` alone would leave DBOS and
# SQLAlchemy (1.5 s of CPU) to every child.
import anyio  # noqa: F401
import psycopg  # noqa: F401
import pydantic  # noqa: F401

from toolwire import Agent, ToolContext, tool  # noqa: F401
from toolwire.durable import DurableAgent, RunClient, launch, shutdown  # noqa: F401
from toolwire.messages import Message, ToolResultMessage  # noqa: F401
from toolwire.models.testing import FunctionModel, ModelRequest  # noqa: F401


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _become(
    sock: socket.socket, wakeup: tuple[int, int], request: dict[str, Any], fds: list[int]
) -> None:
    """In the forked child: turn into `python SCRIPT ARGS...` and run it; never returns."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sock.close()
    for fd in wakeup:
        os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    # Registered first, so it runs last: the objects left at exit are not searched for cycles
    # during the interpreter's teardown (0.3 s of CPU per child with DBOS loaded); the process
    # ends right after, and atexit handlers and thread joins before it run as usual.
    atexit.register(gc.freeze)
    script = request["argv"][0]
    sys.argv = list(request["argv"])
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    # SystemExit and uncaught exceptions leave through the interpreter's own exit path (atexit
    # handlers, non-daemon threads joined, the traceback printed, status 1), as for `python SCRIPT`.
    runpy.run_path(script, run_name="__main__")
    raise SystemExit(0)


def _reap(sock: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _send(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})


def main() -> None:
    # A fork copies only the calling thread: the imports above must not have started any.
    assert threading.active_count() == 1, threading.enumerate()
    # What the imports built lives as long as every child: kept out of the cyclic collector, it
    # is never traversed (nor its pages copied) in a child.
    gc.freeze()
    sock = socket.socket(fileno=int(sys.argv[1]))
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
    buffered = b""
    while True:
        ready, _, _ = select.select([sock, wakeup[0]], [], [])
        if wakeup[0] in ready:
            os.read(wakeup[0], 4096)
            _reap(sock)
        if sock not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(sock, 65536, 3)
        if not data:
            return
        buffered += data
        line, _, buffered = buffered.partition(b"\n")
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _become(sock, wakeup, request, fds)
        for fd in fds:
            os.close(fd)
        _send(sock, {"pid": pid})


if __name__ == "__main__":
    main()
