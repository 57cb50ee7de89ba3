"""`McpClient`: an MCP server's tools as ordinary toolwire tools, over any `McpTransport`."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self, TypeAlias

import anyio
import httpx2
from starlette.types import ASGIApp

from mcp import StdioServerParameters

from .. import __version__
from .._validate import SchemaValidator
from ..errors import SchemaError, ToolError, ToolTimeoutError
from ..middleware import ToolWrapper
from ..models.base import Model
from ..results import ToolResult, error_result
from ..tools import Tool, tool
from ._asgi import AsgiTransport
from ._content import (
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpToolSpec,
    lenient_schema,
    parse_call_result,
    parse_tool_spec,
)
from ._http import DEFAULT_MAX_ANSWER_BYTES
from ._stdio import StdioTransport
from ._transport import Era, HttpTransport, McpClientOptions, McpTransport
from .auth import ClientCredentials, CrossAppAccess, OAuth
from .elicitation import ElicitationHandler
from .sampling import Sampler

__all__ = ["McpClient", "McpTarget", "McpTool", "StdioServerParameters", "from_mcp"]

McpTarget: TypeAlias = str | StdioServerParameters | McpTransport | ASGIApp
"""What `McpClient` connects to: a Streamable HTTP URL, a subprocess's `StdioServerParameters`,
any `McpTransport`, or an ASGI app served in this process (`AsgiTransport`)."""

_HEADER_MISMATCH = -32020
"""A 2026-07-28 server's answer to a call whose `Mcp-Param-*` headers do not match the tool."""

_MAX_PAGES = 1000
"""A server whose cursors never end cannot hang `list_tools`."""

_DEFAULTS: dict[str, Any] = {"protocol": "auto", "max_answer_bytes": DEFAULT_MAX_ANSWER_BYTES}


class McpClient:
    """A connection to one MCP server, whose tools become ordinary toolwire tools.

    Use it as an async context manager (or call `connect()` and `close()`):

        async with McpClient("http://127.0.0.1:8000/mcp", auth_token=token) as client:
            tools = await client.tools()

    Over HTTP the client recovers by itself: when the server no longer knows the session (HTTP
    404, or a 400 that says so, e.g. after a restart) it opens a new one and repeats the request
    once; a 429 or 503 with a short `Retry-After` is waited out and repeated; when the
    connection drops during a call, it repeats the call only for read-only or idempotent tools
    and otherwise answers with an error result saying the call may or may not have run.

    Args:
        server: What to connect to: a Streamable HTTP URL; `StdioServerParameters` to run the
            server as a subprocess (command, args, env); an ASGI app serving MCP (toolwire's
            `create_app(...)`, the SDK's `streamable_http_app()`) to call in this process with
            no socket, for tests; or any `McpTransport` (`AsgiTransport(app, url=...)` to
            choose the app's address, say).
        auth_token: Sent as `Authorization: Bearer <token>`, for servers that take a fixed token.
        auth: OAuth 2.1 for servers behind it, as the MCP specification describes: `OAuth(...)`
            (authorization code with PKCE, for people), `ClientCredentials(...)` (machines) or
            `CrossAppAccess(...)` (an enterprise identity provider's sign-in), from
            `toolwire.mcp.auth`, or any `httpx2.Auth`.
        headers: Extra HTTP headers for every request.
        client_name: How the client introduces itself to the server.
        timeout: Seconds a request may take; a tool call past it is cancelled on the server
            and answered with a `ToolTimeoutError` error result. `None` waits forever.
        session_id: Resume an existing HTTP session instead of opening one (handshake era).
        protocol: `"auto"` speaks MCP 2026-07-28 (per-request, no session) when the server
            offers it and the initialize handshake otherwise; `"legacy"` always handshakes.
        http_client: An `httpx2.AsyncClient` (the HTTP client the `mcp` SDK is built on) to use,
            and leave open, instead of our own. URL only.
        max_answer_bytes: The largest answer read over HTTP, decompressed: a JSON body, or one
            event of an SSE stream (default 32 MiB). A larger one is not read further, and the
            call gets an error result naming this cap.
        elicitation: Answers a server's requests for input during a call (see
            `toolwire.mcp.elicitation`); without it they are declined.
        sampling: Answers a server's requests for a completion during a call with a toolwire
            model: a `Sampler` (the model, an approval callback, limits; see
            `toolwire.mcp.sampling`) or a bare `Model`, which answers every request. Without
            it the capability is not declared and such requests get an error.

    The HTTP options (`auth_token` to `max_answer_bytes`) apply to a URL or an ASGI app; with
    stdio parameters or a transport of your own they raise `ValueError` (give them to the
    transport).

    Attributes:
        transport: The `McpTransport` that carries the requests.
    """

    def __init__(
        self,
        server: McpTarget,
        *,
        auth_token: str | None = None,
        auth: OAuth | ClientCredentials | CrossAppAccess | httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        client_name: str = "toolwire",
        timeout: float | None = 60.0,
        session_id: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        protocol: Era = "auto",
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        elicitation: ElicitationHandler | None = None,
        sampling: Sampler | Model | None = None,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.server = server
        self.timeout = timeout
        self.client_name = client_name
        self.protocol: Era = protocol
        self.max_answer_bytes = max_answer_bytes
        self.elicitation = elicitation
        self.sampling: Sampler | None = (
            Sampler(sampling)
            if sampling is not None and not isinstance(sampling, Sampler)
            else sampling
        )
        self._connected = False
        self._specs: dict[str, McpToolSpec] = {}
        self._output_checks: dict[str, SchemaValidator | None] = {}
        http: dict[str, Any] = {
            "auth_token": auth_token,
            "auth": auth,
            "headers": headers,
            "session_id": session_id,
            "protocol": protocol,
            "max_answer_bytes": max_answer_bytes,
        }
        self.transport: McpTransport = _transport_for(server, http, http_client)

    def __repr__(self) -> str:
        server = self.server
        if isinstance(server, StdioServerParameters):
            return f"McpClient({server.command!r})"
        if isinstance(server, str):
            return f"McpClient({server!r})"
        return f"McpClient({self.transport!r})"

    @property
    def connected(self) -> bool:
        """Whether `connect()` has succeeded and `close()` has not been called since."""
        return self._connected

    @property
    def session_id(self) -> str | None:
        """The HTTP session id the server gave us, if any."""
        return self.transport.session_id if self._connected else None

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision in use (e.g. `"2026-07-28"` or `"2025-11-25"`)."""
        return self.transport.protocol_version if self._connected else None

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's `serverInfo` (name, version, ...) from the handshake."""
        return self.transport.server_info if self._connected else None

    async def connect(self) -> None:
        """Open the session (the initialize handshake). Does nothing when already connected.

        Raises:
            McpConnectionError: the server cannot be reached or started.
            McpAuthError: the server refused the credentials.
            McpError: the server refused the handshake.
        """
        if self._connected:
            return
        options = McpClientOptions(
            name=self.client_name,
            version=__version__,
            timeout=self.timeout,
            elicitation=self.elicitation,
            sampler=self.sampling,
        )
        try:
            await self.transport.open(options)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.transport.close()
            raise
        self._connected = True

    async def close(self) -> None:
        """End the session (HTTP DELETE where the server keeps sessions) and free resources."""
        if self._connected:
            self._connected = False
            await self.transport.close()

    async def __aenter__(self) -> Self:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _connection(self) -> McpTransport:
        if not self._connected:
            raise RuntimeError("McpClient is not connected: use `async with` or call connect()")
        return self.transport

    async def list_tools(self) -> list[McpToolSpec]:
        """Every tool the server lists, following each page of the listing.

        Raises:
            McpError: the server failed the request or sent a malformed listing.
        """
        conn = self._connection()
        specs: list[McpToolSpec] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            try:
                page = await conn.request("tools/list", params, repeatable=True, limit=self.timeout)
            except TimeoutError:
                raise McpConnectionError(
                    f"The MCP server did not list its tools within {self.timeout:g} seconds."
                ) from None
            if not isinstance(page, dict):
                raise McpProtocolError("the tools/list result is not an object")
            page = typing.cast(dict[str, Any], page)
            if not isinstance(page.get("tools"), list):
                raise McpProtocolError("the tools/list result has no `tools` list")
            specs.extend(parse_tool_spec(item) for item in typing.cast(list[Any], page["tools"]))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
            if cursor in seen:
                raise McpProtocolError(f"the server repeated the listing cursor {cursor!r}")
            seen.add(cursor)
        else:
            raise McpProtocolError(f"the tool listing did not end within {_MAX_PAGES} pages")
        self._specs = {spec.name: spec for spec in specs}
        self._output_checks = {}
        conn.remember_tools({s.name: s.input_schema for s in specs})
        return specs

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        # A parameter rather than a cancel scope around the call: on expiry the server is told
        # to stop, and the caller gets an error result instead of a cancelled task.
        timeout: float | None = None,  # noqa: ASYNC109
        repeatable: bool | None = None,
    ) -> ToolResult:
        """Call a tool on the server. Failures come back as error results, never as exceptions.

        Args:
            name: The server's name for the tool.
            arguments: The tool's arguments.
            timeout: Overrides the client's timeout for this call.
            repeatable: Whether the call may be repeated after a dropped connection; by default,
                when the listed tool is read-only or idempotent.
        """
        conn = self._connection()
        if repeatable is None:
            spec = self._specs.get(name)
            hints = spec.annotations if spec is not None else None
            repeatable = hints is not None and bool(hints.read_only_hint or hints.idempotent_hint)
        limit = timeout if timeout is not None else self.timeout
        params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
        return await self._send_call(conn, name, params, repeatable, limit)

    async def _send_call(
        self,
        conn: McpTransport,
        name: str,
        params: dict[str, Any],
        repeatable: bool,
        limit: float | None,
    ) -> ToolResult:
        try:
            try:
                raw = await conn.request("tools/call", params, repeatable=repeatable, limit=limit)
            except McpError as exc:
                if exc.code != _HEADER_MISMATCH:
                    raise
                # A 2026-07-28 server checks the call's Mcp-Param headers against the listed
                # schema; ours were missing or stale, so list afresh and send it once more.
                await self.list_tools()
                raw = await conn.request("tools/call", params, repeatable=repeatable, limit=limit)
            try:
                result = parse_call_result(raw)
                if not result.is_error:
                    self._check_output(name, result)
            except RecursionError:
                raise McpProtocolError("the result is nested too deeply to read") from None
            return result
        except TimeoutError as exc:
            timed_out = ToolTimeoutError(name, limit or 0)
            timed_out.__cause__ = exc
            return error_result(timed_out)
        except McpConnectionError as exc:
            if exc.may_have_run and not repeatable:
                message = (
                    f"The connection to the MCP server dropped during the call of tool {name!r}; "
                    "the tool may or may not have run. Check its effect before calling it again."
                )
            else:
                message = f"Tool {name!r} could not be called: {exc.message}"
            result = error_result(ToolError(message))
            result.error = exc
            return result
        except McpProtocolError as exc:
            result = error_result(
                ToolError(
                    f"The MCP server sent a malformed result for tool {name!r}: {exc.message}"
                )
            )
            result.error = exc
            return result
        except McpError as exc:
            result = error_result(
                ToolError(f"Tool {name!r} failed on the MCP server: {exc.message}")
            )
            result.error = exc
            return result

    def _check_output(self, name: str, result: ToolResult) -> None:
        """Hold a result to the output schema its tool was listed with, as MCP asks clients to.

        Raises:
            McpProtocolError: `structuredContent` is missing or does not match the schema.
        """
        spec = self._specs.get(name)
        if spec is None or spec.output_schema is None:
            return
        if name not in self._output_checks:
            try:
                self._output_checks[name] = SchemaValidator(spec.output_schema)
            except SchemaError:
                self._output_checks[name] = None  # a schema we cannot read: nothing to hold it to
        check = self._output_checks[name]
        if check is None:
            return
        if result.structured is None:
            raise McpProtocolError(
                "the tool has an output schema but the result has no structuredContent"
            )
        problems = check.problems(result.structured, limit=3)
        if problems:
            found = "; ".join(
                f"{'.'.join(map(str, p.path)) or 'the result'}: {p.message}"
                + (f" (received {p.received})" if p.received is not None else "")
                for p in problems
            )
            raise McpProtocolError(
                f"the structuredContent does not match the tool's output schema: {found}"
            )

    async def tools(
        self, *, prefix: str | None = None, requires_approval: bool = False
    ) -> list[McpTool]:
        """The server's tools as toolwire tools (listing them afresh).

        A tool the server marks as needing approval gets `requires_approval`, so an agent's
        approval policy applies to it as to a local tool.

        Args:
            prefix: Prepended as `"{prefix}_{name}"`, for servers whose tool names collide.
            requires_approval: Ask for approval before every call of every tool of this
                server, whatever the server says.
        """
        return [
            McpTool(self, spec, prefix=prefix, requires_approval=requires_approval)
            for spec in await self.list_tools()
        ]


def _transport_for(
    server: McpTarget, http: dict[str, Any], http_client: httpx2.AsyncClient | None
) -> McpTransport:
    """The transport for what `McpClient` was given; `http` holds the HTTP options.

    Raises:
        ValueError: HTTP options for a server that takes none, or an option value refused.
        TypeError: `server` is none of the four kinds.
    """
    if isinstance(server, str):
        return HttpTransport(server, http_client=http_client, **http)
    given = [name for name, value in http.items() if value not in (None, _DEFAULTS.get(name))]
    if http_client is not None:
        given.append("http_client")
    if isinstance(server, StdioServerParameters | McpTransport):
        if given:
            raise ValueError(
                f"{', '.join(given)}: HTTP options, which a server over stdio or a transport "
                "of your own does not take from McpClient"
            )
        return StdioTransport(server) if isinstance(server, StdioServerParameters) else server
    if callable(server):
        if http_client is not None:
            raise ValueError("http_client: an app in this process is called without one")
        return AsgiTransport(server, **http)
    raise TypeError(
        "McpClient connects to a URL, StdioServerParameters, an ASGI app or an McpTransport, "
        f"not {type(server).__name__}"
    )


class McpTool(ToolWrapper):
    """A tool of an MCP server: validated locally against the server's input schema, then called.

    `strict` is off (servers' schemas rarely fit strict mode) and the server's annotations,
    output schema and approval need are kept.

    Attributes:
        client: The client that calls the tool.
        spec: The tool as the server listed it; `spec.name` is the server's name for it.
    """

    def __init__(
        self,
        client: McpClient,
        spec: McpToolSpec,
        *,
        prefix: str | None = None,
        requires_approval: bool = False,
    ) -> None:
        self.client = client
        self.spec = spec
        remote_name = spec.name

        async def execute(args: dict[str, Any]) -> ToolResult:
            return await client.call_tool(remote_name, args)

        name = f"{prefix}_{spec.name}" if prefix else spec.name
        approval = requires_approval or spec.requires_approval
        try:
            wrapped = tool(
                name=name,
                description=spec.description,
                parameters=lenient_schema(spec.input_schema),
                execute=execute,
                strict=False,
                annotations=spec.annotations,
                requires_approval=approval,
            )
        except SchemaError:
            # A schema toolwire cannot validate (e.g. a dangling $ref) must not hide the tool:
            # the server still validates, so accept any object here.
            wrapped = tool(
                name=name,
                description=spec.description,
                parameters={"type": "object"},
                execute=execute,
                strict=False,
                annotations=spec.annotations,
                requires_approval=approval,
            )
        super().__init__(wrapped)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.spec.output_schema


async def from_mcp(
    url: str,
    *,
    session_id: str | None = None,
    headers: Mapping[str, str] | None = None,
    http_client: httpx2.AsyncClient | None = None,
    auth_token: str | None = None,
    prefix: str | None = None,
    auth: OAuth | ClientCredentials | CrossAppAccess | httpx2.Auth | None = None,
    elicitation: ElicitationHandler | None = None,
    sampling: Sampler | Model | None = None,
) -> tuple[list[Tool], McpClient]:
    """Connect to an MCP server and return its tools with the connected client.

    Close the client when done: `tools, client = await from_mcp(url)` ... `await client.close()`.
    `auth`, `elicitation` and `sampling` are as for `McpClient`.
    """
    client = McpClient(
        url,
        session_id=session_id,
        headers=headers,
        http_client=http_client,
        auth_token=auth_token,
        auth=auth,
        elicitation=elicitation,
        sampling=sampling,
    )
    await client.connect()
    try:
        tools: list[Tool] = list(await client.tools(prefix=prefix))
    except BaseException:
        with anyio.CancelScope(shield=True):
            await client.close()
        raise
    return tools, client
