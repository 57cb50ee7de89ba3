"""The Streamable HTTP side of `McpClient`: JSON-RPC over POST, SSE answers, session recovery.

toolwire owns this exchange instead of driving the SDK's transport because recovery needs to see
what actually happened to each request: a 404 for our session id (the request was not processed,
so repeating it is safe), a connection that failed before the request left (also safe) and one
that dropped after it left (safe only for read-only or idempotent tools). The SDK's transport
folds these into one opaque error, or tears down its task group, so the caller cannot tell them
apart. It runs on `httpx2`, the SDK's own HTTP client, which holds up far better than `httpx`
under many concurrent requests.

Two protocol eras are spoken: the per-request revision 2026-07-28 (no handshake, no session;
each request says who we are) when `server/discover` offers it, else the initialize handshake
(2025-11-25 and older), which every server deployed today accepts.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import re
import typing
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import httpx2
from mcp.client.auth import OAuthFlowError
from mcp.shared.inbound import encode_header_value, mcp_param_headers, x_mcp_header_map
from pydantic import ValidationError

from .. import telemetry
from .._util import retry_after_seconds
from . import elicitation, sampling
from ._content import McpAuthError, McpConnectionError, McpError, McpProtocolError

if TYPE_CHECKING:
    from .._otel_mcp import McpSpans

__all__ = ["DEFAULT_MAX_ANSWER_BYTES", "HttpSession", "SessionGone"]

logger = logging.getLogger("toolwire.mcp")

PROTOCOL_VERSION = "2025-11-25"
"""The handshake revision we offer; servers may answer with an older one."""

MODERN_VERSION = "2026-07-28"
"""The per-request revision (no handshake, no session), used when `server/discover` offers it."""

_ACCEPTED_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CLIENT = "io.modelcontextprotocol/clientInfo"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_META_SERVER = "io.modelcontextprotocol/serverInfo"
_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_DEFAULT_RETRY_MS = 1000
_MAX_RESUMES = 3
"""How often one request's answer stream is resumed (GET + Last-Event-ID) before giving up."""

DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""The largest answer (a JSON body, or one SSE event) read, decompressed: 32 MiB."""

_MAX_ERROR_BYTES = 64 * 1024
"""How much of an HTTP error's body is read: enough for any message worth showing."""

_RETRY_AFTER_LIMIT = 30.0
"""The longest `Retry-After` delay honoured; a server asking for more gets an error at once."""

_MAX_RETRY_AFTERS = 3
"""How many `Retry-After` answers one request waits out before giving up."""


class SessionGone(Exception):
    """The server no longer knows our session id (HTTP 404, or a 400 that says so).

    Either way it refused the request before processing it, so a repeat is safe.
    """

    error_type = "session_gone"  # how a request's span names this failure


class _RetryLater(Exception):
    """HTTP 429 or 503 with `Retry-After`: the request was not processed; try again later."""

    def __init__(self, status: int, delay: float, error: McpError) -> None:
        super().__init__(error.message)
        self.status = status
        self.delay = delay
        self.error = error


class _Lost(Exception):
    """The connection failed; `delivered` says whether the request may have reached the server."""

    error_type = "connection_lost"  # how a request's span names this failure

    def __init__(self, message: str, *, delivered: bool) -> None:
        super().__init__(message)
        self.delivered = delivered


@dataclass(slots=True)
class _Event:
    data: str
    id: str | None
    retry: int | None


_LINE_END = re.compile(rb"\r\n|\r|\n")


async def _sse_events(response: httpx2.Response, limit: int) -> AsyncIterator[_Event]:
    """Server-sent events from a response body, per the WHATWG event-stream rules we need.

    Parsed from the decoded bytes rather than `aiter_lines`, so that one endless line or event
    cannot grow past `limit` bytes.

    Raises:
        McpProtocolError: one event is larger than `limit` bytes.
    """
    event = _EventBuilder()
    line = bytearray()  # the line still arriving
    size = 0  # bytes of the event so far, finished lines only
    after_cr = False  # the last chunk ended in "\r": a "\n" opening the next one belongs to it
    async for chunk in response.aiter_bytes():
        at = 1 if after_cr and chunk.startswith(b"\n") else 0
        after_cr = False
        for end in _LINE_END.finditer(chunk, at):
            line += chunk[at : end.start()]
            at = end.end()
            size += len(line) + 1
            if size > limit:
                raise _too_large(limit, "one server-sent event")
            if not line:
                size = 0  # an event ends here, even one that held only comments
            done = event.feed(bytes(line))
            line = bytearray()
            if done is not None:
                yield done
        line += chunk[at:]
        after_cr = chunk.endswith(b"\r")
        if size + len(line) > limit:
            raise _too_large(limit, "one server-sent event")
    if line:
        event.feed(bytes(line))
    done = event.feed(b"")
    if done is not None:
        yield done


class _EventBuilder:
    # The data is kept as bytes, not a list of lines: a million tiny lines would cost several
    # times their size in Python objects, past what the cap intends.
    __slots__ = ("data", "event_id", "lines", "retry")

    def __init__(self) -> None:
        self.data = bytearray()
        self.lines = 0
        self.event_id: str | None = None
        self.retry: int | None = None

    def feed(self, line: bytes) -> _Event | None:
        """Take one line; the finished event when it was the blank line ending one."""
        if not line:
            done = None
            if self.lines or self.event_id is not None or self.retry is not None:
                text = self.data.decode("utf-8", "replace")
                done = _Event(text.removesuffix("\n"), self.event_id, self.retry)
            self.data, self.lines, self.event_id, self.retry = bytearray(), 0, None, None
            return done
        if line.startswith(b":"):
            return None
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if name == b"data":
            self.data += value
            self.data += b"\n"
            self.lines += 1
        elif name == b"id":
            self.event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)
        return None


async def _read_capped(response: httpx2.Response, limit: int) -> bytes:
    """The decoded body, refused once it passes `limit` bytes (so memory stays bounded)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise _too_large(limit, "the answer")
    return bytes(body)


def _too_large(limit: int, what: str) -> McpProtocolError:
    return McpProtocolError(
        f"{what} is larger than {_size(limit)} (max_answer_bytes); it was not read further"
    )


def _size(count: int) -> str:
    if count >= 1024 * 1024 and not count % (1024 * 1024):
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and not count % 1024:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


class HttpSession:
    """One MCP session over Streamable HTTP; safe for concurrent requests."""

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx2.AsyncClient | None,
        headers: Mapping[str, str] | None,
        auth_token: str | None,
        auth: httpx2.Auth | None = None,
        client_info: dict[str, Any],
        connect_timeout: float,
        session_id: str | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        elicit: elicitation.ElicitationHandler | None = None,
        sampler: sampling.Sampler | None = None,
    ) -> None:
        self.url = url
        self._elicit = elicit
        self._sampler = sampler
        self.max_answer_bytes = max_answer_bytes
        self.session_id = session_id
        self.protocol_version: str | None = PROTOCOL_VERSION if session_id else None
        self.server_info: dict[str, Any] | None = None
        self.capabilities: dict[str, Any] = {}
        self._client_info = client_info
        self._owns_client = http_client is None
        self._client = http_client or httpx2.AsyncClient(
            # No read timeout: a tool may legitimately run for minutes. Callers bound each call.
            timeout=httpx2.Timeout(
                connect=connect_timeout, read=None, write=connect_timeout, pool=None
            ),
        )
        base = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        # Header names are case-insensitive: lower-case them so a caller's "Authorization" or
        # "Accept" replaces ours instead of going out as a second header.
        base.update({name.lower(): value for name, value in (headers or {}).items()})
        if auth_token is not None:
            base["authorization"] = f"Bearer {auth_token}"
        self._base_headers = base
        # Passed per request, not set on the client: a caller's own client stays untouched.
        self._auth: dict[str, Any] = {} if auth is None else {"auth": auth}
        self._ids = itertools.count(1)
        self._generation = 0
        self._lock = anyio.Lock()
        # Set when a session renewal failed: the old session is gone and no new one exists,
        # so the next request must open one before it can be sent.
        self._needs_session = False
        # Per tool, the arguments a 2026-07-28 server wants mirrored as `Mcp-Param-*` headers.
        self._param_headers: dict[str, dict[tuple[str, ...], str]] = {}

    @property
    def modern(self) -> bool:
        """Whether the per-request revision is in use (no session, no handshake)."""
        return self.protocol_version == MODERN_VERSION

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        """Note the listed input schemas; a modern server checks calls against them."""
        if self.modern:
            self._param_headers = {
                name: found
                for name, schema in schemas.items()
                if (found := x_mcp_header_map(schema))
            }

    # --- lifecycle --------------------------------------------------------------------------

    async def discover(self) -> bool:
        """Ask the server for the per-request revision; `False` when it only speaks handshakes.

        Raises:
            McpConnectionError: the server cannot be reached.
            McpAuthError: the server refused the credentials.
        """
        self.protocol_version = MODERN_VERSION
        try:
            result = await self._send(next(self._ids), "server/discover", None)
        except _Lost as exc:
            self.protocol_version = None
            raise McpConnectionError(f"Cannot reach the MCP server at {self.url}: {exc}") from exc
        except McpAuthError:
            self.protocol_version = None
            raise
        except (McpError, SessionGone):
            # Any refusal means "not a 2026-07-28 server": fall back to the handshake.
            self.protocol_version = None
            return False
        found: dict[str, Any] = (
            typing.cast(dict[str, Any], result) if isinstance(result, dict) else {}
        )
        versions: Any = found.get("supportedVersions")
        if not isinstance(versions, list) or MODERN_VERSION not in versions:
            self.protocol_version = None
            return False
        meta: Any = found.get("_meta")
        info: Any = (
            typing.cast(dict[str, Any], meta).get(_META_SERVER) if isinstance(meta, dict) else None
        )
        self.server_info = typing.cast(dict[str, Any], info) if isinstance(info, dict) else None
        caps = found.get("capabilities")
        self.capabilities = typing.cast(dict[str, Any], caps) if isinstance(caps, dict) else {}
        return True

    async def initialize(self) -> None:
        """Open a new session: the initialize handshake, then `notifications/initialized`."""
        self.session_id = None
        self.protocol_version = None
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": self._capabilities(),
            "clientInfo": self._client_info,
        }
        try:
            result = await self._send(next(self._ids), "initialize", params)
        except _Lost as exc:
            raise McpConnectionError(f"Cannot reach the MCP server at {self.url}: {exc}") from exc
        except SessionGone:  # pragma: no cover - no session id is sent with initialize
            raise McpProtocolError("the server answered 404 to initialize") from None
        if not isinstance(result, dict):
            raise McpProtocolError("the initialize result is not an object")
        init = typing.cast(dict[str, Any], result)
        version = init.get("protocolVersion")
        if version not in _ACCEPTED_VERSIONS:
            raise McpProtocolError(
                f"the server wants MCP protocol version {version!r}, which toolwire does not speak"
            )
        self.protocol_version = typing.cast(str, version)
        info = init.get("serverInfo")
        self.server_info = typing.cast(dict[str, Any], info) if isinstance(info, dict) else None
        caps = init.get("capabilities")
        self.capabilities = typing.cast(dict[str, Any], caps) if isinstance(caps, dict) else {}
        await self.notify("notifications/initialized", None)

    async def renew(self, generation: int) -> None:
        """Start a new session unless a concurrent request already did since `generation`."""
        async with self._lock:
            if self._generation == generation:
                self._needs_session = True
                lost = self.session_id
                await self.initialize()
                self._needs_session = False
                self._generation += 1
                logger.info(
                    "MCP session %s at %s was lost; renewed as %s", lost, self.url, self.session_id
                )

    async def close(self) -> None:
        """End the session (HTTP DELETE) and release the HTTP client if we made it."""
        try:
            if self.session_id is not None:
                # A server that is gone already has no session left to end.
                with (
                    anyio.move_on_after(5, shield=True),
                    contextlib.suppress(httpx2.HTTPError, OAuthFlowError, McpAuthError),
                ):
                    async with self._client.stream(
                        "DELETE", self.url, headers=self._headers(), **self._auth
                    ):
                        pass
        finally:
            self.session_id = None
            if self._owns_client:
                await self._client.aclose()

    # --- requests ---------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        repeatable: bool = True,
        on_send: Callable[[int], None] | None = None,
    ) -> Any:
        """Send a request and return its result, recovering the session when that is safe.

        A lost session (404, or a 400 saying so, for our session id) means the request was not
        processed: a new session is opened and the request repeated, once. A 429 or 503 with
        `Retry-After` is waited out and repeated too, a few times, for short delays. A connection that fails before the request leaves is
        retried once too; one that drops after it left is retried only when `repeatable`.

        Raises:
            McpError: the server answered with a JSON-RPC error.
            McpConnectionError: the server could not be reached, or dropped the connection.
        """
        renewed = retried = maybe_ran = False
        if self._needs_session:
            await self.renew(self._generation)
        while True:
            generation = self._generation
            request_id = next(self._ids)
            if on_send is not None:
                on_send(request_id)
            try:
                answers = self._elicit is not None or self._sampler is not None
                if answers and method == "tools/call" and self.session_id:
                    return await self._send_listening(request_id, method, params)
                return await self._send(request_id, method, params)
            except SessionGone:
                if renewed:
                    raise McpConnectionError(
                        "The MCP server dropped the new session at once; giving up."
                    ) from None
                renewed = True
                await self.renew(generation)
            except _Lost as exc:
                maybe_ran = maybe_ran or exc.delivered
                if retried or (exc.delivered and not repeatable):
                    raise McpConnectionError(
                        f"The connection to the MCP server at {self.url} failed: {exc}",
                        may_have_run=maybe_ran,
                    ) from exc
                # The pool opens a fresh connection for the next attempt; if the server restarted
                # meanwhile, that attempt meets a 404 and the branch above opens a new session.
                retried = True

    async def notify(self, method: str, params: dict[str, Any] | None) -> None:
        """Send a notification; the server's answer carries nothing we need."""
        traced = self._tracing()
        if traced is None:
            await self._notify(method, params)
        else:
            await traced[0].client_request(
                method, params, traced[1], lambda stamped: self._notify(method, stamped)
            )

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            body["params"] = params
        try:
            # Streamed and never read: the answer's body carries nothing, however long it is.
            async with self._client.stream(
                "POST", self.url, content=_dumps(body), headers=self._headers(), **self._auth
            ) as response:
                status = response.status_code
        except httpx2.HTTPError as exc:
            raise McpConnectionError(f"Cannot reach the MCP server at {self.url}: {exc}") from exc
        except (OAuthFlowError, ValidationError) as exc:
            raise McpAuthError(f"OAuth authorization with the MCP server failed: {exc}") from exc
        if status in (401, 403):
            raise McpAuthError(_refusal(status, response.headers.get("www-authenticate")))

    def _capabilities(self) -> dict[str, Any]:
        """What this client can be asked: elicitation and sampling when it has their handlers."""
        return {
            **(elicitation.CAPABILITY if self._elicit is not None else {}),
            **sampling.capability(self._sampler),
        }

    async def answer_inputs(self, requests: Any) -> dict[str, Any]:
        """The `inputResponses` for a 2026-07-28 `input_required` result's `inputRequests`.

        Raises:
            McpProtocolError: the requests are malformed, or ask what this client cannot give.
            McpError: a request was refused (no sampler, the person said no, the model failed).
        """
        if not isinstance(requests, dict) or not requests:
            raise McpProtocolError("an input_required result carries no inputRequests")
        answers: dict[str, Any] = {}
        for key, request in typing.cast(dict[str, Any], requests).items():
            found = typing.cast(dict[str, Any], request) if isinstance(request, dict) else {}
            method, params = found.get("method"), found.get("params")
            try:
                if method == "elicitation/create":
                    answers[key] = await elicitation.answer(self._elicit, params)
                elif method == "sampling/createMessage":
                    answers[key] = await sampling.answer(self._sampler, params, self.url)
                else:
                    raise McpProtocolError(f"the server asks for {method!r}, which toolwire lacks")
            except (elicitation.ElicitationRefused, sampling.SamplingRefused) as exc:
                raise McpError(str(exc), code=exc.code) from None
        return answers

    def _headers(self) -> dict[str, str]:
        headers = dict(self._base_headers)
        if self.session_id is not None:
            headers[_SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[_VERSION_HEADER] = self.protocol_version
        return headers

    def _stamp(
        self, method: str, params: dict[str, Any] | None, headers: dict[str, str]
    ) -> dict[str, Any] | None:
        """Add what a 2026-07-28 request carries itself: who we are, in `_meta` and headers."""
        if not self.modern:
            return params
        stamped = dict(params or {})
        stamped["_meta"] = {
            **stamped.get("_meta", {}),
            _META_VERSION: MODERN_VERSION,
            _META_CLIENT: self._client_info,
            _META_CAPABILITIES: self._capabilities(),
        }
        headers["mcp-method"] = method
        if method == "tools/call":
            name = stamped.get("name")
            if isinstance(name, str):
                headers["mcp-name"] = encode_header_value(name)
                mirrored = self._param_headers.get(name)
                if mirrored:
                    headers.update(mcp_param_headers(mirrored, stamped.get("arguments") or {}))
        return stamped

    async def _send(self, request_id: int, method: str, params: dict[str, Any] | None) -> Any:
        """`_send_waiting`, in its MCP client span when traced (every request passes here)."""
        traced = self._tracing()
        if traced is None:
            return await self._send_waiting(request_id, method, params)
        return await traced[0].client_request(
            method,
            params,
            traced[1],
            lambda stamped: self._send_waiting(request_id, method, stamped),
            request_id=request_id,
        )

    def _tracing(self) -> tuple[McpSpans, dict[str, Any]] | None:
        """The MCP spans and this session's span attributes, when `toolwire.telemetry` is on."""
        tracing = telemetry.active()
        if tracing is None or not tracing.mcp.enabled():
            return None
        spans = tracing.mcp
        return spans, spans.http_attributes(self.url, self.session_id, self.protocol_version)

    async def _send_waiting(
        self, request_id: int, method: str, params: dict[str, Any] | None
    ) -> Any:
        """`_exchange`, waiting out the short delays a 429 or 503 asks for with `Retry-After`."""
        for _ in range(_MAX_RETRY_AFTERS):
            try:
                return await self._exchange(request_id, method, params)
            except _RetryLater as later:
                if later.delay > _RETRY_AFTER_LIMIT:
                    raise McpError(
                        f"{later.error.message} (it asks to retry after {later.delay:g} s, "
                        f"longer than the {_RETRY_AFTER_LIMIT:g} s toolwire waits)",
                        code=later.error.code,
                    ) from None
                await anyio.sleep(later.delay)
        try:
            return await self._exchange(request_id, method, params)
        except _RetryLater as later:
            raise McpError(
                f"{later.error.message} (still busy after {_MAX_RETRY_AFTERS} retries)",
                code=later.error.code,
            ) from None

    async def _exchange(self, request_id: int, method: str, params: dict[str, Any] | None) -> Any:
        headers = self._headers()
        params = self._stamp(method, params, headers)
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        carried_session = self.session_id is not None
        resume = _Resume()
        try:
            async with self._client.stream(
                "POST", self.url, content=_dumps(body), headers=headers, **self._auth
            ) as response:
                if method == "initialize" and response.status_code < 400:
                    self.session_id = _session_id(response)
                found = await self._read_answer(response, request_id, carried_session, resume)
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
            raise _Lost(str(exc) or type(exc).__name__, delivered=False) from exc
        except httpx2.TransportError as exc:
            if resume.last_event_id is None:
                raise _Lost(str(exc) or type(exc).__name__, delivered=True) from exc
            found = _MISSING
        except (OAuthFlowError, ValidationError) as exc:
            # The SDK's OAuth flow failed (discovery, registration, the token exchange), or the
            # authorization server sent metadata or tokens that break their formats.
            raise McpAuthError(f"OAuth authorization with the MCP server failed: {exc}") from exc
        except httpx2.DecodingError as exc:
            # e.g. `Content-Encoding: gzip` on a body that is not gzip.
            raise McpProtocolError(f"the server's answer cannot be decoded: {exc}") from None
        except httpx2.HTTPError as exc:
            raise McpProtocolError(f"the server's answer broke HTTP: {exc}") from None
        if found is not _MISSING:
            return found
        return await self._resume(request_id, resume)

    async def _read_answer(
        self, response: httpx2.Response, request_id: int, carried_session: bool, resume: _Resume
    ) -> Any:
        status = response.status_code
        if status >= 400:
            if status in (401, 403):
                raise McpAuthError(_refusal(status, response.headers.get("www-authenticate")))
            body = await _read_prefix(response, _MAX_ERROR_BYTES)
            if carried_session and _session_lost(status, body):
                raise SessionGone
            error = _error_from_body(status, body)
            if status in (429, 503):
                delay = retry_after_seconds(response.headers.get("retry-after"))
                if delay is not None:
                    raise _RetryLater(status, delay, error)
            raise error
        if status == 202:
            raise McpProtocolError("the server answered a request with 202 Accepted")
        content_type = response.headers.get("content-type", "").lower()
        if content_type.startswith("application/json"):
            raw = await _read_capped(response, self.max_answer_bytes)
            return _result_of(_loads(raw), request_id)
        if content_type.startswith("text/event-stream"):
            return await self._read_stream(response, request_id, resume)
        raise McpProtocolError(f"the server answered with content type {content_type!r}")

    async def _read_stream(
        self, response: httpx2.Response, request_id: int, resume: _Resume
    ) -> Any:
        async for event in _sse_events(response, self.max_answer_bytes):
            if event.id is not None:
                resume.last_event_id = event.id
            if event.retry is not None:
                resume.retry_ms = event.retry
            if not event.data:
                continue  # a priming event: it only sets the resume point
            message = _loads(event.data)
            if not isinstance(message, dict):
                continue
            message = typing.cast(dict[str, Any], message)
            if "method" in message:
                if "id" in message:
                    await self._serve_request(message)
                continue  # notifications (progress, logs) carry nothing a tool result needs
            if message.get("id") == request_id:
                return _result_of(message, request_id)
        return _MISSING

    async def _resume(self, request_id: int, resume: _Resume) -> Any:
        """Reopen an answer stream that ended early, honouring the server's `retry` delay."""
        if resume.last_event_id is None:
            raise _Lost("the server closed the answer stream before answering", delivered=True)
        for _ in range(_MAX_RESUMES):
            delay = resume.retry_ms if resume.retry_ms is not None else _DEFAULT_RETRY_MS
            await anyio.sleep(delay / 1000)
            headers = self._headers()
            headers["last-event-id"] = resume.last_event_id
            headers["accept"] = "text/event-stream"
            headers.pop("content-type", None)
            try:
                async with self._client.stream(
                    "GET", self.url, headers=headers, **self._auth
                ) as response:
                    if response.status_code >= 400:
                        await _read_prefix(response, _MAX_ERROR_BYTES)
                        raise _Lost(
                            f"the server refused to resume the answer stream ({response.status_code})",
                            delivered=True,
                        )
                    found = await self._read_stream(response, request_id, resume)
            except httpx2.TransportError:
                continue
            if found is not _MISSING:
                return found
        raise _Lost("the answer stream ended again after resuming", delivered=True)

    async def _send_listening(
        self, request_id: int, method: str, params: dict[str, Any] | None
    ) -> Any:
        """`_send` with the session's GET stream open meanwhile, for the server's requests.

        A server may ask for input on that stream instead of on the call's own answer (the
        TypeScript SDK's servers do, unless the tool names the call it belongs to), so it is
        opened before the call goes out and closed when the call is answered.
        """
        failure: BaseException | None = None
        result: Any = None
        async with anyio.create_task_group() as tg:
            await tg.start(self._listen)
            try:
                result = await self._send(request_id, method, params)
            except Exception as exc:  # re-raised below, outside the task group's wrapping
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return result

    async def _listen(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Answer the requests the server sends on the session's GET stream; best effort."""
        headers = self._headers()
        headers["accept"] = "text/event-stream"
        headers.pop("content-type", None)
        started = False
        try:
            async with self._client.stream("GET", self.url, headers=headers, **self._auth) as got:
                task_status.started()
                started = True
                kind = got.headers.get("content-type", "").lower()
                if got.status_code != 200 or not kind.startswith("text/event-stream"):
                    return  # e.g. 405: this server keeps no such stream
                async for event in _sse_events(got, self.max_answer_bytes):
                    message: Any = _loads(event.data) if event.data else None
                    if isinstance(message, dict) and "method" in message and "id" in message:
                        await self._serve_request(typing.cast(dict[str, Any], message))
        except (httpx2.HTTPError, McpError, OAuthFlowError, ValidationError):
            pass  # the call itself goes on; it only cannot be asked anything
        finally:
            if not started:
                task_status.started()

    async def _serve_request(self, message: dict[str, Any]) -> None:
        """`_answer_server_request`, in its MCP server span when traced."""
        traced = self._tracing()
        if traced is None:
            await self._answer_server_request(message)
        else:
            await traced[0].served_message(
                message, traced[1], lambda: self._answer_server_request(message)
            )

    async def _answer_server_request(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "ping":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        elif method == "elicitation/create":
            # Answered (declined, without a handler) even when not declared: a clear "no".
            try:
                result = await elicitation.answer(self._elicit, message.get("params"))
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            except elicitation.ElicitationRefused as exc:
                error = {"code": exc.code, "message": str(exc)}
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        elif method == "sampling/createMessage":
            # Refused with an error when there is no sampler (the capability was not declared).
            try:
                result = await sampling.answer(self._sampler, message.get("params"), self.url)
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            except sampling.SamplingRefused as exc:
                error = {"code": exc.code, "message": str(exc)}
                reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        else:
            error = {"code": -32601, "message": f"Method not found: {message.get('method')}"}
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        # If this fails the server gives up on its request; ours is unaffected.
        with contextlib.suppress(httpx2.HTTPError, OAuthFlowError, McpAuthError):
            async with self._client.stream(
                "POST", self.url, content=_dumps(reply), headers=self._headers(), **self._auth
            ):
                pass


@dataclass(slots=True)
class _Resume:
    last_event_id: str | None = None
    retry_ms: int | None = None


_MISSING: Any = object()


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _loads(raw: str | bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise McpProtocolError(f"the server sent invalid JSON: {exc}") from None
    except RecursionError:
        raise McpProtocolError("the server sent JSON nested too deeply to read") from None


async def _read_prefix(response: httpx2.Response, limit: int) -> bytes:
    """Up to `limit` bytes of the decoded body; the rest is left unread."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def _refusal(status: int, challenge: str | None) -> str:
    """What to tell the caller about a 401 or 403, with the server's challenge when it sent one."""
    text = f"The MCP server refused our credentials ({status})"
    if challenge:
        text += f"; it asks for: {challenge[:300]}"
    if status == 401:
        text += " (pass auth=OAuth(...) or ClientCredentials(...) from toolwire.mcp.auth)"
    return text + "."


def _session_id(response: httpx2.Response) -> str | None:
    """The session id the server assigned, which we must be able to send back.

    Raises:
        McpProtocolError: it holds characters outside visible ASCII, which MCP forbids.
    """
    found = response.headers.get(_SESSION_HEADER)
    if found is None:
        return None
    if not found or not all("\x21" <= c <= "\x7e" for c in found):
        raise McpProtocolError(
            f"the server gave a session id MCP does not allow (visible ASCII only): {found[:64]!r}"
        )
    return found


def _session_lost(status: int, body: bytes) -> bool:
    """Whether an error answer to a request carrying our session id says the session is gone.

    MCP asks for 404, but the TypeScript SDK's servers (and so `server-everything`) answer an
    unknown session with 400 "Bad Request: No valid session ID provided". A 400 counts as a lost
    session only when its message talks about the session, so a bad request stays an error.
    """
    if status == 404:
        return True
    if status != 400:
        return False
    return b"session" in body.lower()


def _result_of(message: Any, request_id: int) -> Any:
    if not isinstance(message, dict):
        raise McpProtocolError("the server's answer is not a JSON-RPC object")
    message = typing.cast(dict[str, Any], message)
    error = message.get("error")
    if isinstance(error, dict):
        error = typing.cast(dict[str, Any], error)
        code = error.get("code")
        text = error.get("message")
        raise McpError(
            f"The MCP server answered with error {code}: {text}",
            code=code if isinstance(code, int) else None,
        )
    if message.get("id") != request_id:
        raise McpProtocolError(
            f"the server answered request {message.get('id')!r}, not {request_id}"
        )
    if "result" not in message:
        raise McpProtocolError("the server's answer has neither a result nor an error")
    result: Any = message["result"]
    if isinstance(result, dict):
        kind: Any = typing.cast(dict[str, Any], result).get("resultType", "complete")
        if kind not in ("complete", "input_required"):
            # `input_required` (questions before the answer) goes to the caller to answer.
            raise McpError(
                f"The MCP server answered with a {kind!r} result, which toolwire cannot handle"
            )
    return message["result"]


def _error_from_body(status: int, raw: bytes) -> McpError:
    try:
        body: Any = json.loads(raw)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict) and isinstance(
        error := typing.cast(dict[str, Any], body).get("error"), dict
    ):
        error = typing.cast(dict[str, Any], error)
        code = error.get("code")
        return McpError(
            f"The MCP server answered HTTP {status} with error {code}: {error.get('message')}",
            code=code if isinstance(code, int) else None,
        )
    text = raw[:200].decode("utf-8", "replace")
    return McpError(f"The MCP server answered HTTP {status}: {text}")
