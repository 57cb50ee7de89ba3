"""What Mistral's two adapters share (`mistral` for the chat API, `mistral_conversations` for
the Conversations API): the SDK client, the conversation's pieces on the wire, the reading of an
answer's content, usage, and the mapping of the SDK's failures.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .._reach import cannot_reach, request_url
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
    FinishReason,
    ModelBase,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolChoice,
    Usage,
)
from .profiles import MISTRAL

if TYPE_CHECKING:
    import httpx2
    from mistralai.client import Mistral

__all__ = [
    "PROVIDER",
    "Answer",
    "MistralBase",
    "MistralClient",
    "PendingCall",
    "arguments_text",
    "as_dict",
    "build_client",
    "sdk_error",
    "tool_choice",
    "tool_definition",
    "tool_text",
    "usage_of",
    "user_content",
    "value",
    "wire_id",
    "wire_messages",
]

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
        http = httpx2.AsyncClient(
            follow_redirects=True, event_hooks={"response": [_read_error_body]}
        )
        sdk = Mistral(api_key=key, server_url=server_url, async_client=http, timeout_ms=timeout_ms)
        return MistralClient(sdk, http)

    return make


async def _read_error_body(response: httpx2.Response) -> None:
    """Read an error answer whole before the SDK sees it: for a streamed request the SDK reads
    the body chunk by chunk, then asks the response for its text, which an empty body it never
    read turns into `httpx2.ResponseNotRead` instead of the HTTP error."""
    if response.status_code >= 400:
        await response.aread()


class MistralBase(OwnsClient, ModelBase):
    """What both Mistral adapters share: the SDK client (or one shared with another adapter),
    the provider, and the mapping of the SDK's failures.

    Args:
        model_name: The model, e.g. `"mistral-large-latest"`.
        api_key: The API key; `MISTRAL_API_KEY` when not given.
        base_url: Another server root (a proxy, a local replay server), e.g.
            `"http://127.0.0.1:8080"`; the SDK appends `/v1/...`.
        timeout: Seconds per request; `settings.timeout` overrides it per request.
        client: A ready `mistralai.client.Mistral` (the arguments above are then ignored; it stays
            the caller's to close).
        clients: The client holder of another Mistral adapter to share (the key, URL, timeout
            and client are then ignored, and `aclose` leaves it open).

    Raises:
        ValueError: no API key.
    """

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
        clients: LoopBoundClient[MistralClient] | None = None,
    ) -> None:
        super().__init__(model_name, provider=PROVIDER)
        self._shared = clients is not None
        if clients is not None:
            self._clients = clients
        elif client is None:
            factory = build_client(api_key, base_url, timeout)
            self._clients = LoopBoundClient(factory(), factory)
        else:
            self._clients = LoopBoundClient(MistralClient(client), None)

    @property
    def client(self) -> Mistral:
        """The SDK client in use."""
        return self._clients.current.sdk

    def _sdk(self) -> Mistral:
        return self._clients.get().sdk

    async def aclose(self) -> None:
        """Close the HTTP client this model built (not one it shares or was given)."""
        if not self._shared:
            await super().aclose()

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for a `mistralai` SDK (or HTTP) failure; `error` itself for any
        other."""
        return sdk_error(error, streaming=streaming)


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
class PendingCall:
    id: str | None
    name: str
    arguments: list[str] = field(default_factory=list[str])
    kept: str | None = None
    """The id the turn keeps (taken through the answer's `CallIds`), once known."""


def _call_ids() -> CallIds:
    return CallIds(MISTRAL.call_id_prefix)


@dataclass(slots=True)
class Answer:
    """One answer, read from a response or folded from a stream's chunks."""

    id: str | None = None
    model: str | None = None
    text: list[str] = field(default_factory=list[str])
    reasoning: list[str] = field(default_factory=list[str])
    signature: str | None = None
    calls: list[PendingCall] = field(default_factory=list[PendingCall])
    finish: str | None = None
    usage: Any = None
    raw: Any = None
    ids: CallIds = field(default_factory=_call_ids)

    def keep(self, call: PendingCall, position: int) -> str:
        """The id the turn keeps for `call`, taken once: a stream announces it as it comes."""
        if call.kept is None:
            call.kept = self.ids.take(call.id, self.id, position)
        return call.kept

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
        for position, call in enumerate(self.calls):
            if not call.name:
                raise ModelResponseError(f"mistral returned tool call {position} without a name")
            call_id = self.keep(call, position)
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
        if exc.status_code < 400:
            # A success status with a body the SDK does not take (an HTML page from a proxy).
            kind = exc.headers.get("content-type") or "no content type"
            return ModelResponseError(
                f"mistral sent a {exc.status_code} answer toolwire cannot read ({kind}): "
                f"{exc.body[:200]!r}"
            )
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
        return ModelConnectionError(
            cannot_reach(PROVIDER, request_url(exc), exc), provider=PROVIDER
        )
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
