"""Serve toolwire tools over MCP: an ASGI app (Streamable HTTP) or a stdio server."""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..errors import UnknownToolError
from ..registry import ToolRegistry
from ..results import ToolResult, error_result
from ..tools import Tool, ToolContext, ToolLike
from ._content import annotations_to_mcp, result_to_mcp

__all__ = ["LOCAL_HOSTS", "build_server", "create_app", "serve"]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The Host names accepted by default; anything else is refused as a DNS-rebinding attempt."""


def _describe(tool: Tool) -> dict[str, Any]:
    definition = tool.definition("mcp")
    entry: dict[str, Any] = {
        "name": tool.name,
        "description": definition.description,
        "inputSchema": definition.parameters,
    }
    annotations = annotations_to_mcp(tool.annotations)
    if annotations is not None:
        entry["annotations"] = annotations
        if annotations.get("title"):
            entry["title"] = annotations["title"]
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    return entry


def build_server(
    tools: Iterable[ToolLike], *, name: str = "toolwire", page_size: int | None = None
) -> Server[Any]:
    """The SDK's low-level `Server` answering `tools/list` and `tools/call` with `tools`.

    Args:
        tools: Anything `ToolRegistry` accepts.
        name: The server name given to clients.
        page_size: Tools per `tools/list` page; `None` lists them all at once.
    """
    registry = ToolRegistry()
    # Listed in the order given (the registry checks names and duplicates).
    by_name = {added.name: added for added in (registry.add(t) for t in tools)}
    # Listings never change, so each page is built once and served as is.
    entries = [_describe(t) for t in by_name.values()]
    if page_size is not None and page_size <= 0:
        raise ValueError(f"page_size must be positive, got {page_size}")
    size = page_size or max(len(entries), 1)
    pages: list[dict[str, Any]] = []
    for start in range(0, max(len(entries), 1), size):
        page: dict[str, Any] = {"tools": entries[start : start + size]}
        if start + size < len(entries):
            page["nextCursor"] = str(start + size)
        pages.append(page)
    schemas = {t.name: t.definition("mcp").parameters for t in by_name.values()}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        cursor = params.cursor
        if cursor is None:
            page = pages[0]
        elif cursor.isdigit() and not int(cursor) % size and int(cursor) // size < len(pages):
            page = pages[int(cursor) // size]
        else:
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"Unknown cursor {cursor!r}")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return {**page, "resultType": "complete"}
        return page

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        found = by_name.get(params.name)
        if found is None:
            result: ToolResult = error_result(str(UnknownToolError(params.name, by_name)))
        else:
            call_id = str(ctx.request_id) if ctx.request_id is not None else None
            context = ToolContext(tool_name=found.name, call_id=call_id)
            result = await found.invoke(params.arguments or {}, context)
        out = result_to_mcp(result)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            out["resultType"] = "complete"
        return out

    server: Server[Any] = Server(
        name,
        version=__version__,
        get_tool_input_schema=schemas.get,
        # The listing is fixed for the server's life; ttl 0 still lets clients revalidate
        # cheaply and keeps a restarted server with other tools from being masked.
        cache_hints={"tools/list": CacheHint(ttl_ms=0, scope="private")},
    )
    server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, call_tool)
    # The SDK opens a tracing span per message by default; toolwire keeps tracing opt-in.
    server.middleware.clear()
    return server


class _BearerAuth:
    """Refuse HTTP requests without `Authorization: Bearer <token>` (401)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                # The OAuth bearer-token error shape, as the SDK's own auth middleware answers.
                body = b'{"error":"invalid_token","error_description":"A valid bearer token is required"}'

                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer error="invalid_token"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _security(
    allowed_hosts: Sequence[str] | None, dns_rebinding_protection: bool
) -> TransportSecuritySettings:
    hosts = list(allowed_hosts) if allowed_hosts is not None else list(LOCAL_HOSTS)
    # The SDK matches `host:*` for any port and the bare name exactly; accept both spellings.
    host_patterns = [h for host in hosts for h in (host, f"{host}:*")]
    origins = [
        o
        for host in hosts
        for o in (f"http://{host}", f"http://{host}:*", f"https://{host}", f"https://{host}:*")
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=dns_rebinding_protection,
        allowed_hosts=host_patterns,
        allowed_origins=origins,
    )


def create_app(
    tools: Iterable[ToolLike],
    *,
    name: str = "toolwire",
    auth_token: str | None = None,
    stateless: bool = False,
    path: str = "/mcp",
    allowed_hosts: Sequence[str] | None = None,
    dns_rebinding_protection: bool = True,
    json_response: bool = True,
    page_size: int | None = None,
) -> ASGIApp:
    """An ASGI app serving `tools` over MCP Streamable HTTP at `path`.

    Run it with any ASGI server (`uvicorn.run(app)`); its lifespan must run, which uvicorn does.

    Args:
        tools: Anything `ToolRegistry` accepts; names must be unique.
        name: The server name given to clients.
        auth_token: When set, every request needs `Authorization: Bearer <auth_token>` (else 401).
        stateless: Keep no sessions, so any worker behind a load balancer can answer any request.
        path: Where the MCP endpoint lives.
        allowed_hosts: Host names (without port) accepted in `Host` and `Origin` headers, in
            place of `LOCAL_HOSTS`; list the local names too to keep local access.
        dns_rebinding_protection: Refuse other `Host`/`Origin` values (HTTP 421/403).
        json_response: Answer each request with one JSON body instead of an SSE stream.
        page_size: Tools per `tools/list` page; `None` lists them all at once.
    """
    server = build_server(tools, name=name, page_size=page_size)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=path,
        json_response=json_response,
        stateless_http=stateless,
        transport_security=_security(allowed_hosts, dns_rebinding_protection),
    )
    if auth_token is not None:
        app = _BearerAuth(app, auth_token)
    return app


async def serve(
    tools: Iterable[ToolLike],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    stdio: bool = False,
    name: str = "toolwire",
    auth_token: str | None = None,
    stateless: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Serve `tools` until cancelled: over Streamable HTTP with uvicorn, or over stdio.

    Args:
        tools: Anything `ToolRegistry` accepts.
        host: The address to listen on; the default accepts local connections only.
        port: The TCP port.
        stdio: Speak MCP over this process's stdin/stdout instead of HTTP.
        name: The server name given to clients.
        auth_token: Require `Authorization: Bearer <auth_token>` (HTTP only).
        stateless: Keep no sessions (HTTP only).
        allowed_hosts: Host names accepted besides the local ones, e.g. the public name.
        options: Extra `uvicorn.Config` settings.
    """
    if stdio:
        from mcp.server.stdio import stdio_server

        server = build_server(tools, name=name)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return

    import uvicorn

    hosts = [*LOCAL_HOSTS, *(allowed_hosts or ())]
    if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(host)
    app = create_app(
        tools, name=name, auth_token=auth_token, stateless=stateless, allowed_hosts=hosts
    )
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", **dict(options or {}))
    server = uvicorn.Server(config)
    try:
        await server.serve()
    except BaseException:
        # Cancelled (the usual way to stop it): uvicorn would leave its sockets open.
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            await server.shutdown()
        raise
