"""The MCP server inspector of `toolwire web`: connect to a server by URL, list its tools,
resources and prompts, show each tool's schema as every dialect compiles it (with the changes and
the token cost), call a tool, and show the raw JSON-RPC exchange.

`McpClient` has no hook for its raw messages, so they are recorded where they pass: an
`httpx2` transport under the client's HTTP client keeps each request body it sends and each
JSON or SSE answer it reads (bodies cut at `_BODY_CHARS`, the last `_EXCHANGE_LIMIT` kept).

Routes (under the page's token and Host/Origin checks; POST bodies are JSON):
`POST /api/inspector/connect` `{url, token?}`, `POST /api/inspector/tool` `{name}`,
`POST /api/inspector/call` `{name, arguments}`, `GET /api/inspector/exchange`,
`POST /api/inspector/disconnect`. One server at a time: connecting again closes the last one.
"""

from __future__ import annotations

import time
import typing
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx2

from ..errors import SchemaError, UnsupportedError
from ..mcp._content import McpError
from ..mcp.client import McpClient, McpTool
from ..tokens import tool_cost
from ..tools import DIALECTS, compile_schema
from ..ui._asgi import BadRequest, Receive, Scope, Send, read_json, send_json

__all__ = ["Inspector"]

_EXCHANGE_LIMIT = 500
_BODY_CHARS = 20_000
_RESULT_CHARS = 200_000


class _Exchange:
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

    def __init__(self, inner: httpx2.AsyncByteStream, sse: bool, record: _Exchange, http: str):
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


class _Recording(httpx2.AsyncBaseTransport):
    def __init__(self, record: _Exchange, inner: httpx2.AsyncBaseTransport | None = None) -> None:
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


class Inspector:
    """The inspector's API: one MCP server connection at a time, and its exchange."""

    def __init__(self) -> None:
        self.exchange = _Exchange()
        self.client: McpClient | None = None
        self.http: httpx2.AsyncClient | None = None
        self.tools: dict[str, McpTool] = {}
        # A connect (or disconnect) at a time: two would each close the other's client.
        self.connecting = anyio.Lock()

    async def close(self) -> None:
        """Close the connection to the inspected server, if any."""
        client, http, self.client, self.http = self.client, self.http, None, None
        self.tools = {}
        try:
            if client is not None:
                await client.close()
        finally:
            if http is not None:
                await http.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        action = scope["path"].removeprefix("/api/inspector/")
        try:
            if action == "exchange" and scope["method"] == "GET":
                await send_json(send, 200, {"exchange": list(self.exchange.entries)})
                return
            body = await read_json(scope, receive)
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            body = typing.cast(dict[str, Any], body)
            if action == "connect":
                async with self.connecting:
                    answer = await self._connect(body)
            elif action == "tool":
                answer = self._tool(_text(body, "name"))
            elif action == "call":
                answer = await self._call(body)
            elif action == "disconnect":
                async with self.connecting:
                    await self.close()
                answer = {}
            else:
                await send_json(send, 404, {"error": f"no inspector API at {action!r}"})
                return
        except BadRequest as exc:
            await send_json(send, exc.status, {"error": str(exc)})
            return
        except McpError as exc:
            await send_json(send, 502, {"error": f"the MCP server: {exc}", **self._log()})
            return
        await send_json(send, 200, {**answer, **self._log()})

    def _log(self) -> dict[str, Any]:
        return {"exchange": list(self.exchange.entries)}

    async def _connect(self, body: dict[str, Any]) -> dict[str, Any]:
        url = _text(body, "url")
        if not url.startswith(("http://", "https://")):
            raise BadRequest("the URL must start with http:// or https://")
        token = body.get("token") or None
        if token is not None and not isinstance(token, str):
            raise BadRequest("`token` must be a string")
        await self.close()
        self.exchange = _Exchange()
        timeout = httpx2.Timeout(connect=10.0, read=None, write=10.0, pool=None)
        self.http = httpx2.AsyncClient(transport=_Recording(self.exchange), timeout=timeout)
        client = McpClient(
            url, auth_token=token, http_client=self.http, follow_changes=False, timeout=60.0
        )
        try:
            await client.connect()
        except BaseException:
            await self.close()
            raise
        self.client = client
        self.tools = {t.spec.name: t for t in await client.tools()}
        return {
            "server": client.server_info or {},
            "protocol": client.protocol_version,
            "tools": [
                {
                    "name": t.spec.name,
                    "title": t.spec.title,
                    "description": t.spec.description,
                    "requiresApproval": t.spec.requires_approval,
                    "inputSchema": t.spec.input_schema,
                }
                for t in self.tools.values()
            ],
            "resources": await self._listing("resources/list", "resources"),
            "resourceTemplates": await self._listing(
                "resources/templates/list", "resourceTemplates"
            ),
            "prompts": await self._listing("prompts/list", "prompts"),
            "problems": list(client.problems),
        }

    async def _listing(self, method: str, key: str) -> list[Any] | str:
        """One page of a listing McpClient has no method for; a server without it says why."""
        assert self.client is not None
        try:
            page = await self.client.transport.request(method, None, repeatable=True, limit=30)
        except McpError as exc:
            return f"not offered: {exc}"
        found = typing.cast(dict[str, Any], page).get(key) if isinstance(page, dict) else None
        return typing.cast(list[Any], found) if isinstance(found, list) else []

    def _tool(self, name: str) -> dict[str, Any]:
        tool = self._known(name)
        dialects: list[dict[str, Any]] = []
        for dialect in DIALECTS:
            entry: dict[str, Any] = {"dialect": dialect}
            try:
                compiled = compile_schema(tool, dialect)
                entry["schema"] = compiled.schema
                entry["changes"] = list(compiled.changes)
                (cost,) = tool_cost([tool], dialect)
                entry["tokens"] = cost.tokens
                entry["method"] = cost.method
            except (SchemaError, UnsupportedError) as exc:
                entry["error"] = str(exc)
            dialects.append(entry)
        return {"name": name, "inputSchema": tool.spec.input_schema, "dialects": dialects}

    async def _call(self, body: dict[str, Any]) -> dict[str, Any]:
        tool = self._known(_text(body, "name"))
        arguments = body.get("arguments", {})
        if not isinstance(arguments, dict):
            raise BadRequest("`arguments` must be a JSON object")
        assert self.client is not None
        started = time.perf_counter()
        result = await self.client.call_tool(tool.spec.name, typing.cast(dict[str, Any], arguments))
        text = result.text
        return {
            "isError": result.is_error,
            "text": text[:_RESULT_CHARS],
            "textChars": len(text),
            "structured": result.structured,
            "seconds": time.perf_counter() - started,
        }

    def _known(self, name: str) -> McpTool:
        if self.client is None:
            raise BadRequest("connect to a server first")
        tool = self.tools.get(name)
        if tool is None:
            raise BadRequest(f"the server lists no tool named {name!r}")
        return tool


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"`{key}` must be a non-empty string")
    return value
