"""Offline models for tests: `ScriptedModel`, `FunctionModel` and `TestModel`.

They implement the same `Model` protocol as the provider adapters, make no network request, and
record every request they receive (`model.requests`) so tests can assert on what the loop sent.
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
import typing
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..errors import ModelResponseError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..tools import Tool, ToolLike
from .base import (
    Completion,
    CompletionDone,
    FinishReason,
    ModelSettings,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    Usage,
    request_messages,
    resolve_tools,
)

__all__ = [
    "FunctionModel",
    "ModelRequest",
    "Reply",
    "ScriptedModel",
    "TestModel",
    "example_arguments",
]

Reply: TypeAlias = (
    str
    | Completion
    | AssistantMessage
    | ToolCall
    | tuple[str, Any]
    | Sequence[ToolCall | tuple[str, Any]]
)
"""What a scripted or function model answers: text, tool calls (as `ToolCall`s or `(name, args)`
pairs, `args` a dict or JSON text), a whole `AssistantMessage`, or a `Completion`."""


@dataclass(slots=True)
class ModelRequest:
    """One request a test model received."""

    messages: list[Message]
    tools: list[Tool]
    tool_choice: Any
    settings: ModelSettings


def _message_tokens(message: Message) -> int:
    return len(message.text.split())


class _TokenCounter:
    """Counts a prompt's words, re-counting only what was appended since the last request.

    Histories grow by appending, so a run of N rounds costs O(N) in all, not O(N^2).
    """

    def __init__(self) -> None:
        self._length = 0
        self._last: Message | None = None
        self._total = 0

    def count(self, messages: Sequence[Message]) -> int:
        n = self._length
        if n and len(messages) >= n and messages[n - 1] is self._last:
            total = self._total + sum(_message_tokens(m) for m in messages[n:])
        else:
            total = sum(_message_tokens(m) for m in messages)
        self._length, self._total = len(messages), total
        self._last = messages[-1] if messages else None
        return max(total, 1)


class _OfflineModel:
    """Shared plumbing: request recording, reply normalisation, streaming by chunks."""

    provider = "test"

    def __init__(self, model_name: str) -> None:
        self.model_name = model_name
        self.requests: list[ModelRequest] = []
        self._ids = itertools.count(1)
        self._tokens = _TokenCounter()

    async def _reply(self, request: ModelRequest) -> Reply:
        raise NotImplementedError

    def _record(
        self,
        prompt: str | None,
        history: Sequence[Message],
        tools: Sequence[ToolLike],
        tool_choice: ToolChoice,
        settings: ModelSettings | Mapping[str, Any] | None,
    ) -> ModelRequest:
        request = ModelRequest(
            messages=request_messages(prompt, history),
            tools=resolve_tools(tools),
            tool_choice=tool_choice,
            settings=ModelSettings.coerce(settings),
        )
        self.requests.append(request)
        return request

    def _completion(self, reply: Reply, request: ModelRequest) -> Completion:
        if isinstance(reply, Completion):
            return reply
        if isinstance(reply, AssistantMessage):
            message = reply
        else:
            message = AssistantMessage(parts=self._parts(reply), provider=self.provider)
        message.model = message.model or self.model_name
        calls = any(isinstance(p, ToolCallBlock) for p in message.parts)
        finish: FinishReason = "tool_calls" if calls else "stop"
        usage = Usage(
            input_tokens=self._tokens.count(request.messages),
            output_tokens=max(len(message.text.split()), 1),
            requests=1,
        )
        return Completion(message=message, usage=usage, finish_reason=finish, model=self.model_name)

    def _parts(self, reply: Reply) -> list[AssistantPart]:
        if isinstance(reply, str):
            return [TextBlock(reply)]
        if isinstance(reply, ToolCall) or (
            isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[0], str)
        ):
            return [self._call_block(typing.cast(ToolCall | tuple[str, Any], reply))]
        if isinstance(reply, Sequence):
            items = typing.cast(Sequence[ToolCall | tuple[str, Any]], reply)
            return [self._call_block(item) for item in items]
        raise TypeError(f"a test model cannot answer with {type(reply).__name__}")

    def _call_block(self, item: ToolCall | tuple[str, Any]) -> ToolCallBlock:
        if isinstance(item, ToolCall):
            return ToolCallBlock(id=item.id, name=item.name, arguments=item.arguments)
        name, args = item
        arguments = args if isinstance(args, str) else json.dumps(args)
        return ToolCallBlock(id=f"call_{next(self._ids)}", name=name, arguments=arguments)

    async def complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> Completion:
        """Answer from the script or function, recording the request."""
        request = self._record(prompt, history, tools, tool_choice, settings)
        return self._completion(await self._reply(request), request)

    async def stream_complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """The same answer as `complete`, as deltas (text in word-sized pieces), then the whole."""
        completion = await self.complete(
            prompt, history=history, tools=tools, tool_choice=tool_choice, settings=settings
        )
        index = 0
        for part in completion.message.parts:
            if isinstance(part, TextBlock):
                for piece in _chunks(part.text):
                    yield TextDelta(piece)
            elif isinstance(part, ReasoningBlock) and part.text:
                yield ReasoningDelta(part.text)
            elif isinstance(part, ToolCallBlock):
                yield ToolCallDelta(index=index, id=part.id, name=part.name)
                for piece in _chunks(part.arguments, 8):
                    yield ToolCallDelta(index=index, arguments=piece)
                index += 1
        yield CompletionDone(completion)


def _chunks(text: str, size: int = 0) -> list[str]:
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    return [p for p in pieces if p]


class ScriptedModel(_OfflineModel):
    """Answers with queued replies, in order.

    ```python
    model = ScriptedModel([("get_weather", {"city": "Recife"}), "Sunny, 31 degrees."])
    ```

    Raises `ModelResponseError` when asked more times than it has replies.
    """

    def __init__(self, replies: Sequence[Reply] = (), *, model_name: str = "scripted") -> None:
        super().__init__(model_name)
        self._queue: list[Reply] = list(replies)

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def _reply(self, request: ModelRequest) -> Reply:
        if not self._queue:
            raise ModelResponseError(
                f"ScriptedModel has no reply left for request {len(self.requests)}"
            )
        return self._queue.pop(0)


ReplyFunction: TypeAlias = Callable[[list[Message], ModelRequest], Reply | Awaitable[Reply]]


class FunctionModel(_OfflineModel):
    """Answers with whatever `fn(messages, request)` returns (sync or async).

    `request` holds the tools, tool choice and settings of the call.
    """

    def __init__(self, fn: ReplyFunction, *, model_name: str = "function") -> None:
        super().__init__(model_name)
        self._fn = fn

    async def _reply(self, request: ModelRequest) -> Reply:
        reply = self._fn(request.messages, request)
        if inspect.isawaitable(reply):
            return await reply
        return reply


class TestModel(_OfflineModel):
    """Calls every tool once with arguments made to satisfy its schema, then sums up the results.

    Args:
        call_tools: `"all"`, or the names of the tools to call.
        final_text: The answer after the tool results; by default a JSON summary of them
            (`{"tool_name": "result text", ...}`).
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        *,
        call_tools: str | Sequence[str] = "all",
        final_text: str | None = None,
        model_name: str = "test",
    ) -> None:
        super().__init__(model_name)
        self.call_tools = call_tools
        self.final_text = final_text

    async def _reply(self, request: ModelRequest) -> Reply:
        answered = _latest_results(request.messages)
        if answered is None and request.tools and request.tool_choice != "none":
            chosen = [
                t for t in request.tools if self.call_tools == "all" or t.name in self.call_tools
            ]
            if chosen:
                return [(t.name, example_arguments(t.parameters)) for t in chosen]
        if self.final_text is not None:
            return self.final_text
        if answered:
            return json.dumps({r.name: r.text for r in answered}, ensure_ascii=False)
        return "success (no tool calls)"


def _latest_results(messages: Sequence[Message]) -> list[ToolResultMessage] | None:
    """The tool results after the last assistant turn that called tools, if any were called."""
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            results.append(message)
        elif isinstance(message, AssistantMessage):
            return list(reversed(results)) if message.tool_calls else None
        elif isinstance(message, UserMessage):
            return None
    return None


# --- schema-driven example arguments ----------------------------------------------------------

_FORMATS: dict[str, str] = {
    "date-time": "2026-01-01T12:00:00Z",
    "date": "2026-01-01",
    "time": "12:00:00",
    "email": "person@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "duration": "P1D",
}


@dataclass(slots=True)
class _Gen:
    defs: dict[str, Any] = field(default_factory=dict[str, Any])

    def value(self, schema: Any, depth: int = 0) -> Any:
        if not isinstance(schema, Mapping) or depth > 12:
            return None
        node: Mapping[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self.defs.get(ref.rsplit("/", 1)[-1])
            merged = {**(target or {}), **{k: v for k, v in node.items() if k != "$ref"}}
            return self.value(merged, depth + 1)
        if "const" in node:
            return node["const"]
        if "default" in node:
            return node["default"]
        enum = node.get("enum")
        if isinstance(enum, list) and enum:
            values = typing.cast(list[Any], enum)
            return next((e for e in values if e is not None), values[0])
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and branches:
                options = typing.cast(list[Any], branches)
                usable: list[Any] = [b for b in options if not _is_null(b)]
                return self.value((usable or options)[0], depth + 1)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: dict[str, Any] = {}
            for part in all_of:  # pyright: ignore[reportUnknownVariableType]
                if isinstance(part, Mapping):
                    merged.update(part)  # pyright: ignore[reportUnknownArgumentType]
            return self.value(merged, depth + 1)
        kind: Any = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in typing.cast(list[Any], kind) if k != "null"]
            kind = kinds[0] if kinds else "null"
        if kind is None and "properties" in node:
            kind = "object"
        return self._typed(str(kind), node, depth)

    def _typed(self, kind: str, node: Mapping[str, Any], depth: int) -> Any:
        if kind == "object":
            props: Mapping[str, Any] = node.get("properties") or {}
            required = node.get("required") or list(props)
            return {k: self.value(props[k], depth + 1) for k in required if k in props}
        if kind == "array":
            count = int(node.get("minItems", 1))
            return [self.value(node.get("items", {}), depth + 1) for _ in range(count)]
        if kind == "string":
            fmt = node.get("format")
            if isinstance(fmt, str) and fmt in _FORMATS:
                return _FORMATS[fmt]
            length = max(int(node.get("minLength", 1)), 1)
            maximum = node.get("maxLength")
            text = ("example" * (length // 7 + 1))[: max(length, 7)]
            return text[: int(maximum)] if isinstance(maximum, int) else text
        if kind in ("integer", "number"):
            return _number(node, integer=kind == "integer")
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return "example"


def _is_null(branch: Any) -> bool:
    return (
        isinstance(branch, Mapping) and typing.cast(Mapping[str, Any], branch).get("type") == "null"
    )


def _bound(node: Mapping[str, Any], plain: str, exclusive: str) -> tuple[float | None, bool]:
    value = node.get(plain)
    ex = node.get(exclusive)
    if isinstance(ex, bool):  # draft-04 spelling: a flag on `minimum` / `maximum`
        return (float(value), ex) if isinstance(value, int | float) else (None, False)
    candidates: list[tuple[float, bool]] = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        candidates.append((float(value), False))
    if isinstance(ex, int | float):
        candidates.append((float(ex), True))
    if not candidates:
        return None, False
    return max(candidates) if plain == "minimum" else min(candidates, key=lambda c: (c[0], -c[1]))


def _number(node: Mapping[str, Any], *, integer: bool) -> int | float:
    lo, lo_ex = _bound(node, "minimum", "exclusiveMinimum")
    hi, hi_ex = _bound(node, "maximum", "exclusiveMaximum")
    if lo is not None and hi is not None:
        value = (lo + hi) / 2
    elif lo is not None:
        value = lo + 1 if lo_ex else lo
    elif hi is not None:
        value = min(1.0, hi - 1 if hi_ex else hi)
    else:
        value = 1.0
    step = node.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        value = math.ceil(value / step) * step
    if not integer:
        return value
    number = math.ceil(value)
    if lo is not None and (number < lo or (lo_ex and number == lo)):
        number = math.floor(lo) + 1
    return number


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a tool's JSON Schema (required properties, formats, enums, bounds)."""
    defs: dict[str, Any] = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    value = _Gen(defs).value(schema)
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]
