"""The one ASGI layer in front of the SDK's Streamable HTTP handling.

Each request used to pass a layer per check (the query-token scrub, the bearer token, the body
cap and deadline, the watch for a client that leaves), each reading the headers again and the
later ones the body again, and then Starlette's error, exception and routing layers, before it
reached the SDK's session manager. `McpFront` does the checks in one pass over the headers,
reads the body once, and hands a request for the MCP endpoint straight to the handler behind;
the lifespan and every other path still go to the Starlette app, which answers them as before
(404, the trailing-slash redirect).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from contextlib import suppress

import anyio
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._base import scrub_query_token

__all__ = ["BearerAuth", "McpFront", "bearer_valid", "invalid_token", "refuse", "replayed"]

_WATCH_AFTER = 0.5
"""Seconds a watched request runs before the server starts watching for its client to leave.

Half a second: with a hundred clients or more a request waits longer than a few tens of
milliseconds for its turn, and at 0.05 s nearly every one paid for a watcher task; a call that
ends sooner is answered anyway (the answer to a client gone is dropped), and the long calls worth
stopping are stopped as before."""

_INVALID_TOKEN = b'{"error":"invalid_token","error_description":"A valid bearer token is required"}'


class McpFront:
    """Query-token scrub, bearer token, body cap and deadline, and cancel on disconnect.

    Args:
        mcp: What answers the MCP endpoint (the session policy, then the SDK's manager).
        routed: The Starlette app: the lifespan and every other path.
        path: The MCP endpoint's path.
        token: When set, every HTTP request needs `Authorization: Bearer <token>` (else 401).
        scrub: Cut an `access_token` out of the query string before anything logs the URL
            (the OAuth guard does it itself when there is one).
        max_bytes: The largest request body read; past it, 413 unread.
        timeout: Seconds a client may take to send its body (else 408); `None` waits.
        watch_every_era: Watch handshake-era requests for a client that leaves too (a
            stateless server: no session for `notifications/cancelled` to find the call by).
    """

    def __init__(
        self,
        mcp: ASGIApp,
        routed: ASGIApp,
        *,
        path: str,
        token: str | None,
        scrub: bool,
        max_bytes: int,
        timeout: float | None,
        watch_every_era: bool,
    ) -> None:
        self.mcp = mcp
        self.routed = routed
        self.path = path
        self.expected = token.encode() if token is not None else None
        self.scrub = scrub
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.watch_every_era = watch_every_era

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.routed(scope, receive, send)
            return
        if self.scrub:
            # MCP takes tokens in the `Authorization` header only; one sent in the URL is never
            # read, but the access log would keep it.
            query: bytes = scope.get("query_string", b"")
            if query and (b"access_token" in query.lower() or b"%" in query):
                scope["query_string"] = scrub_query_token(query)
        authorization = declared = version = None
        for key, value in scope["headers"]:
            # The first of each counts, as a lookup by name would find it.
            if key == b"authorization":
                authorization = value if authorization is None else authorization
            elif key == b"content-length":
                declared = value if declared is None else declared
            elif key == b"mcp-protocol-version":
                version = value if version is None else version
        if self.expected is not None and not bearer_valid(authorization, self.expected):
            await invalid_token(send)
            return
        method = scope["method"]
        app = self.mcp if _route_path(scope) == self.path else self.routed
        if method not in ("POST", "PUT", "PATCH"):
            await app(scope, receive, send)
            return
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await refuse(send, 413, f"Request body too large (limit {self.max_bytes} bytes)")
            return
        body = await self._read_body(receive, send)
        if body is None:
            return
        # In the 2026-07-28 revision closing the answer stream is how a client cancels a request,
        # and with JSON answers nothing else listens for that disconnect.
        modern = version is not None and version.decode("latin-1") in MODERN_PROTOCOL_VERSIONS
        loop = _asyncio_loop()
        if method != "POST" or not (self.watch_every_era or modern) or loop is None:
            await app(scope, replayed(body, receive), send)
            return
        await _watched(app, scope, receive, send, body, loop)

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole body within the cap and the deadline; `None` once refused or gone."""
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.timeout) as deadline:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return None
                chunk: bytes = message.get("body", b"")
                size += len(chunk)
                if size > self.max_bytes:
                    await refuse(
                        send, 413, f"Request body too large (limit {self.max_bytes} bytes)"
                    )
                    return None
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:
            await refuse(send, 408, f"Request body not received within {self.timeout:g} seconds")
            return None
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def replayed(body: bytes, receive: Receive) -> Receive:
    """`receive` with the already read `body` handed out first again."""
    pending = [body]

    async def replay() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return replay


async def _watched(
    app: ASGIApp,
    scope: Scope,
    receive: Receive,
    send: Send,
    body: bytes,
    loop: asyncio.AbstractEventLoop,
) -> None:
    """Run the request, cancelling it if its client goes away before the answer.

    Watching costs a task, so it starts only once the request has run for `_WATCH_AFTER`
    seconds: quick answers, nearly all of them, pay for a timer alone.
    """
    pending = [body]
    # Made only when needed: nearly every request is answered without asking for more.
    gone: list[anyio.Event] = []

    async def replay() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        if not gone:
            gone.append(anyio.Event())
        await gone[0].wait()
        return {"type": "http.disconnect"}

    answered: list[bool] = []

    async def send_answer(message: Message) -> None:
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            answered.append(True)

    async def watch() -> None:
        # After the body, the server only says that the client has gone (or, once the answer
        # is out, that the exchange is over: nothing left to cancel then).
        if (await receive())["type"] == "http.disconnect":
            if not gone:
                gone.append(anyio.Event())
            gone[0].set()
            if not answered:
                request.cancel()

    watcher: list[asyncio.Task[None]] = []
    timer = loop.call_later(_WATCH_AFTER, lambda: watcher.append(loop.create_task(watch())))
    with anyio.CancelScope() as request:
        try:
            await app(scope, replay, send_answer)
        finally:
            timer.cancel()
            for task in watcher:
                task.cancel()
                with anyio.CancelScope(shield=True), suppress(asyncio.CancelledError):
                    await task


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    # The watch uses asyncio's timers; under another event loop requests pass through.
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _route_path(scope: Scope) -> str:
    """The path below the app's mount point, as Starlette's router matches it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    if not root or not path.startswith(root):
        return path
    if path == root:
        return ""
    return path[len(root) :] if path[len(root)] == "/" else path


def bearer_valid(given: bytes | None, expected: bytes) -> bool:
    """Whether an `Authorization` header value is `Bearer <expected>`."""
    scheme, _, credentials = (given or b"").partition(b" ")
    # The scheme is case-insensitive (RFC 7235), the token compared in constant time.
    return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), expected)


async def invalid_token(send: Send) -> None:
    """401, in the OAuth bearer-token error shape the SDK's own auth middleware answers."""
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer error="invalid_token"'),
                (b"content-length", str(len(_INVALID_TOKEN)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _INVALID_TOKEN})


class BearerAuth:
    """Refuse HTTP requests without `Authorization: Bearer <token>` (401), for an app that is
    not an MCP endpoint (`toolwire web`); `create_app` checks its token in `McpFront`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), None)
            if not bearer_valid(given, self.expected):
                await invalid_token(send)
                return
        await self.app(scope, receive, send)


async def refuse(send: Send, status: int, message: str) -> None:
    """A JSON-RPC error answer that also closes the connection (the body was left unread)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
