"""Test doubles for the prebuilt tools: a real HTTP server on 127.0.0.1 and a resolver the test controls."""

from __future__ import annotations

import json
import ssl
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    """One request as the fake server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    """What a route answers."""

    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict[str, str])
    # When set, the handler streams this many bytes of filler, stopping when the client hangs up.
    stream_bytes: int = 0
    # When set, the handler waits for this event before answering (a server that hangs).
    hold: threading.Event | None = None


Route = Callable[[Seen], Reply]


class FakeServer:
    """A real HTTP/1.1 server on 127.0.0.1 with a route table and a log of what it received."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.seen: list[Seen] = []
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parsed = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(
                    method=self.command,
                    path=parsed.path,
                    query=urllib.parse.parse_qs(parsed.query, keep_blank_values=True),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                server.seen.append(seen)
                route = server.routes.get((self.command, parsed.path)) or server.routes.get(
                    ("*", parsed.path)
                )
                reply = route(seen) if route else Reply(404, {"message": "no route"})
                if reply.hold is not None:
                    reply.hold.wait(30)
                    return
                if reply.stream_bytes:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(reply.stream_bytes))
                    self.end_headers()
                    chunk = b"x" * 65536
                    sent = 0
                    try:
                        while sent < reply.stream_bytes and not server.release.is_set():
                            self.wfile.write(chunk)
                            sent += len(chunk)
                    except OSError:
                        pass
                    self.close_connection = True
                    return
                payload = reply.body
                headers = dict(reply.headers)
                if isinstance(payload, str):
                    payload = payload.encode()
                elif not isinstance(payload, bytes):
                    payload = json.dumps(payload).encode()
                    headers.setdefault("Content-Type", "application/json; charset=utf-8")
                self.send_response(reply.status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        scheme = "http"
        if ssl_context is not None:
            self.httpd.socket = ssl_context.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.port = self.httpd.server_address[1]
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def route(self, path: str, method: str = "GET") -> Callable[[Route], Route]:
        def register(fn: Route) -> Route:
            self.routes[(method, path)] = fn
            return fn

        return register

    def reply(self, path: str, reply: Reply, method: str = "GET") -> None:
        self.routes[(method, path)] = lambda _seen: reply

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeDNS:
    """A resolver the test controls; it counts lookups so tests can prove there is only one."""

    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = dict(table or {})
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        if host not in self.table:
            raise OSError(f"unknown host {host}")
        return self.table[host]
