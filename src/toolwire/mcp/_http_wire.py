"""What the Streamable HTTP client sends and how it judges each answer: the protocol's names and
versions, JSON-RPC bodies in and out, bounded reads of a body, and HTTP errors turned into
toolwire's MCP errors (or into the signals `HttpSession` recovers from)."""

from __future__ import annotations

import json
import typing
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2

from .._sse import describe_size
from . import elicitation, sampling
from ._content import McpError, McpProtocolError

__all__ = [
    "ACCEPTED_VERSIONS",
    "META_CAPABILITIES",
    "META_CLIENT",
    "META_SERVER",
    "META_VERSION",
    "MODERN_VERSION",
    "PROTOCOL_VERSION",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "Listening",
    "Lost",
    "Resume",
    "RetryLater",
    "SessionGone",
    "dumps",
    "error_from_body",
    "loads",
    "read_capped",
    "read_prefix",
    "refusal",
    "reply_to_server",
    "result_of",
    "session_id_of",
    "session_lost",
    "too_large",
]

PROTOCOL_VERSION = "2025-11-25"
"""The handshake revision we offer; servers may answer with an older one."""

MODERN_VERSION = "2026-07-28"
"""The per-request revision (no handshake, no session), used when `server/discover` offers it."""

ACCEPTED_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


class SessionGone(Exception):
    """The server no longer knows our session id (HTTP 404, or a 400 that says so).

    Either way it refused the request before processing it, so a repeat is safe.
    """

    error_type = "session_gone"  # how a request's span names this failure


class RetryLater(Exception):
    """HTTP 429 or 503 with `Retry-After`: the request was not processed; try again later."""

    def __init__(self, status: int, delay: float, error: McpError) -> None:
        super().__init__(error.message)
        self.status = status
        self.delay = delay
        self.error = error


class Lost(Exception):
    """The connection failed; `delivered` says whether the request may have reached the server."""

    error_type = "connection_lost"  # how a request's span names this failure

    def __init__(self, message: str, *, delivered: bool) -> None:
        super().__init__(message)
        self.delivered = delivered


def dumps(value: Any) -> bytes:
    """A JSON-RPC body as compact UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def loads(raw: str | bytes) -> Any:
    """The server's JSON.

    Raises:
        McpProtocolError: it is not JSON, or too deeply nested to read.
    """
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise McpProtocolError(f"the server sent invalid JSON: {exc}") from None
    except RecursionError:
        raise McpProtocolError("the server sent JSON nested too deeply to read") from None


def too_large(limit: int, what: str) -> McpProtocolError:
    """The error for an answer past `max_answer_bytes`, naming the setting that raises it."""
    return McpProtocolError(
        f"{what} is larger than {describe_size(limit)} (max_answer_bytes); it was not read further"
    )


async def read_capped(response: httpx2.Response, limit: int) -> bytes:
    """The decoded body, refused once it passes `limit` bytes (so memory stays bounded).

    Raises:
        McpProtocolError: the body is larger than `limit`.
    """
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise too_large(limit, "the answer")
    return bytes(body)


async def read_prefix(response: httpx2.Response, limit: int) -> bytes:
    """Up to `limit` bytes of the decoded body; the rest is left unread."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


def refusal(status: int, challenge: str | None) -> str:
    """What to tell the caller about a 401 or 403, with the server's challenge when it sent one."""
    text = f"The MCP server refused our credentials ({status})"
    if challenge:
        text += f"; it asks for: {challenge[:300]}"
    if status == 401:
        text += " (pass auth=OAuth(...) or ClientCredentials(...) from toolwire.mcp.auth)"
    return text + "."


def session_id_of(response: httpx2.Response) -> str | None:
    """The session id the server assigned, which we must be able to send back.

    Raises:
        McpProtocolError: it holds characters outside visible ASCII, which MCP forbids.
    """
    found = response.headers.get(SESSION_HEADER)
    if found is None:
        return None
    if not found or not all("\x21" <= c <= "\x7e" for c in found):
        raise McpProtocolError(
            f"the server gave a session id MCP does not allow (visible ASCII only): {found[:64]!r}"
        )
    return found


def session_lost(status: int, body: bytes) -> bool:
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


def result_of(message: Any, request_id: int) -> Any:
    """The `result` of the server's answer to request `request_id`.

    Raises:
        McpError: the answer is a JSON-RPC error, or a result kind toolwire cannot handle.
        McpProtocolError: the answer is not a JSON-RPC answer to that request.
    """
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
            # `input_required` (questions before the answer) goes to the transport to answer.
            raise McpError(
                f"The MCP server answered with a {kind!r} result, which toolwire cannot handle"
            )
    return message["result"]


def error_from_body(status: int, raw: bytes) -> McpError:
    """An HTTP error answer as `McpError`, with the JSON-RPC error inside it when there is one."""
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


async def reply_to_server(
    message: dict[str, Any],
    elicit: elicitation.ElicitationHandler | None,
    sampler: sampling.Sampler | None,
    url: str,
) -> dict[str, Any]:
    """Our JSON-RPC answer to a request the server sent during a call (ping, input, sampling)."""
    method = message.get("method")
    if method == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    if method == "elicitation/create":
        # Answered (declined, without a handler) even when not declared: a clear "no".
        try:
            result = await elicitation.answer(elicit, message.get("params"))
        except elicitation.ElicitationRefused as exc:
            error = {"code": exc.code, "message": str(exc)}
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}
    if method == "sampling/createMessage":
        # Refused with an error when there is no sampler (the capability was not declared).
        try:
            result = await sampling.answer(sampler, message.get("params"), url)
        except sampling.SamplingRefused as exc:
            error = {"code": exc.code, "message": str(exc)}
            return {"jsonrpc": "2.0", "id": message["id"], "error": error}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}
    error = {"code": -32601, "message": f"Method not found: {message.get('method')}"}
    return {"jsonrpc": "2.0", "id": message["id"], "error": error}


class Listening:
    """The calls in flight sharing the session's GET stream: `ready` is set once the stream is
    open (or refused), `drained` when no call is in flight any more."""

    def __init__(self) -> None:
        self.calls = 1
        self.ready = anyio.Event()
        self.drained = anyio.Event()

    def done(self) -> None:
        self.calls -= 1
        if self.calls == 0:
            self.drained.set()


@dataclass(slots=True)
class Resume:
    """Where an answer stream that ended early resumes, and after how long."""

    last_event_id: str | None = None
    retry_ms: int | None = None
