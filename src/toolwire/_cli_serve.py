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
from typing import Annotated, Any

import anyio
import typer

from ._cli_common import (
    CliError,
    err,
    exit_interrupted,
    out,
    run_async,
    run_command,
    state,
)
from ._cli_tools import load_tools, prebuilt_tools
from ._serve_app import http_listener, http_server
from ._serve_workers import WorkerPlan, supervise
from .tools import Tool

__all__ = ["TOKEN_ENV", "add_serve", "console_serve", "serve"]

TOKEN_ENV = "TOOLWIRE_SERVE_TOKEN"
_INTROSPECTION_ENV = "TOOLWIRE_INTROSPECTION_SECRET"


def serve(
    tools: Annotated[
        list[str] | None, typer.Option("--tools", help="module:attribute, repeatable.")
    ] = None,
    prebuilt: Annotated[bool, typer.Option("--prebuilt", help="Serve the prebuilt tools.")] = False,
    host: Annotated[
        str | None, typer.Option(help="Interface to listen on (default 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port, 0 picks a free one (default 8000).")
    ] = None,
    stdio: Annotated[bool, typer.Option("--stdio", help="Serve over stdin/stdout.")] = False,
    token: Annotated[
        str | None,
        typer.Option(
            help="Require this bearer token (better from the environment: argv shows in ps).",
            envvar=TOKEN_ENV,
            show_envvar=True,
        ),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option(help="Require the bearer token held in this file.")
    ] = None,
    allow_anonymous: Annotated[
        bool,
        typer.Option(
            "--allow-anonymous",
            help="Serve beyond loopback without a token: anyone who reaches the port may call.",
        ),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A Host name clients may use besides the local ones, repeatable; '*' for any.",
        ),
    ] = None,
    stateless: Annotated[bool, typer.Option(help="No sessions (for several workers).")] = False,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1, help="Serve the port from this many processes (needs --stateless; POSIX only)."
        ),
    ] = None,
    max_sessions: Annotated[
        int, typer.Option(min=1, help="Sessions open at once; past it new ones get 503.")
    ] = 10_000,
    session_idle_timeout: Annotated[
        float, typer.Option(min=0.001, help="Seconds before an idle session is closed.")
    ] = 1800.0,
    upload_timeout: Annotated[
        float, typer.Option(min=0.001, help="Seconds a client may take to send a request.")
    ] = 10.0,
    max_body_bytes: Annotated[
        int, typer.Option(min=1, help="The largest request body accepted.")
    ] = 4 * 1024 * 1024,
    auth_issuer: Annotated[
        str | None,
        typer.Option(
            help="Accept OAuth access tokens from this authorization server (its issuer URL).",
            rich_help_panel="OAuth",
        ),
    ] = None,
    auth_resource: Annotated[
        str | None,
        typer.Option(
            help="This server's public MCP URL, the tokens' audience (default: the URL served).",
            rich_help_panel="OAuth",
        ),
    ] = None,
    auth_scope: Annotated[
        list[str] | None,
        typer.Option(help="A scope every request needs, repeatable.", rich_help_panel="OAuth"),
    ] = None,
    auth_tool_scope: Annotated[
        list[str] | None,
        typer.Option(
            help="'TOOL=SCOPE [SCOPE...]': scopes a tool's calls need too, repeatable.",
            rich_help_panel="OAuth",
        ),
    ] = None,
    auth_audience: Annotated[
        list[str] | None,
        typer.Option(
            help="An accepted token audience in place of the resource URL, repeatable.",
            rich_help_panel="OAuth",
        ),
    ] = None,
    auth_introspection_client: Annotated[
        str | None,
        typer.Option(
            help=f"Check tokens by introspection as this client (secret in ${_INTROSPECTION_ENV}).",
            rich_help_panel="OAuth",
        ),
    ] = None,
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
                out.print(url)
                err.print(f"serving {len(chosen)} tools at {url} (Ctrl-C stops)")
                async for _ in signals:
                    server.should_exit = True  # graceful: finish requests, end sessions
                    break
        err.print("stopped")

    run_async(over_http)


def add_serve(app: typer.Typer) -> None:
    """Register `serve` as a command of `app`."""
    app.command("serve", epilog="Example: toolwire serve --prebuilt --port 8000")(serve)


def console_serve(argv: list[str]) -> None:
    """Run `toolwire serve` from `argv` (starting with `serve`) and exit with its code."""
    app = typer.Typer(name="toolwire", add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:  # a group, so the command is still named `serve` in help and usage
        pass

    add_serve(app)
    code = run_command(app, argv)
    exit_interrupted(code)
    sys.exit(code)


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
