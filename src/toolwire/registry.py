"""`ToolRegistry`: a thread-safe set of tools keyed by name, and a toolset."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .errors import DuplicateToolError, ToolNameError, UnknownToolError
from .tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool
from .toolsets import Toolset, ToolsetContext

__all__ = ["TOOL_NAME_PATTERN", "ToolRegistry", "check_tool_name"]

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The names every major provider accepts (OpenAI, Anthropic and Gemini agree on this subset)."""


def check_tool_name(name: str) -> None:
    """Raise `ToolNameError` with the reason when providers would reject `name`."""
    if TOOL_NAME_PATTERN.fullmatch(name):  # `match` would let a trailing newline through `$`
        return
    if not name:
        reason = "it is empty"
    elif len(name) > 64:
        reason = f"it is {len(name)} characters long (at most 64)"
    else:
        bad = sorted({c for c in name if not re.match(r"[a-zA-Z0-9_-]", c)})
        reason = (
            "it contains " + ", ".join(repr(c) for c in bad) + " (only letters, digits, _ and -)"
        )
    raise ToolNameError(f"Tool name {name!r} is rejected by providers: {reason}.")


class ToolRegistry(Toolset):
    """Tools by name, safe to share between threads.

    Anything `as_tool` accepts can be added: a `Tool`, a typed function or a definition dict.
    A registry is a toolset: an agent given one offers, at each step, the tools registered then.
    """

    label = "registry"

    def __init__(self, tools: Iterable[Tool | Callable[..., Any] | Mapping[str, Any]] = ()) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, Tool] = {}
        self._snapshot: tuple[Tool, ...] | None = None  # for `tools_for`, until a change
        for item in tools:
            self.add(item)

    def add(self, tool: ToolLike) -> Tool:
        """Register a tool and return it.

        Raises:
            DuplicateToolError: a tool by that name is already registered.
            ToolNameError: the name is not `^[a-zA-Z0-9_-]{1,64}$`; the message says why.
        """
        resolved = as_tool(tool)
        check_tool_name(resolved.name)
        with self._lock:
            if resolved.name in self._tools:
                raise DuplicateToolError(resolved.name)
            self._tools[resolved.name] = resolved
            self._snapshot = None
        return resolved

    def get(self, name: str) -> Tool:
        """The tool called `name`.

        Raises:
            UnknownToolError: no such tool; it lists the closest names.
        """
        with self._lock:
            found = self._tools.get(name)
            if found is None:
                raise UnknownToolError(name, list(self._tools))
            return found

    def remove(self, name: str) -> Tool:
        """Unregister and return the tool called `name` (`UnknownToolError` when missing)."""
        with self._lock:
            if name not in self._tools:
                raise UnknownToolError(name, list(self._tools))
            self._snapshot = None
            return self._tools.pop(name)

    def list(self) -> list[str]:
        """The registered names, sorted."""
        with self._lock:
            return sorted(self._tools)

    def all(self) -> list[Tool]:
        """The registered tools, sorted by name."""
        with self._lock:
            return [self._tools[n] for n in sorted(self._tools)]

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        """The tools registered now, sorted by name (the same tuple until one is added or removed)."""
        with self._lock:
            if self._snapshot is None:
                self._snapshot = tuple(self._tools[n] for n in sorted(self._tools))
            return self._snapshot

    def definitions(self, dialect: DefinitionDialect = "openai") -> list[ToolDefinition]:
        """Every tool's provider-ready definition, sorted by name."""
        return [t.definition(dialect) for t in self.all()]

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        # A snapshot, so other threads may add or remove while the caller iterates.
        return iter(self.all())

    def __repr__(self) -> str:
        return f"ToolRegistry({self.list()!r})"
