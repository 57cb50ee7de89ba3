"""The MCP side of `toolwire.telemetry`: a span per MCP request or notification, both ways.

Attribute names, span names (`{mcp.method.name} {target}`) and the `_meta` propagation follow
the OpenTelemetry semantic conventions for MCP. The client side is called from the one place
each transport sends a message (`HttpSession._send` and `notify`, the stdio connection); the
server side is a middleware of the SDK's `Server`, so every request served (handshake,
listings, calls, resources, prompts, pings) gets its span, continuing the caller's trace.

Imported only through `instrument()`, like `_otel`.
"""

from __future__ import annotations

import json
import time
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio
from opentelemetry import trace
from opentelemetry.propagate import extract, inject
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode


class _Host(Protocol):
    """What the spans need of the instrumentation that owns them (`_otel.Instrumentation`,
    which imports this module: named by its shape so the import runs one way)."""

    tracer: trace.Tracer
    capture_content: bool

    def configured(self) -> bool: ...


__all__ = ["McpSpans"]

_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0]
"""The MCP conventions' advised boundaries for operation durations, in seconds."""

_NAMED = {"tools/call": "gen_ai.tool.name", "prompts/get": "gen_ai.prompt.name"}
"""Methods whose span name carries a target, and the attribute that names it."""

_WITH_URI = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})

_INVALID_PARAMS = "-32602"

_METRIC_KEYS = (
    "mcp.method.name",
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
    "server.address",
    "server.port",
)
"""The span attributes that are also the duration metrics' (low cardinality only)."""


def _method_attributes(method: str, params: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes a request's method and params give."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    name = method
    key = _NAMED.get(method)
    target = params.get("name") if params is not None and key is not None else None
    if key is not None and isinstance(target, str):
        attributes[key] = target
        name = f"{method} {target}"
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
    if method in _WITH_URI and params is not None and isinstance(params.get("uri"), str):
        attributes["mcp.resource.uri"] = params["uri"]
    return name, attributes


def error_type(error: BaseException) -> str:
    """The conventions' `error.type`: the JSON-RPC error code when there is one."""
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return "cancelled"
    code = getattr(error, "code", None)
    if isinstance(code, int) and not isinstance(code, bool):
        return str(code)
    named = getattr(error, "error_type", None)
    return named if isinstance(named, str) else type(error).__qualname__


def _is_tool_error(result: Any) -> bool:
    if isinstance(result, Mapping):
        return typing.cast(Mapping[str, Any], result).get("isError") is True
    return getattr(result, "is_error", None) is True


class McpSpans:
    """The MCP conventions' spans and duration metrics, for what `instrument()` set up."""

    def __init__(self, instrumentation: _Host, meter: Any) -> None:
        self._otel = instrumentation
        self.client_duration = meter.create_histogram(
            "mcp.client.operation.duration",
            unit="s",
            description="Duration of each MCP request or notification sent, until answered.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.server_duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="Duration of each MCP request or notification served.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )

    def enabled(self) -> bool:
        """Whether spans would record (see `Instrumentation.configured`)."""
        return self._otel.configured()

    # -- the client side

    @staticmethod
    def http_attributes(
        url: str, session_id: str | None, protocol_version: str | None
    ) -> dict[str, Any]:
        """The attributes of a Streamable HTTP session a request goes through."""
        out: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
        try:
            parts = urlsplit(url)
            if parts.hostname:
                out["server.address"] = parts.hostname
                out["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            pass  # a URL the HTTP client would refuse anyway
        if session_id:
            out["mcp.session.id"] = session_id
        if protocol_version:
            out["mcp.protocol.version"] = protocol_version
        return out

    async def client_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        attributes: Mapping[str, Any],
        send: Callable[[dict[str, Any] | None], Awaitable[Any]],
        *,
        request_id: int | str | None = None,
    ) -> Any:
        """Send one request (or notification) inside its CLIENT span.

        The span's context is injected into a copy of `params._meta` (W3C `traceparent` and
        `tracestate`, unprefixed, as the conventions say), and `send` gets those params.
        """
        name, attrs = _method_attributes(method, params)
        attrs.update(attributes)
        if request_id is not None:
            attrs["jsonrpc.request.id"] = str(request_id)
        started = time.perf_counter()
        with self._otel.tracer.start_as_current_span(
            name,
            kind=SpanKind.CLIENT,
            attributes=attrs,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            stamped = dict(params or {})
            meta: dict[str, Any] = dict(stamped.get("_meta") or {})
            inject(meta)
            if meta:
                stamped["_meta"] = meta
            try:
                result = await send(stamped if stamped or params is not None else None)
            except BaseException as error:
                self._failed(span, error, self.client_duration, attrs, started)
                raise
            if method == "tools/call" and _is_tool_error(result):
                _tool_error(span)
                attrs["error.type"] = "tool_error"
            self.client_duration.record(time.perf_counter() - started, _metric(attrs))
            return result

    # -- the server side

    async def served(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None,
        attributes: Mapping[str, Any],
        call_next: Callable[[], Awaitable[Any]],
    ) -> Any:
        """Serve one request (or notification) inside its SERVER span.

        The span's parent is the context the caller put in `_meta`; a context already current
        here (an HTTP server's span, say) is linked to it instead, as the conventions advise.
        """
        name, attrs = _method_attributes(method, params)
        attrs.update(attributes)
        parent = _extracted(meta)
        links: list[Link] = []
        if parent is not None:
            ambient = trace.get_current_span().get_span_context()
            if ambient.is_valid:
                links.append(Link(ambient))
        capture = self._otel.capture_content and method == "tools/call" and params is not None
        if capture and params is not None and params.get("arguments") is not None:
            attrs["gen_ai.tool.call.arguments"] = _json(params["arguments"])
        started = time.perf_counter()
        with self._otel.tracer.start_as_current_span(
            name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attrs,
            links=links,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result: Any = await call_next()
            except BaseException as error:
                self._failed(span, error, self.server_duration, attrs, started)
                raise
            if method == "tools/call":
                if _is_tool_error(result):
                    _tool_error(span)
                    attrs["error.type"] = "tool_error"
                elif capture:
                    span.set_attribute("gen_ai.tool.call.result", _json(result))
            self.server_duration.record(time.perf_counter() - started, _metric(attrs))
            return result

    async def served_message(
        self,
        message: Mapping[str, Any],
        session: Mapping[str, Any],
        call_next: Callable[[], Awaitable[Any]],
    ) -> Any:
        """Answer a request a server sent the client (a ping, an elicitation) in its span.

        `session` is the client's view of the session (`http_attributes`); the server's address
        stays off a span where the client is the one serving.
        """
        raw: Any = message.get("params")
        params = typing.cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else None
        raw = params.get("_meta") if params is not None else None
        meta = typing.cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else None
        attributes = {k: v for k, v in session.items() if not k.startswith("server.")}
        if message.get("id") is not None:
            attributes["jsonrpc.request.id"] = str(message["id"])
        method = message.get("method")
        return await self.served(str(method), params, meta, attributes, call_next)

    @staticmethod
    def _failed(
        span: Span, error: BaseException, histogram: Any, attrs: dict[str, Any], started: float
    ) -> None:
        kind = error_type(error)
        if type(error).__name__ == "ValidationError":  # pydantic: the params broke their schema
            kind = _INVALID_PARAMS
        attrs["error.type"] = kind
        span.set_attribute("error.type", kind)
        if kind.lstrip("-").isdigit():
            attrs["rpc.response.status_code"] = kind
            span.set_attribute("rpc.response.status_code", kind)
        message = getattr(getattr(error, "error", None), "message", None)
        if kind == _INVALID_PARAMS and not isinstance(message, str):
            message = "Invalid request parameters"  # pydantic's text holds the caller's input
        if not isinstance(message, str):
            message = str(error) or type(error).__name__
        span.set_status(Status(StatusCode.ERROR, message))
        if not kind.lstrip("-").isdigit() and kind != "cancelled":
            span.record_exception(error)
        histogram.record(time.perf_counter() - started, _metric(attrs))


def _json(value: Any) -> str:
    dump = getattr(value, "model_dump", None)  # a result the SDK's own model holds
    if callable(dump):
        value = dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(value, ensure_ascii=False, default=str)


def _tool_error(span: Span) -> None:
    span.set_attribute("error.type", "tool_error")
    span.set_status(Status(StatusCode.ERROR))


def _metric(attrs: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: attrs[key] for key in _METRIC_KEYS if key in attrs}
    for key in ("error.type", "rpc.response.status_code"):
        if key in attrs:
            out[key] = attrs[key]
    return out


def _extracted(meta: Mapping[str, Any] | None) -> Any:
    """The caller's context from `_meta`, or `None` (a malformed carrier starts a new trace)."""
    if not meta:
        return None
    try:
        found = extract(dict(meta))
    except (TypeError, ValueError):
        return None
    if not trace.get_current_span(found).get_span_context().is_valid:
        return None
    return found
