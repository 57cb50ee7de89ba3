"""Tool calls per second from `toolwire serve --stateless` with 1 and with N worker processes.

The server runs as users run it (`toolwire serve --stateless --tools ...`), in its own process
tree; the load comes from separate client processes (`LOAD_PROCESSES` of them, each with its own
event loop and `CLIENTS // LOAD_PROCESSES` connected `McpClient`s), so neither side's event loop
caps the other. Every configuration serves two tools:

- `add(a, b)`: nearly free, so the figure is MCP and HTTP overhead per call;
- `digest(rounds)`: a CPU-bound sync tool (SHA-256 rounds, about a millisecond), the case workers
  exist for, since one process runs Python code on one core at a time.

Each row is the best of `ROUNDS` rounds; it prints calls/s, the ratio to the single process, the
server's CPU per call (all its processes), and every failed call (the goal: none). On a machine
with C cores, N workers can help up to about min(N, C) times, less what the clients' own processes
take from the same cores.

Run: `.venv/bin/python benchmarks/serve.py [CALLS] [--workers 1,2,4]` (needs the `mcp` and `cli`
extras).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROUNDS = 3
CLIENTS = 64
LOAD_PROCESSES = 2
WORKERS = (1, 2, 4)
DIGEST_ROUNDS = 2000


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def digest(rounds: int) -> str:
    """Hash a block `rounds` times (CPU-bound)."""
    value = b"toolwire"
    for _ in range(rounds):
        value = hashlib.sha256(value).digest()
    return value.hex()[:16]


TOOLS = [add, digest]
ARGUMENTS: dict[str, Any] = {"add": {"a": 1, "b": 2}, "digest": {"rounds": DIGEST_ROUNDS}}


# --- the server ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(workers: int | None) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "toolwire.cli", "serve", "--stateless"]
    command += ["--port", str(free_port()), "--tools", f"{Path(__file__).resolve()}:TOOLS"]
    if workers is not None:
        command += ["--workers", str(workers)]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=Path.cwd()
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()  # printed once every worker accepts connections
    if not url:
        raise SystemExit(f"the server did not start (exit code {proc.wait()})")
    return proc, url


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=60)
    if proc.stdout is not None:
        proc.stdout.close()


def tree_cpu(pid: int) -> float:
    """CPU seconds used by `pid` and its children (Linux /proc; 0 elsewhere)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if entry.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# --- the load (run as `python benchmarks/serve.py --load URL TOOL CLIENTS CALLS`) ---------------


async def load(url: str, tool: str, clients: int, calls: int) -> None:
    """Connect `clients` McpClients, say so, wait for a line on stdin, then share `calls` calls;
    print when it started and ended, and the failures."""
    from contextlib import AsyncExitStack

    import anyio

    from toolwire.mcp import McpClient

    failures: list[str] = []
    shared = iter(range(calls))
    async with AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(McpClient(url, timeout=120)) for _ in range(clients)
        ]
        for client in opened:  # warm each connection up
            await client.call_tool(tool, ARGUMENTS[tool])
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)

        async def worker(client: McpClient) -> None:
            for _ in shared:
                result = await client.call_tool(tool, ARGUMENTS[tool])
                if result.is_error:
                    failures.append(result.text)

        start = time.time()
        async with anyio.create_task_group() as group:
            for client in opened:
                group.start_soon(worker, client)
        end = time.time()
    print(
        json.dumps({"start": start, "end": end, "failures": failures[:3], "failed": len(failures)})
    )


def run_round(url: str, tool: str, calls: int, server_pid: int) -> tuple[float, float, int, str]:
    """calls/s over all load processes, server CPU microseconds per call, failures, first one."""
    share = [str(CLIENTS // LOAD_PROCESSES), str(calls // LOAD_PROCESSES)]
    loaders = [
        subprocess.Popen(
            [sys.executable, __file__, "--load", url, tool, *share],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(LOAD_PROCESSES)
    ]
    for loader in loaders:
        assert loader.stdout is not None
        line = loader.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"a load process failed: {line!r}")
    cpu = tree_cpu(server_pid)
    for loader in loaders:
        assert loader.stdin is not None
        loader.stdin.write("go\n")
        loader.stdin.flush()
    reports = []
    for loader in loaders:
        out, _ = loader.communicate(timeout=600)
        reports.append(json.loads(out.strip().splitlines()[-1]))
    used = tree_cpu(server_pid) - cpu
    wall = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    failed = sum(r["failed"] for r in reports)
    first = next((r["failures"][0] for r in reports if r["failures"]), "")
    done = (calls // LOAD_PROCESSES) * LOAD_PROCESSES
    return done / wall, used / done * 1e6, failed, first


def main(calls: int, workers: tuple[int, ...]) -> None:
    print(
        f"{calls} calls per round from {CLIENTS} McpClients in {LOAD_PROCESSES} processes, "
        f"best of {ROUNDS} rounds; {os.cpu_count()} CPUs"
    )
    print(
        f"{'tool':<8} {'server':<22} {'calls/s':>8} {'vs 1 process':>13} {'server CPU':>11}  errors"
    )
    names = {None: "1 process", **{n: f"--workers {n}" for n in workers}}
    # Every server runs for the whole benchmark and the rounds take turns, so a burst of load from
    # elsewhere on the machine falls on all of them alike rather than on one configuration.
    servers: dict[int | None, tuple[subprocess.Popen[str], str]] = {}
    try:
        for count in names:
            servers[count] = start_server(count)
        for tool in ("add", "digest"):
            rounds: dict[int | None, list[tuple[float, float, int, str]]] = {n: [] for n in names}
            for _ in range(ROUNDS):
                for count, (proc, url) in servers.items():
                    rounds[count].append(run_round(url, tool, calls, proc.pid))
            base = max(r[0] for r in rounds[None])
            for count, found in rounds.items():
                rate = max(r[0] for r in found)
                cpu = min(r[1] for r in found)
                failed = sum(r[2] for r in found)
                first = next((r[3] for r in found if r[3]), "")
                print(
                    f"{tool:<8} {names[count]:<22} {rate:>8.0f} {rate / base:>12.2f}x "
                    f"{cpu:>9.0f}us  {failed}" + (f" (first: {first[:120]})" if first else "")
                )
    finally:
        for proc, _ in servers.values():
            stop_server(proc)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--load":
        import anyio

        anyio.run(load, sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        arguments = sys.argv[1:]
        chosen = WORKERS
        if "--workers" in arguments:
            at = arguments.index("--workers")
            chosen = tuple(int(n) for n in arguments[at + 1].split(","))
            del arguments[at : at + 2]
        main(int(arguments[0]) if arguments else 4000, chosen)
