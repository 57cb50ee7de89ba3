"""What tools cost in tokens: the API per dialect, the estimate, and `toolwire tools --cost`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire import ScriptedModel, ToolCost, tool, tool_cost
from toolwire.tokens import ESTIMATE, dialect_of, estimate_tokens

ROOT = Path(__file__).resolve().parents[1]


@tool
def get_weather(city: str, units: str = "metric") -> str:
    """Get the current weather for a city, in metric or imperial units."""
    return city


@tool
def ping() -> str:
    """Ping."""
    return "pong"


def test_each_definition_is_counted_for_its_dialect() -> None:
    for dialect in ("openai", "openai-strict", "anthropic", "gemini", "mcp"):
        costs = tool_cost([get_weather, ping], dialect)
        assert [c.name for c in costs] == ["get_weather", "ping"]
        assert all(c.dialect == dialect for c in costs)
        assert costs[0].tokens > costs[1].tokens > 0


def test_a_counter_given_is_used_on_the_wire_shape() -> None:
    seen: list[str] = []

    def counter(text: str) -> int:
        seen.append(text)
        return len(text)

    [cost] = tool_cost([ping], "anthropic", counter=counter)
    assert cost == ToolCost("ping", "anthropic", len(seen[0]), "counter")
    sent = json.loads(seen[0])
    assert (sent["name"], sent["description"]) == ("ping", "Ping.")
    assert sent["input_schema"]["type"] == "object"


def test_without_a_tokenizer_the_figure_is_a_stated_estimate() -> None:
    [cost] = tool_cost([get_weather], "gemini")
    assert cost.method == ESTIMATE
    assert estimate_tokens("") == 0
    assert estimate_tokens("weather") == 2  # seven letters: two pieces of up to six
    assert estimate_tokens('{"a":1}') == 5  # {"  a  ":  1  }


def test_targets_name_a_dialect_a_provider_or_a_model() -> None:
    assert dialect_of("anthropic") == "anthropic"
    assert dialect_of("google:gemini-2.5-pro") == "gemini"
    assert dialect_of("groq") == "openai"
    assert dialect_of("openai-strict") == "openai-strict"
    assert dialect_of(ScriptedModel()) == "openai"
    with pytest.raises(ValueError, match="names no dialect"):
        dialect_of("not a target!")


def test_the_cli_prints_each_tools_cost_per_dialect() -> None:
    server = f"{sys.executable} -m toolwire.cli serve --stdio --prebuilt"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "tools", "--stdio", server, "--cost", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    calculator = next(r for r in report["tools"] if r["name"] == "calculator")
    assert all(calculator[d] > 0 for d in ("openai", "anthropic", "gemini"))
    assert report["total"]["openai"] == sum(r["openai"] or 0 for r in report["tools"])
    assert set(report["methods"]) == {"openai", "anthropic", "gemini"}
    table = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "tools", "--stdio", server, "--cost"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert table.returncode == 0, table.stderr
    assert "calculator" in table.stdout and "total" in table.stdout
    assert "counted by" in table.stdout
