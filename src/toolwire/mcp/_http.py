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
import logging
import typing
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import httpx2
from mcp.client.auth import OAuthFlowError
from mcp.shared.inbound import (
    NAME_BEARING_METHODS,
    encode_header_value,
    mcp_param_headers,
    x_mcp_header_map,
)
from pydantic import ValidationError

from .. import telemetry
from .._sse import ServerSentEvent, read_sse
from .._util import retry_after_seconds
from . import elicitation, sampling
from ._content import McpAuthError, McpConnectionError, McpError, McpProtocolError
from ._http_wire import (
    ACCEPTED_VERSIONS,
    META_CAPABILITIES,
    META_CLIENT,
    META_SERVER,
    META_VERSION,
    MODERN_VERSION,
    PROTOCOL_VERSION,
    SESSION_HEADER,
    VERSION_HEADER,
    Listening,
    Lost,
    Resume,
    RetryLater,
    SessionGone,
    dumps,
    error_from_body,
    loads,
    read_capped,
    read_prefix,
    refusal,
    reply_to_server,
    result_of,
    session_id_of,
    session_lost,
)

if TYPE_CHECKING:
    from .._otel_mcp import McpSpans

__all__ = ["DEFAULT_MAX_ANSWER_BYTES", "HttpSession"]

logger = logging.getLogger("toolwire.mcp")

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

_WATCH_RETRIES = 6
_WATCH_DELAY = 0.5
"""A change stream that fails to open is tried again this many times in a row, after this many
seconds, doubling (about 30 s in all), before the client stops watching; one that opened and
ended is reopened at once."""

_TOOLS_CHANGED = "notifications/tools/list_changed"

_GET_CONFLICT_RETRIES = 5
_GET_CONFLICT_DELAY = 0.02
"""A GET stream refused with 409 (the session's previous one not yet gone on the server) is
asked again this many times, after this many seconds, doubling: about 0.6 s in all."""


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
        on_notification: Callable[[str, Any], None] | None = None,
    ) -> None:
        self.url = url
        self._on_notification = on_notification
        # Set while `watch` holds a change stream open. The GET stream answers the server's
        # requests too, so a call then opens no stream of its own.
        self.watching = False
        self._closed = False
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
        # The listed input schemas, and per tool called, the arguments a 2026-07-28 server wants
        # mirrored as `Mcp-Param-*` headers.
        self._schemas: Mapping[str, Any] = {}
        self._param_headers: dict[str, dict[tuple[str, ...], str]] = {}
        # The session's GET stream while calls that rely on it are in flight (`_send_listening`).
        self._listening: Listening | None = None

    @property
    def modern(self) -> bool:
        """Whether the per-request revision is in use (no session, no handshake)."""
        return self.protocol_version == MODERN_VERSION

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        """Note the listed input schemas; a modern server checks calls against them.

        Each tool's mirrored arguments are found at its first call, not here: a server may list
        a hundred thousand tools and a run call a few."""
        self._schemas = schemas
        self._param_headers = {}

    def _mirrored(self, name: str) -> dict[tuple[str, ...], str]:
        """The arguments of tool `name` a 2026-07-28 server wants as `Mcp-Param-*` headers."""
        found = self._param_headers.get(name)
        if found is None:
            schema = self._schemas.get(name)
            if schema is None:
                return {}
            found = self._param_headers[name] = x_mcp_header_map(schema)
        return found

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
        except Lost as exc:
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
            typing.cast(dict[str, Any], meta).get(META_SERVER) if isinstance(meta, dict) else None
        )
        self.server_info = typing.cast(dict[str, Any], info) if isinstance(info, dict) else None
        caps = found.get("capabilities")
        self.capabilities = typing.cast(dict[str, Any], caps) if isinstance(caps, dict) else {}
        return True

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
        except Lost as exc:
            raise McpConnectionError(f"Cannot reach the MCP server at {self.url}: {exc}") from exc
        except SessionGone:  # pragma: no cover - no session id is sent with initialize
            raise McpProtocolError("the server answered 404 to initialize") from None
        if not isinstance(result, dict):
            raise McpProtocolError("the initialize result is not an object")
        init = typing.cast(dict[str, Any], result)
        version = init.get("protocolVersion")
        if version not in ACCEPTED_VERSIONS:
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
        self._closed = True
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
                if answers and method == "tools/call" and self.session_id and not self.watching:
                    return await self._send_listening(request_id, method, params)
                return await self._send(request_id, method, params)
            except SessionGone:
                if renewed:
                    raise McpConnectionError(
                        "The MCP server dropped the new session at once; giving up."
                    ) from None
                renewed = True
                await self.renew(generation)
            except Lost as exc:
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
                "POST", self.url, content=dumps(body), headers=self._headers(), **self._auth
            ) as response:
                status = response.status_code
        except httpx2.HTTPError as exc:
            raise McpConnectionError(f"Cannot reach the MCP server at {self.url}: {exc}") from exc
        except (OAuthFlowError, ValidationError) as exc:
            raise McpAuthError(f"OAuth authorization with the MCP server failed: {exc}") from exc
        if status in (401, 403):
            raise McpAuthError(refusal(status, response.headers.get("www-authenticate")))

    def _headers(self) -> dict[str, str]:
        headers = dict(self._base_headers)
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
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
            META_VERSION: MODERN_VERSION,
            META_CLIENT: self._client_info,
            META_CAPABILITIES: self._capabilities(),
        }
        headers["mcp-method"] = method
        # The requests that name what they act on carry the name in a header too (the SDK's
        # NAME_BEARING_METHODS); a server refuses one without it.
        key = NAME_BEARING_METHODS.get(method)
        name = stamped.get(key) if key is not None else None
        if isinstance(name, str):
            headers["mcp-name"] = encode_header_value(name)
            mirrored = self._mirrored(name) if method == "tools/call" else None
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
            except RetryLater as later:
                if later.delay > _RETRY_AFTER_LIMIT:
                    raise McpError(
                        f"{later.error.message} (it asks to retry after {later.delay:g} s, "
                        f"longer than the {_RETRY_AFTER_LIMIT:g} s toolwire waits)",
                        code=later.error.code,
                    ) from None
                await anyio.sleep(later.delay)
        try:
            return await self._exchange(request_id, method, params)
        except RetryLater as later:
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
        resume = Resume()
        try:
            async with self._client.stream(
                "POST", self.url, content=dumps(body), headers=headers, **self._auth
            ) as response:
                if method == "initialize" and response.status_code < 400:
                    self.session_id = session_id_of(response)
                found = await self._read_answer(response, request_id, carried_session, resume)
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
            raise Lost(str(exc) or type(exc).__name__, delivered=False) from exc
        except httpx2.TransportError as exc:
            if resume.last_event_id is None:
                raise Lost(str(exc) or type(exc).__name__, delivered=True) from exc
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
        self, response: httpx2.Response, request_id: int, carried_session: bool, resume: Resume
    ) -> Any:
        status = response.status_code
        if status >= 400:
            if status in (401, 403):
                raise McpAuthError(refusal(status, response.headers.get("www-authenticate")))
            body = await read_prefix(response, _MAX_ERROR_BYTES)
            if carried_session and session_lost(status, body):
                raise SessionGone
            error = error_from_body(status, body)
            if status in (429, 503):
                delay = retry_after_seconds(response.headers.get("retry-after"))
                if delay is not None:
                    raise RetryLater(status, delay, error)
            raise error
        if status == 202:
            raise McpProtocolError("the server answered a request with 202 Accepted")
        content_type = response.headers.get("content-type", "").lower()
        if content_type.startswith("application/json"):
            raw = await read_capped(response, self.max_answer_bytes)
            return result_of(loads(raw), request_id)
        if content_type.startswith("text/event-stream"):
            return await self._read_stream(response, request_id, resume)
        raise McpProtocolError(f"the server answered with content type {content_type!r}")

    async def _read_stream(self, response: httpx2.Response, request_id: int, resume: Resume) -> Any:
        async for event in self._events(response):
            if event.id is not None:
                resume.last_event_id = event.id
            if event.retry is not None:
                resume.retry_ms = event.retry
            if not event.data:
                continue  # a priming event: it only sets the resume point
            message = loads(event.data)
            if not isinstance(message, dict):
                continue
            message = typing.cast(dict[str, Any], message)
            if "method" in message:
                if "id" in message:
                    await self._serve_request(message)
                else:
                    self.notified(message)  # a tool list change, say; progress and logs pass
                continue
            if message.get("id") == request_id:
                return result_of(message, request_id)
        return _MISSING

    async def _resume(self, request_id: int, resume: Resume) -> Any:
        """Reopen an answer stream that ended early, honouring the server's `retry` delay."""
        if resume.last_event_id is None:
            raise Lost("the server closed the answer stream before answering", delivered=True)
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
                        await read_prefix(response, _MAX_ERROR_BYTES)
                        raise Lost(
                            f"the server refused to resume the answer stream ({response.status_code})",
                            delivered=True,
                        )
                    found = await self._read_stream(response, request_id, resume)
            except httpx2.TransportError:
                continue
            if found is not _MISSING:
                return found
        raise Lost("the answer stream ended again after resuming", delivered=True)

    async def _send_listening(
        self, request_id: int, method: str, params: dict[str, Any] | None
    ) -> Any:
        """`_send` with the session's GET stream open meanwhile, for the server's requests.

        A server may ask for input on that stream instead of on the call's own answer (the
        TypeScript SDK's servers do, unless the tool names the call it belongs to), so it is
        opened before the call goes out and closed when no call is in flight any more. A
        session has at most one such stream (the SDK's servers refuse a second one with 409),
        so concurrent calls share the one the first call opened, and that call keeps it open
        until the last of them is answered: closing it earlier would drop, unanswered, a
        request the server then sends for a call still running, which waits for ever.
        """
        shared = self._listening
        if shared is not None:
            shared.calls += 1
            try:
                # Not before the stream is open: a request sent meanwhile would be dropped.
                await shared.ready.wait()
                return await self._send(request_id, method, params)
            finally:
                shared.done()
        shared = self._listening = Listening()
        failure: BaseException | None = None
        result: Any = None
        try:
            async with anyio.create_task_group() as tg:
                try:
                    await tg.start(self._listen)
                finally:
                    shared.ready.set()
                try:
                    result = await self._send(request_id, method, params)
                except Exception as exc:  # re-raised below, outside the task group's wrapping
                    failure = exc
                shared.done()
                await shared.drained.wait()
                tg.cancel_scope.cancel()
        finally:
            # Also when cancelled: the calls still running then lose the stream.
            if self._listening is shared:
                self._listening = None
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
            for attempt in range(_GET_CONFLICT_RETRIES + 1):
                async with self._client.stream(
                    "GET", self.url, headers=headers, **self._auth
                ) as got:
                    if got.status_code == 409 and attempt < _GET_CONFLICT_RETRIES:
                        # The stream the previous call just closed is still registered on the
                        # server until it notices; a question sent meanwhile would be lost.
                        await read_prefix(got, _MAX_ERROR_BYTES)
                        await anyio.sleep(_GET_CONFLICT_DELAY * 2**attempt)
                        continue
                    task_status.started()
                    started = True
                    kind = got.headers.get("content-type", "").lower()
                    if got.status_code != 200 or not kind.startswith("text/event-stream"):
                        return  # e.g. 405: this server keeps no such stream
                    async for event in self._events(got):
                        await self._take_event(event)
                    return
        except (httpx2.HTTPError, McpError, OAuthFlowError, ValidationError):
            pass  # the call itself goes on; it only cannot be asked anything
        finally:
            if not started:
                task_status.started()

    def notified(self, message: dict[str, Any]) -> None:
        """Hand a notification of the server's to the client's callback; never raises."""
        method = message.get("method")
        if self._on_notification is None or not isinstance(method, str):
            return
        try:
            self._on_notification(method, message.get("params"))
        except Exception:  # the callback's failure must not end the stream it came on
            logger.exception("MCP notification handler failed on %s", method)

    async def _take_event(self, event: ServerSentEvent) -> None:
        """One event of a stream the server opened: its requests answered, notifications passed."""
        message: Any = loads(event.data) if event.data else None
        if isinstance(message, dict) and "method" in message:
            message = typing.cast(dict[str, Any], message)
            if "id" in message:
                await self._serve_request(message)
            else:
                self.notified(message)

    # --- following changes ------------------------------------------------------------------

    def announces_tool_changes(self) -> bool:
        """Whether the server said it announces changes of its tool list."""
        tools: Any = self.capabilities.get("tools")
        return isinstance(tools, dict) and bool(
            typing.cast(dict[str, Any], tools).get("listChanged")
        )

    async def watch(self) -> None:
        """Follow the server's tool list changes until cancelled, reopening the stream.

        2026-07-28: a `subscriptions/listen` request for them, whose answer stream carries them.
        Handshake era: the session's GET stream (which also carries the server's requests).
        Returns at once when the server announces no changes, and when it has no such stream
        (405) or it failed to open too often. A change made before a stream opened was not
        sent on it, so each opening counts as a change.
        """
        if not self.announces_tool_changes():
            return
        failures = 0
        while not self._closed and failures <= _WATCH_RETRIES:
            try:
                outcome = await (self._listen_modern() if self.modern else self._listen_legacy())
            except (httpx2.HTTPError, McpError, OAuthFlowError, ValidationError) as exc:
                logger.debug("MCP change stream at %s failed: %s", self.url, exc)
                outcome = "failed"
            if outcome == "unsupported":
                return
            if outcome == "opened":
                failures = 0
                continue
            failures += 1
            await anyio.sleep(_WATCH_DELAY * 2 ** (failures - 1))

    async def _listen_legacy(self) -> str:
        headers = self._headers()
        headers["accept"] = "text/event-stream"
        headers.pop("content-type", None)
        async with self._client.stream("GET", self.url, headers=headers, **self._auth) as got:
            if got.status_code == 405:
                return "unsupported"
            kind = got.headers.get("content-type", "").lower()
            if got.status_code != 200 or not kind.startswith("text/event-stream"):
                await read_prefix(got, _MAX_ERROR_BYTES)
                return "failed"
            await self._watched(got)
        return "opened"

    async def _listen_modern(self) -> str:
        request_id = next(self._ids)
        headers = self._headers()
        params = self._stamp(
            "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, headers
        )
        body = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "subscriptions/listen",
            "params": params,
        }
        async with self._client.stream(
            "POST", self.url, content=dumps(body), headers=headers, **self._auth
        ) as got:
            kind = got.headers.get("content-type", "").lower()
            if got.status_code != 200 or not kind.startswith("text/event-stream"):
                await read_prefix(got, _MAX_ERROR_BYTES)  # refused (e.g. a JSON error)
                return "failed"
            await self._watched(got)
        return "opened"

    async def _watched(self, stream: httpx2.Response) -> None:
        self.watching = True
        self.notified({"method": _TOOLS_CHANGED})
        try:
            async for event in self._events(stream):
                await self._take_event(event)
        finally:
            self.watching = False

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
        reply = await reply_to_server(message, self._elicit, self._sampler, self.url)
        # If this fails the server gives up on its request; ours is unaffected.
        with contextlib.suppress(httpx2.HTTPError, OAuthFlowError, McpAuthError):
            async with self._client.stream(
                "POST", self.url, content=dumps(reply), headers=self._headers(), **self._auth
            ):
                pass

    def _events(self, response: httpx2.Response) -> AsyncIterator[ServerSentEvent]:
        """The events of an SSE answer, one held to `max_answer_bytes`."""
        return read_sse(
            response.aiter_bytes(),
            error=McpProtocolError,
            max_event_bytes=self.max_answer_bytes,
            limit_name="max_answer_bytes",
        )


_MISSING: Any = object()
