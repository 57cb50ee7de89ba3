"""`create_app` and `serve` under hostile load: session floods, descriptor exhaustion, and
settings that would expose the tools without saying so."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp_fixtures import free_port, serve_app, wait_for_port

from toolwire.mcp import MIN_TOKEN_CHARS, SessionPolicy, create_app
from toolwire.mcp._overload import AcceptGuard

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
HEADERS = {"accept": "application/json, text/event-stream"}


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _from(address: str) -> httpx.AsyncClient:
    """A client whose connections come from `address` (another loopback address: another
    client as far as the server can tell)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(transport=transport, timeout=20, headers=HEADERS)


async def _open(client: httpx.AsyncClient, url: str) -> tuple[int, str | None]:
    response = await client.post(url, json=INITIALIZE)
    return response.status_code, response.headers.get("mcp-session-id")


async def _use(client: httpx.AsyncClient, url: str, session: str) -> int:
    headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    return (await client.post(url, json=LIST, headers=headers)).status_code


# --- sessions ---------------------------------------------------------------------------------


async def test_a_flood_of_initializes_does_not_lock_other_clients_out() -> None:
    """One client opens far more sessions than the cap: others still get in at once, and a
    session another client is using survives the flood."""
    app = create_app([add], max_sessions=20)
    async with serve_app(app) as url, _from("127.0.0.1") as flood, _from("127.0.0.2") as other:
        status, kept = await _open(other, url)
        assert status == 200 and kept is not None
        assert await _use(other, url, kept) == 200
        first: str | None = None
        answers: list[int] = []
        for _ in range(200):
            status, session = await _open(flood, url)
            answers.append(status)
            first = first or session
        assert answers == [200] * 200  # the flood only ever displaces its own sessions
        status, newcomer = await _open(other, url)
        assert status == 200 and newcomer is not None
        assert await _use(other, url, newcomer) == 200
        assert await _use(other, url, kept) == 200
        assert first is not None and await _use(flood, url, first) == 404


async def test_sessions_that_never_come_back_expire_fast() -> None:
    now = [0.0]
    policy = SessionPolicy(first_request_grace=30, clock=lambda: now[0])
    app = create_app([add], session_policy=policy)
    async with serve_app(app) as url, _from("127.0.0.1") as client:
        _, used = await _open(client, url)
        _, abandoned = await _open(client, url)
        assert used is not None and abandoned is not None
        assert await _use(client, url, used) == 200
        now[0] = 31.0
        await _open(client, url)  # a new session makes the policy look
        assert await _use(client, url, abandoned) == 404
        assert await _use(client, url, used) == 200


async def test_a_client_holds_at_most_its_quota() -> None:
    app = create_app([add], session_policy=SessionPolicy(per_client=3))
    async with serve_app(app) as url, _from("127.0.0.1") as client:
        sessions = [(await _open(client, url))[1] for _ in range(5)]
        alive = [await _use(client, url, s) for s in sessions if s is not None]
    assert alive == [404, 404, 200, 200, 200]


# --- exposure checks ------------------------------------------------------------------------


@pytest.mark.parametrize("token", ["t", "s3cret", "x" * (MIN_TOKEN_CHARS - 1)])
def test_a_short_token_is_refused(token: str) -> None:
    with pytest.raises(ValueError, match=f"at least {MIN_TOKEN_CHARS}"):
        create_app([add], auth_token=token)


def test_a_token_of_the_minimum_length_is_accepted() -> None:
    assert create_app([add], auth_token="x" * MIN_TOKEN_CHARS) is not None


@pytest.mark.parametrize(
    "options",
    [{"allowed_hosts": ["*"]}, {"dns_rebinding_protection": False}],
    ids=["any-host", "no-host-check"],
)
def test_any_host_without_a_token_warns(
    options: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolwire.mcp"):
        create_app([add], **options)
    assert "DNS rebinding" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolwire.mcp"):
        create_app([add], auth_token="x" * MIN_TOKEN_CHARS, **options)
    assert "DNS rebinding" not in caplog.text


# --- descriptor exhaustion ----------------------------------------------------------------------

_LIMITED_SERVER = """
import resource, sys
import anyio
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
from toolwire.mcp import serve

def add(a: int, b: int) -> int:
    '''Add two numbers.'''
    return a + b

anyio.run(lambda: serve([add], port=int(sys.argv[1])))
"""


async def test_out_of_descriptors_the_server_sheds_load_logs_little_and_keeps_serving(
    tmp_path: Path,
) -> None:
    """A server limited to 256 descriptors, 356 stalled connections: a normal client still gets
    its initialize answered, and the accept error is logged a few times, not thousands."""
    port = free_port()
    errors = tmp_path / "stderr"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with errors.open("wb") as err:
        proc = await anyio.open_process(
            [sys.executable, "-c", _LIMITED_SERVER, str(port)], stderr=err, env=env
        )
    stalled: list[socket.socket] = []
    try:
        await wait_for_port(port)
        for _ in range(356):
            stalled.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        async with httpx.AsyncClient(timeout=20, headers=HEADERS) as client:
            with anyio.fail_after(30):
                response = await client.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE)
        assert response.status_code == 200
    finally:
        for sock in stalled:
            sock.close()
        proc.terminate()
        with anyio.fail_after(20):
            await proc.wait()
    log = errors.read_bytes()
    assert log.count(b"Too many open files") <= 5, log[:2000]
    assert len(log) < 10_000, len(log)


async def test_toolwire_serve_refuses_a_short_token() -> None:
    command = [sys.executable, "-c", "from toolwire._console import main; main()"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("TOOLWIRE_SERVE_TOKEN", None)
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [*command, "serve", "--prebuilt", "--port", str(free_port()), "--token", "short"],
            env=env,
            check=False,
        )
    assert done.returncode != 0
    assert f"at least {MIN_TOKEN_CHARS}" in done.stderr.decode()


def _start_serving(*_: object) -> None:
    """Named as asyncio's accept retry (`BaseSelectorEventLoop._start_serving`)."""


async def test_accept_retries_left_for_a_closed_server_are_dropped_quietly() -> None:
    """asyncio schedules one accept retry per failed accept (up to the backlog): those that fire
    after the server closed its socket raise ValueError on fd -1 and have nothing left to do."""
    loop = asyncio.get_running_loop()
    passed: list[dict[str, Any]] = []
    guard = AcceptGuard([], previous=lambda _, context: passed.append(context))
    closed = socket.socket()
    closed.close()
    stale = asyncio.Handle(_start_serving, (None, closed), loop)
    guard(
        loop,
        {"message": "Exception in callback", "exception": ValueError("fd -1"), "handle": stale},
    )
    assert guard.stale_retries == 1 and passed == []

    with socket.socket() as live:  # a retry on an open socket failing is a real error
        retry = asyncio.Handle(_start_serving, (None, live), loop)
        guard(loop, {"message": "x", "exception": ValueError("other"), "handle": retry})
    other = asyncio.Handle(print, (None, closed), loop)  # as is any other callback's ValueError
    guard(loop, {"message": "x", "exception": ValueError("other"), "handle": other})
    assert guard.stale_retries == 1 and len(passed) == 2
