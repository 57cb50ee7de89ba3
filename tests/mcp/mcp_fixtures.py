"""Helpers of the MCP tests, imported by name (`from mcp_fixtures import serve_app`).

Real MCP servers on 127.0.0.1 for the tests: in-process (uvicorn) or as subprocesses, each on a
free port from the OS. A module of its own, not conftest.py: `from conftest import ...` picks
whichever conftest.py was imported first, so tests/mcp and tests/models could not be collected in
one run (or one xdist worker).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import httpx
import pytest
import uvicorn

from _ports import free_port, listening_socket

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
NODE_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"


# The default bounds catch a hang, they do not time anything: a server process starting while
# other xdist workers (and other people's jobs) hold every core can take tens of seconds.
BOUND = 60.0


async def eventually(predicate: Callable[[], Awaitable[bool] | bool], limit: float = BOUND) -> None:
    """Poll `predicate` until it holds: for state owned by another process or library."""
    with anyio.fail_after(limit):
        while True:
            outcome = predicate()
            if outcome if isinstance(outcome, bool) else await outcome:
                return
            await anyio.sleep(0.02)


async def wait_for_port(port: int, limit: float = BOUND) -> None:
    """Poll until something accepts connections on the port (bounded, no fixed sleep)."""
    with anyio.fail_after(limit):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.02)
                continue
            await stream.aclose()
            return


@asynccontextmanager
async def serve_app(
    app: Any, path: str = "/mcp", port: int | None = None, listener: socket.socket | None = None
) -> AsyncIterator[str]:
    """Run an ASGI app with uvicorn in this event loop; yields its MCP URL.

    It listens on `listener` (a socket the caller keeps, so its port stays held after the app
    stops), else on `port`, else on a socket of its own bound before the port is known to anyone.
    """
    own = listener is None and port is None
    sock = listening_socket() if own else listener.dup() if listener is not None else None
    bound = int(sock.getsockname()[1]) if sock is not None else port
    config = uvicorn.Config(
        app, host="127.0.0.1", port=bound or 0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as tg:
            # uvicorn closes the sockets it is given when it stops: a duplicate of the caller's.
            tg.start_soon(server.serve, None if sock is None else [sock])
            await eventually(lambda: server.started)
            try:
                yield f"http://127.0.0.1:{bound}{path}"
            finally:
                server.should_exit = True
    finally:
        if sock is not None:
            sock.close()


async def same_answers(
    ours: Any,
    theirs: Any,
    cases: dict[str, tuple[dict[str, str], bytes]],
    essence: Callable[[httpx.Response], Any],
) -> dict[str, list[Any]]:
    """POST every case to both apps (served side by side): `{case: [ours, theirs]}`, each answer
    as `essence` reads it; fails naming every case whose two answers differ."""
    found: dict[str, list[Any]] = {}
    async with (
        serve_app(ours) as our_url,
        serve_app(theirs) as their_url,
        httpx.AsyncClient(timeout=30) as http,
    ):
        for name, (headers, body) in cases.items():
            found[name] = [
                essence(await http.post(url, content=body, headers=headers))
                for url in (our_url, their_url)
            ]
    differing = {name: pair for name, pair in found.items() if pair[0] != pair[1]}
    assert not differing, json.dumps(differing, indent=1, default=str)
    return found


class ServerProcess:
    """`mcp_servers.py KIND PORT` in a subprocess that the test can kill and restart."""

    def __init__(self, kind: str, log: Path) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = log
        self.proc: anyio.abc.Process | None = None

    async def start(self) -> None:
        log = await anyio.open_file(self.log, "ab")
        try:
            self.proc = await anyio.open_process(
                [sys.executable, str(HERE / "mcp_servers.py"), self.kind, str(self.port)],
                stdout=log.wrapped,
                stderr=log.wrapped,
                cwd=ROOT,
            )
        finally:
            await log.aclose()
        await wait_for_port(self.port)

    async def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            with anyio.fail_after(10):
                await proc.wait()
            await proc.aclose()

    async def restart(self) -> None:
        await self.kill()
        await self.start()

    async def log_contains(self, text: str) -> bool:
        path = anyio.Path(self.log)
        return await path.exists() and text in await path.read_text()


def node_tool(name: str) -> str | None:
    """A CLI installed by .ci/mcp-setup.sh, or None when the setup has not run."""
    path = NODE_BIN / name
    return str(path) if path.exists() else None


def node_env() -> dict[str, str]:
    """The environment for npm CLIs: Node 22 from .ci/node first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    # Node 22 keeps the byte code it compiled for these CLIs here: every run after the first
    # starts without compiling the conformance suite's JavaScript again.
    env.setdefault("NODE_COMPILE_CACHE", str(ROOT / ".ci" / "node" / ".compile-cache"))
    return env


def require_node_tool(name: str) -> str:
    found = node_tool(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing: run .ci/mcp-setup.sh before the tests")
        pytest.skip(f"{name} is not installed (run .ci/mcp-setup.sh)")
    assert shutil.which(found)
    return found


# --- the conformance suite ------------------------------------------------------------------


def read_checks(out: Path) -> list[dict[str, Any]]:
    (found,) = out.glob("**/checks.json")
    return json.loads(found.read_text())


def verdicts(checks: list[dict[str, Any]]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in checks if c["status"] != "INFO"}


def client_stderr(out: Path) -> str:
    """What the client under test wrote to stderr during one scenario."""
    (found,) = out.glob("**/checks.json")
    stderr = found.parent / "stderr.txt"
    return stderr.read_text() if stderr.exists() else ""


async def run_client_scenario(
    scenario: str,
    out: Path,
    command: str | None = None,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, str], int, str]:
    """Run one client scenario against `command` (by default conformance_client.py).

    Returns the checks' verdicts, the suite's exit status and the client's stderr.
    """
    cli = require_node_tool("conformance")
    command = command or f"{sys.executable} {HERE / 'conformance_client.py'}"
    with anyio.fail_after(90):
        done = await anyio.run_process(
            [cli, "client", "--command", command, "--scenario", scenario, "-o", str(out)],
            env={**node_env(), **(env or {})},
            cwd=ROOT,
            check=False,
        )
    checks = await anyio.to_thread.run_sync(read_checks, out)
    errors = await anyio.to_thread.run_sync(client_stderr, out)
    return verdicts(checks), done.returncode, errors
