"""Listing 100,000 tools from an MCP server: time and peak memory, as ratios against the goals.

The server is toolwire's own (`create_app`, 1,000 tools per `tools/list` page), with generated
tools realistic in shape: a service, an action and an object per name, a sentence or two of
description, one to four described parameters (ids, limits, enums, dates, arrays). Each listed
schema is a distinct object on the client, as it is when decoded from the wire. Like tools made
from one API description, they repeat: 100,000 hold 29,660 distinct input schemas and 2,592
distinct descriptions, which the client keeps once each (`McpToolSpec` keeps schemas packed).
Kept apart, they peak at 153 MB instead of 126; tools that all differ (each given one more
parameter and a sentence of its own) peak at 158 MB.

Measured on the client, each figure in a fresh process (the server is built before, so its cost
is never counted):

1. Over HTTP: the server runs in its own process (uvicorn); the client connects, then
   `await client.tools()` lists every page and wraps each tool as an `McpTool`, ready to offer.
   Printed: the wall time of that call (which includes the server's work, mostly the SDK's
   pydantic round trip of each page), the client's CPU time for it (the goal's figure: the
   machine is shared, and the server is not what this measures), the client process's peak RSS
   (`VmHWM`, imports included) and the Python memory the call allocated at its peak
   (`tracemalloc`, in a second run, since tracing slows everything down).
2. In process: the same app served through `AsgiTransport` (no sockets, documented as the
   transport for tests). Server and client share the process: the CPU time printed is both
   sides', and the `tracemalloc` peak both sides' allocations during the call.

Goals: at most 2 s (client CPU) and 150 MB (peak RSS over HTTP, imports included).

Run: `.venv/bin/python benchmarks/mcp_listing.py [--tools N]` (needs the `mcp` and `serve`
extras: uvicorn).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from toolwire import ToolAnnotations, ToolContext, ToolDefinition, ToolResult, error_result
from toolwire.tools import DefinitionDialect

TIME_GOAL_S = 2.0
MEMORY_GOAL_MB = 150.0
PAGE_SIZE = 1000

SERVICES = [
    "github", "jira", "slack", "gmail", "calendar", "drive", "notion", "salesforce", "zendesk",
    "stripe", "shopify", "postgres", "datadog", "sentry", "figma", "asana", "okta", "zoom",
]  # fmt: skip
ACTIONS = ["create", "get", "list", "update", "delete", "search", "archive", "export"]
OBJECTS = [
    "issue", "comment", "message", "channel", "event", "file", "customer", "invoice", "order",
    "page", "ticket", "contact", "deal", "user", "report", "alert", "task", "payment",
]  # fmt: skip
PARAMETERS: list[tuple[str, dict[str, Any]]] = [
    ("limit", {"type": "integer", "minimum": 1, "maximum": 100, "description": "Items per page."}),
    ("cursor", {"type": "string", "description": "The page cursor a previous call returned."}),
    ("query", {"type": "string", "description": "Free text matched against titles and bodies."}),
    ("status", {"type": "string", "enum": ["open", "closed", "pending"], "description": "State."}),
    ("since", {"type": "string", "format": "date-time", "description": "Only items after this."}),
    ("tags", {"type": "array", "items": {"type": "string"}, "description": "Labels to match."}),
]


def make_entries(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """`count` distinct tool definitions (name, description, parameters) as plain dicts."""
    rng = random.Random(seed)
    entries: list[dict[str, Any]] = []
    for number in range(count):
        svc, action, obj = rng.choice(SERVICES), rng.choice(ACTIONS), rng.choice(OBJECTS)
        properties: dict[str, Any] = {
            f"{obj}_id": {"type": "string", "description": f"The {svc} id of the {obj}."}
        }
        for name, schema in rng.sample(PARAMETERS, rng.randint(0, 3)):
            properties[name] = schema
        entries.append(
            {
                "name": f"{svc}_{action}_{obj}_{number}",
                "description": f"{action.capitalize()} a {obj} in {svc.capitalize()}. "
                "Requires the workspace's API token.",
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": [f"{obj}_id"],
                },
            }
        )
    return entries


class Listed:
    """A schema-only tool that only describes itself: the server is built in seconds, not the
    minutes 100,000 `tool(parameters=...)` take to check and compile, and it is never called."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.name: str = entry["name"]
        self.description: str = entry["description"]
        self.parameters: dict[str, Any] = entry["parameters"]
        self.strict = False
        self.annotations = ToolAnnotations()
        self.output_schema: dict[str, Any] | None = None
        self.timeout: float | None = None
        self.sequential = False
        self.requires_approval = False
        self.executable = False

    def parse_args(self, raw: str | bytes | Mapping[str, Any] | None) -> Any:
        raise NotImplementedError

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        return error_result("only listed")

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.parameters, strict=False)


def make_app(count: int) -> Any:
    from toolwire.mcp import create_app

    tools = [Listed(entry) for entry in make_entries(count)]
    return create_app(tools, page_size=PAGE_SIZE, json_response=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(port: int, seconds: float = 600) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _list(target: Any, count: int, traced: bool) -> dict[str, float]:
    from toolwire.mcp import McpClient

    async with McpClient(target, timeout=600) as client:
        rss_before = _status_mb("VmRSS")
        if traced:
            tracemalloc.start()
        started, cpu = time.perf_counter(), time.process_time()
        tools = await client.tools()
        took, cpu = time.perf_counter() - started, time.process_time() - cpu
        figures = {
            "seconds": took,
            "cpu_seconds": cpu,
            "rss_before_mb": rss_before,
            "peak_rss_mb": _status_mb("VmHWM"),
        }
        if traced:
            figures["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1024 / 1024
            tracemalloc.stop()
        if len(tools) != count:
            raise RuntimeError(f"listed {len(tools)} tools, expected {count}")
    return figures


def client_run(target: str, count: int, traced: bool) -> None:
    """One measurement in this (fresh) process; prints its figures as JSON."""
    if target == "asgi":
        app = make_app(count)
        figures = anyio.run(_list, app, count, traced)
    else:
        figures = anyio.run(_list, target, count, traced)
    print(json.dumps(figures))


def _measure(target: str, count: int, traced: bool, env: dict[str, str]) -> dict[str, float]:
    args = [sys.executable, __file__, "--client", target, "--tools", str(count)]
    if traced:
        args.append("--traced")
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _line(label: str, value: float, unit: str, goal: float) -> str:
    return f"  {label:<44} {value:8.2f} {unit:<3} ratio to goal {value / goal:5.2f} (goal <= 1)"


def main(count: int) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--server", str(port), "--tools", str(count)], env=env
    )
    try:
        _wait(port)
        url = f"http://127.0.0.1:{port}/mcp"
        plain = _measure(url, count, False, env)
        traced = _measure(url, count, True, env)
    finally:
        server.terminate()
        server.wait()
    print(f"{count:,} tools over HTTP ({PAGE_SIZE:,} a page), client.tools():")
    print(_line("wall time (the server's work included)", plain["seconds"], "s", TIME_GOAL_S))
    print(_line("client CPU time", plain["cpu_seconds"], "s", TIME_GOAL_S))
    print(_line("client peak RSS (imports included)", plain["peak_rss_mb"], "MB", MEMORY_GOAL_MB))
    print(f"  {'  of which before listing':<44} {plain['rss_before_mb']:8.2f} MB")
    print(_line("Python memory the call allocated, at peak", traced["traced_peak_mb"], "MB",
                MEMORY_GOAL_MB))  # fmt: skip
    plain = _measure("asgi", count, False, env)
    traced = _measure("asgi", count, True, env)
    print(f"{count:,} tools in process (AsgiTransport), client.tools():")
    print(_line("time, server and client (CPU time)", plain["cpu_seconds"], "s", TIME_GOAL_S))
    print(_line("Python memory the call allocated, at peak", traced["traced_peak_mb"], "MB",
                MEMORY_GOAL_MB))  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=100_000)
    parser.add_argument("--server", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.server is not None:
        import uvicorn

        uvicorn.run(
            make_app(options.tools), host="127.0.0.1", port=options.server, log_level="error"
        )
    elif options.client is not None:
        client_run(options.client, options.tools, options.traced)
    else:
        main(options.tools)
