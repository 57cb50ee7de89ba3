"""Serve toolwire tools over MCP: an ASGI app (Streamable HTTP) or a stdio server."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp

from .. import __version__, telemetry
from .._schema import value_schema
from .._validate import SchemaValidator
from ..errors import SchemaError, UnknownToolError
from ..registry import ToolRegistry
from ..results import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
    error_result,
)
from ..tools import FunctionTool, Tool, ToolContext, ToolLike
from ._base import AUTH_SCOPE_KEY, is_loopback
from ._content import APPROVAL_META_KEY, annotations_to_mcp, result_to_mcp
from ._front import McpFront
from ._modern import ModernJson, has_param_headers
from ._oauth_config import ProtectedResource
from ._overload import shed_on_exhaustion
from ._serve_checks import check_serving
from ._server_context import LOG_LEVELS, Talk, interactive, may_talk, talks
from ._server_events import RETRY_MS, SessionEvents, SessionScope
from ._server_resources import add_completion, add_prompts, add_resources
from ._sessions import AnonymousSessions, SessionPolicy
from ._stateless import StatelessJson
from .prompts import Prompt
from .resource_auth import OAuthGuard, ToolScopeCheck
from .resources import Resource, ResourceUpdates

if TYPE_CHECKING:
    from ..tools import AuthInfo

__all__ = [
    "APPROVAL_META_KEY",
    "DEFAULT_ASK_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "LOCAL_HOSTS",
    "build_server",
    "create_app",
    "is_loopback",
    "serve",
]

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
"""The Host names accepted by default; anything else is refused as a DNS-rebinding attempt."""

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body the server reads (4 MiB, as the SDK's server)."""

DEFAULT_ASK_TIMEOUT = 300.0
"""Seconds a tool waits for the client to answer its sampling or elicitation request."""

DEFAULT_UPLOAD_TIMEOUT = 10.0
"""Seconds a client may take to send a request's body before the server answers 408."""

_MAX_ECHOED_NAME = 64
"""How much of an unknown tool's name an error echoes back."""


@functools.cache
def _part_schemas() -> tuple[dict[str, Any], ...]:
    parts = (TextPart, ImagePart, AudioPart, ResourcePart, ResourceLinkPart)
    return tuple(value_schema(part) for part in parts)


def _output_schema(tool: Tool) -> dict[str, Any] | None:
    """The tool's output schema as MCP should list it.

    A function annotated to return a content part (`-> ImagePart`) gets that dataclass's schema
    as its output schema, yet its result is content, never structured data: listing it would
    promise `structuredContent` the tool cannot give, which the SDK's client refuses.
    """
    schema = tool.output_schema
    if schema is None:
        return None
    return None if schema in _part_schemas() else schema


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
    if tool.requires_approval:
        entry["_meta"] = {APPROVAL_META_KEY: True}
    output_schema = _output_schema(tool)
    if output_schema is not None:
        entry["outputSchema"] = output_schema
    return entry


def build_server(
    tools: Iterable[ToolLike] = (),
    *,
    resources: Iterable[Resource] = (),
    prompts: Iterable[Prompt] = (),
    updates: ResourceUpdates | None = None,
    name: str = "toolwire",
    page_size: int | None = None,
    ask_timeout: float | None = DEFAULT_ASK_TIMEOUT,
    request_state_keys: Sequence[str | bytes] | None = None,
    subscriptions: bool = True,
) -> Server[Any]:
    """The SDK's low-level `Server` answering for `tools`, `resources` and `prompts`.

    Args:
        tools: Anything `ToolRegistry` accepts.
        resources: Resources and resource templates (`resource()`).
        prompts: Prompts (`prompt()`).
        updates: Where `resources/subscribe` records subscribers, to tell them of changes.
        name: The server name given to clients.
        page_size: Tools per `tools/list` page; `None` lists them all at once.
        ask_timeout: Seconds a tool waits for the client to answer `ToolContext.sample` or
            `ToolContext.elicit` (handshake era); `None` waits as long as the session lives.
        request_state_keys: Secrets (32 bytes or more) sealing the 2026-07-28 `requestState`
            that carries a call's earlier answers; the first seals, all open. Give the same
            keys to every worker behind one address; by default a key of this process alone.
        subscriptions: Offer `resources/subscribe` (a stateless server has no session to tell).
    """
    talk = Talk(ask_timeout)
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
    # The SDK checks a 2026-07-28 call's `Mcp-Param-*` headers against the schema it is given,
    # walking the whole schema on every call with arguments; a schema that declares no such
    # header can fail no check, so it is not given.
    schemas = {
        t.name: parameters
        for t in by_name.values()
        if has_param_headers(parameters := t.definition("mcp").parameters)
    }
    output_checks = {
        t.name: check for t in by_name.values() if (check := _output_check(t)) is not None
    }

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

    # A plain function tool that takes no `ToolContext` never sees one: its calls skip building
    # it (a subclass might read it in its own `invoke`).
    silent: set[str] = {
        t.name for t in by_name.values() if type(t) is FunctionTool and not talks(t)
    }

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        found = by_name.get(params.name)
        if found is None:
            # A caller's name is echoed (and matched against ours) only in part: a megabyte of
            # name must not come back, nor cost a fuzzy match over it.
            name = params.name
            shown = name if len(name) <= _MAX_ECHOED_NAME else name[:_MAX_ECHOED_NAME] + "..."
            out = result_to_mcp(error_result(str(UnknownToolError(shown, by_name))))
        elif found.name in silent:
            out = await run(found, params.arguments or {}, None)
        else:
            call_id = str(ctx.request_id) if ctx.request_id is not None else None
            call = talk.call(ctx, params)
            context = ToolContext(
                tool_name=found.name, call_id=call_id, auth=_caller(ctx), client=call
            )
            # 2026-07-28: a question the client has not answered yet makes this an
            # `input_required` answer instead.
            out = await interactive(
                call, functools.partial(run, found, params.arguments or {}, context)
            )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            out.setdefault("resultType", "complete")
        return out

    async def run(
        chosen: Tool, arguments: dict[str, Any], context: ToolContext | None
    ) -> dict[str, Any]:
        result = await chosen.invoke(arguments, context)
        check = output_checks.get(chosen.name)
        if check is not None and not result.is_error:
            result = _hold_to_schema(chosen.name, result, check)
        return result_to_mcp(result)

    async def set_level(
        ctx: ServerRequestContext[Any], params: mcp_types.SetLevelRequestParams
    ) -> dict[str, Any]:
        level = params.level
        if level not in LOG_LEVELS:  # the SDK checks the enum; this keeps pyright sure too
            raise MCPError(code=mcp_types.INVALID_PARAMS, message=f"Unknown level {level!r}")
        talk.set_level(ctx, level)
        return {}

    server: Server[Any] = Server(
        name,
        version=__version__,
        get_tool_input_schema=schemas.get,
        # Listings are fixed for the server's life; ttl 0 still lets clients revalidate
        # cheaply and keeps a restarted server with other tools from being masked. A resource
        # is read by a function each time, so its contents are never fresh either.
        cache_hints={
            method: CacheHint(ttl_ms=0, scope="private")
            for method in (
                "tools/list",
                "resources/list",
                "resources/templates/list",
                "resources/read",
                "prompts/list",
            )
        },
    )
    server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, call_tool)
    server.add_request_handler("logging/setLevel", mcp_types.SetLevelRequestParams, set_level)
    resources = list(resources)
    prompts = list(prompts)
    if resources:
        add_resources(server, resources, talk, updates or ResourceUpdates(), subscriptions)
    if prompts:
        add_prompts(server, prompts, talk)
    if prompts or any(r.is_template for r in resources):
        add_completion(server, resources, prompts)
    # Sealed state carries the user's earlier answers: it opens only for the caller it was
    # minted for (behind OAuth), never for another user replaying it.
    security = RequestStateSecurity(
        keys=list(request_state_keys) if request_state_keys else [os.urandom(32)],
        bind_principal=_state_principal,
    )
    # In place of the SDK's own tracing (on the global tracer, always on): toolwire's spans
    # follow `toolwire.telemetry`, and cost nothing while it is off. The state boundary seals
    # the 2026-07-28 `requestState` going out and refuses one this server did not mint.
    server.middleware[:] = [
        _TracedRequests(),
        RequestStateBoundary(security, default_audience=name),
    ]
    return server


def _state_principal(ctx: ServerRequestContext[Any]) -> str | None:
    """Who a 2026-07-28 `requestState` belongs to: the OAuth caller (issuer, client, subject)."""
    caller = _caller(ctx)
    if caller is None:
        return None
    return json.dumps([caller.issuer, caller.client_id, caller.subject])


def _caller(ctx: ServerRequestContext[Any]) -> AuthInfo | None:
    """The validated access token the OAuth guard left on the call's HTTP request, if any."""
    scope: Any = getattr(ctx.request, "scope", None)
    if not isinstance(scope, dict):
        return None
    return cast(dict[str, Any], scope).get(AUTH_SCOPE_KEY)


class _TracedRequests:
    """A span per MCP request or notification served, when `toolwire.telemetry` is on."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        tracing = telemetry.active()
        if tracing is None or not tracing.mcp.enabled():
            return await call_next(ctx)
        attributes: dict[str, Any] = {"mcp.protocol.version": ctx.protocol_version}
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        http = ctx.request  # the Starlette request over HTTP; None over stdio
        if http is None:
            attributes["network.transport"] = "pipe"
        else:
            attributes["network.transport"] = "tcp"
            attributes["network.protocol.name"] = "http"
            session = http.headers.get("mcp-session-id")
            if session:
                attributes["mcp.session.id"] = session
            peer = http.client
            if peer is not None:
                attributes["client.address"] = peer.host
                attributes["client.port"] = peer.port
        return await tracing.mcp.served(
            ctx.method, ctx.params, ctx.meta, attributes, lambda: call_next(ctx)
        )


def _output_check(tool: Tool) -> SchemaValidator | None:
    schema = _output_schema(tool)
    if schema is None:
        return None
    try:
        return SchemaValidator(schema)
    except SchemaError:
        return None  # a schema we cannot read: clients are left to judge the result


def _hold_to_schema(name: str, result: ToolResult, check: SchemaValidator) -> ToolResult:
    """The result, or an error result when it breaks the tool's declared output schema.

    MCP wants structured content that conforms whenever a tool lists an output schema; the
    SDK's client raises on anything else, so a broken result goes out as a readable error.
    """
    structured: Any = result.structured
    if not isinstance(structured, dict):
        return error_result(
            f"Tool {name!r} has an output schema but returned no structured object matching it."
        )
    problems = check.problems(structured, limit=3)
    if not problems:
        return result
    found = "; ".join(
        f"{'.'.join(map(str, p.path)) or 'the result'}: {p.message}" for p in problems
    )
    return error_result(f"Tool {name!r} returned a result that breaks its output schema: {found}")


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
    tools: Iterable[ToolLike] = (),
    *,
    resources: Iterable[Resource] = (),
    prompts: Iterable[Prompt] = (),
    updates: ResourceUpdates | None = None,
    name: str = "toolwire",
    auth_token: str | None = None,
    oauth: ProtectedResource | None = None,
    stateless: bool = False,
    path: str = "/mcp",
    allowed_hosts: Sequence[str] | None = None,
    dns_rebinding_protection: bool = True,
    json_response: bool | None = None,
    page_size: int | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    upload_timeout: float | None = DEFAULT_UPLOAD_TIMEOUT,
    max_sessions: int | None = 10_000,
    session_idle_timeout: float | None = 1800.0,
    session_policy: SessionPolicy | None = None,
    ask_timeout: float | None = DEFAULT_ASK_TIMEOUT,
    request_state_keys: Sequence[str | bytes] | None = None,
    resumable: bool = False,
) -> ASGIApp:
    """An ASGI app serving `tools`, `resources` and `prompts` over MCP Streamable HTTP at `path`.

    Run it with any ASGI server (`uvicorn.run(app)`); its lifespan must run, which uvicorn does.

    Args:
        tools: Anything `ToolRegistry` accepts; names must be unique.
        resources: Resources and resource templates (`resource()`).
        prompts: Prompts (`prompt()`).
        updates: Tells clients subscribed to a resource that it changed (`ResourceUpdates`).
        name: The server name given to clients.
        auth_token: When set, every request needs `Authorization: Bearer <auth_token>` (else 401);
            at least `MIN_TOKEN_CHARS` (16) characters.
        oauth: Act as an OAuth protected resource: publish its metadata and accept only access
            tokens the authorization server issued for this server (exclusive with
            `auth_token`). Tools see the caller as `ToolContext.auth`.
        stateless: Keep no sessions, so any worker behind a load balancer can answer any request.
        path: Where the MCP endpoint lives.
        allowed_hosts: Host names (without port) accepted in `Host` and `Origin` headers, in
            place of `LOCAL_HOSTS`; list the local names too to keep local access.
        dns_rebinding_protection: Refuse other `Host`/`Origin` values (HTTP 421/403).
        json_response: Answer each request with one JSON body (`True`) or an SSE stream
            (`False`). `None` chooses SSE when something served may talk back (a function
            taking a `ToolContext`, a tool toolwire cannot see into, or `resumable`), and JSON
            (0.5 to 0.75 times the server's CPU per call) otherwise. With JSON answers a tool's
            progress, log lines and handshake-era questions go on the session's GET stream,
            only if the client keeps one open (2026-07-28 questions need no stream).
        page_size: Tools per `tools/list` page; `None` lists them all at once.
        max_body_bytes: The largest request body read; a larger one is answered with 413 as
            soon as it passes the cap, unread.
        upload_timeout: Seconds a client may take to send a request body (else 408); `None`
            waits forever.
        max_sessions: Sessions open at once (handshake era); past it, new ones get 503. `None`
            sets no cap.
        session_idle_timeout: Seconds after which a session with no request is closed. `None`
            keeps sessions until their client ends them.
        session_policy: How sessions without an OAuth principal share `max_sessions` (a
            per-client quota, the busiest client's oldest idle session closed at the cap,
            one-request sessions dropped early); `SessionPolicy()` when `None`.
        ask_timeout: Seconds a tool waits for the client's sampling or elicitation answer.
        request_state_keys: Secrets sealing 2026-07-28 `requestState`; see `build_server`.
        resumable: Keep recent events of each SSE answer (bounded, in memory) and start each
            with a priming event, so a client whose stream dropped reconnects with
            `Last-Event-ID` and gets what it missed, and a tool may `release_stream` to be
            polled (SEP-1699). Handshake era, with sessions and SSE answers.

    Raises:
        ValueError: an empty `auth_token` or one shorter than 16 characters, both
            `auth_token` and `oauth`, `oauth` scopes for a tool not served, or a limit that is not
            positive.
    """
    check_serving(
        auth_token=auth_token,
        has_oauth=oauth is not None,
        allowed_hosts=allowed_hosts,
        dns_rebinding_protection=dns_rebinding_protection,
    )
    if auth_token is not None and oauth is not None:
        raise ValueError("give auth_token or oauth, not both")
    if max_body_bytes <= 0:
        raise ValueError(f"max_body_bytes must be positive, got {max_body_bytes}")
    if upload_timeout is not None and upload_timeout <= 0:
        raise ValueError(f"upload_timeout must be positive, got {upload_timeout}")
    tools = list(tools)
    resources = list(resources)
    prompts = list(prompts)
    server = build_server(
        tools,
        resources=resources,
        prompts=prompts,
        updates=updates,
        name=name,
        page_size=page_size,
        ask_timeout=ask_timeout,
        request_state_keys=request_state_keys,
        subscriptions=not stateless,
    )
    if json_response is None:
        json_response = not resumable and not may_talk(tools, resources, prompts)
    resume = resumable and not stateless and not json_response
    security = _security(allowed_hosts, dns_rebinding_protection)
    routed: ASGIApp = server.streamable_http_app(
        streamable_http_path=path,
        json_response=json_response,
        stateless_http=stateless,
        event_store=SessionEvents() if resume else None,
        retry_interval=RETRY_MS if resume else None,
        transport_security=security,
        max_request_body_size=max_body_bytes,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout,
    )
    # The MCP endpoint is answered by the session manager itself, not through Starlette's
    # error, exception and routing layers (the lifespan and other paths still are).
    app: ASGIApp = server.session_manager.handle_request
    if json_response:
        # 2026-07-28 requests: the SDK's checks and kernel, less of its machinery around them.
        app = ModernJson(server, app, security)
    if stateless and json_response:
        # One request, one answer, no session: served in the request's task.
        app = StatelessJson(server, app, security)
    if resume:
        app = SessionScope(app)
    if not stateless:
        app = AnonymousSessions(app, session_policy or SessionPolicy(), max_sessions)
    if oauth is not None and oauth.tool_scopes:
        names = ToolRegistry()
        served = {names.add(t).name for t in tools}
        unknown = sorted(set(oauth.tool_scopes) - served)
        if unknown:
            raise ValueError(f"oauth.tool_scopes names tools not served: {', '.join(unknown)}")
        app = ToolScopeCheck(app, oauth)
    front = McpFront(
        app,
        routed,
        path=path,
        token=auth_token,
        scrub=oauth is None,
        max_bytes=max_body_bytes,
        timeout=upload_timeout,
        watch_every_era=stateless,
    )
    # Outermost: a caller without a valid token gets no further than its headers.
    return OAuthGuard(front, oauth) if oauth is not None else front


async def serve(
    tools: Iterable[ToolLike] = (),
    *,
    resources: Iterable[Resource] = (),
    prompts: Iterable[Prompt] = (),
    updates: ResourceUpdates | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    stdio: bool = False,
    name: str = "toolwire",
    auth_token: str | None = None,
    oauth: ProtectedResource | None = None,
    stateless: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    allow_anonymous: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    upload_timeout: float | None = DEFAULT_UPLOAD_TIMEOUT,
    max_sessions: int | None = 10_000,
    session_idle_timeout: float | None = 1800.0,
    ask_timeout: float | None = DEFAULT_ASK_TIMEOUT,
    request_state_keys: Sequence[str | bytes] | None = None,
) -> None:
    """Serve `tools`, `resources` and `prompts` until cancelled: over HTTP, or over stdio.

    Args:
        tools: Anything `ToolRegistry` accepts.
        resources: See `create_app`.
        prompts: See `create_app`.
        updates: See `create_app`.
        host: The address to listen on; the default accepts local connections only.
        port: The TCP port.
        stdio: Speak MCP over this process's stdin/stdout instead of HTTP.
        name: The server name given to clients.
        auth_token: Require `Authorization: Bearer <auth_token>` (HTTP only).
        oauth: Accept OAuth access tokens instead (HTTP only); see `create_app`.
        stateless: Keep no sessions (HTTP only).
        allowed_hosts: Host names accepted besides the local ones, e.g. the public name.
        options: Extra `uvicorn.Config` settings.
        allow_anonymous: Serve beyond the loopback interface without `auth_token` or `oauth`;
            refused otherwise, since anyone who reaches the port could call the tools.
        max_body_bytes: See `create_app`.
        upload_timeout: See `create_app`.
        max_sessions: See `create_app`.
        session_idle_timeout: See `create_app`.
        ask_timeout: See `create_app`.
        request_state_keys: See `build_server`.

    Raises:
        ValueError: `host` is beyond loopback with no token and `allow_anonymous` not set.
    """
    if stdio:
        from mcp.server.stdio import stdio_server

        server = build_server(
            tools,
            resources=resources,
            prompts=prompts,
            updates=updates,
            name=name,
            ask_timeout=ask_timeout,
            request_state_keys=request_state_keys,
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return

    import uvicorn

    if auth_token is None and oauth is None and not allow_anonymous and not is_loopback(host):
        raise ValueError(
            f"Serving on {host} without auth_token lets anyone who reaches the port call the "
            "tools; give auth_token or oauth, or allow_anonymous=True to do it anyway."
        )
    hosts = [*LOCAL_HOSTS, *(allowed_hosts or ())]
    if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        hosts.append(host)
    app = create_app(
        tools,
        resources=resources,
        prompts=prompts,
        updates=updates,
        name=name,
        auth_token=auth_token,
        oauth=oauth,
        stateless=stateless,
        allowed_hosts=hosts,
        max_body_bytes=max_body_bytes,
        upload_timeout=upload_timeout,
        max_sessions=max_sessions,
        session_idle_timeout=session_idle_timeout,
        ask_timeout=ask_timeout,
        request_state_keys=request_state_keys,
    )
    # No MCP transport speaks WebSocket: uvicorn need not load the websockets library at start.
    settings: dict[str, Any] = {"log_level": "warning", "ws": "none", **dict(options or {})}
    config = uvicorn.Config(app, host=host, port=port, **settings)
    server = uvicorn.Server(config)
    shed_on_exhaustion(server)  # out of descriptors: close idle connections, log sparingly
    try:
        await server.serve()
    except BaseException:
        # Cancelled (the usual way to stop it): uvicorn would leave its sockets open.
        with anyio.CancelScope(shield=True), anyio.move_on_after(10):
            await server.shutdown()
        raise
