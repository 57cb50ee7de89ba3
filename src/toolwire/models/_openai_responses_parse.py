"""Reading Responses API answers: output items to toolwire parts, usage, finish reasons, and a
stream's events folded into one answer.

Private to `openai_responses`. Everything is read from the JSON the API sent (plain dicts), so an
item or event type toolwire does not know is kept (in `Completion.raw`, and as a replayable server
tool block when it is an output item) instead of breaking the parse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from ..computer import computer_block, is_computer_call, openai_actions
from ..errors import ModelResponseError, ModelStreamError
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
    "SERVER_TOOL_USES",
    "StreamAssembler",
    "finish_of",
    "parse_response",
    "response_error",
    "usage_of",
]

SERVER_TOOL_USES = {"web_search_call": "web_search", "file_search_call": "file_search"}
"""Output items counted in `Usage.server_tool_requests` (the API reports no count of its own)."""

_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}
# What a server-side item was asked to do, and what it produced, by item type.
_CALL_FIELDS: dict[str, tuple[str, ...]] = {
    "web_search_call": ("action",),
    "file_search_call": ("queries",),
    "code_interpreter_call": ("code", "container_id"),
    "mcp_call": ("server_label", "name", "arguments"),
    "mcp_list_tools": ("server_label",),
    "mcp_approval_request": ("server_label", "name", "arguments"),
    "tool_search_call": ("arguments",),
}
_RESULT_FIELDS: dict[str, str] = {
    "file_search_call": "results",
    "code_interpreter_call": "outputs",
    "image_generation_call": "result",
    "mcp_call": "output",
    "mcp_list_tools": "tools",
    "tool_search_output": "tools",
}
_DONE = ("completed", "failed", "incomplete")


def _dict(value: Any) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def usage_of(raw: Any, output: list[Any]) -> Usage:
    """Usage of one response, server-side searches counted from its output items."""
    usage = Usage(requests=1)
    body = _dict(raw)
    usage.input_tokens = _int(body.get("input_tokens"))
    usage.output_tokens = _int(body.get("output_tokens"))
    usage.cache_read_tokens = _int(_dict(body.get("input_tokens_details")).get("cached_tokens"))
    usage.reasoning_tokens = _int(_dict(body.get("output_tokens_details")).get("reasoning_tokens"))
    for item in output:
        kind = SERVER_TOOL_USES.get(str(_dict(item).get("type")))
        if kind is not None:
            usage.server_tool_requests[kind] = usage.server_tool_requests.get(kind, 0) + 1
    return usage


def finish_of(response: Mapping[str, Any], has_calls: bool) -> tuple[FinishReason, str | None]:
    """The normalised finish reason of a response, and the raw word it was read from."""
    status = response.get("status")
    if status == "incomplete":
        reason = _str(_dict(response.get("incomplete_details")).get("reason"))
        return _INCOMPLETE.get(reason or "", "other"), reason or "incomplete"
    if status == "completed" or status is None:
        return ("tool_calls" if has_calls else "stop"), status
    return "other", status if isinstance(status, str) else None


def response_error(
    error: Any, provider: str, request_id: str | None, partial: str | None = None
) -> ModelStreamError:
    """The provider's own error object (`response.failed`, an `error` event) as an exception."""
    body = _dict(error)
    message = _str(body.get("message")) or "an unknown error"
    code = body.get("code")
    return ModelStreamError(
        f"{provider} reported an error: {message}"
        + (f" (code {code})" if code is not None else ""),
        provider=provider,
        code=str(code) if code is not None else None,
        body=error,
        failed_generation=partial or None,
        request_id=request_id,
    )


def _citation(raw: Any) -> Citation:
    note = _dict(raw)
    start, end = note.get("start_index"), note.get("end_index")
    return Citation(
        url=_str(note.get("url")),
        title=_str(note.get("title")) or _str(note.get("filename")),
        start_index=start if isinstance(start, int) else None,
        end_index=end if isinstance(end, int) else None,
        provider_state={"annotation": note},
    )


def _message_parts(item: Mapping[str, Any], parts: list[AssistantPart]) -> None:
    state: dict[str, Any] = {}
    if _str(item.get("id")):
        state["id"] = item["id"]
    if item.get("phase") is not None:
        state["phase"] = item["phase"]
    content: list[Any] = item.get("content") or []
    for piece in content:
        part = _dict(piece)
        kind = part.get("type")
        if kind == "output_text":
            notes: list[Any] = part.get("annotations") or []
            text = part.get("text")
            parts.append(
                TextBlock(
                    text if isinstance(text, str) else "",
                    citations=[_citation(n) for n in notes],
                    provider_state=dict(state) or None,
                )
            )
        elif kind == "refusal":
            refusal = part.get("refusal")
            parts.append(
                TextBlock(
                    refusal if isinstance(refusal, str) else "",
                    provider_state={**state, "refusal": True},
                )
            )


def _reasoning_text(item: Mapping[str, Any]) -> str:
    texts: list[str] = []
    for field in ("summary", "content"):
        pieces: list[Any] = item.get(field) or []
        for piece in pieces:
            text = _dict(piece).get("text")
            if isinstance(text, str) and text:
                texts.append(text)
        if texts:
            break
    return "\n\n".join(texts)


def _server_parts(item: dict[str, Any], position: int, parts: list[AssistantPart]) -> None:
    kind = str(item.get("type") or "unknown")
    name = kind.removesuffix("_call")
    item_id = _str(item.get("id")) or f"{kind}_{position}"
    fields = _CALL_FIELDS.get(kind)
    if fields is None:
        arguments = None
    elif len(fields) == 1:
        arguments = item.get(fields[0])
    else:
        arguments = {f: item[f] for f in fields if f in item}
    # The raw item rides on the call: it goes back once, whole, and carries the result too.
    parts.append(ServerToolCallBlock(item_id, name, arguments, provider_state={"item": item}))
    status = item.get("status")
    if status in _DONE or item.get("error") is not None or kind in _RESULT_FIELDS:
        if kind == "web_search_call":
            content = _dict(item.get("action")).get("sources")
        else:
            field = _RESULT_FIELDS.get(kind)
            content = item.get(field) if field else None
        failed = status == "failed" or item.get("error") is not None
        if failed and content is None:
            content = item.get("error")
        parts.append(ServerToolResultBlock(item_id, name, content, is_error=failed))


def parse_output(
    output: list[Any],
    response_id: Any,
    ids: CallIds,
    taken: Mapping[int, str] | None = None,
    provider: str = "openai",
) -> list[AssistantPart]:
    """The parts of a response's output items, in order.

    `taken` holds the call ids a stream already announced, by output index, so the turn keeps them.
    """
    parts: list[AssistantPart] = []
    position = 0
    for index, raw in enumerate(output):
        item = _dict(raw)
        kind = item.get("type")
        if kind == "message":
            _message_parts(item, parts)
        elif kind == "reasoning":
            text = _reasoning_text(item)
            redacted = not text and item.get("encrypted_content") is not None
            parts.append(ReasoningBlock(text, redacted=redacted, provider_state={"item": item}))
        elif kind == "function_call":
            name = item.get("name")
            if not isinstance(name, str) or not name:
                raise ModelResponseError(
                    f"{provider} returned function call {index} without a name"
                )
            call_id = taken.get(index) if taken else None
            if call_id is None:
                call_id = ids.take(item.get("call_id"), response_id, position)
            arguments = item.get("arguments")
            state = {"id": item["id"]} if _str(item.get("id")) else None
            parts.append(
                ToolCallBlock(
                    call_id,
                    name,
                    arguments if isinstance(arguments, str) else "{}",
                    provider_state=state,
                )
            )
            position += 1
        elif kind == "computer_call":
            call_id = _str(item.get("call_id"))
            if call_id is None:
                raise ModelResponseError(
                    f"{provider} returned computer call {index} without a call_id"
                )
            checks = [_dict(c) for c in item.get("pending_safety_checks") or ()]
            # The whole item goes back verbatim; the caller's screenshot answers its call_id.
            parts.append(
                computer_block(
                    call_id, "openai", item, openai_actions(item), {"item": item}, checks
                )
            )
        else:
            _server_parts(item, index, parts)
    return parts


def parse_response(
    response: Mapping[str, Any],
    ids: CallIds,
    *,
    provider: str,
    request_id: str | None,
    raw: Any,
    taken: Mapping[int, str] | None = None,
    output: list[Any] | None = None,
) -> Completion:
    """A whole response object as a `Completion`.

    Raises:
        ModelStreamError: the response failed, or carries an error object.
        ModelResponseError: an output item toolwire cannot use (a function call without a name),
            or an object without status and output.
    """
    if response.get("status") == "failed" or response.get("error"):
        raise response_error(response.get("error"), provider, request_id)
    found: Any = output if output is not None else response.get("output")
    if found is None:
        if response.get("status") is None:
            # Neither what a response holds nor how it ended: not a response (another API's
            # answer, a proxy's), never to be read as an empty finished turn.
            keys = ", ".join(sorted(map(str, response))[:8]) or "none"
            raise ModelResponseError(
                f"{provider} returned an object that is not a response (no status and no "
                f"output; keys: {keys})"
            )
        found = []
    if not isinstance(found, list):
        raise ModelResponseError(f"{provider} returned an output that is not a list")
    items = cast(list[Any], found)
    response_id = response.get("id")
    parts = parse_output(items, response_id, ids, taken, provider)
    has_calls = any(isinstance(p, ToolCallBlock) or is_computer_call(p) for p in parts)
    finish, raw_finish = finish_of(response, has_calls)
    model = _str(response.get("model"))
    state: dict[str, Any] | None = {"request_id": request_id} if request_id else None
    message = AssistantMessage(
        parts=parts,
        model=model,
        id=_str(response_id),
        provider_state=state,
    )
    return Completion(
        message=message,
        usage=usage_of(response.get("usage"), items),
        finish_reason=finish,
        raw_finish_reason=raw_finish,
        model=model,
        raw=raw,
    )


class StreamAssembler:
    """A Responses stream's events folded into one answer, with the deltas to show on the way.

    Every event is kept (`events`, which becomes `Completion.raw`); the ones that carry no delta
    or state (content parts opening, server tools searching, annotations, unknown types) are only
    kept.
    """

    __slots__ = (
        "_handlers",
        "calls",
        "events",
        "final",
        "ids",
        "items",
        "provider",
        "request_id",
        "response_id",
        "taken",
        "text",
    )

    def __init__(self, ids: CallIds, provider: str, request_id: str | None) -> None:
        self.ids = ids
        self.provider = provider
        self.request_id = request_id
        self.events: list[dict[str, Any]] = []
        self.items: dict[int, Any] = {}  # output index -> the finished item
        self.calls: dict[Any, int] = {}  # output index -> call position in the turn
        self.taken: dict[int, str] = {}  # output index -> the call id announced
        self.text: list[str] = []
        self.response_id: Any = None
        self.final: dict[str, Any] | None = None
        handlers: dict[str, Callable[[dict[str, Any]], StreamEvent | None]] = {
            "response.output_text.delta": self._text,
            "response.refusal.delta": self._text,
            "response.reasoning_summary_text.delta": self._reasoning,
            "response.reasoning_text.delta": self._reasoning,
            "response.reasoning_summary_part.added": self._summary_part,
            "response.output_item.added": self._added,
            "response.function_call_arguments.delta": self._arguments,
            "response.output_item.done": self._item_done,
            "response.created": self._snapshot,
            "response.in_progress": self._snapshot,
            "response.queued": self._snapshot,
            "response.completed": self._finished,
            "response.incomplete": self._finished,
            "response.failed": self._failed,
            "error": self._error,
        }
        self._handlers = handlers

    @property
    def started(self) -> bool:
        return bool(self.events)

    def feed(self, event: dict[str, Any]) -> StreamEvent | None:
        self.events.append(event)
        handler = self._handlers.get(event.get("type"))  # pyright: ignore[reportArgumentType]
        return None if handler is None else handler(event)

    def _text(self, event: dict[str, Any]) -> StreamEvent | None:
        delta = event.get("delta")
        if isinstance(delta, str) and delta:
            self.text.append(delta)
            return TextDelta(delta)
        return None

    def _reasoning(self, event: dict[str, Any]) -> StreamEvent | None:
        delta = event.get("delta")
        return ReasoningDelta(delta) if isinstance(delta, str) and delta else None

    def _summary_part(self, event: dict[str, Any]) -> StreamEvent | None:
        # The turn joins an item's summary parts with a blank line; the stream says so too.
        index = event.get("summary_index")
        return ReasoningDelta("\n\n") if isinstance(index, int) and index > 0 else None

    def _position(self, index: Any) -> int:
        position = self.calls.get(index)
        if position is None:
            position = self.calls[index] = len(self.calls)
        return position

    def _added(self, event: dict[str, Any]) -> StreamEvent | None:
        item = _dict(event.get("item"))
        if item.get("type") != "function_call":
            return None
        index = event.get("output_index")
        position = self._position(index)
        call_id = self.ids.take(item.get("call_id"), self.response_id, position)
        if isinstance(index, int):
            self.taken[index] = call_id
        name = _str(item.get("name"))
        arguments = item.get("arguments")
        return ToolCallDelta(
            position, call_id, name, arguments if isinstance(arguments, str) else ""
        )

    def _arguments(self, event: dict[str, Any]) -> StreamEvent | None:
        delta = event.get("delta")
        if not isinstance(delta, str) or not delta:
            return None
        return ToolCallDelta(self._position(event.get("output_index")), arguments=delta)

    def _item_done(self, event: dict[str, Any]) -> StreamEvent | None:
        index = event.get("output_index")
        if isinstance(index, int):
            self.items[index] = event.get("item")
        return None

    def _snapshot(self, event: dict[str, Any]) -> StreamEvent | None:
        if self.response_id is None:
            self.response_id = _dict(event.get("response")).get("id")
        return None

    def _finished(self, event: dict[str, Any]) -> StreamEvent | None:
        self.final = _dict(event.get("response"))
        return None

    def _failed(self, event: dict[str, Any]) -> StreamEvent | None:
        response = _dict(event.get("response"))
        raise response_error(
            response.get("error"), self.provider, self.request_id, "".join(self.text)
        )

    def _error(self, event: dict[str, Any]) -> StreamEvent | None:
        error = event.get("error") if isinstance(event.get("error"), dict) else event
        raise response_error(error, self.provider, self.request_id, "".join(self.text))

    def completion(self) -> Completion:
        """The whole answer, once the stream has ended.

        Raises:
            ModelResponseError: the stream ended before the response did.
        """
        final = self.final
        if final is None:
            raise ModelResponseError(
                f"the {self.provider} stream ended before the response completed "
                "(no response.completed or response.incomplete event); the partial answer "
                "was discarded"
            )
        output: list[Any] | None = None
        if not final.get("output"):
            # A terminal event without its output: the finished items (if any) are the answer;
            # the event itself says the response ended.
            output = [self.items[i] for i in sorted(self.items)]
        return parse_response(
            final,
            self.ids,
            provider=self.provider,
            request_id=self.request_id,
            raw=self.events,
            taken=self.taken,
            output=output,
        )
