"""Output budgets: each tool result held to a number of tokens, the rest readable on demand.

A result over its budget reaches the model as its head and its tail around a marker that says
how much was left out and how to read it; the whole result is kept in a `ResultStore` under a
handle, and the `read_result` tool (added to every run that has a budget) lets the model read it
by character offset, search it by words, or fetch one of its non-text parts.

The rules, in one place:
- Tokens are estimated as characters / `chars_per_token` (4 by default: a stated estimate, the
  same for every provider, so a cut never depends on which model is asked).
- Only text counts against the budget. Non-text parts (images, audio, resources) are kept as they
  are, in order, up to `max_media` of them; the others are left out, named in the marker, and
  `read_result(handle, part=N)` returns part N (counted among the non-text parts, from 0).
- A cut result keeps `is_error`, drops `structured` (it would carry the whole result past the
  budget), and keeps the untruncated content in `ToolResultMessage.full_content` for the caller;
  adapters never send that field.
- The cut is a pure function of the result and the budget: the same result gives the same text,
  marker and handle every time (a replayed durable run, a history sent again), so a provider's
  prompt cache over the history is never broken by it.
- `read_result`'s own answers are never cut; each is bounded by the budget of the tool whose
  result it reads.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from ._record import record
from ._result_store import FileResultStore, MemoryResultStore, ResultStore, valid_handle
from .errors import ToolError
from .messages import ToolResultMessage
from .results import ContentPart, TextPart, ToolResult
from .tools import FunctionTool, Tool, tool

__all__ = [
    "READ_RESULT",
    "FileResultStore",
    "MemoryResultStore",
    "OutputBudget",
    "ResultStore",
    "read_result_tool",
    "with_read_result",
]

logger = logging.getLogger("toolwire")

READ_RESULT = "read_result"
"""The name of the tool that pages through cut results."""

_UNKNOWN_WINDOW_TOKENS = 4000
"""The budget of a share of a context window nobody knows (no `tokens` given either)."""

_LINE_CAP = 400
"""Characters of one matching line shown by a search."""


def _window_of(provider: str, model_name: str) -> int | None:
    """The model's context window in tokens, from genai-prices' tables, when they know it."""
    key = (provider, model_name)
    if key in _windows:
        return _windows[key]
    try:
        from genai_prices import data_snapshot
    except ImportError:
        return None
    snapshot: Any = data_snapshot.get_snapshot()
    try:
        _, info = snapshot.find_provider_model(model_name, None, provider, None)
    except LookupError:
        window = None
    else:
        found = getattr(info, "context_window", None)
        window = found if isinstance(found, int) and found > 0 else None
    _windows[key] = window
    return window


_windows: dict[tuple[str, str], int | None] = {}
"""Context windows looked up so far (a cache of facts from a fixed table, not state)."""


@record(frozen=True, kw_only=True)
class OutputBudget:
    """How many tokens of each tool result reach the model (`Agent(output_budget=...)`).

    Attributes:
        tokens: The budget of every tool's result, in tokens; `None` for no fixed number.
        share: A share of the model's context window (e.g. `0.05`); with `tokens` too, the
            smaller of the two applies. The window comes from `context_window`, else from
            genai-prices' tables; when neither knows it, `tokens` alone applies (4,000 when
            `tokens` is `None`).
        context_window: The model's context window in tokens, when you know better.
        per_tool: Budgets by tool name, over the ones above; `None` there exempts a tool.
        store: Where whole results are kept (a `MemoryResultStore` of this budget by default).
        max_media: Non-text parts of one result that reach the model, at most.
        chars_per_token: The estimate turning tokens into characters.
        head: The share of the kept text taken from the start (the rest from the end).
    """

    tokens: int | None = 4000
    share: float | None = None
    context_window: int | None = None
    per_tool: Mapping[str, int | None] = field(default_factory=dict[str, "int | None"])
    store: ResultStore = field(default_factory=MemoryResultStore)
    max_media: int = 4
    chars_per_token: float = 4.0
    head: float = 0.7

    def __post_init__(self) -> None:
        if self.tokens is not None and self.tokens < 1:
            raise ValueError(f"tokens must be at least 1, got {self.tokens}")
        if self.share is not None and not 0 < self.share <= 1:
            raise ValueError(f"share must be in (0, 1], got {self.share}")
        if self.tokens is None and self.share is None and not self.per_tool:
            raise ValueError("an OutputBudget needs tokens, share or per_tool")
        if self.max_media < 0:
            raise ValueError("max_media must be 0 or more")
        if self.chars_per_token <= 0:
            raise ValueError("chars_per_token must be positive")
        if not 0 <= self.head <= 1:
            raise ValueError("head must be between 0 and 1")
        for name, value in self.per_tool.items():
            if value is not None and value < 1:
                raise ValueError(f"per_tool[{name!r}] must be at least 1 or None, got {value}")
        object.__setattr__(self, "per_tool", dict(self.per_tool))

    @classmethod
    def coerce(cls, value: OutputBudget | int | None) -> OutputBudget | None:
        """A budget from an `OutputBudget`, a number of tokens, or `None` (no budget)."""
        if value is None or isinstance(value, OutputBudget):
            return value
        if isinstance(value, bool) or not isinstance(value, int):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"output_budget takes an OutputBudget or tokens, got {value!r}")
        return cls(tokens=value)

    def limit(self, tool_name: str, provider: str = "", model_name: str = "") -> int | None:
        """The budget in tokens of `tool_name`'s results when asking `model_name`, or `None`."""
        if tool_name in self.per_tool:
            return self.per_tool[tool_name]
        found = self.tokens
        if self.share is not None:
            window = self.context_window or (
                _window_of(provider, model_name) if model_name else None
            )
            if window is not None:
                shared = max(1, int(window * self.share))
                found = shared if found is None else min(found, shared)
            elif found is None:
                found = _UNKNOWN_WINDOW_TOKENS  # a share of an unknown window: still a budget
        return found

    def _chars(self, tokens: int) -> int:
        return max(1, int(tokens * self.chars_per_token))

    def _tokens(self, chars: int) -> int:
        return math.ceil(chars / self.chars_per_token)

    async def hold(
        self, message: ToolResultMessage, provider: str = "", model_name: str = ""
    ) -> ToolResultMessage:
        """`message` as the model should see it: unchanged within budget, else cut.

        The whole result goes to the store first; a store that fails is logged, and the marker
        then says the rest cannot be read.
        """
        if message.name == READ_RESULT or message.full_content is not None:
            return message
        limit = self.limit(message.name, provider, model_name)
        if limit is None:
            return message
        texts = [p.text for p in message.content if isinstance(p, TextPart)]
        media = [p for p in message.content if not isinstance(p, TextPart)]
        text = texts[0] if len(texts) == 1 else "\n".join(texts)
        budget = self._chars(limit)
        if len(text) <= budget and len(media) <= self.max_media:
            return message
        handle = _handle(message)
        kept = True
        try:
            await self.store.put(handle, message)
        except Exception:
            logger.exception("toolwire: could not keep the whole result of %s", message.name)
            kept = False
        body = self._cut(text, budget, handle, kept)
        extra = media[self.max_media :]
        if extra:
            body += _media_note(extra, self.max_media, handle, kept)
        return ToolResultMessage(
            call_id=message.call_id,
            name=message.name,
            content=[TextPart(body), *media[: self.max_media]],
            is_error=message.is_error,
            full_content=list(message.content),
        )

    def _cut(self, text: str, budget: int, handle: str, kept: bool) -> str:
        if len(text) <= budget:
            return text
        head = int(budget * self.head)
        end = len(text) - (budget - head)
        # Cut at line ends when one is near, so the model sees whole lines on either side.
        newline = text.rfind("\n", head - head // 5, head)
        if newline > 0:
            head = newline + 1
        newline = text.find("\n", end, end + (len(text) - end) // 5)
        if newline >= 0:
            end = newline + 1
        left_out = end - head
        if kept:
            how = (
                f'call {READ_RESULT}(handle="{handle}", offset={head}) to read on, or '
                f'{READ_RESULT}(handle="{handle}", query="...") to search the whole result'
            )
        else:
            how = "the whole result could not be kept, so the rest cannot be read"
        marker = (
            f"\n[... {left_out} of {len(text)} characters (about {self._tokens(left_out)} "
            f"tokens) left out here: characters {head} to {end}; {how} ...]\n"
        )
        return text[:head].removesuffix("\n") + marker + text[end:]

    async def read(
        self,
        handle: str,
        offset: int = 0,
        limit: int | None = None,
        query: str | None = None,
        part: int | None = None,
        *,
        provider: str = "",
        model_name: str = "",
    ) -> ToolResult:
        """What `read_result` answers; a `ToolError` (the model sees its message) for bad input."""
        if not valid_handle(handle):
            raise ToolError(
                f"{handle!r} is not a result handle: use the handle a cut result's marker gives "
                '(it looks like "r_" and 16 hex digits)'
            )
        stored = await self.store.get(handle)
        if stored is None:
            raise ToolError(
                f"no result is kept under {handle!r}: it never existed or has expired; call "
                "the tool again to get a fresh result"
            )
        if part is not None:
            return _part(stored, handle, part)
        text = "\n".join(p.text for p in stored.content if isinstance(p, TextPart))
        cap = self._chars(self.limit(stored.name, provider, model_name) or self.tokens or 4000)
        if query is not None:
            return ToolResult(content=[TextPart(_search(text, handle, query, cap))])
        if offset < 0:
            raise ToolError(f"offset must be 0 or more, got {offset}")
        if limit is not None and limit < 1:
            raise ToolError(f"limit must be at least 1, got {limit}")
        if offset >= len(text):
            raise ToolError(
                f"offset {offset} is past the end: result {handle} has {len(text)} characters "
                f"(read from 0 to {max(0, len(text) - 1)})"
            )
        count = cap if limit is None else min(limit, cap)
        end = min(len(text), offset + count)
        note = f"[{handle}: characters {offset} to {end} of {len(text)}"
        if end < len(text):
            note += f"; read on with offset={end}"
        note += "]\n"
        return ToolResult(content=[TextPart(note + text[offset:end])])


def _handle(message: ToolResultMessage) -> str:
    # From the result itself (never random): a replayed run cuts it to the same text.
    digest = hashlib.sha256()
    for piece in (message.call_id, message.name):
        digest.update(piece.encode())
        digest.update(b"\0")
    for part in message.content:
        digest.update(part.kind.encode())
        if isinstance(part, TextPart):
            digest.update(part.text.encode("utf-8", "surrogatepass"))
        else:
            data = getattr(part, "data", None)
            digest.update(data if isinstance(data, bytes) else repr(part).encode())
        digest.update(b"\0")
    return "r_" + digest.hexdigest()[:16]


def _describe(part: ContentPart) -> str:
    mime = getattr(part, "mime_type", None)
    return f"{part.kind} ({mime})" if isinstance(mime, str) else part.kind


def _media_note(extra: Sequence[ContentPart], first: int, handle: str, kept: bool) -> str:
    names = ", ".join(f"{first + i}: {_describe(p)}" for i, p in enumerate(extra))
    how = (
        f'{READ_RESULT}(handle="{handle}", part=N) returns part N'
        if kept
        else "they cannot be read"
    )
    return f"\n[... {len(extra)} more non-text parts left out ({names}); {how} ...]"


def _part(stored: ToolResultMessage, handle: str, index: int) -> ToolResult:
    media = [p for p in stored.content if not isinstance(p, TextPart)]
    if not media:
        raise ToolError(f"result {handle} has no non-text parts; read its text by offset")
    if not 0 <= index < len(media):
        raise ToolError(
            f"result {handle} has {len(media)} non-text parts (0 to {len(media) - 1}); "
            f"there is no part {index}"
        )
    return ToolResult(content=[TextPart(f"[{handle}: part {index}]"), media[index]])


def _search(text: str, handle: str, query: str, cap: int) -> str:
    words = [w for w in query.lower().split() if w]
    if not words:
        raise ToolError("query is empty: give one or more words to look for")
    phrase = " ".join(words)
    lines = text.split("\n")
    # The words as one phrase first; any line holding them all when no line holds the phrase.
    exact = any(phrase in line.lower() for line in lines)
    found: list[str] = []
    size = 0
    matched = 0
    offset = 0
    for number, line in enumerate(lines, start=1):
        lower = line.lower()
        if (phrase in lower) if exact else all(w in lower for w in words):
            matched += 1
            shown = line if len(line) <= _LINE_CAP else line[:_LINE_CAP] + " ..."
            entry = f"line {number} (offset {offset}): {shown}"
            if size + len(entry) <= cap:
                found.append(entry)
                size += len(entry) + 1
        offset += len(line) + 1
    if not matched:
        raise ToolError(
            f"no line of result {handle} holds every word of {query!r}; try fewer or other "
            "words, or read it by offset"
        )
    head = f"[{handle}: {matched} matching lines"
    if len(found) < matched:
        head += f", the first {len(found)} shown; narrow the query to see others"
    return head + "]\n" + "\n".join(found)


def read_result_tool(
    budget: OutputBudget, provider: str = "", model_name: str = ""
) -> FunctionTool:
    """The `read_result` tool over `budget`'s store (added to a run by `with_read_result`)."""

    async def read_result(
        handle: str,
        offset: int = 0,
        limit: int | None = None,
        query: str | None = None,
        part: int | None = None,
    ) -> ToolResult:
        """Read a tool result that was cut short: by character offset, by search, or one part.

        Args:
            handle: The handle given in the cut result's marker.
            offset: The first character to read (0-based).
            limit: How many characters to read (at most the tool's budget).
            query: Words to look for instead: returns every line holding all of them.
            part: Returns this non-text part (0-based among the result's non-text parts).
        """
        return await budget.read(
            handle, offset, limit, query, part, provider=provider, model_name=model_name
        )

    return tool(read_result)


def with_read_result(
    tools: dict[str, Tool], budget: OutputBudget | None, provider: str = "", model_name: str = ""
) -> dict[str, Tool]:
    """`tools` with `read_result` added when there is a budget (a tool of that name already
    there is kept: the caller's own wins)."""
    if budget is None or READ_RESULT in tools:
        return tools
    return {**tools, READ_RESULT: read_result_tool(budget, provider, model_name)}
