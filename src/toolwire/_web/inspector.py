"""The MCP server inspector of `toolwire web`: connect to a server (a Streamable HTTP URL, with a
bearer token or OAuth client credentials; or, when the page was started with `--allow-stdio`, a
command line run as a stdio server), list its tools, resources and prompts, show each tool's
schema as every dialect compiles it (with the changes and the token cost), call a tool, read a
resource, get a prompt, and show the raw JSON-RPC exchange (`wire.py` records it).

Routes (under the page's token and Host/Origin checks; POST bodies are JSON):
`POST /api/inspector/connect` `{url, token?, auth?}` or `{transport: "stdio", command}`,
`POST /api/inspector/tool` `{name}`, `POST /api/inspector/call` `{name, arguments}`,
`POST /api/inspector/read` `{uri}`, `POST /api/inspector/prompt` `{name, arguments}`,
`GET /api/inspector/exchange`, `POST /api/inspector/disconnect`. One server at a time:
connecting again closes the last one.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
import shlex
import time
import typing
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from ..errors import SchemaError, UnsupportedError
from ..mcp._content import McpAuthError, McpError
from ..mcp._stdio import StdioTransport
from ..mcp.auth import ClientCredentials, OAuth
from ..mcp.client import McpClient, McpTool, StdioServerParameters
from ..mcp.login import LoopbackLogin
from ..tokens import tool_cost
from ..tools import DIALECTS, compile_schema
from ..ui._asgi import BadRequest, Receive, Scope, Send, read_json, send_json
from .wire import Exchange, LoggedTransport, Recording

__all__ = ["Inspector"]

_RESULT_CHARS = 200_000
_SIGN_IN_SECONDS = 300.0
_IMAGE_BYTES = 5_000_000
# Only raster types a browser cannot run script in; SVG is markup and is shown as binary.
_IMAGE_TYPES = re.compile(r"image/(?:png|jpeg|gif|webp)")


class Inspector:
    """The inspector's API: one MCP server connection at a time, and its exchange."""

    def __init__(self, *, allow_stdio: bool = False) -> None:
        self.allow_stdio = allow_stdio
        self.sign_in_url: str | None = None
        self.signing_in: anyio.CancelScope | None = None
        self.exchange = Exchange()
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
            if action == "signin" and scope["method"] == "GET":
                # Not under `connecting`: asked while a connect waits for the person to sign in.
                await send_json(send, 200, {"url": self.sign_in_url})
                return
            if action == "exchange" and scope["method"] == "GET":
                await send_json(send, 200, {"exchange": list(self.exchange.entries)})
                return
            body = await read_json(scope, receive)
            if not isinstance(body, dict):
                raise BadRequest("the body must be a JSON object")
            body = typing.cast(dict[str, Any], body)
            if action == "connect":
                answer = await self._connect_alone(body)
            elif action == "tool":
                answer = self._tool(_text(body, "name"))
            elif action == "call":
                answer = await self._call(body)
            elif action == "read":
                answer = await self._read(_text(body, "uri"))
            elif action == "prompt":
                answer = await self._prompt(body)
            elif action == "disconnect":
                self._give_up()
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

    def _give_up(self) -> None:
        """End a sign-in nobody finished, so the connect waiting for it fails now rather than
        after `_SIGN_IN_SECONDS` (only the wait is cancelled: the SDK's stdio client opens task
        groups during a connect that a cancel scope around it could not hold)."""
        if self.signing_in is not None:
            self.signing_in.cancel()

    async def _connect_alone(self, body: dict[str, Any]) -> dict[str, Any]:
        """One connect at a time: a newer one (or a disconnect) ends a sign-in under way."""
        self._give_up()
        async with self.connecting:
            return await self._connect(body)

    async def _connect(self, body: dict[str, Any]) -> dict[str, Any]:
        # A browser sign-in's redirect listener lives while the connection is made.
        async with contextlib.AsyncExitStack() as stack:
            kind = body.get("transport", "http")
            if kind == "stdio":
                client = await self._stdio(body)
            elif kind == "http":
                client = await self._http(body, stack)
            else:
                raise BadRequest("`transport` is http or stdio")
            try:
                await client.connect()
                self.client = client
                self.tools = {t.spec.name: t for t in await client.tools()}
            except BaseException:
                with anyio.CancelScope(shield=True):  # closed whole, even when given up
                    await self.close()
                raise
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

    async def _http(self, body: dict[str, Any], stack: contextlib.AsyncExitStack) -> McpClient:
        url = _text(body, "url")
        if not url.startswith(("http://", "https://")):
            raise BadRequest("the URL must start with http:// or https://")
        token = body.get("token") or None
        if token is not None and not isinstance(token, str):
            raise BadRequest("`token` must be a string")
        auth = await self._sign_in(body.get("auth"), stack)
        if auth is not None and token is not None:
            raise BadRequest("give a bearer token or a sign-in, not both")
        await self.close()
        self.exchange = Exchange()
        timeout = httpx2.Timeout(connect=10.0, read=None, write=10.0, pool=None)
        self.http = httpx2.AsyncClient(transport=Recording(self.exchange), timeout=timeout)
        return McpClient(
            url,
            auth_token=token,
            auth=auth,
            http_client=self.http,
            follow_changes=False,
            timeout=60.0,
        )

    async def _sign_in(
        self, auth: Any, stack: contextlib.AsyncExitStack
    ) -> ClientCredentials | OAuth | None:
        """The sign-in the page asked for: none; OAuth client credentials (no person needed);
        or the authorization code flow, whose address the page shows (`GET signin`) for the
        person to open, coming back to a loopback listener of this process."""
        if auth is None:
            return None
        if not isinstance(auth, dict):
            raise BadRequest("`auth` must be a JSON object")
        auth = typing.cast(dict[str, Any], auth)
        kind = auth.get("kind")
        if not kind:
            return None
        scope = auth.get("scope") or None
        if scope is not None and not isinstance(scope, str):
            raise BadRequest("`auth.scope` must be a string")
        if kind == "client_credentials":
            return ClientCredentials(
                _text(auth, "clientId"), _text(auth, "clientSecret"), scope=scope
            )
        if kind != "oauth":
            raise BadRequest(
                "`auth.kind` is client_credentials or oauth (a bearer goes in `token`)"
            )
        client_id = auth.get("clientId") or None
        secret = auth.get("clientSecret") or None
        if not isinstance(client_id, str | None) or not isinstance(secret, str | None):
            raise BadRequest("`auth.clientId` and `auth.clientSecret` must be strings")
        if secret is not None and client_id is None:
            raise BadRequest("a client secret needs its client id")
        login = await stack.enter_async_context(
            LoopbackLogin(port=0, open_url=None, announce=_quiet, timeout=_SIGN_IN_SECONDS)
        )

        async def authorize(url: str) -> str:
            # The address comes from the authorization server's metadata: only a web address
            # may become a link in the page (never javascript: or data:).
            if urlsplit(url).scheme not in ("http", "https"):
                raise McpAuthError(f"the sign-in address is not a web address: {url[:80]!r}")
            with anyio.CancelScope() as waiting:
                self.signing_in, self.sign_in_url = waiting, url
                try:
                    return await login.authorize(url)
                finally:
                    self.signing_in, self.sign_in_url = None, None
            raise McpAuthError("the sign-in was given up: a newer connect or a disconnect came")

        return OAuth(
            authorize=authorize,
            redirect_uri=login.redirect_uri,
            client_name="toolwire web",
            scope=scope,
            client_id=client_id,
            client_secret=secret,
        )

    async def _stdio(self, body: dict[str, Any]) -> McpClient:
        if not self.allow_stdio:
            raise BadRequest(
                "this page does not start commands: start toolwire web with --allow-stdio",
                status=403,
            )
        try:
            argv = shlex.split(_text(body, "command"))
        except ValueError as exc:
            raise BadRequest(f"the command line: {exc}") from None
        if not argv:
            raise BadRequest("the command line is empty")
        env = body.get("env") or None
        if env is not None and not (
            isinstance(env, dict)
            and all(
                isinstance(k, str) and isinstance(v, str)
                for k, v in typing.cast(dict[Any, Any], env).items()
            )
        ):
            raise BadRequest("`env` maps names to strings")
        await self.close()
        self.exchange = Exchange()
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=typing.cast(dict[str, str] | None, env)
        )
        transport = LoggedTransport(StdioTransport(params), self.exchange)
        return McpClient(transport, follow_changes=False, timeout=60.0)

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

    async def _read(self, uri: str) -> dict[str, Any]:
        """resources/read: each content as text (cut) or a checked image, never as markup."""
        answer = await self._request("resources/read", {"uri": uri})
        contents: list[dict[str, Any]] = []
        for item in _dicts(answer.get("contents")):
            entry = _content({**item, "type": "resource"})
            entry["uri"] = str(item.get("uri", uri))
            contents.append(entry)
        return {"uri": uri, "contents": contents}

    async def _prompt(self, body: dict[str, Any]) -> dict[str, Any]:
        """prompts/get with string arguments: its description and messages, each content
        shown as text or a checked image."""
        name = _text(body, "name")
        arguments: Any = body.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(
            isinstance(v, str) for v in typing.cast(dict[str, Any], arguments).values()
        ):
            raise BadRequest("`arguments` maps argument names to strings")
        params = {"name": name, "arguments": typing.cast(dict[str, str], arguments)}
        answer = await self._request("prompts/get", params)
        messages: list[dict[str, Any]] = []
        for message in _dicts(answer.get("messages")):
            content = message.get("content")
            parts = typing.cast(list[Any], content) if isinstance(content, list) else [content]
            messages.append(
                {
                    "role": str(message.get("role", "?")),
                    "content": [_content(p) for p in _dicts(parts)],
                }
            )
        description = answer.get("description")
        return {
            "name": name,
            "description": description if isinstance(description, str) else None,
            "messages": messages,
        }

    async def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.client is None:
            raise BadRequest("connect to a server first")
        answer = await self.client.transport.request(method, params, repeatable=True, limit=60)
        if not isinstance(answer, dict):
            raise McpError(f"the {method} result is not an object")
        return typing.cast(dict[str, Any], answer)

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


def _dicts(value: Any) -> list[dict[str, Any]]:
    items = typing.cast(list[Any], value) if isinstance(value, list) else []
    return [typing.cast(dict[str, Any], v) for v in items if isinstance(v, dict)]


def _content(part: dict[str, Any]) -> dict[str, Any]:
    """One content block (of a prompt message or a read resource) the page can show safely:
    text cut at `_RESULT_CHARS`, an image only of a raster type with valid base64, anything
    else as its JSON or its size."""
    kind = part.get("type")
    if kind == "resource" and isinstance(part.get("resource"), dict):
        inner = typing.cast(dict[str, Any], part["resource"])
        return {**_content({**inner, "type": "resource"}), "uri": str(inner.get("uri", ""))}
    mime = part.get("mimeType")
    mime = mime if isinstance(mime, str) else None
    text = part.get("text")
    if isinstance(text, str) and kind in ("text", "resource"):
        return {"type": "text", "mimeType": mime, "text": text[:_RESULT_CHARS], "chars": len(text)}
    data = part.get("data") if kind == "image" else part.get("blob")
    if isinstance(data, str):
        try:
            size = len(base64.b64decode(data, validate=True))
        except (binascii.Error, ValueError):
            return {"type": "binary", "mimeType": mime, "bytes": None, "note": "not valid base64"}
        if mime is not None and _IMAGE_TYPES.fullmatch(mime) and size <= _IMAGE_BYTES:
            return {"type": "image", "mimeType": mime, "data": data, "bytes": size}
        return {"type": "binary", "mimeType": mime, "bytes": size}
    return {"type": "other", "text": json.dumps(part, indent=2, default=str)[:_RESULT_CHARS]}


def _quiet(message: str) -> None:
    """The page shows the sign-in address (`GET signin`); nothing is printed."""
