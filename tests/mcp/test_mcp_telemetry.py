"""MCP calls traced across the wire: the client's span context travels in the request's `_meta`
and toolwire's server continues the trace, so an agent calling a remote tool is one trace."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_fixtures import HERE, ROOT, eventually, free_port, serve_app, wait_for_port
from mcp_servers import sdk_server, toolwire_app
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from test_mcp_elicitation import elicit_app

from mcp import Client, StdioServerParameters
from toolwire import Agent, ScriptedModel, telemetry
from toolwire.mcp import McpClient
from toolwire.mcp.elicitation import Elicitation, ElicitationAnswer

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
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"

    sent = by_name(exporter)
    served = {line["name"]: line for line in map(json.loads, spans_file.read_text().splitlines())}
    # The handshake and every request: each server span is the child of its client span.
    for name in ("initialize", "tools/list", "tools/call add"):
        client_span = sent[(name, SpanKind.CLIENT)]
        assert attrs(client_span)["network.transport"] == "pipe"
        assert served[name]["kind"] == "SERVER"
        assert served[name]["trace_id"] == client_span.context.trace_id
        assert served[name]["parent_id"] == client_span.context.span_id
        assert served[name]["parent_remote"] is True
        assert served[name]["attributes"]["network.transport"] == "pipe"
    assert served["tools/call add"]["attributes"]["jsonrpc.request.id"]
    assert attrs(sent[("tools/list", SpanKind.CLIENT)])["mcp.protocol.version"]
    # Notifications are served in a span too (the SDK's client sends them without context).
    assert served["notifications/initialized"]["kind"] == "SERVER"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_an_http_server_in_another_process_continues_the_trace(
    exporter: InMemorySpanExporter, tmp_path: Path, protocol: Literal["auto", "legacy"]
) -> None:
    spans_file = tmp_path / "spans.jsonl"
    port = free_port()
    server = await anyio.open_process(
        [sys.executable, str(HERE / "traced_stdio_server.py"), str(spans_file), str(port)],
        cwd=ROOT,
    )
    try:
        await wait_for_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        async with McpClient(url, protocol=protocol) as client:
            await client.list_tools()
            assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3"
        # A notification is answered (202) before it is handled: wait for every span to land.
        expected = len([s for s in exporter.get_finished_spans() if s.kind is SpanKind.CLIENT])
        await eventually(
            lambda: spans_file.exists() and len(spans_file.read_text().splitlines()) >= expected
        )
    finally:
        server.kill()
        with anyio.fail_after(10):
            await server.wait()
        await server.aclose()

    sent = [s for s in exporter.get_finished_spans() if s.kind is SpanKind.CLIENT]
    served = [json.loads(line) for line in spans_file.read_text().splitlines()]
    parents = {line["parent_id"]: line for line in served}
    assert len(sent) >= 3
    for span in sent:
        line = parents[span.context.span_id]  # each request's server span, another process
        assert line["name"] == span.name and line["kind"] == "SERVER"
        assert line["trace_id"] == span.context.trace_id and line["parent_remote"] is True


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_every_request_over_http_is_a_client_span_continued_by_the_server(
    exporter: InMemorySpanExporter, protocol: Literal["auto", "legacy"]
) -> None:
    async with serve_app(toolwire_app()) as url, McpClient(url, protocol=protocol) as client:
        await client.list_tools()
        await client.call_tool("add", {"a": 1, "b": 2})
        session_id = client.session_id

    spans = exporter.get_finished_spans()
    sent = [s for s in spans if s.kind is SpanKind.CLIENT]
    served = {s.parent.span_id: s for s in spans if s.kind is SpanKind.SERVER and s.parent}
    expected = (
        ["server/discover", "tools/list", "tools/call add"]
        if protocol == "auto"
        else ["initialize", "notifications/initialized", "tools/list", "tools/call add"]
    )
    assert [s.name for s in sent] == expected
    port = int(url.split(":")[2].split("/")[0])
    for span in sent:
        a = attrs(span)
        method = a["mcp.method.name"]
        assert span.name.startswith(method)
        assert a["network.transport"] == "tcp"
        assert a["network.protocol.name"] == "http"
        assert (a["server.address"], a["server.port"]) == ("127.0.0.1", port)
        child = served[span.context.span_id]  # each message is served in the caller's trace
        assert child.name == span.name
        assert child.context.trace_id == span.context.trace_id
        assert child.parent is not None and child.parent.is_remote
        c = attrs(child)
        assert c["mcp.method.name"] == method
        assert c["network.transport"] == "tcp"
        assert c["client.address"] == "127.0.0.1"
        if method.startswith("notifications/"):
            assert "jsonrpc.request.id" not in a and "jsonrpc.request.id" not in c
        else:
            assert a["jsonrpc.request.id"] == c["jsonrpc.request.id"]
    if protocol == "legacy":
        assert session_id is not None
        listed = next(s for s in sent if s.name == "tools/list")
        assert attrs(listed)["mcp.session.id"] == session_id
        assert attrs(served[listed.context.span_id])["mcp.session.id"] == session_id


async def test_the_sdk_client_and_server_share_the_trace_with_toolwire(
    exporter: InMemorySpanExporter,
) -> None:
    # The official SDK's client against toolwire's server: it puts the current context in
    # `_meta`, so every request served (resources and prompts too) is a child of the caller.
    tracer = trace.get_tracer("test", tracer_provider=exporter_provider(exporter))
    with tracer.start_as_current_span("caller") as caller:
        async with serve_app(toolwire_app()) as url, Client(url, mode="legacy") as sdk:
            with pytest.warns(MCPDeprecationWarning):  # still served in the handshake era
                await sdk.send_ping()
            await sdk.list_tools()
            with pytest.raises(MCPError):
                await sdk.list_resources()
            await sdk.call_tool("add", {"a": 1, "b": 2})
    served = [s for s in exporter.get_finished_spans() if s.kind is SpanKind.SERVER]
    names = [s.name for s in served]
    for name in ("initialize", "ping", "tools/list", "resources/list", "tools/call add"):
        assert name in names
    for span in served:
        if span.name == "notifications/initialized":
            continue  # the SDK's client sends its notifications without a context
        assert span.parent is not None and span.parent.span_id == caller.get_span_context().span_id
    refused = next(s for s in served if s.name == "resources/list")
    assert refused.status.status_code is StatusCode.ERROR
    assert attrs(refused)["error.type"] == attrs(refused)["rpc.response.status_code"] == "-32601"

    # toolwire's client against the SDK's server: every request's `_meta` holds the context
    # of the client span that sent it.
    seen: list[tuple[str, str | None]] = []

    class Recorder:
        async def __call__(self, ctx: Any, call_next: Any) -> Any:
            meta = ctx.meta or {}
            seen.append((ctx.method, meta.get("traceparent")))
            return await call_next(ctx)

    server = sdk_server()
    server.middleware[:] = [Recorder()]
    exporter.clear()
    async with serve_app(server.streamable_http_app()) as url, McpClient(url) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "hi"})
    sent = [s for s in exporter.get_finished_spans() if s.kind is SpanKind.CLIENT]
    # The SDK's server runs its own tools/list (no caller, no context) to check a call's
    # Mcp-Param headers in the 2026-07-28 revision; every request of ours carries one.
    received = [(method, parent) for method, parent in seen if parent is not None]
    assert {m for m, _ in received} == {"server/discover", "tools/list", "tools/call"}
    assert len(received) == len(sent) > 3  # the listing has several pages, each a request
    for (method, parent), span in zip(received, sent, strict=True):
        assert attrs(span)["mcp.method.name"] == method
        context = span.get_span_context()
        assert parent.startswith(f"00-{context.trace_id:032x}-{context.span_id:016x}-")


def exporter_provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


async def test_a_json_rpc_error_marks_the_client_span(exporter: InMemorySpanExporter) -> None:
    async with serve_app(toolwire_app()) as url, McpClient(url, protocol="legacy") as client:
        await client.call_tool("add", {"a": "not a number"})
    spans = by_name(exporter)
    sent = spans[("tools/call add", SpanKind.CLIENT)]
    served = spans[("tools/call add", SpanKind.SERVER)]
    for span in (sent, served):
        assert span.status.status_code is StatusCode.ERROR
    # toolwire's server answers invalid arguments with an error result, as MCP asks.
    assert attrs(sent)["error.type"] == attrs(served)["error.type"] == "tool_error"


async def test_a_request_the_server_sends_is_served_in_the_callers_trace(
    exporter: InMemorySpanExporter,
) -> None:
    # The SDK's server asks for input during a call; it passes the call's context on in the
    # elicitation's `_meta`, so toolwire's client answers inside the same trace.
    async def answer(request: Elicitation) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"admin": True})

    async with serve_app(elicit_app()) as url, McpClient(url, elicitation=answer) as client:
        result = await client.call_tool("who")
        session_id = client.session_id
    assert not result.is_error, result.text
    assert session_id is not None  # answering server requests needs the handshake era

    spans = by_name(exporter)
    call = spans[("tools/call who", SpanKind.CLIENT)]
    asked = spans[("elicitation/create", SpanKind.SERVER)]
    assert asked.context.trace_id == call.context.trace_id
    assert asked.parent is not None and asked.parent.span_id == call.context.span_id
    a = attrs(asked)
    assert a["mcp.method.name"] == "elicitation/create"
    assert a["jsonrpc.request.id"]
    assert a["mcp.session.id"] == session_id
    assert "server.address" not in a
