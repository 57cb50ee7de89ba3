"""What every `toolwire` command shares: the two consoles, the `--debug` switch, running a
command's async body, and running a command with its errors reported in one line.

Kept light (no tools, no agent, and no typer until a typer command runs): `cli` imports it to
answer `--help` and `--version`, and `toolwire serve` runs from a plain command line without
typer (`_cli_quick`). Each command's module adds what that command needs (`_cli_tools` loads
the tools a command names; `_cli_options` holds the typer options several commands share).

The lowest floor of the CLI: the root (`cli`), serving (`_cli_serve`, `_serve_workers`), the MCP
commands (`_cli_connect`, `_cli_mcp`) and the agent commands (`_cli_agent`, `_cli_run`) build on
it and never on each other's upper floors.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from rich.console import Console

from .errors import MissingApiKeyError, ToolwireError

if TYPE_CHECKING:
    import typer

__all__ = [
    "CliError",
    "CommandExit",
    "command_args",
    "err",
    "exit_interrupted",
    "exit_now",
    "hide_flag_types",
    "out",
    "preview",
    "resolve_model",
    "run_async",
    "run_command",
    "run_guarded",
    "run_interruptible",
    "run_typer",
    "state",
]


class CliError(Exception):
    """A failure the user can fix; printed without a traceback."""


class CommandExit(Exception):
    """Ends a command with `code` (typer's `Exit`, for code that runs without typer)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# soft_wrap: long results stay on one line (rich would otherwise break JSON at the width).
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)
state: dict[str, bool] = {"debug": False}
"""`debug`: show tracebacks (`--debug` anywhere on the command line)."""


def preview(text: str, limit: int = 120) -> str:
    """`text` on one line, cut at `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def resolve_model(spec: str, base_url: str | None, api_key: str | None) -> tuple[Any, str]:
    """The model for `--model`, `--base-url` and `--api-key`, and how to name it to the user.

    A bare model name with `--base-url` means an OpenAI-compatible server.
    """
    from ._offline import OFFLINE_DESCRIPTION, offline_model
    from .models import model

    if spec == "test":
        if base_url is not None or api_key is not None:
            raise CliError("--base-url and --api-key are for a provider's model, not 'test'")
        return offline_model(), f"test, {OFFLINE_DESCRIPTION}"
    if ":" not in spec and base_url is not None:
        spec = f"openai-compatible:{spec}"
    provider = spec.partition(":")[0]
    options: dict[str, Any] = {}
    if base_url is not None:
        # Azure names its address the resource endpoint; --endpoint and --base-url both give it.
        options["endpoint" if provider == "azure" else "base_url"] = base_url
    if api_key is not None:
        options["api_key"] = api_key
    try:
        resolved = model(spec, **options)
    except MissingApiKeyError as exc:
        raise CliError(
            f"{exc.provider} needs an API key: set {exc.env_var} or pass --api-key"
        ) from exc
    except ValueError as exc:
        raise CliError(str(exc).replace("pass endpoint=...", "pass --endpoint URL")) from exc
    return resolved, spec + (f" at {base_url}" if base_url else "")


def run_async(main: Callable[[], Any]) -> Any:
    """`main()` on an event loop; Ctrl-C prints `stopped` and exits with 130."""
    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        err.print("stopped")
        raise CommandExit(130) from None


def run_interruptible(
    main: Callable[[], Awaitable[Any]], on_interrupt: Callable[[], None] | None = None
) -> Any:
    """`main()` on an event loop, for commands that run tools; exits with 130 on Ctrl-C.

    The first Ctrl-C cancels `main` and returns as soon as it has unwound: a synchronous tool's
    thread is abandoned (Python cannot interrupt it) and its call gets a cancelled result.
    `on_interrupt` then reports what was stopped. A second Ctrl-C exits at once.
    """
    interrupted = False

    async def guarded() -> Any:
        nonlocal interrupted
        result: Any = None
        work = anyio.CancelScope()
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    nonlocal interrupted
                    async for _ in signals:
                        if interrupted:  # the second: no more unwinding
                            err.print("stopped")
                            exit_now(130)
                        interrupted = True
                        err.print("stopping (Ctrl-C again to quit at once)")
                        work.cancel()

                group.start_soon(watch)
                with work:
                    result = await main()
                group.cancel_scope.cancel()
        return result

    try:
        result = anyio.run(guarded)
    except KeyboardInterrupt:  # before the handler above was in place
        interrupted = True
        result = None
    if not interrupted:
        return result
    err.print("stopped")
    if on_interrupt is not None:
        on_interrupt()
    raise CommandExit(130)


def exit_now(code: int) -> typing.NoReturn:
    """Flush the output and end the process without waiting for other threads.

    For an interrupted command only: an abandoned tool thread would otherwise keep the process
    alive until the tool returns, and a Ctrl-C during that wait prints a traceback from
    `threading`.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def exit_interrupted(code: int) -> None:
    """After an interrupted command (code 130): end the process now if a thread still runs."""
    main = threading.main_thread()
    if code == 130 and any(
        t.is_alive() and not t.daemon and t is not main for t in threading.enumerate()
    ):
        exit_now(code)


def command_args(argv: Sequence[str] | None = None) -> list[str]:
    """The command line (the process's arguments by default) without `--debug`, which is taken
    anywhere before a `--` and sets `state["debug"]`."""
    args = list(sys.argv[1:] if argv is None else argv)
    end = args.index("--") if "--" in args else len(args)
    state["debug"] = "--debug" in args[:end]
    return [a for i, a in enumerate(args) if i >= end or a != "--debug"]


def run_command(app: typer.Typer, argv: Sequence[str] | None = None) -> int:
    """Run the typer `app` on `argv` (the process's arguments by default); the exit code.

    `--debug` is taken anywhere before a `--`; without it a user's error prints one line.
    """
    args = command_args(argv)
    return run_guarded(lambda: run_typer(app, args))


def run_typer(app: typer.Typer, args: list[str]) -> Any:
    """Run the typer `app` on `args` (`--debug` already taken out); typer's exits and aborts
    become `CommandExit`."""
    import typer  # the cli extra

    try:
        try:
            command = hide_flag_types(typer.main.get_command(app))
            return command.main(args=args, standalone_mode=False, prog_name="toolwire")
        except BaseExceptionGroup as group:
            raise _unwrap(group) from None
    except typer.Exit as exc:
        raise CommandExit(exc.exit_code) from None
    except typer.Abort:
        raise CommandExit(130) from None


def run_guarded(call: Callable[[], Any]) -> int:
    """Run a command (`call`) and return its exit code: an error the user can fix (or any
    error, without `--debug`) prints one line and gives 1, Ctrl-C gives 130."""
    try:
        try:
            code = call()
        except BaseExceptionGroup as group:
            raise _unwrap(group) from None
        if isinstance(code, int):  # a command's typer.Exit(n) comes back as its return value
            return code
    except CommandExit as exc:
        return exc.code
    except (CliError, ToolwireError, OSError) as exc:
        if state["debug"]:
            raise
        err.print(f"error: {exc}", markup=False)
        return 1
    except (KeyboardInterrupt, EOFError):  # as typer treats them while a command runs
        return 130
    except Exception as exc:  # usage errors (typer's own click) and anything unexpected
        show = getattr(exc, "show", None)
        if callable(show) and isinstance(getattr(exc, "exit_code", None), int):
            show()
            return int(getattr(exc, "exit_code"))  # noqa: B009 - typed by the check above
        if state["debug"]:
            raise
        err.print(f"error: {type(exc).__name__}: {exc}", markup=False)
        return 1
    return 0


def _unwrap(exc: BaseException) -> BaseException:
    # Task groups wrap a single failure in an ExceptionGroup; the user wants the failure.
    inner = typing.cast(tuple[BaseException, ...], getattr(exc, "exceptions", ()))
    if isinstance(exc, BaseExceptionGroup) and len(inner) == 1:
        return _unwrap(inner[0])
    return typing.cast(BaseException, exc)


def hide_flag_types(command: Any) -> Any:
    """`command` with no type shown for its on/off flags: `--prebuilt` takes no `<bool>`."""
    import typer  # the cli extra

    help_option = command.get_help_option(typer.Context(command))  # made once, then cached
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        hide_flag_types(sub)
    return command
