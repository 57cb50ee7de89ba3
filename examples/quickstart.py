"""toolwire quickstart: typed functions become tools every provider accepts.

Runs offline with no keys: it builds tools, shows the definition each provider would receive,
and answers the kind of tool calls a model sends (good ones, broken ones, unknown tools).
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from enum import Enum

from toolwire import ToolAnnotations, ToolError, ToolRegistry, UnknownToolError, tool, with_timeout
from toolwire.middleware import apply_middleware


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def forecast(city: str, day: date, unit: Unit = Unit.CELSIUS) -> dict[str, object]:
    """Forecast the temperature of a city on a day.

    Args:
        city: City name, e.g. "Recife".
        day: The day, as YYYY-MM-DD.
        unit: Temperature unit.
    """
    if city.lower() == "atlantis":
        raise ToolError(f"No weather station in {city}; try a real city.")
    base = 24 + (day.toordinal() % 7)
    value = base if unit is Unit.CELSIUS else base * 9 / 5 + 32
    return {"city": city, "day": day.isoformat(), "temperature": value, "unit": unit.value}


@tool
async def convert(amount: float, rate: float) -> float:
    """Convert an amount of money at a given exchange rate."""
    return round(amount * rate, 2)


async def main() -> None:
    registry = ToolRegistry([forecast, apply_middleware(convert, with_timeout(2.0))])

    print("== Definitions as each provider receives them ==")
    for dialect in ("openai", "anthropic", "gemini", "mcp"):
        definition = registry.get("forecast").definition(dialect)
        print(f"[{dialect}] strict={definition.strict}")
        print("  " + json.dumps(definition.parameters, sort_keys=True))
        for change in definition.changes:
            print(f"  changed: {change}")

    print("\n== Tool calls as a model sends them ==")
    calls = [
        ("forecast", '{"city": "Recife", "day": "2026-12-01"}'),
        ("forecast", '{"city": "Recife", "day": "2026-12-01", "unit": "fahrenheit"}'),
        ("forecast", '{"city": "Atlantis", "day": "2026-12-01"}'),
        ("forecast", '{"city": 42, "day": "tomorrow", "hour": 9}'),
        ("convert", '{"amount": 100, "rate": 5.31}'),
        ("convert", '{"amount": 100'),
        ("forcast", '{"city": "Recife"}'),
    ]

    async def answer(name: str, arguments: str) -> str:
        try:
            chosen = registry.get(name)
        except UnknownToolError as exc:
            return f"error: {exc}"
        result = await chosen.invoke(arguments)
        return ("error: " if result.is_error else "ok: ") + result.text

    answers = await asyncio.gather(*(answer(n, a) for n, a in calls))
    for (name, arguments), text in zip(calls, answers, strict=True):
        print(f"\n{name}({arguments})\n  -> {text}")


if __name__ == "__main__":
    asyncio.run(main())
