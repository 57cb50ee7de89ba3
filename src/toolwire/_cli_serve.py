"""`toolwire serve`: serve tools over MCP, on stdio, on one HTTP port, or on one port from
several worker processes (`--workers`, in `_serve_workers`).

`cli` registers the command (`add_serve`); its options, their checks and the choice between the
ways of serving live here, over `_serve_app` (an app under uvicorn) and `_serve_workers`. The
installed `toolwire` script runs `toolwire serve ...` through `console_serve`, a command line of
this command alone: a server starts without loading the agent and the other commands.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ._cli_common import (
    CliError,
    command_args,
    err,
    exit_interrupted,
    out,
    run_async,
    run_guarded,
    run_typer,
    state,
)
from ._cli_quick import Declared, quick_options, typer_command
from ._cli_tools import load_tools, prebuilt_tools
from ._serve_app import http_listener, http_server
from ._serve_workers import WorkerPlan, supervise
from .tools import Tool

if TYPE_CHECKING:
    import typer

__all__ = ["SERVE_OPTIONS", "TOKEN_ENV", "add_serve", "console_serve", "serve"]

TOKEN_ENV = "TOOLWIRE_SERVE_TOKEN"
_INTROSPECTION_ENV = "TOOLWIRE_INTROSPECTION_SECRET"

SERVE_OPTIONS: dict[str, Declared] = {
    "tools": Declared("module:attribute, repeatable.", ("--tools",)),
    "prebuilt": Declared("Serve the prebuilt tools.", ("--prebuilt",)),
    "host": Declared("Interface to listen on (default 127.0.0.1)."),
    "port": Declared("Port, 0 picks a free one (default 8000)."),
    "stdio": Declared("Serve over stdin/stdout.", ("--stdio",)),
    "token": Declared(
        "Require this bearer token (better from the environment: argv shows in ps).",
        envvar=TOKEN_ENV,
    ),
    "token_file": Declared("Require the bearer token held in this file."),
    "allow_anonymous": Declared(
        "Serve beyond loopback without a token: anyone who reaches the port may call.",
        ("--allow-anonymous",),
    ),
    "allowed_host": Declared(
        "A Host name clients may use besides the local ones, repeatable; '*' for any.",
        ("--allowed-host",),
    ),
    "stateless": Declared("No sessions (for several workers)."),
    "workers": Declared(
        "Serve the port from this many processes (needs --stateless; POSIX only).", min=1
    ),
    "max_sessions": Declared("Sessions open at once; past it new ones get 503.", min=1),
    "session_idle_timeout": Declared("Seconds before an idle session is closed.", min=0.001),
    "upload_timeout": Declared("Seconds a client may take to send a request.", min=0.001),
    "max_body_bytes": Declared("The largest request body accepted.", min=1),
    "auth_issuer": Declared(
        "Accept OAuth access tokens from this authorization server (its issuer URL).",
        panel="OAuth",
    ),
    "auth_resource": Declared(
        "This server's public MCP URL, the tokens' audience (default: the URL served).",
        panel="OAuth",
    ),
    "auth_scope": Declared("A scope every request needs, repeatable.", panel="OAuth"),
    "auth_tool_scope": Declared(
        "'TOOL=SCOPE [SCOPE...]': scopes a tool's calls need too, repeatable.", panel="OAuth"
    ),
    "auth_audience": Declared(
        "An accepted token audience in place of the resource URL, repeatable.", panel="OAuth"
    ),
    "auth_introspection_client": Declared(
        f"Check tokens by introspection as this client (secret in ${_INTROSPECTION_ENV}).",
        panel="OAuth",
    ),
}
"""`serve`'s parameters as options: declared as data, so that a plain command line starts a
server without typer (`_cli_quick`)."""


def serve(
    tools: list[str] | None = None,
    prebuilt: bool = False,
    host: str | None = None,
    port: int | None = None,
    stdio: bool = False,
    token: str | None = None,
    token_file: Path | None = None,
    allow_anonymous: bool = False,
    allowed_host: list[str] | None = None,
    stateless: bool = False,
    workers: int | None = None,
    max_sessions: int = 10_000,
    session_idle_timeout: float = 1800.0,
    upload_timeout: float = 10.0,
    max_body_bytes: int = 4 * 1024 * 1024,
    auth_issuer: str | None = None,
    auth_resource: str | None = None,
    auth_scope: list[str] | None = None,
    auth_tool_scope: list[str] | None = None,
    auth_audience: list[str] | None = None,
    auth_introspection_client: str | None = None,
) -> None:
    """Serve tools over MCP (Streamable HTTP, or stdio); stop with Ctrl-C."""
    secret = _serve_token(token, token_file)
    oauth = _serve_oauth(
        issuer=auth_issuer,
        resource=auth_resource,
        scopes=auth_scope or [],
        tool_scopes=auth_tool_scope or [],
        audiences=auth_audience or [],
        introspection_client=auth_introspection_client,
    )
    if oauth is not None and (secret is not None or stdio):
        raise CliError("--auth-issuer is for HTTP and replaces the token: give one or the other")
    # A token set in the environment for HTTP serving must not stop a stdio one.
    given_token = token_file is not None or (
        token is not None and token != os.environ.get(TOKEN_ENV)
    )
    http_options = host is not None or port is not None or allowed_host or workers is not None
    if stdio and (http_options or given_token or stateless):
        raise CliError(
            "--host, --port, --token, --allowed-host, --stateless and --workers are for HTTP; "
            "--stdio takes none"
        )
    if workers is not None:
        _check_workers(stateless)
    chosen: list[Tool] = []
    if workers is None:
        chosen = load_tools(tools or []) + (prebuilt_tools() if prebuilt else [])
    # With workers, each worker loads the tools itself and the first to fail says why.
    if not chosen and (workers is None or not (tools or prebuilt)):
        raise CliError("nothing to serve: pass --prebuilt and/or --tools module:attribute")
    if stdio:
        from .mcp import serve as serve_mcp  # the mcp extra

        async def over_stdio() -> None:
            await serve_mcp(chosen, stdio=True)

        run_async(over_stdio)
        return

    from .mcp._base import is_loopback  # the mcp extra

    host = "127.0.0.1" if host is None else host
    if secret is None and oauth is None and not is_loopback(host):
        if not allow_anonymous:
            raise CliError(
                f"refusing to serve on {host} without a token: anyone who reaches the port could "
                f"call the tools. Set one ({TOKEN_ENV}, --token-file or --token), or pass "
                "--allow-anonymous to serve without one anyway."
            )
        err.print(
            f"warning: serving on {host} without a token; anyone who can reach the port may "
            "call these tools",
            markup=False,
        )
    listen: dict[str, Any] = {
        "host": host,
        "port": 8000 if port is None else port,
        "token": secret,
        "oauth": oauth,
        "stateless": stateless,
        "allowed_hosts": allowed_host or (),
        "limits": {
            "max_sessions": max_sessions,
            "session_idle_timeout": session_idle_timeout,
            "upload_timeout": upload_timeout,
            "max_body_bytes": max_body_bytes,
        },
    }
    if workers is not None:
        _serve_with_workers(workers, tools or [], prebuilt, listen)
        return
    server, listener, url = http_server(chosen, **listen)

    async def over_http() -> None:
        # Signals are taken over before the URL is printed, so a Ctrl-C that follows the URL
        # always gets the graceful path.
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with anyio.create_task_group() as group:

                async def run_server() -> None:
                    await server.serve(sockets=[listener])
                    group.cancel_scope.cancel()  # the server ended on its own: stop waiting

                group.start_soon(run_server)
                # Plain text: rich's emoji table (a few ms to load) is for text that has codes.
                out.print(url, markup=False, emoji=False)
                err.print(
                    f"serving {len(chosen)} tools at {url} (Ctrl-C stops)",
                    markup=False,
                    emoji=False,
                )
                async for _ in signals:
                    server.should_exit = True  # graceful: finish requests, end sessions
                    break
        err.print("stopped")

    run_async(over_http)


def add_serve(app: typer.Typer) -> None:
    """Register `serve` as a command of `app`."""
    app.command("serve", epilog="Example: toolwire serve --prebuilt --port 8000")(
        typer_command(serve, SERVE_OPTIONS)
    )


def console_serve(argv: list[str]) -> None:
    """Run `toolwire serve` from `argv` (starting with `serve`) and exit with its code.

    A plain command line calls `serve` without typer (importing typer and building the command
    were about 2% of a server's start-up to its first answer); `--help`, a usage error or
    anything else `quick_options` leaves goes to typer.
    """
    args = command_args(argv)
    options = quick_options(serve, SERVE_OPTIONS, args[1:]) if args[:1] == ["serve"] else None
    if options is not None:
        chosen = options
        code = run_guarded(lambda: serve(**chosen))
    else:
        code = run_guarded(lambda: run_typer(_serve_app(), args))
    exit_interrupted(code)
    sys.exit(code)


def _serve_app() -> typer.Typer:
    import typer  # the cli extra

    app = typer.Typer(name="toolwire", add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:  # a group, so the command is still named `serve` in help and usage
        pass

    add_serve(app)
    return app


def _check_workers(stateless: bool) -> None:
    if not stateless:
        raise CliError(
            "--workers needs --stateless: a session lives in one worker's memory, and a "
            "client's next request may reach another worker"
        )
    if os.name != "posix":
        raise CliError("--workers needs a POSIX system (Linux, macOS): workers inherit the socket")


def _serve_with_workers(
    workers: int, specs: Sequence[str], prebuilt: bool, listen: dict[str, Any]
) -> None:
    listener, url, options = http_listener(**listen)
    # One secret for every worker: a 2026-07-28 call that asked its client a question comes back
    # with the sealed request state, and the worker it lands on must be able to open it.
    options["request_state_keys"] = [secrets.token_urlsafe(32)]
    plan = WorkerPlan(
        tools=list(specs), prebuilt=prebuilt, app_options=options, debug=state["debug"]
    )
    try:
        run_async(
            lambda: supervise(
                listener,
                url,
                plan,
                workers,
                announce=lambda line: out.print(line, markup=False),
                report=lambda line: err.print(line, markup=False),
            )
        )
    finally:
        listener.close()
    err.print("stopped")


def _serve_token(token: str | None, token_file: Path | None) -> str | None:
    """The bearer token `serve` requires, from the option, its variable or a file."""
    if token is not None and token_file is not None:
        raise CliError("give the token once: --token (or $TOOLWIRE_SERVE_TOKEN) or --token-file")
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"cannot read the token file {token_file}: {exc}") from exc
        if not token:
            raise CliError(f"the token file {token_file} is empty")
    elif token is not None and not token.strip():
        raise CliError("the token is empty: give a real one, or none on a loopback address")
    return token


def _serve_oauth(
    *,
    issuer: str | None,
    resource: str | None,
    scopes: list[str],
    tool_scopes: list[str],
    audiences: list[str],
    introspection_client: str | None,
) -> dict[str, Any] | None:
    """`ProtectedResource` settings from the `--auth-*` options (the resource URL may be left
    for `_http_server`, which knows the URL it serves)."""
    if issuer is None:
        if resource or scopes or tool_scopes or audiences or introspection_client:
            raise CliError("the --auth-* options need --auth-issuer")
        return None
    settings: dict[str, Any] = {"authorization_server": issuer, "scopes": scopes}
    if resource is not None:
        settings["resource"] = resource
    if audiences:
        settings["audience"] = audiences
    per_tool: dict[str, list[str]] = {}
    for entry in tool_scopes:
        name, _, needed = entry.partition("=")
        if not name.strip() or not needed.split():
            raise CliError(f"--auth-tool-scope wants 'TOOL=SCOPE [SCOPE...]', got {entry!r}")
        per_tool.setdefault(name.strip(), []).extend(needed.split())
    if per_tool:
        settings["tool_scopes"] = per_tool
    if introspection_client is not None:
        client_secret = os.environ.get(_INTROSPECTION_ENV, "")
        if not client_secret.strip():
            raise CliError(
                f"--auth-introspection-client needs the client's secret in ${_INTROSPECTION_ENV}"
            )
        # JSON, like every option, so that `--workers` can hand it to each worker.
        settings["introspection"] = {
            "client_id": introspection_client,
            "client_secret": client_secret.strip(),
        }
    return settings
