"""The OpenTelemetry side of `toolwire.telemetry`, imported only once `instrument()` is called.

Tracing is layered on from outside, never inside an adapter: the run span wraps the loop, a
`TracedModel` wrapper makes the model-request spans, and a tool wrapper makes the tool-call spans.
Attribute names follow the OpenTelemetry semantic conventions for generative AI.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import context, metrics, trace
from opentelemetry._logs import get_logger
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ._otel_mcp import McpSpans
from .messages import (
    AssistantMessage,
    Message,
    ReasoningBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from .models.base import (
    Completion,
    CompletionDone,
    Model,
    ModelRequest,
    StreamEvent,
    aclose_events,
)
from .models.wrappers import WrapperModel, send_to, stream_to
from .tools import Tool
from .usage import Usage, estimate_cost

if TYPE_CHECKING:
    from ._config import LoopConfig
    from ._run_result import RunResult

__all__ = ["Instrumentation", "TracedModel"]

_SCOPE = "toolwire"
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_TOKEN_BUCKETS = [4.0**n for n in range(14)]
"""The conventions' advised boundaries for token counts: 1, 4, 16, ... 67108864."""
_DURATION_BUCKETS = [0.01 * 2.0**n for n in range(14)]
"""The conventions' advised boundaries for durations: 0.01, 0.02, ... 81.92 seconds."""


def _version() -> str:
    from . import __version__

    return __version__


def fail(span: Span, error: BaseException) -> None:
    """Mark `span` failed by `error`: status, `error.type` and the exception event."""
    span.set_attribute("error.type", type(error).__qualname__)
    span.set_status(Status(StatusCode.ERROR, str(error) or type(error).__name__))
    span.record_exception(error)


def _usage_attributes(usage: Usage) -> dict[str, int]:
    out = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cache_read_tokens:
        out["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        out["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        out["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
    return out


# --- message content, in the conventions' JSON shape -------------------------------------------


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextBlock):
            parts.append({"type": "text", "content": part.text})
        elif isinstance(part, ReasoningBlock) and part.text:
            parts.append({"type": "reasoning", "content": part.text})
        elif isinstance(part, ToolCallBlock):
            parts.append(
                {
                    "type": "tool_call",
                    "id": part.id,
                    "name": part.name,
                    "arguments": _json_or_text(part.arguments),
                }
            )
    return parts


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation in the conventions' `gen_ai.input.messages` shape (system turns apart)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "parts": [{"type": "text", "content": message.text}]})
        elif isinstance(message, AssistantMessage):
            out.append({"role": "assistant", "parts": _assistant_parts(message)})
        elif isinstance(message, ToolResultMessage):
            part = {"type": "tool_call_response", "id": message.call_id, "response": message.text}
            out.append({"role": "tool", "parts": [part]})
    return out


def messages_json(messages: Sequence[Message]) -> str:
    """The conversation as the conventions' `gen_ai.input.messages` value, as JSON."""
    return _dumps(_messages(messages))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _output(completion: Completion) -> list[dict[str, Any]]:
    message = {
        "role": "assistant",
        "parts": _assistant_parts(completion.message),
        "finish_reason": completion.finish_reason,
    }
    return [message]


def _content(request: ModelRequest) -> dict[str, Any]:
    """The opt-in content of a request: the conventions' attribute names, structured values."""
    out: dict[str, Any] = {"gen_ai.input.messages": _messages(request.messages)}
    system = [
        {"type": "text", "content": m.text}
        for m in request.messages
        if isinstance(m, SystemMessage)
    ]
    if system:
        out["gen_ai.system_instructions"] = system
    if request.tools:
        out["gen_ai.tool.definitions"] = [
            {"type": "function", "name": t.name, "description": t.description}
            for t in request.tools
        ]
    return out


@dataclasses.dataclass(slots=True)
class _Chat:
    """One model request being traced."""

    span: Span
    metric: dict[str, Any]
    attributes: dict[str, Any]
    started: float
    content: dict[str, Any] | None  # for the details event, when events are on


# --- the instrumentation -----------------------------------------------------------------------


class Instrumentation:
    """The tracer, the meter's instruments and the content switch, as `instrument()` set them."""

    def __init__(
        self,
        tracer_provider: Any,
        meter_provider: Any,
        *,
        capture_content: bool,
        content_events: bool = False,
        logger_provider: Any = None,
    ) -> None:
        version = _version()
        self.tracer = trace.get_tracer(_SCOPE, version, tracer_provider=tracer_provider)
        self.events = get_logger(_SCOPE, version, logger_provider=logger_provider)
        meter = metrics.get_meter(_SCOPE, version, meter_provider=meter_provider)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model request, by token type.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of each model request.",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.capture_content = capture_content  # on span attributes
        self.content_events = content_events
        self.mcp = McpSpans(self, meter)
        self._explicit = tracer_provider is not None or meter_provider is not None

    def configured(self) -> bool:
        """Whether anything would record: a provider was given, or an SDK set a global one.

        With neither, every span and measurement would be the API's no-op, so runs skip the
        wrapping altogether and cost what they cost untraced.
        """
        if self._explicit:
            return True
        tracer_provider = trace.get_tracer_provider()
        if not isinstance(tracer_provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return True
        meter_provider = metrics.get_meter_provider()
        return not (
            isinstance(meter_provider, metrics.NoOpMeterProvider)
            or type(meter_provider).__name__ == "_ProxyMeterProvider"
        )

    # -- runs

    async def run(
        self, config: LoopConfig, body: Callable[[LoopConfig], Awaitable[RunResult]]
    ) -> RunResult:
        """Run `body` inside an `invoke_agent` span, with the model and tools traced."""
        if not self.configured():
            return await body(config)
        traced = dataclasses.replace(
            config, model=TracedModel(config.model, self), trace_tool=self.tool_call
        )
        name = config.options.name
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.provider.name": config.model.provider,
            "gen_ai.request.model": config.model.model_name,
        }
        with self.tracer.start_as_current_span(
            f"invoke_agent {name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await body(traced)
            except BaseException as error:
                fail(span, error)
                raise
            span.set_attributes(_usage_attributes(result.usage))
            span.set_attribute("toolwire.run.stop_reason", result.stop_reason)
            span.set_attribute("toolwire.run.iterations", result.iterations)
            if result.cost.total is not None:
                span.set_attribute("toolwire.cost.usd", float(result.cost.total))
            if self.capture_content:
                span.set_attribute("gen_ai.output.messages", messages_json(result.new_messages))
            return result

    # -- model requests

    def chat_span(self, model: Model, request: ModelRequest) -> _Chat:
        """Start a `chat` span for `request` (not made current)."""
        metric: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": model.provider,
            "gen_ai.request.model": model.model_name,
        }
        attributes = dict(metric)
        settings = request.settings
        for key, value in (
            ("gen_ai.request.max_tokens", settings.max_tokens),
            ("gen_ai.request.temperature", settings.temperature),
            ("gen_ai.request.top_p", settings.top_p),
            ("gen_ai.request.seed", settings.seed),
            ("gen_ai.request.stop_sequences", settings.stop),
        ):
            if value is not None:
                attributes[key] = value
        content = _content(request) if self.capture_content or self.content_events else None
        on_span = dict(attributes)
        if self.capture_content and content is not None:
            on_span.update((key, _dumps(value)) for key, value in content.items())
        span = self.tracer.start_span(
            f"chat {model.model_name}", kind=SpanKind.CLIENT, attributes=on_span
        )
        return _Chat(span, metric, attributes, time.perf_counter(), content)

    def chat_answered(self, chat: _Chat, completion: Completion) -> None:
        """Put the answer on the span, record the metrics and the event, end the span."""
        span, metric = chat.span, chat.metric
        message = completion.message
        response_model = completion.model or message.model
        answer: dict[str, Any] = {}
        if response_model:
            answer["gen_ai.response.model"] = response_model
            metric["gen_ai.response.model"] = response_model
        if message.id:
            answer["gen_ai.response.id"] = message.id
        answer["gen_ai.response.finish_reasons"] = [completion.finish_reason]
        usage = completion.usage
        answer.update(_usage_attributes(usage))
        span.set_attributes(answer)
        if len(completion.attempts) > 1:
            span.set_attribute("toolwire.model.attempts", len(completion.attempts))
        answered_by = message.provider or metric["gen_ai.provider.name"]
        cost = estimate_cost([(answered_by, response_model, usage)])
        if cost.total is not None:
            span.set_attribute("toolwire.cost.usd", float(cost.total))
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", _dumps(_output(completion)))
        if chat.content is not None and self.content_events:
            self._details(chat, {**answer, "gen_ai.output.messages": _output(completion)})
        self.duration.record(time.perf_counter() - chat.started, metric)
        self.token_usage.record(usage.input_tokens, {**metric, "gen_ai.token.type": "input"})
        self.token_usage.record(usage.output_tokens, {**metric, "gen_ai.token.type": "output"})
        span.end()

    def chat_failed(self, chat: _Chat, error: BaseException) -> None:
        """Mark the span failed, record the duration (and event) with `error.type`, end it."""
        fail(chat.span, error)
        failed = {"error.type": type(error).__qualname__}
        if chat.content is not None and self.content_events:
            self._details(chat, failed)
        self.duration.record(time.perf_counter() - chat.started, {**chat.metric, **failed})
        chat.span.end()

    def _details(self, chat: _Chat, outcome: Mapping[str, Any]) -> None:
        """The conventions' `gen_ai.client.inference.operation.details` event, on the span."""
        attributes: dict[str, Any] = {**chat.attributes, **(chat.content or {}), **outcome}
        self.events.emit(
            event_name=_DETAILS_EVENT,
            context=trace.set_span_in_context(chat.span),
            attributes=attributes,
        )

    # -- tool calls

    async def tool_call(
        self,
        call: ToolCallBlock,
        tool: Tool | None,
        run: Callable[[], Awaitable[tuple[ToolResultMessage, BaseException | None]]],
    ) -> tuple[ToolResultMessage, BaseException | None]:
        """Run one tool call (its hooks included) inside an `execute_tool` span.

        The loop calls it for every call the model makes, a call of an unknown tool too, so
        each call of the history has its span; the tool's own code runs inside it.
        """
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
        }
        if call.id:
            attributes["gen_ai.tool.call.id"] = call.id
        if tool is not None:
            attributes["gen_ai.tool.type"] = "function"
            if tool.description:
                attributes["gen_ai.tool.description"] = tool.description
        if self.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call.arguments
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                message, error = await run()
            except BaseException as exc:
                fail(span, exc)
                raise
            if message.is_error:
                _tool_failed(span, tool, message, error)
            if self.capture_content:
                span.set_attribute("gen_ai.tool.call.result", message.text)
            return message, error


class TracedModel(WrapperModel):
    """A model whose every request is a `chat` span, with the GenAI metrics recorded.

    Args:
        model: The model traced.
        instrumentation: What `instrument()` set up.
    """

    def __init__(self, model: Model, instrumentation: Instrumentation) -> None:
        super().__init__(model)
        self._otel = instrumentation

    async def send(self, request: ModelRequest) -> Completion:
        otel = self._otel
        chat = otel.chat_span(self.wrapped, request)
        try:
            # Current while the request runs, so an HTTP client's own spans are its children.
            with trace.use_span(
                chat.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                completion = await send_to(self.wrapped, request)
        except BaseException as error:
            otel.chat_failed(chat, error)
            raise
        otel.chat_answered(chat, completion)
        return completion

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        otel = self._otel
        chat = otel.chat_span(self.wrapped, request)
        events = stream_to(self.wrapped, request)
        current = trace.set_span_in_context(chat.span)
        answered = False
        try:
            while True:
                # The span is current while the stream is advanced (so an HTTP client's spans
                # are its children) and never across a `yield`: the consumer runs between
                # events, and must not find the span current in its own code.
                token = context.attach(current)
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    break
                finally:
                    context.detach(token)
                if isinstance(event, CompletionDone):
                    answered = True
                    otel.chat_answered(chat, event.completion)
                yield event
        except BaseException as error:
            if not answered:
                otel.chat_failed(chat, error)
            raise
        finally:
            await aclose_events(events)
            if not answered and chat.span.is_recording():
                chat.span.end()


# --- tool calls --------------------------------------------------------------------------------


def _tool_failed(
    span: Span, tool: Tool | None, message: ToolResultMessage, error: BaseException | None
) -> None:
    if error is not None:
        fail(span, error)
    else:
        # An unknown tool gets the errors tree's name for it; any other error result the
        # conventions' generic one.
        kind = "UnknownToolError" if tool is None else "tool_error"
        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, message.text[:200]))
