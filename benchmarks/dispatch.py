"""Per-call cost of running one tool: parse + validate + invoke; then argument validation alone.

The same async tool with three scalar arguments is called N times with the same JSON arguments
through toolwire (`Tool.invoke`: validation, the call, the result wrapped as a `ToolResult`),
pydantic-ai twice (`ToolManager.handle_call`, the path its agent runs take, and its bare inner
path: the tool's core validator then `FunctionSchema.call`, with no result handling), openai-agents
(`FunctionTool.on_invoke_tool`, the path its runner takes) and directly (`json.loads` + the
function). Every contender runs in the same process and event loop; the best of several repeats
is kept.

The second part sets toolwire's JSON Schema validator against jsonschema and jsonschema-rs on
three realistic tool schemas (flat; nested with enums and arrays; `$defs` + `anyOf`), each with a
valid and an invalid call: the verdict alone (`is_valid`) and the verdict with every problem
explained (toolwire `problems`, the others' `iter_errors`), which a call with bad arguments needs.
The third times `parse_args` on a strict tool with optional parameters when the text holds "null".

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


FLAT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "metric": {"type": "boolean"},
        "lang": {"type": "string", "pattern": "^[a-z]{2}$"},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
NESTED = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 200},
        "priority": {"enum": ["low", "normal", "high", "urgent"]},
        "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 10},
        "assignees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "login": {"type": "string"},
                    "role": {"enum": ["owner", "reviewer", "watcher"]},
                },
                "required": ["login", "role"],
                "additionalProperties": False,
            },
        },
        "due": {"type": "object", "properties": {"year": {"type": "integer"}, "month": {"type": "integer", "minimum": 1, "maximum": 12}}},
    },
    "required": ["title", "priority"],
    "additionalProperties": False,
}  # fmt: skip
DEFS = {
    "$defs": {
        "Email": {
            "type": "object",
            "properties": {"kind": {"const": "email"}, "to": {"type": "string"}, "subject": {"type": "string"}},
            "required": ["kind", "to"],
            "additionalProperties": False,
        },
        "Sms": {
            "type": "object",
            "properties": {"kind": {"const": "sms"}, "number": {"type": "string", "pattern": "^\\+[0-9]{8,15}$"}},
            "required": ["kind", "number"],
            "additionalProperties": False,
        },
        "Message": {"type": "object", "properties": {"text": {"type": "string"}, "urgent": {"type": "boolean"}}, "required": ["text"]},
    },
    "type": "object",
    "properties": {
        "channel": {"anyOf": [{"$ref": "#/$defs/Email"}, {"$ref": "#/$defs/Sms"}]},
        "message": {"$ref": "#/$defs/Message"},
        "retries": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
    },
    "required": ["channel", "message"],
}  # fmt: skip
CASES: list[tuple[str, dict[str, Any], Any, Any]] = [
    ("flat", FLAT, {"city": "Recife", "days": 3, "metric": True, "lang": "pt"},
     {"city": "", "days": 30, "metrik": True, "lang": "PT"}),
    ("nested", NESTED,
     {"title": "Fix login", "priority": "high", "labels": ["bug", "auth"],
      "assignees": [{"login": "ana", "role": "owner"}, {"login": "bo", "role": "reviewer"}],
      "due": {"year": 2026, "month": 3}},
     {"title": "Fix login", "priority": "hgh", "labels": ["bug", "bug"],
      "assignees": [{"login": "ana", "role": "boss"}, {"login": 7}], "due": {"month": 13}}),
    ("$defs+anyOf", DEFS,
     {"channel": {"kind": "sms", "number": "+5581999990000"}, "message": {"text": "hi"}, "retries": 2},
     {"channel": {"kind": "sms", "number": "81999"}, "message": {"txt": "hi"}, "retries": -1}),
]  # fmt: skip


def best(fn: Callable[[], Any], n: int) -> float:
    """Best microseconds per call over REPEATS runs of n calls (synchronous)."""
    for _ in range(min(n, 200)):
        fn()
    result = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        result = min(result, (time.perf_counter() - start) / n * 1e6)
    return result


def contenders(
    schema: dict[str, Any],
) -> dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]:
    from toolwire._validate import SchemaValidator

    ours = SchemaValidator(schema)
    out = {"toolwire": (ours.is_valid, ours.problems)}
    try:
        import jsonschema

        ref = jsonschema.Draft202012Validator(schema)
        out["jsonschema"] = (ref.is_valid, lambda x: list(ref.iter_errors(x)))
    except ImportError:
        pass
    try:
        import jsonschema_rs

        rs = jsonschema_rs.Draft202012Validator(schema)
        out["jsonschema-rs"] = (rs.is_valid, lambda x: list(rs.iter_errors(x)))
    except ImportError:
        pass
    return out


def validation(n: int) -> None:
    print(f"\nvalidation: us per call, best of {REPEATS} x {n}; 'explain' lists every problem")
    header = f"{'schema':>12} {'input':>8} {'library':>14} {'verdict':>9} {'explain':>9}"
    print(header)
    for name, schema, good, bad in CASES:
        for label, instance in (("valid", good), ("invalid", bad)):
            for lib, (verdict, explain) in contenders(schema).items():
                v = best(lambda verdict=verdict, x=instance: verdict(x), n)
                e = best(lambda explain=explain, x=instance: explain(x), n)
                print(f"{name:>12} {label:>8} {lib:>14} {v:9.2f} {e:9.2f}")


def strict_nulls(n: int) -> None:
    from toolwire import tool

    def search(query: str, limit: int | None = None, lang: str | None = None, page: int = 1) -> str:
        """Search.

        Args:
            query: Words.
            limit: Most results.
            lang: Language.
            page: Which page.
        """
        return query

    t = tool(search)
    assert t.strict
    texts = {
        "no null": json.dumps({"query": "open types", "limit": 5, "lang": "en"}),
        "'null' in a value": json.dumps({"query": "null pointer", "limit": 5, "lang": "en"}),
        "null for an optional": json.dumps({"query": "x", "limit": None, "lang": None}),
        "null to drop": json.dumps({"query": "x", "limit": 3, "lang": "en", "page": None}),
    }
    print(
        f"\nparse_args on a strict tool with optional parameters, us per call (best of {REPEATS})"
    )
    for label, text in texts.items():
        print(f"{label:>22}: {best(lambda text=text: t.parse_args(text), n):8.2f}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    report(asyncio.run(main(count)), count)
    validation(max(count // 4, 100))
    strict_nulls(max(count // 4, 100))
