"""The options several `toolwire` commands take, as typer annotations: `run` and `web` choose a
run's model and tools alike, and `tools`, `call` and `run` reach MCP servers alike."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

__all__ = [
    "ApiKeyOption",
    "BaseUrlOption",
    "HeaderOption",
    "LoginOption",
    "LoginPortOption",
    "McpOption",
    "ModelOption",
    "PrebuiltOption",
    "SamplingModeOption",
    "TokenDirOption",
    "TokenOption",
    "ToolsOption",
]

# The options that choose a run's model and tools, shared by `run` and `web` so both read alike.
ModelOption = Annotated[
    str,
    typer.Option(
        help="provider:model-name (e.g. openai:gpt-4.1-mini), or 'test' for the offline model."
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        "--endpoint",
        help="The API root of an OpenAI-compatible server, e.g. http://localhost:8000/v1; "
        "for azure: the resource endpoint.",
    ),
]
ApiKeyOption = Annotated[
    str | None, typer.Option(help="The API key (default: the provider's variable).")
]
McpOption = Annotated[list[str] | None, typer.Option(help="An MCP server URL, repeatable.")]
PrebuiltOption = Annotated[
    bool, typer.Option("--prebuilt", help="Give the agent the prebuilt tools.")
]
ToolsOption = Annotated[
    list[str] | None,
    typer.Option("--tools", help="module:attribute or file.py:attribute, repeatable."),
]
# Reaching and signing in to MCP servers, and answering their sampling: `tools`, `call` and `run`.
TokenOption = Annotated[str | None, typer.Option(help="Bearer token.")]
HeaderOption = Annotated[
    list[str] | None, typer.Option(help="'Name: value' (or NAME=VALUE), repeatable.")
]
LoginOption = Annotated[
    bool, typer.Option(help="Sign in with OAuth in a browser; tokens are kept for next time.")
]
LoginPortOption = Annotated[
    int, typer.Option(help="The loopback port the sign-in redirect comes back to.")
]
TokenDirOption = Annotated[
    Path | None,
    typer.Option(help="Where --login keeps tokens (default: $XDG_CONFIG_HOME/toolwire/oauth)."),
]
SamplingModeOption = Annotated[
    Literal["ask", "allow", "deny"],
    typer.Option(
        help="A server asking the model for a completion: ask on the terminal, allow, or deny."
    ),
]
