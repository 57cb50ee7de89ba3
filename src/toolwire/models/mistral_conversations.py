"""Mistral's Conversations API (`api = "mistral-conversations"`), for what only it offers: Mistral's
own tools (`web_search`, `web_search_premium`, `code_interpreter`, `image_generation`,
`document_library`) beside function tools.

`MistralModel` sends a request carrying `native_tools` here by itself; `MistralConversationsModel`
speaks this API for every request. Each request is self-contained: `store=False`, and the whole
history goes inline as entries (`message.input`, `function.call`, `function.result`, and this
API's own `tool.execution` entries replayed as they came). The answer's entries become parts in
order: text (with `tool_reference` chunks as `Citation`s), reasoning, tool calls, and a
`ServerToolCallBlock` (its raw entry kept in `provider_state["raw"]`) plus a `ServerToolResultBlock`
(the entry's `info`) for each tool Mistral ran. Usage counts the connectors' uses in
`server_tool_requests`.

The API takes tool choice `"auto"`, `"none"` and `"any"` (`"required"`); forcing one tool by name
raises `UnsupportedError` before any request. Streaming folds the API's events (text, function
call and tool execution deltas, then `conversation.response.done` with the usage) into the same
completion.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, cast

from ..errors import ModelResponseError, ModelStreamError, UnsupportedError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Citation,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    UserMessage,
)
from ._mistral_wire import (
    PROVIDER,
    Answer,
    MistralBase,
    arguments_text,
    tool_definition,
    tool_text,
    user_content,
    value,
    wire_id,
)
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    PreparedRequest,
    StreamEvent,
    ToolCallDelta,
    Usage,
)
from .profiles import MISTRAL

__all__ = ["API", "MistralConversationsModel"]

API = "mistral-conversations"

_SETTINGS = (
    ("max_tokens", "max_tokens"),
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("stop", "stop"),
    ("seed", "random_seed"),
)
_COMPLETION_ARGS = frozenset(
    {"presence_penalty", "frequency_penalty", "prediction", "response_format", "reasoning_effort"}
)
_REQUEST_ARGS = frozenset({"handoff_execution", "guardrails", "metadata", "name", "description"})


class MistralConversationsModel(MistralBase):
    """A Mistral model over the Conversations API (Mistral's own tools beside function tools).

    Args:
        model_name: The model, e.g. `"mistral-medium-latest"`.
        api_key: The API key; `MISTRAL_API_KEY` when not given.
        base_url: Another server root; the SDK appends `/v1/...`.
        timeout: Seconds per request; `settings.timeout` overrides it per request.
        client: A ready `mistralai.client.Mistral` (the caller's to close).
        clients: The client holder of a `MistralModel` to share (how it hands requests over).
    """

    api = API

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Start a conversation that is not stored, with the whole history inline.

        Raises:
            UnsupportedError: a tool forced by name, or a setting the API does not take.
            ModelHTTPError: an HTTP error (`RetryableModelError` for 429 and 5xx).
            ModelConnectionError: no answer.
            ModelResponseError: an answer that cannot be used.
        """
        kwargs = self.wire_request(request)
        try:
            response = await self._sdk().beta.conversations.start_async(**kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        return parse_conversation(response, self._model_name)

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and function-call deltas, then `CompletionDone`.

        A stream that ends before `conversation.response.done` raises `ModelResponseError`; a
        `conversation.response.error` event raises `ModelStreamError`.
        """
        kwargs = self.wire_request(request)
        try:
            stream = await self._sdk().beta.conversations.start_stream_async(**kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        state = ConversationStream()
        try:
            async for event in stream:
                for delta in state.feed(value(event, "data")):
                    yield delta
        except Exception as exc:
            raise self.map_error(exc, streaming=True) from exc
        finally:
            await stream.close()
        if state.usage is None:
            raise ModelResponseError(
                "the mistral conversation stream ended before the response was done; "
                "the partial answer was discarded"
            )
        yield CompletionDone(state.completion(self._model_name))

    def wire_request(self, request: PreparedRequest) -> dict[str, Any]:
        """The keyword arguments for the SDK's `beta.conversations.start_async`."""
        if request.output is not None:
            raise UnsupportedError(
                "Mistral's Conversations API (used for native tools) takes no structured answer "
                "here; ask with output_mode='tool' or 'prompted'"
            )
        options = request.settings
        extra = dict(options.extra)
        tools: list[Any] = [tool_definition(d) for d in request.definitions]
        raw_tools = extra.pop("tools", None)
        if raw_tools:
            tools.extend(cast(Sequence[Any], raw_tools))
        tools.extend(request.native_tools)
        instructions, inputs = wire_entries(request.messages, self.owns)
        kwargs: dict[str, Any] = {"model": self._model_name, "inputs": inputs, "store": False}
        if instructions:
            kwargs["instructions"] = instructions
        args: dict[str, Any] = {}
        if tools:
            kwargs["tools"] = tools
            choice = _tool_choice(request.tool_choice)
            if choice != "auto" or request.tools:
                args["tool_choice"] = choice
        for name, wire in _SETTINGS:
            setting = getattr(options, name)
            if setting is not None:
                args[wire] = setting
        if options.parallel_tool_calls is not None:
            raise UnsupportedError("Mistral's Conversations API has no parallel_tool_calls")
        for key, setting in extra.items():
            if key in _COMPLETION_ARGS:
                args[key] = setting
            elif key in _REQUEST_ARGS:
                kwargs[key] = setting
            else:
                known = ", ".join(sorted(_COMPLETION_ARGS | _REQUEST_ARGS))
                raise UnsupportedError(
                    f"Mistral's Conversations API takes no {key!r}; settings.extra accepts {known}"
                )
        if args:
            kwargs["completion_args"] = args
        if options.timeout is not None:
            kwargs["timeout_ms"] = int(options.timeout * 1000)
        return kwargs


def _tool_choice(choice: Any) -> str:
    if choice == "required":
        return "any"
    if choice in ("auto", "none", "any"):
        return choice
    raise UnsupportedError(
        f"Mistral's Conversations API cannot force a tool ({choice!r}); it takes tool_choice "
        "'auto', 'none' or 'required'"
    )


def wire_entries(messages: Sequence[Message], owns: Any) -> tuple[str, list[dict[str, Any]]]:
    """The instructions (system messages joined) and the history as Conversations entries."""
    system: list[str] = []
    entries: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            content = user_content(message)
            entries.append({"type": "message.input", "role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            entries.extend(_assistant_entries(message, bool(owns(message))))
        else:
            entries.append(
                {
                    "type": "function.result",
                    "tool_call_id": wire_id(message.call_id),
                    "result": tool_text(message),
                }
            )
    return "\n\n".join(s for s in system if s.strip()), entries


def _assistant_entries(message: AssistantMessage, own: bool) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    chunks: list[dict[str, Any]] = []

    def flush() -> None:
        if chunks:
            content: Any = list(chunks)
            if all(c["type"] == "text" for c in chunks):
                content = "".join(c["text"] for c in chunks)
            entries.append({"type": "message.input", "role": "assistant", "content": content})
            chunks.clear()

    for part in message.parts:
        if isinstance(part, TextBlock):
            if part.text:
                chunks.append({"type": "text", "text": part.text})
        elif isinstance(part, ReasoningBlock):
            chunk = (part.provider_state or {}).get("chunk") if own else None
            if isinstance(chunk, Mapping):
                chunks.append(dict(cast(Mapping[str, Any], chunk)))
        elif isinstance(part, ToolCallBlock):
            flush()
            entries.append(
                {
                    "type": "function.call",
                    "tool_call_id": wire_id(part.id),
                    "name": part.name,
                    "arguments": part.arguments,
                }
            )
        elif isinstance(part, ServerToolCallBlock) and own:
            raw = (part.provider_state or {}).get("raw")
            if isinstance(raw, Mapping):
                flush()
                entries.append(dict(cast(Mapping[str, Any], raw)))
    flush()
    return entries


# --- the answer -------------------------------------------------------------------------------


_READ_EVENTS = frozenset(
    {
        "conversation.response.started",
        "conversation.response.done",
        "conversation.response.error",
        "message.output.delta",
        "function.call.delta",
        "tool.execution.started",
        "tool.execution.delta",
        "tool.execution.done",
    }
)
"""The event kinds `ConversationStream` reads."""


class ConversationStream:
    """Conversation events folded into the entries a whole response would hold."""

    __slots__ = ("calls", "conversation_id", "entries", "ids", "raw", "usage")

    def __init__(self) -> None:
        self.ids = CallIds(MISTRAL.call_id_prefix)
        self.entries: dict[int, dict[str, Any]] = {}
        self.calls: dict[int, int] = {}  # output index -> position among function calls
        self.conversation_id: str | None = None
        self.usage: Any = None
        self.raw: list[Any] = []

    def feed(self, event: Any) -> list[StreamEvent]:
        self.raw.append(event)
        kind = value(event, "type")
        if kind == "UNKNOWN":
            # The SDK keeps an event its types refuse as an unknown one: an event kind read
            # here (a function call without a name...) is broken, not new, and never skipped.
            raw = value(event, "raw")
            broken = value(raw, "type") if isinstance(raw, dict) else None
            if broken in _READ_EVENTS:
                raise ModelResponseError(
                    f"mistral sent a {broken} event toolwire cannot read: {raw!r:.200}"
                )
            return []
        index = value(event, "output_index") or 0
        if kind == "conversation.response.started":
            self.conversation_id = value(event, "conversation_id")
        elif kind == "conversation.response.done":
            self.usage = value(event, "usage")
        elif kind == "conversation.response.error":
            code = value(event, "code")
            raise ModelStreamError(
                f"mistral reported an error: {value(event, 'message')} (code {code})",
                provider=PROVIDER,
                code=None if code is None else str(code),
                body=event,
            )
        elif kind == "message.output.delta":
            entry = self.entries.setdefault(
                index, {"type": "message.output", "content": [], "model": value(event, "model")}
            )
            content = value(event, "content")
            chunks = [{"type": "text", "text": content}] if isinstance(content, str) else [content]
            entry["content"].extend(chunks)
            return Answer().content(chunks)
        elif kind == "function.call.delta":
            return [self._call(event, index)]
        elif kind in ("tool.execution.started", "tool.execution.delta", "tool.execution.done"):
            entry = self.entries.setdefault(
                index,
                {
                    "type": "tool.execution",
                    "object": "entry",
                    "id": value(event, "id"),
                    "name": value(event, "name"),
                    "arguments": "",
                },
            )
            if kind != "tool.execution.done":
                entry["arguments"] += value(event, "arguments") or ""
            elif value(event, "info"):
                entry["info"] = value(event, "info")
        return []

    def _call(self, event: Any, index: int) -> ToolCallDelta:
        entry = self.entries.get(index)
        arguments = value(event, "arguments") or ""
        if entry is None:
            call_id, name = value(event, "tool_call_id"), value(event, "name")
            if call_id:
                # The id the turn keeps (a repeated one suffixed), announced as such; taken
                # again by `parse_conversation`, a kept id stays as it is.
                call_id = self.ids.take(call_id, self.conversation_id, index)
            entry = self.entries[index] = {
                "type": "function.call",
                "tool_call_id": call_id,
                "name": name,
                "arguments": arguments,
                "model": value(event, "model"),
            }
            self.calls[index] = len(self.calls)
            return ToolCallDelta(self.calls[index], call_id, name, arguments)
        entry["arguments"] += arguments
        return ToolCallDelta(self.calls[index], arguments=arguments)

    def completion(self, model_name: str) -> Completion:
        outputs = [self.entries[i] for i in sorted(self.entries)]
        response = {
            "conversation_id": self.conversation_id,
            "outputs": outputs,
            "usage": self.usage,
        }
        completion = parse_conversation(response, model_name)
        completion.raw = self.raw
        return completion


def parse_conversation(response: Any, model_name: str) -> Completion:
    """A `ConversationResponse` as a `Completion` (its turn stamped with this API)."""
    outputs = value(response, "outputs")
    if outputs is None:
        raise ModelResponseError("mistral returned a conversation response without outputs")
    parts: list[AssistantPart] = []
    ids = CallIds(MISTRAL.call_id_prefix)
    conversation_id = value(response, "conversation_id")
    model: str | None = None
    calls = 0
    for position, entry in enumerate(outputs):
        kind = value(entry, "type")
        model = model or value(entry, "model")
        if kind == "message.output":
            parts.extend(_message_parts(value(entry, "content")))
        elif kind == "function.call":
            name = value(entry, "name")
            if not name:
                raise ModelResponseError(
                    f"mistral returned function call {position} without a name"
                )
            call_id = ids.take(value(entry, "tool_call_id"), conversation_id, position)
            arguments = arguments_text(value(entry, "arguments"))
            parts.append(ToolCallBlock(id=call_id, name=name, arguments=arguments))
            calls += 1
        elif kind == "tool.execution":
            parts.extend(_execution(entry, position))
    message = AssistantMessage(
        parts=parts,
        provider=PROVIDER,
        model=model or model_name,
        id=conversation_id,
        api=API,
    )
    return Completion(
        message=message,
        usage=_usage(value(response, "usage")),
        finish_reason="tool_calls" if calls else "stop",
        model=message.model,
        raw=response,
    )


def _message_parts(content: Any) -> list[AssistantPart]:
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    parts: list[AssistantPart] = []
    answer = Answer()
    citations: list[Citation] = []
    for chunk in content or ():
        kind = value(chunk, "type")
        if kind == "tool_reference":
            tool = value(chunk, "tool")
            state = {"tool": tool} if isinstance(tool, str) else None
            citations.append(
                Citation(url=value(chunk, "url"), title=value(chunk, "title"), provider_state=state)
            )
        else:
            answer.content([chunk])
    whole = answer.completion()
    for part in whole.message.parts:
        if isinstance(part, TextBlock):
            part.citations = citations
        parts.append(part)
    if citations and not any(isinstance(p, TextBlock) for p in parts):
        parts.append(TextBlock("", citations=citations))
    return parts


def _execution(entry: Any, position: int) -> list[AssistantPart]:
    dump = getattr(entry, "model_dump", None)
    raw: Any = dump(mode="json", by_alias=True) if callable(dump) else entry
    entry_id = value(entry, "id") or f"tool_execution_{position}"
    name = str(value(entry, "name") or "tool")
    text = value(entry, "arguments")
    try:
        arguments: Any = json.loads(text) if isinstance(text, str) and text else text
    except ValueError:
        arguments = text
    parts: list[AssistantPart] = [
        ServerToolCallBlock(
            id=entry_id, name=name, arguments=arguments, provider_state={"raw": raw}
        )
    ]
    info = value(entry, "info")
    if info:
        parts.append(ServerToolResultBlock(call_id=entry_id, name=name, content=info))
    return parts


def _usage(raw: Any) -> Usage:
    usage = Usage(requests=1)
    if raw is None:
        return usage
    usage.input_tokens = value(raw, "prompt_tokens") or 0
    usage.output_tokens = value(raw, "completion_tokens") or 0
    connectors = value(raw, "connectors")
    if isinstance(connectors, dict):
        usage.server_tool_requests = {
            str(k): v
            for k, v in cast(dict[Any, Any], connectors).items()
            if isinstance(v, int) and v
        }
    return usage
