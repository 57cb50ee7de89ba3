"""Tools whose parameters are all scalars get their schema and validator without a `TypeAdapter`
(`toolwire._schema._scalar_signature`): the same schema, byte for byte, and the same validation as
the Pydantic path, which a hint wrapped in `Annotated` (unknown metadata, ignored by Pydantic)
still takes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Annotated, Any

import pydantic
import pytest

from toolwire import tool
from toolwire._schema import inspect_function, takes_context
from toolwire.tools import ToolContext

pytestmark = pytest.mark.anyio


def fast(
    city: str,
    days: int,
    metric: bool = True,
    ratio: float = 0.5,
    note: str | None = None,
    count: int | None = 3,
) -> str:
    """Forecast the weather.

    Args:
        city: City name.
        days: Days ahead.
        note: A note.
    """
    return city


def slow(
    city: Annotated[str, "slow"],
    days: Annotated[int, "slow"],
    metric: Annotated[bool, "slow"] = True,
    ratio: Annotated[float, "slow"] = 0.5,
    note: Annotated[str | None, "slow"] = None,
    count: Annotated[int | None, "slow"] = 3,
) -> str:
    """Forecast the weather.

    Args:
        city: City name.
        days: Days ahead.
        note: A note.
    """
    return city


def bare() -> int:
    return 1


def bare_slow(ctx: ToolContext) -> int:
    return 1


INPUTS: list[Any] = [
    {"city": "Recife", "days": 3},
    {"city": "Recife", "days": "3", "metric": "yes", "ratio": "1e3", "note": None},
    {"city": "Recife", "days": 3.5},
    {"city": 1, "days": True},
    {"days": 3, "extra": 1},
    {"city": "x", "days": 2, "count": None, "ratio": float("inf")},
    {"city": None, "days": None, "metric": 2},
    [],
    "text",
]


def _outcome(validate: Any, value: Any) -> Any:
    try:
        return ("ok", validate(value))
    except pydantic.ValidationError as exc:  # the same error, type and details, either way
        return (exc.title.split("_")[-1], exc.errors(include_url=False))  # `fast_arguments`


def test_scalar_signature_matches_the_pydantic_path() -> None:
    one, two = inspect_function(fast, ToolContext), inspect_function(slow, ToolContext)
    assert type(one.validator).__name__ == "SchemaValidator"
    assert json.dumps(one.parameters) == json.dumps(two.parameters)
    assert one.output_schema is None and two.output_schema is None
    for value in INPUTS:
        assert _outcome(one.validator.validate_python, value) == _outcome(
            two.validator.validate_python, value
        )
        text = json.dumps(value)
        assert _outcome(one.validator.validate_json, text) == _outcome(
            two.validator.validate_json, text
        )


def test_no_parameters_and_context_only_match() -> None:
    assert json.dumps(inspect_function(bare, ToolContext).parameters) == json.dumps(
        inspect_function(bare_slow, ToolContext).parameters
    )


@pytest.mark.parametrize("arguments", ['{"city": "R", "days": 2}', '{"city": "R"}'])
async def test_tool_with_scalars_runs_and_reports_as_before(arguments: str) -> None:
    made = [tool(fast, name="forecast"), tool(slow, name="forecast")]
    results = [await t.invoke(arguments) for t in made]
    assert results[0] == results[1]


def test_a_scalar_tool_loads_no_pydantic_schema_generation() -> None:
    # What made a script's first run heavy: the TypeAdapter machinery and its plugin lookup.
    code = (
        "import sys\n"
        "from toolwire import Agent, tool, model\n"
        "def forecast(city: str, days: int, metric: bool = True) -> str:\n"
        "    '''Forecast.\\n\\n    Args:\\n        city: City name.\\n        days: Days.\\n    '''\n"
        "    return city\n"
        "tool(forecast)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic.', 'importlib.metadata'))"
        " and m.split('.')[1] in ('json_schema', 'type_adapter', 'main', 'fields', 'metadata')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _plain(city: str, days: int = 1) -> str:
    return city


def _with_context(ctx: ToolContext, city: str) -> str:
    return city


def _optional_context(city: str, ctx: ToolContext | None = None) -> str:
    return city


def _annotated_context(city: str, ctx: Annotated[ToolContext, "the call"]) -> str:
    return city


def _not_a_context(city: str, ctx: str) -> str:
    return city


@pytest.mark.parametrize(
    "function", [_plain, _with_context, _optional_context, _annotated_context, _not_a_context]
)
def test_takes_context_agrees_with_the_full_inspection(function: Callable[..., Any]) -> None:
    # What an MCP server asks of every tool it serves, without building its schema again.
    found = inspect_function(function, ToolContext).context_param is not None
    assert takes_context(function, ToolContext) is found
    assert found is (function not in (_plain, _not_a_context))
