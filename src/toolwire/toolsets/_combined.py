"""`CombinedToolset` (several toolsets as one, name conflicts settled by the caller's rule),
`as_toolset`, and what a run asks of its toolset each step (`step_tools`)."""

from __future__ import annotations

import re
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias

import anyio

from ..errors import ToolNameConflictError
from ..middleware import Hooks, with_hooks
from ..native import NativeTool
from ..tools import Tool, ToolLike
from ._base import (
    FunctionToolset,
    RenamedTool,
    Toolset,
    ToolsetContext,
    ToolsetLike,
    WrapperToolset,
    same_tools,
)

__all__ = [
    "CombinedToolset",
    "OnConflict",
    "StepTools",
    "as_toolset",
    "run_toolset",
]

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
        if len(remote) == 1:
            await list_one(remote[0])
        elif remote:
            async with anyio.create_task_group() as group:
                for index in remote:
                    group.start_soon(list_one, index)
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
