"""What the `toolwire` command loads to start: each command only what it uses (issue 28)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from toolwire.cli import COMMANDS, app, load_command

ROOT = Path(__file__).resolve().parents[1]

# Run in a fresh interpreter: the modules a start-up loads, as the real command loads them.
LOADED = """
import sys
from toolwire.cli import main
code = main({argv!r})
heavy = ("toolwire.agent", "toolwire.tools", "toolwire.prebuilt._catalog", "toolwire.mcp.client")
print("loaded:", sorted(name for name in heavy if name in sys.modules), "exit:", code)
"""


def _loaded(argv: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", LOADED.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_help_and_version_start_without_the_agent_tools_or_mcp() -> None:
    assert _loaded(["--help"]) == "loaded: [] exit: 0"
    assert _loaded(["--version"]) == "loaded: [] exit: 0"


def test_importing_the_egress_guard_builds_no_prebuilt_tool() -> None:
    # The MCP client's OAuth guard imports `_egress`: it must not build the 18 prebuilt tools.
    code = (
        "import sys, toolwire.prebuilt._egress\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolwire.prebuilt.')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['toolwire.prebuilt._egress']"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_listed_command_is_the_one_its_module_builds(name: str) -> None:
    command = load_command(name)
    assert command.name == name
    # The one-line help `toolwire --help` shows without loading the command is the command's own.
    real = " ".join((command.help or "").split("\n\n")[0].split())
    assert COMMANDS[name].help == real
    assert command.epilog and command.epilog.startswith(f"Example: toolwire {name}")


def test_the_root_lists_every_command_in_order() -> None:
    root = typer.main.get_command(app)
    assert list(getattr(root, "commands", {})) == list(COMMANDS)
