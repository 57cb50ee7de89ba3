"""A local HTTP server that answers what a test scripts, and the registry of models to close:
the helpers behind tests/models/conftest.py's fixtures, importable by the test modules.

`HostileServer` is the replay server (`recordings.replay.ReplayServer`, a real HTTP server on a
free loopback port that the official SDKs reach through `base_url`) taught a few more ways to
answer: a body cut off with the connection (`Cut`), a stream that stops and waits for the client
to hang up (`Hold`), no answer at all (`Silence`), and a connection closed before any answer
(`Hangup`). Nothing waits a fixed time: a silent server is bounded by the client's own timeout,
and every handler is released when the server closes.

(A module of its own, not conftest.py: `from conftest import ...` picks whichever conftest was
loaded last when several test folders are named on the command line.)
"""

from __future__ import annotations

import select
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar, Protocol, TypeVar

from _ports import free_port
from recordings.replay import Received, ReplayServer, Reply

__all__ = [
    "Action",
    "Cut",
    "Hangup",
    "Hold",
    "HostileServer",
    "Silence",
    "close_all",
    "closing",
    "free_port",
]


@dataclass(slots=True)
class Cut:
    """A 200 answer whose chunked body stops after `partial`, then the connection closes."""

    expect_path: ClassVar[None] = None  # any path will do

    partial: bytes
    content_type: str = "text/event-stream"


@dataclass(slots=True)
class Hold:
    """A 200 stream that sends `partial`, then waits until the client hangs up (`hung_up`)."""

    expect_path: ClassVar[None] = None  # any path will do

    partial: bytes
    hung_up: threading.Event = field(default_factory=threading.Event)


@dataclass(slots=True)
class Silence:
    """Read the request and never answer (the client's timeout ends the wait)."""

    expect_path: ClassVar[None] = None  # any path will do


@dataclass(slots=True)
class Hangup:
    """Read the request, then close the connection without a status line."""

    expect_path: ClassVar[None] = None  # any path will do


Action = Reply | Cut | Hold | Silence | Hangup


class HostileServer(ReplayServer):
    """The replay server, answering each request with the next scripted `Action`."""

    def __init__(self, script: list[Action]) -> None:
        self._closing = threading.Event()
        super().__init__(script)  # type: ignore[arg-type]  # a superset of the replies it takes

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path, _, query = self.path.partition("?")
                headers = {k.lower(): v for k, v in self.headers.items()}
                action: Action = server._next(Received(self.command, path, headers, body, query))
                if isinstance(action, Reply):
                    self.send_response(action.status)
                    for key, value in action.headers.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(action.body)))
                    self.end_headers()
                    self.wfile.write(action.body)
                    return
                self.close_connection = True
                if isinstance(action, Silence):
                    server._closing.wait()
                elif isinstance(action, Cut | Hold):
                    self.send_response(200)
                    content_type = action.content_type if isinstance(action, Cut) else None
                    self.send_header("content-type", content_type or "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(action.partial), action.partial))
                    self.wfile.flush()
                    if isinstance(action, Hold):
                        self._wait_for_hangup(action.hung_up)

            def _wait_for_hangup(self, hung_up: threading.Event) -> None:
                # Poll so that closing the server also ends the wait.
                while not server._closing.is_set():
                    readable, _, _ = select.select([self.connection], [], [], 0.05)
                    if readable:
                        try:
                            if not self.connection.recv(1024):
                                break
                        except OSError:
                            break
                hung_up.set()

            do_GET = do_POST = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        super().__exit__(*exc)


class _Closable(Protocol):
    async def aclose(self) -> None: ...


ClosableT = TypeVar("ClosableT", bound=_Closable)
_OPEN: list[_Closable] = []


def closing(model: ClosableT) -> ClosableT:
    """Have `model` closed when the test ends (by conftest's autouse `_close_models`)."""
    _OPEN.append(model)
    return model


async def close_all() -> None:
    """Close every model `closing` was given, newest first."""
    while _OPEN:
        await _OPEN.pop().aclose()
