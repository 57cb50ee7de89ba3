"""Toolsets: the wrappers, the conflict rules, and the loop asking a toolset each step."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from toolwire import Agent, Hooks, ToolRegistry, tool
from toolwire.errors import DuplicateToolError, ToolNameConflictError
from toolwire.models.testing import FunctionModel, ScriptedModel
from toolwire.tools import Tool
from toolwire.toolsets import (
    CombinedToolset,
    FunctionToolset,
    StepTools,
    Toolset,
    ToolsetContext,
    as_toolset,
    run_toolset,
)

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool(name="echo")
def shout(text: str) -> str:
    """Echo the text, louder."""
    return text.upper()


def names(tools: Sequence[Tool]) -> list[str]:
    return [t.name for t in tools]


async def test_wrappers_filter_prefix_rename_and_prepare() -> None:
    base = FunctionToolset([add, echo], label="math")
    ctx = ToolsetContext(step=3)
    assert names(await base.filtered(lambda c, t: t.name != "add").tools_for(ctx)) == ["echo"]
    prefixed = await base.prefixed("m").tools_for(ctx)
    assert names(prefixed) == ["m_add", "m_echo"]
    assert prefixed[0].definition("anthropic").name == "m_add"
    assert (await prefixed[0].invoke({"a": 2, "b": 3})).text == "5"
    renamed = await base.renamed({"echo": "say"}).tools_for(ctx)
    assert names(renamed) == ["add", "say"]
    assert renamed[0] is add  # an unrenamed tool is the tool itself

    seen: list[int] = []

    async def only_on_odd_steps(c: ToolsetContext, tools: list[Tool]) -> list[Tool]:
        seen.append(c.step)
        return tools if c.step % 2 else []

    prepared = base.prepared(only_on_odd_steps)
    assert names(await prepared.tools_for(ctx)) == ["add", "echo"]
    assert await prepared.tools_for(ToolsetContext(step=4)) == []
    assert seen == [3, 4]


async def test_renamed_tools_are_the_same_objects_across_steps_so_definitions_stay_cached() -> None:
    prefixed = FunctionToolset([add]).prefixed("m")
    first = await prefixed.tools_for(ToolsetContext(step=1))
    definition = first[0].definition("openai")
    again = await prefixed.tools_for(ToolsetContext(step=2))
    assert again[0] is first[0]
    assert again[0].definition("openai") is definition


async def test_conflicts_follow_the_callers_rule() -> None:
    a = FunctionToolset([echo], label="a")
    b = FunctionToolset([shout, add], label="b")
    ctx = ToolsetContext()

    first = await CombinedToolset(a, b).tools_for(ctx)
    assert names(first) == ["echo", "add"]
    assert (await first[0].invoke({"text": "x"})).text == "x"

    prefixed = CombinedToolset(a, b, on_conflict="prefix")
    tools = await prefixed.tools_for(ctx)
    assert names(tools) == ["echo", "b_echo", "add"]
    assert (await tools[1].invoke({"text": "x"})).text == "X"
    assert prefixed.problems == ["a and b both offer 'echo'; b's is 'b_echo'"]

    with pytest.raises(ToolNameConflictError, match="'echo' is offered by a and b") as caught:
        await CombinedToolset(a, b, on_conflict="error").tools_for(ctx)
    assert caught.value.sources == ("a", "b")
    assert isinstance(caught.value, DuplicateToolError)

    # A nested refusal reaches the caller as itself, not inside an exception group.
    strict = CombinedToolset(a, b, on_conflict="error")
    with pytest.raises(ToolNameConflictError):
        await CombinedToolset(strict, FunctionToolset([add], label="c")).tools_for(ctx)


class _Hostile(Toolset):
    """Lists a duplicate and an unnamed tool, or fails outright."""

    label = "hostile"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        if self.fail:
            raise ConnectionError("gone")
        nameless = tool(name="x", description="", parameters={"type": "object"}, execute=lambda: 1)
        object.__setattr__(nameless, "_name", "")
        return [echo, echo, nameless]


async def test_a_hostile_toolset_is_reported_once_and_never_stops_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    combined = CombinedToolset(_Hostile(), _Hostile(fail=True), [add])
    with caplog.at_level(logging.WARNING, logger="toolwire.toolsets"):
        for step in (1, 2):
            assert names(await combined.tools_for(ToolsetContext(step=step))) == ["echo", "add"]
    # Listed concurrently: the failure may be met first.
    assert sorted(combined.problems) == [
        "hostile offers a tool with an empty name; it is left out",
        "hostile offers two tools named 'echo'; the first is kept",
        "hostile2 could not list its tools: gone",
    ]
    # Two steps, each problem logged once.
    assert len([r for r in caplog.records if r.name == "toolwire.toolsets"]) == 3


async def test_as_toolset_takes_what_agent_takes() -> None:
    registry = ToolRegistry([add])
    assert as_toolset(registry) is registry
    assert names(await as_toolset(echo).tools_for(ToolsetContext())) == ["echo"]
    mixed = as_toolset([echo, registry, add.function])
    assert isinstance(mixed, CombinedToolset)
    assert names(await mixed.tools_for(ToolsetContext())) == ["echo", "add"]


async def test_the_loop_asks_the_toolset_every_step_and_calls_reach_that_steps_tools() -> None:
    registry = ToolRegistry([add])

    def decide(messages: object, request: object) -> object:
        offered = names(request.tools)
        step = len(model.requests)
        if step == 1:
            assert offered == ["echo", "add"]
            registry.add(tool(name="later")(_later))
            return ("add", {"a": 1, "b": 2})
        if step == 2:
            assert offered == ["echo", "add", "later"]
            return ("later", {})
        return "done"

    model = FunctionModel(decide)
    result = await Agent(model, tools=[echo, registry]).run("go")
    assert result.text == "done"
    assert [t.result for t in result.trace] == ["3", "later ran"]


def _later() -> str:
    """Registered mid-run."""
    return "later ran"


async def test_a_tool_gone_from_the_toolset_is_an_error_result_and_the_run_goes_on() -> None:
    registry = ToolRegistry([add, echo])
    steps: list[list[str]] = []

    def decide(messages: object, request: object) -> object:
        steps.append(names(request.tools))
        if len(steps) == 1:
            registry.remove("echo")
            return ("add", {"a": 1, "b": 1})
        if len(steps) == 2:
            return ("echo", {"text": "hi"})
        return "done"

    result = await Agent(FunctionModel(decide), tools=[registry]).run("go")
    assert steps == [["add", "echo"], ["add"], ["add"]]
    assert result.text == "done"
    assert result.trace[1].is_error
    assert 'unknown tool "echo"' in result.trace[1].result


async def test_prepare_sees_the_step_history_and_deps() -> None:
    seen: list[tuple[int, int, object]] = []

    def prepare(ctx: ToolsetContext, tools: list[Tool]) -> list[Tool]:
        seen.append((ctx.step, len(ctx.messages), ctx.deps))
        return [] if ctx.step > 1 else tools

    model = ScriptedModel([("add", {"a": 1, "b": 1}), "two"])
    agent = Agent(model, tools=[FunctionToolset([add]).prepared(prepare)], deps="d")
    result = await agent.run("go")
    assert result.text == "two"
    assert seen == [(1, 1, "d"), (2, 3, "d")]
    assert [names(r.tools) for r in model.requests] == [["add"], []]


async def test_hooks_wrap_toolset_tools_once() -> None:
    calls: list[str] = []
    hooks = Hooks(before_execute=lambda inv: calls.append(inv.tool.name))
    model = ScriptedModel([("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2}), "ok"])
    agent = Agent(model, tools=[ToolRegistry([add])], hooks=hooks)
    await agent.run("go")
    assert calls == ["add", "add"]
    first, second = (r.tools[0] for r in model.requests[:2])
    assert first is second


async def test_duplicate_plain_tools_are_still_refused_when_the_agent_is_built() -> None:
    with pytest.raises(ValueError, match="two tools are named 'echo'"):
        Agent(ScriptedModel([]), tools=[echo, shout, ToolRegistry()])


async def test_an_unchanged_step_reuses_the_last_steps_answer() -> None:
    registry = ToolRegistry([add])
    toolset = run_toolset([FunctionToolset([echo]).prefixed("p"), registry], Hooks())
    assert toolset is not None
    view = StepTools(toolset)
    assert await view.refresh(ToolsetContext(step=1))
    first = view.by_name
    assert list(first) == ["p_echo", "add"]
    assert not await view.refresh(ToolsetContext(step=2))
    assert view.by_name is first
    registry.add(echo)
    assert await view.refresh(ToolsetContext(step=3))
    assert list(view.by_name) == ["p_echo", "add", "echo"]
    assert view.by_name["p_echo"] is first["p_echo"]
