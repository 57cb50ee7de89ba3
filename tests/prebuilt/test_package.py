"""The public surface of toolwire.prebuilt: exports, defaults, schemas, available()."""

from __future__ import annotations

import pytest

import toolwire.prebuilt as prebuilt
from toolwire.prebuilt import (
    _egress,
    _html,
    _http,
    arithmetic,
    brazil,
    clock,
    search,
    weather,
    web,
    wikipedia,
)
from toolwire.tools import FunctionTool

MODULES = [
    prebuilt,
    _egress,
    _html,
    _http,
    arithmetic,
    brazil,
    clock,
    search,
    weather,
    web,
    wikipedia,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_module_has_an_explicit_sorted_all(module: object) -> None:
    names = module.__all__  # type: ignore[attr-defined]
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    for name in names:
        assert hasattr(module, name), name


def default_tools() -> list[FunctionTool]:
    return [
        value
        for name in prebuilt.__all__
        if isinstance(value := getattr(prebuilt, name), FunctionTool)
    ]


def test_default_instances_are_named_after_themselves() -> None:
    tools = default_tools()
    assert len(tools) >= 18
    for tool in tools:
        assert getattr(prebuilt, tool.name) is tool


@pytest.mark.parametrize("tool", default_tools(), ids=lambda t: t.name)
def test_every_tool_is_described_and_annotated(tool: FunctionTool) -> None:
    assert len(tool.description) > 40
    assert tool.annotations.title
    assert tool.annotations.read_only_hint is not None
    assert tool.annotations.open_world_hint is not None
    for name, schema in tool.parameters["properties"].items():
        assert schema.get("description"), f"{tool.name}.{name} has no description"


@pytest.mark.parametrize("tool", default_tools(), ids=lambda t: t.name)
@pytest.mark.parametrize("dialect", ["openai", "anthropic", "gemini", "mcp"])
def test_every_tool_compiles_for_every_dialect(tool: FunctionTool, dialect: str) -> None:
    definition = tool.definition(dialect)  # type: ignore[arg-type]
    assert definition.name == tool.name


def test_available_depends_on_the_environment() -> None:
    bare = {t.name for t in prebuilt.available({})}
    assert "calculator" in bare
    assert "br_cep_lookup" in bare
    assert "wikipedia_summary" in bare
    assert "brave_search" not in bare
    assert "http_request" not in bare
    keyed = {t.name for t in prebuilt.available({"BRAVE_API_KEY": "x", "OPENWEATHER_API_KEY": "y"})}
    assert keyed - bare == {"brave_search", "openweather_current", "openweather_forecast"}
    blank = {t.name for t in prebuilt.available({"TAVILY_API_KEY": "  "})}
    assert "tavily_search" not in blank


def test_available_reads_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-x")
    assert "tavily_search" in {t.name for t in prebuilt.available()}
    monkeypatch.delenv("TAVILY_API_KEY")
    assert "tavily_search" not in {t.name for t in prebuilt.available()}


def test_import_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolwire.prebuilt; "
        "bad = [m for m in ('openai', 'anthropic', 'mcp', 'google.genai') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
