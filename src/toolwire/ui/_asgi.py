"""The ASGI plumbing both UI streams share: read a JSON body, answer an error, stream SSE.

Written on the raw ASGI interface rather than on Starlette, so the core keeps its small set of
dependencies (Starlette only arrives with the `mcp` extra) and the two endpoints mount anywhere.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import aclosing
from typing import Any, TypeAlias

import anyio

__all__ = [
    "ASGIApp",
    "BadRequest",
    "Receive",
    "Scope",
    "Send",
    "lifespan",
    "read_json",
    "send_json",
    "serve_stream",
    "stream_sse",
]

Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send: TypeAlias = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 16 * 1024 * 1024
"""The largest request body a UI endpoint reads (a whole conversation comes with each run)."""


class BadRequest(Exception):
    """A request the endpoint refuses before any run starts; answered as JSON."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer an ASGI lifespan conversation (the endpoints hold nothing to start or stop)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def read_json(scope: Scope, receive: Receive, limit: int = MAX_BODY) -> Any:
    """The request's JSON body.

    Raises:
        BadRequest: not a POST, a body over `limit` bytes, or a body that is not JSON.
    """
    if scope.get("method") != "POST":
        raise BadRequest("send the run as a JSON body with POST", status=405)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BadRequest("the client left before sending its request", status=400)
        body: bytes = message.get("body", b"")
        size += len(body)
        if size > limit:
            raise BadRequest(f"the request body is over {limit} bytes", status=413)
        chunks.append(body)
        if not message.get("more_body", False):
            break
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the request body is not JSON: {exc}") from None


async def send_json(send: Send, status: int, body: Any) -> None:
    """A whole JSON response."""
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def stream_sse(
    receive: Receive,
    send: Send,
    chunks: AsyncGenerator[str],
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """Send `chunks` (SSE text) as they come; a client that leaves cancels the producer.

    The producer runs inside a cancel scope that a disconnect (or a failed send) cancels, so a
    run streamed by it stops at once and closes with its history whole.
    """
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
                *headers,
            ],
        }
    )
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            async with aclosing(chunks):
                async for chunk in chunks:
                    await send(
                        {"type": "http.response.body", "body": chunk.encode(), "more_body": True}
                    )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client is gone; its run was closed with the generator
        group.cancel_scope.cancel()


async def serve_stream(
    scope: Scope,
    receive: Receive,
    send: Send,
    open_stream: Callable[[Any], AsyncGenerator[str]],
    headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    """One UI endpoint's request: the lifespan answered, a POSTed JSON body turned by
    `open_stream` into SSE text streamed back, or its `BadRequest` answered with its status."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    try:
        chunks = open_stream(await read_json(scope, receive))
    except BadRequest as exc:
        await send_json(send, exc.status, {"error": str(exc)})
        return
    await stream_sse(receive, send, chunks, headers)
