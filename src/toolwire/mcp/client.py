"""`McpClient`: an MCP server's tools as ordinary toolwire tools, over any `McpTransport`."""

from __future__ import annotations

import gc
import logging
import re
import typing
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from contextlib import AsyncExitStack, contextmanager
from types import TracebackType
from typing import Any, ClassVar, Self, TypeAlias

import anyio
import httpx2
from starlette.types import ASGIApp

from mcp import StdioServerParameters

from .. import __version__
from .._dialects import CompiledSchema, Dialect
from .._validate import SchemaValidator
from ..errors import SchemaError, ToolError, ToolTimeoutError
from ..models.base import Model
from ..results import ToolResult, error_result
from ..tools import (
    DefinitionDialect,
    FunctionTool,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolDefinition,
    tool,
)
from ..toolsets import Toolset, ToolsetContext
from ._asgi import AsgiTransport
from ._content import (
    InputSchemas,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpToolSpec,
    SharedValues,
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

_TOOLS_CHANGED = "notifications/tools/list_changed"

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""A tool name some dialect surely takes; any other is checked when the tool is listed."""

logger = logging.getLogger("toolwire.mcp")


class McpClient(Toolset):
    """A connection to one MCP server, whose tools become ordinary toolwire tools.

    Use it as an async context manager (or call `connect()` and `close()`):

        async with McpClient("http://127.0.0.1:8000/mcp", auth_token=token) as client:
            tools = await client.tools()

    Over HTTP the client recovers by itself: when the server no longer knows the session (HTTP
    404, or a 400 that says so, e.g. after a restart) it opens a new one and repeats the request
    once; a 429 or 503 with a short `Retry-After` is waited out and repeated; when the
    connection drops during a call, it repeats the call only for read-only or idempotent tools
    and otherwise answers with an error result saying the call may or may not have run.

    A client is a toolset: `Agent(model, tools=[client])` offers the server's tools at every
    step, listed once and again only after the server says they changed
    (`notifications/tools/list_changed`, on any stream it sends them on). Used as `async with`,
    the client also keeps a change stream open when the server announces changes: the GET
    stream in the handshake era, a `subscriptions/listen` request with MCP 2026-07-28 (see
    `watch_tools`). A listed tool with no name, or a second tool by one name, is left out and
    reported (`problems`), not allowed to hide the others.

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
        follow_changes: Used as `async with`, keep a stream open for the server's tool list
            changes when it announces them (see `watch_tools`). `False` opens none; changes
            announced on other answers are still honoured.

    The HTTP options (`auth_token` to `max_answer_bytes`) apply to a URL or an ASGI app; with
    stdio parameters or a transport of your own they raise `ValueError` (give them to the
    transport).

    Attributes:
        transport: The `McpTransport` that carries the requests.
        tools_version: How many tool list changes the client has learnt of: announced by the
            server, or possibly missed (each opening of a change stream counts as one).
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
        follow_changes: bool = True,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.server = server
        self.follow_changes = follow_changes
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
        self.remote = True
        self.label = _label_of(server)
        self.tools_version = 0
        self._stale = True
        self._listed: list[McpToolSpec] = []
        # Per (prefix, approval): the listing the tools were made from, and the tools.
        self._made: dict[
            tuple[str | None, bool], tuple[list[McpToolSpec], tuple[McpTool, ...]]
        ] = {}
        self._list_lock = anyio.Lock()
        self._watch: tuple[AsyncExitStack, anyio.CancelScope] | None = None
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
            on_notification=self._notified,
        )
        self._stale = True  # a new connection may find other tools
        try:
            await self.transport.open(options)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.transport.close()
            raise
        self._connected = True
        info = self.transport.server_info
        name = info.get("name") if info is not None else None
        if isinstance(name, str) and name:
            self.label = name

    @property
    def watching(self) -> bool:
        """Whether a stream for the server's tool list changes is open now (see `watch_tools`)."""
        return bool(getattr(self.transport, "watching", False))

    def _notified(self, method: str, params: Any) -> None:
        if method == _TOOLS_CHANGED:
            self._stale = True
            self.tools_version += 1
            logger.debug("MCP server %s changed its tools", self.label)

    async def watch_tools(self) -> None:
        """Keep a stream open for the server's tool list changes, until cancelled.

        `async with client` runs it for you; after a bare `connect()`, run it in a task group
        of your own. It returns at once when the server announces no changes (or its transport
        carries them without a stream of their own, as stdio does), and never raises.
        """
        watch = getattr(self.transport, "watch", None)
        if watch is None:
            return
        try:
            await watch()
        except Exception as exc:  # following changes is best effort; the client goes on
            self.report(f"stopped following tool list changes: {exc}")

    async def close(self) -> None:
        """End the session (HTTP DELETE where the server keeps sessions) and free resources."""
        if self._connected:
            self._connected = False
            await self.transport.close()

    async def __aenter__(self) -> Self:
        # The change stream runs in this task group, entered before the transport opens (which
        # may enter groups of its own) and left after it closes.
        stack = AsyncExitStack()
        tasks = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(tasks.cancel_scope.cancel)
        try:
            await self.connect()
        except BaseException:
            await stack.aclose()
            raise
        scope = anyio.CancelScope()  # the watcher's own: the group's would cancel the caller too
        if self.follow_changes:
            tasks.start_soon(_in_scope, scope, self.watch_tools)
        self._watch = (stack, scope)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        watch, self._watch = self._watch, None
        if watch is None:
            await self.close()
            return
        watch[1].cancel()
        try:
            await self.close()
        finally:
            await watch[0].aclose()

    def _connection(self) -> McpTransport:
        if not self._connected:
            raise RuntimeError("McpClient is not connected: use `async with` or call connect()")
        return self.transport

    async def list_tools(self) -> list[McpToolSpec]:
        """Every tool the server lists, following each page of the listing.

        Raises:
            McpError: the server failed the request or sent a malformed listing.
        """
        with _collector_paused():
            return await self._list_tools()

    async def _list_tools(self) -> list[McpToolSpec]:
        conn = self._connection()
        specs: list[McpToolSpec] = []
        cursor: str | None = None
        seen: set[str] = set()
        shared = SharedValues()  # equal descriptions and schemas kept once
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
            for item in typing.cast(list[Any], page["tools"]):
                try:
                    specs.append(parse_tool_spec(item, shared))
                except McpProtocolError as exc:  # one broken entry must not hide the others
                    self.report(f"left out a listed tool: {exc.message}")
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
            if cursor in seen:
                raise McpProtocolError(f"the server repeated the listing cursor {cursor!r}")
            seen.add(cursor)
        else:
            raise McpProtocolError(f"the tool listing did not end within {_MAX_PAGES} pages")
        by_name: dict[str, McpToolSpec] = {}
        for spec in specs:
            if spec.name in by_name:
                self.report(f"the server lists two tools named {spec.name!r}; the first is kept")
            else:
                by_name[spec.name] = spec
        specs = list(by_name.values())
        self._specs = by_name
        self._output_checks = {}
        conn.remember_tools(InputSchemas(by_name))
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
        if name not in self._output_checks:
            spec = self._specs.get(name)
            schema = spec.output_schema if spec is not None else None
            try:
                self._output_checks[name] = SchemaValidator(schema) if schema is not None else None
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

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        """The server's tools for a step of a run (see `live_tools`)."""
        return await self.live_tools()

    async def live_tools(
        self, *, prefix: str | None = None, requires_approval: bool = False, fresh: bool = False
    ) -> tuple[McpTool, ...]:
        """The server's tools, listed again only when the server said they changed.

        A tool listed as before is the same `McpTool` object as before, so its definitions stay
        compiled. `fresh` lists them again in any case; the other arguments are as for `tools`.
        """
        async with self._list_lock:
            if self._stale or fresh:
                self._stale = False  # before listing: a change announced meanwhile stays seen
                try:
                    self._listed = await self.list_tools()
                except BaseException:
                    self._stale = True
                    raise
        key = (prefix, requires_approval)
        listed = self._listed
        last = self._made.get(key)
        if last is not None and last[0] is listed:
            return last[1]  # not listed since: the same tools, in the same tuple
        # Names are unique in a listing; the map of the tools before lives only while re-listing.
        before = {t.spec.name: t for t in last[1]} if last is not None else {}
        with _collector_paused():
            made = tuple(
                found
                if (found := before.get(spec.name)) is not None and found.spec == spec
                else McpTool(self, spec, prefix=prefix, requires_approval=requires_approval)
                for spec in listed
            )
        self._made[key] = (listed, made)
        return made

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
        return list(
            await self.live_tools(prefix=prefix, requires_approval=requires_approval, fresh=True)
        )


@contextmanager
def _collector_paused() -> Generator[None]:
    """Pause Python's cycle collector while a listing is decoded and parsed.

    A listing of 100,000 tools allocates millions of containers, none in a cycle; each
    allocation burst would set off collections that walk the ever larger heap (more than half
    the CPU time of listing 100,000 tools, measured). Whatever cycles other tasks make meanwhile
    are collected once it runs again."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


async def _in_scope(scope: anyio.CancelScope, run: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await run()


def _label_of(server: McpTarget) -> str:
    """A short name for a server before it names itself: its URL's host or its command."""
    if isinstance(server, str):
        return httpx2.URL(server).host or server
    if isinstance(server, StdioServerParameters):
        return server.command.rsplit("/", 1)[-1]
    return type(server).__name__


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


class McpTool:
    """A tool of an MCP server: validated locally against the server's input schema, then called.

    `strict` is off (servers' schemas rarely fit strict mode) and the server's annotations,
    output schema and approval need are kept.

    Listing is cheap: the schema is checked and its validator compiled only when the tool is
    first used (`parameters`, a definition, `parse_args` or a call), since a server may list
    thousands of tools and a run uses few. A schema toolwire cannot honour (a dangling `$ref`, a
    pattern that is not ECMA-262, ...) never hides the tool nor fails the run: at that first use
    the client reports it (`McpClient.problems`, and a warning in the `toolwire.toolsets` log),
    and the tool accepts any object locally, leaving validation to the server.

    Attributes:
        client: The client that calls the tool.
        spec: The tool as the server listed it; `spec.name` is the server's name for it.
    """

    __slots__ = ("_built", "_name", "_requires_approval", "client", "spec")

    _toolwire_tool: ClassVar[bool] = True  # `as_tool` takes it without the protocol check

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
        self._name = f"{prefix}_{spec.name}" if prefix else spec.name
        self._requires_approval = requires_approval or spec.requires_approval
        self._built: FunctionTool | None = None
        if not _PLAIN_NAME.fullmatch(self._name):
            # A name no provider may take is refused at once (`ToolNameError`), as before.
            self._tool()

    def _tool(self) -> FunctionTool:
        """The schema-only tool that validates and defines this one, built on first use."""
        built = self._built
        if built is None:
            built = self._built = self._build()
        return built

    def _build(self) -> FunctionTool:
        spec = self.spec
        options: dict[str, Any] = {
            "name": self._name,
            "description": spec.description,
            "strict": False,
            "annotations": spec.annotations,
            "requires_approval": self._requires_approval,
        }
        # No `execute`: calls go through `invoke` below, so nothing inspects a function per tool.
        try:
            return tool(parameters=lenient_schema(spec.input_schema), **options)
        except SchemaError as exc:
            self.client.report(
                f"tool {spec.name!r}: its input schema cannot be checked here ({exc}); "
                "its arguments are left for the server to validate"
            )
            return tool(parameters={"type": "object"}, **options)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self.spec.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._tool().parameters

    @property
    def strict(self) -> bool:
        return False

    @property
    def annotations(self) -> ToolAnnotations:
        return self.spec.annotations

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.spec.output_schema

    @property
    def timeout(self) -> float | None:
        return None  # the client's own timeout applies to each call

    @property
    def sequential(self) -> bool:
        return False

    @property
    def requires_approval(self) -> bool:
        return self._requires_approval

    @property
    def executable(self) -> bool:
        return True

    def parse_args(self, raw: str | bytes | Mapping[str, Any] | None) -> Any:
        """Validate a call's arguments against the server's input schema.

        Raises:
            ToolArgumentsError: listing every problem found.
        """
        return self._tool().parse_args(raw)

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Validate the arguments, then call the tool on the server.

        Invalid arguments and any failure come back as error results; cancellation propagates.
        """
        try:
            parsed = self._tool().parse_args(args)
            return await self.client.call_tool(self.spec.name, parsed)
        except Exception as exc:
            return error_result(exc)

    def compiled(self, dialect: Dialect) -> CompiledSchema:
        """The input schema compiled for a dialect; compiled once, then cached."""
        return self._tool().compiled(dialect)

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        """The provider-ready definition, built once per dialect."""
        return self._tool().definition(dialect)

    def __repr__(self) -> str:
        return f"McpTool(name={self._name!r})"


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
