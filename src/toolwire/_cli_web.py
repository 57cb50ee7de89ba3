"""`toolwire web`: a local page to chat with an agent (streamed text and tool calls, approval
buttons, stop), see each run as a timeline, inspect MCP servers (`_web/inspector.py`) and steer
the durable runs of a database (`--runs`, `_web/runs.py`).

`cli` registers the command; the page and its API live in `_web` (over `agent.to_ag_ui`), the
Host/Origin and token checks are the MCP server's, as `toolwire serve` has them.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer

from ._cli_agent import CliError, resolve_model
from ._cli_common import (
    err,
    out,
    run_async,
)
from ._cli_options import (
    ApiKeyOption,
    BaseUrlOption,
    McpOption,
    ModelOption,
    PrebuiltOption,
    ToolsOption,
)
from ._cli_serve import TOKEN_ENV, _serve_token  # pyright: ignore[reportPrivateUsage]
from ._cli_tools import load_tools, prebuilt_tools
from ._serve_app import http_listener, uvicorn_server
from .tools import Tool

__all__ = ["add_web", "web"]


def web(
    model: ModelOption = "test",
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    tools: ToolsOption = None,
    prebuilt: PrebuiltOption = False,
    mcp: McpOption = None,
    mcp_token: Annotated[
        str | None, typer.Option(help="Bearer token for the --mcp servers.")
    ] = None,
    instructions: Annotated[str | None, typer.Option(help="System prompt.")] = None,
    max_iterations: Annotated[int, typer.Option(help="Model requests per run at most.")] = 8,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port, 0 picks a free one.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            help="The token the page must send (default: a new random one, in the printed URL).",
            envvar=TOKEN_ENV,
            show_envvar=True,
        ),
    ] = None,
    token_file: Annotated[
        Path | None, typer.Option(help="Use the token held in this file.")
    ] = None,
    runs: Annotated[
        str | None,
        typer.Option(
            "--runs",
            help="A durable runs database (sqlite:///path, a SQLite file, or postgresql://...) "
            "to list, show, approve, deny and cancel its runs in the page.",
        ),
    ] = None,
    allow_stdio: Annotated[
        bool,
        typer.Option(
            "--allow-stdio",
            help="Let the inspector start MCP servers from a command line typed in the page: "
            "anyone with the page's token can then run any command as you. Off by default.",
        ),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host", help="A Host name the page may be reached by besides the local ones."
        ),
    ] = None,
) -> None:
    """Open a local page to chat with an agent, see each run's timeline, inspect MCP servers
    and (with --runs) steer durable runs; Ctrl-C stops.

    The page's API needs the token in the printed URL (a new one each start unless given), and
    answers only requests naming this machine (or an --allowed-host) from its own page.
    """
    from ._extras import require_extra

    try:
        require_extra("ui", "ag_ui", needed_by="toolwire web")
        require_extra("mcp", needed_by="toolwire web (its Host and Origin checks)")
        if runs is not None:
            require_extra("durable", "dbos", needed_by="toolwire web --runs")
    except Exception as exc:
        raise CliError(str(exc)) from None
    secret = _serve_token(token, token_file) or secrets.token_urlsafe(24)
    chosen = load_tools(tools or []) + (prebuilt_tools() if prebuilt else [])
    resolved, described = resolve_model(model, base_url, api_key)
    # The listening socket, its URL and the Host names to accept, as `toolwire serve` has them.
    listener, mcp_url, options = http_listener(
        host=host, port=port, token=secret, stateless=False, allowed_hosts=allowed_host or ()
    )
    hosts: list[str] = options["allowed_hosts"]
    base = mcp_url.removesuffix("/mcp")

    async def main() -> None:
        from ._web import web_app  # the ui and mcp extras
        from .agent import Agent
        from .mcp import McpClient

        async with contextlib.AsyncExitStack() as stack:
            remote: list[Tool] = []
            for url in mcp or []:
                client = McpClient(url, auth_token=mcp_token)
                await stack.enter_async_context(client)
                remote.extend(await client.tools())
            every = [*chosen, *remote]
            agent = Agent(
                resolved, tools=every, instructions=instructions, max_iterations=max_iterations
            )
            info = {"model": described, "tools": [_describe(t) for t in every]}
            app = web_app(
                agent,
                token=secret,
                allowed_hosts=hosts,
                info=info,
                runs_db=runs,
                allow_stdio=allow_stdio,
            )
            server = uvicorn_server(app)
            url = f"{base}/#token={secret}"
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async with anyio.create_task_group() as group:

                    async def run_server() -> None:
                        await server.serve(sockets=[listener])
                        group.cancel_scope.cancel()

                    group.start_soon(run_server)
                    out.print(url, markup=False)
                    err.print(
                        f"model: {described}; {len(every)} tools (Ctrl-C stops)", markup=False
                    )
                    async for _ in signals:
                        server.should_exit = True
                        break
        err.print("stopped")

    try:
        run_async(main)
    finally:
        listener.close()


def _describe(tool: Tool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "requiresApproval": tool.requires_approval,
        "parameters": tool.parameters,
    }


def add_web(app: typer.Typer) -> None:
    """Register `web` as a command of `app`."""
    app.command("web", epilog="Example: toolwire web --model test --prebuilt")(web)
