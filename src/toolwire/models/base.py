"""The model API: the `Model` protocol, the request value, the base every model builds on,
`Completion`, `ToolCall` and stream events.

The seam (see docs/models.md, "writing an adapter"): `ModelBase.complete` and `stream_complete`
turn their arguments into one `ModelRequest` (settings coerced, tools resolved, prompt appended),
`send` checks the request guard, compiles the tool definitions for the model's dialect and hands the
request to the adapter's `complete_request` / `stream_request`, which only map it onto the wire and
parse the answer. `finish` then stamps the turn with the provider and the wire API and checks the
call-id contract. Wrapper models (`wrappers.py`) call `send` on the models they wrap.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Generator, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

from .._arguments import load_json_object
from ..errors import (
    ArgumentProblem,
    ModelRequestsForbidden,
    ModelResponseError,
    ToolArgumentsError,
    UnsupportedError,
)
from ..messages import (
    AssistantMessage,
    Citation,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..native import NativeTool
from ..results import error_result, to_result
from ..tools import DefinitionDialect, Tool, ToolDefinition, ToolLike
from ..usage import Usage
from ._matrix import resolve_native
from .profiles import CUSTOM, ModelProfile

if TYPE_CHECKING:
    from ..computer import ComputerCall
    from ..output import OutputType, ParseResult, PartialOutput

_T = TypeVar("_T")

__all__ = [
    "Attempt",
    "CallIds",
    "Completion",
    "CompletionDone",
    "FinishReason",
    "Model",
    "ModelBase",
    "ModelRequest",
    "ModelSettings",
    "OutputMode",
    "OutputSpec",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "Usage",
    "allow_model_requests",
    "check_model_requests_allowed",
    "forbid_model_requests",
    "request_messages",
    "resolve_tools",
]

FinishReason: TypeAlias = Literal[
    "stop", "tool_calls", "length", "content_filter", "pause", "error", "other"
]
"""Why the model stopped, normalised across providers (`raw_finish_reason` keeps the original)."""

ToolChoice: TypeAlias = "Literal['auto', 'none', 'required'] | str | Mapping[str, Any]"
"""`"auto"`, `"none"`, `"required"`, a tool's name, or any other value passed raw to the provider."""


@dataclass(slots=True)
class ToolCall:
    """A call the model asked for.

    Attributes:
        id: The call id, unique within the turn.
        name: The tool's name.
        arguments: The arguments exactly as the model wrote them (JSON text).
    """

    id: str
    name: str
    arguments: str

    @classmethod
    def from_block(cls, block: ToolCallBlock) -> ToolCall:
        return cls(id=block.id, name=block.name, arguments=block.arguments)

    @property
    def args(self) -> dict[str, Any]:
        """The arguments decoded (no schema validation; `{}` for empty arguments).

        Raises:
            ToolArgumentsError: the arguments are not a JSON object.
        """
        if not self.arguments.strip():
            return {}
        value = load_json_object(self.arguments, self.name)
        if not isinstance(value, dict):
            problem = ArgumentProblem((), "expected a JSON object of arguments")
            raise ToolArgumentsError(self.name, [problem])
        return value  # pyright: ignore[reportUnknownVariableType]

    def result(self, value: Any, is_error: bool = False) -> ToolResultMessage:
        """The tool-result item answering this call.

        `value` is anything a tool may return (text, data, parts, a `ToolResult`) or an exception.
        """
        if isinstance(value, BaseException):
            result = error_result(value)
        else:
            result = to_result(value)
            if is_error and not result.is_error:
                # A copy: a `ToolResult` the caller passed in is theirs, not to be changed.
                result = dataclasses.replace(result, is_error=True)
        return ToolResultMessage.from_result(self.id, self.name, result)


@dataclass(slots=True)
class Attempt:
    """One model asked for a completion, and what came of it.

    Attributes:
        provider: The provider asked (e.g. `"openai"`).
        model: The model asked, as named when it was built.
        error: Why the attempt failed; `None` for the attempt that answered.
        cached: The answer came from a completion cache, not from the provider.
    """

    provider: str
    model: str
    error: BaseException | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(slots=True)
class Completion:
    """One answer of a model.

    Attributes:
        message: The assistant turn with every provider state, ready for the history.
        usage: What this answer cost in tokens and requests.
        finish_reason: Why the model stopped, normalised.
        raw_finish_reason: The provider's own word for it.
        model: The model that answered, as the provider reported it.
        raw: The provider's response object(s), for what toolwire does not map.
        attempts: Every model asked for this answer, in order; the last one answered (more than
            one when a `FallbackModel` or a retry policy stepped in).
    """

    message: AssistantMessage
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    raw_finish_reason: str | None = None
    model: str | None = None
    raw: Any = None
    attempts: list[Attempt] = field(default_factory=list["Attempt"])

    @property
    def text(self) -> str:
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [ToolCall.from_block(b) for b in self.message.parts if isinstance(b, ToolCallBlock)]

    @property
    def citations(self) -> list[Citation]:
        return [c for b in self.message.parts if isinstance(b, TextBlock) for c in b.citations]

    @property
    def server_tool_calls(self) -> list[ServerToolCallBlock]:
        return [b for b in self.message.parts if isinstance(b, ServerToolCallBlock)]

    @property
    def computer_calls(self) -> list[ComputerCall]:
        """The computer-use requests of this answer, for the caller to carry out and answer."""
        from ..computer import ComputerCall, is_computer_call

        return [ComputerCall.from_block(b) for b in self.server_tool_calls if is_computer_call(b)]

    @property
    def reasoning(self) -> str:
        return "".join(b.text for b in self.message.parts if isinstance(b, ReasoningBlock))

    def assistant_message(self) -> AssistantMessage:
        """The assistant turn, with all provider state, to append to the history."""
        return self.message


# --- streaming --------------------------------------------------------------------------------


@dataclass(slots=True)
class TextDelta:
    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ReasoningDelta:
    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a tool call: `index` tells parallel calls apart; id and name come first."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(slots=True)
class CompletionDone:
    """The last event of a stream: the whole completion."""

    completion: Completion
    kind: Literal["done"] = "done"


StreamEvent: TypeAlias = TextDelta | ReasoningDelta | ToolCallDelta | CompletionDone


# --- settings and the protocol -------------------------------------------------------------


@dataclass(slots=True)
class ModelSettings:
    """Request settings common to providers; `extra` goes straight into the request body.

    `None` leaves the provider's default.
    """

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    parallel_tool_calls: bool | None = None
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def coerce(cls, value: ModelSettings | Mapping[str, Any] | None) -> ModelSettings:
        """Accept settings as this class, a plain mapping, or `None`.

        Keys of a mapping that are not fields of this class go to `extra`.
        """
        if value is None:
            return cls()
        if isinstance(value, ModelSettings):
            return value
        known = {k: v for k, v in value.items() if k in cls.__dataclass_fields__ and k != "extra"}
        extra = {k: v for k, v in value.items() if k not in cls.__dataclass_fields__}
        extra.update(value.get("extra") or {})
        return cls(**known, extra=extra)


@runtime_checkable
class Model(Protocol):
    """A model toolwire can talk to. Adapters and the offline test models implement it."""

    @property
    def provider(self) -> str:
        """The provider's name (e.g. `"openai"`); matches `AssistantMessage.provider`."""
        ...

    @property
    def model_name(self) -> str: ...

    async def complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> Completion:
        """Ask the model; `prompt=None` continues from the history alone."""
        ...

    def stream_complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Like `complete`, as events; the last one is `CompletionDone`."""
        ...


# --- the request value ----------------------------------------------------------------------


OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How a structured answer is asked for: the provider's own structured output, a final-answer tool,
or the schema in the instructions (see `toolwire.output`)."""


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """A structured answer asked of the model: a JSON Schema the final answer must satisfy.

    Only `native` specs reach an adapter (`ModelRequest.output`); tool and prompted modes are plain
    tools and instructions by the time a request is built.

    Attributes:
        name: A name for the schema (providers that take one show it to the model).
        schema: The JSON Schema of the answer (an object at the root).
        description: What the answer is, for the model.
        strict: Ask for the provider's strict mode; `None` uses it when the schema allows.
        mode: How the answer is asked for.
    """

    name: str
    schema: Mapping[str, Any]
    description: str | None = None
    strict: bool | None = None
    mode: OutputMode = "native"

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        """The schema compiled for `dialect`, strict when the schema allows (as tools are)."""
        from ..tools import tool

        spec = tool(parameters=dict(self.schema), name=self.name, strict=self.strict)
        return spec.definition(dialect)


@dataclass(slots=True)
class ModelRequest:
    """Everything one model call sends, built once by `ModelBase` and read by the adapter.

    Attributes:
        messages: The conversation, the prompt (if any) appended as the last user turn.
        tools: The caller's tools, resolved.
        tool_choice: `"auto"`, `"none"`, `"required"`, a tool's name or a raw provider value.
        settings: The request settings.
        definitions: `tools` compiled for the target model's dialect, in the same order (filled
            by `ModelBase.send`; empty until then).
        native_tools: Provider-side tool specifications to send beside the function tools.
        output: The structured answer asked for natively, if any.
        output_definition: `output` compiled for the target model's dialect (filled by `send`).
    """

    messages: list[Message]
    tools: list[Tool] = field(default_factory=list[Tool])
    tool_choice: ToolChoice = "auto"
    settings: ModelSettings = field(default_factory=ModelSettings)
    definitions: list[ToolDefinition] = field(default_factory=list[ToolDefinition])
    native_tools: list[Any] = field(default_factory=list[Any])
    output: OutputSpec | None = None
    output_definition: ToolDefinition | None = None

    @classmethod
    def build(
        cls,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> ModelRequest:
        """The request `complete(prompt, history=..., ...)` describes."""
        natives: list[Any] = [t for t in tools if isinstance(t, NativeTool)]
        return cls(
            messages=request_messages(prompt, history),
            tools=resolve_tools(tools),
            tool_choice=tool_choice,
            settings=ModelSettings.coerce(settings),
            native_tools=natives,
        )

    def compiled(self, dialect: DefinitionDialect) -> ModelRequest:
        """This request with its tools compiled for `dialect` (definitions are cached per tool)."""
        definitions = [t.definition(dialect) for t in self.tools]
        output = self.output.definition(dialect) if self.output is not None else None
        return dataclasses.replace(self, definitions=definitions, output_definition=output)


class CallIds:
    """The one rule for tool call ids: unique within an assistant turn, continuations included.

    Adapters take every call's id through `take` while parsing (streamed or not), so the ids the
    stream announced are the ids the turn keeps. A missing id gets one made of the prefix, the
    response id (or a random salt, so turns never share made-up ids) and the call's position; a
    repeated id gets a numeric suffix. `ModelBase.finish` checks the result.
    """

    __slots__ = ("_salt", "prefix", "seen")

    def __init__(self, prefix: str = "call") -> None:
        self.prefix = prefix
        self.seen: set[str] = set()
        self._salt: str | None = None

    def take(self, raw: object, response_id: object, position: int) -> str:
        """The id to keep for the call at `position` that the provider called `raw`."""
        if isinstance(raw, str) and raw and raw not in self.seen:
            self.seen.add(raw)
            return raw
        if isinstance(raw, str) and raw:
            base = raw
        else:
            if isinstance(response_id, str) and response_id:
                salt = response_id
            else:
                self._salt = salt = self._salt or uuid.uuid4().hex[:12]
            base = f"{self.prefix}_{salt}_{position}"
        candidate, n = base, 1
        while candidate in self.seen:
            n += 1
            candidate = f"{base}_{n}"
        self.seen.add(candidate)
        return candidate


def check_call_ids(message: AssistantMessage, who: str) -> None:
    """Enforce the call-id contract on a turn a model produced.

    Raises:
        ModelResponseError: a call without an id, or two calls sharing one.
    """
    seen: set[str] = set()
    for call in message.tool_calls:
        if not call.id or call.id in seen:
            raise ModelResponseError(
                f"{who} broke the call-id contract: "
                + (
                    f"call id {call.id!r} appears twice in one turn"
                    if call.id
                    else "a call has no id"
                )
                + " (adapters must take ids through CallIds)"
            )
        seen.add(call.id)


# --- the base -------------------------------------------------------------------------------


class ModelBase(abc.ABC):
    """The base of every toolwire model: adapters, the offline test models and wrappers.

    It builds the `ModelRequest` once (settings coerced, tools resolved), checks the request
    guard, compiles the tool definitions for `dialect`, and finishes each completion (provider
    and API stamped on the turn, call ids checked). An adapter implements `complete_request` and,
    when it can stream, `stream_request`; both receive the prepared request.

    Class attributes:
        api: The wire API spoken (`"chat-completions"`, `"messages"`, ...). With the provider it
            decides whose opaque state an adapter replays: only state written by the same API of
            the same provider.
        dialect: The schema dialect tool definitions are compiled for.
        guarded: Real requests are checked against `forbid_model_requests`; the offline test
            models are not.

    Attributes:
        profile: What the provider takes and refuses (`toolwire.models.profiles`): native tool
            cells, structured output, thinking rules, fees. An adapter sets its own (a class
            attribute, or per instance when it serves several providers).
    """

    api: ClassVar[str] = "custom"
    dialect: ClassVar[DefinitionDialect] = "openai"
    guarded: ClassVar[bool] = True
    profile: ModelProfile = CUSTOM

    @property
    @abc.abstractmethod
    def provider(self) -> str:
        """The provider's name: credentials, base URL and pricing (e.g. `"openai"`)."""

    @property
    @abc.abstractmethod
    def model_name(self) -> str:
        """The model asked for, e.g. `"gpt-4o"`."""

    # -- the Model protocol

    async def complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> Completion:
        """Ask the model once; `prompt=None` continues from the history alone."""
        request = ModelRequest.build(
            prompt, history=history, tools=tools, tool_choice=tool_choice, settings=settings
        )
        return await self.send(request)

    def stream_complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Like `complete`, as events; the last one is `CompletionDone`."""
        request = ModelRequest.build(
            prompt, history=history, tools=tools, tool_choice=tool_choice, settings=settings
        )
        return self.send_stream(request)

    async def parse(
        self,
        prompt: str | None = None,
        *,
        output_type: type[_T] | OutputType[_T] | Mapping[str, Any],
        history: Sequence[Message] = (),
        mode: OutputMode | Literal["auto"] = "auto",
        retries: int = 1,
        settings: ModelSettings | Mapping[str, Any] | None = None,
        native_tools: Sequence[Any] = (),
        tools: Sequence[ToolLike] = (),
    ) -> ParseResult[_T]:
        """Ask for an answer of type `output_type`, validated; see `toolwire.output.parse`."""
        from ..output import parse

        return await parse(
            self,
            prompt,
            output_type,
            history=history,
            mode=mode,
            retries=retries,
            settings=settings,
            native_tools=native_tools,
            tools=tools,
        )

    def stream_parse(
        self,
        prompt: str | None = None,
        *,
        output_type: type[_T] | OutputType[_T] | Mapping[str, Any],
        history: Sequence[Message] = (),
        mode: OutputMode | Literal["auto"] = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
        native_tools: Sequence[Any] = (),
        tools: Sequence[ToolLike] = (),
    ) -> AsyncIterator[PartialOutput[_T]]:
        """`parse` as partial values (lenient), the last one final (strict)."""
        from ..output import stream_parse

        return stream_parse(
            self,
            prompt,
            output_type,
            history=history,
            mode=mode,
            settings=settings,
            native_tools=native_tools,
            tools=tools,
        )

    # -- requests as values

    async def send(self, request: ModelRequest) -> Completion:
        """Send a request value (prepared here for this model) and finish the answer."""
        return self.finish(await self.complete_request(self.prepare(request)))

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """`send` as events; the last one is `CompletionDone` with the finished completion."""
        events = self.stream_request(self.prepare(request))
        try:
            async for event in events:
                if isinstance(event, CompletionDone):
                    event = CompletionDone(self.finish(event.completion))
                yield event
        finally:
            # Closed here, as soon as the consumer stops, so the connection does not wait for
            # the garbage collector.
            await aclose_events(events)

    def prepare(self, request: ModelRequest) -> ModelRequest:
        """Check the request guard, resolve native tool specs through this model's profile
        and compile the tools for this model's dialect."""
        if request.tools or request.native_tools:
            self.profile.check_forcing(request.tool_choice, self.body_options(request))
        if request.native_tools:
            request = self.resolve_native_tools(request)
        if self.guarded:
            check_model_requests_allowed(self.provider)
        if request.output is not None and not self.profile.native_output:
            raise UnsupportedError(
                f"{self.provider} ({self.api}) has no native structured output here; "
                "ask with mode='tool' or mode='prompted'"
            )
        if not request.tools and request.output is None:
            return request
        return request.compiled(self.dialect)

    def resolve_native_tools(self, request: ModelRequest) -> ModelRequest:
        """The request with its native tool specs turned into this adapter's payload, through
        the cells of its `profile`.

        Raises:
            UnsupportedError: a native tool or option this provider does not take, or a
                `tool_choice` forcing a native tool it cannot be made to use.
        """
        payload = resolve_native(
            self.profile,
            request.native_tools,
            model_name=self.model_name,
            function_tools=bool(request.tools),
            tool_choice=request.tool_choice,
            function_names=[t.name for t in request.tools],
            options=self.body_options(request),
        )
        settings = request.settings
        if payload.body:
            settings = dataclasses.replace(settings, extra={**settings.extra, **payload.body})
        tools = request.tools
        if payload.functions:
            # Tools toolwire runs for the provider (Ollama's web API): the loop knows them too.
            names = {t.name for t in tools}
            tools = [*tools, *(f for f in payload.functions if f.name not in names)]
        return dataclasses.replace(
            request,
            native_tools=payload.tools,
            settings=settings,
            tools=tools,
            tool_choice=payload.tool_choice,
        )

    def body_options(self, request: ModelRequest) -> Mapping[str, Any]:
        """The request body's fields beyond toolwire's settings (`settings.extra`, over the
        adapter's own defaults), for checks made before the request (e.g. Anthropic's thinking
        refusing a forced tool)."""
        return request.settings.extra

    def finish(self, completion: Completion) -> Completion:
        """Stamp the turn with this model's provider and API, and check its call ids."""
        message = completion.message
        if message.provider is None:
            message.provider = self.provider
        if message.api is None:
            message.api = self.api
        check_call_ids(message, f"{self.provider} ({type(self).__name__})")
        if not completion.attempts:
            completion.attempts = [Attempt(self.provider, self.model_name)]
        return completion

    def owns(self, message: AssistantMessage) -> bool:
        """Whether a turn was written by this provider's API, so its opaque state may go back.

        A turn without an API (histories saved before turns recorded one) is matched on the
        provider alone.
        """
        return message.provider == self.provider and message.api in (None, self.api)

    # -- what an adapter implements

    @abc.abstractmethod
    async def complete_request(self, request: ModelRequest) -> Completion:
        """Map the prepared request onto the wire, send it, and parse the answer."""

    async def stream_request(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream the answer; by default the whole answer of `complete_request`, as events."""
        completion = await self.complete_request(request)
        for event in completion_events(completion):
            yield event


async def aclose_events(events: AsyncIterator[Any]) -> None:
    """Close an event iterator that can be closed (async generators can)."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


def completion_events(completion: Completion) -> Iterator[StreamEvent]:
    """A whole completion as the events a stream of it would carry, `CompletionDone` last."""
    index = 0
    for part in completion.message.parts:
        if isinstance(part, TextBlock):
            for piece in _word_chunks(part.text):
                yield TextDelta(piece)
        elif isinstance(part, ReasoningBlock) and part.text:
            yield ReasoningDelta(part.text)
        elif isinstance(part, ToolCallBlock):
            yield ToolCallDelta(index=index, id=part.id, name=part.name)
            arguments = part.arguments
            for start in range(0, len(arguments), 8):
                yield ToolCallDelta(index=index, arguments=arguments[start : start + 8])
            index += 1
    yield CompletionDone(completion)


def _word_chunks(text: str) -> list[str]:
    pieces: list[str] = []
    for word in text.split(" "):
        pieces.append(word if not pieces else " " + word)
    return [p for p in pieces if p]


def request_messages(prompt: str | None, history: Sequence[Message]) -> list[Message]:
    """The conversation to send: the history, then the prompt as a user turn when given."""
    messages = list(history)
    if prompt is not None:
        messages.append(UserMessage.of(prompt))
    return messages


def resolve_tools(tools: Sequence[ToolLike]) -> list[Tool]:
    """The function tools among `tools`, resolved (native tool specs are left out)."""
    from ..tools import as_tool

    return [as_tool(t) for t in tools if not isinstance(t, NativeTool)]


# --- the request guard ------------------------------------------------------------------------

_ALLOWED: ContextVar[bool | None] = ContextVar("toolwire_model_requests_allowed", default=None)
_ENV = "TOOLWIRE_ALLOW_MODEL_REQUESTS"


@contextlib.contextmanager
def forbid_model_requests() -> Generator[None]:
    """Make every real provider request in this context raise `ModelRequestsForbidden`.

    For test suites: the offline test models keep working. The environment variable
    `TOOLWIRE_ALLOW_MODEL_REQUESTS=0` does the same for a whole process.
    """
    token = _ALLOWED.set(False)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


@contextlib.contextmanager
def allow_model_requests() -> Generator[None]:
    """Allow provider requests in this context, whatever the environment says."""
    token = _ALLOWED.set(True)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def check_model_requests_allowed(provider: str) -> None:
    """Called by every adapter before it sends a request.

    Raises:
        ModelRequestsForbidden: requests are forbidden here.
    """
    allowed = _ALLOWED.get()
    if allowed is None:
        allowed = os.environ.get(_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    if not allowed:
        raise ModelRequestsForbidden(
            f"A request to {provider} was blocked: model requests are forbidden here "
            f"(forbid_model_requests() or {_ENV}=0). Use toolwire's offline test models, "
            "or wrap the code in allow_model_requests()."
        )
