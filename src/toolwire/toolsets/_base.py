"""`Toolset`: tools asked for per step of a run; `FunctionToolset`, a fixed list of them; the
wrappers; `CombinedToolset` (several toolsets as one, name conflicts settled by the caller's rule),
`as_toolset`, and what a run asks of its toolset each step (`StepTools`).

A toolset answers one question, `await toolset.tools_for(ctx)`: which tools the next model
request offers. Wrappers (filtered, prefixed, renamed, prepared) and `CombinedToolset` are
toolsets over toolsets; a `ToolRegistry`, an `McpClient` and an `McpToolRegistry` are toolsets
too. A toolset hands back the same tool objects while its tools do not change, so each tool's
definition, compiled once per dialect and cached on the tool, is never compiled again per step.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import typing
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, TypeAlias

from .._record import record
from .._util import each_at_once, maybe_await
from ..errors import ToolNameConflictError
from ..messages import Message
from ..middleware import Hooks, ToolWrapper, with_hooks
from ..native import NativeTool
from ..tool_search import ToolSearch
from ..tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool

__all__ = [
    "CombinedToolset",
    "FilteredToolset",
    "FunctionToolset",
    "OnConflict",
    "PrefixedToolset",
    "Prepare",
    "PreparedToolset",
    "RenamedTool",
    "RenamedToolset",
    "StepTools",
    "Toolset",
    "ToolsetContext",
    "ToolsetLike",
    "WrapperToolset",
    "as_toolset",
    "run_toolset",
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

    # -- what a run asks of the toolsets it is given: the agent and the loop reach the toolset
    # machinery (and tool search) only through these, so a run without toolsets never loads it.

    @staticmethod
    def for_run(tools: Sequence[ToolsetLike], hooks: Hooks | None) -> Toolset:
        """The toolset a run of `tools` (this toolset among them) asks each step."""
        toolset = run_toolset(tools, hooks)
        assert toolset is not None
        return toolset

    def step_tools(self) -> StepTools:
        """A run's view of this toolset, asked once per step."""
        return StepTools(self)

    def default_search(self) -> ToolSearch:
        """The tool search of a run with a toolset and no `tool_search` configured (a toolset's
        run always has one: which of its tools are deferred shows only in each step's list)."""
        return ToolSearch()


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


OnConflict: TypeAlias = Literal["first", "prefix", "error"]
"""What `CombinedToolset` does when two of its toolsets offer one name: `"first"` keeps the
first toolset's tool, `"prefix"` renames the later one `"{label}_{name}"`, `"error"` raises
`ToolNameConflictError`. The first two report the conflict (see `Toolset.report`)."""

_LABEL_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")


class CombinedToolset(Toolset):
    """Several toolsets as one, listed each step (those that wait on servers concurrently) and
    offered in the order given.

    A toolset that fails to list its tools (a server gone, say) is reported and offers nothing
    that step; the others' tools are still offered. A toolset listing one name twice keeps the
    first, and a tool with an empty name is left out; both are reported.

    Args:
        *toolsets: Toolsets, or anything `as_toolset` takes.
        on_conflict: The rule for a name two toolsets offer (see `OnConflict`).
        label: How conflicts and problems name this toolset.
    """

    def __init__(
        self,
        *toolsets: Toolset | ToolLike | Iterable[ToolsetLike],
        on_conflict: OnConflict = "first",
        label: str = "combined",
    ) -> None:
        if on_conflict not in ("first", "prefix", "error"):
            raise ValueError(
                f"on_conflict must be 'first', 'prefix' or 'error', not {on_conflict!r}"
            )
        self.toolsets = [as_toolset(t) for t in toolsets]
        self.on_conflict: OnConflict = on_conflict
        self.label = label
        self._prefixed: dict[tuple[int, str], tuple[Tool, Tool]] = {}
        self._last: tuple[list[Sequence[Tool]], list[str], tuple[Tool, ...]] = ([], [], ())

    @property
    def remote(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        return any(t.remote for t in self.toolsets)

    def _labels(self) -> list[str]:
        labels: list[str] = []
        for index, toolset in enumerate(self.toolsets):
            label = _LABEL_CHARS.sub("_", toolset.label).strip("_") or f"toolset{index + 1}"
            # Two toolsets labelled alike would prefix alike: number the later one.
            labels.append(label if label not in labels else f"{label}{index + 1}")
        return labels

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        labels = self._labels()
        listings: list[Sequence[Tool]] = [()] * len(self.toolsets)
        refused: list[ToolNameConflictError] = []

        async def list_one(index: int) -> None:
            try:
                listings[index] = await self.toolsets[index].tools_for(ctx)
            except ToolNameConflictError as exc:
                # A nested combination told to refuse: the caller's rule stands. Raised below,
                # by itself rather than inside the task group's exception group.
                refused.append(exc)
            except Exception as exc:
                self.report(f"{labels[index]} could not list its tools: {exc}")

        remote: list[int] = []
        for index, toolset in enumerate(self.toolsets):
            if toolset.remote:
                remote.append(index)
            else:
                await list_one(index)
        await each_at_once(list_one, remote)
        if refused:
            raise refused[0]
        last_listings, last_labels, last_out = self._last
        if (
            labels == last_labels
            and len(listings) == len(last_listings)
            and all(map(same_tools, listings, last_listings))
        ):
            return last_out  # nothing changed: the same answer, at no cost per tool
        out = tuple(self._merge(labels, listings))
        self._last = (listings, labels, out)
        return out

    def _merge(self, labels: list[str], listings: list[Sequence[Tool]]) -> list[Tool]:
        owner: dict[str, int] = {}
        out: list[Tool] = []
        prefixed: dict[tuple[int, str], tuple[Tool, Tool]] = {}
        for index, tools in enumerate(listings):
            label = labels[index]
            for tool in tools:
                name = tool.name
                if not name:
                    self.report(f"{label} offers a tool with an empty name; it is left out")
                    continue
                first = owner.get(name)
                if first == index:
                    self.report(f"{label} offers two tools named {name!r}; the first is kept")
                    continue
                if first is not None:
                    if self.on_conflict == "error":
                        raise ToolNameConflictError(name, [labels[first], label])
                    if self.on_conflict == "first":
                        self.report(
                            f"{labels[first]} and {label} both offer {name!r}; "
                            f"{labels[first]}'s is kept"
                        )
                        continue
                    new = f"{label}_{name}"
                    if new in owner:
                        self.report(f"{label}'s {name!r} collides even as {new!r}; left out")
                        continue
                    self.report(
                        f"{labels[first]} and {label} both offer {name!r}; {label}'s is {new!r}"
                    )
                    key = (id(tool), new)
                    found = self._prefixed.get(key)
                    if found is None or found[0] is not tool:
                        found = (tool, RenamedTool(tool, new))
                    prefixed[key] = found
                    tool, name = found[1], new
                owner[name] = index
                out.append(tool)
        self._prefixed = prefixed
        return out

    def __repr__(self) -> str:
        return f"CombinedToolset({', '.join(map(repr, self.toolsets))}, on_conflict={self.on_conflict!r})"


def as_toolset(tools: Toolset | ToolLike | Iterable[ToolsetLike]) -> Toolset:
    """Anything `Agent(tools=...)` takes, as one toolset.

    A `Toolset` is returned as it is; a tool, a function or a definition dict becomes a
    `FunctionToolset` of one; a list becomes a `CombinedToolset` (first wins) of its toolsets
    and `FunctionToolset`s of the plain tools between them, in the list's order. Native tools
    (`web_search()`...) in a list are skipped: the provider runs them.

    Raises:
        TypeError: a native tool given alone.
    """
    if isinstance(tools, Toolset):
        return tools
    if isinstance(tools, NativeTool):
        raise TypeError(f"{tools.kind}() is run by the model's provider: it is not a toolset")
    if isinstance(tools, Mapping) or callable(tools) or isinstance(tools, Tool):
        return FunctionToolset([typing.cast(ToolLike, tools)])
    members: list[Toolset] = []
    plain: list[ToolLike] = []
    for item in tools:
        if isinstance(item, Toolset):
            if plain:
                members.append(FunctionToolset(plain))
                plain = []
            members.append(item)
        elif not isinstance(item, NativeTool):
            plain.append(item)
    if plain:
        members.append(FunctionToolset(plain))
    if len(members) == 1:
        return members[0]
    return CombinedToolset(*members, on_conflict="first", label="tools")


class _HookedToolset(WrapperToolset):
    """The tools of `wrapped` with a run's hooks around their calls, one wrapper per tool kept
    across steps (so definitions stay cached)."""

    def __init__(self, wrapped: Toolset, hooks: Hooks) -> None:
        super().__init__(wrapped)
        self.hooks = hooks
        self._made: dict[int, tuple[Tool, Tool]] = {}
        self._last: tuple[Sequence[Tool], tuple[Tool, ...]] = ((), ())

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        listed = await self.wrapped.tools_for(ctx)
        if same_tools(listed, self._last[0]):
            return self._last[1]
        made: dict[int, tuple[Tool, Tool]] = {}
        for tool in listed:
            found = self._made.get(id(tool))
            if found is None or found[0] is not tool:
                found = (tool, with_hooks(tool, self.hooks))
            made[id(tool)] = found
        self._made = made
        self._last = (listed, tuple(hooked for _, hooked in made.values()))
        return self._last[1]


def run_toolset(tools: Sequence[ToolsetLike], hooks: Hooks | None) -> Toolset | None:
    """The toolset a run asks each step, or `None` when `tools` holds no toolset (the run's
    tools are then fixed, resolved once, and nothing is asked per step)."""
    if not any(isinstance(t, Toolset) for t in tools):
        return None
    toolset = as_toolset(tools)
    return _HookedToolset(toolset, hooks) if hooks is not None else toolset


class StepTools:
    """A run's view of its toolset: the current step's tools, by name and in order.

    Attributes:
        toolset: The run's toolset.
        by_name: The step's tools by name (a repeated name: the first, reported).
        listed: The toolset's last answer, as it gave it.
    """

    def __init__(self, toolset: Toolset) -> None:
        self.toolset = toolset
        self.by_name: dict[str, Tool] = {}
        self.listed: Sequence[Tool] = ()

    def refresh_step(
        self, step: int, messages: Sequence[Message], deps: Any, run_id: str
    ) -> Awaitable[bool]:
        """`refresh` for a run's step (an awaitable of `bool`)."""
        return self.refresh(ToolsetContext(step=step, messages=messages, deps=deps, run_id=run_id))

    async def refresh(self, ctx: ToolsetContext) -> bool:
        """Ask the toolset for the step's tools; `True` when they differ from the last step's."""
        listed = await self.toolset.tools_for(ctx)
        if same_tools(listed, self.listed):
            return False
        by_name: dict[str, Tool] = {}
        for tool in listed:
            if tool.name in by_name:
                self.toolset.report(f"two tools are named {tool.name!r}; the first is kept")
                continue
            by_name[tool.name] = tool
        self.by_name, self.listed = by_name, listed
        return True
