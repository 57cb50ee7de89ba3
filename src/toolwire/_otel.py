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

from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

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
from .middleware import ToolWrapper
from .models.base import (
    Completion,
    CompletionDone,
    Model,
    ModelRequest,
    ModelSettings,
    StreamEvent,
    ToolChoice,
    aclose_events,
)
from .models.wrappers import WrapperModel, send_to, stream_to
from .results import ToolResult
from .tools import Tool, ToolContext, ToolLike
from .usage import Usage, estimate_cost

if TYPE_CHECKING:
    from ._loop import LoopConfig, RunResult

__all__ = ["Instrumentation", "McpSpans", "TracedModel"]

_SCOPE = "toolwire"
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


def messages_json(messages: Sequence[Message]) -> str:
    """The conversation as the conventions' `gen_ai.input.messages` value (system turns apart)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "parts": [{"type": "text", "content": message.text}]})
        elif isinstance(message, AssistantMessage):
            out.append({"role": "assistant", "parts": _assistant_parts(message)})
        elif isinstance(message, ToolResultMessage):
            part = {"type": "tool_call_response", "id": message.call_id, "response": message.text}
            out.append({"role": "tool", "parts": [part]})
    return json.dumps(out, ensure_ascii=False)


def _output_json(completion: Completion) -> str:
    message = {
        "role": "assistant",
        "parts": _assistant_parts(completion.message),
        "finish_reason": completion.finish_reason,
    }
    return json.dumps([message], ensure_ascii=False)


def _system_json(messages: Sequence[Message]) -> str | None:
    texts = [{"type": "text", "content": m.text} for m in messages if isinstance(m, SystemMessage)]
    return json.dumps(texts, ensure_ascii=False) if texts else None


# --- the instrumentation -----------------------------------------------------------------------


class Instrumentation:
    """The tracer, the meter's instruments and the content switch, as `instrument()` set them."""

    def __init__(self, tracer_provider: Any, meter_provider: Any, *, capture_content: bool) -> None:
        version = _version()
        self.tracer = trace.get_tracer(_SCOPE, version, tracer_provider=tracer_provider)
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
        self.capture_content = capture_content
        self.mcp = McpSpans(self)
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
            config,
            model=TracedModel(config.model, self),
            tools={name: _TracedTool(tool, self) for name, tool in config.tools.items()},
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

    def chat_span(self, model: Model, request: ModelRequest) -> tuple[Span, dict[str, Any]]:
        """Start a `chat` span for `request` (not made current); also the metric attributes."""
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
        if self.capture_content:
            attributes["gen_ai.input.messages"] = messages_json(request.messages)
            system = _system_json(request.messages)
            if system is not None:
                attributes["gen_ai.system_instructions"] = system
            if request.tools:
                attributes["gen_ai.tool.definitions"] = json.dumps(
                    [
                        {"type": "function", "name": t.name, "description": t.description}
                        for t in request.tools
                    ],
                    ensure_ascii=False,
                )
        span = self.tracer.start_span(
            f"chat {model.model_name}", kind=SpanKind.CLIENT, attributes=attributes
        )
        return span, metric

    def chat_answered(
        self, span: Span, metric: dict[str, Any], completion: Completion, started: float
    ) -> None:
        """Put the answer on the span, record the metrics, end the span."""
        message = completion.message
        response_model = completion.model or message.model
        if response_model:
            span.set_attribute("gen_ai.response.model", response_model)
            metric["gen_ai.response.model"] = response_model
        if message.id:
            span.set_attribute("gen_ai.response.id", message.id)
        span.set_attribute("gen_ai.response.finish_reasons", [completion.finish_reason])
        usage = completion.usage
        span.set_attributes(_usage_attributes(usage))
        if len(completion.attempts) > 1:
            span.set_attribute("toolwire.model.attempts", len(completion.attempts))
        answered_by = message.provider or metric["gen_ai.provider.name"]
        cost = estimate_cost([(answered_by, response_model, usage)])
        if cost.total is not None:
            span.set_attribute("toolwire.cost.usd", float(cost.total))
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", _output_json(completion))
        self.duration.record(time.perf_counter() - started, metric)
        self.token_usage.record(usage.input_tokens, {**metric, "gen_ai.token.type": "input"})
        self.token_usage.record(usage.output_tokens, {**metric, "gen_ai.token.type": "output"})
        span.end()

    def chat_failed(
        self, span: Span, metric: dict[str, Any], error: BaseException, started: float
    ) -> None:
        """Mark the span failed, record the duration with `error.type`, end the span."""
        fail(span, error)
        self.duration.record(
            time.perf_counter() - started, {**metric, "error.type": type(error).__qualname__}
        )
        span.end()


class TracedModel(WrapperModel):
    """A model whose every request is a `chat` span, with the GenAI metrics recorded.

    Args:
        model: The model traced.
        instrumentation: What `instrument()` set up.
    """

    def __init__(self, model: Model, instrumentation: Instrumentation) -> None:
        super().__init__(model)
        self._otel = instrumentation

    async def complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> Completion:
        # The model sees the tools as the caller gave them: the tracing wrapper only matters
        # when a call runs, and resolving a wrapper costs a slow protocol check per request.
        return await super().complete(
            prompt,
            history=history,
            tools=_untraced(tools),
            tool_choice=tool_choice,
            settings=settings,
        )

    def stream_complete(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamEvent]:
        return super().stream_complete(
            prompt,
            history=history,
            tools=_untraced(tools),
            tool_choice=tool_choice,
            settings=settings,
        )

    async def send(self, request: ModelRequest) -> Completion:
        otel = self._otel
        span, metric = otel.chat_span(self.wrapped, request)
        started = time.perf_counter()
        try:
            # Current while the request runs, so an HTTP client's own spans are its children.
            with trace.use_span(
                span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                completion = await send_to(self.wrapped, request)
        except BaseException as error:
            otel.chat_failed(span, metric, error, started)
            raise
        otel.chat_answered(span, metric, completion, started)
        return completion

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        # The span is not made current here: a generator that yields with a context attached
        # would leak it into its consumer between events.
        otel = self._otel
        span, metric = otel.chat_span(self.wrapped, request)
        started = time.perf_counter()
        events = stream_to(self.wrapped, request)
        answered = False
        try:
            async for event in events:
                if isinstance(event, CompletionDone):
                    answered = True
                    otel.chat_answered(span, metric, event.completion, started)
                yield event
        except BaseException as error:
            if not answered:
                otel.chat_failed(span, metric, error, started)
            raise
        finally:
            await aclose_events(events)
            if not answered and span.is_recording():
                span.end()


def _untraced(tools: Sequence[ToolLike]) -> list[ToolLike]:
    return [t.wrapped if isinstance(t, _TracedTool) else t for t in tools]


# --- tool calls --------------------------------------------------------------------------------


class _TracedTool(ToolWrapper):
    """A tool whose every call is an `execute_tool` span; the tool's code runs inside it."""

    def __init__(self, wrapped: Tool, instrumentation: Instrumentation) -> None:
        super().__init__(wrapped)
        self._otel = instrumentation

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        otel = self._otel
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": self.name,
            "gen_ai.tool.type": "function",
        }
        if self.description:
            attributes["gen_ai.tool.description"] = self.description
        if ctx is not None and ctx.call_id:
            attributes["gen_ai.tool.call.id"] = ctx.call_id
        if otel.capture_content and args is not None:
            attributes["gen_ai.tool.call.arguments"] = (
                args.decode()
                if isinstance(args, bytes)
                else args
                if isinstance(args, str)
                else json.dumps(dict(args), ensure_ascii=False, default=str)
            )
        with otel.tracer.start_as_current_span(
            f"execute_tool {self.name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await self.wrapped.invoke(args, ctx)
            except BaseException as error:
                fail(span, error)
                raise
            if result.is_error:
                _mark_tool_error(span, result)
            if otel.capture_content:
                span.set_attribute("gen_ai.tool.call.result", result.text)
            return result


# --- MCP -----------------------------------------------------------------------------------------


def _mark_tool_error(span: Span, result: ToolResult) -> None:
    if result.error is not None:
        fail(span, result.error)
    else:
        span.set_attribute("error.type", "tool_error")
        span.set_status(Status(StatusCode.ERROR, result.text[:200]))


class McpSpans:
    """The MCP conventions' spans: a client span per call sent, a server span per call served."""

    def __init__(self, instrumentation: Instrumentation) -> None:
        self._otel = instrumentation

    async def client_call(
        self,
        name: str,
        params: dict[str, Any],
        attributes: Mapping[str, Any],
        call: Callable[[], Awaitable[ToolResult]],
    ) -> ToolResult:
        """Run `call` in a `tools/call {name}` client span, its context put in `params._meta`."""
        from opentelemetry.propagate import inject

        attrs: dict[str, Any] = {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            **attributes,
        }
        with self._otel.tracer.start_as_current_span(
            f"tools/call {name}",
            kind=SpanKind.CLIENT,
            attributes=attrs,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            meta: dict[str, Any] = dict(params.get("_meta") or {})
            inject(meta)  # W3C `traceparent` / `tracestate`, as the MCP conventions place them
            params["_meta"] = meta
            try:
                result = await call()
            except BaseException as error:
                fail(span, error)
                raise
            if result.is_error:
                _mark_tool_error(span, result)
            return result

    async def served_call(
        self,
        name: str,
        meta: Mapping[str, Any] | None,
        attributes: Mapping[str, Any],
        call: Callable[[], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """Run `call` in a `tools/call {name}` server span, child of the caller's trace."""
        from opentelemetry.propagate import extract

        parent = None
        if meta:
            try:
                parent = extract(dict(meta))
            except (TypeError, ValueError):  # a malformed carrier: start a trace of our own
                parent = None
        attrs: dict[str, Any] = {
            "mcp.method.name": "tools/call",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            **attributes,
        }
        with self._otel.tracer.start_as_current_span(
            f"tools/call {name}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attrs,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                out = await call()
            except BaseException as error:
                fail(span, error)
                raise
            if out.get("isError") is True:
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR))
            return out
