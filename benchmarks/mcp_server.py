"""toolwire's MCP server against the official SDK's `MCPServer`: calls/s per era, mode and load,
and the cold start of `toolwire serve --prebuilt`.

Throughput: both servers serve the same `add(a, b)` tool with JSON answers (toolwire chooses
JSON for a tool that cannot talk back; the SDK is given `json_response=True`), each in its own
process pinned to CPU 0 with `taskset`, while this process, pinned to CPU 1, drives them. The
driver (`--driver`) is `raw` by default: `_raw_mcp.RawClient`, each client one keep-alive
connection sending the bytes an MCP client sends, prepared up front (~0.1 ms of client CPU per
call), so the server is what runs out of CPU; `mcp` drives them with toolwire's `McpClient`
instead, a whole client per connection, which at 500 clients spends more CPU per call (~1.7 ms)
than either server (~1 ms): the figures then measure the client. For every
era (`legacy`: the initialize handshake; `modern`: the per-request revision 2026-07-28), mode
(`stateful`, `stateless`) and number of clients (each its own `McpClient`, so its own
connections and session), the rounds alternate between the servers, so load from elsewhere on
a shared machine falls on both alike. A row gives each server's median calls/s and CPU per call,
and two ratios, each the median of the per-round pairs with their range: calls/s (toolwire over
the SDK) and server CPU per call (the SDK's over toolwire's; the steadier figure on a busy
machine, since another process's load slows the clock but not the CPU a call takes); above 1
toolwire is ahead. The load average is printed with each row.

fastmcp joins the rotation (its own columns and ratios, toolwire over fastmcp) when a Python
with it is given. It is kept out of toolwire's environment, since it may pull other versions of
`mcp` or `starlette`; make it its own virtual environment outside the repository, once:

    python3 -m venv /work/fastmcp-venv
    /work/fastmcp-venv/bin/pip install "fastmcp==4.2.*" uvicorn anyio

then pass `--fastmcp-python /work/fastmcp-venv/bin/python` (or set `FASTMCP_PYTHON`): the fastmcp
server process runs this file under that Python (`--serve fastmcp MODE PORT`; the top of this
file imports only the standard library and anyio), served with `json_response=True` and the
same `add`. A server that does not answer in an era is reported once as not serving it, and its
columns in that era's rows read `n/a`. `app` (in-process, no sockets) compares toolwire and the
SDK only.

Cold start: from spawning `toolwire serve --prebuilt` (as the installed script runs it) to the
first answered `tools/call`,
against an `MCPServer` script serving the same tools under uvicorn, alternating, median of the
runs; with the CPU each server used to get there (the steadier figure on a loaded machine) and
both ratios as median (range) of the per-round pairs. Both servers are pinned to CPU 0 as above.

Run: `.venv/bin/python benchmarks/mcp_server.py [throughput|cold|all] [--clients 10,100,500]
[--rounds 5] [--eras legacy,modern] [--modes stateful,stateless] [--calls 2000]
[--tool sync|async] [--driver raw|mcp] [--fastmcp-python PATH]`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from _fastmcp import find_fastmcp
from _raw_mcp import CLIENT_INFO, ENVELOPE, HANDSHAKE, MODERN, RawClient, connect_args

SERVER_CPU = 0
CLIENT_CPU = 1

# --- servers (run as `python benchmarks/mcp_server.py --serve KIND MODE PORT`) -------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def async_add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# Served under the same name: a `def` tool runs in a worker thread on both servers, an
# `async def` one in the event loop. The hand-off to the thread costs the same on both sides,
# yet it is the largest and noisiest part of a call on a loaded machine, so `--tool async`
# shows the servers' own work more steadily.
async_add.__name__ = async_add.__qualname__ = "add"
TOOLS: dict[str, Callable[..., Any]] = {"sync": add, "async": async_add}
tool_kind = os.environ.get("MCP_BENCH_TOOL", "sync")
"""Which `add` the servers serve (the environment carries the choice to the server processes)."""


def toolwire_app(stateless: bool) -> Any:
    from toolwire import tool
    from toolwire.mcp import SessionPolicy, create_app

    # Every client here comes from one address: the per-client session quota (32 by default),
    # which the SDK does not have, would close the sessions of all but 32 of them.
    policy = SessionPolicy(per_client=100_000)
    return create_app(
        [tool(TOOLS[tool_kind])], name="bench", stateless=stateless, session_policy=policy
    )


def sdk_app(stateless: bool) -> Any:
    from mcp.server.mcpserver import MCPServer

    # Logging at ERROR, as uvicorn's: at its default (INFO) the SDK logs every stateless
    # request, which would make it look slower than it can be.
    server = MCPServer("bench", log_level="ERROR")
    server.tool()(TOOLS[tool_kind])
    return server.streamable_http_app(json_response=True, stateless_http=stateless)


def fastmcp_app(stateless: bool) -> Any:
    # Imported by name: fastmcp is in its own virtual environment, not the one checked here.
    fastmcp: Any = importlib.import_module("fastmcp")
    server: Any = fastmcp.FastMCP("bench")
    server.tool(TOOLS[tool_kind])
    return server.http_app(json_response=True, stateless_http=stateless)


SERVERS: dict[str, Callable[[bool], Any]] = {
    "toolwire": toolwire_app,
    "SDK": sdk_app,
    "fastmcp": fastmcp_app,
}


def serve(kind: str, mode: str, port: int) -> None:
    import uvicorn

    app = SERVERS[kind](mode == "stateless")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinned(command: list[str], cpu: int) -> list[str]:
    """`command` run on one CPU when `taskset` is there (and the machine has that CPU)."""
    if shutil.which("taskset") and (os.cpu_count() or 1) > cpu:
        return ["taskset", "-c", str(cpu), *command]
    return command


fastmcp_python: str | None = None
"""The interpreter that serves fastmcp (`--fastmcp-python`, else `$FASTMCP_PYTHON`, else this one
when fastmcp is installed here); None leaves fastmcp out."""


def interpreter(kind: str) -> str:
    """The Python that runs `kind`'s server process."""
    return fastmcp_python if kind == "fastmcp" and fastmcp_python else sys.executable


@dataclass
class Running:
    kind: str
    url: str
    pid: int


async def listening(port: int, poll: float) -> None:
    """Wait until a server accepts connections on `port`, polling every `poll` seconds (the
    caller bounds the wait)."""
    while True:
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
        except OSError:
            await anyio.sleep(poll)
            continue
        await stream.aclose()
        return


@asynccontextmanager
async def running(kind: str, mode: str) -> AsyncIterator[Running]:
    port = free_port()
    command = [interpreter(kind), __file__, "--serve", kind, mode, str(port)]
    proc = await anyio.open_process(
        pinned(command, SERVER_CPU), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with anyio.fail_after(60):
            await listening(port, poll=0.05)
        yield Running(kind, f"http://127.0.0.1:{port}/mcp", proc.pid)
    finally:
        proc.terminate()
        with anyio.fail_after(20):
            await proc.wait()
        await proc.aclose()


def process_cpu(pid: int) -> float:
    """CPU seconds used by process `pid` (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- throughput --------------------------------------------------------------------------------


@dataclass
class Round:
    rate: float
    server_us: float
    errors: int
    first_error: str | None


class StopClient(Exception):
    """Raised by a round's call: this client makes no more calls (the others go on)."""


async def timed_calls(
    server: Running, opened: list[Any], call: Callable[[Any, int], Any], calls: int
) -> tuple[float, float]:
    """Every client in `opened` warmed up with one call, then all sharing `calls` calls: the
    wall seconds and the server's CPU seconds they took."""
    async with anyio.create_task_group() as group:  # warm every connection up
        for client in opened:
            group.start_soon(call, client, 0)
    shared = iter(range(calls))

    async def worker(client: Any) -> None:
        for i in shared:
            try:
                await call(client, i)
            except StopClient:
                return

    cpu = process_cpu(server.pid)
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for client in opened:
            group.start_soon(worker, client)
    return time.perf_counter() - start, process_cpu(server.pid) - cpu


async def raw_round(server: Running, era: str, clients: int, calls: int) -> Round:
    """`clients` RawClients, connected and warmed first, then sharing `calls` calls."""
    failures: list[str] = []
    host, port, path = connect_args(server.url)
    opened: list[RawClient] = []
    try:
        for _ in range(clients):
            client = RawClient(host, port, path, era)
            try:
                await client.open()
            except Exception as exc:
                failures.append(f"connect: {exc}")
                continue
            opened.append(client)

        async def call(client: RawClient, i: int) -> None:
            try:
                await client.call(i)
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                raise StopClient from exc  # the connection's state is unknown now

        wall, used = await timed_calls(server, opened, call, calls)
    finally:
        for client in opened:
            with anyio.CancelScope(shield=True):
                await client.close()
    return Round(calls / wall, used / calls * 1e6, len(failures), failures[0] if failures else None)


async def load_round(server: Running, era: str, clients: int, calls: int) -> Round:
    """`clients` McpClients, connected and warmed first, then sharing `calls` calls."""
    from toolwire.mcp import McpClient

    failures: list[str] = []
    async with AsyncExitStack() as stack:
        opened: list[Any] = []
        for _ in range(clients):
            client = McpClient(server.url, timeout=120, protocol=era, follow_changes=False)  # type: ignore[arg-type]
            try:
                await stack.enter_async_context(client)
            except Exception as exc:
                failures.append(f"connect: {exc}")
                continue
            opened.append(client)

        async def call(client: Any, i: int) -> None:
            try:
                result = await client.call_tool("add", {"a": i, "b": 1})
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
                return
            if result.is_error or result.text != str(i + 1):
                failures.append(result.text)

        wall, used = await timed_calls(server, opened, call, calls)
    return Round(calls / wall, used / calls * 1e6, len(failures), failures[0] if failures else None)


def spread(values: list[float]) -> str:
    """The median and the range of `values`, as `median (low-high)`."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def load_average() -> str:
    """The machine's 1-minute load average (the figures below share the CPUs with it)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


async def serves(server: Running, era: str) -> str | None:
    """None when `server` answers a call in `era`, else what went wrong: a server that does not
    speak an era gets `n/a` in that era's rows rather than a figure."""
    from toolwire.mcp import McpClient

    try:
        with anyio.fail_after(30):
            client = McpClient(server.url, timeout=30, protocol=era, follow_changes=False)  # type: ignore[arg-type]
            async with client:
                result = await client.call_tool("add", {"a": 1, "b": 1})
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return result.text if result.is_error or result.text != "2" else None


def ratio_columns(found: dict[str, list[Round]], other: str) -> tuple[str, str]:
    """toolwire over `other`: the median and range of the per-round calls/s ratios and of the
    server-CPU-per-call ratios (`other`'s CPU over toolwire's), or `n/a` when it did not run."""
    if not found[other]:
        return "n/a", "n/a"
    pairs = list(zip(found["toolwire"], found[other], strict=True))
    rates = [ours.rate / theirs.rate for ours, theirs in pairs if theirs.rate > 0]
    cpus = [theirs.server_us / ours.server_us for ours, theirs in pairs if ours.server_us > 0]
    return (spread(rates) if rates else "-"), (spread(cpus) if cpus else "-")


DRIVERS = {"raw": raw_round, "mcp": load_round}
"""How a round drives a server: prepared bytes on keep-alive connections, or `McpClient`s."""


async def throughput(
    eras: list[str], modes: list[str], load: list[int], rounds: int, calls: int, driver: str
) -> None:
    kinds = ["toolwire", "SDK"] + (["fastmcp"] if fastmcp_python else [])
    others = kinds[1:]
    drive = DRIVERS[driver]
    print(
        f"server on CPU {SERVER_CPU}, {driver} clients on CPU {CLIENT_CPU}; "
        f"max({calls}, 4 x clients) "
        f"calls a round, {rounds} alternating rounds per row. calls/s and CPU/call: medians; "
        "the ratios (toolwire over each other server, >1 is toolwire ahead) are the median of "
        "the per-round pairs with their range; 'CPU' is the other server's CPU per call over "
        "toolwire's, the steadier figure on a loaded machine; 'load' is the 1-minute load average"
    )
    print(
        f"{'era':<7} {'mode':<9} {'clients':>7} "
        + " ".join(f"{k + ' calls/s':>17}" for k in kinds)
        + "".join(f"  {'calls/s vs ' + k:>19}  {'CPU vs ' + k:>19}" for k in others)
        + "  "
        + " ".join(f"{k + ' CPU':>13}" for k in kinds)
        + "  load  errors"
    )
    for mode in modes:
        async with AsyncExitStack() as stack:
            servers = [await stack.enter_async_context(running(k, mode)) for k in kinds]
            for era in eras:
                serving = list(servers)
                for server in servers:
                    problem = await serves(server, era)
                    if problem is not None:
                        print(f"        {server.kind} does not serve {era} {mode}: {problem[:200]}")
                        serving.remove(server)
                for clients in load:
                    total = max(calls, 4 * clients)
                    found: dict[str, list[Round]] = {k: [] for k in kinds}
                    for turn in range(rounds):
                        # Alternate who goes first, so no one always follows the same server.
                        order = serving if turn % 2 == 0 else serving[::-1]
                        for server in order:
                            found[server.kind].append(await drive(server, era, clients, total))
                    if not found["toolwire"]:
                        continue
                    rate = {
                        k: statistics.median(r.rate for r in found[k]) for k in kinds if found[k]
                    }
                    cpu = {
                        k: statistics.median(r.server_us for r in found[k])
                        for k in kinds
                        if found[k]
                    }
                    errors = ", ".join(
                        f"{k}: {sum(r.errors for r in found[k])}" for k in kinds if found[k]
                    )
                    print(
                        f"{era:<7} {mode:<9} {clients:>7} "
                        + " ".join(
                            f"{rate[k]:>17.0f}" if k in rate else f"{'n/a':>17}" for k in kinds
                        )
                        + "".join(
                            f"  {pair[0]:>19}  {pair[1]:>19}"
                            for pair in (ratio_columns(found, k) for k in others)
                        )
                        + "  "
                        + " ".join(
                            f"{cpu[k]:>11.0f}us" if k in cpu else f"{'n/a':>13}" for k in kinds
                        )
                        + f"  {load_average():>4}  {errors}",
                        flush=True,
                    )
                    for k in kinds:
                        first = next((r.first_error for r in found[k] if r.first_error), None)
                        if first:
                            print(f"        first error from {k}: {first[:200]}")


# --- the app alone: CPU per request, no sockets -----------------------------------------------


class AppDriver:
    """Requests handed straight to an app's ASGI callable in this process, as uvicorn would hand
    them: the app's own cost per request, without the HTTP server, the sockets or a client."""

    def __init__(self, app: Any, era: str) -> None:
        self.app = app
        self.era = era
        self.session: bytes | None = None
        self.headers: list[tuple[bytes, bytes]] = [
            (b"host", b"127.0.0.1:8000"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-type", b"application/json"),
        ]

    async def post(
        self, message: dict[str, Any], extra: list[tuple[bytes, bytes]]
    ) -> tuple[int, dict[str, bytes], bytes]:
        import json

        body = json.dumps(message).encode()
        headers = [*self.headers, *extra, (b"content-length", str(len(body)).encode())]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "state": {},
        }
        pending = [body]
        answered = anyio.Event()
        status: list[int] = []
        got: dict[str, bytes] = {}
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            if pending:
                return {"type": "http.request", "body": pending.pop(), "more_body": False}
            await answered.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                got.update((k.decode(), v) for k, v in message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    answered.set()

        await self.app(scope, receive, send)
        return status[0], got, b"".join(chunks)

    async def open(self) -> None:
        if self.era == "modern":
            return
        status, headers, _ = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": CLIENT_INFO,
                },
            },
            [],
        )
        assert status == 200, status
        self.session = headers.get("mcp-session-id")
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.extra())

    def extra(self) -> list[tuple[bytes, bytes]]:
        if self.era == "modern":
            return [
                (b"mcp-protocol-version", MODERN.encode()),
                (b"mcp-method", b"tools/call"),
                (b"mcp-name", b"add"),
            ]
        found = [(b"mcp-protocol-version", HANDSHAKE.encode())]
        if self.session is not None:
            found.append((b"mcp-session-id", self.session))
        return found

    async def call(self, i: int) -> None:
        params: dict[str, Any] = {"name": "add", "arguments": {"a": i, "b": 1}}
        if self.era == "modern":
            params["_meta"] = ENVELOPE
        message = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
        status, _, body = await self.post(message, self.extra())
        assert status == 200 and f'"text":"{i + 1}"'.encode() in body.replace(b" ", b""), body


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """The app's lifespan (startup before, shutdown after)."""
    sent: list[str] = ["lifespan.startup"]
    started, stop = anyio.Event(), anyio.Event()

    async def receive() -> dict[str, Any]:
        if sent:
            return {"type": sent.pop()}
        await stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"].startswith("lifespan.startup"):
            started.set()

    async with anyio.create_task_group() as group:
        group.start_soon(
            app, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send
        )
        await started.wait()
        try:
            yield
        finally:
            stop.set()


async def app_round(kind: str, mode: str, era: str, clients: int, calls: int) -> float:
    """CPU microseconds per call of `clients` concurrent callers on a fresh app."""
    app = SERVERS[kind](mode == "stateless")
    async with lifespan(app):
        drivers = [AppDriver(app, era) for _ in range(clients)]
        for driver in drivers:
            await driver.open()
        for driver in drivers:
            await driver.call(0)
        shared = iter(range(calls))

        async def worker(driver: AppDriver) -> None:
            for i in shared:
                await driver.call(i)

        start = time.process_time()
        async with anyio.create_task_group() as group:
            for driver in drivers:
                group.start_soon(worker, driver)
        return (time.process_time() - start) / calls * 1e6


async def app_cpu(
    eras: list[str], modes: list[str], load: list[int], rounds: int, calls: int
) -> None:
    print(
        f"the app alone (no sockets): CPU per call in this process, {calls} calls a round, "
        f"{rounds} alternating rounds per row; medians (lower is better)"
    )
    print(
        f"{'era':<7} {'mode':<9} {'clients':>7} {'toolwire':>10} {'SDK':>10}  "
        f"{'SDK/toolwire (range)':>20}  load"
    )
    for mode in modes:
        for era in eras:
            for clients in load:
                found: dict[str, list[float]] = {"toolwire": [], "SDK": []}
                for turn in range(rounds):
                    for kind in ("toolwire", "SDK") if turn % 2 == 0 else ("SDK", "toolwire"):
                        found[kind].append(await app_round(kind, mode, era, clients, calls))
                ours = statistics.median(found["toolwire"])
                theirs = statistics.median(found["SDK"])
                ratios = [b / a for a, b in zip(found["toolwire"], found["SDK"], strict=True)]
                print(
                    f"{era:<7} {mode:<9} {clients:>7} {ours:>8.0f}us {theirs:>8.0f}us  "
                    f"{spread(ratios):>20}  {load_average()}",
                    flush=True,
                )


# --- cold start --------------------------------------------------------------------------------

SDK_PREBUILT = """
import sys
import uvicorn
from mcp.server.mcpserver import MCPServer
from toolwire.prebuilt import available

server = MCPServer("toolwire", log_level="ERROR")
for found in available():
    server.add_tool(found.function, name=found.name, description=found.description)
uvicorn.run(
    server.streamable_http_app(json_response=True),
    host="127.0.0.1", port=int(sys.argv[1]), log_level="error",
)
"""
"""The SDK side of the cold start: the same prebuilt functions, each registered with MCPServer
(importing `toolwire.prebuilt` for them costs the SDK side what finding the functions costs)."""


def cold_command(kind: str, port: int) -> list[str]:
    if kind == "toolwire":
        # As the installed `toolwire` script runs it.
        script = "from toolwire._console import main; main()"
        command = [sys.executable, "-c", script, "serve", "--prebuilt", "--port", str(port)]
    else:
        command = [sys.executable, "-c", SDK_PREBUILT, str(port)]
    return pinned(command, SERVER_CPU)


def cpu_so_far(pid: int) -> float:
    """CPU seconds process `pid` has used, to the nanosecond where Linux tells (schedstat)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return process_cpu(pid)


async def cold_once(kind: str) -> tuple[float, float]:
    """Seconds from spawning the server to the first answered `tools/call`, and the CPU
    seconds the server used for it (steadier on a shared machine: load slows the clock)."""
    from toolwire.mcp import McpClient

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    start = time.perf_counter()
    proc = await anyio.open_process(
        cold_command(kind, port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with anyio.fail_after(60):
            await listening(port, poll=0.005)
            async with McpClient(url, protocol="legacy", follow_changes=False) as client:
                result = await client.call_tool("calculator", {"expression": "6*7"})
        elapsed = time.perf_counter() - start
        cpu = cpu_so_far(proc.pid)  # `taskset` execs the server: the same process
        assert result.text.strip() == "42", result.text
        return elapsed, cpu
    finally:
        proc.terminate()
        with anyio.fail_after(20):
            await proc.wait()
        await proc.aclose()


async def cold(rounds: int) -> None:
    found: dict[str, list[tuple[float, float]]] = {"toolwire": [], "SDK": []}
    for turn in range(rounds):
        order = ("toolwire", "SDK") if turn % 2 == 0 else ("SDK", "toolwire")
        for kind in order:
            found[kind].append(await cold_once(kind))
    pairs = list(zip(found["toolwire"], found["SDK"], strict=True))
    ours, theirs = (
        [statistics.median(run[i] for run in found[kind]) for i in (0, 1)]
        for kind in ("toolwire", "SDK")
    )
    print(
        f"cold start to the first answered call, median of {rounds} alternating runs (load "
        f"{load_average()}): toolwire serve --prebuilt {ours[0] * 1000:.0f} ms "
        f"(CPU {ours[1] * 1000:.0f} ms), MCPServer {theirs[0] * 1000:.0f} ms "
        f"(CPU {theirs[1] * 1000:.0f} ms); toolwire/SDK, lower is better: wall "
        f"{spread([a[0] / b[0] for a, b in pairs])}, server CPU "
        f"{spread([a[1] / b[1] for a, b in pairs])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what", nargs="?", default="all", choices=("throughput", "app", "cold", "all")
    )
    parser.add_argument("--clients", default="10,100,500")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--eras", default="legacy,modern")
    parser.add_argument("--modes", default="stateful,stateless")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument(
        "--tool",
        choices=("sync", "async"),
        default="sync",
        help="serve `add` as a def (run in a worker thread) or an async def",
    )
    parser.add_argument(
        "--driver",
        choices=tuple(DRIVERS),
        default="raw",
        help="drive the servers with prepared requests (raw) or with McpClients (mcp)",
    )
    parser.add_argument(
        "--fastmcp-python",
        metavar="PATH",
        help="a Python with fastmcp and uvicorn (its own venv) that serves fastmcp in the "
        "throughput rotation; default $FASTMCP_PYTHON, else this Python if it has fastmcp",
    )
    args = parser.parse_args()
    global tool_kind, fastmcp_python
    tool_kind = os.environ["MCP_BENCH_TOOL"] = args.tool
    print(
        f"tool: {args.tool} add; driver: {args.driver}; load average {load_average()} at the start"
    )
    if args.what == "throughput" or args.what == "all":
        found = find_fastmcp(args.fastmcp_python)
        fastmcp_python = found[0] if found else None
        print(found[1] if found else "fastmcp: not found (see --fastmcp-python), left out")
    if shutil.which("taskset") and (os.cpu_count() or 1) > CLIENT_CPU:
        os.sched_setaffinity(0, {CLIENT_CPU})
    if args.what in ("throughput", "all"):
        anyio.run(
            throughput,
            args.eras.split(","),
            args.modes.split(","),
            [int(n) for n in args.clients.split(",")],
            args.rounds,
            args.calls,
            args.driver,
        )
    if args.what == "app":
        anyio.run(
            app_cpu,
            args.eras.split(","),
            args.modes.split(","),
            [int(n) for n in args.clients.split(",")],
            args.rounds,
            args.calls,
        )
    if args.what in ("cold", "all"):
        anyio.run(cold, max(args.rounds, 5))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
