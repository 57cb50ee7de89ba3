"""The model API: the `Model` protocol, the request values, `ModelBase` (the base every model
builds on), `Completion`, `ToolCall` and stream events.

The seam (see docs/models.md, "Writing an adapter"): every call of a model is `Model.send(request)`
(or `send_stream`) with one `ModelRequest`. `ModelBase.send` prepares it for the model once
(`prepare`: the named tool choice checked, native specs resolved, the request guard, the tool and
output definitions compiled for the model's dialect) and hands the frozen `PreparedRequest` to the
adapter's `complete_request` / `stream_request`, which build the wire request with the one hook
`wire_request`, map SDK failures with the one hook `map_error`, and parse the answer. `finish`
then stamps the turn with the provider and the wire API and checks the call-id contract.
`complete`, `stream_complete`, `parse` and `stream_parse` are friendly doors built on `send`;
wrapper models (`wrappers.py`) override only `send` and `send_stream`.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from .._attempts import Attempt
from ..errors import UnsupportedError
from ..messages import AssistantMessage, Message
from ..output import OutputType, ParseResult, PartialOutput, parse, stream_parse
from ..tools import DefinitionDialect, ToolDefinition, ToolLike
from ..usage import Usage
from ._completion import (
    CallIds,
    Completion,
    CompletionDone,
    FinishReason,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    aclose_events,
    check_call_ids,
    completion_events,
)
from ._guard import allow_model_requests, check_model_requests_allowed, forbid_model_requests
from ._matrix import resolve_native
from ._request import (
    Model,
    ModelRequest,
    ModelSettings,
    OutputMode,
    OutputSpec,
    PreparedRequest,
    ToolChoice,
    check_tool_choice,
    prepared_request,
    request_messages,
    resolve_tools,
)
from .profiles import CUSTOM, ModelProfile

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
    "PreparedRequest",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "Usage",
    "aclose_events",
    "allow_model_requests",
    "check_model_requests_allowed",
    "completion_events",
    "forbid_model_requests",
    "request_messages",
    "resolve_tools",
]


class ModelBase(abc.ABC):
    """The base of every toolwire model: adapters, the offline test models and wrappers.

    It holds the provider and model name (`provider`, `model_name`, `__repr__`), prepares each
    request once (`prepare`), and finishes each completion (provider and API stamped on the turn,
    call ids checked). An adapter implements `complete_request` and, when it can stream,
    `stream_request`; both receive the `PreparedRequest` and build the provider's request with
    `wire_request` and map its SDK's failures with `map_error`.

    Args:
        model_name: The model asked for, e.g. `"gpt-4o"`.
        provider: The provider's name: credentials, base URL, pricing, and the name stored on
            every assistant turn the model writes.

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

    def __init__(self, model_name: str, *, provider: str) -> None:
        self._model_name = model_name
        self._provider = provider

    @property
    def provider(self) -> str:
        """The provider's name: credentials, base URL and pricing (e.g. `"openai"`)."""
        return self._provider

    @property
    def model_name(self) -> str:
        """The model asked for, e.g. `"gpt-4o"`."""
        return self._model_name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model_name!r}, provider={self.provider!r})"

    # -- the Model protocol

    async def send(self, request: ModelRequest) -> Completion:
        """Ask the model for the answer to `request` (prepared here for this model).

        Raises:
            UnsupportedError: something in the request this model cannot do (checked before any
                request is sent).
            ModelRequestsForbidden: real requests are forbidden here.
            ModelError: the provider failed or answered with something unusable.
        """
        return self.finish(await self.complete_request(self.prepare(request)))

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """`send` as events; the last one is `CompletionDone` with the finished completion."""
        events = self.stream_request(self.prepare(request, stream=True))
        try:
            async for event in events:
                if isinstance(event, CompletionDone):
                    event = CompletionDone(self.finish(event.completion))
                yield event
        finally:
            # Closed here, as soon as the consumer stops, so the connection does not wait for
            # the garbage collector.
            await aclose_events(events)

    # -- the friendly doors, built on send

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

    # -- preparing a request

    def prepare(self, request: ModelRequest, *, stream: bool = False) -> PreparedRequest:
        """The request made ready for this model, once: a named `tool_choice` checked against
        the request's tools, native tool specs resolved through this model's profile, the
        request guard checked, and the tool and output definitions compiled for its dialect.

        Raises:
            UnsupportedError: a `tool_choice` naming no tool of the request, a native tool or
                option this model does not take, or a native structured answer it cannot give.
            ModelRequestsForbidden: real requests are forbidden here.
        """
        choice = request.tool_choice
        if choice != "auto":  # "auto", most requests' choice, is never refused
            check_tool_choice(request)
            if request.tools or request.native_tools:
                self.profile.check_forcing(choice, self.body_options(request))
        if request.native_tools:
            request = self.resolve_native_tools(request)
        if self.guarded:
            check_model_requests_allowed(self.provider)
        output = request.output
        if output is not None and not self.profile.native_output:
            raise UnsupportedError(
                f"{self.provider} ({self.api}) has no native structured output here; "
                "ask with mode='tool' or mode='prompted'"
            )
        dialect = self.definition_dialect()
        tools = request.tools
        definitions: list[ToolDefinition] = []
        for tool in tools:  # a loop: a comprehension builds a function on every request
            definitions.append(tool.definition(dialect))
        # Every field, in order, without the frozen class's own `__init__` (see
        # `prepared_request`): this runs on every request.
        return prepared_request(
            request.messages,
            tools,
            definitions,
            request.tool_choice,
            request.settings,
            request.native_tools,
            output,
            None if output is None else self.compile_output(output),
            stream,
        )

    def definition_dialect(self) -> DefinitionDialect:
        """The dialect this model's tool definitions are compiled for: `dialect`, unless the
        model takes strict tools in a dialect of their own (Anthropic's)."""
        return self.dialect

    def compile_output(self, output: OutputSpec) -> ToolDefinition:
        """`output` compiled for this model (for its dialect, unless an adapter knows better);
        `prepare` calls it once per request."""
        return output.definition(self.dialect)

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

    # -- finishing an answer

    def finish(self, completion: Completion) -> Completion:
        """Stamp the turn with this model's provider and API, and check its call ids."""
        message = completion.message
        if message.provider is None:
            message.provider = self.provider
        if message.api is None:
            message.api = self.api
        check_call_ids(message, self._call_label)  # the name formatted only for an error
        if not completion.attempts:
            completion.attempts = [Attempt(self.provider, self.model_name)]
        return completion

    def _call_label(self) -> str:
        return f"{self.provider} ({type(self).__name__})"

    def owns(self, message: AssistantMessage) -> bool:
        """Whether a turn was written by this provider's API, so its opaque state may go back.

        A turn without an API (histories saved before turns recorded one) is matched on the
        provider alone.
        """
        return message.provider == self.provider and message.api in (None, self.api)

    # -- what an adapter implements

    @abc.abstractmethod
    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Send the prepared request (built with `wire_request`) and parse the answer."""

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Stream the answer; by default the whole answer of `complete_request`, as events."""
        completion = await self.complete_request(request)
        for event in completion_events(completion):
            yield event

    def wire_request(self, request: PreparedRequest) -> Any:
        """The provider's request for `request`: what the SDK call or HTTP body receives.

        The one hook an adapter builds its request with, for plain and streamed calls alike
        (`request.stream` tells them apart). Also the way to see what would be sent:
        `model.wire_request(model.prepare(request))`.

        Raises:
            UnsupportedError: a part or setting the provider cannot take.
        """
        raise NotImplementedError(f"{type(self).__name__} sends no wire request")

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for a failure of the provider's SDK (`ModelError` and its
        subclasses), or `error` itself when it is not one the adapter knows.

        The one hook an adapter maps failures with, for plain and streamed calls alike.

        Args:
            error: What the SDK raised.
            streaming: The answer had begun to arrive (a cut connection is then a broken
                answer, not an unreachable provider).
        """
        return error
