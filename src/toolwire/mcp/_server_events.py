"""Resumable answer streams (SEP-1699): the events a client may ask for again after a drop.

Each handshake-era SSE answer starts with a priming event (an id and a `retry` delay), so a
client whose stream drops, or whose tool closed the stream on purpose to be polled
(`release_stream`), reconnects with `Last-Event-ID` and gets what it missed.

The SDK keeps one event store for all sessions and names each stream by the request's JSON-RPC
id, which every client numbers from 1: a store keyed by stream alone would replay one session's
answers to another. So every event is kept under the session it belongs to, and replayed only to
a request of that same session. The session is known from the request's `Mcp-Session-Id`, or,
for events the SDK stores from the session's own task, from the initialize request that started
it (the task inherits that request's context; `SessionScope` fills its session id in once the
answer names it). Ids are random, so another session cannot guess its way into a stream either.
Memory is bounded: past `max_events` events or `max_bytes` of them, the oldest are forgotten.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from contextvars import ContextVar

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._record import record

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_EVENTS", "RETRY_MS", "SessionEvents", "SessionScope"]

DEFAULT_MAX_EVENTS = 10_000
"""Events kept for replay, across all sessions; the oldest go first."""

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
"""The most bytes of events kept for replay (as JSON), across all sessions."""

RETRY_MS = 1000
"""How long a client waits before reconnecting a dropped or released stream (milliseconds)."""

_SESSION: ContextVar[list[str | None] | None] = ContextVar("toolwire_mcp_session", default=None)
"""The session of the HTTP request (or of the session task) being served, in a mutable box."""


def _current() -> str | None:
    box = _SESSION.get()
    return box[0] if box else None


class SessionScope:
    """Tell the event store which session each request (and each new session's task) is for."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == b"mcp-session-id"), None)
        box: list[str | None] = [given.decode("latin-1") if given is not None else None]
        token = _SESSION.set(box)

        async def named(message: Message) -> None:
            if message["type"] == "http.response.start" and box[0] is None:
                # An initialize answer names the new session; its task holds this very box.
                for key, value in message.get("headers", ()):
                    if key.lower() == b"mcp-session-id":
                        box[0] = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, named)
        finally:
            _SESSION.reset(token)


@record
class _Event:
    session: str | None
    stream: StreamId
    message: JSONRPCMessage | None
    size: int


class SessionEvents(EventStore):
    """An in-memory event store that replays a stream only to its own session."""

    def __init__(
        self, max_events: int = DEFAULT_MAX_EVENTS, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        if max_events <= 0 or max_bytes <= 0:
            raise ValueError("max_events and max_bytes must be positive")
        self._max = max_events
        self._max_bytes = max_bytes
        self._bytes = 0
        self._events: OrderedDict[EventId, _Event] = OrderedDict()
        self._streams: dict[tuple[str | None, StreamId], list[EventId]] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_urlsafe(12)
        session = _current()
        size = len(message.model_dump_json(by_alias=True)) if message is not None else 0
        self._events[event_id] = _Event(session, stream_id, message, size)
        self._bytes += size
        self._streams.setdefault((session, stream_id), []).append(event_id)
        while self._events and (len(self._events) > self._max or self._bytes > self._max_bytes):
            old_id, old = self._events.popitem(last=False)
            self._bytes -= old.size
            ids = self._streams.get((old.session, old.stream))
            if ids is not None:
                ids.remove(old_id)
                if not ids:
                    del self._streams[(old.session, old.stream)]
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = self._events.get(last_event_id)
        if found is None or found.session != _current():
            return None
        ids = self._streams.get((found.session, found.stream), [])
        later = ids[ids.index(last_event_id) + 1 :] if last_event_id in ids else []
        for event_id in later:
            event = self._events.get(event_id)
            if event is not None and event.message is not None:
                await send_callback(EventMessage(event.message, event_id))
        return found.stream
