"""Tool calls per second over MCP Streamable HTTP on 127.0.0.1: toolwire against the official SDK
and fastmcp.

Two comparisons, each with sequential calls and with concurrent ones:

- clients: toolwire's `McpClient`, the SDK's `Client` and fastmcp's `Client`, each in its default
  mode (2026-07-28 with a server that speaks it) and in the handshake era (`mode="legacy"`,
  `protocol="legacy"` for toolwire's), calling the same server, compared mode with mode;
- servers: toolwire's `create_app` (its default SSE answers, which carry a tool's progress, logs
  and questions, and with `json_response=True`), the SDK's `MCPServer` and fastmcp's `FastMCP`
  (their defaults, and with `json_response=True`) serving the same `add(a, b)` tool, called by
  the same clients.

Every server runs in its own process under uvicorn, so a client and a server never share a core's
event loop; the best of several rounds is kept. Goals: a client at least 0.95x the SDK's, a
server at least 1.0x `MCPServer`; ahead of fastmcp's client and server.

fastmcp is not one of toolwire's dependencies and stays out of its environment (it may pull other
versions of `mcp` or `starlette`): give it its own virtual environment outside the repository,

    python3 -m venv /work/fastmcp-venv
    /work/fastmcp-venv/bin/pip install "fastmcp==4.2.*" uvicorn anyio

and pass `--fastmcp-python /work/fastmcp-venv/bin/python` (or set `FASTMCP_PYTHON`). fastmcp's
servers run this file under that Python (`--serve KIND PORT`), and so does its client: a process
of its own (`--client NAME URL PID CALLS`) runs the same warm-up and rounds against the same
server, timing its own CPU per call with `time.process_time` as this process does for the other
clients, and hands its samples back as a JSON line. The top of this file imports only the
standard library and anyio, which both environments have. Without it, fastmcp is left out.

Then a load test: 1, 10, 100 and 500 concurrent clients (each its own `McpClient`, so its own
connections and session) share the calls against each server; it reports calls/s, the ratio of
toolwire's server to the SDK's, and every failed call (the goal: none). fastmcp's server at load,
per protocol era and mode, is in `benchmarks/mcp_server.py`.

Run: `.venv/bin/python benchmarks/mcp_throughput.py [CALLS] [--servers A,B] [--clients A,B]
[--no-load] [--fastmcp-python PATH]`, or `--load [CALLS]` for the load test alone (needs the
`mcp` extra). The client comparison alone, on toolwire's JSON server:
`.venv/bin/python benchmarks/mcp_throughput.py 2000 --no-load --servers 'toolwire(json)'
--fastmcp-python /work/fastmcp-venv/bin/python`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio

from _fastmcp import find_fastmcp

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


def fastmcp_app(json_response: bool) -> Any:
    # Imported by name: fastmcp is in its own virtual environment, not the one checked here.
    fastmcp: Any = importlib.import_module("fastmcp")
    server: Any = fastmcp.FastMCP("bench")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return server.http_app(json_response=json_response)


SERVERS: dict[str, Callable[[], Any]] = {
    "toolwire": toolwire_app,
    "toolwire(json)": lambda: toolwire_app(json_response=True),
    "MCPServer": lambda: sdk_app(json_response=False),
    "MCPServer(json)": lambda: sdk_app(json_response=True),
    "fastmcp": lambda: fastmcp_app(json_response=False),
    "fastmcp(json)": lambda: fastmcp_app(json_response=True),
}

fastmcp_python: str | None = None
"""The Python that runs fastmcp's server and client (`--fastmcp-python`, else `$FASTMCP_PYTHON`,
else this one when fastmcp is installed here); None leaves fastmcp out."""


def interpreter(kind: str) -> str:
    """The Python that runs server or client `kind` (fastmcp's own, for fastmcp's)."""
    return fastmcp_python if kind.startswith("fastmcp") and fastmcp_python else sys.executable


def serve(kind: str, port: int) -> None:
    import uvicorn

    uvicorn.run(SERVERS[kind](), host="127.0.0.1", port=port, log_level="error")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def running(kind: str) -> AsyncGenerator[tuple[str, int], None]:
    port = free_port()
    proc = await anyio.open_process(
        [interpreter(kind), __file__, "--serve", kind, str(port)],
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


def toolwire_client(protocol: str) -> Callable[[str], Any]:
    @asynccontextmanager
    async def open_client(url: str) -> AsyncGenerator[Caller, None]:
        from toolwire.mcp import McpClient

        async with McpClient(url, protocol=protocol) as client:  # type: ignore[arg-type]

            async def call(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 1})
                assert not result.is_error, result.text

            yield call

    return open_client


def sdk_client(mode: str) -> Callable[[str], Any]:
    @asynccontextmanager
    async def open_client(url: str) -> AsyncGenerator[Caller, None]:
        from mcp import Client

        async with Client(url, mode=mode) as client:

            async def call(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 1})
                assert not result.is_error

            yield call

    return open_client


def fastmcp_client(mode: str) -> Callable[[str], Any]:
    @asynccontextmanager
    async def open_client(url: str) -> AsyncGenerator[Caller, None]:
        fastmcp: Any = importlib.import_module("fastmcp")
        async with fastmcp.Client(url, mode=mode) as client:

            async def call(i: int) -> None:
                result = await client.call_tool("add", {"a": i, "b": 1}, raise_on_error=False)
                assert not result.is_error

            yield call

    return open_client


CLIENTS: dict[str, Callable[[str], Any]] = {
    "toolwire McpClient": toolwire_client("auto"),
    "toolwire McpClient(legacy)": toolwire_client("legacy"),
    "SDK Client": sdk_client("auto"),
    "SDK Client(legacy)": sdk_client("legacy"),
    "fastmcp Client": fastmcp_client("auto"),
    "fastmcp Client(legacy)": fastmcp_client("legacy"),
}
"""Every client but fastmcp's runs in this process; fastmcp's runs the same rounds in a process
of its own Python (`--client NAME URL PID CALLS`), which reports its samples back as JSON."""


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


async def client_rounds(client: str, url: str, pid: int, calls: int) -> tuple[Sample, Sample]:
    """The best sequential and concurrent samples of `client` calling the server at `url`."""
    async with CLIENTS[client](url) as call:
        for i in range(50):  # warm up connections and caches
            await call(i)
        seq = [await run_round(call, pid, calls, 1) for _ in range(ROUNDS)]
        conc = [await run_round(call, pid, calls, CONCURRENCY) for _ in range(ROUNDS)]
        return best(seq), best(conc)


async def measure(server: str, client: str, calls: int) -> tuple[Sample, Sample]:
    async with running(server) as (url, pid):
        if not client.startswith("fastmcp"):
            return await client_rounds(client, url, pid, calls)
        # The same rounds in fastmcp's own Python: its CPU per call is that process's own.
        command = [interpreter(client), __file__, "--client", client, url, str(pid), str(calls)]
        done = await anyio.run_process(command, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{client} failed: {done.stderr.decode()[-2000:]}")
        found = json.loads(done.stdout.decode().splitlines()[-1])
        return Sample(**found["sequential"]), Sample(**found["concurrent"])


def client_process(client: str, url: str, pid: int, calls: int) -> None:
    """Run `client`'s rounds in this process and print their samples as one JSON line."""
    seq, conc = anyio.run(client_rounds, client, url, pid, calls)
    print(json.dumps({"sequential": asdict(seq), "concurrent": asdict(conc)}))


async def main(calls: int, servers: list[str], clients: list[str]) -> None:
    print(
        f"{calls} calls of add(a, b) per round, best of {ROUNDS} rounds; concurrent: {CONCURRENCY} tasks"
    )
    print(
        "calls/s is wall-clock; CPU is microseconds per call in each process (steadier on a busy machine)"
    )
    header = f"{'server':<16} {'client':<26} {'calls/s':>8} {'client CPU':>11} {'server CPU':>11}"
    results: dict[tuple[str, str, str], Sample] = {}
    rows: list[str] = []
    for server in servers:
        for client in clients:
            seq, conc = await measure(server, client, calls)
            results[server, client, "sequential"] = seq
            results[server, client, "concurrent"] = conc
            for mode, sample in (("sequential", seq), ("concurrent", conc)):
                rows.append(
                    f"{mode:<11} {server:<16} {client:<26} {sample.rate:>8.0f} "
                    f"{sample.client_us:>9.0f}us {sample.server_us:>9.0f}us"
                )
    print(f"{'':<11} {header}")
    print("\n".join(sorted(rows, key=lambda r: r.startswith("concurrent"))))

    # Like against like: a client in its default mode against toolwire's default (both speak
    # 2026-07-28 to a server that does), a `(legacy)` one against toolwire's `(legacy)`.
    print(
        "\nclient: toolwire McpClient vs the SDK's and fastmcp's Client in the same mode, on the "
        "same server (higher is better for toolwire)"
    )
    for server in servers:
        for other in clients:
            ours = "toolwire McpClient" + ("(legacy)" if other.endswith("(legacy)") else "")
            if other.startswith("toolwire") or ours not in clients:
                continue
            parts: list[str] = []
            for mode in ("sequential", "concurrent"):
                mine, theirs = results[server, ours, mode], results[server, other, mode]
                parts.append(
                    f"{mode} {mine.rate / theirs.rate:.2f}x calls/s, "
                    f"{theirs.client_us / mine.client_us:.2f}x per client CPU"
                )
            print(f"  {server:<16} {ours:<26} vs {other:<22} " + "; ".join(parts))
    ours = "toolwire" if "toolwire" in servers else "toolwire(json)"
    theirs_servers = [other for other in servers if not other.startswith("toolwire")]
    if ours in servers and theirs_servers:
        print(
            f"\nserver: toolwire's create_app ({ours}) vs MCPServer and fastmcp, same client "
            "(higher is better for toolwire)"
        )
        for client in clients:
            for other in theirs_servers:
                parts = []
                for mode in ("sequential", "concurrent"):
                    mine, theirs = results[ours, client, mode], results[other, client, mode]
                    parts.append(
                        f"{mode} {mine.rate / theirs.rate:.2f}x calls/s, "
                        f"{theirs.server_us / mine.server_us:.2f}x per server CPU"
                    )
                print(f"  {client:<26} vs {other:<16} " + "; ".join(parts))


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
            first = found[server].first_error
            if first:
                print(f"        first error from {server}: {first[:200]}")


def cli() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("calls", nargs="?", type=int, default=500, help="calls a round")
    parser.add_argument(
        "--load",
        nargs="?",
        type=int,
        const=2000,
        metavar="CALLS",
        help="run the load test alone, with this many calls a round (2000)",
    )
    parser.add_argument("--no-load", action="store_true", help="leave the load test out")
    parser.add_argument("--servers", help=f"a comma list of {', '.join(SERVERS)}")
    parser.add_argument("--clients", help=f"a comma list of {', '.join(CLIENTS)}")
    parser.add_argument(
        "--fastmcp-python",
        metavar="PATH",
        help="a Python with fastmcp and uvicorn (its own venv) that runs fastmcp's server and "
        "client; default $FASTMCP_PYTHON, else this Python if it has fastmcp",
    )
    args = parser.parse_args()
    if args.load is not None:
        anyio.run(load_test, args.load)
        return
    global fastmcp_python
    found = find_fastmcp(args.fastmcp_python)
    fastmcp_python = found[0] if found else None
    print(found[1] if found else "fastmcp: not found (see --fastmcp-python), left out")
    known = [k for k in SERVERS if fastmcp_python or not k.startswith("fastmcp")]
    servers = args.servers.split(",") if args.servers else known
    callers = [k for k in CLIENTS if fastmcp_python or not k.startswith("fastmcp")]
    clients = args.clients.split(",") if args.clients else callers
    for name in servers + clients:
        if name not in known and name not in callers:
            parser.error(f"unknown or unavailable server or client: {name}")
    anyio.run(main, args.calls, servers, clients)
    if not args.no_load:
        anyio.run(load_test, max(args.calls, 2000))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--client":
        client_process(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        cli()
