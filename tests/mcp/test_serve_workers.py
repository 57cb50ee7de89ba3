"""`toolwire serve --stateless --workers N` as real processes: one port, N workers, no orphans."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import anyio
import httpx2
import pytest
from mcp_fixtures import ROOT, eventually, free_port
from test_serve_cli import APPROVAL_TOOLS, HEADERS, INIT, TOOLWIRE

from mcp import Client

pytestmark = pytest.mark.anyio

PID_TOOLS = """
import os
from pathlib import Path

import anyio


def worker_pid() -> int:
    \"\"\"The process id of the worker that answers.\"\"\"
    return os.getpid()


async def held(started: str, release: str, cancelled: str = "") -> int:
    \"\"\"Write `started`, then answer once the file `release` exists.\"\"\"
    Path(started).write_text(str(os.getpid()))
    try:
        while not Path(release).exists():
            await anyio.sleep(0.02)
    except anyio.get_cancelled_exc_class():
        if cancelled:
            Path(cancelled).write_text("cancelled")
        raise
    return os.getpid()
"""


class Served:
    """A `toolwire serve` process, its stderr read line by line as it comes."""

    def __init__(self, proc: subprocess.Popen[str], url: str, mark: str) -> None:
        self.proc = proc
        self.url = url
        self.mark = mark
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert proc.stderr is not None
        stderr = proc.stderr
        self.reader = threading.Thread(
            target=lambda: [self.lines.put(x) for x in stderr], daemon=True
        )
        self.reader.start()

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """The first stderr line (from now or earlier) matching `pattern`."""
        for line in self.seen:
            if found := re.search(pattern, line):
                return found
        while True:
            line = self.lines.get(timeout=timeout)
            self.seen.append(line)
            if found := re.search(pattern, line):
                return found

    def stderr(self) -> str:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


def _processes_marked(mark: str) -> set[int]:
    """Live processes (zombies excluded) whose environment holds `mark`: the server's, whoever
    their parent is now."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark.encode() not in (entry / "environ").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if state != "Z":
            found.add(int(entry.name))
    return found


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid) and fields[0] != "Z":
            found.add(int(entry.name))
    return found


@contextmanager
def serving(tmp_path: Path, *args: str, **env: str) -> Iterator[Served]:
    """`toolwire serve --stateless ARGS` serving the tools above from `tmp_path`."""
    (tmp_path / "pidtools.py").write_text(PID_TOOLS)
    mark = f"toolwire-test-{uuid.uuid4()}"
    environment = {k: v for k, v in os.environ.items() if k != "TOOLWIRE_SERVE_TOKEN"}
    environment.update(
        PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT / 'src'}", TOOLWIRE_TEST_MARK=mark, **env
    )
    port = free_port()
    proc = subprocess.Popen(
        [*TOOLWIRE, "serve", "--stateless", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=environment,
    )
    served: Served | None = None
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once every worker accepts connections
        served = Served(proc, url, mark)
        assert url.endswith(f":{port}/mcp"), served.stderr() if proc.poll() is not None else url
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
        if served is not None:
            served.reader.join(timeout=30)  # the pipe ends with the process
        if proc.stderr is not None:
            proc.stderr.close()


def _stop(served: Served, signum: signal.Signals = signal.SIGTERM) -> int:
    served.proc.send_signal(signum)
    return served.proc.wait(timeout=60)


async def _call_pids(url: str, clients: int, calls: int) -> Counter[int]:
    """`clients` official SDK clients at once (half of the handshake era, half 2026-07-28),
    `calls` calls of `worker_pid` each; the pids that answered, counted."""
    answered: Counter[int] = Counter()

    async def one(i: int) -> None:
        async with Client(url, mode="legacy" if i % 2 else "auto") as client:
            for _ in range(calls):
                result = await client.call_tool("worker_pid", {})
                assert not result.is_error, result
                text = result.content[0]
                assert text.type == "text"
                answered[int(text.text)] += 1

    async with anyio.create_task_group() as group:
        for i in range(clients):
            group.start_soon(one, i)
    return answered


async def test_four_workers_answer_many_concurrent_clients_and_stop_clean(tmp_path: Path) -> None:
    with serving(tmp_path, "--tools", "pidtools:worker_pid", "--workers", "4") as served:
        started = served.wait_for(r"with 4 workers \(pids ([\d, ]+);")
        pids = {int(p) for p in started[1].split(", ")}
        assert pids == _children(served.proc.pid)
        assert _processes_marked(served.mark) == {served.proc.pid, *pids}

        with anyio.fail_after(90):
            answered = await _call_pids(served.url, clients=48, calls=5)
        assert sum(answered.values()) == 48 * 5  # every call answered
        assert set(answered) <= pids
        assert len(answered) > 1, answered  # the port is served by more than one process

        assert _stop(served, signal.SIGINT) == 0  # as Ctrl-C in a terminal
        assert "stopped" in served.stderr()
        assert "Traceback" not in served.stderr()
    assert not _processes_marked(served.mark)


async def test_a_killed_worker_is_reported_and_replaced(tmp_path: Path) -> None:
    with serving(tmp_path, "--tools", "pidtools:worker_pid", "--workers", "2") as served:
        started = served.wait_for(r"with 2 workers \(pids (\d+), (\d+);")
        victim, survivor = int(started[1]), int(started[2])
        os.kill(victim, signal.SIGKILL)
        served.wait_for(rf"worker {victim} was killed by SIGKILL; starting another")
        replaced = served.wait_for(rf"worker (\d+) started in place of worker {victim}")
        newcomer = int(replaced[1])
        assert _children(served.proc.pid) == {survivor, newcomer}

        with anyio.fail_after(60):
            answered = await _call_pids(served.url, clients=8, calls=3)
        assert sum(answered.values()) == 24
        assert set(answered) <= {survivor, newcomer}
        assert _stop(served) == 0
    assert not _processes_marked(served.mark)


async def test_a_supervisor_killed_with_sigkill_leaves_no_worker(tmp_path: Path) -> None:
    with serving(tmp_path, "--tools", "pidtools:worker_pid", "--workers", "3") as served:
        served.wait_for(r"with 3 workers")
        assert len(_processes_marked(served.mark)) == 4
        served.proc.kill()  # no chance to clean up: the workers must notice on their own
        served.proc.wait(timeout=30)
        await eventually(lambda: not _processes_marked(served.mark), limit=60)
        # The port is free again: nothing listens on it any more.
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(httpx2.ConnectError):
            httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INIT, headers=HEADERS)


async def test_sigterm_lets_a_call_in_flight_finish(tmp_path: Path) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    with serving(tmp_path, "--tools", "pidtools:held", "--workers", "2") as served:
        served.wait_for(r"with 2 workers")
        outcome: list[str] = []

        async def call() -> None:
            async with Client(served.url) as client:
                # Listed first: the SDK's client lists the tools after a call whose output
                # schema it has not seen, a new request the stopping server rightly refuses.
                await client.list_tools()
                result = await client.call_tool(
                    "held", {"started": str(started), "release": str(release)}
                )
                assert not result.is_error, result
                text = result.content[0]
                assert text.type == "text"
                outcome.append(text.text)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await eventually(started.exists)
                served.proc.send_signal(signal.SIGTERM)
                release.write_text("go")
        assert outcome == [started.read_text()]  # answered by the worker that started it
        assert served.proc.wait(timeout=60) == 0
    assert not _processes_marked(served.mark)


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
async def test_a_call_the_client_gives_up_on_stops_on_its_worker(
    tmp_path: Path, protocol: Literal["modern", "legacy"]
) -> None:
    # 2026-07-28 cancels by closing the answer stream, which reaches the worker running the
    # call. A handshake-era `notifications/cancelled` has no session to find the call by (and
    # may reach another worker): a stateless server cancels a request whose client has left.
    from toolwire.mcp import McpClient

    started, cancelled = tmp_path / "started", tmp_path / "cancelled"
    arguments = {
        "started": str(started),
        "release": str(tmp_path / "never"),
        "cancelled": str(cancelled),
    }
    with serving(tmp_path, "--tools", "pidtools:held", "--workers", "2") as served:
        served.wait_for(r"with 2 workers")
        async with McpClient(served.url, protocol=protocol) as client:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "held", arguments)
                    await eventually(started.exists)
                    group.cancel_scope.cancel()
                await eventually(cancelled.exists)
        assert _stop(served) == 0


def test_the_token_and_host_checks_hold_on_every_worker(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("worker-secret-0123456789\n")
    args = ("--tools", "pidtools:worker_pid", "--workers", "2", "--token-file", str(secret))
    with serving(tmp_path, *args, "--allowed-host", "tools.example") as served:
        served.wait_for(r"with 2 workers")
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])

        def status(token: str | None, host: str = "127.0.0.1") -> int:
            headers = {**HEADERS, "host": f"{host}:{port}"}
            if token is not None:
                headers["authorization"] = f"Bearer {token}"
            # A new connection each time, so the requests spread over the workers.
            return httpx2.post(served.url, json=INIT, headers=headers).status_code

        assert {status(None) for _ in range(8)} == {401}
        assert {status("wrong") for _ in range(8)} == {401}
        assert {status("worker-secret-0123456789") for _ in range(8)} == {200}
        assert {status("worker-secret-0123456789", "tools.example") for _ in range(4)} == {200}
        assert {status("worker-secret-0123456789", "evil.example") for _ in range(4)} == {421}
        assert _stop(served) == 0


def test_a_tool_that_needs_approval_is_still_not_run_without_it(tmp_path: Path) -> None:
    # Approval is the calling agent's job; every worker lists the tool as needing it.
    (tmp_path / "approvaltools.py").write_text(APPROVAL_TOOLS)
    marker = tmp_path / "wiped"
    env = {"WIPE_MARKER": str(marker), "TOOLWIRE_ALLOW_MODEL_REQUESTS": "0"}
    args = ("--tools", "approvaltools:wipe", "--workers", "2")
    with serving(tmp_path, *args, **env) as served:
        served.wait_for(r"with 2 workers")
        environment = {**os.environ, **env, "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run(
            [*TOOLWIRE, "run", "clean up", "--model", "test", "--mcp", served.url],
            capture_output=True,
            text=True,
            env=environment,
            timeout=60,
            cwd=tmp_path,
        )
        assert _stop(served) == 0
    assert done.returncode == 1, done.stderr
    assert "the run stopped for approval" in done.stderr and "wipe(" in done.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stateless", "--workers", "0"], "Invalid value for '--workers'"),
        (["--stateless", "--workers", "-2"], "Invalid value for '--workers'"),
        (["--stateless", "--workers", "two"], "Invalid value for '--workers'"),
        (["--workers", "2"], "--workers needs --stateless"),
        (["--stdio", "--workers", "2"], "--stdio takes none"),
    ],
)
def test_bad_worker_options_are_refused(args: list[str], message: str) -> None:
    done = subprocess.run(
        [*TOOLWIRE, "serve", "--prebuilt", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode in (1, 2)
    assert message in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("pidtools:missing", "module 'pidtools' has no attribute 'missing'"),
        ("broken:tool", "cannot import 'broken'"),
        ("exits:tool", "a worker exited with code 3 before it was ready"),
    ],
)
def test_a_worker_that_cannot_start_stops_the_server_with_its_error(
    tmp_path: Path, spec: str, message: str
) -> None:
    (tmp_path / "pidtools.py").write_text(PID_TOOLS)
    (tmp_path / "broken.py").write_text("import no_such_module_here\n")
    (tmp_path / "exits.py").write_text("raise SystemExit(3)\n")
    mark = f"toolwire-test-{uuid.uuid4()}"
    done = subprocess.run(
        [*TOOLWIRE, "serve", "--stateless", "--workers", "2", "--port", "0", "--tools", spec],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'src'}", "M": mark},
    )
    assert done.returncode == 1
    assert done.stdout == ""  # no URL: nothing was ever served
    assert done.stderr.count("error:") == 1, done.stderr  # said once, not once per worker
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not _processes_marked(mark)


async def test_the_death_budget_is_five_or_one_per_worker_a_minute() -> None:
    import socket

    from toolwire._serve_workers import WorkerPlan, _Supervisor  # pyright: ignore[reportPrivateUsage]

    with socket.socket() as listener:
        for count, budget in ((2, 5), (8, 8)):
            supervisor = _Supervisor(listener, WorkerPlan([], True), count, lambda _: None)
            assert [supervisor._too_many_deaths() for _ in range(budget + 1)] == [
                False
            ] * budget + [True]
