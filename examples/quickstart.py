"""toolwire quickstart: typed functions become tools every provider accepts.

Runs offline with no keys: it builds tools, shows the definition each provider would receive,
runs the agent loop with the offline test model (which calls every tool with arguments made from
its schema), then replays the kind of calls real models get wrong: bad arguments, broken JSON,
unknown tools.
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from enum import Enum

from toolwire import (
    Agent,
    ScriptedModel,
    TestModel,
    ToolAnnotations,
    ToolError,
    ToolRegistry,
    apply_middleware,
    tool,
    with_timeout,
)


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

    print("\n== The agent loop with the offline test model ==")
    result = await Agent(TestModel(), tools=registry.all()).run("Try every tool.")
    for entry in result.trace:
        print(
            f"  {entry.name}({entry.arguments}) -> {entry.result}  [{entry.duration * 1000:.1f} ms]"
        )
    print(f"  answer: {result.text}")
    print(f"  stop: {result.stop_reason}, requests: {result.usage.requests}")

    print("\n== Calls real models get wrong, answered so the model can fix them ==")
    mistakes = ScriptedModel(
        [
            [
                ("forecast", '{"city": "Atlantis", "day": "2026-12-01"}'),
                ("forecast", '{"city": 42, "day": "tomorrow", "hour": 9}'),
                ("convert", '{"amount": 100'),
                ("forcast", '{"city": "Recife"}'),
            ],
            [("forecast", '{"city": "Recife", "day": "2026-12-01", "unit": "fahrenheit"}')],
            "Recife will be warm.",
        ]
    )
    result = await Agent(mistakes, tools=registry.all()).run("Weather in Recife?")
    for entry in result.trace:
        status = "error" if entry.is_error else "ok"
        print(f"\n  {entry.name}({entry.arguments})\n  -> {status}: {entry.result}")
    print(f"\n  answer: {result.text} (stop: {result.stop_reason})")


if __name__ == "__main__":
    asyncio.run(main())
