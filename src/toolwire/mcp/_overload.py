"""Keep an HTTP server serving when it runs out of file descriptors.

When every descriptor is taken (by stalled connections, say), asyncio's accept loop fails with
EMFILE and reports each failure, traceback included, through the loop's exception handler: with
uvicorn's backlog that is thousands of tracebacks a second (108,458 in 13 s, 44 MB, measured),
while the stalled connections keep every descriptor and no new client gets in.

`shed_on_exhaustion(server)` installs a loop exception handler that, on such an accept error,
closes the server's idle connections (those with no request in progress: stalled ones, and
kept-alive ones their clients will simply reopen), so descriptors come back and asyncio's accept
retry succeeds; and that logs the condition at most once per `interval` seconds, with a count.

asyncio schedules one accept retry per failed accept of the round (up to the backlog, 2,048 with
uvicorn), one second later. A server that stops within that second leaves them to fire on its
closed socket, each a `ValueError: Invalid file descriptor: -1` traceback (1,346 of them, 1 MB,
seen on a shutdown): they have nothing left to do, so the guard drops them.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["AcceptGuard", "shed_on_exhaustion"]

logger = logging.getLogger("toolwire.mcp")

_RESOURCE_ERRORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_SHED_EVERY = 0.2
"""Seconds between two rounds of closing idle connections (asyncio reports the error many
times per failed accept round)."""


class AcceptGuard:
    """A loop exception handler for accept errors: shed idle connections, log sparingly.

    Args:
        connections: The server's live connections (uvicorn's `server_state.connections`); each
            must offer `shutdown()` and `cycle` as uvicorn's protocols do.
        interval: Fewest seconds between two log records of the error.
        previous: The handler to pass every other error to (the loop's default when `None`).
        clock: Monotonic seconds.
    """

    def __init__(
        self,
        connections: Iterable[Any],
        *,
        interval: float = 10.0,
        previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.connections = connections
        self.interval = interval
        self.previous = previous
        self.clock = clock
        self.errors = 0
        self.shed = 0
        self.stale_retries = 0
        """Accept retries that fired after the server closed its socket (dropped, not logged)."""
        self._unreported = 0
        self._logged_at: float | None = None
        self._shed_at: float | None = None

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, ValueError) and _is_retry_on_closed_socket(context):
            self.stale_retries += 1
            return
        if not (
            isinstance(error, OSError)
            and error.errno in _RESOURCE_ERRORS
            and "accept" in str(context.get("message", ""))
        ):
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        self.errors += 1
        self._unreported += 1
        now = self.clock()
        closed = 0
        if self._shed_at is None or now - self._shed_at >= _SHED_EVERY:
            self._shed_at = now
            closed = self._shed_idle()
        if self._logged_at is None or now - self._logged_at >= self.interval:
            self._logged_at = now
            logger.error(
                "cannot accept connections: %s (%d times since the last report); closed %d "
                "idle connections to make room",
                error.strerror or error,
                self._unreported,
                closed,
            )
            self._unreported = 0

    def _shed_idle(self) -> int:
        closed = 0
        for connection in list(self.connections):
            cycle = getattr(connection, "cycle", None)
            if cycle is None or getattr(cycle, "response_complete", False):
                try:
                    connection.shutdown()
                except Exception:  # a connection already half gone must not stop the round
                    continue
                closed += 1
        self.shed += closed
        return closed


def _is_retry_on_closed_socket(context: dict[str, Any]) -> bool:
    """An accept retry asyncio scheduled after EMFILE, run once the listening socket was closed."""
    handle = context.get("handle")
    callback = getattr(handle, "_callback", None)
    if getattr(callback, "__name__", None) != "_start_serving":
        return False
    args: tuple[object, ...] = getattr(handle, "_args", ())
    return any(isinstance(arg, socket.socket) and arg.fileno() == -1 for arg in args)


def shed_on_exhaustion(server: Any, *, interval: float = 10.0) -> AcceptGuard:
    """Install an `AcceptGuard` for a uvicorn `Server` on the running event loop.

    Call it from inside the loop that will run `server.serve()`.
    """
    loop = asyncio.get_running_loop()
    guard = AcceptGuard(
        server.server_state.connections, interval=interval, previous=loop.get_exception_handler()
    )
    loop.set_exception_handler(guard)
    return guard
