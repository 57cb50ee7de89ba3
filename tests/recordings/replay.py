"""Replay recorded provider HTTP traffic through a real local server.

`load_cassette` reads a vcrpy cassette from `cassettes/` beside this module (both the plain format and
pydantic-ai's `parsed_body` variant). `ReplayServer` is a real HTTP server on 127.0.0.1 that answers
requests with the recorded responses, in order, and keeps every request it received so tests can
compare what toolwire sent with what was recorded. The official SDKs talk to it via `base_url`.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml


def _find_recordings() -> Path:
    # Vendored beside this module (cassettes/, unchanged, with their licences and source table) so
    # a clone of the project alone passes; TOOLWIRE_RECORDINGS points elsewhere when needed.
    override = os.environ.get("TOOLWIRE_RECORDINGS")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "cassettes"


RECORDINGS = _find_recordings()
# libyaml's parser when PyYAML was built with it (it reads these cassettes into the same objects
# as the pure-Python one, ten times faster): test modules load cassettes at collection, in every
# xdist worker.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_HOP_HEADERS = {"content-length", "transfer-encoding", "content-encoding", "connection"}


def recording(relative: str) -> Path:
    """The path of a vendored recording, e.g. `"anthropic/x.yaml"`."""
    path = RECORDINGS / relative
    if not path.exists():
        raise FileNotFoundError(f"no recording {relative!r} under {RECORDINGS}")
    return path


@dataclass(slots=True)
class Interaction:
    """One recorded request and its response."""

    method: str
    uri: str
    request_body: Any  # decoded JSON when the body was JSON, else the raw text (or None)
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def request_json(self) -> dict[str, Any]:
        assert isinstance(self.request_body, dict), "the recorded request has no JSON body"
        return self.request_body

    @property
    def response_json(self) -> Any:
        return json.loads(self.body)


def _body(section: dict[str, Any]) -> Any:
    if "parsed_body" in section:
        return section["parsed_body"]
    body = section.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    if isinstance(body, bytes):
        body = body.decode()
    return body


def load_cassette(path: str | Path) -> list[Interaction]:
    """The interactions of a cassette, in recorded order."""
    path = Path(path)
    if not path.is_absolute():
        path = recording(str(path))
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    out: list[Interaction] = []
    for item in data["interactions"]:
        request, response = item["request"], item["response"]
        request_body = _body(request)
        if isinstance(request_body, str) and request_body.strip().startswith("{"):
            request_body = json.loads(request_body)
        response_body = _body(response)
        if isinstance(response_body, (dict, list)):
            raw = json.dumps(response_body).encode()
        else:
            raw = (response_body or "").encode()
        headers = {
            k.lower(): (v[0] if isinstance(v, list) else str(v))
            for k, v in (response.get("headers") or {}).items()
            if k.lower() not in _HOP_HEADERS
        }
        out.append(
            Interaction(
                method=request["method"],
                uri=request["uri"],
                request_body=request_body,
                status=int(response["status"]["code"]),
                headers=headers,
                body=raw,
            )
        )
    return out


@dataclass(slots=True)
class Received:
    """A request the replay server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    query: str = ""

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(slots=True)
class Reply:
    """A response the server will give (recorded or made up by a test)."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict[str, str])
    expect_path: str | None = None

    @classmethod
    def of_json(cls, status: int, data: Any, headers: dict[str, str] | None = None) -> Reply:
        return cls(
            status,
            json.dumps(data).encode(),
            {"content-type": "application/json", **(headers or {})},
        )

    @classmethod
    def of_sse(cls, text: str) -> Reply:
        return cls(200, text.encode(), {"content-type": "text/event-stream"})


class ReplayServer:
    """A local HTTP server answering with queued replies, in order.

    A request beyond the queue, or to a path other than the recorded one, gets a 599 JSON error
    (and is listed in `mismatches`), so a test fails loudly instead of hanging.
    """

    def __init__(self, replies: Iterable[Reply]) -> None:
        self.replies = list(replies)
        self.received: list[Received] = []
        self.mismatches: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # A short shutdown poll: serve_forever's default (0.5 s) would add that much to every test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @classmethod
    def from_cassette(cls, path: str | Path) -> ReplayServer:
        return cls(
            Reply(i.status, i.body, i.headers, expect_path=i.path) for i in load_cassette(path)
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _next(self, received: Received) -> Reply:
        with self._lock:
            index = len(self.received)
            self.received.append(received)
            if index >= len(self.replies):
                self.mismatches.append(f"request {index + 1} to {received.path}: no reply left")
                return Reply.of_json(599, {"error": {"message": "replay: no recorded reply left"}})
            reply = self.replies[index]
            if reply.expect_path and not received.path.endswith(_tail(reply.expect_path)):
                self.mismatches.append(
                    f"request {index + 1}: path {received.path} != recorded {reply.expect_path}"
                )
                return Reply.of_json(599, {"error": {"message": "replay: unexpected path"}})
            return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                path, _, query = self.path.partition("?")
                received = Received(
                    self.command, path, {k.lower(): v for k, v in self.headers.items()}, body, query
                )
                reply = server._next(received)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            do_GET = do_POST = do_DELETE = do_PUT = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def _tail(path: str) -> str:
    # SDKs are pointed at the server's root, so compare the end of the recorded path: the part
    # after its last API version segment ("/chat/completions" of "/openai/v1/chat/completions").
    parts = path.split("/")
    versions = [i for i, part in enumerate(parts) if part in ("v1", "v1beta", "v1beta1", "v2")]
    if versions and versions[-1] + 1 < len(parts):
        return "/" + "/".join(parts[versions[-1] + 1 :])
    return path


def sse(events: Sequence[str | dict[str, Any]], *, named: Sequence[str] | None = None) -> str:
    """Build an SSE body from JSON payloads (and optional event names) for hostile-stream tests."""
    lines: list[str] = []
    for i, event in enumerate(events):
        data = event if isinstance(event, str) else json.dumps(event)
        if named is not None:
            lines.append(f"event: {named[i]}")
        lines.append(f"data: {data}")
        lines.append("")
    return "\n".join(lines) + "\n"


def iter_recordings(provider: str) -> Iterator[Path]:
    """Every recording of a provider folder, sorted by name."""
    yield from sorted((RECORDINGS / provider).glob("*.yaml"))
