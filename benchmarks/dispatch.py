"""Per-call cost of running one tool: parse + validate + invoke.

The same async tool with three scalar arguments is called N times with the same JSON arguments
through toolwire (`Tool.invoke`), pydantic-ai (its tool's validator, then `FunctionSchema.call`),
openai-agents (`FunctionTool.on_invoke_tool`) and directly (`json.loads` + the function). Every
framework runs in the same process and the same event loop; the best of several repeats is kept.

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


def pydantic_ai_call() -> Callable[[], Awaitable[Any]] | None:
    try:
        from pydantic_ai import Tool
    except ImportError:
        return None
    schema = Tool(forecast).function_schema

    async def call() -> Any:
        args = schema.validator.validate_json(ARGS)
        return await schema.call(args, None)  # type: ignore[arg-type]  # the tool takes no context

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
        "openai-agents": openai_agents_call(),
    }
    results: dict[str, float] = {}
    for name, call in contenders.items():
        if call is None:
            print(f"{name:>14}: not installed (pip install -e '.[bench]')")
            continue
        results[name] = await measure(call, n)
    return results


def report(results: dict[str, float], n: int) -> None:
    tw = results["toolwire"]
    print(f"dispatch: one tool, 3 scalar arguments, {n} calls, best of {REPEATS}")
    print(f"{'':>14}  {'us/call':>9}  {'vs toolwire':>11}")
    for name, us in results.items():
        print(f"{name:>14}  {us:9.2f}  {us / tw:10.2f}x")
    frameworks = {k: v for k, v in results.items() if k != "direct"}
    fastest = min(frameworks, key=frameworks.__getitem__)
    print(f"fastest framework: {fastest}")
    others = [v for k, v in frameworks.items() if k != "toolwire"]
    if others:
        print(f"toolwire vs the next fastest framework: {min(others) / tw:.2f}x faster")
    print(f"median framework: {statistics.median(frameworks.values()):.2f} us/call")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    report(asyncio.run(main(count)), count)
