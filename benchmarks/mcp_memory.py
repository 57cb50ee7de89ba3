"""Peak memory (RSS) of toolwire's MCP client and server under hostile peers.

Client: `McpClient` calls each misbehaving tool of the hostile test server (an endless JSON body,
an endless SSE line, an SSE event that never ends, a gzip bomb of 1 GiB inflated from about 1 MB),
each in a fresh process, and reports that process's peak RSS and how long the call took.

Server: a toolwire `create_app` server in its own process receives a 100 MB and a 1 GiB chunked
upload (on the 2026-07-28 revision, the one that used to read whole bodies); its peak RSS is read
from /proc (Linux) afterwards.

Run: `.venv/bin/python benchmarks/mcp_memory.py` (needs the `mcp` extra).
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "mcp"
CASES = ["endless_json", "endless_sse_line", "endless_sse_event", "gzip_bomb"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def client_case(case: str, url: str) -> None:
    from toolwire.mcp import McpClient

    async def main() -> None:
        async with McpClient(url, timeout=60) as client:
            await client.list_tools()
            before = _peak_mb()
            started = time.perf_counter()
            result = await client.call_tool(case)
            took = time.perf_counter() - started
        print(
            f"{case:<18} peak RSS {_peak_mb():6.0f} MB (before the call {before:4.0f} MB), "
            f"{took:5.2f} s -> {result.text[:70]}"
        )

    anyio.run(main)


def server_app(port: int) -> None:
    import uvicorn

    from toolwire import tool
    from toolwire.mcp import create_app

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    uvicorn.run(create_app([add]), host="127.0.0.1", port=port, log_level="error")


def _upload(port: int, total: int) -> str:
    head = (
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n"
        "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
        "mcp-protocol-version: 2026-07-28\r\n\r\n"
    )
    piece = b"x" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.encode())
        sent = 0
        try:
            while sent < total:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
            sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed mid-upload, as it should
        status = sock.recv(64).split(b"\r\n")[0].decode()
    return f"{status} after {sent / 1024 / 1024:.0f} MB sent"


def _vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{ROOT / 'src'}"}
    port = _free_port()
    hostile = subprocess.Popen(
        [sys.executable, str(TESTS / "hostile_server.py"), str(port), str(1024**3)], env=env
    )
    try:
        _wait(port)
        print("client (max_answer_bytes = 32 MiB):")
        for case in CASES:
            url = f"http://127.0.0.1:{port}/mcp"
            subprocess.run([sys.executable, __file__, "--client", case, url], env=env, check=True)
    finally:
        hostile.terminate()
        hostile.wait()

    print("server (max_body_bytes = 4 MiB), 2026-07-28 requests:")
    for total in (100 * 1024 * 1024, 1024**3):
        port = _free_port()
        server = subprocess.Popen([sys.executable, __file__, "--server", str(port)], env=env)
        try:
            _wait(port)
            outcome = _upload(port, total)
            print(
                f"  {total / 1024 / 1024:5.0f} MB chunked upload: {outcome}; "
                f"server peak RSS {_vm_hwm_mb(server.pid):.0f} MB"
            )
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        client_case(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["--server"]:
        server_app(int(sys.argv[2]))
    else:
        main()
