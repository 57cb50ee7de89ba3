"""Per-call cost of running one tool: parse + validate + invoke.

The same async tool with three scalar arguments is called N times with the same JSON arguments
through toolwire (`Tool.invoke`: validation, the call, the result wrapped as a `ToolResult`),
pydantic-ai twice (`ToolManager.handle_call`, the path its agent runs take, and its bare inner
path: the tool's core validator then `FunctionSchema.call`, with no result handling), openai-agents
(`FunctionTool.on_invoke_tool`, the path its runner takes) and directly (`json.loads` + the
function). Every contender runs in the same process and event loop; the best of several repeats
is kept.

Run: `make bench` or `.venv/bin/python benchmarks/dispatch.py [N]`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

ARGS = json.dumps({"city": "Recife", "days": 3, "metric": True})
REPEATS = 7


async def forecast(city: str, days: int, metric: bool = True) -> str:
    """Forecast the weather.

    Args:
        city: City name.
        days: Days ahead.
        metric: Metric units.
    """
    return f"{city}:{days}:{metric}"


def toolwire_call() -> Callable[[], Awaitable[Any]]:
    from toolwire import tool

    t = tool(forecast)

    async def call() -> Any:
        result = await t.invoke(ARGS)
        assert not result.is_error
        return result

    return call


def pydantic_ai_inner_call() -> Callable[[], Awaitable[Any]] | None:
    try:
        from pydantic_ai import Tool
    except ImportError:
        return None
    schema = Tool(forecast).function_schema

    async def call() -> Any:
        args = schema.validator.validate_json(ARGS)
        return await schema.call(args, None)  # type: ignore[arg-type]  # the tool takes no context

    return call


def pydantic_ai_call() -> Callable[[], Awaitable[Any]] | None:
    try:
        from pydantic_ai._run_context import RunContext
        from pydantic_ai.messages import ToolCallPart
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.tool_manager import ToolManager
        from pydantic_ai.toolsets import FunctionToolset
        from pydantic_ai.usage import RunUsage
    except ImportError:
        return None
    part = ToolCallPart("forecast", ARGS, tool_call_id="c1")
    state: dict[str, Any] = {}

    async def call() -> Any:
        manager = state.get("manager")
        if manager is None:
            ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
            manager = await ToolManager(toolset=FunctionToolset([forecast])).for_run_step(ctx)
            state["manager"] = manager
        return await manager.handle_call(part)

    return call


def openai_agents_call() -> Callable[[], Awaitable[Any]] | None:
    try:
        from agents import function_tool
        from agents.tool_context import ToolContext
    except ImportError:
        return None
    ft = function_tool(forecast)

    async def call() -> Any:
        ctx = ToolContext(
            context=None, tool_name="forecast", tool_call_id="c1", tool_arguments=ARGS
        )
        return await ft.on_invoke_tool(ctx, ARGS)

    return call


def direct_call() -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return await forecast(**json.loads(ARGS))

    return call


async def measure(call: Callable[[], Awaitable[Any]], n: int) -> float:
    """Best microseconds per call over REPEATS runs of n calls."""
    for _ in range(min(n, 200)):
        await call()
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(n):
            await call()
        best = min(best, (time.perf_counter() - start) / n * 1e6)
    return best


async def main(n: int) -> dict[str, float]:
    contenders: dict[str, Callable[[], Awaitable[Any]] | None] = {
        "direct": direct_call(),
        "toolwire": toolwire_call(),
        "pydantic-ai": pydantic_ai_call(),
        "pydantic-ai inner": pydantic_ai_inner_call(),
        "openai-agents": openai_agents_call(),
    }
    results: dict[str, float] = {}
    for name, call in contenders.items():
        if call is None:
            print(f"{name:>18}: not installed (pip install -e '.[bench]')")
            continue
        results[name] = await measure(call, n)
    return results


def report(results: dict[str, float], n: int) -> None:
    tw = results["toolwire"]
    print(f"dispatch: one tool, 3 scalar arguments, {n} calls, best of {REPEATS}")
    print(f"{'':>18}  {'us/call':>9}  {'vs toolwire':>11}")
    for name, us in results.items():
        print(f"{name:>18}  {us:9.2f}  {us / tw:10.2f}x")
    # The frameworks' own execution paths; the bare inner path and `direct` are reference points.
    frameworks = {k: v for k, v in results.items() if k not in ("direct", "pydantic-ai inner")}
    fastest = min(frameworks, key=frameworks.__getitem__)
    print(f"fastest framework execution path: {fastest}")
    others = [v for k, v in frameworks.items() if k != "toolwire"]
    if others:
        print(f"toolwire vs the next fastest framework: {min(others) / tw:.2f}x faster")
    print(f"median framework: {statistics.median(frameworks.values()):.2f} us/call")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    report(asyncio.run(main(count)), count)
