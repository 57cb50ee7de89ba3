"""Framework overhead of the agent loop, per round, and how it grows with the run's length.

Each run is N rounds of one tool call each, answered by an in-process scripted model, through
toolwire (`ScriptedModel`-style `FunctionModel`), pydantic-ai (its `FunctionModel`) and
openai-agents (a fake `Model`). The model and the tool do almost nothing, so the time per round is
the framework's own overhead. Runs at 200 and at 400 rounds show whether a round gets dearer as
the history grows. Then toolwire's per-round time with OpenTelemetry tracing off, on with no SDK
configured, and on with the SDK recording in memory; then with the tool wrapped by middleware (a
`ToolWrapper`, resolved for every request). Then 20 calls of a tool that sleeps 100 ms, in one
turn. Last, the cold first run: in a fresh interpreter, the user's import line, then the first run
of 200 rounds (tool and agent built, whatever the imports left to first use paid where it falls),
toolwire and pydantic-ai in turns, CPU time; the goal is pydantic-ai's per-round figure at least 50x
toolwire's.

Run: `make bench` or `.venv/bin/python benchmarks/loop.py` (`--cold` for the last line alone).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

ROUND_COUNTS = (200, 400)
FRAMEWORKS = ("toolwire", "pydantic-ai", "openai-agents")
REPEATS = 3
PASSES = 3
"""How often the tracing modes take turns; each keeps its best."""


async def bump(n: int) -> int:
    """Add one."""
    return n + 1


# --- toolwire --------------------------------------------------------------------------------


def toolwire_run(rounds: int, *, wrapped: bool = False) -> Callable[[], Awaitable[Any]]:
    from toolwire import Agent, FunctionModel, tool
    from toolwire.messages import Message
    from toolwire.middleware import with_timeout
    from toolwire.models.testing import ModelRequest
    from toolwire.tools import Tool

    t: Tool = tool(bump)
    if wrapped:
        # A middleware wrapper (a ToolWrapper), as hooks, tracing and MCP tools are: resolved
        # again for every model request.
        t = with_timeout(30)(t)

    async def run() -> Any:
        count = 0

        def reply(messages: list[Message], request: ModelRequest) -> Any:
            nonlocal count
            count += 1
            if count > rounds:
                return "done"
            return [("bump", {"n": count})]

        agent = Agent(FunctionModel(reply), tools=[t], max_iterations=rounds + 1)
        result = await agent.run("go")
        assert result.stop_reason == "completed" and len(result.trace) == rounds, result.stop_reason
        return result

    return run


# --- pydantic-ai -------------------------------------------------------------------------------


def pydantic_ai_run(rounds: int, delay: float | None = None) -> Callable[[], Awaitable[Any]] | None:
    """A pydantic-ai run of `rounds` tool rounds; with a `delay`, the model answers after an
    async sleep of that many seconds (as a provider's round trip would), else at once."""
    try:
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
        from pydantic_ai.usage import UsageLimits
    except ImportError:
        return None

    async def run() -> Any:
        count = 0

        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            nonlocal count
            count += 1
            if count > rounds:
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(
                parts=[ToolCallPart("bump", {"n": count}, tool_call_id=f"c{count}")]
            )

        async def reply_later(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            await asyncio.sleep(delay or 0)
            return reply(messages, info)

        model = FunctionModel(reply if delay is None else reply_later)
        agent = Agent(model, tools=[bump])
        result = await agent.run("go", usage_limits=UsageLimits(request_limit=rounds + 5))
        assert result.output == "done"
        return result

    return run


# --- openai-agents ----------------------------------------------------------------------------


def openai_agents_run(rounds: int) -> Callable[[], Awaitable[Any]] | None:
    try:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )
    except ImportError:
        return None
    set_tracing_disabled(True)  # nothing may leave the machine

    class FakeModel(Model):
        def __init__(self) -> None:
            self.count = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            self.count += 1
            if self.count > rounds:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                item: Any = ResponseOutputMessage(
                    id="m", type="message", role="assistant", status="completed", content=[text]
                )
            else:
                item = ResponseFunctionToolCall(
                    type="function_call",
                    name="bump",
                    arguments=f'{{"n": {self.count}}}',
                    call_id=f"c{self.count}",
                    id=f"fc{self.count}",
                )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    tool = function_tool(bump)

    async def run() -> Any:
        agent = Agent(name="bench", model=FakeModel(), tools=[tool])
        result = await Runner.run(agent, "go", max_turns=rounds + 5)
        assert result.final_output == "done"
        return result

    return run


async def best_of(
    run: Callable[[], Awaitable[Any]], clock: Callable[[], float] = time.perf_counter
) -> float:
    await run()  # warm-up: imports, schema building, caches
    best = float("inf")
    for _ in range(REPEATS):
        start = clock()
        await run()
        best = min(best, clock() - start)
    return best


async def tracing_overhead(rounds: int = ROUND_COUNTS[0]) -> dict[str, float] | None:
    """toolwire's per-round CPU time (us) with tracing off, on with no SDK configured (the API's
    no-op tracer), and on with the SDK recording spans and metrics in memory."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:
        return None
    from toolwire import telemetry

    run = toolwire_run(rounds)
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])

    def off() -> None:
        telemetry.uninstrument()

    def no_sdk() -> None:
        telemetry.instrument()  # the global providers: the API's no-op ones here
        active = telemetry.active()
        assert active is not None and not active.configured()

    def in_memory() -> None:
        telemetry.instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)

    modes = {"off": off, "on, no SDK configured": no_sdk, "on, in-memory exporter": in_memory}
    out = dict.fromkeys(modes, float("inf"))
    recorded = 0
    try:
        # The modes take turns, so that a burst of load on the machine hits them all alike.
        for _ in range(PASSES):
            for label, setup in modes.items():
                setup()
                gc.collect()
                # CPU time: what tracing adds is work, and a loaded machine's waits would hide it.
                took = await best_of(run, time.process_time)
                out[label] = min(out[label], took / rounds * 1e6)
                # Kept spans would grow the heap, and so the collector's work, for the next mode.
                recorded += len(exporter.get_finished_spans())
                exporter.clear()
    finally:
        telemetry.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()
    assert recorded, "the in-memory exporter recorded nothing"
    return out


async def parallel_sleepers() -> float:
    from toolwire import Agent, ScriptedModel, tool

    @tool
    async def nap(n: int) -> int:
        """Sleep 100 ms."""
        await asyncio.sleep(0.1)
        return n

    model = ScriptedModel([[("nap", {"n": i}) for i in range(20)], "rested"])
    start = time.perf_counter()
    result = await Agent(model, tools=[nap], max_concurrency=20).run("go")
    elapsed = time.perf_counter() - start
    assert len(result.trace) == 20
    return elapsed


COLD_GOAL = 50
COLD_RUNS = 3
COLD_IMPORTS = {
    "toolwire": "from toolwire import Agent, FunctionModel, tool",
    "pydantic-ai": "from pydantic_ai import Agent; from pydantic_ai.models.function import FunctionModel",
}
COLD_BUILDERS: dict[str, Callable[[int], Callable[[], Awaitable[Any]] | None]] = {}


def cold_child(name: str, rounds: int) -> None:
    """In a fresh interpreter: the import line, then the first run (its builder included)."""
    started = time.process_time()
    exec(COLD_IMPORTS[name])
    imported = time.process_time()
    run = COLD_BUILDERS[name](rounds)
    assert run is not None
    asyncio.run(run())
    done = time.process_time()
    figures = {"import_ms": (imported - started) * 1e3, "us_per_round": (done - imported) / rounds}
    figures["us_per_round"] *= 1e6
    print(json.dumps(figures))


def cold_compare(rounds: int = ROUND_COUNTS[0]) -> dict[str, dict[str, float]] | None:
    """Median over `COLD_RUNS` fresh interpreters per framework, started in turns."""
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in COLD_IMPORTS}
    for n in range(COLD_RUNS):
        order = list(COLD_IMPORTS) if n % 2 == 0 else list(reversed(COLD_IMPORTS))
        for name in order:
            done = subprocess.run(
                [sys.executable, __file__, "--cold-child", name, str(rounds)],
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
            )
            if done.returncode != 0:
                if name == "toolwire":
                    raise SystemExit(done.stderr)
                return None  # pydantic-ai not installed
            figures[name].append(json.loads(done.stdout.splitlines()[-1]))
    return {
        name: {key: statistics.median(f[key] for f in runs) for key in runs[0]}
        for name, runs in figures.items()
    }


def print_cold(rounds: int = ROUND_COUNTS[0]) -> None:
    cold = cold_compare(rounds)
    if cold is None:
        print("cold first run: pydantic-ai not installed (pip install -e '.[bench]')")
        return
    print(
        f"cold first run after the import line, {rounds} rounds (CPU, median of {COLD_RUNS} "
        f"fresh interpreters each, load {os.getloadavg()[0]:.2f}):"
    )
    for name, values in cold.items():
        print(
            f"{name:>14}{values['us_per_round']:>10.1f} us per round"
            f"   (import line {values['import_ms']:.0f} ms)"
        )
    ratio = cold["pydantic-ai"]["us_per_round"] / cold["toolwire"]["us_per_round"]
    print(
        f"pydantic-ai per cold round / toolwire per cold round: {ratio:.1f}x (goal >= {COLD_GOAL}x)"
    )


async def main() -> None:
    builders: dict[str, Callable[[int], Callable[[], Awaitable[Any]] | None]] = {
        "toolwire": toolwire_run,
        "pydantic-ai": pydantic_ai_run,
        "openai-agents": openai_agents_run,
    }
    per_round: dict[str, dict[int, float]] = {}
    for name, build in builders.items():
        for rounds in ROUND_COUNTS:
            run = build(rounds)
            if run is None:
                print(f"{name}: not installed (pip install -e '.[bench]')")
                break
            per_round.setdefault(name, {})[rounds] = await best_of(run) / rounds * 1e6

    print(f"agent loop: framework overhead per round (us), best of {REPEATS}")
    header = "".join(f"{r:>12} rounds" for r in ROUND_COUNTS)
    print(f"{'':>14}{header}{'growth':>10}")
    for name, values in per_round.items():
        cells = "".join(f"{values[r]:>19.1f}" for r in ROUND_COUNTS)
        growth = values[ROUND_COUNTS[-1]] / values[ROUND_COUNTS[0]]
        print(f"{name:>14}{cells}{growth:>9.2f}x")
    tw = per_round["toolwire"]
    for name, values in per_round.items():
        if name == "toolwire":
            continue
        ratios = ", ".join(f"{values[r] / tw[r]:.1f}x at {r}" for r in ROUND_COUNTS)
        print(f"{name} per round / toolwire per round: {ratios}")
    traced = await tracing_overhead()
    if traced is None:
        print("tracing: opentelemetry-sdk not installed (pip install -e '.[otel,dev]')")
    else:
        print(f"toolwire per round with tracing, {ROUND_COUNTS[0]} rounds (us of CPU time):")
        for label, value in traced.items():
            print(f"{label:>26}{value:>10.1f}  ({value / traced['off']:.2f}x off)")
    plain = await best_of(toolwire_run(ROUND_COUNTS[0])) / ROUND_COUNTS[0] * 1e6
    wrapped = await best_of(toolwire_run(ROUND_COUNTS[0], wrapped=True)) / ROUND_COUNTS[0] * 1e6
    print(
        f"toolwire per round with the tool wrapped by middleware, {ROUND_COUNTS[0]} rounds: "
        f"{wrapped:.1f} us ({wrapped / plain:.2f}x the plain tool's {plain:.1f} us)"
    )
    elapsed = await parallel_sleepers()
    print(f"20 calls of a 100 ms tool in one turn: {elapsed * 1000:.0f} ms in all")
    print_cold()


COLD_BUILDERS.update({"toolwire": toolwire_run, "pydantic-ai": pydantic_ai_run})

if __name__ == "__main__":
    if sys.argv[1:2] == ["--cold-child"]:
        cold_child(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1:2] == ["--cold"]:
        print_cold()
    else:
        asyncio.run(main())
