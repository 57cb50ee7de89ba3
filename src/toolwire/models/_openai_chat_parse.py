"""Reading Chat Completions answers: a response's fields, and a stream's chunks folded into one.

Private to `openai_chat`. Fields are read leniently (`get`), so the fields a compatible server adds
(`reasoning_content`, `reasoning`, `x_groq`, OpenRouter's `annotations` in deltas) are found wherever
the SDK kept them, and a missing field is `None` rather than an exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..messages import Citation
from .base import CallIds, ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta, Usage

__all__ = [
    "REASONING_FIELDS",
    "Answer",
    "StreamState",
    "arguments_text",
    "citations",
    "get",
    "plain",
    "usage_of",
]

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where compatible servers put reasoning: DeepSeek and vLLM, then Ollama, Groq and OpenRouter."""


@dataclass(slots=True)
class Answer:
    """What one answer holds, read from a response or folded from a stream's chunks."""

    id: Any = None
    model: Any = None
    text: str = ""
    refusal: str = ""
    reasoning: str = ""
    reasoning_field: str | None = None
    annotations: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    calls: list[tuple[Any, Any, Any]] = field(default_factory=list[tuple[Any, Any, Any]])
    finish: Any = None
    usage: Any = None
    details: Any = None
    raw: Any = None


@dataclass(slots=True)
class _Call:
    id: str | None  # the id the turn keeps
    name: str | None
    position: int
    arguments: list[str] = field(default_factory=list[str])
    raw_id: str | None = None  # as the server wrote it: what tells its pieces apart


class StreamState:
    """Chunks folded into one answer; parallel calls kept apart by their index.

    Call ids are taken through `CallIds` as they arrive, so a delta announces the id the turn
    keeps (a repeated id already suffixed), and `done` makes up the ids never sent.
    """

    __slots__ = ("answer", "calls", "ids", "latest", "reasoning", "refusal", "started", "text")

    def __init__(self, call_id_prefix: str = "call") -> None:
        self.ids = CallIds(call_id_prefix)
        self.answer = Answer(raw=[])
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[object, _Call] = {}
        self.latest: dict[object, object] = {}  # a wire index -> the key of its latest call
        self.started = False

    def feed(self, chunk: Any) -> list[StreamEvent]:
        answer = self.answer
        answer.raw.append(chunk)
        if not self.started:
            self.started = True
            answer.id, answer.model = get(chunk, "id"), get(chunk, "model")
        usage = get(chunk, "usage")
        extra: dict[str, Any] | None = getattr(chunk, "model_extra", None)
        if usage is None and extra and "x_groq" in extra:
            usage = get(extra["x_groq"], "usage")  # Groq's own place for it
        if usage is not None:
            answer.usage = usage
        events: list[StreamEvent] = []
        for choice in get(chunk, "choices") or ():
            if (get(choice, "index") or 0) != 0:
                continue
            delta = get(choice, "delta")
            if delta is not None:
                self._delta(delta, events)
            finish = get(choice, "finish_reason")
            if finish:
                answer.finish = finish
        return events

    def _delta(self, delta: Any, events: list[StreamEvent]) -> None:
        content = get(delta, "content")
        if content:
            self.text.append(content)
            events.append(TextDelta(content))
        refusal = get(delta, "refusal")
        if refusal:
            self.refusal.append(refusal)
        extra: dict[str, Any] | None = getattr(delta, "model_extra", None)
        if extra:
            answer = self.answer
            for name in REASONING_FIELDS:
                piece = extra.get(name)
                if isinstance(piece, str) and piece:
                    answer.reasoning_field = answer.reasoning_field or name
                    self.reasoning.append(piece)
                    events.append(ReasoningDelta(piece))
                    break
            notes = extra.get("annotations")
            if isinstance(notes, list):
                answer.annotations.extend(plain(n) for n in notes)  # pyright: ignore[reportUnknownVariableType]
            details = extra.get("reasoning_details")
            if isinstance(details, list):
                answer.details = [*(answer.details or []), *details]  # pyright: ignore[reportUnknownArgumentType]
        for call in get(delta, "tool_calls") or ():
            self._call(call, events)

    def _call(self, call: Any, events: list[StreamEvent]) -> None:
        call_id = get(call, "id")
        index: object = get(call, "index")
        function = get(call, "function")
        name = get(function, "name")
        key: object
        if index is None:
            # No index: a new id starts a new call, anything else continues the last one.
            last = next(reversed(self.calls.values()), None)
            if last is None or (call_id and call_id != last.raw_id):
                key = ("position", len(self.calls))
            else:
                key = next(reversed(self.calls))
        else:
            key = self.latest.get(index, index)
            current = self.calls.get(key)
            # Some servers (Ollama) give every call of a parallel batch the same index: a call's
            # start (a name) with another id or another name under an index is a new call.
            if (
                current is not None
                and name
                and (
                    (call_id and current.raw_id and call_id != current.raw_id)
                    or (current.name and name != current.name)
                )
            ):
                key = ("index", index, len(self.calls))
            self.latest[index] = key
        arguments = get(function, "arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = arguments_text(arguments)
        slot = self.calls.get(key)
        if slot is None:
            slot = self.calls[key] = _Call(None, name, len(self.calls))
        else:
            slot.name = slot.name or name
        if call_id and slot.id is None:
            slot.raw_id = call_id
            slot.id = self.ids.take(call_id, self.answer.id, slot.position)
        if arguments:
            slot.arguments.append(arguments)
        announced = slot.id if call_id else None  # the kept id, never a raw repeated one
        events.append(ToolCallDelta(slot.position, announced, name or None, arguments or ""))

    def done(self) -> Answer:
        answer = self.answer
        answer.text = "".join(self.text)
        answer.refusal = "".join(self.refusal)
        answer.reasoning = "".join(self.reasoning)
        answer.calls = [
            (c.id or self.ids.take(None, answer.id, c.position), c.name, "".join(c.arguments))
            for c in self.calls.values()
        ]
        return answer


def get(obj: Any, name: str) -> Any:
    """A field of an SDK object (declared or extra) or of a plain dict; `None` when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return getattr(obj, name, None)


def plain(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)  # pyright: ignore[reportUnknownArgumentType]
    to_dict = getattr(value, "to_dict", None)
    plain: Any = to_dict() if callable(to_dict) else None
    return plain if isinstance(plain, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_of(raw: Any) -> Usage:
    usage = Usage(requests=1)
    if raw is None:
        return usage
    usage.input_tokens = _int(get(raw, "prompt_tokens"))
    usage.output_tokens = _int(get(raw, "completion_tokens"))
    prompt = get(raw, "prompt_tokens_details")
    # DeepSeek reports cache hits at the top level as well; OpenAI under the details.
    usage.cache_read_tokens = _int(get(prompt, "cached_tokens")) or _int(
        get(raw, "prompt_cache_hit_tokens")
    )
    usage.cache_write_tokens = _int(get(prompt, "cache_write_tokens"))
    usage.reasoning_tokens = _int(get(get(raw, "completion_tokens_details"), "reasoning_tokens"))
    searches = _int(get(get(raw, "server_tool_use_details"), "web_search_requests"))
    if searches:
        usage.server_tool_requests = {"web_search": searches}
    return usage


def citations(annotations: list[dict[str, Any]]) -> list[Citation]:
    out: list[Citation] = []
    for note in annotations:
        if note.get("type") != "url_citation":
            continue
        cite = note.get("url_citation")
        if not isinstance(cite, Mapping):
            continue
        body: Mapping[str, Any] = cite  # pyright: ignore[reportUnknownVariableType]
        content = body.get("content")
        out.append(
            Citation(
                url=body.get("url"),
                title=body.get("title") or None,
                cited_text=content if isinstance(content, str) else None,
                start_index=body.get("start_index"),
                end_index=body.get("end_index"),
            )
        )
    return out


def arguments_text(value: Any) -> str:
    """Arguments as JSON text: strings as the model wrote them, objects (Ollama) dumped."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
