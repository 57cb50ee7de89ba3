"""OpenAI Chat Completions (`/chat/completions`): toolwire's conversation to the wire and back.

One wire format serves OpenAI and the servers that copy it (Groq, DeepSeek, OpenRouter, Ollama,
vLLM, llama.cpp, LM Studio). Each provider's profile holds what differs between them (`ChatQuirks`
in `profile.chat`); its entry in `profiles.PROVIDERS` holds its base URL and API key. Built on the
official `openai` SDK, imported only when a model is created.

History from elsewhere (the drop rule): an assistant turn not written by this provider's Chat
Completions API (`ModelBase.owns`: another provider, or another API of the same one) keeps its text
and its tool calls (their `provider_state` is not sent); its reasoning blocks
are omitted, because another provider cannot verify them and they are not the conversation's
content; its server tool calls and results are omitted; citations are dropped and their text stays.
Tool results are always sent. A turn from the same provider also sends its reasoning back the way
the profile says: DeepSeek's `reasoning_content`, Ollama's and OpenRouter's `reasoning` field,
Groq's `<think>` tags. Chat Completions has no shape for server tool blocks, so they are never sent.

Native tools (OpenAI and Azure): Chat Completions has none, so a request carrying a native tool
spec (`web_search()`, ...) goes through the provider's Responses API by itself, on the same client
and credentials (`responses_model()`), and its turn says so (`message.api == "responses"`);
requests without one stay on Chat Completions. Each API replays only the state it wrote (the drop
rule above, and the Responses adapter's), so one conversation can move between them.
`native_tools_via_responses=False` refuses native tools instead, before any request.

Tool results: a tool message is text only, so the images (and wav/mp3 audio) a tool returned follow
in a user turn, and other media stay described in the text. Chat Completions has no `is_error`: a
failed call's text starts with "Error:". An empty result is sent as "(no output)"; call ids longer
than OpenAI accepts (40 characters) are shortened the same way in the call and its result.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._reach import cannot_reach, request_url
from ..errors import (
    ModelConnectionError,
    ModelError,
    ModelResponseError,
    ModelStreamError,
    UnsupportedError,
)
from ..messages import (
    AssistantMessage,
    AssistantPart,
    FilePart,
    Message,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..native import NativeTool
from ..output import prompt_instructions
from ..results import AudioPart, ImagePart, ResourcePart, TextPart
from ..tools import ToolDefinition
from ._cache import CachePolicy, leading_instructions, openai_cache_fields
from ._client import OwnsClient, http_error, openai_clients
from ._content_filter import filtered_categories
from ._openai_chat_parse import (
    REASONING_FIELDS,
    Answer,
    StreamState,
    arguments_text,
    citations,
    get,
    plain,
    usage_of,
)
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    FinishReason,
    ModelBase,
    ModelRequest,
    PreparedRequest,
    StreamEvent,
    ToolChoice,
    aclose_events,
)
from .openai_responses import OpenAIResponsesModel
from .profiles import ModelProfile, profile_for

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream

__all__ = ["ModelStreamError", "OpenAIChatModel"]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "error": "error",
}
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


class OpenAIChatModel(OwnsClient, ModelBase):
    """A model behind a Chat Completions endpoint (OpenAI's or a compatible server's).

    Args:
        model_name: The model to ask for, e.g. `"gpt-4o"`.
        provider: The provider's name, stored on every assistant turn it writes.
        api_key: The key; for `provider="openai"` it defaults to `OPENAI_API_KEY`. Other
            providers never fall back to OpenAI's key (use the presets in `providers`).
        base_url: The API root, e.g. `"https://api.groq.com/openai/v1"`.
        timeout: Seconds per request (the SDK's default when `None`); `ModelSettings.timeout`
            overrides it per request.
        max_retries: The SDK's own retries; 0 leaves retrying to the caller (`with_retry`).
        client: A ready `openai.AsyncOpenAI`; the key, URL, timeout and retries are then ignored.
        profile: The provider's profile (`toolwire.models.profiles`), its Chat Completions
            quirks in `profile.chat`; by default the one of `provider`.
        client_factory: Builds the SDK client this model owns (rebuilt for each event loop,
            closed by `aclose`), e.g. an `AsyncAzureOpenAI`; the key, URL, timeout and retries
            are then ignored.
        native_tools_via_responses: Where the profile routes native tools to the Responses API
            (OpenAI, Azure): `True` (the default) sends a request with a native tool spec there;
            `False` refuses it with `UnsupportedError`, for one API only.
        responses_factory: Builds the Responses API model those requests go through; by default
            one sharing this model's client (Azure passes one on its v1 route).
        **client_options: Passed to `openai.AsyncOpenAI` (e.g. `default_headers`, `http_client`).

    Raises:
        ValueError: no API key.
    """

    api = "chat-completions"
    dialect = "openai"

    def __init__(
        self,
        model_name: str,
        *,
        provider: str = "openai",
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int = 0,
        client: AsyncOpenAI | None = None,
        profile: ModelProfile | None = None,
        client_factory: Callable[[], AsyncOpenAI] | None = None,
        native_tools_via_responses: bool = True,
        responses_factory: Callable[[], OpenAIResponsesModel] | None = None,
        **client_options: Any,
    ) -> None:
        super().__init__(model_name, provider=provider)
        self.profile = profile or profile_for(provider, self.api)
        self.native_tools_via_responses = native_tools_via_responses
        self._responses_factory = responses_factory
        self._responses: OpenAIResponsesModel | None = None
        self._clients = openai_clients(
            provider,
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            client=client,
            client_factory=client_factory,
            client_options=client_options,
        )
        self.max_retries = self._clients.current.max_retries

    @property
    def client(self) -> AsyncOpenAI:
        """The SDK client in use."""
        return self._clients.current

    def _client(self) -> AsyncOpenAI:
        return self._clients.get()

    # -- native tools through the Responses API --------------------------------------------------

    def responses_model(self) -> OpenAIResponsesModel:
        """The Responses API model a request with native tools goes through: the same provider,
        model and credentials (built once, on this model's client unless Azure gave its own)."""
        if self._responses is None:
            if self._responses_factory is not None:
                self._responses = self._responses_factory()
            else:
                self._responses = OpenAIResponsesModel(
                    self._model_name,
                    provider=self._provider,
                    clients=self._clients,
                    content_filter_error=self.profile.chat.content_filter_error,
                )
        return self._responses

    def routes_to_responses(self, request: ModelRequest) -> bool:
        """Whether `request` goes through the Responses API: it carries a native tool spec,
        the profile routes them (`native_api`) and `native_tools_via_responses` is on."""
        specs = [t for t in request.native_tools if isinstance(t, NativeTool)]
        # A tool the Responses API lacks too stays here, to be refused under this row's name.
        return (
            bool(specs)
            and self.native_tools_via_responses
            and self.profile.native_api == "responses"
            and all(self.profile.cell(t.kind).supported for t in specs)
        )

    async def send(self, request: ModelRequest) -> Completion:
        """Ask the model; a request with native tools goes through the Responses API (OpenAI,
        Azure), whose turn records `api == "responses"`.

        Raises:
            UnsupportedError: something in the request this model cannot do (before any
                request), e.g. a native tool with `native_tools_via_responses=False`.
            ModelError: the provider failed or answered with something unusable.
        """
        if self.routes_to_responses(request):
            return await self.responses_model().send(request)
        return await super().send(request)

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """`send` as events; the last one is `CompletionDone`."""
        if self.routes_to_responses(request):
            events = self.responses_model().send_stream(request)
        else:
            events = super().send_stream(request)
        try:
            async for event in events:
                yield event
        finally:
            await aclose_events(events)

    def resolve_native_tools(self, request: ModelRequest) -> ModelRequest:
        """Raw tool payloads pass through; a native tool spec is refused here: where the
        profile routes them, `send` has sent it to the Responses API before any preparing.

        Raises:
            UnsupportedError: a native tool spec (`native_tools_via_responses=False`, or a
                request prepared on this model directly), or one the provider does not take.
        """
        specs = [t.kind for t in request.native_tools if isinstance(t, NativeTool)]
        if specs and self.profile.native_api is not None:
            if self.native_tools_via_responses:
                super().resolve_native_tools(request)  # a tool neither API has: refused by name
            named = ", ".join(f"{k}()" for k in specs)
            if not self.native_tools_via_responses:
                raise UnsupportedError(
                    f"{self._provider} Chat Completions has no native tools, and this model was "
                    f"built with native_tools_via_responses=False, so {named} is refused "
                    "rather than sent through the Responses API; use a Responses model "
                    "(openai-responses:<model>, azure(..., api='responses')) or leave the "
                    "setting on"
                )
            raise UnsupportedError(
                f"{named} goes through the Responses API: send() routes it there; prepare it "
                "on model.responses_model() to see that request"
            )
        return super().resolve_native_tools(request)

    async def aclose(self) -> None:
        """Close the HTTP clients this model built (the Responses model's too, when it has
        its own); a client passed in is left to its owner."""
        if self._responses is not None and self._responses_factory is not None:
            await self._responses.aclose()
        await super().aclose()

    # -- the Model protocol ------------------------------------------------------------------

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Ask the model once.

        Raises:
            ModelHTTPError: an HTTP error (`RetryableModelError` for 429 and 5xx).
            ModelConnectionError: no answer (connection refused, timeout).
            ModelResponseError: an answer that cannot be used (no choices, a broken payload).
            UnsupportedError: a user part the API cannot take.
        """
        kwargs = self.wire_request(request)
        try:
            response = await self._create(kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        return self._parse_response(response)

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas; the last event is the whole.

        A stream that ends before the model finished, or carries an error event, raises
        `ModelResponseError` (`ModelStreamError` for the provider's own error events).
        """
        kwargs = self.wire_request(request)
        try:
            stream: AsyncStream[Any] = await self._create(kwargs)
        except Exception as exc:
            raise self.map_error(exc) from exc
        state = StreamState(self.profile.call_id_prefix)
        try:
            async for chunk in stream:
                for event in state.feed(chunk):
                    yield event
        except Exception as exc:
            raise self.map_error(exc, streaming=state.started) from exc
        finally:
            await stream.close()
        if state.answer.finish is None:
            raise ModelResponseError(
                f"the {self._provider} stream ended before the model finished "
                "(no finish_reason); the partial answer was discarded"
            )
        yield CompletionDone(self._assemble(state.done()))

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        create: Any = self._client().chat.completions.create
        return await create(**kwargs)

    # -- the request ---------------------------------------------------------------------------

    def wire_request(self, request: PreparedRequest) -> dict[str, Any]:
        """The keyword arguments for `client.chat.completions.create`."""
        stream = request.stream
        options = request.settings
        tool_choice = request.tool_choice
        wire_tools = [_tool_definition(d) for d in request.definitions]
        extra = dict(options.extra)
        raw_tools = extra.pop("tools", None)
        if raw_tools:
            # Raw tool specs (e.g. OpenRouter's `openrouter:web_search`) join the function tools.
            wire_tools.extend(raw_tools)
        wire_tools.extend(request.native_tools)
        kwargs: dict[str, Any] = {
            "model": self._model_name,
            "messages": self.wire_messages(request.messages),
            "stream": stream,
        }
        if request.output is not None:
            self._structured_output(request, kwargs)
        if wire_tools:
            kwargs["tools"] = wire_tools
            if request.tools or tool_choice != "auto":
                kwargs["tool_choice"] = _tool_choice(tool_choice, wire_tools)
            if options.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = options.parallel_tool_calls
        if stream and self.profile.chat.stream_usage:
            kwargs["stream_options"] = {"include_usage": True}
        if options.max_tokens is not None:
            kwargs[self.profile.chat.max_tokens_field] = options.max_tokens
        for name in ("temperature", "top_p", "stop", "seed"):
            value = getattr(options, name)
            if value is not None:
                kwargs[name] = value
        if options.timeout is not None:
            kwargs["timeout"] = options.timeout
        prefix = (self._model_name, leading_instructions(kwargs["messages"]), wire_tools)
        cache = openai_cache_fields(
            kwargs, CachePolicy.coerce(options.cache), self.provider, prefix
        )
        extra = {**cache, **extra}  # the caller's own fields win
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def _structured_output(self, request: PreparedRequest, kwargs: dict[str, Any]) -> None:
        output, definition = request.output, request.output_definition
        assert output is not None and definition is not None
        if self.profile.structured_output == "json_object":
            # JSON mode checks only that the answer is JSON: the schema goes in the instructions.
            note = {"role": self.profile.chat.system_role, "content": prompt_instructions(output)}
            kwargs["messages"] = [note, *kwargs["messages"]]
            kwargs["response_format"] = {"type": "json_object"}
            return
        schema: dict[str, Any] = {"name": definition.name, "schema": definition.parameters}
        if output.description:
            schema["description"] = output.description
        if definition.strict:
            schema["strict"] = True
        kwargs["response_format"] = {"type": "json_schema", "json_schema": schema}

    def wire_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The history as Chat Completions messages, following the drop rule."""
        out: list[dict[str, Any]] = []
        media: list[dict[str, Any]] = []
        for message in messages:
            if media and not isinstance(message, ToolResultMessage):
                out.append({"role": "user", "content": media})
                media = []
            if isinstance(message, SystemMessage):
                out.append({"role": self.profile.chat.system_role, "content": message.text})
            elif isinstance(message, UserMessage):
                out.append({"role": "user", "content": self._user_content(message)})
            elif isinstance(message, AssistantMessage):
                out.append(self._assistant(message))
            else:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": _wire_id(message.call_id),
                        "content": _tool_text(message),
                    }
                )
                media.extend(self._tool_media(message))
        if media:
            out.append({"role": "user", "content": media})
        return out

    def _user_content(self, message: UserMessage) -> str | list[dict[str, Any]]:
        parts = message.content
        if len(parts) == 1 and isinstance(parts[0], TextPart):
            return parts[0].text
        return [self._user_part(part) for part in parts]

    def _user_part(self, part: TextPart | ImagePart | AudioPart | FilePart) -> dict[str, Any]:
        if isinstance(part, TextPart):
            return {"type": "text", "text": part.text}
        if not self.profile.chat.media:
            raise UnsupportedError(
                f"{self._provider} Chat Completions takes text only, not {part.kind} parts"
            )
        if isinstance(part, ImagePart):
            url = part.url if part.data is None else _data_url(part.mime_type, part.data)
            return {"type": "image_url", "image_url": {"url": url}}
        if isinstance(part, AudioPart):
            fmt = _AUDIO_FORMATS.get(part.mime_type)
            if fmt is None:
                raise UnsupportedError(
                    f"Chat Completions takes wav or mp3 audio, not {part.mime_type!r}"
                )
            data = base64.b64encode(part.data).decode()
            return {"type": "input_audio", "input_audio": {"data": data, "format": fmt}}
        if part.data is None:
            if not self.profile.chat.file_urls:
                raise UnsupportedError(
                    f"{self._provider} Chat Completions cannot fetch a file from a URL "
                    f"({part.url}); pass the file's bytes instead"
                )
            file_data = part.url
        else:
            file_data = _data_url(part.mime_type, part.data)
        file: dict[str, Any] = {"file_data": file_data}
        file["filename"] = part.filename or _default_filename(part.mime_type)
        return {"type": "file", "file": file}

    def _tool_media(self, message: ToolResultMessage) -> list[dict[str, Any]]:
        # Tool messages carry text only; images and audio a tool returned follow as a user turn.
        # Media the API cannot read stays described in the tool message's text: one unreadable
        # part would make every later request of the conversation fail.
        parts: list[dict[str, Any]] = []
        for part in message.content if self.profile.chat.media else ():
            if isinstance(part, ImagePart):
                if part.data is None or part.mime_type in _IMAGE_TYPES:
                    parts.append(self._user_part(part))
            elif isinstance(part, AudioPart):
                if part.mime_type in _AUDIO_FORMATS:
                    parts.append(self._user_part(part))
            elif (
                isinstance(part, ResourcePart)
                and part.blob is not None
                and part.mime_type is not None
                and part.mime_type in _IMAGE_TYPES
            ):
                url = _data_url(part.mime_type, part.blob)
                parts.append({"type": "image_url", "image_url": {"url": url}})
        if parts:
            label = f"Media returned by tool call {_wire_id(message.call_id)} ({message.name}):"
            parts.insert(0, {"type": "text", "text": label})
        return parts

    def _assistant(self, message: AssistantMessage) -> dict[str, Any]:
        own = self.owns(message)
        texts: list[str] = []
        reasoning: list[str] = []
        field: str | None = None
        calls: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextBlock):
                texts.append(part.text)
            elif isinstance(part, ToolCallBlock):
                function = {"name": part.name, "arguments": part.arguments}
                calls.append({"id": _wire_id(part.id), "type": "function", "function": function})
            elif isinstance(part, ReasoningBlock) and own and not part.redacted:
                reasoning.append(part.text)
                if field is None and part.provider_state:
                    field = part.provider_state.get("field")
        text = "".join(texts)
        out: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
        profile = self.profile.chat
        thought = "".join(reasoning)
        if profile.reasoning_replay == "think_tags" and thought:
            tagged = f"<think>\n{thought}\n</think>"
            out["content"] = f"{tagged}\n\n{text}" if text else tagged
        elif profile.reasoning_replay == "field" and (thought or profile.reasoning_on_every_turn):
            out[profile.reasoning_field or field or "reasoning_content"] = thought
        if own and message.provider_state:
            fields = message.provider_state.get("fields")
            if isinstance(fields, Mapping):
                out.update(fields)  # pyright: ignore[reportUnknownArgumentType]
        if calls:
            out["tool_calls"] = calls
        return out

    # -- the response --------------------------------------------------------------------------

    def _parse_response(self, response: Any) -> Completion:
        error = get(response, "error")
        if error:
            raise self._stream_error(error)
        choices = get(response, "choices")
        if not choices:
            raise ModelResponseError(f"{self._provider} returned no choices")
        message = get(choices[0], "message")
        if message is None:
            raise ModelResponseError(f"{self._provider} returned a choice without a message")
        answer = Answer(id=get(response, "id"), model=get(response, "model"), raw=response)
        answer.text = get(message, "content") or ""
        answer.refusal = get(message, "refusal") or ""
        for name in REASONING_FIELDS:
            value = get(message, name)
            if isinstance(value, str) and value:
                answer.reasoning, answer.reasoning_field = value, name
                break
        for call in get(message, "tool_calls") or ():
            function = get(call, "function")
            answer.calls.append(
                (get(call, "id"), get(function, "name"), get(function, "arguments"))
            )
        answer.annotations = [plain(a) for a in get(message, "annotations") or ()]
        answer.finish = get(choices[0], "finish_reason")
        answer.usage = get(response, "usage")
        answer.details = get(message, "reasoning_details")
        return self._assemble(answer)

    def _assemble(self, answer: Answer) -> Completion:
        parts: list[AssistantPart] = []
        if answer.reasoning:
            state = {"field": answer.reasoning_field}
            parts.append(ReasoningBlock(text=answer.reasoning, provider_state=state))
        if answer.text:
            parts.append(TextBlock(answer.text, citations=citations(answer.annotations)))
        elif answer.refusal:
            parts.append(TextBlock(answer.refusal, provider_state={"refusal": True}))
        ids = CallIds(self.profile.call_id_prefix)
        for position, (call_id, name, arguments) in enumerate(answer.calls):
            if not isinstance(name, str) or not name:
                raise ModelResponseError(
                    f"{self._provider} returned tool call {position} without a name"
                )
            # Missing or repeated ids would pair results with the wrong calls.
            call_id = ids.take(call_id, answer.id, position)
            parts.append(ToolCallBlock(id=call_id, name=name, arguments=arguments_text(arguments)))
        details = answer.details
        message = AssistantMessage(
            parts=parts,
            provider=self._provider,
            model=answer.model if isinstance(answer.model, str) else None,
            id=answer.id if isinstance(answer.id, str) else None,
            provider_state={"fields": {"reasoning_details": details}}
            if isinstance(details, list) and details
            else None,
        )
        finish = answer.finish if isinstance(answer.finish, str) else None
        if finish == "content_filter" and self.profile.chat.content_filter_error:
            raise self._filtered(answer)
        return Completion(
            message=message,
            usage=usage_of(answer.usage),
            finish_reason=_FINISH.get(finish, "other") if finish else "other",
            raw_finish_reason=finish,
            model=message.model,
            raw=answer.raw,
        )

    # -- errors --------------------------------------------------------------------------------

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for an `openai` SDK failure (`error` itself for any other)."""
        import openai

        exc = error

        provider = self._provider
        if isinstance(exc, ModelError):
            return exc
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = _provider_message(exc.body) or exc.message
            if self.profile.chat.content_filter_error:
                categories = filtered_categories(exc.body)
                if categories:
                    message = f"{message} (content filter: {', '.join(categories)})"
            return http_error(
                status,
                message,
                provider=provider,
                body=exc.body,
                headers=exc.response.headers,
                request_id=exc.request_id,
            )
        if isinstance(exc, openai.APITimeoutError):
            return ModelConnectionError(f"{provider} did not answer in time", provider=provider)
        if isinstance(exc, openai.APIConnectionError):
            if streaming:
                return ModelResponseError(f"the {provider} stream was cut: {exc.__cause__ or exc}")
            return ModelConnectionError(
                cannot_reach(provider, request_url(exc), exc), provider=provider
            )
        if isinstance(exc, openai.APIError):
            return self._stream_error(exc.body, exc.message)
        if isinstance(exc, ValueError):  # undecodable JSON in a stream or a body
            return ModelResponseError(f"{provider} sent a broken response: {exc}")
        return exc

    def _filtered(self, answer: Answer) -> ModelStreamError:
        categories = filtered_categories(answer.raw)
        named = ", ".join(categories) if categories else "no category given"
        return ModelStreamError(
            f"{self._provider}'s content filter stopped the answer ({named})",
            provider=self._provider,
            code="content_filter",
            body=answer.raw,
            failed_generation=answer.text or None,
        )

    def _stream_error(self, body: object, fallback: str | None = None) -> ModelStreamError:
        message = _provider_message(body) or fallback or "an unknown error"
        code: Any = get(body, "code")
        failed: Any = get(body, "failed_generation")
        return ModelStreamError(
            f"{self._provider} reported an error: {message}"
            + (f" (code {code})" if code is not None else ""),
            provider=self._provider,
            code=str(code) if code is not None else None,
            body=body,
            failed_generation=failed if isinstance(failed, str) else None,
        )


_MAX_ID = 40


def _wire_id(call_id: str) -> str:
    # OpenAI refuses call ids longer than 40 characters, which other providers write; a longer
    # id is shortened the same way for the call and its result, a hash keeping them apart.
    if len(call_id) <= _MAX_ID:
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:8]
    return f"{call_id[: _MAX_ID - 9]}_{digest}"


def _tool_text(message: ToolResultMessage) -> str:
    # Servers refuse empty tool messages, and Chat Completions has no `is_error`: a failed call
    # says so in its text.
    text = message.text
    if not text.strip():
        text = "The tool failed without a message." if message.is_error else "(no output)"
    if message.is_error and not text.lstrip().lower().startswith("error"):
        text = f"Error: {text}"
    return text


def _tool_definition(definition: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": definition.name,
        "description": definition.description,
        "parameters": definition.parameters,
    }
    if definition.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def _tool_choice(choice: ToolChoice, wire_tools: Sequence[Any]) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    # A function's name forces that function, whether toolwire's or a raw spec in `extra`.
    if isinstance(choice, str) and any(
        get(get(spec, "function"), "name") == choice for spec in wire_tools
    ):
        return {"type": "function", "function": {"name": choice}}
    return choice


def _data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(data).decode()}"


def _default_filename(mime_type: str) -> str:
    subtype = mime_type.rpartition("/")[2] or "bin"
    return f"file.{subtype}"


def _provider_message(body: object) -> str | None:
    if isinstance(body, str):
        return body or None
    if not isinstance(body, Mapping):
        return None
    message = get(body, "message")
    if isinstance(message, str) and message:
        return message
    error = get(body, "error")
    if isinstance(error, Mapping):
        return _provider_message(error)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(error, str) and error:
        return error
    return None
