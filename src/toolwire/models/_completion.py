"""What a model answers: `Completion` (with its `ToolCall`s), the events of a streamed answer, and
the one rule for tool call ids (`CallIds`)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import field
from typing import Any, Literal, TypeAlias

from .._arguments import load_json_object
from .._attempts import Attempt
from .._record import empty_list, record
from ..computer import ComputerCall, is_computer_call
from ..errors import ArgumentProblem, ModelResponseError, ToolArgumentsError
from ..messages import (
    AssistantMessage,
    Citation,
    ReasoningBlock,
    ServerToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
)
from ..results import error_result, to_result
from ..usage import Usage

__all__ = [
    "CallIds",
    "Completion",
    "CompletionDone",
    "FinishReason",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "aclose_events",
    "check_call_ids",
    "completion_events",
]

FinishReason: TypeAlias = Literal[
    "stop", "tool_calls", "length", "content_filter", "pause", "error", "other"
]
"""Why the model stopped, normalised across providers (`raw_finish_reason` keeps the original)."""


@record
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


@record
class Completion:
    """One answer of a model.

    Attributes:
        message: The assistant turn with every provider state, ready for the history.
        usage: What this answer cost in tokens and requests.
        finish_reason: Why the model stopped, normalised.
        raw_finish_reason: The provider's own word for it.
        model: The model that answered, as the provider reported it.
        raw: The provider's response object(s), for what toolwire does not map.
        attempts: Every model asked for this answer, in order; the last one answered (more than
            one when a `FallbackModel` or a retry policy stepped in).
    """

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    raw_finish_reason: str | None = None
    model: str | None = None
    raw: Any = None
    attempts: list[Attempt] = field(default_factory=empty_list)

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
    def computer_calls(self) -> list[ComputerCall]:
        """The computer-use requests of this answer, for the caller to carry out and answer."""
        return [ComputerCall.from_block(b) for b in self.server_tool_calls if is_computer_call(b)]

    @property
    def reasoning(self) -> str:
        return "".join(b.text for b in self.message.parts if isinstance(b, ReasoningBlock))

    def assistant_message(self) -> AssistantMessage:
        """The assistant turn, with all provider state, to append to the history."""
        return self.message


# --- streaming --------------------------------------------------------------------------------


@record
class TextDelta:
    """A piece of the text the model is writing."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@record
class ReasoningDelta:
    """A piece of the model's reasoning (thinking)."""

    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@record
class ToolCallDelta:
    """A piece of a tool call: `index` tells parallel calls apart; id and name come first."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@record
class CompletionDone:
    """The last event of a stream: the whole completion."""

    completion: Completion
    kind: Literal["done"] = "done"


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | ToolCallDelta | CompletionDone


class CallIds:
    """The one rule for tool call ids: unique within an assistant turn, continuations included.

    Adapters take every call's id through `take` while parsing (streamed or not), so the ids the
    stream announced are the ids the turn keeps. A missing id gets one made of the prefix, the
    response id (or a random salt, so turns never share made-up ids) and the call's position; a
    repeated id gets a numeric suffix. `ModelBase.finish` checks the result.
    """

    __slots__ = ("_salt", "prefix", "seen")

    def __init__(self, prefix: str = "call") -> None:
        self.prefix = prefix
        self.seen: set[str] = set()
        self._salt: str | None = None

    def take(self, raw: object, response_id: object, position: int) -> str:
        """The id to keep for the call at `position` that the provider called `raw`."""
        if isinstance(raw, str) and raw and raw not in self.seen:
            self.seen.add(raw)
            return raw
        if isinstance(raw, str) and raw:
            base = raw
        else:
            if isinstance(response_id, str) and response_id:
                salt = response_id
            else:
                self._salt = salt = self._salt or uuid.uuid4().hex[:12]
            base = f"{self.prefix}_{salt}_{position}"
        candidate, n = base, 1
        while candidate in self.seen:
            n += 1
            candidate = f"{base}_{n}"
        self.seen.add(candidate)
        return candidate


def check_call_ids(message: AssistantMessage, who: str | Callable[[], str]) -> None:
    """Enforce the call-id contract on a turn a model produced; `who` names the model in the
    error (a function giving the name, to format it only then).

    Raises:
        ModelResponseError: a call without an id, or two calls sharing one.
    """
    parts = message.parts
    if len(parts) == 1 and (not isinstance(parts[0], ToolCallBlock) or parts[0].id):
        return  # the usual turn (one text or one call), on every answer: no list, no set
    seen: set[str] = set()
    for call in message.tool_calls:
        if not call.id or call.id in seen:
            raise ModelResponseError(
                f"{who if isinstance(who, str) else who()} broke the call-id contract: "
                + (
                    f"call id {call.id!r} appears twice in one turn"
                    if call.id
                    else "a call has no id"
                )
                + " (adapters must take ids through CallIds)"
            )
        seen.add(call.id)


async def aclose_events(events: AsyncIterator[Any]) -> None:
    """Close an event iterator that can be closed (async generators can)."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


def completion_events(completion: Completion) -> Iterator[StreamEvent]:
    """A whole completion as the events a stream of it would carry, `CompletionDone` last."""
    index = 0
    for part in completion.message.parts:
        if isinstance(part, TextBlock):
            for piece in _word_chunks(part.text):
                yield TextDelta(piece)
        elif isinstance(part, ReasoningBlock) and part.text:
            yield ReasoningDelta(part.text)
        elif isinstance(part, ToolCallBlock):
            yield ToolCallDelta(index=index, id=part.id, name=part.name)
            arguments = part.arguments
            for start in range(0, len(arguments), 8):
                yield ToolCallDelta(index=index, arguments=arguments[start : start + 8])
            index += 1
    yield CompletionDone(completion)


def _word_chunks(text: str) -> list[str]:
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    return [p for p in pieces if p]
