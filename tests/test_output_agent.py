"""Typed agent results: function tools and an output type together, in every mode, with
corrections, refusals, streaming and a history that stays whole."""

from __future__ import annotations

import dataclasses
from typing import Any

import pydantic
import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    FunctionModel,
    ScriptedModel,
    SystemMessage,
    TestModel,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    run_loop,
    tool,
)
from toolwire.errors import OutputValidationError, UnsupportedError
from toolwire.messages import Message
from toolwire.models import ModelRequest

pytestmark = pytest.mark.anyio


class Sum(pydantic.BaseModel):
    total: int
    explanation: str


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def assert_every_call_answered_once(messages: list[Message]) -> None:
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m.call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(results)


async def test_tools_then_a_typed_answer_natively() -> None:
    result = await Agent(TestModel(), tools=[add], output_type=Sum).run("What is 2 + 3?")
    assert result.stop_reason == "completed"
    assert isinstance(result.output, Sum)
    assert [t.name for t in result.trace] == ["add"]
    assert_every_call_answered_once(result.messages)


async def test_tool_mode_runs_tools_then_takes_the_final_call() -> None:
    model = ScriptedModel(
        [
            ("add", {"a": 2, "b": 3}),
            ToolCall("fin", "Sum", '{"total": 5, "explanation": "2 + 3"}'),
        ]
    )
    result = await run_loop(model, "2 + 3?", tools=[add], output_type=Sum, output_mode="tool")
    assert result.output == Sum(total=5, explanation="2 + 3")
    assert result.stop_reason == "completed"
    assert all(r.tool_choice == "required" for r in model.requests)
    assert {t.name for t in model.requests[0].tools} == {"add", "Sum"}
    last = result.messages[-1]
    assert isinstance(last, ToolResultMessage) and last.call_id == "fin" and not last.is_error
    assert_every_call_answered_once(result.messages)


async def test_an_invalid_final_call_is_corrected_in_its_result() -> None:
    model = ScriptedModel(
        [
            ToolCall("f1", "Sum", '{"total": "five"}'),
            ToolCall("f2", "Sum", '{"total": 5, "explanation": "ok"}'),
        ]
    )
    result = await Agent(model, output_type=Sum, output_mode="tool").run("2 + 3?")
    assert result.output == Sum(total=5, explanation="ok")
    correction = result.messages[2]  # after the user turn and the first call
    assert isinstance(correction, ToolResultMessage) and correction.is_error
    assert "total" in correction.text and "explanation" in correction.text
    assert_every_call_answered_once(result.messages)


async def test_native_corrections_then_the_error_carries_the_last_output() -> None:
    answers = ['{"total": 1}', '{"total": 2}']
    model = FunctionModel(lambda messages, request: answers.pop(0))
    agent = Agent(model, output_type=Sum, output_retries=1)
    with pytest.raises(OutputValidationError) as caught:
        await agent.run("?")
    assert caught.value.output == '{"total": 2}'
    correction = model.requests[1].messages[-1]
    assert isinstance(correction, UserMessage) and "explanation" in correction.text


async def test_a_run_whose_final_call_stays_invalid_leaves_every_call_answered() -> None:
    model = ScriptedModel([ToolCall("f1", "Sum", "{}"), ToolCall("f2", "Sum", "{}")])
    seen: list[Any] = []
    agent = Agent(model, output_type=Sum, output_mode="tool", subscribers=[seen.append])
    with pytest.raises(OutputValidationError):
        await agent.run("?")
    final = seen[-1].result
    assert final.stop_reason == "error"
    assert_every_call_answered_once(final.messages)


async def test_prompted_mode_adds_the_instructions_once() -> None:
    def reply(messages: list[Message], request: ModelRequest) -> str:
        notes = [m for m in messages if isinstance(m, SystemMessage) and '"total"' in m.text]
        assert len(notes) == 1 and request.output is None
        return '{"total": 3, "explanation": "1 + 2"}'

    agent = Agent(
        FunctionModel(reply), instructions="Be exact.", output_type=Sum, output_mode="prompted"
    )
    first = await agent.run("1 + 2?")
    assert first.output == Sum(total=3, explanation="1 + 2")
    assert isinstance(first.messages[0], SystemMessage) and first.messages[0].text == "Be exact."
    again = await agent.run("Again?", history=first.messages)
    assert again.output == first.output


async def test_a_refusal_ends_the_run_as_refused() -> None:
    refusal = AssistantMessage(parts=[TextBlock("No.", provider_state={"refusal": True})])
    result = await Agent(ScriptedModel([refusal]), output_type=Sum).run("?")
    assert result.stop_reason == "refused" and result.refusal == "No." and result.output is None


async def test_native_mode_on_a_model_without_it_fails_before_any_request() -> None:
    model = TestModel()
    model.profile = dataclasses.replace(model.profile, structured_output="none")
    with pytest.raises(UnsupportedError, match="output_mode"):
        await Agent(model, output_type=Sum, output_mode="native").run("?")
    assert model.requests == []


async def test_streamed_runs_give_the_typed_answer_too() -> None:
    model = FunctionModel(lambda m, r: '{"total": 4, "explanation": "2 + 2"}')
    agent = Agent(model, output_type=Sum)
    async with agent.run_stream("2 + 2?") as stream:
        events = [e async for e in stream]
    assert events
    assert stream.result.output == Sum(total=4, explanation="2 + 2")
    assert model.requests[0].output is not None


async def test_a_primitive_output_through_run_loop() -> None:
    result = await run_loop(FunctionModel(lambda m, r: '{"result": 42}'), "?", output_type=int)
    assert result.output == 42
