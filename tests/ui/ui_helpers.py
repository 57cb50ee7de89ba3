"""Shared helpers for the UI stream tests: a real server on a free port, SSE parsing, Node."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import uvicorn

from _ports import listening_socket

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"


@asynccontextmanager
async def serve(app: Any, port: int | None = None) -> AsyncIterator[str]:
    """Run an ASGI app with uvicorn in this event loop on `port`, else on a socket of its own
    bound before anyone knows the port (no window for another test to take it); yields its base
    URL."""
    sock = None if port else listening_socket()
    bound = int(sock.getsockname()[1]) if sock is not None else port
    config = uvicorn.Config(
        app, host="127.0.0.1", port=bound or 0, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, None if sock is None else [sock])
            with anyio.fail_after(20):
                # uvicorn offers no event for "listening"; its flag is polled, bounded above.
                while not server.started:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{bound}"
            finally:
                server.should_exit = True
    finally:
        if sock is not None:
            sock.close()


def sse_data(text: str) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded (`[DONE]` kept as the string)."""
    out: list[Any] = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: "):
                payload = line[len("data: ") :]
                out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


async def post(app: Any, body: Any) -> httpx.Response:
    """POST `body` (JSON, or raw bytes) to an ASGI app in process."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://ui.test") as client:
        if isinstance(body, bytes):
            return await client.post("/", content=body)
        return await client.post("/", json=body)


def node() -> str:
    """Node 22 from .ci/node (make setup installs it with the AG-UI client)."""
    found = NODE_MODULES / ".bin" / "node"
    if found.exists():
        return str(found)
    system = shutil.which("node")
    assert system is not None, "Node is missing: run `bash .ci/mcp-setup.sh`"
    return system


def node_env() -> dict[str, str]:
    return {**os.environ, "NODE_PATH": str(NODE_MODULES)}
