"""The inspector's record of the raw JSON-RPC exchange with the inspected server.

`McpClient` has no hook for its raw messages, so they are recorded where they pass. Over HTTP an
`httpx2` transport under the client's HTTP client keeps each request body it sends and each
JSON or SSE answer it reads. Over stdio the SDK owns the pipe, so `LoggedTransport` wraps the
client's transport and records each request and its result (or error) as JSON-RPC messages, with
ids of its own count; the SDK's handshake shows as one entry with what the server said of itself.
Bodies are cut at `_BODY_CHARS`; the last `_EXCHANGE_LIMIT` messages are kept. Headers are never
recorded (they carry the credentials).
"""

from __future__ import annotations

import json
import time
import typing
from collections import deque
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2

from ..mcp._content import McpError
from ..mcp._transport import McpClientOptions, McpTransport

__all__ = ["Exchange", "LoggedTransport", "Recording"]

_EXCHANGE_LIMIT = 500
_BODY_CHARS = 20_000


class Exchange:
    """The JSON-RPC messages of the inspected session, oldest first, bounded."""

    def __init__(self) -> None:
        self.entries: deque[dict[str, Any]] = deque(maxlen=_EXCHANGE_LIMIT)
        self.count = 0

    def add(self, direction: str, http: str, body: str) -> None:
        self.count += 1
        cut = len(body) > _BODY_CHARS
        self.entries.append(
            {
                "n": self.count,
                "direction": direction,
                "http": http,
                "body": body[:_BODY_CHARS] + (" …" if cut else ""),
                "time": time.time(),
            }
        )


class _Tee(httpx2.AsyncByteStream):
    """An answer's body, passed on as read and recorded when it ends (JSON, or SSE events)."""

    def __init__(self, inner: httpx2.AsyncByteStream, sse: bool, record: Exchange, http: str):
        self.inner = inner
        self.sse = sse
        self.record = record
        self.http = http
        self.buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            if self.sse:  # whole events are taken off as they end; the client bounds each one
                self.buffer += chunk
                self._events()
            elif len(self.buffer) < _BODY_CHARS * 4:  # enough to show; the record is cut anyway
                self.buffer += chunk
            yield chunk

    def _events(self) -> None:
        # Each SSE event is recorded as it ends, so a long stream shows its messages live.
        text = self.buffer.replace(b"\r\n", b"\n")
        while (end := text.find(b"\n\n")) >= 0:
            block, text = text[:end], text[end + 2 :]
            data = [
                line[5:].removeprefix(b" ")
                for line in block.split(b"\n")
                if line.startswith(b"data:")
            ]
            if data and any(data):
                self.record.add("received", self.http, b"\n".join(data).decode(errors="replace"))
        self.buffer = text

    async def aclose(self) -> None:
        if not self.sse and self.buffer:
            self.record.add("received", self.http, self.buffer.decode(errors="replace"))
        self.buffer = b""
        await self.inner.aclose()


class Recording(httpx2.AsyncBaseTransport):
    def __init__(self, record: Exchange, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self.record = record

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        http = f"{request.method} {request.url.path}"
        try:
            body = request.content.decode(errors="replace")
        except httpx2.RequestNotRead:  # a streamed upload: MCP clients send none
            body = ""
        if body or request.method != "POST":
            self.record.add("sent", http, body or f"({request.method}, no body)")
        response = await self.inner.handle_async_request(request)
        kind = response.headers.get("content-type", "")
        http_back = f"{response.status_code} {kind.split(';')[0] or 'no body'}"
        stream = typing.cast(httpx2.AsyncByteStream, response.stream)
        response.stream = _Tee(stream, "text/event-stream" in kind, self.record, http_back)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class LoggedTransport:
    """A transport (stdio's) whose requests and results are recorded as JSON-RPC messages."""

    def __init__(self, inner: McpTransport, record: Exchange) -> None:
        self.inner = inner
        self.record = record
        self.sent = 0

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self.inner.server_info

    @property
    def session_id(self) -> str | None:
        return self.inner.session_id

    @property
    def protocol_version(self) -> str | None:
        return self.inner.protocol_version

    async def open(self, options: McpClientOptions) -> None:
        self.record.add(
            "sent", "stdio", _dumps({"method": "initialize", "note": "sent by the SDK"})
        )
        await self.inner.open(options)
        said = {"protocolVersion": self.protocol_version, "serverInfo": self.server_info}
        self.record.add("received", "stdio", _dumps({"result": said}))

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        self.sent += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.sent, "method": method}
        if params is not None:
            message["params"] = params
        self.record.add("sent", "stdio", _dumps(message))
        try:
            result = await self.inner.request(method, params, repeatable=repeatable, limit=limit)
        except McpError as exc:
            error = {"code": exc.code, "message": str(exc)}
            self.record.add("received", "stdio", _dumps({"id": self.sent, "error": error}))
            raise
        self.record.add("received", "stdio", _dumps({"id": self.sent, "result": result}))
        return result

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        self.inner.remember_tools(schemas)

    async def close(self) -> None:
        await self.inner.close()


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", **message}, default=str)
