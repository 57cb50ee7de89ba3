"""`toolwire serve` reads a plain command line without typer (`_cli_quick`): the same arguments
as the typer command would pass, and every other command line left to typer (issue 28)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from toolwire._cli_quick import Declared, quick_options, typer_command
from toolwire._cli_serve import SERVE_OPTIONS, TOKEN_ENV, serve

ROOT = Path(__file__).resolve().parents[1]


def _typer_arguments(argv: list[str]) -> dict[str, Any]:
    """The keyword arguments the typer `serve` command passes for `argv`."""
    got: dict[str, Any] = {}
    command = typer_command(serve, SERVE_OPTIONS)

    @functools.wraps(command)
    def record(**options: Any) -> None:
        got.update(options)

    app = typer.Typer(add_completion=False)

    @app.callback()
    def _root() -> None:
        pass

    app.command("serve")(record)
    typer.main.get_command(app).main(
        args=["serve", *argv], standalone_mode=False, prog_name="toolwire"
    )
    return got


TAKEN = [
    [],
    ["--prebuilt", "--port", "8000"],
    ["--prebuilt", "--port=0", "--host", "::1"],
    ["--tools", "a:b", "--tools=c.py:d", "--stateless", "--workers", "3"],
    ["--stateless", "--no-stateless"],
    ["--upload-timeout", "2.5", "--session-idle-timeout", "0.001", "--max-body-bytes", "1"],
    ["--token", "abc", "--token-file", "secret.txt"],
    ["--auth-issuer", "https://a", "--auth-scope", "s1", "--auth-scope", "s2"],
    ["--auth-tool-scope", "t=a b", "--auth-audience", "x", "--auth-introspection-client", "c"],
    ["--max-sessions", "5", "--allowed-host", "*", "--allow-anonymous", "--stdio"],
    ["--port", "1", "--port", "2"],
]

LEFT_TO_TYPER = [
    ["--help"],
    ["--bogus"],
    ["extra"],
    ["--port"],
    ["--port", "007"],
    ["--port", "-1"],
    ["--port", "1e3"],
    ["--workers", "0"],
    ["--session-idle-timeout", "0.0001"],
    ["--prebuilt=1"],
    ["--no-prebuilt"],
    ["--", "--prebuilt"],
    ["-h"],
]


@pytest.mark.parametrize("token", [None, "from-env", ""])
@pytest.mark.parametrize("argv", TAKEN)
def test_a_plain_command_line_gives_what_typer_gives(
    argv: list[str], token: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if token is None:
        monkeypatch.delenv(TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(TOKEN_ENV, token)
    quick = quick_options(serve, SERVE_OPTIONS, argv)
    assert quick is not None
    assert quick == _typer_arguments(argv)
    assert quick["token"] == ("abc" if "--token" in argv else token or None)


@pytest.mark.parametrize("argv", LEFT_TO_TYPER)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert quick_options(serve, SERVE_OPTIONS, argv) is None


def test_shell_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_TOOLWIRE_COMPLETE", "complete_bash")
    assert quick_options(serve, SERVE_OPTIONS, ["--prebuilt"]) is None


def test_every_parameter_is_declared_once() -> None:
    def command(port: int = 1, host: str = "") -> None:
        pass

    with pytest.raises(TypeError, match="declare every parameter"):
        typer_command(command, {"port": Declared("Port.")})


def _serve_console(argv: list[str]) -> subprocess.CompletedProcess[str]:
    # As the installed script runs it, reporting whether typer was loaded on the way.
    code = (
        "import sys\n"
        "from toolwire._console import main\n"
        f"sys.argv = ['toolwire', *{argv!r}]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('typer loaded:', 'typer' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "100"},
    )


def test_serve_from_a_plain_command_line_starts_without_typer() -> None:
    done = _serve_console(["serve", "--port", "0"])
    assert done.returncode == 1
    assert "nothing to serve" in done.stderr
    assert done.stdout.strip() == "typer loaded: False"


def test_serve_help_and_usage_errors_are_typers() -> None:
    shown = _serve_console(["serve", "--help"])
    assert shown.returncode == 0
    assert "Usage: toolwire serve [OPTIONS]" in shown.stdout
    assert "--auth-introspection-client" in shown.stdout
    assert "TOOLWIRE_SERVE_TOKEN" in shown.stdout
    assert shown.stdout.strip().endswith("typer loaded: True")
    wrong = _serve_console(["serve", "--workers", "0"])
    assert wrong.returncode == 2
    assert "--workers" in wrong.stderr and "greater than or equal to 1" in wrong.stderr
