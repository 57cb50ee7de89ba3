"""A core-only install, as `pip install toolwire` makes it: each missing extra is one line that
names the `pip install` to run, and the core works without any of them."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pip(target: Path, *args: str) -> None:
    # This environment's pip installs into the new one (`--python`): no pip to bootstrap there.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(target), "install", "--quiet", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def core_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding toolwire without extras; yields its bin folder."""
    venv = tmp_path_factory.mktemp("core-only") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _pip(venv / "bin" / "python", str(ROOT))
    return venv / "bin"


def _python(bin_dir: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [str(bin_dir / "python"), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=bin_dir,  # not the project: the installed package, not src/, is imported
    )


CATCH = """
import toolwire
try:
    {statement}
except toolwire.MissingDependencyError as exc:
    print(type(exc).__name__, exc.package, exc.extra)
    print(exc)
"""


def test_a_core_only_install_names_the_extra_each_part_needs(core_only: Path) -> None:
    script = subprocess.run(
        [str(core_only / "toolwire"), "run", "hi"], capture_output=True, text=True, timeout=120
    )
    assert script.returncode == 1
    assert script.stderr == (
        "error: the 'typer' package, needed by the toolwire command, is not installed: "
        "pip install 'toolwire[cli]'\n"
    )
    cases = {
        "import toolwire.mcp": ("mcp", "the 'mcp' package, needed by toolwire.mcp,"),
        'toolwire.model("openai:gpt-4.1-mini")': (
            "openai",
            "the 'openai' package, needed by the openai models,",
        ),
        'toolwire.model("groq:llama")': (
            "openai",
            "the 'openai' package, needed by the groq models,",
        ),
        'toolwire.model("anthropic:claude-sonnet-4-5")': (
            "anthropic",
            "the 'anthropic' package, needed by the anthropic models,",
        ),
    }
    for statement, (extra, start) in cases.items():
        done = _python(core_only, CATCH.format(statement=statement))
        assert done.returncode == 0, done.stderr
        kind, message = done.stdout.splitlines()
        assert kind.startswith("MissingDependencyError") and kind.endswith(f" {extra}")
        # The extra is checked before the key: no key is set here, yet the extra is named.
        assert message.startswith(start), message
        assert message.endswith(f"pip install 'toolwire[{extra}]'"), message


def test_the_core_runs_an_agent_without_any_extra(core_only: Path) -> None:
    code = (
        "import sys, toolwire\n"
        "from toolwire import Agent, TestModel, tool\n"
        "@tool\n"
        "def add(a: int, b: int) -> int:\n"
        '    """Add two numbers."""\n'
        "    return a + b\n"
        "result = Agent(TestModel(), tools=[add]).run_sync('add')\n"
        "print(result.text, result.stop_reason)\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'mcp', 'typer') if m in sys.modules))\n"
    )
    done = _python(core_only, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ['{"add": "2"} completed', "[]"]


def test_with_the_cli_extra_alone_mcp_commands_name_the_mcp_extra(core_only: Path) -> None:
    _pip(core_only / "python", "typer>=0.12", "rich>=13", "uvicorn>=0.30")
    done = subprocess.run(
        [str(core_only / "toolwire"), "tools", "http://127.0.0.1:9/mcp"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "error: the 'mcp' package, needed by toolwire.mcp, is not installed: "
        "pip install 'toolwire[mcp]'\n"
    )
    offline = subprocess.run(
        [str(core_only / "toolwire"), "run", "What is 17% of 2,340?", "--prebuilt"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert offline.returncode == 0, offline.stderr
    assert offline.stdout == "Here is what the tools found:\n- calculator: 397.8\n"


def test_installing_the_extra_a_message_names_makes_the_error_go(core_only: Path) -> None:
    # The one real install behind tests/test_install_hints.py: `--trace` names the `otel` extra.
    code = "from toolwire._cli_trace import SpanTree\nSpanTree()\nprint('traced')\n"
    before = _python(core_only, CATCH.format(statement=code.replace("\n", "; ")))
    assert before.stdout.splitlines() == [
        "MissingDependencyError opentelemetry.sdk otel",
        "the 'opentelemetry.sdk' package, needed by --trace, is not installed: "
        "pip install 'toolwire[otel]'",
    ], before.stderr
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    _pip(core_only / "python", *extras["optional-dependencies"]["otel"])
    after = _python(core_only, code)
    assert after.returncode == 0, after.stderr
    assert after.stdout == "traced\n"
