"""`toolwire run` and `toolwire demo`: run the agent on the command line.

Loaded only when one of these commands runs (`cli` knows them by name); how a run is shown lives
in `_cli_agent`, the tools a command names are loaded by `_cli_tools`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Annotated, Any

import typer

from ._cli_agent import (
    ApprovalNeeded,
    RunView,
    report,
    report_cancelled,
    result_json,
    run_with_view,
)
from ._cli_common import (
    CliError,
    err,
    out,
    resolve_model,
    run_interruptible,
)
from ._cli_connect import connected, mcp_client
from ._cli_options import (
    ApiKeyOption,
    BaseUrlOption,
    LoginOption,
    LoginPortOption,
    McpOption,
    ModelOption,
    PrebuiltOption,
    SamplingModeOption,
    TokenDirOption,
    ToolsOption,
)
from ._cli_tools import load_tools, prebuilt_tools
from ._serve_app import running_server
from .agent import Agent
from .errors import MissingDependencyError
from .tools import Tool

__all__ = ["DEMO_PROMPT", "add_run_commands", "demo", "run"]

DEMO_PROMPT = (
    "What is 17% of 2,340, what time is it in America/Sao_Paulo, and are the CPF 529.982.247-25 "
    "and the CNPJ 12.ABC.345/01DE-35 valid?"
)


async def _agent_run(agent: Any, prompt: str, view: RunView) -> Any:
    interactive = sys.stdin.isatty() and err.is_terminal
    try:
        return await run_with_view(agent, prompt, view, interactive=interactive)
    except ApprovalNeeded as exc:
        err.print("error: the run stopped for approval; approvals are asked on a terminal:")
        for call in exc.calls:
            err.print(f"  - {call}", markup=False)
        raise typer.Exit(1) from None


def run(
    prompt: Annotated[str, typer.Argument(help="The user's message; '-' reads it from stdin.")],
    model: ModelOption = "test",
    base_url: BaseUrlOption = None,
    api_key: ApiKeyOption = None,
    mcp: McpOption = None,
    stdio: Annotated[
        list[str] | None, typer.Option(help="Start a stdio MCP server: 'command args', repeatable.")
    ] = None,
    token: Annotated[str | None, typer.Option(help="Bearer token for the --mcp servers.")] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(help="'Name: value' (or NAME=VALUE) for the --mcp servers, repeatable."),
    ] = None,
    login: LoginOption = False,
    login_port: LoginPortOption = 33418,
    token_dir: TokenDirOption = None,
    sampling: SamplingModeOption = "ask",
    prebuilt: PrebuiltOption = False,
    tools: ToolsOption = None,
    max_iterations: Annotated[int, typer.Option(help="Model requests at most.")] = 8,
    instructions: Annotated[str | None, typer.Option(help="System prompt.")] = None,
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Print the run's span tree (durations, tokens); needs the otel extra.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole result as JSON (no streamed answer).")
    ] = False,
) -> None:
    """Run the agent: a line per tool call, the answer as it streams, then usage and cost.

    Calls that need approval are asked y/n on a terminal; elsewhere the run stops, lists them and
    exits with 1. An MCP server asking for a completion (sampling) is answered by the run's own
    model after a yes on the terminal (--sampling; refused when there is no terminal).
    """
    chosen = load_tools(tools or []) + (prebuilt_tools() if prebuilt else [])
    resolved, described = resolve_model(model, base_url, api_key)
    port = login_port if login else None
    clients = [mcp_client(url, None, token, header or [], port, token_dir) for url in mcp or []]
    clients += [mcp_client(None, command, None, []) for command in stdio or []]
    targets = [*(mcp or []), *(None for _ in stdio or [])]
    if prompt == "-":
        prompt = sys.stdin.read().strip()
        if not prompt:
            raise CliError("'-' reads the prompt from stdin, which was empty")
    view = RunView(out, err, stream_answer=not as_json)
    if clients:
        from ._cli_sampling import sampler_for

        interactive = sys.stdin.isatty() and err.is_terminal
        # One sampler for every server: the run's model answers, asking first (one at a time).
        sampler = sampler_for(resolved, sampling, err, interactive=interactive, before=view.close)
        for client in clients:
            client.sampling = sampler

    async def main() -> Any:
        async with contextlib.AsyncExitStack() as stack:
            remote: list[Tool] = []
            for client, url in zip(clients, targets, strict=True):
                await stack.enter_async_context(connected(client, url, token, header or []))
                remote.extend(await client.tools())
            agent = Agent(
                resolved,
                tools=[*chosen, *remote],
                instructions=instructions,
                max_iterations=max_iterations,
                subscribers=[view.subscriber],
            )
            err.print(f"model: {described}", markup=False)
            return await _agent_run(agent, prompt, view)

    def interrupted() -> None:
        view.close()
        report_cancelled(err, view.finished)

    def finish(result: Any) -> None:
        if as_json:
            out.print(result_json(result), markup=False, highlight=False)
        report(err, result)

    if not trace:
        finish(run_interruptible(main, interrupted))
        return
    from ._cli_trace import SpanTree

    try:
        tree = SpanTree()
    except MissingDependencyError as exc:
        raise CliError(str(exc)) from None
    with tree.recording():
        result = run_interruptible(main, interrupted)
    finish(result)
    for line in tree.lines():
        err.print(line, markup=False, highlight=False)


def demo(
    model: Annotated[
        str,
        typer.Option(help="provider:model-name to use a real model; offline by default."),
    ] = "test",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            "--endpoint",
            help="The API root of an OpenAI-compatible server; for azure: the resource endpoint.",
        ),
    ] = None,
    api_key: Annotated[str | None, typer.Option(help="The API key for --model.")] = None,
) -> None:
    """The main job: serve the prebuilt tools over MCP, discover them, run the agent, shut down.

    Offline, with no key, unless --model names a provider's model.
    """
    from .mcp import McpClient

    tools = prebuilt_tools()
    resolved, described = resolve_model(model, base_url, api_key)
    # The answer comes after the steps, whole: it is not streamed between them.
    view = RunView(out, err, stream_answer=False)

    async def main() -> Any:
        started = time.perf_counter()
        failure: Exception | None = None
        result: Any = None
        async with running_server(tools, port=0) as url:
            err.print(f"1. serving {len(tools)} prebuilt tools over MCP at {url}")
            try:
                async with McpClient(url) as client:
                    remote = await client.tools()
                    err.print(f"2. discovered {len(remote)} tools through the MCP client")
                    err.print(f"3. running the agent loop with {described}", markup=False)
                    err.print(f"   prompt: {DEMO_PROMPT}", markup=False)
                    agent = Agent(resolved, tools=remote, subscribers=[view.subscriber])
                    result = await _agent_run(agent, DEMO_PROMPT, view)
            except Exception as exc:
                # Raised out of the server's block, it would cancel the server mid-lifespan
                # and uvicorn would log a page of traceback before the one-line error.
                failure = exc
        if failure is not None:
            raise failure
        err.print(f"4. server stopped; {time.perf_counter() - started:.2f} s in all")
        return result

    result = run_interruptible(main, lambda: report_cancelled(err, view.finished))
    out.print(result.text, markup=False)
    report(err, result)


def add_run_commands(app: typer.Typer) -> None:
    """Register `run` and `demo` as commands of `app`."""
    app.command(epilog='Example: toolwire run "What is 17% of 2,340?" --model test --prebuilt')(run)
    app.command(epilog="Example: toolwire demo")(demo)
