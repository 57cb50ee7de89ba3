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

import base64
import functools
import hashlib
import inspect
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..errors import (
    MissingApiKeyError,
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
from ..results import AudioPart, ImagePart, TextPart
from ..tools import ToolDefinition
from ._client import LoopBoundClient, OwnsClient, http_error
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    FinishReason,
    ModelBase,
    ModelRequest,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolChoice,
    Usage,
)
from .profiles import MISTRAL

if TYPE_CHECKING:
    import httpx2
    from mistralai.client import Mistral

__all__ = ["PROVIDER", "MistralClient", "MistralModel"]

PROVIDER = "mistral"

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "length": "length",
    "model_length": "length",
    "error": "error",
}
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")


class MistralClient:
    """The SDK client and the HTTP client under it, closed together.

    Args:
        sdk: A `mistralai.client.Mistral`.
        http: The `httpx2.AsyncClient` it sends with, when this object owns it.
    """

    def __init__(self, sdk: Mistral, http: httpx2.AsyncClient | None = None) -> None:
        self.sdk = sdk
        self._http = http

    def is_closed(self) -> bool:
        return self._http is not None and self._http.is_closed

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
        sync = self.sdk.sdk_configuration.client
        if sync is not None and not self.sdk.sdk_configuration.client_supplied:
            sync.close()


def build_client(
    api_key: str | None, server_url: str | None, timeout: float | None
) -> Callable[[], MistralClient]:
    """A factory of SDK clients for the key (`MISTRAL_API_KEY` when `None`) and server."""
    try:
        import httpx2
        from mistralai.client import Mistral
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "The Mistral adapter needs the `mistralai` package: pip install 'toolwire[mistral]'"
        ) from exc
    key = api_key if api_key is not None else os.environ.get("MISTRAL_API_KEY")
    if not key:
        raise MissingApiKeyError("mistral", "MISTRAL_API_KEY")
    timeout_ms = None if timeout is None else int(timeout * 1000)

    def make() -> MistralClient:
        http = httpx2.AsyncClient(follow_redirects=True)
        sdk = Mistral(api_key=key, server_url=server_url, async_client=http, timeout_ms=timeout_ms)
        return MistralClient(sdk, http)

    return make


class MistralModel(OwnsClient, ModelBase):
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
    dialect = "openai"
    profile = MISTRAL

    def __init__(
        self,
        model_name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        client: Mistral | None = None,
    ) -> None:
        self._model_name = model_name
        if client is None:
            factory = build_client(api_key, base_url, timeout)
            self._clients = LoopBoundClient(factory(), factory)
        else:
            self._clients = LoopBoundClient(MistralClient(client), None)
        self._conversations: ModelBase | None = None

    @property
    def client(self) -> Mistral:
        """The SDK client in use."""
        return self._clients.current.sdk

    @property
    def provider(self) -> str:
        """`"mistral"`, as stored on the assistant turns this model writes."""
        return PROVIDER

    @property
    def model_name(self) -> str:
        return self._model_name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._model_name!r})"

    def _sdk(self) -> Mistral:
        return self._clients.get().sdk

    def conversations(self) -> ModelBase:
        """The Conversations API model sharing this model's client (for `native_tools`)."""
        if self._conversations is None:
            from .mistral_conversations import MistralConversationsModel

            self._conversations = MistralConversationsModel(self._model_name, clients=self._clients)
        return self._conversations

    # -- the Model protocol ------------------------------------------------------------------

    async def complete_request(self, request: ModelRequest) -> Completion:
        """Ask the model once.

        Raises:
            ModelHTTPError: an HTTP error (`RetryableModelError` for 429 and 5xx).
            ModelConnectionError: no answer (connection refused, timeout).
            ModelResponseError: an answer that cannot be used.
            UnsupportedError: a request Mistral cannot take (a user part, an unknown setting).
        """
        if request.native_tools:
            return await self.conversations().complete_request(request)
        kwargs = self.request_kwargs(request)
        try:
            response = await self._sdk().chat.complete_async(**kwargs)
        except Exception as exc:
            raise sdk_error(exc, streaming=False) from exc
        return parse_response(response)

    async def stream_request(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas, then `CompletionDone`.

        A stream that ends before the model finished raises `ModelResponseError`; an error event
        inside it raises `ModelStreamError`.
        """
        if request.native_tools:
            async for event in self.conversations().stream_request(request):
                yield event
            return
        kwargs = self.request_kwargs(request)
        try:
            stream = await self._sdk().chat.stream_async(**kwargs)
        except Exception as exc:
            raise sdk_error(exc, streaming=False) from exc
        state = StreamState()
        try:
            async for event in stream:
                for delta in state.feed(event.data):
                    yield delta
        except Exception as exc:
            raise sdk_error(exc, streaming=True) from exc
        finally:
            await stream.close()
        if state.answer.finish is None:
            raise ModelResponseError(
                "the mistral stream ended before the model finished (no finish_reason); "
                "the partial answer was discarded"
            )
        yield CompletionDone(state.answer.completion())

    # -- the request ---------------------------------------------------------------------------

    def request_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for the SDK's `chat.complete_async` (exposed for inspection)."""
        if request.tools and not request.definitions:
            request = request.compiled(self.dialect)
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
        if request.output is not None:
            definition = request.output_definition or request.output.definition(self.dialect)
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


# --- the conversation on the wire ---------------------------------------------------------------


def tool_definition(definition: ToolDefinition) -> dict[str, Any]:
    """A function tool as Mistral's `tools` entry."""
    function: dict[str, Any] = {
        "name": definition.name,
        "description": definition.description,
        "parameters": definition.parameters,
    }
    if definition.strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def tool_choice(choice: ToolChoice) -> Any:
    """toolwire's tool choice in Mistral's words (`"required"` is Mistral's `"any"`)."""
    if isinstance(choice, Mapping):
        return dict(choice)
    if choice == "required":
        return "any"
    if choice in ("auto", "none", "any"):
        return choice
    return {"type": "function", "function": {"name": choice}}


_WIRE_ID = re.compile(r"^[a-zA-Z0-9]{9}$")
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def wire_id(call_id: str) -> str:
    """A call id Mistral accepts (nine letters and digits), the same for a call and its result.

    Other ids (other providers', or made up by `CallIds`) become nine characters of a hash of the
    original, so two different ids stay different (barring a 62⁹ collision).
    """
    if _WIRE_ID.match(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    out: list[str] = []
    for _ in range(9):
        number, digit = divmod(number, 62)
        out.append(_ALPHABET[digit])
    return "".join(out)


def wire_messages(
    messages: Sequence[Message], owns: Callable[[AssistantMessage], bool]
) -> list[dict[str, Any]]:
    """The history as Mistral chat messages; `owns` tells whose reasoning may go back."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.text})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": user_content(message)})
        elif isinstance(message, AssistantMessage):
            out.append(_assistant(message, owns(message)))
        else:
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": wire_id(message.call_id),
                    "content": tool_text(message),
                }
            )
    return out


def user_content(message: UserMessage) -> str | list[dict[str, Any]]:
    """A user turn's content: its text alone, or a list of content chunks."""
    parts = message.content
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return [_user_part(p) for p in parts]


def _user_part(part: TextPart | ImagePart | AudioPart | FilePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart) or (
        isinstance(part, FilePart) and part.mime_type.startswith("image/")
    ):
        if part.data is None:
            return {"type": "image_url", "image_url": part.url}
        data = base64.b64encode(part.data).decode()
        return {"type": "image_url", "image_url": f"data:{part.mime_type};base64,{data}"}
    if isinstance(part, AudioPart):
        raise UnsupportedError("toolwire sends no audio to Mistral's chat API")
    if part.url is not None:
        document: dict[str, Any] = {"type": "document_url", "document_url": part.url}
        if part.filename:
            document["document_name"] = part.filename
        return document
    raise UnsupportedError(
        f"Mistral's chat API reads documents by URL; upload the {part.mime_type} file and pass "
        "its URL instead of its bytes"
    )


def _assistant(message: AssistantMessage, own: bool) -> dict[str, Any]:
    chunks: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextBlock):
            if part.text:
                chunks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallBlock):
            calls.append(
                {
                    "id": wire_id(part.id),
                    "type": "function",
                    "function": {"name": part.name, "arguments": part.arguments},
                    "index": len(calls),
                }
            )
        elif isinstance(part, ReasoningBlock) and own and part.provider_state:
            chunk = part.provider_state.get("chunk")
            if isinstance(chunk, Mapping):
                chunks.append(dict(cast(Mapping[str, Any], chunk)))
    out: dict[str, Any] = {"role": "assistant"}
    if any(c.get("type") != "text" for c in chunks):
        out["content"] = chunks
    elif chunks:
        out["content"] = "".join(c["text"] for c in chunks)
    elif not calls:
        out["content"] = ""
    if calls:
        out["tool_calls"] = calls
    return out


def tool_text(message: ToolResultMessage) -> str:
    """A tool result as text: never empty, a failure saying so (Mistral has no `is_error`)."""
    text = message.text
    if not text.strip():
        text = "The tool failed without a message." if message.is_error else "(no output)"
    if message.is_error and not text.lstrip().lower().startswith("error"):
        text = f"Error: {text}"
    return text


# --- the answer -------------------------------------------------------------------------------


def value(obj: Any, name: str) -> Any:
    """A field of an SDK object or a dict; `None` when absent or unset."""
    if obj is None:
        return None
    found: Any = as_dict(obj).get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return None if found is None or type(found).__name__ == "Unset" else found


@dataclass(slots=True)
class _Call:
    id: str | None
    name: str
    arguments: list[str] = field(default_factory=list[str])


@dataclass(slots=True)
class Answer:
    """One answer, read from a response or folded from a stream's chunks."""

    id: str | None = None
    model: str | None = None
    text: list[str] = field(default_factory=list[str])
    reasoning: list[str] = field(default_factory=list[str])
    signature: str | None = None
    calls: list[_Call] = field(default_factory=list[_Call])
    finish: str | None = None
    usage: Any = None
    raw: Any = None

    def content(self, content: Any) -> list[StreamEvent]:
        """Take in a message's (or a delta's) content: a string or a list of chunks."""
        if not content:
            return []
        if isinstance(content, str):
            self.text.append(content)
            return [TextDelta(content)]
        events: list[StreamEvent] = []
        for chunk in cast(list[Any], content):
            kind = value(chunk, "type")
            if kind == "text":
                text = value(chunk, "text") or ""
                if text:
                    self.text.append(text)
                    events.append(TextDelta(text))
            elif kind == "thinking":
                for piece in value(chunk, "thinking") or ():
                    text = value(piece, "text")
                    if isinstance(text, str) and text:
                        self.reasoning.append(text)
                        events.append(ReasoningDelta(text))
                self.signature = value(chunk, "signature") or self.signature
        return events

    def completion(self) -> Completion:
        """The answer as a `Completion`; call ids taken through `CallIds`."""
        parts: list[AssistantPart] = []
        if self.reasoning:
            text = "".join(self.reasoning)
            chunk: dict[str, Any] = {
                "type": "thinking",
                "thinking": [{"type": "text", "text": text}],
            }
            if self.signature:
                chunk["signature"] = self.signature
            parts.append(ReasoningBlock(text=text, provider_state={"chunk": chunk}))
        if self.text:
            parts.append(TextBlock("".join(self.text)))
        ids = CallIds(MISTRAL.call_id_prefix)
        for position, call in enumerate(self.calls):
            if not call.name:
                raise ModelResponseError(f"mistral returned tool call {position} without a name")
            call_id = ids.take(call.id, self.id, position)
            parts.append(
                ToolCallBlock(id=call_id, name=call.name, arguments="".join(call.arguments))
            )
        message = AssistantMessage(parts=parts, provider=PROVIDER, model=self.model, id=self.id)
        finish = self.finish
        return Completion(
            message=message,
            usage=usage_of(self.usage),
            finish_reason=_FINISH.get(finish, "other") if finish else "other",
            raw_finish_reason=finish,
            model=self.model,
            raw=self.raw,
        )


def arguments_text(arguments: Any) -> str:
    """Arguments as JSON text: a string as the model wrote it, an object dumped."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


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
            _Call(
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
            current = _Call(call_id, name)
            calls.append(current)
            self.by_index[index] = position
        else:
            current.id = current.id or call_id
            current.name = current.name or name
        if arguments:
            current.arguments.append(arguments)
        return ToolCallDelta(position, call_id, name or None, arguments)


def as_dict(raw: Any) -> dict[str, Any]:
    """`raw` when it is a dict, else an empty one."""
    return cast(dict[str, Any], raw) if isinstance(raw, dict) else {}


def _int(raw: Any) -> int:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else 0


def usage_of(raw: Any) -> Usage:
    """Mistral's usage: cache hits come as `num_cached_tokens` (or `prompt_tokens_details`)."""
    usage = Usage(requests=1)
    if raw is None:
        return usage
    usage.input_tokens = _int(value(raw, "prompt_tokens"))
    usage.output_tokens = _int(value(raw, "completion_tokens"))
    extra = as_dict(getattr(raw, "model_extra", None) or raw)
    cached = _int(extra.get("num_cached_tokens"))
    details = extra.get("prompt_tokens_details")
    if not cached:
        cached = _int(as_dict(details).get("cached_tokens"))
    usage.cache_read_tokens = cached
    return usage


# --- errors -------------------------------------------------------------------------------------


def sdk_error(exc: Exception, *, streaming: bool) -> Exception:
    """An exception from the SDK (or its HTTP client) as toolwire's error."""
    import httpx2
    import pydantic
    from mistralai.client import errors

    if isinstance(exc, ModelError | UnsupportedError):
        return exc
    if isinstance(exc, pydantic.ValidationError):
        # Raised while the SDK builds the request (its response errors come wrapped): nothing
        # was sent.
        return UnsupportedError(f"the mistralai SDK refused the request before sending it: {exc}")
    if isinstance(exc, errors.ResponseValidationError):
        body = as_dict(_json(exc.body))
        if streaming and isinstance(body.get("data"), dict):
            body = as_dict(body["data"])  # a stream event: the payload is under `data`
        if body.get("object") == "error" or "error" in body or "message" in body:
            return _stream_error(body)
        return ModelResponseError(f"mistral sent a response toolwire cannot read: {exc.message}")
    if isinstance(exc, errors.MistralError):
        body = _json(exc.body)
        message = _message(body) or exc.body or exc.message
        return http_error(
            exc.status_code, message, provider=PROVIDER, body=body, headers=exc.headers
        )
    if isinstance(exc, errors.NoResponseError):
        return ModelConnectionError(f"mistral gave no response: {exc}", provider=PROVIDER)
    if isinstance(exc, httpx2.TimeoutException):
        return ModelConnectionError("mistral did not answer in time", provider=PROVIDER)
    if isinstance(exc, httpx2.TransportError):
        if streaming:
            return ModelResponseError(f"the mistral stream was cut: {exc!r}")
        return ModelConnectionError(f"cannot reach mistral: {exc!r}", provider=PROVIDER)
    if isinstance(exc, ValueError | UnicodeDecodeError):
        return ModelResponseError(f"mistral sent a broken response: {exc}")
    return exc


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _message(body: Any) -> str | None:
    if isinstance(body, str):
        return body or None
    if not isinstance(body, dict):
        return None
    data = cast(dict[str, Any], body)
    for key in ("message", "detail", "error"):
        found = data.get(key)
        if isinstance(found, str) and found:
            return found
        if isinstance(found, dict):
            return _message(found)
        if isinstance(found, list) and found:
            return json.dumps(found)
    return None


def _stream_error(body: dict[str, Any]) -> ModelStreamError:
    code = body.get("code") or body.get("type")
    return ModelStreamError(
        f"mistral reported an error: {_message(body) or 'an unknown error'}"
        + (f" (code {code})" if code is not None else ""),
        provider=PROVIDER,
        code=str(code) if code is not None else None,
        body=body,
    )
