"""A fair policy for sessions no principal owns, in front of the SDK's session manager.

The SDK caps sessions (`max_sessions`) and closes idle ones (`session_idle_timeout`), but once the
cap is reached every new client gets 503 until a session idles out: 10,000 initialize requests
from one client lock everyone else out for the idle timeout (30 minutes by default).
`AnonymousSessions` watches the sessions opened without an OAuth principal and, before a new one
is let through, makes room the fair way:

- sessions that never made a second request (a flood, or a client that gave up) are closed once
  they are `first_request_grace` seconds old;
- each client (its address) holds at most `per_client` sessions; its least recently used one
  is closed to make room for its next;
- at the server's cap, the oldest idle session of the client holding the most is closed, so a
  newcomer always gets in and whoever flooded loses their own sessions first.

A session is closed by handing the SDK a `DELETE` for it, as its client would send: the SDK's own
bookkeeping stays the only one that counts. A session with a request in flight (an open stream,
a running tool) is never closed this way. Sessions an OAuth principal opened are left alone:
the SDK already binds them to that principal.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["AnonymousSessions", "SessionPolicy"]

_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"
_SESSIONLESS = frozenset(MODERN_PROTOCOL_VERSIONS)


@dataclass(frozen=True)
class SessionPolicy:
    """How sessions without an OAuth principal share the server's session cap.

    Attributes:
        per_client: Sessions one client address may hold at once; its least recently used one
            is closed to make room for another.
        first_request_grace: Seconds a session that never made a second request is kept.
        clock: Monotonic seconds; tests pass their own.
    """

    per_client: int = 32
    first_request_grace: float = 60.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        if self.per_client <= 0 or self.first_request_grace <= 0:
            raise ValueError("per_client and first_request_grace must be positive")


@dataclass
class _Session:
    client: str
    created: float
    requests: int = 1
    in_flight: int = 0


class AnonymousSessions:
    """ASGI middleware applying a `SessionPolicy` in front of the SDK's Streamable HTTP app.

    Args:
        app: The SDK's app (stateful).
        policy: The policy.
        max_sessions: The SDK's cap, `None` for none.
    """

    def __init__(self, app: ASGIApp, policy: SessionPolicy, max_sessions: int | None) -> None:
        self.app = app
        self.policy = policy
        self.max_sessions = max_sessions
        # Least recently used first; `fresh` holds those that made one request only, oldest first.
        self.sessions: OrderedDict[str, _Session] = OrderedDict()
        self.fresh: OrderedDict[str, float] = OrderedDict()
        self.by_client: dict[str, OrderedDict[str, None]] = {}
        self.evicted = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or isinstance(scope.get("user"), AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is None:
            # The per-request era (2026-07-28) opens no sessions: nothing to make room for.
            if scope["method"] == "POST" and _header(scope, _VERSION_HEADER) not in _SESSIONLESS:
                await self._open(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        record = self.sessions.get(session_id)
        if record is None:
            await self.app(scope, receive, send)
            return
        record.requests += 1
        record.in_flight += 1
        self.sessions.move_to_end(session_id)
        self.fresh.pop(session_id, None)
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            record.in_flight -= 1
            if scope["method"] == "DELETE" or (status and status[0] == 404):
                self._forget(session_id)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = _client(scope)
        await self._make_room(scope, client)
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = _answer_header(message.get("headers", []), _SESSION_HEADER)
                if found is not None:
                    opened.append(found)
            await send(message)

        await self.app(scope, receive, watch)
        for session_id in opened:
            now = self.policy.clock()
            self.sessions[session_id] = _Session(client, now)
            self.fresh[session_id] = now
            self.by_client.setdefault(client, OrderedDict())[session_id] = None

    async def _make_room(self, scope: Scope, client: str) -> None:
        policy = self.policy
        # Sessions that never came back, oldest first, up to a bounded number per request.
        deadline = policy.clock() - policy.first_request_grace
        stale = [sid for sid, created in self.fresh.items() if created < deadline]
        for session_id in stale[:256]:
            await self._close(scope, session_id)
        own = self.by_client.get(client)
        while own and len(own) >= policy.per_client:
            if not await self._close_one(scope, own):
                break
        cap = self.max_sessions
        while cap is not None and len(self.sessions) >= cap:
            # The client holding the most sessions gives one up: a flood displaces its own.
            heaviest = max(self.by_client.values(), key=len, default=None)
            closed = heaviest is not None and await self._close_one(scope, heaviest)
            if not closed and not await self._close_one(scope, self.sessions):
                break

    async def _close_one(self, scope: Scope, candidates: OrderedDict[str, Any]) -> bool:
        """Close the least recently used idle session among `candidates`."""
        for session_id in candidates:
            record = self.sessions.get(session_id)
            if record is None or record.in_flight == 0:
                await self._close(scope, session_id)
                return True
        return False

    async def _close(self, scope: Scope, session_id: str) -> None:
        self._forget(session_id)
        self.evicted += 1
        keep = {b"host"}
        headers = [(k, v) for k, v in scope.get("headers", []) if k in keep]
        headers.append((_SESSION_HEADER, session_id.encode()))
        closing: dict[str, Any] = {
            **scope,
            "method": "DELETE",
            "headers": headers,
            "query_string": b"",
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}

        async def discard(message: Message) -> None:
            pass

        await self.app(closing, receive, discard)

    def _forget(self, session_id: str) -> None:
        record = self.sessions.pop(session_id, None)
        self.fresh.pop(session_id, None)
        if record is not None:
            own = self.by_client.get(record.client)
            if own is not None:
                own.pop(session_id, None)
                if not own:
                    del self.by_client[record.client]


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _header(scope: Scope, name: bytes) -> str | None:
    return _header_in(scope.get("headers", []), name)


def _answer_header(headers: Any, name: bytes) -> str | None:
    """A header of an answer the app sent, whatever the case of its name (once a session)."""
    for key, value in headers:
        if bytes(key).lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _header_in(headers: Any, name: bytes) -> str | None:
    # ASGI servers give header names in lower case (the front layer relies on it too).
    for key, value in headers:
        if key == name:
            return bytes(value).decode("latin-1")
    return None
