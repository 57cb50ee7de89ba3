"""A stateless server's handshake-era request with a JSON answer, served in the request's task.

For such a request the SDK's session manager builds a whole session per request: a transport,
its memory streams and message router, a JSON-RPC dispatcher and a task to run them, all torn
down once the one answer is out. Nothing of it outlives the request, and a JSON answer carries
nothing but the response (no progress, no log lines, no questions: a stateless server has no
stream for them). `StatelessJson` answers the same request with the same steps the SDK takes,
minus that machinery: the SDK's Host/Origin and content-type checks, its Accept rule, the same
parse and validation errors, the SDK's request kernel (`serve_one`) for the method, and the
dispatcher's mapping of a failure to a JSON-RPC error. Anything else (another method, an SSE
answer, a 2026-07-28 request) goes to the SDK's manager as before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import ServerRunner, aclose_shielded, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import (
    handler_exception_to_error_data,
    progress_token_from_params,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    JSONRPCNotification,
    JSONRPCRequest,
    ProgressToken,
    RequestId,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["JsonApp", "JsonExchange", "StatelessJson"]

logger = logging.getLogger("toolwire.mcp")

_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
"""What a handler learns of the transport: HTTP, with no way to send the client a request."""

_JSON = (b"content-type", b"application/json")


class JsonApp:
    """What an ASGI app answering MCP POSTs with JSON in the request's own task holds.

    Args:
        server: The low-level server whose handlers answer.
        manager: The SDK's session manager's handler, for everything else.
        security: The Host/Origin settings the SDK's transport would check.
    """

    def __init__(
        self, server: Server[Any], manager: ASGIApp, security: TransportSecuritySettings
    ) -> None:
        self.server = server
        self.manager = manager
        self.security = TransportSecurityMiddleware(security)
        # What the server's lifespan yields: toolwire's server has none of its own, and the
        # SDK's default yields an empty state.
        self.lifespan_state: dict[str, Any] = {}


class StatelessJson(JsonApp):
    """Serve stateless handshake-era POSTs with JSON answers in the request's own task."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.manager(scope, receive, send)
            return
        request = Request(scope, receive)
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            # 2026-07-28, or a version nobody serves: the SDK's per-request entry says which.
            await self.manager(scope, receive, send)
            return
        refused = await self.security.validate_request(request, is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        has_json, _ = check_accept_headers(request)
        if not has_json:
            await _error(
                send,
                HTTPStatus.NOT_ACCEPTABLE,
                INVALID_REQUEST,
                "Not Acceptable: Client must accept application/json",
            )
            return
        content_type = request.headers.get("content-type", "")
        if "application/json" not in (p.strip() for p in content_type.split(";")[0].split(",")):
            await _error(
                send,
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                INVALID_REQUEST,
                "Unsupported Media Type: Content-Type must be application/json",
            )
            return
        body = await request.body()
        try:
            raw = pydantic_core.from_json(body)
        except ValueError as exc:
            await _error(send, HTTPStatus.BAD_REQUEST, PARSE_ERROR, f"Parse error: {exc}")
            return
        try:
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError as exc:
            await _error(send, HTTPStatus.BAD_REQUEST, INVALID_PARAMS, f"Validation error: {exc}")
            return
        # Born ready, as the SDK's stateless session is: the header (or the spec's default
        # when there is none) is the protocol version.
        connection = Connection.from_envelope(version or DEFAULT_NEGOTIATED_VERSION, None, None)
        metadata = ServerMessageMetadata(request_context=request, can_send_request=False)
        if not isinstance(message, JSONRPCRequest):
            await _answer(send, HTTPStatus.ACCEPTED, b"")
            # A posted response has no request of ours to answer; a notification is handed to
            # the server after the acknowledgement, as the SDK does.
            if isinstance(message, JSONRPCNotification):
                runner = ServerRunner(self.server, connection, self.lifespan_state)
                try:
                    await runner.on_notify(
                        JsonExchange(_TRANSPORT, None, metadata, None),
                        message.method,
                        message.params,
                    )
                finally:
                    await aclose_shielded(connection)
            return
        context = JsonExchange(
            _TRANSPORT, message.id, metadata, progress_token_from_params(message.params)
        )
        try:
            result = await serve_one(
                self.server,
                context,
                message.method,
                message.params,
                connection=connection,
                lifespan_state=self.lifespan_state,
            )
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                # As the SDK's dispatcher answers a handler's unexpected failure.
                logger.exception("handler for %r raised", message.method)
                error_body: dict[str, Any] = {"code": 0, "message": str(exc)}
            else:
                error_body = error.model_dump(by_alias=True, exclude_unset=True)
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "error": error_body}
        else:
            answer = {"jsonrpc": "2.0", "id": message.id, "result": result}
        await _answer(send, HTTPStatus.OK, pydantic_core.to_json(answer))


class JsonExchange:
    """The dispatch context of one request answered with JSON: no back-channel, nowhere for
    notifications to go (a JSON answer carries only the response), as the SDK's own for this case.
    Used by this module and by the 2026-07-28 path (`_modern`)."""

    def __init__(
        self,
        transport: TransportContext,
        request_id: RequestId | None,
        metadata: ServerMessageMetadata,
        progress_token: ProgressToken | None,
    ) -> None:
        self.transport = transport
        self.can_send_request = False
        self.request_id = request_id
        self.message_metadata = metadata
        self.progress_token = progress_token
        self._cancel: anyio.Event | None = None

    @property
    def cancel_requested(self) -> anyio.Event:
        """Never set (no cancellation reaches this exchange by message); made only if asked for."""
        if self._cancel is None:
            self._cancel = anyio.Event()
        return self._cancel

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        logger.debug("dropped %s: a JSON answer carries only the response", method)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [_JSON, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _error(send: Send, status: int, code: int, message: str) -> None:
    """A JSON-RPC error without an id, as the SDK's transport answers a refused request."""
    body = pydantic_core.to_json(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    )
    await _answer(send, status, body)
