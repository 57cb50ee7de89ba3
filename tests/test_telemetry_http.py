"""The `chat` span and the provider SDK's HTTP traffic: the real `openai` SDK against the replay
server, through an HTTP transport that opens a span per request the way an HTTP client
instrumentation does (the SDKs run on `httpx2`, which no OpenTelemetry package instruments yet).
A streamed request's span is current while its stream is read, so the HTTP spans nest under it,
and never in the code that consumes the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from recordings.replay import ReplayServer
from toolwire import Agent, telemetry, tool
from toolwire.models.base import CompletionDone
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio

CASSETTE = "openai_chat/test_run_stream_sync_streams_real_model.yaml"


class TracedBody(httpx2.AsyncByteStream):
    """A response body that notes which span is current each time a chunk is read."""

    def __init__(self, inner: Any, seen: list[str]) -> None:
        self.inner = inner
        self.seen = seen

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.seen.append(getattr(trace.get_current_span(), "name", ""))
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class SpanningTransport(httpx2.AsyncBaseTransport):
    """Each request in a CLIENT span, child of whatever span is current when it is sent."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self.inner = httpx2.AsyncHTTPTransport()
        self.body_read_in: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        with self.tracer.start_as_current_span(f"HTTP {request.method}", kind=SpanKind.CLIENT):
            response = await self.inner.handle_async_request(request)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=TracedBody(response.stream, self.body_read_in),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def exporter() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(tracer_provider=provider)
    try:
        yield exporter, provider
    finally:
        telemetry.uninstrument()
        provider.shutdown()


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0)


async def test_a_streamed_requests_http_spans_nest_under_its_chat_span(
    exporter: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    spans_out, provider = exporter
    transport = SpanningTransport(provider.get_tracer("http"))

    @tool
    def get_capital(country: str) -> str:
        """The capital of a country."""
        return {"UK": "London"}[country]

    consumer_saw: list[str] = []
    with ReplayServer.from_cassette(CASSETTE) as server:
        async with httpx2.AsyncClient(transport=transport) as http:
            model = chat_model(
                "openai",
                "gpt-4o-mini",
                api_key="test-key",
                base_url=server.base_url + "/v1",
                http_client=http,
            )
            agent = Agent(model, tools=[get_capital])
            async with agent.run_stream("What is the capital of the UK? Use the tool.") as run:
                async for _ in run:
                    consumer_saw.append(getattr(trace.get_current_span(), "name", ""))
            assert run.result.text == "The capital of the UK is London."

    spans = list(spans_out.get_finished_spans())
    chats = named(spans, "chat ")
    posts = named(spans, "HTTP POST")
    assert len(chats) == len(posts) == 2
    for chat, post in zip(chats, posts, strict=True):
        assert post.parent is not None and post.parent.span_id == chat.context.span_id
    # The SSE body is read while the stream is consumed, with the chat span current ...
    assert transport.body_read_in and set(transport.body_read_in) == {c.name for c in chats}
    # ... and the code consuming the events never finds it current.
    assert consumer_saw and not any(name.startswith("chat ") for name in consumer_saw)


async def test_a_streams_consumer_keeps_its_own_span(
    exporter: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    from toolwire._otel import TracedModel  # pyright: ignore[reportPrivateUsage]

    spans_out, provider = exporter
    instrumentation = telemetry.active()
    assert instrumentation is not None
    with ReplayServer.from_cassette(CASSETTE) as server:
        model = chat_model(
            "openai", "gpt-4o-mini", api_key="test-key", base_url=server.base_url + "/v1"
        )
        traced = TracedModel(model, instrumentation)
        outer = provider.get_tracer("test")
        inside: list[str] = []
        with outer.start_as_current_span("consumer"):
            stream = traced.stream_complete(
                "What is the capital of the UK? Use the tool.", tools=[]
            )
            async for event in stream:
                inside.append(getattr(trace.get_current_span(), "name", ""))
                if isinstance(event, CompletionDone):
                    break
        await model.aclose()
    assert inside and set(inside) == {"consumer"}
    [chat] = named(list(spans_out.get_finished_spans()), "chat ")
    consumer = named(list(spans_out.get_finished_spans()), "consumer")[0]
    assert chat.parent is not None and chat.parent.span_id == consumer.context.span_id
