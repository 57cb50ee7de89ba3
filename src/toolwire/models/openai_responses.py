"""The OpenAI Responses API (`/responses`): toolwire's conversation to the wire and back.

Built on the official `openai` SDK (`client.responses`), imported only when a model is created. The
SDK carries the requests (credentials, base URL, headers, timeouts, HTTP errors); toolwire reads
the JSON itself, so items are kept exactly as OpenAI sent them and an unknown item or event type
never breaks a turn.

Mapping:
- System messages become `instructions` (joined by blank lines, sent on every request); user turns
  carry text, images and files; tool results are `function_call_output` items (text, with images
  and files as content parts). A failed call's output starts with "Error:" (the API has no
  `is_error`), an empty one is "(no output)".
- Function tools are sent with `strict` always stated (the API's default is strict).
  `tool_choice` takes "auto", "none", "required", a function's name or a raw object.
  `ModelSettings.extra["tools"]` and `ModelRequest.native_tools` (raw tool specs, e.g.
  `{"type": "web_search"}`) are appended to the function tools; other `extra` keys (e.g.
  `reasoning={"effort": "low", "summary": "auto"}`) go into the request body.
- Output items: `message` text parts become `TextBlock`s (item id kept; `url_citation` and file
  annotations become `Citation`s), refusals a `TextBlock` marked `{"refusal": True}`; `reasoning`
  items a `ReasoningBlock` (summary text) holding the whole item (id, summary, encrypted content);
  `function_call` items a `ToolCallBlock` (`call_id` as its id, the item id kept); `computer_call`
  items a computer-use request (`toolwire.computer`, answered by a `computer_call_output` holding
  the caller's screenshot, its safety checks acknowledged, any text after it as a user message);
  every other item
  (`web_search_call`, `file_search_call`, `code_interpreter_call`, `mcp_call`, unknown types) a
  `ServerToolCallBlock` holding the raw item, plus a `ServerToolResultBlock` with its result.

State replayed (only to this provider's Responses API, `ModelBase.owns`): reasoning items and server
tool items verbatim, message and function-call item ids, so the API pairs each reasoning item with
what followed it. Encrypted reasoning is asked for (`include: ["reasoning.encrypted_content"]`) and
`store` is false by default, so a conversation needs nothing kept on OpenAI's side. With
`previous_response_id=True` the model stores responses instead and sends only what came after its
last turn, naming that turn's id.

History from elsewhere (another provider, or OpenAI's Chat Completions): text and tool calls are
kept without state; reasoning and server tool blocks are omitted; citations dropped, text kept.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from .._reach import cannot_reach, request_url
from ..computer import ComputerCall, is_computer_call
from ..errors import (
    ModelConnectionError,
    ModelError,
    ModelResponseError,
    ModelStreamError,
    UnsupportedError,
)
from ..messages import (
    AssistantMessage,
    FilePart,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..results import AudioPart, ImagePart, ResourcePart, TextPart
from ..tools import ToolDefinition
from ._cache import CachePolicy, openai_cache_fields
from ._client import LoopBoundClient, OwnsClient, http_error, iter_sse, openai_clients
from ._content_filter import filtered_categories
from ._openai_responses_parse import StreamAssembler, parse_response
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    ModelBase,
    PreparedRequest,
    StreamEvent,
    ToolChoice,
)
from .profiles import profile_for

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["ENCRYPTED_REASONING", "OpenAIResponsesModel", "is_reasoning_model"]

ENCRYPTED_REASONING = "reasoning.encrypted_content"
"""The `include` value asking for reasoning items that can be sent back without `store`."""

_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "codex", "gpt-oss", "computer-use")
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


def is_reasoning_model(model_name: str) -> bool:
    """Whether a model name is one of OpenAI's reasoning families (o-series, gpt-5, codex...)."""
    name = model_name.lower().rpartition("/")[2]
    return name.startswith(_REASONING_PREFIXES)


class OpenAIResponsesModel(OwnsClient, ModelBase):
    """A model behind the Responses API (OpenAI's, Azure's v1, or a compatible server's).

    Args:
        model_name: The model (or Azure deployment), e.g. `"gpt-5"`.
        provider: The provider's name, stored on every assistant turn it writes.
        api_key: The key; for `provider="openai"` it defaults to `OPENAI_API_KEY`.
        base_url: The API root.
        timeout: Seconds per request; `ModelSettings.timeout` overrides it per request.
        max_retries: The SDK's own retries; 0 leaves retrying to the caller.
        client: A ready `openai.AsyncOpenAI` (or `AsyncAzureOpenAI`); the key, URL, timeout and
            retries are then ignored.
        store: The request's `store`. By default `False` (nothing kept on the provider's side),
            or `True` with `previous_response_id`.
        encrypted_reasoning: Ask for encrypted reasoning items to replay. `None` (the default)
            asks when the model name is a reasoning family (`is_reasoning_model`) or the request
            sets `reasoning`; a deployment with another name needs `True`.
        previous_response_id: Continue from the last turn this model wrote by its response id
            (the provider keeps the conversation; `store` becomes true) instead of replaying it.
        query: Query parameters added to every request (e.g. Azure's `api-version`).
        content_filter_error: A turn the provider's content filter stopped raises
            `ModelStreamError` (code `content_filter`, the filtered categories in its message, the
            partial text in `failed_generation`) instead of finishing with `content_filter`.
        client_factory: Builds the SDK client this model owns (rebuilt for each event loop,
            closed by `aclose`); the key, URL, timeout and retries are then ignored.
        clients: The client of another adapter of the same provider, shared as it is (a Chat
            Completions model sending its requests with native tools here); its owner closes it.
        **client_options: Passed to `openai.AsyncOpenAI` (e.g. `default_headers`, `http_client`).

    Raises:
        ValueError: no API key, or `previous_response_id` with `store=False`.
    """

    api = "responses"
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
        store: bool | None = None,
        encrypted_reasoning: bool | None = None,
        previous_response_id: bool = False,
        query: Mapping[str, object] | None = None,
        content_filter_error: bool = False,
        client_factory: Callable[[], AsyncOpenAI] | None = None,
        clients: LoopBoundClient[Any] | None = None,
        **client_options: Any,
    ) -> None:
        if store is None:
            store = previous_response_id
        elif previous_response_id and not store:
            raise ValueError("previous_response_id=True needs store=True: OpenAI must keep turns")
        super().__init__(model_name, provider=provider)
        self.profile = profile_for(provider, self.api)
        self.store = store
        self.encrypted_reasoning = encrypted_reasoning
        self.previous_response_id = previous_response_id
        self.query = dict(query or {})
        self.content_filter_error = content_filter_error
        self._clients = clients or openai_clients(
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

    # -- the Model protocol ------------------------------------------------------------------

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Ask the model once.

        Raises:
            ModelHTTPError: an HTTP error (`RetryableModelError` for 429 and 5xx).
            ModelConnectionError: no answer (connection refused, timeout).
            ModelStreamError: the response failed, or the content filter stopped it (with
                `content_filter_error`).
            ModelResponseError: an answer that cannot be used.
            UnsupportedError: a part or setting the API cannot take.
        """
        body = self.wire_request(request)
        resource: Any = self._clients.get().responses.with_raw_response
        try:
            response = await resource.create(**self._create_options(body, request))
            payload: bytes = response.http_response.content
        except Exception as exc:
            raise self.map_error(exc) from exc
        request_id: str | None = response.request_id
        try:
            data = json.loads(payload)
        except ValueError:
            raise ModelResponseError(
                f"{self._provider} answered with a body that is not JSON: {payload!r:.200}"
            ) from None
        if not isinstance(data, dict):
            raise ModelResponseError(f"{self._provider} answered with a body that is not an object")
        completion = parse_response(
            data,  # pyright: ignore[reportUnknownArgumentType]
            CallIds(self.profile.call_id_prefix),
            provider=self._provider,
            request_id=request_id,
            raw=data,
        )
        self._check_filter(completion, request_id)
        return completion

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas; the last event is the whole.

        A stream that ends before the response does raises `ModelResponseError`;
        `response.failed` and `error` events raise `ModelStreamError`.
        """
        import httpx2

        body = self.wire_request(request)
        resource: Any = self._clients.get().responses.with_streaming_response
        assembler: StreamAssembler | None = None
        try:
            async with resource.create(**self._create_options(body, request)) as response:
                assembler = StreamAssembler(
                    CallIds(self.profile.call_id_prefix), self._provider, response.request_id
                )
                async for event in iter_sse(response.iter_bytes(), self._provider):
                    delta = assembler.feed(event)
                    if delta is not None:
                        yield delta
        except ModelError:
            raise
        except httpx2.TransportError as exc:
            if assembler is None:
                raise self.map_error(exc) from exc
            raise ModelResponseError(f"the {self._provider} stream was cut: {exc!r}") from exc
        except Exception as exc:
            raise self.map_error(exc, streaming=assembler is not None) from exc
        completion = assembler.completion()
        self._check_filter(completion, assembler.request_id, "".join(assembler.text))
        yield CompletionDone(completion)

    def _create_options(self, body: dict[str, Any], request: PreparedRequest) -> dict[str, Any]:
        # Everything but the model and `stream` goes as the raw body, so the SDK sends items
        # exactly as toolwire (or the provider, for replayed state) wrote them.
        extra = {k: v for k, v in body.items() if k not in ("model", "stream")}
        options: dict[str, Any] = {
            "model": body["model"],
            "stream": body["stream"],
            "extra_body": extra,
        }
        if request.settings.timeout is not None:
            options["timeout"] = request.settings.timeout
        if self.query:
            options["extra_query"] = self.query
        return options

    # -- the request ---------------------------------------------------------------------------

    def wire_request(self, request: PreparedRequest) -> dict[str, Any]:
        """The JSON body of the `/responses` request.

        Raises:
            UnsupportedError: a setting the Responses API has no field for (`stop`, `seed`), an
                audio part, or a `tool_choice` naming no tool.
        """
        options = request.settings
        if options.stop:
            raise UnsupportedError("the Responses API takes no stop sequences; leave `stop` unset")
        if options.seed is not None:
            raise UnsupportedError("the Responses API takes no seed; leave `seed` unset")
        messages = request.messages
        previous: str | None = None
        if self.previous_response_id:
            previous, messages = self._continuation(messages)
        instructions = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage))
        body: dict[str, Any] = {"model": self._model_name}
        if instructions:
            body["instructions"] = instructions
        body["input"] = self.wire_input(messages, self._computer_calls(request.messages))
        if previous is not None:
            body["previous_response_id"] = previous
        body["stream"] = request.stream
        extra = dict(options.extra)
        tools: list[Any] = [_tool_definition(d) for d in request.definitions]
        raw_tools = extra.pop("tools", None)
        if raw_tools:
            tools.extend(raw_tools)
        tools.extend(request.native_tools)
        if tools:
            body["tools"] = tools
            body["tool_choice"] = _tool_choice(request.tool_choice, tools)
            if options.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = options.parallel_tool_calls
        elif request.tool_choice not in ("auto", "none"):
            raise UnsupportedError(f"tool_choice={request.tool_choice!r} but no tools were given")
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.top_p is not None:
            body["top_p"] = options.top_p
        body["store"] = self.store
        if self._wants_encrypted(extra):
            include = list(extra.pop("include", None) or [])
            if ENCRYPTED_REASONING not in include:
                include.append(ENCRYPTED_REASONING)
            body["include"] = include
        prefix = (self._model_name, instructions, tools)
        body.update(
            openai_cache_fields(body, CachePolicy.coerce(options.cache), self.provider, prefix)
        )
        body.update(extra)
        definition = request.output_definition
        if request.output is not None and definition is not None:
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "name": definition.name,
                "schema": definition.parameters,
            }
            if request.output.description:
                fmt["description"] = request.output.description
            if definition.strict:
                fmt["strict"] = True
            # `text` may already hold other settings (verbosity) from `settings.extra`.
            body["text"] = {**cast(Mapping[str, Any], body.get("text") or {}), "format": fmt}
        return body

    def _wants_encrypted(self, extra: Mapping[str, Any]) -> bool:
        if self.encrypted_reasoning is not None:
            return self.encrypted_reasoning
        return "reasoning" in extra or is_reasoning_model(self._model_name)

    def _continuation(self, messages: Sequence[Message]) -> tuple[str | None, Sequence[Message]]:
        # The provider holds everything up to this model's last turn (instructions excepted:
        # they are not carried over, so they are sent again).
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage) and self.owns(message) and message.id:
                system = [m for m in messages[:index] if isinstance(m, SystemMessage)]
                return message.id, [*system, *messages[index + 1 :]]
        return None, messages

    def _computer_calls(self, messages: Sequence[Message]) -> dict[str, ComputerCall | None]:
        """The history's computer-use requests by call id: the request when this API wrote it,
        `None` when another provider did (its request and answer are not sent)."""
        found: dict[str, ComputerCall | None] = {}
        for message in messages:
            if isinstance(message, AssistantMessage):
                own = self.owns(message)
                for part in message.parts:
                    if isinstance(part, ServerToolCallBlock) and is_computer_call(part):
                        found[part.id] = ComputerCall.from_block(part) if own else None
        return found

    def wire_input(
        self,
        messages: Sequence[Message],
        computer: Mapping[str, ComputerCall | None] | None = None,
    ) -> list[dict[str, Any]]:
        """The history as Responses input items (system messages excepted: `instructions`).

        `computer` holds the whole history's computer-use requests (`_computer_calls`), which a
        continued conversation no longer sends but whose answers it does.
        """
        if computer is None:
            computer = self._computer_calls(messages)
        out: list[dict[str, Any]] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                continue
            if isinstance(message, UserMessage):
                out.append({"role": "user", "content": _user_content(message)})
            elif isinstance(message, AssistantMessage):
                out.extend(self._assistant(message))
            elif message.call_id in computer:
                call = computer[message.call_id]
                if call is not None:
                    out.extend(_computer_output(message, call))
            else:
                out.append(_tool_output(message))
        return out

    def _assistant(self, message: AssistantMessage) -> list[dict[str, Any]]:
        own = self.owns(message)
        items: list[dict[str, Any]] = []
        texts: list[str] = []
        open_message: dict[str, Any] | None = None  # the message item text parts join
        for part in message.parts:
            if isinstance(part, TextBlock):
                state = part.provider_state or {}
                item_id = state.get("id") if own else None
                if not isinstance(item_id, str):
                    texts.append(part.text)
                    open_message = None
                    continue
                if open_message is None or open_message.get("id") != item_id:
                    open_message = {
                        "type": "message",
                        "role": "assistant",
                        "id": item_id,
                        "status": "completed",
                        "content": [],
                    }
                    if state.get("phase") is not None:
                        open_message["phase"] = state["phase"]
                    items.append(open_message)
                open_message["content"].append(_output_part(part))
                continue
            open_message = None
            if texts:
                items.append({"role": "assistant", "content": "".join(texts)})
                texts = []
            if isinstance(part, ToolCallBlock):
                call: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": part.arguments,
                }
                item_id = (part.provider_state or {}).get("id") if own else None
                if isinstance(item_id, str):
                    call["id"] = item_id
                items.append(call)
            elif own and isinstance(part, (ReasoningBlock, ServerToolCallBlock)):
                item = (part.provider_state or {}).get("item")
                if isinstance(item, Mapping):
                    items.append(dict(item))  # pyright: ignore[reportUnknownArgumentType]
            # A server tool result went back inside its call's item.
        if texts:
            items.append({"role": "assistant", "content": "".join(texts)})
        return items

    # -- errors --------------------------------------------------------------------------------

    def _check_filter(
        self, completion: Completion, request_id: str | None, partial: str | None = None
    ) -> None:
        if not self.content_filter_error or completion.finish_reason != "content_filter":
            return
        categories = filtered_categories(completion.raw)
        named = ", ".join(categories) if categories else "no category given"
        raise ModelStreamError(
            f"{self._provider}'s content filter stopped the answer ({named})",
            provider=self._provider,
            code="content_filter",
            body=completion.raw,
            failed_generation=partial if partial is not None else completion.text,
            request_id=request_id,
        )

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for an `openai` SDK failure (`error` itself for any other)."""
        import openai

        exc = error

        provider = self._provider
        if isinstance(exc, ModelError):
            return exc
        if isinstance(exc, openai.APIStatusError):
            message = _provider_message(exc.body) or exc.message
            if self.content_filter_error:
                categories = filtered_categories(exc.body)
                if categories:
                    message = f"{message} (content filter: {', '.join(categories)})"
            return http_error(
                exc.status_code,
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
        return exc


def _tool_definition(definition: ToolDefinition) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "function",
        "name": definition.name,
        "description": definition.description or None,
        "parameters": definition.parameters,
        "strict": bool(definition.strict),
    }
    if definition.defer_loading:
        entry["defer_loading"] = True  # loaded when the hosted tool_search finds it
    return entry


def _tool_choice(choice: ToolChoice, tools: Sequence[Any]) -> Any:
    if isinstance(choice, Mapping):
        return dict(choice)  # pyright: ignore[reportUnknownArgumentType]
    if choice in ("auto", "none", "required"):
        return choice
    for found in tools:
        if not isinstance(found, Mapping):
            continue
        spec = cast(Mapping[str, Any], found)
        kind = spec.get("type")
        if kind == "function" and spec.get("name") == choice:
            return {"type": "function", "name": choice}
        if kind == choice:
            return {"type": choice}
    raise UnsupportedError(f"tool_choice={choice!r} names no tool of this request")


def _output_part(part: TextBlock) -> dict[str, Any]:
    if (part.provider_state or {}).get("refusal"):
        return {"type": "refusal", "refusal": part.text}
    notes: list[Any] = []
    for cite in part.citations:
        note = (cite.provider_state or {}).get("annotation")
        if isinstance(note, Mapping):
            notes.append(note)
        elif cite.url is not None and cite.start_index is not None and cite.end_index is not None:
            notes.append(
                {
                    "type": "url_citation",
                    "url": cite.url,
                    "title": cite.title or "",
                    "start_index": cite.start_index,
                    "end_index": cite.end_index,
                }
            )
    return {"type": "output_text", "text": part.text, "annotations": notes}


def _user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    parts = message.content
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return [_user_part(p) for p in parts]


def _user_part(part: TextPart | ImagePart | AudioPart | FilePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, ImagePart):
        url = part.url if part.data is None else _data_url(part.mime_type, part.data)
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if isinstance(part, AudioPart):
        raise UnsupportedError("the Responses API takes no audio input; use Chat Completions")
    if part.data is None:
        return {"type": "input_file", "file_url": part.url}
    file: dict[str, Any] = {
        "type": "input_file",
        "file_data": _data_url(part.mime_type, part.data),
        "filename": part.filename or f"file.{part.mime_type.rpartition('/')[2] or 'bin'}",
    }
    return file


def _tool_output(message: ToolResultMessage) -> dict[str, Any]:
    text = message.text
    if not text.strip():
        text = "The tool failed without a message." if message.is_error else "(no output)"
    if message.is_error and not text.lstrip().lower().startswith("error"):
        text = f"Error: {text}"
    media: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ImagePart) and (part.data is None or part.mime_type in _IMAGE_TYPES):
            media.append(_user_part(part))
        elif isinstance(part, ResourcePart) and part.blob is not None and part.mime_type:
            if part.mime_type in _IMAGE_TYPES:
                url = _data_url(part.mime_type, part.blob)
                media.append({"type": "input_image", "image_url": url, "detail": "auto"})
            elif part.mime_type == "application/pdf":
                media.append(
                    {
                        "type": "input_file",
                        "file_data": _data_url(part.mime_type, part.blob),
                        "filename": part.uri.rpartition("/")[2] or "file.pdf",
                    }
                )
    output: str | list[dict[str, Any]] = text
    if media:
        output = [{"type": "input_text", "text": text}, *media]
    return {"type": "function_call_output", "call_id": message.call_id, "output": output}


def _computer_output(message: ToolResultMessage, call: ComputerCall) -> list[dict[str, Any]]:
    """The caller's answer to a computer call: the screenshot as `computer_call_output` (its
    safety checks acknowledged), and any text after it as a user message, since the output item
    holds an image only."""
    image = next((p for p in message.content if isinstance(p, ImagePart)), None)
    if image is None:
        raise UnsupportedError(
            f"OpenAI's computer_call_output takes a screenshot, and the answer to computer call "
            f"{call.id!r} has none; answer with the screen as it is, and the error as text"
        )
    url = image.url if image.url is not None else _data_url(image.mime_type, image.data or b"")
    item: dict[str, Any] = {
        "type": "computer_call_output",
        "call_id": call.id,
        "output": {"type": "computer_screenshot", "image_url": url},
    }
    if call.safety_checks:
        item["acknowledged_safety_checks"] = [
            {k: c[k] for k in ("id", "code", "message") if k in c} for c in call.safety_checks
        ]
    out = [item]
    text = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
    if text.strip():
        out.append({"role": "user", "content": text})
    return out


def _data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(data).decode()}"


def _provider_message(body: object) -> str | None:
    if isinstance(body, str):
        return body or None
    if not isinstance(body, Mapping):
        return None
    fields = cast(Mapping[str, Any], body)
    message = fields.get("message")
    if isinstance(message, str) and message:
        return message
    return _provider_message(fields.get("error"))
