"""The in-process transport: an MCP server's ASGI app called in this event loop, with no socket.

Requests take the whole Streamable HTTP path (`HttpTransport`, the same recovery, SSE reading and
caps); only the last step differs, where the HTTP client hands the request to the app instead of
a connection. The app's lifespan runs while the transport is open (the SDK's session manager
lives there). Unlike `httpx2.ASGITransport`, which waits for the whole answer, the answer is
streamed: a server may send events before its result, or keep a stream open (the session's GET
stream), and closing a response tells the app its client went away, as a real server would.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import httpx2
from anyio.streams.memory import MemoryObjectReceiveStream
from starlette.types import ASGIApp, Message, Scope

from ._content import McpConnectionError
from ._http import DEFAULT_MAX_ANSWER_BYTES
from ._transport import Era, HttpTransport, McpClientOptions
from .auth import ClientCredentials, CrossAppAccess, OAuth

__all__ = ["AsgiTransport"]

logger = logging.getLogger("toolwire.mcp")

_CLIENT_ADDRESS = ("127.0.0.1", 50000)
"""Where requests seem to come from: a loopback client, as in a local test."""

_BUFFERED_MESSAGES = 16
"""Answer messages the app may send ahead of the reader before its `send` waits."""

_SHUTDOWN_GRACE = 5.0
"""Seconds the app's lifespan shutdown may take before its tasks are cancelled."""


class AsgiTransport(HttpTransport):
    """An MCP server's ASGI app in this process: `McpClient(app)` uses it, for tests above all.

    Works with `toolwire.mcp.create_app(...)` and the SDK's `streamable_http_app()`. Open and
    close it in the same task (as `async with McpClient(app)` does): the app's tasks run in a
    task group that lives between the two.

    Args:
        app: The ASGI app serving MCP Streamable HTTP.
        url: The address the app sees; its path must be the app's MCP endpoint. The default
            host is a loopback one, which servers' DNS-rebinding checks accept.
        lifespan: Run the app's lifespan (startup on open, shutdown on close); an app without
            one is served all the same.
        auth_token, auth, headers, session_id, protocol, max_answer_bytes: As for
            `HttpTransport`.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        url: str = "http://127.0.0.1:8000/mcp",
        lifespan: bool = True,
        auth_token: str | None = None,
        auth: OAuth | ClientCredentials | CrossAppAccess | httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        session_id: str | None = None,
        protocol: Era = "auto",
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        super().__init__(
            url,
            auth_token=auth_token,
            auth=auth,
            headers=headers,
            session_id=session_id,
            protocol=protocol,
            max_answer_bytes=max_answer_bytes,
        )
        self.app = app
        self.lifespan = lifespan
        self._stack: AsyncExitStack | None = None
        self._http: httpx2.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"AsgiTransport({self.app!r}, url={self.url!r})"

    def _client(self) -> httpx2.AsyncClient | None:
        return self._http

    async def open(self, options: McpClientOptions) -> None:
        stack = AsyncExitStack()
        self._stack = stack
        try:
            tasks = await stack.enter_async_context(anyio.create_task_group())
            # Run last: `close()` ends the session first, then the lifespan, then the tasks.
            stack.callback(tasks.cancel_scope.cancel)
            state: dict[str, Any] = {}
            if self.lifespan:
                await _Lifespan.start(self.app, state, tasks, stack)
            self._http = httpx2.AsyncClient(
                transport=_AppTransport(self.app, tasks, state),
                timeout=httpx2.Timeout(None),  # a tool may run for minutes; calls are bounded
            )
            stack.push_async_callback(self._http.aclose)
            await super().open(options)
        except BaseException:
            # Unwound here, in the task and scope that opened it (a task group must be left
            # where it was entered), not by the caller's clean-up.
            await self.close()
            raise

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            stack, self._stack, self._http = self._stack, None, None
            if stack is not None:
                await stack.aclose()


class _Lifespan:
    """The app's lifespan protocol: startup now, shutdown when the transport's stack unwinds."""

    def __init__(self, app: ASGIApp, state: dict[str, Any]) -> None:
        self.app = app
        self.state = state
        self.started = anyio.Event()
        self.stop = anyio.Event()
        self.stopped = anyio.Event()
        self.failure: str | None = None
        self._asked = False

    @classmethod
    async def start(
        cls,
        app: ASGIApp,
        state: dict[str, Any],
        tasks: anyio.abc.TaskGroup,
        stack: AsyncExitStack,
    ) -> None:
        """Run the startup, leaving the shutdown on `stack`.

        Raises:
            McpConnectionError: the app's startup failed.
        """
        lifespan = cls(app, state)
        tasks.start_soon(lifespan.run)
        await lifespan.started.wait()
        if lifespan.failure is not None:
            raise McpConnectionError(f"The MCP app's startup failed: {lifespan.failure}")
        stack.push_async_callback(lifespan.shut_down)

    async def run(self) -> None:
        scope: Scope = {
            "type": "lifespan",
            "asgi": {"version": "3.0", "spec_version": "2.0"},
            "state": self.state,
        }
        try:
            await self.app(scope, self.receive, self.send)
        except Exception as exc:
            # An app without a lifespan refuses the scope type: it is served without one. An
            # app whose startup raised has failed.
            if self._asked and not self.started.is_set():
                self.failure = str(exc) or type(exc).__name__
        finally:
            self.started.set()
            self.stopped.set()

    async def receive(self) -> Message:
        if not self._asked:
            self._asked = True
            return {"type": "lifespan.startup"}
        await self.stop.wait()
        return {"type": "lifespan.shutdown"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.failed":
            # Starlette sends the whole traceback; its last line says what went wrong.
            lines = str(message.get("message") or "").strip().splitlines()
            self.failure = lines[-1] if lines else "no reason given"
        if kind.startswith("lifespan.startup."):
            self.started.set()
        elif kind.startswith("lifespan.shutdown."):
            self.stopped.set()

    async def shut_down(self) -> None:
        self.stop.set()
        with anyio.move_on_after(_SHUTDOWN_GRACE, shield=True):
            await self.stopped.wait()


class _AppTransport(httpx2.AsyncBaseTransport):
    """Hands each request to the app in a task of its own, streaming the answer back."""

    def __init__(self, app: ASGIApp, tasks: anyio.abc.TaskGroup, state: dict[str, Any]) -> None:
        self.app = app
        self.tasks = tasks
        self.state = state

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        url = request.url
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": _CLIENT_ADDRESS,
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "state": dict(self.state),
        }
        exchange = _Exchange(body)
        self.tasks.start_soon(exchange.run, self.app, scope)
        try:
            start = await exchange.messages.receive()
        except anyio.EndOfStream:
            # The app ended (or failed) without answering: a server says 500.
            exchange.end()
            return httpx2.Response(500, content=b"Internal Server Error", request=request)
        except BaseException:
            # The caller gave up waiting (cancelled, timed out): the client has gone, which is
            # how the per-request revision cancels a call.
            exchange.end()
            raise
        if start["type"] != "http.response.start":
            exchange.end()
            raise httpx2.RemoteProtocolError("the app answered without starting a response")
        headers: list[tuple[bytes, bytes]] = list(start.get("headers", []))
        return httpx2.Response(
            start["status"],
            headers=headers,
            stream=_Answer(exchange, request),
            request=request,
        )


class _Exchange:
    """One request's life between the app (`receive`, `send`) and the HTTP client."""

    def __init__(self, body: bytes) -> None:
        self._body: list[bytes] = [body]
        self._out, self.messages = anyio.create_memory_object_stream[Message](_BUFFERED_MESSAGES)
        self._over = anyio.Event()  # answered, or the client went away

    async def run(self, app: ASGIApp, scope: Scope) -> None:
        with self._out:
            try:
                await app(scope, self.receive, self.send)
            except Exception:
                # A real server logs it and drops the connection; the client sees that.
                logger.exception("the in-process MCP app failed")

    async def receive(self) -> Message:
        if self._body:
            return {"type": "http.request", "body": self._body.pop(), "more_body": False}
        await self._over.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        try:
            await self._out.send(message)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The client has gone: dropped, as uvicorn does (the app learns it from `receive`).
            await anyio.lowlevel.checkpoint()
            return
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self._over.set()

    def end(self) -> None:
        """The client is done with the answer (read or not): the app sees a disconnect."""
        self._over.set()
        self.messages.close()


class _Answer(httpx2.AsyncByteStream):
    def __init__(self, exchange: _Exchange, request: httpx2.Request) -> None:
        self._exchange = exchange
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        messages: MemoryObjectReceiveStream[Message] = self._exchange.messages
        async for message in messages:
            if message["type"] != "http.response.body":
                continue
            chunk: bytes = message.get("body", b"")
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return
        # The app stopped before the end of its answer: a dropped connection, as over a socket.
        raise httpx2.RemoteProtocolError(
            "the app ended before its answer was complete", request=self._request
        )

    async def aclose(self) -> None:
        self._exchange.end()
