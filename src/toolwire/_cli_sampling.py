"""How `toolwire run` and `toolwire call` answer a server's sampling requests.

`--sampling ask` (the default) shows each request on the terminal and lets the model answer only
after a yes; without a terminal nothing is offered. `allow` answers every request, `deny` offers
no sampling at all. Offering none means the capability is not declared, so servers do not ask.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

import anyio
import anyio.to_thread
from rich.console import Console

from ._cli_agent import preview
from .mcp.sampling import Sampler, SamplingApproval, SamplingRequest
from .messages import AssistantMessage, ToolResultMessage, UserMessage

__all__ = ["SamplingMode", "describe_request", "sampler_for"]

SamplingMode = Literal["ask", "allow", "deny"]


def describe_request(request: SamplingRequest, model_name: str) -> list[str]:
    """The lines that show a person what the server wants the model to answer."""
    server = f" {request.server}" if request.server else ""
    lines = [f"The MCP server{server} asks {model_name} for a completion:"]
    if request.system_prompt:
        lines.append(f"  system: {preview(request.system_prompt, 200)}")
    for message in request.messages[-6:]:
        if isinstance(message, UserMessage):
            extra = [p.kind for p in message.content if p.kind != "text"]
            note = f" [+{', '.join(extra)}]" if extra else ""
            lines.append(f"  user: {preview(message.text, 200)}{note}")
        elif isinstance(message, AssistantMessage):
            calls = ", ".join(c.name for c in message.tool_calls)
            said = preview(message.text, 200) + (f" [calls {calls}]" if calls else "")
            lines.append(f"  assistant: {said}")
        elif isinstance(message, ToolResultMessage):
            lines.append(f"  {message.name} result: {preview(message.text, 200)}")
    details = [f"up to {request.max_tokens} tokens"]
    if request.tools:
        details.append("tools: " + ", ".join(t.name for t in request.tools))
    if request.model_hints:
        details.append("hints: " + ", ".join(request.model_hints))
    lines.append("  (" + "; ".join(details) + ")")
    return lines


def _terminal_approval(
    err: Console, model_name: str, before: Callable[[], None] | None
) -> SamplingApproval:
    lock = anyio.Lock()  # concurrent tool calls ask one at a time

    def ask(request: SamplingRequest) -> bool:
        for line in describe_request(request, model_name):
            err.print(line, markup=False, highlight=False)
        err.print("Let the model answer? [y/N] ", end="", markup=False)
        return sys.stdin.readline().strip().lower() in ("y", "yes")

    async def approve(request: SamplingRequest) -> bool:
        async with lock:
            if before is not None:
                before()
            # Reading the terminal blocks: off the event loop, so the session stays served.
            return await anyio.to_thread.run_sync(ask, request)

    return approve


def sampler_for(
    model: Any,
    mode: SamplingMode,
    err: Console,
    *,
    interactive: bool,
    before: Callable[[], None] | None = None,
) -> Sampler | None:
    """The sampler for `--sampling MODE` with `model`; `None` offers no sampling.

    Asking needs a person at a terminal: without one, `ask` offers no sampling, so servers know
    not to ask rather than being refused each time.
    """
    if mode == "deny" or (mode == "ask" and not interactive):
        return None
    if mode == "allow":
        return Sampler(model)
    return Sampler(model, approve=_terminal_approval(err, model.model_name, before))
