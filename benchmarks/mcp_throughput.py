"""Tool calls per second over MCP Streamable HTTP on 127.0.0.1: toolwire against the official SDK.

Two comparisons, each with sequential calls and with concurrent ones:

- clients: toolwire's `McpClient` and the SDK's `Client` (its default mode, and `mode="legacy"`,
  the same protocol revision toolwire speaks) calling the same server;
- servers: toolwire's `create_app` (its default SSE answers, which carry a tool's progress, logs
  and questions, and with `json_response=True`) and the SDK's `MCPServer` (its defaults, and
  with `json_response=True`) serving the same `add(a, b)` tool, called by the same clients.

Every server runs in its own process under uvicorn, so a client and a server never share a core's
event loop; the best of several rounds is kept. Goals: a client at least 0.95x the SDK's, a
server at least 1.0x `MCPServer`.

Then a load test: 1, 10, 100 and 500 concurrent clients (each its own `McpClient`, so its own
connections and session) share the calls against each server; it reports calls/s, the ratio of
toolwire's server to the SDK's, and every failed call (the goal: none).

Run: `.venv/bin/python benchmarks/mcp_throughput.py [CALLS]`, or `--load [CALLS]` for the load test
alone (needs the `mcp` extra).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROUNDS = 5
CONCURRENCY = 16
LOAD_CLIENTS = (1, 10, 100, 500)


# --- servers (run as `python benchmarks/mcp_throughput.py --serve KIND PORT`) ---------------------------


def toolwire_app(json_response: bool = False) -> Any:
    from toolwire import tool
    from toolwire.mcp import create_app

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return create_app([add], name="bench", json_response=json_response)


def sdk_app(json_response: bool) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.streamable_http_app(json_response=json_response)


SERVERS: dict[str, Callable[[], Any]] = {
    "toolwire": toolwire_app,
    "toolwire(json)": lambda: toolwire_app(json_response=True),
    "MCPServer": lambda: sdk_app(json_response=False),
    "MCPServer(json)": lambda: sdk_app(json_response=True),
}


def serve(kind: str, port: int) -> None:
    import uvicorn

    uvicorn.run(SERVERS[kind](), host="127.0.0.1", port=port, log_level="error")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def running(kind: str) -> AsyncIterator[tuple[str, int]]:
    port = free_port()
    proc = await anyio.open_process(
        [sys.executable, __file__, "--serve", kind, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.05)
                    continue
                await stream.aclose()
                break
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        proc.terminate()
        with anyio.fail_after(10):
            await proc.wait()
        await proc.aclose()


# --- clients: each yields an `add` caller over one open session ------------------------------

Caller = Callable[[int], Awaitable[None]]


@asynccontextmanager
async def toolwire_client(url: str) -> AsyncIterator[Caller]:
    from toolwire.mcp import McpClient

    async with McpClient(url) as client:

        async def call(i: int) -> None:
            result = await client.call_tool("add", {"a": i, "b": 1})
            assert not result.is_error, result.text

        yield call


def sdk_client(mode: str) -> Callable[[str], Any]:
    @asynccontextmanager
    async def open_client(url: str) -> AsyncIterator[Caller]:
        from mcp import Client

        async with Client(url, mode=mode) as client:

            async def call(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 1})
                assert not result.is_error

            yield call

    return open_client


CLIENTS: dict[str, Callable[[str], Any]] = {
    "toolwire McpClient": toolwire_client,
    "SDK Client": sdk_client("auto"),
    "SDK Client(legacy)": sdk_client("legacy"),
}


@dataclass
class Sample:
    """One round: wall-clock rate, and CPU microseconds per call on each side."""

    rate: float
    client_us: float
    server_us: float


def server_cpu(pid: int) -> float:
    """CPU seconds the server process has used (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run_round(call: Caller, pid: int, calls: int, concurrency: int) -> Sample:
    async def worker(counter: Iterator[int]) -> None:
        for i in counter:
            await call(i)

    shared = iter(range(calls))
    start, cpu, srv = time.perf_counter(), time.process_time(), server_cpu(pid)
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker, shared)
    wall = time.perf_counter() - start
    return Sample(
        rate=calls / wall,
        client_us=(time.process_time() - cpu) / calls * 1e6,
        server_us=(server_cpu(pid) - srv) / calls * 1e6,
    )


def best(samples: list[Sample]) -> Sample:
    """The best of each figure over the rounds: the least disturbed by other load."""
    return Sample(
        rate=max(s.rate for s in samples),
        client_us=min(s.client_us for s in samples),
        server_us=min(s.server_us for s in samples),
    )


async def measure(server: str, client: str, calls: int) -> tuple[Sample, Sample]:
    async with running(server) as (url, pid), CLIENTS[client](url) as call:
        for i in range(50):  # warm up connections and caches
            await call(i)
        seq = [await run_round(call, pid, calls, 1) for _ in range(ROUNDS)]
        conc = [await run_round(call, pid, calls, CONCURRENCY) for _ in range(ROUNDS)]
        return best(seq), best(conc)


async def main(calls: int) -> None:
    print(
        f"{calls} calls of add(a, b) per round, best of {ROUNDS} rounds; concurrent: {CONCURRENCY} tasks"
    )
    print(
        "calls/s is wall-clock; CPU is microseconds per call in each process (steadier on a busy machine)"
    )
    header = f"{'server':<16} {'client':<19} {'calls/s':>8} {'client CPU':>11} {'server CPU':>11}"
    results: dict[tuple[str, str, str], Sample] = {}
    rows: list[str] = []
    for server in SERVERS:
        for client in CLIENTS:
            seq, conc = await measure(server, client, calls)
            results[server, client, "sequential"] = seq
            results[server, client, "concurrent"] = conc
            for mode, sample in (("sequential", seq), ("concurrent", conc)):
                rows.append(
                    f"{mode:<11} {server:<16} {client:<19} {sample.rate:>8.0f} "
                    f"{sample.client_us:>9.0f}us {sample.server_us:>9.0f}us"
                )
    print(f"{'':<11} {header}")
    print("\n".join(sorted(rows, key=lambda r: r.startswith("concurrent"))))

    print(
        "\nclient: toolwire McpClient vs SDK Client on the same server (higher is better for toolwire)"
    )
    for server in SERVERS:
        for sdk in ("SDK Client", "SDK Client(legacy)"):
            parts = []
            for mode in ("sequential", "concurrent"):
                ours, theirs = (
                    results[server, "toolwire McpClient", mode],
                    results[server, sdk, mode],
                )
                parts.append(
                    f"{mode} {ours.rate / theirs.rate:.2f}x calls/s, "
                    f"{theirs.client_us / ours.client_us:.2f}x per client CPU"
                )
            print(f"  {server:<16} vs {sdk:<19} " + "; ".join(parts))
    print(
        "\nserver: toolwire's create_app vs MCPServer, same client (higher is better for toolwire)"
    )
    for client in CLIENTS:
        for sdk in ("MCPServer", "MCPServer(json)"):
            parts = []
            for mode in ("sequential", "concurrent"):
                ours, theirs = results["toolwire", client, mode], results[sdk, client, mode]
                parts.append(
                    f"{mode} {ours.rate / theirs.rate:.2f}x calls/s, "
                    f"{theirs.server_us / ours.server_us:.2f}x per server CPU"
                )
            print(f"  {client:<19} vs {sdk:<16} " + "; ".join(parts))


# --- load: many clients at once -------------------------------------------------------------


@dataclass
class Load:
    rate: float
    errors: int
    first_error: str | None


async def load_round(url: str, clients: int, calls: int) -> Load:
    """`clients` McpClients, connected first, then sharing `calls` calls as fast as they can."""
    from toolwire.mcp import McpClient

    failures: list[str] = []
    shared = iter(range(calls))
    async with AsyncExitStack() as stack:
        opened: list[McpClient] = []
        for _ in range(clients):
            client = McpClient(url, timeout=120)
            try:
                await stack.enter_async_context(client)
            except Exception as exc:  # a refused connection counts as failed calls
                failures.append(f"connect: {exc}")
                continue
            opened.append(client)

        async def worker(client: McpClient) -> None:
            for i in shared:
                result = await client.call_tool("add", {"a": i, "b": 1})
                if result.is_error or result.text != str(i + 1):
                    failures.append(result.text)

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for client in opened:
                tg.start_soon(worker, client)
        wall = time.perf_counter() - start
    return Load(calls / wall, len(failures), failures[0] if failures else None)


async def load_test(calls: int) -> None:
    servers = ("toolwire", "MCPServer(json)", "MCPServer")
    print(
        f"\nload: concurrent McpClients sharing max({calls}, 4 x clients) calls, "
        "best of 3 rounds (1 at 500 clients)"
    )
    print(
        f"{'clients':>7} " + " ".join(f"{s:>16}" for s in servers) + "  toolwire/SDK(json)  errors"
    )
    for clients in LOAD_CLIENTS:
        total = max(calls, 4 * clients)
        found: dict[str, Load] = {}
        for server in servers:
            async with running(server) as (url, _):
                # Opening 500 clients dominates a round: one round is enough there.
                repeats = 3 if clients <= 100 else 1
                rounds = [await load_round(url, clients, total) for _ in range(repeats)]
            fastest = max(rounds, key=lambda r: r.rate)
            errors = sum(r.errors for r in rounds)
            first = next((r.first_error for r in rounds if r.first_error), None)
            found[server] = Load(fastest.rate, errors, first)
        ratio = found["toolwire"].rate / found["MCPServer(json)"].rate
        errors = ", ".join(f"{s}: {found[s].errors}" for s in servers)
        print(
            f"{clients:>7} "
            + " ".join(f"{found[s].rate:>14.0f}/s" for s in servers)
            + f"  {ratio:>17.2f}x  {errors}"
        )
        for server in servers:
            if found[server].first_error:
                print(f"        first error from {server}: {found[server].first_error[:200]}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--load":
        anyio.run(load_test, int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    else:
        calls = int(sys.argv[1]) if len(sys.argv) > 1 else 500
        anyio.run(main, calls)
        anyio.run(load_test, max(calls, 2000))
