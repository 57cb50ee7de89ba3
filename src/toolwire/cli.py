"""The `toolwire` command: serve tools over MCP, inspect and call MCP servers, run the agent.

Needs the `cli` and `mcp` extras (`pip install 'toolwire[cli,mcp]'`). Errors go to stderr with a
non-zero exit code (1 for failures, 2 for bad usage) and no traceback unless `--debug` (given
anywhere on the command line).

Each command lives in its own module, loaded only when that command runs: `toolwire --help`,
`--version` and shell completion know the commands by name and one-line help alone, so they start
without the agent, the tools or the MCP client, and each command pays only for what it uses.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup

from . import __version__
from ._cli_common import exit_interrupted, hide_flag_types, out, run_command, state

if TYPE_CHECKING:
    from ._serve_app import running_server

__all__ = ["COMMANDS", "app", "console_main", "load_command", "main", "running_server"]


class _Command(NamedTuple):
    module: str  # relative to this package
    register: str  # a function of `module` that adds the command to a typer app
    help: str  # the first paragraph of the command's help, for the list in `toolwire --help`


COMMANDS: dict[str, _Command] = {
    "serve": _Command(
        "._cli_serve",
        "add_serve",
        "Serve tools over MCP (Streamable HTTP, or stdio); stop with Ctrl-C.",
    ),
    "web": _Command(
        "._cli_web",
        "add_web",
        "Open a local page to chat with an agent, see each run's timeline, inspect MCP servers "
        "and (with --runs) steer durable runs; Ctrl-C stops.",
    ),
    "tools": _Command("._cli_mcp", "add_mcp_commands", "List an MCP server's tools."),
    "call": _Command(
        "._cli_mcp",
        "add_mcp_commands",
        "Call one tool of an MCP server and print its result (exit 1 when it is an error).",
    ),
    "run": _Command(
        "._cli_run",
        "add_run_commands",
        "Run the agent: a line per tool call, the answer as it streams, then usage and cost.",
    ),
    "demo": _Command(
        "._cli_run",
        "add_run_commands",
        "The main job: serve the prebuilt tools over MCP, discover them, run the agent, shut down.",
    ),
    "runs": _Command(
        "._cli_runs",
        "add_runs",
        "See and steer durable runs: list, show, approve, deny, cancel, resume, recover, start.",
    ),
}
"""Every command, in the order `toolwire --help` lists them."""


def load_command(name: str) -> Any:
    """The click command `name`, built from its module (imported now)."""
    entry = COMMANDS[name]
    holder = typer.Typer()
    register = getattr(importlib.import_module(entry.module, __package__), entry.register)
    register(holder)
    return hide_flag_types(typer.main.get_group(holder).commands[name])


class _LazyGroup(TyperGroup):
    """The root group: a stand-in per command for help and completion, the command itself to run."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for name, entry in COMMANDS.items():
            self.commands[name] = TyperCommand(name, help=entry.help)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if name in COMMANDS and isinstance(command, TyperCommand) and command.callback is None:
            command = self.commands[name] = load_command(name)
        return name, command, rest


app = typer.Typer(
    name="toolwire",
    cls=_LazyGroup,
    help="Wire Python functions and MCP servers to any LLM.",
    epilog=(
        'Example: toolwire run "What is 17% of 2,340?" --prebuilt   (offline; see also: '
        "toolwire demo). Shell completion: toolwire --install-completion"
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        out.print(f"toolwire {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks (also after the command).")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    state["debug"] = state["debug"] or debug


def __getattr__(name: str) -> Any:
    # `running_server` is re-exported for programs and tests that serve tools in-process; loaded
    # on first use, as it brings the tools and the server with it.
    if name == "running_server":
        value = importlib.import_module("._serve_app", __package__).running_server
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `toolwire` command; returns the exit code."""
    return run_command(app, argv)


def console_main() -> None:
    """What the installed `toolwire` script runs."""
    code = main()
    exit_interrupted(code)
    raise SystemExit(code)


if __name__ == "__main__":
    console_main()
