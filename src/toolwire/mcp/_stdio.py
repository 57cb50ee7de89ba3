"""The stdio transport: an MCP server run as a subprocess, driven through the SDK's client (its
stdio transport is sound, and a pipe has none of the failures HTTP recovery is about)."""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack, suppress
from typing import Any

import anyio
import anyio.lowlevel
import mcp_types
import pydantic
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.shared.exceptions import MCPError

from mcp import Client, StdioServerParameters

from .. import telemetry
from ._content import McpConnectionError, McpError, McpProtocolError
from ._transport import McpClientOptions
from .elicitation import sdk_callback
from .sampling import sdk_callback as sampling_callback

__all__ = ["StdioTransport"]

_STDIO = {"network.transport": "pipe"}
"""The MCP conventions' attributes of a stdio connection's requests."""


@functools.cache
def _requests() -> pydantic.TypeAdapter[mcp_types.ClientRequest]:
    """The protocol's client requests, to send a method other than tools/list and tools/call
    (built on first use: most clients never need it)."""
    return pydantic.TypeAdapter(mcp_types.ClientRequest)


class _RawResult(pydantic.BaseModel):
    """A result taken from the SDK's stdio client as is, to be parsed like those over HTTP."""

    model_config = pydantic.ConfigDict(extra="allow")


class StdioTransport:
    """A subprocess server over stdio: the transport `McpClient(StdioServerParameters(...))` uses.

    Args:
        params: The command to run, with its arguments, environment and working directory.
    """

    def __init__(self, params: StdioServerParameters) -> None:
        self.params = params
        self._stack = AsyncExitStack()
        self._client: Client | None = None
        self.server_info: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"StdioTransport({self.params.command!r})"

    @property
    def session_id(self) -> str | None:
        """Always `None`: a pipe is one connection, with no session id."""
        return None

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision the handshake agreed on, once open."""
        if self._client is None:
            return None
        with suppress(RuntimeError):  # not yet negotiated
            return self._client.protocol_version
        return None

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        """Nothing to note: the handshake era mirrors no arguments."""

    async def open(self, options: McpClientOptions) -> None:
        tracing = telemetry.active()
        if tracing is not None and tracing.mcp.enabled():
            # The SDK sends the handshake; its span is ours, and the SDK puts the span's
            # context in the request's `_meta`.
            await tracing.mcp.client_request(
                "initialize", None, _STDIO, lambda _: self._open(options)
            )
        else:
            await self._open(options)

    async def _open(self, options: McpClientOptions) -> None:
        limit = options.timeout
        # No cancel scope around the handshake: the SDK client opens task groups that outlive
        # it, so its own read timeout bounds the wait instead.
        client = Client(
            self.params,
            mode="legacy",
            cache=None,
            read_timeout_seconds=limit,
            client_info=mcp_types.Implementation(name=options.name, version=options.version),
            elicitation_callback=None
            if options.elicitation is None
            else sdk_callback(options.elicitation),
            sampling_callback=None
            if options.sampler is None
            else sampling_callback(options.sampler, self.params.command),
            sampling_capabilities=None
            if options.sampler is None
            else mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability()),
            message_handler=None
            if options.on_notification is None
            else _notification_handler(options.on_notification),
        )
        self._stack = AsyncExitStack()
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
                f"Cannot start MCP server {self.params.command!r}: {exc}"
            ) from exc
        except MCPError as exc:
            if exc.code == mcp_types.CONNECTION_CLOSED:
                raise McpConnectionError(
                    f"The MCP server {self.params.command!r} closed the connection "
                    "before the handshake (did it exit?)."
                ) from exc
            if exc.code == mcp_types.REQUEST_TIMEOUT:
                raise McpConnectionError(
                    f"The MCP server {self.params.command!r} did not answer the handshake "
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
            version = self.protocol_version
            if version is not None:
                attributes["mcp.protocol.version"] = version
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
                if method != "tools/call":
                    # Any other request the protocol defines (resources/read, prompts/get, ...),
                    # typed by the SDK so it goes out as the SDK would send it.
                    request = _requests().validate_python({"method": method, "params": params})
                    raw = await client.session.send_request(
                        request, _RawResult, request_read_timeout_seconds=limit
                    )
                    return raw.model_extra or {}
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


def _notification_handler(callback: Callable[[str, Any], None]) -> MessageHandlerFnT:
    """The SDK's message handler passing each server notification on to `callback`."""

    async def handle(message: IncomingMessage) -> None:
        if not isinstance(message, Exception):
            params: Any = getattr(message, "params", None)
            dumped = params.model_dump(mode="json", by_alias=True) if params is not None else None
            callback(message.method, dumped)
        await anyio.lowlevel.checkpoint()

    return handle


def _single(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside (possibly nested) groups, or `None` when there are several."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        inner: tuple[BaseException, ...] = typing.cast(Any, found).exceptions
        if len(inner) != 1:
            return None
        found = inner[0]
    return found
