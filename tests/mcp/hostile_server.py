"""A hostile MCP server for the tests: answers that never end, gzip bombs, deep nesting, bad headers.

A raw ASGI app, so that each answer can break HTTP and MCP exactly as an attacker would. It speaks
the initialize handshake (refusing `server/discover`), and each tool misbehaves in its own way.
Run on its own as `python hostile_server.py PORT` (for the memory figures in the issue notes).
"""

from __future__ import annotations

import json
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import anyio
import anyio.lowlevel

Scope = dict[str, Any]
Receive = Any
Send = Any

TOOLS = [
    "endless_json",
    "endless_sse_line",
    "endless_sse_event",
    "gzip_bomb",
    "bad_gzip",
    "deep",
    "deep_structured",
    "busy",
    "busy_long",
    "busy_date",
    "bad_request",
    "echo_sse",
    "keepalive_sse",
]

CHUNK = 64 * 1024
ENDLESS_LIMIT = 8 * 1024**3
"""An "endless" answer stops here: far past any cap, and still a bound on the test's cost."""


def gzip_bomb(inflated: int) -> bytes:
    """`inflated` bytes of JSON whitespace, gzipped (about 1,000:1)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b" " * (1024 * 1024)
    out = [packer.compress(block) for _ in range(inflated // len(block))]
    out.append(packer.flush())
    return b"".join(out)


class Hostile:
    """The ASGI app. `bomb_bytes` sets the gzip bomb's inflated size."""

    def __init__(self, bomb_bytes: int = 64 * 1024 * 1024) -> None:
        self.calls: Counter[str] = Counter()
        self.bomb_bytes = bomb_bytes
        self._bomb: bytes | None = None

    def bomb(self) -> bytes:
        if self._bomb is None:
            self._bomb = gzip_bomb(self.bomb_bytes)
        return self._bomb

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["method"] == "DELETE":
            await _respond(send, 200, b"")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = json.loads(body)
        if "id" not in request:
            await _respond(send, 202, b"")
            return
        method, rid = request["method"], request["id"]
        if method == "initialize":
            session = b"s\xc3\xa9ssion" if scope["path"] == "/bad-session" else b"hostile-1"
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "0"},
            }
            await _respond(send, 200, _answer(rid, result), [(b"mcp-session-id", session)])
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]
            await _respond(send, 200, _answer(rid, {"tools": tools}))
        elif method == "tools/call":
            name = request["params"]["name"]
            self.calls[name] += 1
            await self.call(name, rid, receive, send)
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await _respond(send, 200, json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}))

    async def call(self, name: str, rid: int, receive: Receive, send: Send) -> None:
        prefix = f'{{"jsonrpc":"2.0","id":{rid},"result":{{"content":[{{"type":"text","text":"'
        if name == "endless_json":
            await _endless(send, receive, prefix.encode(), b"x" * CHUNK, "application/json")
        elif name == "endless_sse_line":
            await _endless(send, receive, b"data: ", b"x" * CHUNK, "text/event-stream")
        elif name == "endless_sse_event":
            # Short lines, but no blank line ever ends the event.
            await _endless(send, receive, b"", b"data: xxxxxxxx\n" * 4096, "text/event-stream")
        elif name == "gzip_bomb":
            await _respond(send, 200, self.bomb(), [(b"content-encoding", b"gzip")])
        elif name == "bad_gzip":
            text = {"content": [{"type": "text", "text": "plain"}]}
            await _respond(send, 200, _answer(rid, text), [(b"content-encoding", b"gzip")])
        elif name == "deep":
            deep = "[" * 100_000 + "]" * 100_000
            await _respond(send, 200, f'{{"jsonrpc":"2.0","id":{rid},"result":{deep}}}')
        elif name == "deep_structured":
            # Shallow enough for json.loads, deep enough to trouble any recursive reader.
            nested = '{"a":' * 950 + "1" + "}" * 950
            text = f'{{"content":[],"structuredContent":{nested}}}'
            await _respond(send, 200, f'{{"jsonrpc":"2.0","id":{rid},"result":{text}}}')
        elif name in ("busy", "busy_long", "busy_date"):
            # Busy twice, then the answer; `busy_long` asks for an hour, `busy_date` an HTTP date.
            if self.calls[name] <= 2:
                after = {
                    "busy": b"0",
                    "busy_long": b"3600",
                    "busy_date": b"Wed, 21 Oct 2015 07:28:00 GMT",
                }[name]
                status = 503 if name == "busy_date" else 429
                await _respond(send, status, b"slow down", [(b"retry-after", after)], "text/plain")
                return
            ran = {"content": [{"type": "text", "text": f"ran after {self.calls[name]} tries"}]}
            await _respond(send, 200, _answer(rid, ran))
        elif name == "bad_request":
            error = {"code": -32602, "message": "Bad Request: arguments are wrong"}
            await _respond(send, 400, json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}))
        elif name == "keepalive_sse":
            # Not hostile: 2 MiB of keep-alive comments, each its own (empty) event, then the
            # answer. Only one event counts against the cap, never the whole stream.
            await _start(send, 200, "text/event-stream")
            for _ in range(32):
                comments = b": keep-alive\n\n" * 4096
                await send({"type": "http.response.body", "body": comments, "more_body": True})
            answer = _answer(rid, {"content": [{"type": "text", "text": "kept"}]})
            await send({"type": "http.response.body", "body": f"data: {answer}\n\n".encode()})
        elif name == "echo_sse":
            # A well-formed SSE answer split at awkward places: CRLF torn across chunks.
            event = f"id: 1\r\ndata: {_answer(rid, {'content': [{'type': 'text', 'text': 'ok'}]})}\r\n\r\n"
            raw = event.encode()
            await _start(send, 200, "text/event-stream")
            for i in range(0, len(raw), 7):
                await send(
                    {"type": "http.response.body", "body": raw[i : i + 7], "more_body": True}
                )
            await send({"type": "http.response.body", "body": b""})


def _answer(rid: int, result: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result})


async def _start(
    send: Send, status: int, content_type: str, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    headers = [(b"content-type", content_type.encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _respond(
    send: Send,
    status: int,
    body: str | bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
    content_type: str = "application/json",
) -> None:
    raw = body.encode() if isinstance(body, str) else body
    headers = [(b"content-length", str(len(raw)).encode()), *(extra or [])]
    await _start(send, status, content_type, headers)
    await send({"type": "http.response.body", "body": raw})


async def _endless(send: Send, receive: Receive, head: bytes, piece: bytes, kind: str) -> None:
    """Stream `head` then `piece` over and over, until the client leaves."""
    await _start(send, 200, kind)
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch)
        await send({"type": "http.response.body", "body": head, "more_body": True})
        sent = 0
        while sent < ENDLESS_LIMIT:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            sent += len(piece)
            await anyio.lowlevel.checkpoint()
        await send({"type": "http.response.body", "body": b""})
        group.cancel_scope.cancel()


if __name__ == "__main__":
    import uvicorn

    app = Hostile(bomb_bytes=int(sys.argv[2]) if len(sys.argv) > 2 else 1024**3)
    app.bomb()  # built before serving, so a measured call does not wait for it
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
