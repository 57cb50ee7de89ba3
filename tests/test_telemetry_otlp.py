"""End to end: spans and metrics exported over OTLP/HTTP to a receiver this test starts."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from toolwire import Agent, ScriptedModel, telemetry, tool

pytestmark = pytest.mark.anyio


class Receiver:
    """An OTLP/HTTP receiver: keeps every request body by path, answers 200."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[bytes]] = {}
        self.content_types: set[str] = set()
        received = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                received.content_types.add(self.headers.get("Content-Type", ""))
                received.bodies.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    received = Receiver()
    received.thread.start()
    try:
        yield received
    finally:
        received.server.shutdown()
        received.server.server_close()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_a_run_arrives_at_an_otlp_receiver(receiver: Receiver) -> None:
    resource = Resource.create({"service.name": "toolwire-e2e"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", timeout=10))
    )
    reader = PeriodicExportingMetricReader(
        OTLPMetricExporter(endpoint=f"{receiver.url}/v1/metrics", timeout=10),
        export_interval_millis=3_600_000,  # exported once, at shutdown
    )
    meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
    telemetry.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    try:
        model = ScriptedModel([("add", {"a": 20, "b": 22}), "42"])
        result = await Agent(model, name="e2e", tools=[add]).run("20+22?")
    finally:
        telemetry.uninstrument()
        tracer_provider.shutdown()  # flushes the batch
        meter_provider.shutdown()
    assert result.text == "42"
    assert receiver.content_types == {"application/x-protobuf"}

    spans: dict[str, Any] = {}
    for body in receiver.bodies["/v1/traces"]:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
            assert service["service.name"] == "toolwire-e2e"
            for scope_spans in resource_spans.scope_spans:
                assert scope_spans.scope.name == "toolwire"
                for span in scope_spans.spans:
                    spans.setdefault(span.name, []).append(span)
    assert sorted(spans) == ["chat scripted", "execute_tool add", "invoke_agent e2e"]
    [run] = spans["invoke_agent e2e"]
    [call] = spans["execute_tool add"]
    assert call.parent_span_id == run.span_id
    assert {s.trace_id for group in spans.values() for s in group} == {run.trace_id}
    values = {a.key: a.value for a in run.attributes}
    assert values["gen_ai.agent.name"].string_value == "e2e"
    assert values["gen_ai.usage.output_tokens"].int_value == result.usage.output_tokens

    metrics: dict[str, Any] = {}
    for body in receiver.bodies["/v1/metrics"]:
        request = ExportMetricsServiceRequest.FromString(body)
        for resource_metrics in request.resource_metrics:
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    metrics[metric.name] = metric
    tokens = metrics["gen_ai.client.token.usage"]
    assert tokens.unit == "{token}"
    total = sum(p.sum for p in tokens.histogram.data_points)
    assert total == result.usage.input_tokens + result.usage.output_tokens
    assert metrics["gen_ai.client.operation.duration"].unit == "s"
