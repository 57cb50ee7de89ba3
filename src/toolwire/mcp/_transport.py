"""The seam between `McpClient` and the wire: the `McpTransport` protocol and its HTTP side.

`McpClient` speaks MCP (listing pages, output checks, error results); a transport carries its
requests to one server and back: Streamable HTTP here, a subprocess over stdio in `_stdio.py`, an
ASGI app in this process in `_asgi.py`. A new way to reach servers is one class with these
methods; nothing in the client changes.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

import anyio
import httpx2

from ._content import McpConnectionError, McpError, McpProtocolError
from ._http import DEFAULT_MAX_ANSWER_BYTES, HttpSession
from ._http_wire import MODERN_VERSION
from .auth import ClientCredentials, CrossAppAccess, OAuth
from .elicitation import ElicitationHandler
from .sampling import Sampler

__all__ = ["Era", "HttpTransport", "McpClientOptions", "McpTransport"]

Era: TypeAlias = Literal["auto", "modern", "legacy"]
"""Which MCP era to speak over HTTP: `"modern"` is the per-request revision 2026-07-28,
`"legacy"` the initialize handshake with sessions, `"auto"` the modern one when offered."""


@dataclass(frozen=True, slots=True)
class McpClientOptions:
    """What an `McpClient` tells its transport when it connects.

    Attributes:
        name: How the client introduces itself to the server.
        version: The client's version, sent with its name.
        timeout: Seconds the connection (handshake) may take; `None` waits forever.
        elicitation: Answers the server's requests for input, or `None` to decline them.
        sampler: Answers the server's requests for a completion, or `None` to refuse them.
        on_notification: Called with the method and params of each notification the server
            sends (e.g. `notifications/tools/list_changed`); must not block.
    """

    name: str
    version: str
    timeout: float | None = None
    elicitation: ElicitationHandler | None = None
    sampler: Sampler | None = None
    on_notification: Callable[[str, Any], None] | None = None


@runtime_checkable
class McpTransport(Protocol):
    """How `McpClient` reaches one MCP server (`HttpTransport`, `StdioTransport`, `AsgiTransport`).

    A transport is opened by the client's `connect()` and closed by its `close()`, possibly
    several times over its life. Failures are raised as `McpError` and its subclasses:
    `McpConnectionError` (with `may_have_run` when a request may have reached the server),
    `McpAuthError`, `McpProtocolError`, or `McpError` with the JSON-RPC `code`.
    """

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's `serverInfo` from the handshake (or discovery), once open."""
        ...

    @property
    def session_id(self) -> str | None:
        """The session the server keeps for us, where it keeps one (Streamable HTTP)."""
        ...

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision negotiated, where the transport reports it."""
        ...

    async def open(self, options: McpClientOptions) -> None:
        """Connect and negotiate within `options.timeout`.

        Raises:
            McpConnectionError: the server cannot be reached, started or did not answer in time.
        """
        ...

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        """Send one request and return its JSON `result`.

        Args:
            method: The JSON-RPC method, e.g. `"tools/call"`.
            params: Its parameters.
            repeatable: Whether the request may be sent again after a dropped connection.
            limit: Seconds to wait for the answer; `None` waits forever.

        Raises:
            TimeoutError: `limit` passed; the server was told to stop first. A cancelled
                caller is told the same way before the cancellation goes on.
        """
        ...

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        """Take note of the listed tools' input schemas (some revisions mirror arguments)."""
        ...

    async def close(self) -> None:
        """End the session and free what `open` took; safe to call when not open."""
        ...


_MAX_INPUT_ROUNDS = 10
"""How many 2026-07-28 `input_required` rounds one request may take before it is given up."""


def _input_required(raw: Any) -> bool:
    return isinstance(raw, dict) and typing.cast(dict[str, Any], raw).get("resultType") == (
        "input_required"
    )


class HttpTransport:
    """Streamable HTTP: the transport `McpClient(url)` uses (see `McpClient` for the options).

    Args:
        url: The server's MCP endpoint.
        auth_token: Sent as `Authorization: Bearer <token>`.
        auth: OAuth (`OAuth`, `ClientCredentials`, `CrossAppAccess`) or any `httpx2.Auth`.
        headers: Extra HTTP headers for every request.
        session_id: Resume this session instead of opening one (handshake era).
        http_client: An `httpx2.AsyncClient` to use, and leave open, instead of our own.
        protocol: `"auto"`, `"modern"` or `"legacy"` (see `Era`).
        max_answer_bytes: The largest answer read: a JSON body, or one SSE event.

    Raises:
        ValueError: both `auth_token` and `auth`, a `session_id` MCP does not allow, or a
            `max_answer_bytes` that is not positive.
    """

    def __init__(
        self,
        url: str,
        *,
        auth_token: str | None = None,
        auth: OAuth | ClientCredentials | CrossAppAccess | httpx2.Auth | None = None,
        headers: Mapping[str, str] | None = None,
        session_id: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        protocol: Era = "auto",
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        if auth is not None and auth_token is not None:
            raise ValueError("give auth_token or auth, not both")
        if max_answer_bytes <= 0:
            raise ValueError(f"max_answer_bytes must be positive, got {max_answer_bytes}")
        if session_id is not None and not (
            session_id and all("\x21" <= c <= "\x7e" for c in session_id)
        ):
            raise ValueError("session_id must be visible ASCII, as MCP requires")
        self.url = url
        self.protocol: Era = protocol
        self.max_answer_bytes = max_answer_bytes
        self._auth_token = auth_token
        self._auth = auth
        self._headers = dict(headers or {})
        self._resume_id = session_id
        self._http_client = http_client
        self._session: HttpSession | None = None
        self.server_info: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    @property
    def session_id(self) -> str | None:
        """The HTTP session id the server gave us (handshake era), if any."""
        return self._session.session_id if self._session is not None else None

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision in use (e.g. `"2026-07-28"` or `"2025-11-25"`)."""
        return self._session.protocol_version if self._session is not None else None

    def _client(self) -> httpx2.AsyncClient | None:
        """The HTTP client to send with; `None` lets the session build (and close) its own."""
        return self._http_client

    async def open(self, options: McpClientOptions) -> None:
        session = HttpSession(
            self.url,
            http_client=self._client(),
            headers=self._headers,
            auth_token=self._auth_token,
            auth=self._auth.provider(self.url)
            if isinstance(self._auth, OAuth | ClientCredentials | CrossAppAccess)
            else self._auth,
            client_info={"name": options.name, "version": options.version},
            connect_timeout=min(options.timeout or 10.0, 10.0),
            session_id=self._resume_id,
            max_answer_bytes=self.max_answer_bytes,
            elicit=options.elicitation,
            sampler=options.sampler,
            on_notification=options.on_notification,
        )
        self._session = session
        # Questions come as server requests in the handshake era and as `input_required`
        # results in the per-request era; both are answered. "auto" keeps the handshake era
        # for a client that can be asked, since most servers still ask with requests, which
        # the per-request era cannot carry; protocol="modern" answers `input_required`.
        answers = options.elicitation is not None or options.sampler is not None
        era: Era = "legacy" if answers and self.protocol == "auto" else self.protocol
        if session.session_id is None:
            try:
                with anyio.fail_after(options.timeout):
                    await self._negotiate(session, era)
            except TimeoutError:
                raise McpConnectionError(
                    f"The MCP server at {self.url} did not answer the handshake "
                    f"within {options.timeout:g} seconds."
                ) from None
        self.server_info = session.server_info

    @staticmethod
    async def _negotiate(session: HttpSession, era: Era) -> None:
        if era != "legacy":
            if await session.discover():
                return
            if era == "modern":
                raise McpProtocolError(
                    f"The MCP server at {session.url} does not speak MCP {MODERN_VERSION}."
                )
        await session.initialize()

    @property
    def watching(self) -> bool:
        """Whether a stream for the server's tool list changes is open now."""
        return self._session is not None and self._session.watching

    async def watch(self) -> None:
        """Follow the server's tool list changes until cancelled (see `HttpSession.watch`)."""
        if self._session is not None:
            await self._session.watch()

    def remember_tools(self, schemas: Mapping[str, Any]) -> None:
        if self._session is not None:
            self._session.remember_tools(schemas)

    async def request(
        self, method: str, params: dict[str, Any] | None, *, repeatable: bool, limit: float | None
    ) -> Any:
        session = self._session
        if session is None:
            raise McpConnectionError(f"the MCP server at {self.url} is not connected")
        sent: list[int] = []
        try:
            with anyio.move_on_after(limit) as scope:
                raw = await session.request(
                    method, params, repeatable=repeatable, on_send=sent.append
                )
                rounds = 0
                while _input_required(raw):
                    # 2026-07-28: the server asks first; the call goes again with the answers,
                    # every round within the one time limit.
                    rounds += 1
                    if rounds > _MAX_INPUT_ROUNDS:
                        raise McpProtocolError(f"still asking after {_MAX_INPUT_ROUNDS} rounds")
                    asked = typing.cast(dict[str, Any], raw)
                    params = {
                        **(params or {}),
                        "inputResponses": await session.answer_inputs(asked.get("inputRequests")),
                    }
                    if asked.get("requestState") is not None:
                        params["requestState"] = asked["requestState"]
                    raw = await session.request(
                        method, params, repeatable=repeatable, on_send=sent.append
                    )
                return raw
        except anyio.get_cancelled_exc_class():
            # Cancelled by the caller (an agent's own tool timeout, say): the server must stop
            # as well.
            await self._cancel(session, sent, "cancelled by the client")
            raise
        assert scope.cancelled_caught
        await self._cancel(session, sent, f"timed out after {limit:g} seconds")
        raise TimeoutError

    @staticmethod
    async def _cancel(session: HttpSession, sent: list[int], reason: str) -> None:
        # In the per-request revision, closing the answer stream (done by the cancel scope) is
        # the cancellation; the handshake revision wants a notification.
        if sent and not session.modern:
            # Tell the server to stop working on it; bounded, since the server may be the problem.
            with anyio.move_on_after(2, shield=True), suppress(McpError):
                await session.notify(
                    "notifications/cancelled", {"requestId": sent[-1], "reason": reason}
                )

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
