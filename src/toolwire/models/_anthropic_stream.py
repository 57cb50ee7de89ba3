"""Anthropic Messages responses into toolwire types: whole JSON bodies and SSE streams.

Both paths end in the same `block_part` for every content block, so a streamed response assembles
into exactly the `Completion` that the same response parsed whole would give.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any, cast

from ..errors import ModelResponseError, RetryableModelError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Citation,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ToolCallBlock,
)
from ._client import iter_sse as read_sse
from .base import (
    CallIds,
    Completion,
    FinishReason,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)

__all__ = [
    "PROVIDER",
    "StreamAssembler",
    "arguments_text",
    "block_part",
    "finish_reason",
    "iter_sse",
    "map_usage",
    "parse_message",
    "stream_error",
]

PROVIDER = "anthropic"

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "pause_turn": "pause",
    "refusal": "content_filter",
}

# In-stream error types that a later attempt may survive, with the HTTP status Anthropic gives the
# same error when it can still answer with a status line.
_RETRYABLE_STREAM_ERRORS = {
    "overloaded_error": 529,
    "api_error": 500,
    "rate_limit_error": 429,
    "timeout_error": 504,
}


def finish_reason(raw: object) -> FinishReason:
    """Anthropic's `stop_reason`, normalised; anything unknown (or missing) is `"other"`."""
    return _FINISH.get(raw, "other") if isinstance(raw, str) else "other"


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) else 0


def map_usage(usage: object) -> Usage:
    """Anthropic's usage object as a `Usage` of one request.

    Anthropic counts cache reads and writes apart from `input_tokens`; toolwire's input includes them.
    """
    if not isinstance(usage, Mapping):
        return Usage(requests=1)
    data = cast(Mapping[str, Any], usage)
    fresh = _count(data, "input_tokens")
    write = _count(data, "cache_creation_input_tokens")
    read = _count(data, "cache_read_input_tokens")
    creation = data.get("cache_creation")
    hour = (
        _count(cast(Mapping[str, Any], creation), "ephemeral_1h_input_tokens")
        if isinstance(creation, Mapping)
        else 0
    )
    details = data.get("output_tokens_details")
    reasoning = (
        _count(cast(Mapping[str, Any], details), "thinking_tokens")
        if isinstance(details, Mapping)
        else 0
    )
    servers: dict[str, int] = {}
    server = data.get("server_tool_use")
    if isinstance(server, Mapping):
        for key, value in cast(Mapping[str, Any], server).items():
            if key.endswith("_requests") and isinstance(value, int) and value:
                servers[key.removesuffix("_requests")] = value
    return Usage(
        input_tokens=fresh + write + read,
        output_tokens=_count(data, "output_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
        cache_write_1h_tokens=hour,
        reasoning_tokens=reasoning,
        requests=1,
        server_tool_requests=servers,
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _citation(raw: object, text: str) -> Citation:
    if not isinstance(raw, Mapping):
        raise ModelResponseError(f"Anthropic sent a citation that is not an object: {raw!r:.200}")
    data = cast(Mapping[str, Any], raw)
    url = data.get("url", data.get("source"))
    title = data.get("title", data.get("document_title"))
    cited = data.get("cited_text")
    # Anthropic attaches citations to a whole text block, so the cited span is the block.
    return Citation(
        url=url if isinstance(url, str) else None,
        title=title if isinstance(title, str) else None,
        cited_text=cited if isinstance(cited, str) else None,
        start_index=0,
        end_index=len(text),
        provider_state=dict(data),
    )


def arguments_text(value: object) -> str:
    """A tool_use `input` as the JSON text a `ToolCallBlock` holds."""
    if value is None:
        return "{}"
    return json.dumps(value, ensure_ascii=False)


def block_part(block: Mapping[str, Any], call_id: str) -> AssistantPart:
    """One content block as a toolwire part; `call_id` is used by `tool_use` blocks only."""
    kind = block.get("type")
    if kind == "text":
        text = _text(block.get("text"))
        raw_citations: object = block.get("citations") or []
        if not isinstance(raw_citations, list):
            raise ModelResponseError("Anthropic sent a text block whose citations are not a list")
        return TextBlock(
            text, citations=[_citation(c, text) for c in cast(list[Any], raw_citations)]
        )
    if kind == "thinking":
        return ReasoningBlock(
            text=_text(block.get("thinking")),
            provider_state={"signature": _text(block.get("signature"))},
        )
    if kind == "redacted_thinking":
        return ReasoningBlock(redacted=True, provider_state={"data": _text(block.get("data"))})
    if kind == "tool_use":
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise ModelResponseError("Anthropic sent a tool_use block without a tool name")
        caller = block.get("caller")
        state: dict[str, Any] | None = None
        # A direct call is the default; only a call made from code execution needs its caller back.
        if isinstance(caller, Mapping):
            caller = cast(Mapping[str, Any], caller)
            if caller.get("type") != "direct":
                state = {"caller": dict(caller)}
        return ToolCallBlock(
            id=call_id,
            name=name,
            arguments=arguments_text(block.get("input")),
            provider_state=state,
        )
    if kind in ("server_tool_use", "mcp_tool_use"):
        return ServerToolCallBlock(
            id=_text(block.get("id")),
            name=_text(block.get("name")),
            arguments=block.get("input"),
            provider_state={"raw": dict(block)},
        )
    content = block.get("content")
    error = isinstance(content, Mapping) and str(
        cast(Mapping[str, Any], content).get("type", "")
    ).endswith("_error")
    name = str(kind)
    if name.endswith("_tool_result"):
        name = name.removesuffix("_tool_result")
    # Result blocks (web search, web fetch, code execution, MCP...) and block types toolwire does
    # not know yet are kept whole, to be replayed exactly as they came.
    return ServerToolResultBlock(
        call_id=_text(block.get("tool_use_id")),
        name=name,
        content=content,
        is_error=error or block.get("is_error") is True,
        provider_state={"raw": dict(block)},
    )


def _completion(
    message: Mapping[str, Any], parts: list[AssistantPart], usage: object, raw: object
) -> Completion:
    stop = message.get("stop_reason")
    model = message.get("model")
    message_id = message.get("id")
    model = model if isinstance(model, str) else None
    return Completion(
        message=AssistantMessage(
            parts=parts,
            provider=PROVIDER,
            model=model,
            id=message_id if isinstance(message_id, str) else None,
        ),
        usage=map_usage(usage),
        finish_reason=finish_reason(stop),
        raw_finish_reason=stop if isinstance(stop, str) else None,
        model=model,
        raw=raw,
    )


def parse_message(data: object, ids: CallIds) -> Completion:
    """A whole (non-streamed) Messages response body."""
    if not isinstance(data, Mapping):
        raise ModelResponseError(
            f"Anthropic answered with something other than a message: {data!r:.200}"
        )
    message = cast(Mapping[str, Any], data)
    if message.get("type") == "error":
        raise stream_error(message)
    content = message.get("content")
    if not isinstance(content, list):
        raise ModelResponseError("Anthropic answered with a message without a content list")
    parts: list[AssistantPart] = []
    for position, block in enumerate(cast(list[Any], content)):
        if not isinstance(block, Mapping):
            raise ModelResponseError(
                f"Anthropic sent a content block that is not an object: {block!r:.200}"
            )
        block = cast(Mapping[str, Any], block)
        call_id = ""
        if block.get("type") == "tool_use":
            call_id = ids.take(block.get("id"), message.get("id"), position)
        parts.append(block_part(block, call_id))
    return _completion(message, parts, message.get("usage"), message)


def stream_error(data: Mapping[str, Any]) -> Exception:
    """An `error` event (or error body) as toolwire's error: retryable for overload and the like."""
    error = data.get("error")
    detail: Mapping[str, Any] = cast(Mapping[str, Any], error) if isinstance(error, Mapping) else {}
    kind = str(detail.get("type") or "error")
    message = str(detail.get("message") or "no message")
    status = _RETRYABLE_STREAM_ERRORS.get(kind)
    if status is not None:
        return RetryableModelError(status, f"{kind}: {message}", provider=PROVIDER, body=dict(data))
    return ModelResponseError(f"Anthropic reported an error in the stream ({kind}): {message}")


# --- streaming ------------------------------------------------------------------------------------


def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[dict[str, Any]]:
    """The JSON payloads of Anthropic's server-sent event stream (its body bytes), in order."""
    return read_sse(chunks, "Anthropic")


class _Open:
    """A content block being streamed."""

    __slots__ = ("call_id", "chunks", "citations", "kind", "signature", "start")

    def __init__(self, start: dict[str, Any], kind: str, call_id: str) -> None:
        self.start = start
        self.kind = kind
        self.call_id = call_id
        self.chunks: list[str] = []
        self.signature: list[str] = []
        self.citations: list[Any] = []


_DELTA_KINDS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "thinking",
    "citations_delta": "text",
}


class StreamAssembler:
    """Builds one response from its stream events, block by block (keyed by block index).

    `feed` returns the toolwire event for a payload, if any; `completion` gives the result once
    `message_stop` came, and raises `ModelResponseError` for a stream that did not finish.
    `index_offset` shifts tool-call indexes for a continuation of a paused turn.
    """

    def __init__(self, ids: CallIds, index_offset: int = 0) -> None:
        self.ids = ids
        self.index_offset = index_offset
        self.message: dict[str, Any] | None = None
        self.usage: dict[str, Any] = {}
        self.open: dict[int, _Open] = {}
        self.done: dict[int, tuple[dict[str, Any], AssistantPart]] = {}
        self.finished = False

    @property
    def block_count(self) -> int:
        return len(self.done) + len(self.open)

    def feed(self, event: dict[str, Any]) -> StreamEvent | None:
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            return self._start(event)
        if kind == "content_block_stop":
            self._stop(event)
        elif kind == "message_start":
            message = event.get("message")
            if not isinstance(message, dict) or self.message is not None:
                raise ModelResponseError("Anthropic sent a broken or repeated message_start event")
            self.message = dict(cast(dict[str, Any], message))
            usage = self.message.get("usage")
            if isinstance(usage, dict):
                self.usage.update(cast(dict[str, Any], usage))
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            if self.open:
                raise ModelResponseError(
                    f"Anthropic ended the message with content blocks still open: {sorted(self.open)}"
                )
            self.finished = True
        elif kind == "error":
            raise stream_error(event)
        # `ping` and event types added later carry nothing toolwire assembles.
        return None

    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise ModelResponseError(
                f"Anthropic sent a block event without an index: {event!r:.200}"
            )
        return index

    def _start(self, event: dict[str, Any]) -> StreamEvent | None:
        if self.message is None:
            raise ModelResponseError("Anthropic sent a content block before message_start")
        index = self._index(event)
        block = event.get("content_block")
        if not isinstance(block, dict):
            raise ModelResponseError("Anthropic sent content_block_start without a block")
        if index in self.open or index in self.done:
            raise ModelResponseError(f"Anthropic started content block {index} twice")
        start = cast(dict[str, Any], block)
        kind = str(start.get("type"))
        call_id = ""
        if kind == "tool_use":
            name = start.get("name")
            if not isinstance(name, str) or not name:
                raise ModelResponseError("Anthropic sent a tool_use block without a tool name")
            call_id = self.ids.take(start.get("id"), self.message.get("id"), index)
            self.open[index] = _Open(start, kind, call_id)
            return ToolCallDelta(index=index + self.index_offset, id=call_id, name=name)
        self.open[index] = _Open(start, kind, call_id)
        if kind == "text":
            text = start.get("text")
            if isinstance(text, str) and text:
                self.open[index].chunks.append(text)
                return TextDelta(text)
        elif kind == "thinking":
            text = start.get("thinking")
            if isinstance(text, str) and text:
                self.open[index].chunks.append(text)
                return ReasoningDelta(text)
        return None

    def _delta(self, event: dict[str, Any]) -> StreamEvent | None:
        index = self._index(event)
        block = self.open.get(index)
        if block is None:
            raise ModelResponseError(
                f"Anthropic sent a delta for content block {index}, which is not open"
            )
        delta = event.get("delta")
        if not isinstance(delta, dict):
            raise ModelResponseError("Anthropic sent content_block_delta without a delta")
        delta = cast(dict[str, Any], delta)
        kind = delta.get("type")
        if kind == "input_json_delta":
            if block.kind not in ("tool_use", "server_tool_use", "mcp_tool_use"):
                raise ModelResponseError(f"Anthropic sent tool input for a {block.kind} block")
            piece = _text(delta.get("partial_json"))
            block.chunks.append(piece)
            if block.kind == "tool_use" and piece:
                return ToolCallDelta(index=index + self.index_offset, arguments=piece)
            return None
        expected = _DELTA_KINDS.get(str(kind))
        if expected is None:
            return None
        if block.kind != expected:
            raise ModelResponseError(f"Anthropic sent a {kind} for a {block.kind} block")
        if kind == "text_delta":
            piece = _text(delta.get("text"))
            block.chunks.append(piece)
            return TextDelta(piece) if piece else None
        if kind == "thinking_delta":
            piece = _text(delta.get("thinking"))
            block.chunks.append(piece)
            return ReasoningDelta(piece) if piece else None
        if kind == "signature_delta":
            block.signature.append(_text(delta.get("signature")))
        else:
            block.citations.append(delta.get("citation"))
        return None

    def _stop(self, event: dict[str, Any]) -> None:
        index = self._index(event)
        block = self.open.pop(index, None)
        if block is None:
            raise ModelResponseError(f"Anthropic closed content block {index}, which is not open")
        final = dict(block.start)
        kind = block.kind
        if kind == "text":
            final["text"] = "".join(block.chunks)
            if block.citations:
                final["citations"] = [*(final.get("citations") or ()), *block.citations]
        elif kind == "thinking":
            final["thinking"] = "".join(block.chunks)
            final["signature"] = _text(final.get("signature")) + "".join(block.signature)
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use") and block.chunks:
            text = "".join(block.chunks)
            if text.strip():
                try:
                    final["input"] = json.loads(text)
                except ValueError:
                    if kind != "tool_use":
                        raise ModelResponseError(
                            f"Anthropic sent {kind} input that is not JSON: {text!r:.200}"
                        ) from None
                    # Kept as written: the loop answers the call with an argument error the
                    # model can read and correct.
                    part = ToolCallBlock(
                        id=block.call_id, name=str(final.get("name")), arguments=text
                    )
                    final["input"] = {}
                    self.done[index] = (final, part)
                    return
        self.done[index] = (final, block_part(final, block.call_id))

    def _message_delta(self, event: dict[str, Any]) -> None:
        if self.message is None:
            raise ModelResponseError("Anthropic sent message_delta before message_start")
        delta = event.get("delta")
        if isinstance(delta, dict):
            self.message.update(cast(dict[str, Any], delta))
        usage = event.get("usage")
        if isinstance(usage, dict):
            for key, value in cast(dict[str, Any], usage).items():
                if value is not None:
                    self.usage[key] = value

    def completion(self) -> Completion:
        """The assembled response.

        Raises:
            ModelResponseError: the stream ended before `message_stop`.
        """
        if not self.finished or self.message is None:
            raise ModelResponseError(
                "The Anthropic stream ended before message_stop: the response is incomplete"
            )
        order = sorted(self.done)
        message = self.message
        message["content"] = [self.done[i][0] for i in order]
        message["usage"] = self.usage
        return _completion(message, [self.done[i][1] for i in order], self.usage, message)
