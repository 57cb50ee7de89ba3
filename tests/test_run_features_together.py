"""The run's features that each change what a request carries, used together: a toolset's step
lists with deferred tools and tool search, an output budget inside a toolset, and a handoff to an
agent whose tools are a toolset with its own budget."""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolwire import Agent, ToolResultMessage, deferred, tool
from toolwire.models.testing import FunctionModel, ScriptedModel
from toolwire.toolsets import FunctionToolset

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


@tool
def server_log() -> str:
    """The server's log for today."""
    return "\n".join(f"line {i}: GET /orders/{i} 200" for i in range(4000))


def names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


async def test_a_deferred_tool_inside_a_toolset_is_found_then_called() -> None:
    model = ScriptedModel(
        [("search_tools", {"query": "weather"}), ("get_weather", {"city": "Recife"}), "Sunny."]
    )
    toolset = FunctionToolset([add, *deferred(get_weather)])
    result = await Agent(model, tools=[toolset]).run("Weather in Recife?")
    assert [names(r) for r in model.requests] == [
        ["add", "search_tools"],
        ["add", "search_tools", "get_weather"],
        ["add", "search_tools", "get_weather"],
    ]
    answers = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert [a.is_error for a in answers] == [False, False]
    assert answers[1].text == "sunny in Recife" and result.text == "Sunny."


async def test_a_deferred_tool_in_a_toolset_called_before_it_is_found_is_an_error_result() -> None:
    model = ScriptedModel([("get_weather", {"city": "Recife"}), "I could not."])
    result = await Agent(model, tools=[FunctionToolset([add, *deferred(get_weather)])]).run("?")
    answer = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert answer.is_error and "search_tools" in answer.text
    assert result.stop_reason == "completed"


async def test_a_budget_cuts_a_toolset_tool_and_read_result_reaches_the_whole() -> None:
    def turn(messages, request):  # type: ignore[no-untyped-def]
        last = messages[-1]
        if not isinstance(last, ToolResultMessage):
            return [("server_log", {})]
        if last.name == "server_log":
            handle = re.search(r'handle="(r_[0-9a-f]+)"', last.text)
            assert handle is not None, last.text[-400:]
            return [("read_result", {"handle": handle.group(1), "query": "/orders/3141 "})]
        return last.text

    model = FunctionModel(turn)
    agent = Agent(model, tools=[FunctionToolset([server_log])], output_budget=300)
    result = await agent.run("When was order 3141 fetched?")
    assert "read_result" in names(model.requests[0])
    assert "line 3141: GET /orders/3141 200" in result.text


async def test_a_handoff_to_an_agent_with_a_toolset_and_a_budget_uses_both() -> None:
    def specialist_turn(messages, request):  # type: ignore[no-untyped-def]
        last = messages[-1]
        if isinstance(last, ToolResultMessage) and last.name == "server_log":
            return "cut" if "left out" in last.text else "whole"
        return [("server_log", {})]

    specialist = Agent(
        FunctionModel(specialist_turn),
        name="logs",
        tools=[FunctionToolset([server_log])],
        output_budget=300,
    )
    front = Agent(ScriptedModel([("transfer_to_logs", {})]), name="front", handoffs=[specialist])
    result = await front.run("Look at the log.")
    assert result.agent == "logs" and result.agent_path == ["front", "logs"]
    assert result.text == "cut"
