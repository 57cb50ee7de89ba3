"""OpenTelemetry spans and metrics of runs, read back from the SDK's in-memory exporter."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolwire import Agent, ModelResponseError, ScriptedModel, telemetry, tool

pytestmark = pytest.mark.anyio


class Otel:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def instrument(self, *, capture_content: bool = False) -> None:
        telemetry.instrument(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            capture_content=capture_content,
        )

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def histogram(self, name: str) -> list[HistogramDataPoint]:
        data = self.reader.get_metrics_data()
        assert data is not None
        points: list[HistogramDataPoint] = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        points += [
                            p for p in metric.data.data_points if isinstance(p, HistogramDataPoint)
                        ]
        return points


@pytest.fixture
def otel() -> Iterator[Otel]:
    state = Otel()
    state.instrument()
    try:
        yield state
    finally:
        telemetry.uninstrument()
        state.tracer_provider.shutdown()
        state.meter_provider.shutdown()


seen_span: list[str] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    current = trace.get_current_span()
    seen_span.append(getattr(current, "name", ""))
    return a + b


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_a_run_is_one_tree_of_agent_chat_and_tool_spans(otel: Otel) -> None:
    seen_span.clear()
    model = ScriptedModel([("add", {"a": 2, "b": 3}), "It is 5."], model_name="scripted-1")
    result = await Agent(model, name="calc", tools=[add]).run("2+3?")
    assert result.text == "It is 5."

    run = otel.one("invoke_agent calc")
    chats = otel.named("chat scripted-1")
    tool_span = otel.one("execute_tool add")
    assert run.parent is None
    assert len(chats) == 2
    assert {parent_of(s) for s in [*chats, tool_span]} == {run.context.span_id}
    assert {s.context.trace_id for s in otel.spans()} == {run.context.trace_id}
    # The tool's own code runs inside its span, so its spans would be children.
    assert seen_span == ["execute_tool add"]

    assert run.kind is SpanKind.INTERNAL
    a = attrs(run)
    assert a["gen_ai.operation.name"] == "invoke_agent"
    assert a["gen_ai.agent.name"] == "calc"
    assert a["gen_ai.provider.name"] == "test"
    assert a["gen_ai.request.model"] == "scripted-1"
    assert a["toolwire.run.stop_reason"] == "completed"
    assert a["toolwire.run.iterations"] == 2
    assert a["gen_ai.usage.input_tokens"] == result.usage.input_tokens > 0
    assert a["gen_ai.usage.output_tokens"] == result.usage.output_tokens > 0

    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert first.kind is SpanKind.CLIENT
    c = attrs(first)
    assert c["gen_ai.operation.name"] == "chat"
    assert c["gen_ai.provider.name"] == "test"
    assert c["gen_ai.request.model"] == "scripted-1"
    assert c["gen_ai.response.model"] == "scripted-1"
    assert c["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attrs(second)["gen_ai.response.finish_reasons"] == ("stop",)
    assert c["gen_ai.usage.input_tokens"] > 0
    # Content is opt-in.
    assert not any(k.startswith(("gen_ai.input", "gen_ai.output")) for k in c)

    t = attrs(tool_span)
    call_id = result.trace[0].call_id
    assert t == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two integers.",
        "gen_ai.tool.call.id": call_id,
    }
    assert tool_span.status.status_code is StatusCode.UNSET
    # The tool ran between the two model requests.
    assert (first.end_time or 0) <= (tool_span.start_time or 0)
    assert (tool_span.end_time or 0) <= (second.start_time or 0)


async def test_content_is_recorded_when_asked_for(otel: Otel) -> None:
    otel.instrument(capture_content=True)
    model = ScriptedModel([("add", {"a": 1, "b": 1}), "Two."])
    await Agent(model, instructions="Be terse.", tools=[add]).run("1+1?")

    first = sorted(otel.named("chat scripted"), key=lambda s: s.start_time or 0)[0]
    a = attrs(first)
    assert json.loads(a["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "1+1?"}]}
    ]
    assert json.loads(a["gen_ai.system_instructions"]) == [{"type": "text", "content": "Be terse."}]
    [output] = json.loads(a["gen_ai.output.messages"])
    assert output["role"] == "assistant"
    assert output["finish_reason"] == "tool_calls"
    assert output["parts"][0]["name"] == "add"
    assert output["parts"][0]["arguments"] == {"a": 1, "b": 1}
    assert json.loads(a["gen_ai.tool.definitions"])[0]["name"] == "add"

    t = attrs(otel.one("execute_tool add"))
    assert json.loads(t["gen_ai.tool.call.arguments"]) == {"a": 1, "b": 1}
    assert t["gen_ai.tool.call.result"] == "2"


@pytest.mark.parametrize("mode", ["event_only", "span_and_event", "span_only", "no_content"])
async def test_content_as_the_conventions_events(otel: Otel, mode: str) -> None:
    exporter = InMemoryLogRecordExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    telemetry.instrument(
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=logs,
        capture_content=mode,  # type: ignore[arg-type]
    )
    model = ScriptedModel([("add", {"a": 1, "b": 1}), "Two."])
    await Agent(model, instructions="Be terse.", tools=[add]).run("1+1?")

    first, second = sorted(otel.named("chat scripted"), key=lambda s: s.start_time or 0)
    on_span = "gen_ai.input.messages" in attrs(first)
    assert on_span is (mode in ("span_only", "span_and_event"))
    assert ("gen_ai.tool.call.arguments" in attrs(otel.one("execute_tool add"))) is on_span
    events = [r.log_record for r in exporter.get_finished_logs()]
    if mode in ("span_only", "no_content"):
        assert events == []
        return
    assert [e.event_name for e in events] == ["gen_ai.client.inference.operation.details"] * 2
    # Each event belongs to its request's span, and holds the content structured.
    assert [e.span_id for e in events] == [first.context.span_id, second.context.span_id]
    a = dict(events[0].attributes or {})
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "test"
    assert a["gen_ai.request.model"] == "scripted"
    assert a["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert a["gen_ai.usage.input_tokens"] > 0
    [user] = a["gen_ai.input.messages"]
    assert user["role"] == "user" and user["parts"][0]["content"] == "1+1?"
    [system] = a["gen_ai.system_instructions"]
    assert system["content"] == "Be terse."
    [answer] = a["gen_ai.output.messages"]
    assert answer["parts"][0]["name"] == "add"
    assert a["gen_ai.tool.definitions"][0]["name"] == "add"
    logs.shutdown()


@pytest.mark.parametrize(
    ("word", "on_span", "as_event"),
    [
        ("", False, False),
        ("true", True, True),
        ("SPAN_ONLY", True, False),
        ("event_only", False, True),
        ("Span_And_Event", True, True),
        ("no_content", False, False),
        ("maybe", False, False),
    ],
)
def test_the_environment_variable_picks_the_content_mode(
    monkeypatch: pytest.MonkeyPatch, word: str, on_span: bool, as_event: bool
) -> None:
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, word)
    telemetry.instrument()
    try:
        active = telemetry.active()
        assert active is not None
        assert (active.capture_content, active.content_events) == (on_span, as_event)
    finally:
        telemetry.uninstrument()


def test_an_unknown_content_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="capture_content"):
        telemetry.instrument(capture_content="everything")  # type: ignore[arg-type]
    assert not telemetry.is_instrumented()


async def test_a_failing_tool_marks_its_span_and_the_run_goes_on(otel: Otel) -> None:
    model = ScriptedModel([("explode", {"reason": "test"}), "It failed."])
    result = await Agent(model, tools=[explode]).run("go")
    assert result.text == "It failed."

    span = otel.one("execute_tool explode")
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"] == "RuntimeError"
    [event] = span.events
    assert event.name == "exception"
    assert "boom: test" in str(dict(event.attributes or {})["exception.message"])
    assert otel.one("invoke_agent agent").status.status_code is StatusCode.UNSET


async def test_a_call_of_an_unknown_tool_has_its_failed_span(otel: Otel) -> None:
    model = ScriptedModel([("no_such_tool", {"x": 1}), "Sorry."])
    result = await Agent(model, tools=[add]).run("go")
    assert result.text == "Sorry." and result.trace[0].is_error

    span = otel.one("execute_tool no_such_tool")
    assert parent_of(span) == otel.one("invoke_agent agent").context.span_id
    assert span.status.status_code is StatusCode.ERROR
    assert "unknown tool" in (span.status.description or "")
    assert attrs(span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "no_such_tool",
        "gen_ai.tool.call.id": result.trace[0].call_id,
        "error.type": "UnknownToolError",
    }


async def test_the_call_hooks_run_inside_the_tool_span(otel: Otel) -> None:
    seen: list[str] = []

    def before(call: Any) -> None:
        seen.append(f"before in {getattr(trace.get_current_span(), 'name', '')}")

    def after(call: Any, message: Any) -> None:
        seen.append(f"after in {getattr(trace.get_current_span(), 'name', '')}")
        raise PermissionError("result withheld")

    model = ScriptedModel([("add", {"a": 1, "b": 2}), "ok"])
    result = await Agent(model, tools=[add], on_tool_call=before, on_tool_result=after).run("go")
    assert result.trace[0].is_error
    assert seen == ["before in execute_tool add", "after in execute_tool add"]
    # A hook that turns the call into an error marks the call's span.
    span = otel.one("execute_tool add")
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"] == "PermissionError"


async def test_a_failing_model_marks_the_chat_and_the_run(otel: Otel) -> None:
    with pytest.raises(ModelResponseError):
        await Agent(ScriptedModel([])).run("go")

    chat = otel.one("chat scripted")
    run = otel.one("invoke_agent agent")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "ModelResponseError"
        assert [e.name for e in span.events] == ["exception"]
    [duration] = otel.histogram("gen_ai.client.operation.duration")
    assert dict(duration.attributes)["error.type"] == "ModelResponseError"
    assert duration.count == 1


async def test_metrics_follow_the_conventions(otel: Otel) -> None:
    model = ScriptedModel([("add", {"a": 2, "b": 3}), "It is 5."])
    result = await Agent(model, tools=[add]).run("2+3?")

    [duration] = otel.histogram("gen_ai.client.operation.duration")
    assert duration.count == 2
    assert dict(duration.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "test",
        "gen_ai.request.model": "scripted",
        "gen_ai.response.model": "scripted",
    }
    assert duration.explicit_bounds[:3] == (0.01, 0.02, 0.04)
    tokens = {
        dict(p.attributes)["gen_ai.token.type"]: p
        for p in otel.histogram("gen_ai.client.token.usage")
    }
    assert tokens["input"].count == tokens["output"].count == 2
    assert tokens["input"].sum == result.usage.input_tokens
    assert tokens["output"].sum == result.usage.output_tokens
    assert tokens["input"].explicit_bounds[:3] == (1.0, 4.0, 16.0)


async def test_a_streamed_run_has_the_same_spans(otel: Otel) -> None:
    model = ScriptedModel([("add", {"a": 2, "b": 3}), "It is 5."])
    async with Agent(model, tools=[add]).run_stream("2+3?") as stream:
        async for _ in stream:
            pass
    assert stream.result.text == "It is 5."

    run = otel.one("invoke_agent agent")
    chats = otel.named("chat scripted")
    assert len(chats) == 2
    assert {parent_of(s) for s in chats} == {run.context.span_id}
    assert parent_of(otel.one("execute_tool add")) == run.context.span_id
    assert all(attrs(s)["gen_ai.usage.output_tokens"] > 0 for s in chats)


async def test_nothing_is_recorded_after_uninstrument(otel: Otel) -> None:
    telemetry.uninstrument()
    assert not telemetry.is_instrumented()
    await Agent(ScriptedModel(["hi"])).run("go")
    assert otel.spans() == []


def test_a_run_with_tracing_off_imports_no_opentelemetry() -> None:
    code = textwrap.dedent(
        """
        import sys
        from toolwire import Agent, ScriptedModel
        result = Agent(ScriptedModel(["hi"])).run_sync("go")
        assert result.text == "hi"
        print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "toolwire._otel"))))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_with_no_provider_configured_runs_are_not_wrapped(otel: Otel) -> None:
    telemetry.instrument()  # no provider given, and no SDK set a global one in this process
    active = telemetry.active()
    assert active is not None and not active.configured()
    otel.instrument()
    active = telemetry.active()
    assert active is not None and active.configured()
