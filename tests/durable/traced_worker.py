"""A traced worker for the durable tracing tests: runs a run plainly, then durably, and prints
each run's span tree as JSON.

    python traced_worker.py compare DB           a plain run and a durable one, same script
    python traced_worker.py crash DB RUN_ID      a durable run that stops for good in its tool
    python traced_worker.py recover DB RUN_ID    recover that run (launch), print its tree

`crash` prints `at tool` once the tool runs and then waits forever, for the test to kill it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from worker_launch import launch

from toolwire import Agent, telemetry, tool
from toolwire.durable import DurableAgent, shutdown
from toolwire.messages import Message, ToolResultMessage
from toolwire.models.testing import FunctionModel, ModelRequest

STOP_IN_TOOL = False


@tool
async def lookup(city: str) -> str:
    """The weather in a city."""
    if STOP_IN_TOOL:
        print("at tool", flush=True)
        await anyio.sleep_forever()
    return f"sunny in {city}"


def reply(messages: list[Message], request: ModelRequest) -> Any:
    # Answers from the conversation, not from a script's position: a recovering worker asks
    # only the requests that were not checkpointed.
    if any(isinstance(m, ToolResultMessage) for m in messages):
        return "Sunny."
    return [("lookup", {"city": "Oslo"})]


def agent() -> Agent:
    return Agent(FunctionModel(reply, model_name="weather-1"), name="weather", tools=[lookup])


def tree(spans: list[ReadableSpan], root: str) -> list[Any]:
    """`[name, [children...]]` from the span named `root`, children in start order."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        by_parent.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def node(span: ReadableSpan) -> list[Any]:
        return [span.name, [node(child) for child in by_parent.get(span.context.span_id, [])]]

    [top] = [s for s in spans if s.name == root]
    return node(top)


async def main() -> None:
    global STOP_IN_TOOL
    command, db = sys.argv[1], sys.argv[2]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(tracer_provider=provider)
    tracer = provider.get_tracer("worker")
    durable = DurableAgent(agent(), name="weather")
    launch(f"sqlite:///{db}")
    try:
        if command == "compare":
            with tracer.start_as_current_span("plain request"):
                plain = await agent().run("Weather in Oslo?")
            with tracer.start_as_current_span("durable request"):
                durably = await durable.run("Weather in Oslo?", run_id="compare-1")
            spans = list(exporter.get_finished_spans())
            out = {
                "texts": [plain.text, durably.text],
                "plain": tree(spans, "plain request"),
                "durable": tree(spans, "durable request"),
            }
        elif command == "crash":
            STOP_IN_TOOL = True
            await durable.run("Weather in Oslo?", run_id=sys.argv[3])
            out = {}
        else:
            result = await durable.run("Weather in Oslo?", run_id=sys.argv[3])
            spans = list(exporter.get_finished_spans())
            out = {"texts": [result.text], "recovered": tree(spans, "invoke_agent weather")}
        print(json.dumps(out), flush=True)
    finally:
        shutdown()
        provider.shutdown()


if __name__ == "__main__":
    anyio.run(main)
