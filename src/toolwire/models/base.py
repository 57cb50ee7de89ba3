"""The model API: the `Model` protocol, `Completion`, `ToolCall`, `Usage` and stream events."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from .._arguments import load_json_object
from ..errors import ArgumentProblem, ModelRequestsForbidden, ToolArgumentsError
from ..messages import (
    AssistantMessage,
    Citation,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..results import error_result, to_result
from ..tools import Tool, ToolLike

__all__ = [
    "Completion",
    "CompletionDone",
    "FinishReason",
    "Model",
    "ModelSettings",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "Usage",
    "allow_model_requests",
    "check_model_requests_allowed",
    "forbid_model_requests",
    "request_messages",
]

FinishReason: TypeAlias = Literal[
    "stop", "tool_calls", "length", "content_filter", "pause", "error", "other"
]
"""Why the model stopped, normalised across providers (`raw_finish_reason` keeps the original)."""

ToolChoice: TypeAlias = "Literal['auto', 'none', 'required'] | str | Mapping[str, Any]"
"""`"auto"`, `"none"`, `"required"`, a tool's name, or any other value passed raw to the provider."""


@dataclass(slots=True)
class Usage:
    """Tokens and requests, summed with `+`.

    Attributes:
        input_tokens: Prompt tokens, cached ones included.
        output_tokens: Completion tokens, reasoning included.
        cache_read_tokens: Input tokens served from the provider's cache.
        cache_write_tokens: Input tokens written to the provider's cache.
        reasoning_tokens: Output tokens spent on reasoning.
        requests: Model requests made.
        server_tool_requests: Provider-side tool uses by type (e.g. `{"web_search": 2}`).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    server_tool_requests: dict[str, int] = field(default_factory=dict[str, int])

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        servers = dict(self.server_tool_requests)
        for key, value in other.server_tool_requests.items():
            servers[key] = servers.get(key, 0) + value
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            requests=self.requests + other.requests,
            server_tool_requests=servers,
        )


@dataclass(slots=True)
class ToolCall:
    """A call the model asked for.

    Attributes:
        id: The call id, unique within the turn.
        name: The tool's name.
        arguments: The arguments exactly as the model wrote them (JSON text).
    """

    id: str
    name: str
    arguments: str

    @classmethod
    def from_block(cls, block: ToolCallBlock) -> ToolCall:
        return cls(id=block.id, name=block.name, arguments=block.arguments)

    @property
    def args(self) -> dict[str, Any]:
        """The arguments decoded (no schema validation; `{}` for empty arguments).

        Raises:
            ToolArgumentsError: the arguments are not a JSON object.
        """
        if not self.arguments.strip():
            return {}
        value = load_json_object(self.arguments, self.name)
        if not isinstance(value, dict):
            problem = ArgumentProblem((), "expected a JSON object of arguments")
            raise ToolArgumentsError(self.name, [problem])
        return value  # pyright: ignore[reportUnknownVariableType]

    def result(self, value: Any, is_error: bool = False) -> ToolResultMessage:
        """The tool-result item answering this call.

        `value` is anything a tool may return (text, data, parts, a `ToolResult`) or an exception.
        """
        if isinstance(value, BaseException):
            result = error_result(value)
        else:
            result = to_result(value)
            if is_error and not result.is_error:
                # A copy: a `ToolResult` the caller passed in is theirs, not to be changed.
                result = dataclasses.replace(result, is_error=True)
        return ToolResultMessage.from_result(self.id, self.name, result)


@dataclass(slots=True)
class Completion:
    """One answer of a model.

    Attributes:
        message: The assistant turn with every provider state, ready for the history.
        usage: What this answer cost in tokens and requests.
        finish_reason: Why the model stopped, normalised.
        raw_finish_reason: The provider's own word for it.
        model: The model that answered, as the provider reported it.
        raw: The provider's response object(s), for what toolwire does not map.
    """

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    raw_finish_reason: str | None = None
    model: str | None = None
    raw: Any = None

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [ToolCall.from_block(b) for b in self.message.parts if isinstance(b, ToolCallBlock)]

    @property
    def citations(self) -> list[Citation]:
        return [c for b in self.message.parts if isinstance(b, TextBlock) for c in b.citations]

    @property
    def server_tool_calls(self) -> list[ServerToolCallBlock]:
        return [b for b in self.message.parts if isinstance(b, ServerToolCallBlock)]

    @property
    def reasoning(self) -> str:
        return "".join(b.text for b in self.message.parts if isinstance(b, ReasoningBlock))

    def assistant_message(self) -> AssistantMessage:
        """The assistant turn, with all provider state, to append to the history."""
        return self.message


# --- streaming --------------------------------------------------------------------------------


@dataclass(slots=True)
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ReasoningDelta:
    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a tool call: `index` tells parallel calls apart; id and name come first."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(slots=True)
class CompletionDone:
    """The last event of a stream: the whole completion."""

    completion: Completion
    kind: Literal["done"] = "done"


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | ToolCallDelta | CompletionDone


# --- settings and the protocol -------------------------------------------------------------


@dataclass(slots=True)
class ModelSettings:
    """Request settings common to providers; `extra` goes straight into the request body.

    `None` leaves the provider's default.
    """

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    parallel_tool_calls: bool | None = None
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def coerce(cls, value: ModelSettings | Mapping[str, Any] | None) -> ModelSettings:
        """Accept settings as this class, a plain mapping, or `None`.

        Keys of a mapping that are not fields of this class go to `extra`.
        """
        if value is None:
            return cls()
        if isinstance(value, ModelSettings):
            return value
        known = {k: v for k, v in value.items() if k in cls.__dataclass_fields__ and k != "extra"}
        extra = {k: v for k, v in value.items() if k not in cls.__dataclass_fields__}
        extra.update(value.get("extra") or {})
        return cls(**known, extra=extra)


@runtime_checkable
class Model(Protocol):
    """A model toolwire can talk to. Adapters and the offline test models implement it."""

    @property
    def provider(self) -> str:
        """The provider's name (e.g. `"openai"`); matches `AssistantMessage.provider`."""
        ...

    @property
    def model_name(self) -> str: ...

    async def complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> Completion:
        """Ask the model; `prompt=None` continues from the history alone."""
        ...

    def stream_complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Like `complete`, as events; the last one is `CompletionDone`."""
        ...


def request_messages(prompt: str | None, history: Sequence[Message]) -> list[Message]:
    """The conversation to send: the history, then the prompt as a user turn when given."""
    messages = list(history)
    if prompt is not None:
        messages.append(UserMessage.of(prompt))
    return messages


def resolve_tools(tools: Sequence[ToolLike]) -> list[Tool]:
    from ..tools import as_tool

    return [as_tool(t) for t in tools]


# --- the request guard ------------------------------------------------------------------------

_ALLOWED: ContextVar[bool | None] = ContextVar("toolwire_model_requests_allowed", default=None)
_ENV = "TOOLWIRE_ALLOW_MODEL_REQUESTS"


@contextlib.contextmanager
def forbid_model_requests() -> Generator[None]:
    """Make every real provider request in this context raise `ModelRequestsForbidden`.

    For test suites: the offline test models keep working. The environment variable
    `TOOLWIRE_ALLOW_MODEL_REQUESTS=0` does the same for a whole process.
    """
    token = _ALLOWED.set(False)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


@contextlib.contextmanager
def allow_model_requests() -> Generator[None]:
    """Allow provider requests in this context, whatever the environment says."""
    token = _ALLOWED.set(True)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def check_model_requests_allowed(provider: str) -> None:
    """Called by every adapter before it sends a request.

    Raises:
        ModelRequestsForbidden: requests are forbidden here.
    """
    allowed = _ALLOWED.get()
    if allowed is None:
        allowed = os.environ.get(_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    if not allowed:
        raise ModelRequestsForbidden(
            f"A request to {provider} was blocked: model requests are forbidden here "
            f"(forbid_model_requests() or {_ENV}=0). Use toolwire's offline test models, "
            "or wrap the code in allow_model_requests()."
        )
