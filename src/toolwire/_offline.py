"""The offline model behind `toolwire run --model test` and `toolwire demo`.

It reads the prompt rather than a script. A tool is called only when it is not marked open-world
(`open_world_hint=True` says it reaches the network) and every required argument can be made: an
arithmetic expression, an IANA time zone, a CPF or a CNPJ found in the prompt go to parameters of
those names, free-text parameters (`text`, `query`, ...) get the prompt itself, and other
required arguments are made from the schema unless they are free-form strings (an invented string
would only make the tool fail). When the prompt names a value for some tool, only those tools are
called; otherwise every tool it can call is. Then it answers with one line per result.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from typing import Any

from .messages import AssistantMessage, Message, ToolResultMessage, UserMessage
from .models._prompt_values import find_values, prompt_arguments
from .models.testing import FunctionModel, PreparedRequest, Reply, example_arguments
from .tools import Tool

__all__ = ["OFFLINE_DESCRIPTION", "find_values", "offline_model", "plan_calls"]

OFFLINE_DESCRIPTION = (
    "the offline test model: no network, no key; it calls the tools not marked open-world "
    "with arguments taken from the prompt"
)


def _arguments(tool: Tool, prompt: str) -> tuple[dict[str, Any], bool]:
    """The arguments for `tool`, and whether a value found in the prompt is among them.

    Raises:
        LookupError: a required argument cannot be made sensibly.
    """
    schema = tool.parameters
    properties = typing.cast(dict[str, Any], schema.get("properties") or {})
    required = set(typing.cast(list[str], schema.get("required") or []))
    args, matched = prompt_arguments(schema, prompt)
    missing = required - set(args)
    if missing:
        made = example_arguments(schema)
        for name in sorted(missing):
            prop = properties.get(name)
            if _free_form_string(prop) or name not in made:
                raise LookupError(name)
            args[name] = made[name]
    return args, matched


def _free_form_string(prop: Any) -> bool:
    """A string with nothing to go by (no enum, const, format or default)."""
    if not isinstance(prop, Mapping):
        return False
    node = typing.cast(Mapping[str, Any], prop)
    if any(key in node for key in ("enum", "const", "format", "default")):
        return False
    return node.get("type") == "string" or "pattern" in node


def plan_calls(prompt: str, tools: Sequence[Tool]) -> list[tuple[str, dict[str, Any]]]:
    """The calls the offline model makes for `prompt`: see the module's docstring."""
    matched: list[tuple[str, dict[str, Any]]] = []
    callable_: list[tuple[str, dict[str, Any]]] = []
    for tool in tools:
        if tool.annotations.open_world_hint is True:
            continue
        try:
            args, from_prompt = _arguments(tool, prompt)
        except LookupError:
            continue
        (matched if from_prompt else callable_).append((tool.name, args))
    return matched or callable_


def _reply(messages: list[Message], request: PreparedRequest) -> Reply:
    results: list[ToolResultMessage] = []
    prompt = ""
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            results.insert(0, message)
        elif isinstance(message, AssistantMessage) and not results:
            break
        elif isinstance(message, UserMessage):
            prompt = message.text
            break
    if results:
        lines = [f"- {r.name}: {' '.join(r.text.split())}" for r in results]
        return "Here is what the tools found:\n" + "\n".join(lines)
    calls = plan_calls(prompt, request.tools) if request.tool_choice != "none" else []
    if calls:
        return calls
    offline = [t.name for t in request.tools if t.annotations.open_world_hint is not True]
    return (
        "The offline test model found nothing it can do for this prompt without the network. "
        "It calls only tools not marked open-world"
        + (f" ({', '.join(offline)})" if offline else "")
        + ", with values taken from the prompt: an arithmetic expression, a time zone, a CPF or "
        "a CNPJ. Use --model provider:model for a real model."
    )


def offline_model() -> FunctionModel:
    """The offline model: see the module's docstring."""
    return FunctionModel(_reply, model_name="test")
