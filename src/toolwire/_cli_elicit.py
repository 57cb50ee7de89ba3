"""`toolwire call` answers a server's elicitation by asking on the terminal."""

from __future__ import annotations

import typing
from typing import Any

import anyio.to_thread
import typer

from .mcp.elicitation import Elicitation, ElicitationAnswer

__all__ = ["ask_on_terminal"]

_YES = frozenset({"y", "yes", "true", "1", "on"})
_NO = frozenset({"n", "no", "false", "0", "off"})


def _ask(request: Elicitation) -> ElicitationAnswer:
    typer.echo(f"The server asks: {request.message}", err=True)
    if request.mode == "url":
        ok = typer.confirm(f"Open {request.url} to continue?", default=False, err=True)
        return ElicitationAnswer("accept" if ok else "decline")
    if not typer.confirm("Answer it?", default=True, err=True):
        return ElicitationAnswer("decline")
    schema = request.schema or {}
    properties: Any = schema.get("properties")
    required: Any = schema.get("required") or []
    content: dict[str, Any] = {}
    for name, raw_spec in typing.cast(dict[str, Any], properties or {}).items():
        spec = typing.cast(dict[str, Any], raw_spec) if isinstance(raw_spec, dict) else {}
        value = _field(name, spec, name in required)
        if value is not None:
            content[name] = value
    return ElicitationAnswer("accept", content)


def _field(name: str, spec: dict[str, Any], required: bool) -> Any:
    kind = spec.get("type", "string")
    found: Any = spec.get("enum")
    choices = [str(c) for c in typing.cast(list[Any], found)] if isinstance(found, list) else None
    label = spec.get("title") or name
    hint = f" [{'/'.join(choices)}]" if choices is not None else f" ({kind})"
    while True:
        # Empty input keeps the schema's default (filled in later) or leaves an optional out.
        text = typer.prompt(f"{label}{hint}", default="", show_default=False, err=True).strip()
        if not text:
            if required and "default" not in spec:
                typer.echo(f"{label} is required.", err=True)
                continue
            return None
        try:
            return _convert(text, kind, choices)
        except ValueError as exc:
            typer.echo(str(exc), err=True)


def _convert(text: str, kind: Any, choices: list[str] | None) -> Any:
    if choices is not None and text not in choices:
        raise ValueError(f"choose one of: {', '.join(choices)}")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        wanted = "whole number" if kind == "integer" else "number"
        raise ValueError(f"{text!r} is not a {wanted}") from None
    if kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    return text


async def ask_on_terminal(request: Elicitation) -> ElicitationAnswer:
    """Ask the person at the terminal (stderr and stdin), off the event loop."""
    return await anyio.to_thread.run_sync(_ask, request)
