"""A 2026-07-28 request with a JSON answer, served in the request's task with less around it.

The SDK already answers such a request in its own task, but through a path built for every case:
a Starlette `Request` whose headers are parsed again by each check, a pydantic model of the whole
JSON-RPC reply dumped to a dict and then encoded by the `json` module, a Starlette `Response`.
`ModernJson` takes the request the SDK would answer with a result, the plain case, and serves
it with the SDK's own checks (Host/Origin and content type, Accept, the JSON-RPC request model,
the repeated routing headers, the envelope ladder, the `Mcp-Param-*` headers; the first two
asked of the SDK once per distinct header value and remembered) and the SDK's request kernel
(`serve_one`), then maps a failure with the SDK's `modern_error_data` and its error-code-to-status
table. Any request one of those checks would refuse, and anything else (another HTTP method, a
notification, `subscriptions/listen`, a server answering with SSE), goes to the SDK's session
manager with its body replayed, so the refusals are the SDK's own, word for word.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, cast

import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    validate_mcp_param_headers,
)
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import JSONRPCRequest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ._front import replayed
from ._stateless import JsonApp, JsonExchange

__all__ = ["ModernJson", "has_param_headers"]

logger = logging.getLogger("toolwire.mcp")

_VERSION_HEADER = b"mcp-protocol-version"
_PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower()
_ROUTING_HEADERS = frozenset({MCP_PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_NAME_HEADER})
"""The headers the SDK refuses to see twice (as `find_duplicated_routing_header` checks)."""
_HTTP_OK = 200


def has_param_headers(schema: Mapping[str, Any] | None) -> bool:
    """Whether an input schema may declare an `Mcp-Param-*` header (an `x-mcp-header` key
    anywhere in it); a schema without one can never fail the SDK's header check."""
    return schema is not None and "x-mcp-header" in json.dumps(schema)


class ModernJson(JsonApp):
    """Serve 2026-07-28 POSTs answered with JSON in the request's own task."""

    def __init__(
        self, server: Server[Any], manager: ASGIApp, security: TransportSecuritySettings
    ) -> None:
        super().__init__(server, manager, security)
        self._allowed: dict[tuple[str | None, str | None, str | None], bool] = {}
        self._accepts: dict[str, bool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.manager(scope, receive, send)
            return
        version = None
        for key, value in scope["headers"]:
            if key == _VERSION_HEADER:
                version = value
                break
        if version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.manager(scope, receive, send)
            return
        body = await _read(receive)
        if body is None:
            return  # the client left before sending its request
        request = Request(scope, replayed(body, receive))
        served = await self._plain(request, body)
        if served is None:
            # Refused or not the plain case: the SDK answers, as it would have.
            await self.manager(scope, replayed(body, receive), send)
            return
        req, route = served
        await self._serve(request, req, route, send)

    async def _plain(
        self, request: Request, body: bytes
    ) -> tuple[JSONRPCRequest, InboundModernRoute] | None:
        """The request and its envelope when the SDK would serve it with JSON; `None` when one of
        its checks would refuse it, or it is a case this path leaves to the SDK."""
        # One pass over the raw headers: the first value of each name (what a lookup by name
        # finds), and the routing headers as often as they come.
        first: dict[str, str] = {}
        routing: list[str] = []
        for raw_key, raw_value in request.scope["headers"]:
            key = raw_key.decode("latin-1")
            if key not in first:
                first[key] = raw_value.decode("latin-1")
            if (lowered := key.lower()) in _ROUTING_HEADERS:
                routing.append(lowered)
        # Refused by the SDK: first-copy and last-copy readers would disagree.
        repeated = len(routing) != len(set(routing))
        # The SDK's Host/Origin/content-type and Accept verdicts depend on those headers alone:
        # each is asked once per distinct value and remembered (a bounded memory).
        sighted = (first.get("content-type"), first.get("host"), first.get("origin"))
        allowed = self._allowed.get(sighted)
        if allowed is None:
            allowed = await self.security.validate_request(request, is_post=True) is None
            _remember(self._allowed, sighted, allowed)
        if not allowed:
            return None
        accept = first.get("accept", "")
        wants_json = self._accepts.get(accept)
        if wants_json is None:
            wants_json = check_accept_headers(request)[0]
            _remember(self._accepts, accept, wants_json)
        if not wants_json:
            return None
        try:
            decoded: Any = json.loads(body)
        except (ValueError, RecursionError):
            return None
        if not isinstance(decoded, dict) or "id" not in decoded:
            return None  # a notification, a batch or not an object
        try:
            req = JSONRPCRequest.model_validate(decoded)
        except ValidationError:
            return None
        if req.method == "subscriptions/listen":
            return None  # an SSE stream whatever the answer mode
        if repeated:
            return None
        route = classify_inbound_request(cast(dict[str, Any], decoded), headers=first)
        if not isinstance(route, InboundModernRoute):
            return None
        if req.method == "tools/call" and not self._params_agree(req.params or {}, request):
            return None
        return req, route

    def _params_agree(self, params: Mapping[str, Any], request: Request) -> bool:
        """The SDK's `Mcp-Param-*` check of a `tools/call`: whether it would let it through."""
        name = params.get("name")
        raw_arguments = params.get("arguments")
        if not isinstance(name, str) or (
            raw_arguments is not None and not isinstance(raw_arguments, Mapping)
        ):
            return True  # the SDK skips the check; the kernel judges the params
        arguments = cast(Mapping[str, Any], raw_arguments or {})
        headers = request.headers  # every line: a repeated `Mcp-Param-*` header is refused
        if not arguments and not any(key.startswith(_PARAM_PREFIX) for key in headers):
            return True
        lookup: Callable[[str], Mapping[str, Any] | None] | None = self.server.get_tool_input_schema
        if lookup is None:
            return False  # the SDK would find the schema through tools/list: let it
        try:
            schema = lookup(name)
        except Exception:
            return False  # the SDK logs it and skips the check: let it
        return schema is None or validate_mcp_param_headers(schema, arguments, headers) is None

    async def _serve(
        self, request: Request, req: JSONRPCRequest, route: InboundModernRoute, send: Send
    ) -> None:
        connection = Connection.from_envelope(
            route.protocol_version, route.client_info, route.client_capabilities
        )
        context = JsonExchange(
            TransportContext(
                kind="streamable-http", can_send_request=False, headers=request.headers
            ),
            req.id,
            ServerMessageMetadata(request_context=request),
            progress_token_from_params(req.params),
        )
        status = _HTTP_OK
        try:
            result = await serve_one(
                self.server,
                context,
                req.method,
                req.params,
                connection=connection,
                lifespan_state=self.lifespan_state,
            )
        except Exception as exc:
            error = modern_error_data(exc)
            status = ERROR_CODE_HTTP_STATUS.get(error.code, _HTTP_OK)
            answer: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": req.id,
                "error": error.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
        else:
            answer = {"jsonrpc": "2.0", "id": req.id, "result": result}
        # As the SDK's reply model dumps it (`exclude_none`), without building the model.
        payload = pydantic_core.to_json(answer, exclude_none=True)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-length", str(len(payload)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


_REMEMBERED = 256
"""Distinct header values whose verdict is kept; past it, new ones are judged every time."""


def _remember(memory: dict[Any, bool], key: Any, verdict: bool) -> None:
    if len(memory) < _REMEMBERED:
        memory[key] = verdict


async def _read(receive: Receive) -> bytes | None:
    """The whole request body (the front layer already capped it); `None` if the client left."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
