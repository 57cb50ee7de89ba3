"""Mistral's chat API (`mistral:<model>`), built on the official `mistralai` SDK.

The SDK carries the requests (credentials, server URL, timeouts, HTTP errors) and types the
answers; toolwire maps its conversation onto Mistral's messages and reads the typed answers back.
Mistral speaks a dialect of Chat Completions of its own (`api = "mistral-chat"`): tool choice
`"any"` forces a call, call ids are nine letters and digits, reasoning models answer with
`thinking` content chunks, and cache hits are reported as `num_cached_tokens`.

Mapping:
- System messages are `system` messages; user turns carry text, images (by URL or bytes) and
  documents by URL; tool results are `tool` messages of text (Mistral has no `is_error`: a failed
  call's text starts with "Error:"; other media are described in the text).
- Tool choice: `"auto"`, `"none"`, `"required"` (sent as Mistral's `"any"`), a tool's name (sent
  as `{"type": "function", "function": {"name": ...}}`), or a raw value. Tool definitions come
  from the `openai` dialect; a strict tool is sent with `strict: true`.
- Call ids: Mistral refuses ids other than nine letters and digits, which other providers (and
  `CallIds` for a call without one) write; those are rewritten, the same way in the call and in
  its result, to nine characters derived from a hash of the original.
- `settings.extra`: `tools` holds raw tool specs appended to the function tools; every other key
  must be a parameter of the SDK's `chat.complete` (`safe_prompt`, `presence_penalty`,
  `response_format`, `reasoning_effort`, `prompt_mode`...), or `UnsupportedError` names them.
- A request carrying `native_tools` (web search, code interpreter: what only Mistral's
  Conversations API offers) goes through `MistralConversationsModel` (`mistral_conversations`).

State replayed (only to turns this API of Mistral wrote, `ModelBase.owns`): reasoning keeps its
`thinking` chunk (`provider_state["chunk"]`) and goes back in the assistant turn's content. History
from elsewhere keeps its text, tool calls and results; its reasoning and server-tool blocks are
omitted and citations dropped (their text stays).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import ModelResponseError, UnsupportedError
from ._mistral_wire import (
    PROVIDER,
    Answer,
    MistralBase,
    MistralClient,
    PendingCall,
    arguments_text,
    tool_choice,
    tool_definition,
    value,
    wire_id,
    wire_messages,
)
from .base import Completion, CompletionDone, PreparedRequest, StreamEvent, ToolCallDelta
from .mistral_conversations import MistralConversationsModel

if TYPE_CHECKING:
    from mistralai.client import Mistral

__all__ = ["PROVIDER", "MistralClient", "MistralModel", "wire_id"]


class MistralModel(MistralBase):
    """A Mistral model over its chat API.

    Args:
        model_name: The model, e.g. `"mistral-large-latest"`.
        api_key: The API key; `MISTRAL_API_KEY` when not given.
        base_url: Another server root (a proxy, a local replay server), e.g.
            `"http://127.0.0.1:8080"`; the SDK appends `/v1/...`.
        timeout: Seconds per request; `settings.timeout` overrides it per request.
        client: A ready `mistralai.client.Mistral` (the arguments above are then ignored; it stays
            the caller's to close).

    Raises:
        ValueError: no API key.
    """

    api = "mistral-chat"

    def __init__(
        self,
        model_name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        client: Mistral | None = None,
    ) -> None:
        super().__init__(
            model_name, api_key=api_key, base_url=base_url, timeout=timeout, client=client
        )
        self._conversations: MistralConversationsModel | None = None

    def conversations(self) -> MistralConversationsModel:
        """The Conversations API model sharing this model's client (for `native_tools`)."""
        if self._conversations is None:
            self._conversations = MistralConversationsModel(self._model_name, clients=self._clients)
        return self._conversations

    # -- the Model protocol ------------------------------------------------------------------

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Ask the model once.

        Raises:
            ModelHTTPError: an HTTP error (`RetryableModelError` for 429 and 5xx).
            ModelConnectionError: no answer (connection refused, timeout).
            ModelResponseError: an answer that cannot be used.
            UnsupportedError: a request Mistral cannot take (a user part, an unknown setting).
        """
        if request.native_tools:
            return await self.conversations().complete_request(request)
        kwargs = self.wire_request(request)
        try:
            response = await self._sdk().chat.complete_async(**kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        return parse_response(response)

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas, then `CompletionDone`.

        A stream that ends before the model finished raises `ModelResponseError`; an error event
        inside it raises `ModelStreamError`.
        """
        if request.native_tools:
            async for event in self.conversations().stream_request(request):
                yield event
            return
        kwargs = self.wire_request(request)
        try:
            stream = await self._sdk().chat.stream_async(**kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        state = StreamState()
        try:
            async for event in stream:
                for delta in state.feed(event.data):
                    yield delta
        except Exception as exc:
            raise self.map_error(exc, streaming=True) from exc
        finally:
            await stream.close()
        if state.answer.finish is None:
            raise ModelResponseError(
                "the mistral stream ended before the model finished (no finish_reason); "
                "the partial answer was discarded"
            )
        yield CompletionDone(state.answer.completion())

    # -- the request ---------------------------------------------------------------------------

    def wire_request(self, request: PreparedRequest) -> dict[str, Any]:
        """The keyword arguments for the SDK's `chat.complete_async`."""
        options = request.settings
        extra = dict(options.extra)
        tools = [tool_definition(d) for d in request.definitions]
        raw_tools = extra.pop("tools", None)
        if raw_tools:
            tools.extend(cast(Sequence[dict[str, Any]], raw_tools))
        kwargs: dict[str, Any] = {
            "model": self._model_name,
            "messages": wire_messages(request.messages, self.owns),
        }
        if tools:
            kwargs["tools"] = tools
            if request.tool_choice != "auto" or request.tools:
                kwargs["tool_choice"] = tool_choice(request.tool_choice)
            if options.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = options.parallel_tool_calls
        for name, wire in (
            ("max_tokens", "max_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("stop", "stop"),
            ("seed", "random_seed"),
        ):
            value = getattr(options, name)
            if value is not None:
                kwargs[wire] = value
        if options.timeout is not None:
            kwargs["timeout_ms"] = int(options.timeout * 1000)
        definition = request.output_definition
        if request.output is not None and definition is not None:
            schema: dict[str, Any] = {
                "name": definition.name,
                "schema_definition": definition.parameters,
            }
            if request.output.description:
                schema["description"] = request.output.description
            if definition.strict:
                schema["strict"] = True
            kwargs["response_format"] = {"type": "json_schema", "json_schema": schema}
        unknown = sorted(set(extra) - _chat_parameters())
        if unknown:
            raise UnsupportedError(
                f"Mistral's chat API takes no {', '.join(map(repr, unknown))}; settings.extra "
                f"accepts {', '.join(sorted(_chat_parameters()))}"
            )
        kwargs.update(extra)
        return kwargs


_NOT_BODY = frozenset({"self", "retries", "server_url", "timeout_ms", "http_headers", "stream"})


@functools.cache
def _chat_parameters() -> frozenset[str]:
    """What the installed SDK's `chat.complete` accepts (read once: SDK releases add some)."""
    from mistralai.client.chat import Chat

    return frozenset(inspect.signature(Chat.complete_async).parameters) - _NOT_BODY


def parse_response(response: Any) -> Completion:
    """A `ChatCompletionResponse` as a `Completion`."""
    choices = value(response, "choices")
    if not choices:
        raise ModelResponseError("mistral returned no choices")
    choice = choices[0]
    message = value(choice, "message")
    if message is None:
        raise ModelResponseError("mistral returned a choice without a message")
    answer = Answer(id=value(response, "id"), model=value(response, "model"), raw=response)
    answer.content(value(message, "content"))
    for call in value(message, "tool_calls") or ():
        function = value(call, "function")
        answer.calls.append(
            PendingCall(
                _real_id(value(call, "id")),
                value(function, "name") or "",
                [arguments_text(value(function, "arguments"))],
            )
        )
    answer.finish = value(choice, "finish_reason")
    answer.usage = value(response, "usage")
    return answer.completion()


def _real_id(call_id: Any) -> str | None:
    # The SDK fills a missing id with the string "null".
    return call_id if isinstance(call_id, str) and call_id and call_id != "null" else None


class StreamState:
    """Stream chunks folded into one answer; parallel calls kept apart by index and id."""

    __slots__ = ("answer", "by_index", "started")

    def __init__(self) -> None:
        self.answer = Answer(raw=[])
        self.by_index: dict[int, int] = {}
        self.started = False

    def feed(self, chunk: Any) -> list[StreamEvent]:
        answer = self.answer
        answer.raw.append(chunk)
        if not self.started:
            self.started = True
            answer.id, answer.model = value(chunk, "id"), value(chunk, "model")
        usage = value(chunk, "usage")
        if usage is not None:
            answer.usage = usage
        events: list[StreamEvent] = []
        for choice in value(chunk, "choices") or ():
            if value(choice, "index"):
                continue
            delta = value(choice, "delta")
            if delta is not None:
                events.extend(answer.content(value(delta, "content")))
                for call in value(delta, "tool_calls") or ():
                    events.append(self._call(call))
            finish = value(choice, "finish_reason")
            if finish:
                answer.finish = finish
        return events

    def _call(self, call: Any) -> ToolCallDelta:
        calls = self.answer.calls
        call_id = _real_id(value(call, "id"))
        function = value(call, "function")
        name = value(function, "name") or ""
        arguments = arguments_text(value(function, "arguments"))
        index = value(call, "index") or 0
        position = self.by_index.get(index, -1)
        current = calls[position] if position >= 0 else None
        # Mistral sends each call whole, often every one at index 0: a call with a name and an
        # id other than the current one's is a new call; anything else continues the current one.
        if current is None or (name and call_id and call_id != current.id):
            position = len(calls)
            current = PendingCall(call_id, name)
            calls.append(current)
            self.by_index[index] = position
        else:
            current.id = current.id or call_id
            current.name = current.name or name
        if arguments:
            current.arguments.append(arguments)
        # Announce the id the turn keeps (a repeated one suffixed), never the raw one.
        announced = self.answer.keep(current, position) if call_id else None
        return ToolCallDelta(position, announced, name or None, arguments)
