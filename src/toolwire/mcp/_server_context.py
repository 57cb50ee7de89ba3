"""The client a served tool talks back to: progress, log lines, sampling and elicitation.

One `ServedCall` per `tools/call` (and per prompt or resource read) is the call's
`ToolContext.client`. It speaks the era the request came in:

- Handshake era (2025-11-25 and before): progress and log lines are notifications on the
  request's own stream (or, when answers are single JSON bodies, on the session's standing GET
  stream), and sampling and elicitation are requests sent to the client while the tool waits,
  for at most the server's `ask_timeout`.
- 2026-07-28: the server cannot send requests. A question the client has not answered yet stops
  the tool (`NeedsInput`), and the call answers `input_required` with that question; the client
  retries the call with the answer, and the tool runs again from the start, every earlier
  question answered from the sealed `requestState` this time. So a tool should ask before it
  does anything it must not do twice.

Answers are held to the same rules as on the client side: a form answer is completed with the
schema's defaults and checked against the schema; a refusal, a malformed answer or a timeout is
a `ToolError` the tool may catch, else an error result.
"""

from __future__ import annotations

import base64
import hashlib
import json
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import anyio
import mcp_types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from .._schema import takes_context
from .._tool_client import Elicited, LogLevel, Sampled
from .._validate import SchemaValidator
from ..errors import SchemaError, ToolError
from ..messages import AssistantMessage, FilePart, UserMessage
from ..registry import ToolRegistry
from ..results import AudioPart, ImagePart, TextPart
from ..tools import FunctionTool, Tool, ToolContext, ToolLike
from ._content import McpProtocolError, parse_part, part_to_mcp
from .elicitation import with_defaults
from .prompts import Prompt
from .resources import Resource

__all__ = [
    "LOG_LEVELS",
    "MissingCapability",
    "NeedsInput",
    "ServedCall",
    "Talk",
    "decode_state",
    "input_required",
    "interactive",
    "may_talk",
    "release_stream",
    "session_key",
    "talks",
]

LOG_LEVELS: tuple[LogLevel, ...] = typing.get_args(LogLevel)
"""The MCP log levels, least severe first."""


class NeedsInput(BaseException):
    """Stops a tool in the 2026-07-28 era until the client answers its question.

    A `BaseException`, so that a tool's own `except Exception` does not swallow it; the call
    also remembers the question, so a tool that catches it anyway still gets it asked.
    """


class MissingCapability(BaseException):
    """A 2026-07-28 question the client declared no capability for: a JSON-RPC error (-32021).

    That revision makes it the request's error, not the tool's; like `NeedsInput` it is a
    `BaseException` so the tool's own error handling does not turn it into a result.
    """

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        super().__init__(message)
        self.message = message
        self.required = required


class ServedCall:
    """`ToolContext.client` for one request served over MCP."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any],
        *,
        log_level: LogLevel | None,
        ask_timeout: float | None,
        state: Mapping[str, Any] | None = None,
        responses: Mapping[str, Any] | None = None,
    ) -> None:
        self._ctx = ctx
        self._log_level = log_level
        self._ask_timeout = ask_timeout
        self._modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        # A JSON answer has no room for what comes before it: talk on the session's stream.
        self._scoped = ctx.session.can_send_request or self._modern
        self._asked = 0
        # 2026-07-28: answers so far (key -> question digest and answer), and the one question
        # this round stopped at.
        self.answers: dict[str, dict[str, Any]] = dict(state or {})
        self.pending: tuple[str, dict[str, Any], str] | None = None
        asked: Any = (state or {}).get("_asked")
        for key, response in (responses or {}).items():
            # Only an answer to the question last asked counts, and for that very question.
            if isinstance(asked, dict) and key in asked:
                self.answers[key] = {"q": typing.cast(dict[str, Any], asked)[key], "r": response}
        self.answers.pop("_asked", None)

    # --- notifications ---------------------------------------------------------------------

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send `notifications/progress` when the client gave a progress token."""
        if self._scoped:
            await self._ctx.session.report_progress(progress, total, message)
            return
        token = (self._ctx.meta or {}).get("progressToken")
        if token is None:
            token = (self._ctx.meta or {}).get("progress_token")
        if isinstance(token, str | int):
            await self._ctx.session.send_progress_notification(token, progress, total, message)

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message`, unless below the level the client asked for."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._modern:
            # 2026-07-28: only what this very request opted into, on its own stream.
            if level not in allowed_log_levels(self._ctx.protocol_version, self._ctx.meta):
                return
        elif self._log_level is not None and LOG_LEVELS.index(level) < LOG_LEVELS.index(
            self._log_level
        ):
            return
        notification = mcp_types.LoggingMessageNotification(
            params=mcp_types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        )
        related = self._ctx.request_id if self._scoped else None
        await self._ctx.session.send_notification(notification, related)

    async def release_stream(self) -> bool:
        """End the request's SSE stream now; the client reconnects later for the answer."""
        close = self._ctx.close_sse_stream
        if close is None:
            return False
        await close()
        return True

    # --- questions ---------------------------------------------------------------------------

    async def sample(
        self,
        messages: str | Sequence[UserMessage | AssistantMessage],
        *,
        max_tokens: int,
        system_prompt: str | None,
        temperature: float | None,
        stop_sequences: Sequence[str] | None,
        model_hints: Sequence[str],
    ) -> Sampled:
        """Ask the client's model (`sampling/createMessage`)."""
        if max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        capabilities = self._ctx.session.client_capabilities
        if capabilities is None or capabilities.sampling is None:
            self._missing(
                "The MCP client offers no sampling (no `sampling` capability)", "sampling"
            )
        params: dict[str, Any] = {"messages": _sampling_messages(messages), "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        if stop_sequences:
            params["stopSequences"] = list(stop_sequences)
        if model_hints:
            params["modelPreferences"] = {"hints": [{"name": h} for h in model_hints]}
        raw = await self._ask("sampling/createMessage", params)
        try:
            result = mcp_types.CreateMessageResult.model_validate(raw)
        except ValidationError:
            raise ToolError("The MCP client answered sampling with a malformed result") from None
        block = result.content.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            part = parse_part(block, 0)
        except McpProtocolError as exc:
            raise ToolError(f"The MCP client's sampled answer is malformed: {exc}") from None
        if not isinstance(part, TextPart | ImagePart | AudioPart):
            raise ToolError("The MCP client's sampled answer is neither text, image nor audio")
        return Sampled(content=[part], model=result.model, stop_reason=result.stop_reason)

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the client's user to fill in a form (`elicitation/create`)."""
        requested = dict(schema)
        if requested.get("type") != "object":
            raise ValueError("an elicitation schema must be a JSON Schema object")
        try:
            check = SchemaValidator(requested)
        except SchemaError as exc:
            raise ValueError(f"the elicitation schema is not valid: {exc}") from None
        capabilities = self._ctx.session.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        # A bare `elicitation: {}` (from before modes) means forms; `url` alone does not.
        if elicitation is None or (elicitation.form is None and elicitation.url is not None):
            self._missing(
                "The MCP client offers no form elicitation (no capability)", "elicitation"
            )
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        if not self._modern:
            # Clients of 2025-06-18 know no modes; the form is the default anyway.
            del params["mode"]
        raw = await self._ask("elicitation/create", params)
        try:
            result = mcp_types.ElicitResult.model_validate(raw)
        except ValidationError:
            raise ToolError("The MCP client answered elicitation with a malformed result") from None
        action: Literal["accept", "decline", "cancel"] = result.action
        if action != "accept":
            return Elicited(action)
        content = with_defaults(requested, dict(result.content or {}))
        problems = check.problems(content, limit=3)
        if problems:
            where = "; ".join(
                f"{'.'.join(map(str, p.path)) or 'the form'}: {p.message}" for p in problems
            )
            raise ToolError(f"The user's answer does not match the requested schema ({where})")
        return Elicited("accept", content)

    def _missing(self, message: str, capability: str) -> typing.NoReturn:
        if not self._modern and self._ctx.session.client_params is None:
            # No handshake on this connection: a stateless server, which keeps no session.
            raise ToolError(
                f"The MCP client cannot be sent a {capability} request here: a stateless server "
                "keeps no session to ask it through"
            )
        if self._modern:
            needed: dict[str, Any] = {}
            if capability == "elicitation":
                needed["form"] = {}
            raise MissingCapability(message, {capability: needed})
        raise ToolError(message)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        key = f"{method.split('/')[0]}-{self._asked}"
        self._asked += 1
        if self._modern:
            return self._answer_or_stop(key, method, params)
        limit = self._ask_timeout
        request: Any = (
            mcp_types.CreateMessageRequest.model_validate({"method": method, "params": params})
            if method == "sampling/createMessage"
            else mcp_types.ElicitRequest.model_validate({"method": method, "params": params})
        )
        related = self._ctx.request_id if self._scoped else None
        sampling = method == "sampling/createMessage"
        what = "sampling" if sampling else "elicitation"
        kind: type[mcp_types.Result] = (
            mcp_types.CreateMessageResult if sampling else mcp_types.ElicitResult
        )
        try:
            with anyio.fail_after(limit):
                answer = await self._ctx.session.send_request(
                    request, kind, metadata=ServerMessageMetadata(related_request_id=related)
                )
        except TimeoutError:
            raise ToolError(
                f"The MCP client did not answer the {what} request within {limit:g} seconds"
            ) from None
        except NoBackChannelError:
            raise ToolError(
                f"The MCP client cannot be sent a {what} request here: a stateless server, or "
                "JSON answers to a client without a GET stream"
            ) from None
        except MCPError as exc:
            raise ToolError(
                f"The MCP client refused the {what} request: {exc.error.message}"
            ) from None
        except ValidationError:
            raise ToolError(f"The MCP client answered the {what} request malformed") from None
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    def _answer_or_stop(self, key: str, method: str, params: dict[str, Any]) -> Any:
        digest = _digest(params)
        found = self.answers.get(key)
        if found is not None and found.get("q") == digest:
            return found.get("r")
        self.pending = (key, {"method": method, "params": params}, digest)
        raise NeedsInput(key)


def _digest(params: Mapping[str, Any]) -> str:
    rendered = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(rendered.encode()).digest()[:16]).decode()


def _sampling_messages(
    messages: str | Sequence[UserMessage | AssistantMessage],
) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": {"type": "text", "text": messages}}]
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if any(isinstance(p, FilePart) for p in message.content):
                raise ValueError("sampling takes text, images and audio, not files")
            blocks = [part_to_mcp(p) for p in message.content if not isinstance(p, FilePart)]
            role = "user"
        else:
            blocks = [{"type": "text", "text": message.text}]
            role = "assistant"
        out.append({"role": role, "content": blocks[0] if len(blocks) == 1 else blocks})
    if not out:
        raise ValueError("sampling needs at least one message")
    return out


def input_required(call: ServedCall) -> dict[str, Any]:
    """The `input_required` result asking the question `call` stopped at, with its state."""
    assert call.pending is not None
    key, request, digest = call.pending
    state = {**call.answers, "_asked": {key: digest}}
    return {
        "resultType": "input_required",
        "inputRequests": {key: request},
        "requestState": json.dumps(state, separators=(",", ":")),
    }


def decode_state(raw: str | None) -> dict[str, Any]:
    """The answers a `requestState` carries (already unsealed by the SDK's boundary)."""
    if not raw:
        return {}
    try:
        found: Any = json.loads(raw)
    except ValueError:
        return {}
    return typing.cast(dict[str, Any], found) if isinstance(found, dict) else {}


_MAX_LEVELS = 10_000
"""Sessions whose `logging/setLevel` is remembered; the oldest is forgotten past it."""


def session_key(ctx: ServerRequestContext[Any]) -> str:
    """The session a request belongs to: its `Mcp-Session-Id`, or the one stdio connection."""
    http: Any = ctx.request
    if http is None:
        return "stdio"
    found: Any = http.headers.get("mcp-session-id")
    return found if isinstance(found, str) else ""


class Talk:
    """What the server keeps for its calls' talking back: log levels, and how long to wait."""

    def __init__(self, ask_timeout: float | None) -> None:
        if ask_timeout is not None and ask_timeout <= 0:
            raise ValueError(f"ask_timeout must be positive, got {ask_timeout}")
        self.ask_timeout = ask_timeout
        self._levels: dict[str, LogLevel] = {}

    def set_level(self, ctx: ServerRequestContext[Any], level: LogLevel) -> None:
        """Remember a session's `logging/setLevel` (a bounded memory: oldest out first)."""
        key = session_key(ctx)
        self._levels.pop(key, None)
        self._levels[key] = level
        while len(self._levels) > _MAX_LEVELS:
            del self._levels[next(iter(self._levels))]

    def call(self, ctx: ServerRequestContext[Any], params: Any) -> ServedCall:
        """The `ToolContext.client` for one request (`params` may carry 2026-07-28 answers)."""
        responses: Any = getattr(params, "input_responses", None)
        answers = {
            str(k): v.model_dump(mode="json", by_alias=True, exclude_none=True)
            for k, v in typing.cast(dict[Any, Any], responses or {}).items()
        }
        return ServedCall(
            ctx,
            log_level=self._levels.get(session_key(ctx)),
            ask_timeout=self.ask_timeout,
            state=decode_state(getattr(params, "request_state", None)),
            responses=answers,
        )


async def release_stream(ctx: ToolContext) -> bool:
    """Let go of a served call's answer stream: its client polls for the answer instead.

    For a long call behind proxies that cut idle connections (SEP-1699): the client reconnects
    after the server's `retry` delay with `Last-Event-ID` and receives what the tool sent
    meanwhile, the answer included. Works on a resumable server (`create_app(...,
    resumable=True)`) with clients of 2025-11-25 or later.

    Returns:
        Whether the stream was closed; `False` when not served over MCP, not resumable, or the
        client is too old to reconnect.
    """
    client = ctx.client
    return isinstance(client, ServedCall) and await client.release_stream()


async def interactive(
    call: ServedCall, run: Callable[[], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """`run()`'s result, or `input_required` when it stopped at an unanswered question."""
    try:
        result = await run()
    except NeedsInput:
        return input_required(call)
    except MissingCapability as missing:
        raise MCPError(
            code=mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=missing.message,
            data={"requiredCapabilities": missing.required},
        ) from None
    return input_required(call) if call.pending is not None else result


def talks(tool: Tool) -> bool:
    """Whether a tool may talk back: it takes a `ToolContext`, or it is a tool toolwire cannot
    see into (one built from `execute=`, or of another class)."""
    function = tool.function if isinstance(tool, FunctionTool) else None
    return function is None or takes_context(function, ToolContext)


def may_talk(
    tools: Sequence[ToolLike], resources: Sequence[Resource], prompts: Sequence[Prompt]
) -> bool:
    """Whether anything served may send progress, log lines or questions while it runs."""
    if any(r.takes_context for r in resources) or any(p.takes_context for p in prompts):
        return True
    registry = ToolRegistry()
    return any(talks(registry.add(t)) for t in tools)
