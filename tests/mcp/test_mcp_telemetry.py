"""MCP calls traced across the wire: the client's span context travels in the request's `_meta`
and toolwire's server continues the trace, so an agent calling a remote tool is one trace."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_servers import toolwire_app
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from conftest import HERE, serve_app
from mcp import StdioServerParameters
from toolwire import Agent, ScriptedModel, telemetry
from toolwire.mcp import McpClient

pytestmark = pytest.mark.anyio


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        telemetry.uninstrument()
        provider.shutdown()


def by_name(exporter: InMemorySpanExporter) -> dict[tuple[str, SpanKind], ReadableSpan]:
    out: dict[tuple[str, SpanKind], ReadableSpan] = {}
    for span in exporter.get_finished_spans():
        key = (span.name, span.kind)
        if not span.name.startswith("chat "):  # one per model request
            assert key not in out, f"two spans {key}"
        out[key] = span
    return out


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


async def test_an_agent_calling_a_remote_tool_is_one_trace(
    exporter: InMemorySpanExporter,
) -> None:
    # The server's tasks start before any client span exists, so only `_meta` can link them.
    async with serve_app(toolwire_app()) as url, McpClient(url) as client:
        tools = await client.tools()
        model = ScriptedModel([("add", {"a": 2, "b": 40}), "42"])
        result = await Agent(model, name="remote", tools=tools).run("2+40?")
        version = client.protocol_version
    assert version is not None
    assert result.text == "42"

    spans = by_name(exporter)
    run = spans[("invoke_agent remote", SpanKind.INTERNAL)]
    tool_span = spans[("execute_tool add", SpanKind.INTERNAL)]
    sent = spans[("tools/call add", SpanKind.CLIENT)]
    served = spans[("tools/call add", SpanKind.SERVER)]
    assert {s.context.trace_id for s in (run, tool_span, sent, served)} == {run.context.trace_id}
    assert tool_span.parent is not None and tool_span.parent.span_id == run.context.span_id
    assert sent.parent is not None and sent.parent.span_id == tool_span.context.span_id
    assert served.parent is not None and served.parent.span_id == sent.context.span_id
    assert served.parent.is_remote

    a = attrs(sent)
    assert a["mcp.method.name"] == "tools/call"
    assert a["gen_ai.tool.name"] == "add"
    assert a["gen_ai.operation.name"] == "execute_tool"
    assert a["network.transport"] == "tcp"
    assert a["mcp.protocol.version"] == version
    s = attrs(served)
    assert s["mcp.method.name"] == "tools/call"
    assert s["gen_ai.tool.name"] == "add"
    assert s["mcp.protocol.version"] == version
    assert "jsonrpc.request.id" in s


async def test_a_failed_remote_call_marks_both_sides(exporter: InMemorySpanExporter) -> None:
    async with serve_app(toolwire_app()) as url, McpClient(url) as client:
        result = await client.call_tool("no_such_tool", {})
    assert result.is_error

    spans = by_name(exporter)
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = spans[("tools/call no_such_tool", kind)]
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "tool_error"


async def test_a_stdio_server_in_another_process_continues_the_trace(
    exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    spans_file = tmp_path / "spans.jsonl"
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "traced_stdio_server.py"), str(spans_file)]
    )
    async with McpClient(params) as client:
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"

    sent = by_name(exporter)[("tools/call add", SpanKind.CLIENT)]
    assert attrs(sent)["network.transport"] == "pipe"
    served = [json.loads(line) for line in spans_file.read_text().splitlines()]
    assert served == [
        {
            "name": "tools/call add",
            "kind": "SERVER",
            "trace_id": sent.context.trace_id,
            "parent_id": sent.context.span_id,
            "parent_remote": True,
        }
    ]
