"""`McpClient`: an MCP server's tools as ordinary toolwire tools, over Streamable HTTP or stdio."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from contextlib import AsyncExitStack, suppress
from types import TracebackType
from typing import Any, Literal, Self, TypeAlias

import anyio
import httpx2
import mcp_types
import pydantic
from mcp.shared.exceptions import MCPError

from mcp import Client, StdioServerParameters

from .. import __version__, telemetry
from .._validate import SchemaValidator
from ..errors import SchemaError, ToolError, ToolTimeoutError
from ..middleware import ToolWrapper
from ..models.base import Model
from ..results import ToolResult, error_result
from ..tools import Tool, tool
from ._content import (
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpToolSpec,
    lenient_schema,
    parse_call_result,
    parse_tool_spec,
)
from ._http import DEFAULT_MAX_ANSWER_BYTES, MODERN_VERSION, HttpSession
from .auth import ClientCredentials, CrossAppAccess, OAuth
from .elicitation import ElicitationHandler, sdk_callback
from .sampling import Sampler
from .sampling import sdk_callback as sampling_callback

__all__ = ["McpClient", "McpTool", "StdioServerParameters", "from_mcp"]

_HEADER_MISMATCH = -32020
_MAX_INPUT_ROUNDS = 10
"""How many 2026-07-28 `input_required` rounds one call may take before it is given up."""
"""A 2026-07-28 server's answer to a call whose `Mcp-Param-*` headers do not match the tool."""

_MAX_PAGES = 1000
"""A server whose cursors never end cannot hang `list_tools`."""


class _RawResult(pydantic.BaseModel):
    """A result taken from the SDK's stdio client as is, to be parsed like those over HTTP."""

    model_config = pydantic.ConfigDict(extra="allow")


_Era: TypeAlias = Literal["auto", "modern", "legacy"]
# Which MCP era to speak over HTTP: "modern" is the per-request revision 2026-07-28, "legacy" the
# initialize handshake with sessions, "auto" the modern one when the server offers it.


class _HttpConnection:
    def __init__(self, session: HttpSession, protocol: _Era) -> None:
        self.session = session
        self.protocol = protocol
        self.server_info: dict[str, Any] | None = None

    async def _negotiate(self) -> None:
        session = self.session
        if self.protocol != "legacy":
            if await session.discover():
                return
            if self.protocol == "modern":
                raise McpProtocolError(
                    f"The MCP server at {session.url} does not speak MCP {MODERN_VERSION}."
                )
        await session.initialize()

    async def open(self, limit: float | None) -> None:
        if self.session.session_id is None:
            try:
                with anyio.fail_after(limit):
                    await self._negotiate()
            except TimeoutError:
                raise McpConnectionError(
                    f"The MCP server at {self.session.url} did not answer the handshake "
                    f"within {limit:g} seconds."
                ) from None
        self.server_info = self.session.server_info

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        sent: list[int] = []
        try:
            with anyio.move_on_after(limit) as scope:
                return await self.session.request(
                    method, params, repeatable=repeatable, on_send=sent.append
                )
        except anyio.get_cancelled_exc_class():
            # Cancelled by the caller (an agent's own tool timeout, say): the server must stop
            # as well.
            await self._cancel(sent, "cancelled by the client")
            raise
        assert scope.cancelled_caught
        await self._cancel(sent, f"timed out after {limit:g} seconds")
        raise TimeoutError

    async def _cancel(self, sent: list[int], reason: str) -> None:
        # In the per-request revision, closing the answer stream (done by the cancel scope) is
        # the cancellation; the handshake revision wants a notification.
        if sent and not self.session.modern:
            # Tell the server to stop working on it; bounded, since the server may be the problem.
            with anyio.move_on_after(2, shield=True), suppress(McpError):
                await self.session.notify(
                    "notifications/cancelled", {"requestId": sent[-1], "reason": reason}
                )

    async def close(self) -> None:
        await self.session.close()


_STDIO = {"network.transport": "pipe"}
"""The MCP conventions' attributes of a stdio connection's requests."""


class _StdioConnection:
    """A subprocess server, driven through the SDK's client (its stdio transport is sound)."""

    def __init__(
        self,
        params: StdioServerParameters,
        client_name: str,
        elicit: ElicitationHandler | None,
        sampler: Sampler | None,
    ) -> None:
        self._params = params
        self._elicit = elicit
        self._sampler = sampler
        self._client_name = client_name
        self._stack = AsyncExitStack()
        self._client: Client | None = None
        self.server_info: dict[str, Any] | None = None

    async def open(self, limit: float | None) -> None:
        tracing = telemetry.active()
        if tracing is not None and tracing.mcp.enabled():
            # The SDK sends the handshake; its span is ours, and the SDK puts the span's
            # context in the request's `_meta`.
            await tracing.mcp.client_request(
                "initialize", None, _STDIO, lambda _: self._open(limit)
            )
        else:
            await self._open(limit)

    async def _open(self, limit: float | None) -> None:
        # No cancel scope around the handshake: the SDK client opens task groups that outlive
        # it, so its own read timeout bounds the wait instead.
        client = Client(
            self._params,
            mode="legacy",
            cache=None,
            read_timeout_seconds=limit,
            client_info=mcp_types.Implementation(name=self._client_name, version=__version__),
            elicitation_callback=None if self._elicit is None else sdk_callback(self._elicit),
            sampling_callback=None
            if self._sampler is None
            else sampling_callback(self._sampler, self._params.command),
            sampling_capabilities=None
            if self._sampler is None
            else mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability()),
        )
        try:
            try:
                self._client = await self._stack.enter_async_context(client)
            except BaseExceptionGroup as group:
                # The SDK's task groups wrap the handshake's failure; the caller wants it.
                failure = _single(group)
                if failure is None:
                    raise
                raise failure from group
        except OSError as exc:
            raise McpConnectionError(
                f"Cannot start MCP server {self._params.command!r}: {exc}"
            ) from exc
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise McpConnectionError(
                    f"The MCP server {self._params.command!r} closed the connection "
                    "before the handshake (did it exit?)."
                ) from exc
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpConnectionError(
                    f"The MCP server {self._params.command!r} did not answer the handshake "
                    f"within {limit or 0:g} seconds."
                ) from exc
            raise McpError(str(exc), code=exc.code) from exc
        info = client.server_info
        self.server_info = info.model_dump(mode="json", exclude_none=True) if info else None

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        tracing = telemetry.active()
        if tracing is not None and tracing.mcp.enabled():
            attributes = dict(_STDIO)
            if self._client is not None:
                with suppress(RuntimeError):  # not yet negotiated
                    attributes["mcp.protocol.version"] = self._client.protocol_version
            return await tracing.mcp.client_request(
                method,
                params,
                attributes,
                lambda stamped: self._request(method, stamped, limit=limit),
            )
        return await self._request(method, params, limit=limit)

    async def _request(
        self, method: str, params: dict[str, Any] | None, *, limit: float | None
    ) -> Any:
        client = self._client
        if client is None:
            raise McpConnectionError("the stdio MCP server is not connected")
        params = params or {}
        with anyio.fail_after(limit):
            try:
                if method == "tools/list":
                    listed = await client.list_tools(
                        cursor=params.get("cursor"), cache_mode="bypass"
                    )
                    return listed.model_dump(mode="json", by_alias=True, exclude_none=True)
                # Not `session.call_tool`: it raises RuntimeError for a result that breaks the
                # tool's output schema; the client checks that itself, the same way for HTTP.
                request = mcp_types.CallToolRequest(
                    params=mcp_types.CallToolRequestParams(
                        name=params["name"],
                        arguments=params.get("arguments"),
                        _meta=params.get("_meta"),  # the caller's trace context, when traced
                    )
                )
                raw = await client.session.send_request(
                    request, _RawResult, request_read_timeout_seconds=limit
                )
                return raw.model_extra or {}
            except pydantic.ValidationError as exc:
                problem = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
                where = ".".join(str(p) for p in problem.get("loc", ()))
                raise McpProtocolError(
                    f"the {method} result breaks the protocol: {where} {problem['msg']}".strip()
                ) from None
            except MCPError as exc:
                if exc.code == mcp_types.REQUEST_TIMEOUT:
                    raise TimeoutError from exc  # the SDK already told the server to stop
                # A subprocess that died closes the pipe; the SDK answers every pending request
                # with CONNECTION_CLOSED, which we pass on as a dropped connection.
                if exc.code == mcp_types.CONNECTION_CLOSED:
                    raise McpConnectionError(str(exc), may_have_run=True) from exc
                raise McpError(exc.error.message, code=exc.code) from exc

    async def close(self) -> None:
        self._client = None
        await self._stack.aclose()


def _visible_ascii(text: str) -> bool:
    return bool(text) and all("\x21" <= c <= "\x7e" for c in text)


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside (possibly nested) groups, or `None` when there are several."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        inner: tuple[BaseException, ...] = typing.cast(Any, found).exceptions
        if len(inner) != 1:
            return None
        found = inner[0]
    return found


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
        server: A Streamable HTTP URL, or `StdioServerParameters` to run the server as a
            subprocess (command, args, env).
        auth_token: Sent as `Authorization: Bearer <token>`, for servers that take a fixed token.
        auth: OAuth 2.1 for servers behind it, as the MCP specification describes: `OAuth(...)`
            (authorization code with PKCE, for people), `ClientCredentials(...)` (machines) or
            `CrossAppAccess(...)` (an enterprise identity provider's sign-in), from
            `toolwire.mcp.auth`, or any `httpx2.Auth`. HTTP only.
        headers: Extra HTTP headers for every request.
        client_name: How the client introduces itself to the server.
        timeout: Seconds a request may take; a tool call past it is cancelled on the server
            and answered with a `ToolTimeoutError` error result. `None` waits forever.
        session_id: Resume an existing HTTP session instead of opening one (handshake era).
        protocol: `"auto"` speaks MCP 2026-07-28 (per-request, no session) when the server
            offers it and the initialize handshake otherwise; `"legacy"` always handshakes.
        http_client: An `httpx2.AsyncClient` (the HTTP client the `mcp` SDK is built on) to use,
            and leave open, instead of our own.
        max_answer_bytes: The largest answer read over HTTP, decompressed: a JSON body, or one
            event of an SSE stream (default 32 MiB). A larger one is not read further, and the
            call gets an error result naming this cap.
        elicitation: Answers a server's requests for input during a call (see
            `toolwire.mcp.elicitation`); without it they are declined.
        sampling: Answers a server's requests for a completion during a call with a toolwire
            model: a `Sampler` (the model, an approval callback, limits; see
            `toolwire.mcp.sampling`) or a bare `Model`, which answers every request. Without
            it the capability is not declared and such requests get an error.
    """

    def __init__(
        self,
        server: str | StdioServerParameters,
        *,
        auth_token: str | None = None,
        auth: OAuth | ClientCredentials | CrossAppAccess | httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        client_name: str = "toolwire",
        timeout: float | None = 60.0,
        session_id: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        protocol: _Era = "auto",
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        elicitation: ElicitationHandler | None = None,
        sampling: Sampler | Model | None = None,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        if max_answer_bytes <= 0:
            raise ValueError(f"max_answer_bytes must be positive, got {max_answer_bytes}")
        if session_id is not None and not _visible_ascii(session_id):
            raise ValueError("session_id must be visible ASCII, as MCP requires")
        self.server = server
        self.timeout = timeout
        self.client_name = client_name
        if auth is not None and auth_token is not None:
            raise ValueError("give auth_token or auth, not both")
        self._auth_token = auth_token
        self._auth = auth
        self._headers = dict(headers or {})
        self._session_id = session_id
        self._http_client = http_client
        self.protocol: _Era = protocol
        self.max_answer_bytes = max_answer_bytes
        self.elicitation = elicitation
        self.sampling: Sampler | None = (
            Sampler(sampling)
            if sampling is not None and not isinstance(sampling, Sampler)
            else sampling
        )
        self._conn: _HttpConnection | _StdioConnection | None = None
        self._specs: dict[str, McpToolSpec] = {}
        self._output_checks: dict[str, SchemaValidator | None] = {}

    def __repr__(self) -> str:
        target = self.server if isinstance(self.server, str) else self.server.command
        return f"McpClient({target!r})"

    @property
    def connected(self) -> bool:
        """Whether `connect()` has succeeded and `close()` has not been called since."""
        return self._conn is not None

    @property
    def session_id(self) -> str | None:
        """The HTTP session id the server gave us, if any."""
        conn = self._conn
        return conn.session.session_id if isinstance(conn, _HttpConnection) else None

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision in use over HTTP (e.g. `"2026-07-28"` or `"2025-11-25"`)."""
        conn = self._conn
        return conn.session.protocol_version if isinstance(conn, _HttpConnection) else None

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's `serverInfo` (name, version, ...) from the handshake."""
        return self._conn.server_info if self._conn is not None else None

    async def connect(self) -> None:
        """Open the session (the initialize handshake). Does nothing when already connected.

        Raises:
            McpConnectionError: the server cannot be reached or started.
            McpAuthError: the server refused the credentials.
            McpError: the server refused the handshake.
        """
        if self._conn is not None:
            return
        if isinstance(self.server, str):
            session = HttpSession(
                self.server,
                http_client=self._http_client,
                headers=self._headers,
                auth_token=self._auth_token,
                auth=self._auth.provider(self.server)
                if isinstance(self._auth, OAuth | ClientCredentials | CrossAppAccess)
                else self._auth,
                client_info={"name": self.client_name, "version": __version__},
                connect_timeout=min(self.timeout or 10.0, 10.0),
                session_id=self._session_id,
                max_answer_bytes=self.max_answer_bytes,
                elicit=self.elicitation,
                sampler=self.sampling,
            )
            # Questions come as server requests in the handshake era and as `input_required`
            # results in the per-request era; both are answered. "auto" keeps the handshake era
            # for a client that can be asked, since most servers still ask with requests, which
            # the per-request era cannot carry; protocol="modern" answers `input_required`.
            answers = self.elicitation is not None or self.sampling is not None
            era: _Era = "legacy" if answers and self.protocol == "auto" else self.protocol
            conn: _HttpConnection | _StdioConnection = _HttpConnection(session, era)
        else:
            conn = _StdioConnection(self.server, self.client_name, self.elicitation, self.sampling)
        try:
            await conn.open(self.timeout)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await conn.close()
            raise
        self._conn = conn

    async def close(self) -> None:
        """End the session (HTTP DELETE where the server keeps sessions) and free resources."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

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

    def _connection(self) -> _HttpConnection | _StdioConnection:
        if self._conn is None:
            raise RuntimeError("McpClient is not connected: use `async with` or call connect()")
        return self._conn

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
        if isinstance(conn, _HttpConnection):
            conn.session.remember_tools({s.name: s.input_schema for s in specs})
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
        conn: _HttpConnection | _StdioConnection,
        name: str,
        params: dict[str, Any],
        repeatable: bool,
        limit: float | None,
    ) -> ToolResult:
        try:
            try:
                raw = await conn.request("tools/call", params, repeatable=repeatable, limit=limit)
            except McpError as exc:
                if exc.code != _HEADER_MISMATCH or not isinstance(conn, _HttpConnection):
                    raise
                # A 2026-07-28 server checks the call's Mcp-Param headers against the listed
                # schema; ours were missing or stale, so list afresh and send it once more.
                await self.list_tools()
                raw = await conn.request("tools/call", params, repeatable=repeatable, limit=limit)
            rounds = 0
            while (
                isinstance(conn, _HttpConnection)
                and isinstance(raw, dict)
                and typing.cast(dict[str, Any], raw).get("resultType") == "input_required"
            ):
                # 2026-07-28: the server asks first; the call goes again with the answers.
                rounds += 1
                if rounds > _MAX_INPUT_ROUNDS:
                    raise McpProtocolError(f"still asking after {_MAX_INPUT_ROUNDS} rounds")
                asked = typing.cast(dict[str, Any], raw)
                params = {
                    **params,
                    "inputResponses": await conn.session.answer_inputs(asked.get("inputRequests")),
                }
                if asked.get("requestState") is not None:
                    params["requestState"] = asked["requestState"]
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
