"""`Toolset`: tools asked for per step of a run, and `FunctionToolset`, a fixed list of them.

A toolset answers one question, `await toolset.tools_for(ctx)`: which tools the next model
request offers. Wrappers (filtered, prefixed, renamed, prepared) and `CombinedToolset` are
toolsets over toolsets; a `ToolRegistry`, an `McpClient` and an `McpToolRegistry` are toolsets
too. A toolset hands back the same tool objects while its tools do not change, so each tool's
definition, compiled once per dialect and cached on the tool, is never compiled again per step.
"""

from __future__ import annotations

import dataclasses
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, TypeAlias

from .._record import record
from .._util import maybe_await
from ..messages import Message
from ..middleware import ToolWrapper
from ..native import NativeTool
from ..tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool

__all__ = [
    "FilteredToolset",
    "FunctionToolset",
    "PrefixedToolset",
    "Prepare",
    "PreparedToolset",
    "RenamedTool",
    "RenamedToolset",
    "Toolset",
    "ToolsetContext",
    "ToolsetLike",
    "WrapperToolset",
    "same_tools",
]

logger = logging.getLogger("toolwire.toolsets")


@record(frozen=True, kw_only=True)
class ToolsetContext:
    """What a toolset knows about the step it lists tools for.

    Attributes:
        step: The model request about to be sent, from 1 (0 outside a run).
        messages: The run's history so far (read it; do not change it).
        deps: The run's deps (`RunConfig.deps`).
        run_id: The run's id, as in its log records (empty outside a run).
    """

    step: int = 0
    messages: Sequence[Message] = field(default=())
    deps: Any = None
    run_id: str = ""


class Toolset(ABC):
    """A set of tools, asked for per step of a run (see the module docstring).

    Subclasses implement `tools_for`; a problem they meet and survive (a duplicate name, a
    server that failed) goes to `report`, which logs it once and keeps it in `problems`.
    """

    label: str = ""
    """How conflicts and problems name this toolset (a prefix rule uses it as the prefix)."""

    remote: bool = False
    """Whether listing may wait on I/O (an MCP server): `CombinedToolset` lists such toolsets
    concurrently, and the others one after the other, which costs far less per step."""

    _problems: list[str] | None = None

    @abstractmethod
    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        """The tools the next request offers, in order.

        Hand back the same tool objects while a tool is unchanged (its compiled definitions
        are cached on it), and best the same sequence while none changed: each step then
        skips its work. Never change a sequence after handing it back.
        """
        ...

    @property
    def problems(self) -> list[str]:
        """Every problem this toolset met and survived, each once, oldest first."""
        found = self._problems
        if found is None:
            # Set here rather than in `__init__`, which subclasses need not call.
            found = self._problems = []
        return found

    def report(self, problem: str) -> None:
        """Log `problem` as a warning and keep it in `problems`, unless it was reported before."""
        if problem in self.problems:
            return
        self.problems.append(problem)
        logger.warning("toolwire toolset %s: %s", self.label or type(self).__name__, problem)

    def filtered(self, keep: Callable[[ToolsetContext, Tool], bool]) -> FilteredToolset:
        """This toolset without the tools for which `keep(ctx, tool)` is false."""
        return FilteredToolset(self, keep)

    def prefixed(self, prefix: str) -> PrefixedToolset:
        """This toolset with every name as `"{prefix}_{name}"`."""
        return PrefixedToolset(self, prefix)

    def renamed(self, names: Mapping[str, str]) -> RenamedToolset:
        """This toolset with the tools named in `names` (old name to new) renamed."""
        return RenamedToolset(self, names)

    def prepared(self, prepare: Prepare) -> PreparedToolset:
        """This toolset with `prepare(ctx, tools)` choosing each step's tools (see `Prepare`)."""
        return PreparedToolset(self, prepare)


Prepare: TypeAlias = Callable[
    [ToolsetContext, list[Tool]], Sequence[ToolLike] | Awaitable[Sequence[ToolLike]]
]
"""Chooses a step's tools: called with the step's context and the tools on offer; returns (or
awaits to) the tools to send, in order. It may drop, reorder or replace tools."""


class FunctionToolset(Toolset):
    """A fixed list of tools: `Tool`s, typed functions or definition dicts (see `as_tool`).

    Args:
        tools: The tools, resolved once here.
        label: How conflicts and problems name this toolset.
    """

    def __init__(self, tools: Iterable[ToolLike] = (), *, label: str = "tools") -> None:
        self.label = label
        self.tools: tuple[Tool, ...] = tuple(as_tool(t) for t in tools)

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        return self.tools  # one tuple for ever: every step sees it unchanged

    def __repr__(self) -> str:
        return f"FunctionToolset({[t.name for t in self.tools]!r})"


def same_tools(a: Sequence[Tool], b: Sequence[Tool]) -> bool:
    """Whether two listings hold the very same tool objects, in the same order."""
    return a is b or (len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True)))


class WrapperToolset(Toolset):
    """A toolset over another one; subclasses change what `tools_for` hands back.

    Attributes:
        wrapped: The toolset underneath.
    """

    def __init__(self, wrapped: Toolset) -> None:
        self.wrapped = wrapped
        self.label = wrapped.label

    @property
    def remote(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.wrapped.remote

    @property
    def problems(self) -> list[str]:
        return self.wrapped.problems

    def report(self, problem: str) -> None:
        self.wrapped.report(problem)

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        return await self.wrapped.tools_for(ctx)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.wrapped!r})"


class FilteredToolset(WrapperToolset):
    """The tools of `wrapped` for which `keep(ctx, tool)` is true, asked per step."""

    def __init__(self, wrapped: Toolset, keep: Callable[[ToolsetContext, Tool], bool]) -> None:
        super().__init__(wrapped)
        self.keep = keep

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        return [t for t in await self.wrapped.tools_for(ctx) if self.keep(ctx, t)]


class RenamedTool(ToolWrapper):
    """A tool under another name; its definitions are the wrapped ones renamed, kept per dialect."""

    def __init__(self, wrapped: Tool, name: str) -> None:
        super().__init__(wrapped)
        self._name = name
        self._definitions: dict[DefinitionDialect, ToolDefinition] = {}

    @property
    def name(self) -> str:
        return self._name

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        found = self._definitions.get(dialect)
        if found is None:
            inner = self.wrapped.definition(dialect)
            found = self._definitions[dialect] = dataclasses.replace(inner, name=self._name)
        return found

    def __repr__(self) -> str:
        return f"{self._name!r} ({self.wrapped!r})"


class _Renaming(WrapperToolset):
    """Renames some tools of `wrapped`, keeping one renamed tool per wrapped tool across steps,
    so a definition compiled once is never compiled again."""

    def __init__(self, wrapped: Toolset) -> None:
        super().__init__(wrapped)
        self._made: dict[int, tuple[Tool, Tool]] = {}
        self._last: tuple[Sequence[Tool], tuple[Tool, ...]] = ((), ())

    def new_name(self, name: str) -> str | None:
        """The tool's new name, or `None` to keep it as it is."""
        raise NotImplementedError

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        listed = await self.wrapped.tools_for(ctx)
        if same_tools(listed, self._last[0]):
            return self._last[1]  # nothing changed: the same answer, at no cost per tool
        made: dict[int, tuple[Tool, Tool]] = {}
        out: list[Tool] = []
        for tool in listed:
            name = self.new_name(tool.name)
            if name is None:
                out.append(tool)
                continue
            key = id(tool)
            found = self._made.get(key)
            if found is None or found[0] is not tool or found[1].name != name:
                found = (tool, RenamedTool(tool, name))
            made[key] = found
            out.append(found[1])
        self._made = made  # tools gone from the listing are let go
        self._last = (listed, tuple(out))
        return self._last[1]


class PrefixedToolset(_Renaming):
    """Every tool of `wrapped` as `"{prefix}_{name}"`; the prefix also labels the toolset."""

    def __init__(self, wrapped: Toolset, prefix: str) -> None:
        if not prefix:
            raise ValueError("a prefix must not be empty")
        super().__init__(wrapped)
        self.prefix = prefix
        self.label = prefix

    def new_name(self, name: str) -> str | None:
        return f"{self.prefix}_{name}"


class RenamedToolset(_Renaming):
    """The tools of `wrapped`, those named in `names` (old name to new) renamed."""

    def __init__(self, wrapped: Toolset, names: Mapping[str, str]) -> None:
        super().__init__(wrapped)
        self.names = dict(names)

    def new_name(self, name: str) -> str | None:
        return self.names.get(name)


class PreparedToolset(WrapperToolset):
    """The tools `prepare(ctx, tools)` chooses from those of `wrapped`, each step.

    `prepare` may be sync or async; whatever it returns is what the step offers (a tool it
    adds that `wrapped` never listed is offered too). A `prepare` that raises fails the run:
    it is the caller's own code, not a server's.
    """

    def __init__(self, wrapped: Toolset, prepare: Prepare) -> None:
        super().__init__(wrapped)
        self.prepare = prepare

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        offered = list(await self.wrapped.tools_for(ctx))
        chosen: Any = await maybe_await(self.prepare(ctx, offered))
        if chosen is None:
            raise TypeError("a prepare function returned None; return the tools to offer")
        return [as_tool(t) for t in chosen]


ToolsetLike: TypeAlias = "Tool | Callable[..., Any] | Mapping[str, Any] | NativeTool | Toolset"
"""What `Agent(tools=[...])` takes in its list: `ToolLike` items and toolsets."""
