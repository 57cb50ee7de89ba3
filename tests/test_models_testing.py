from __future__ import annotations

import datetime as dt
import enum
from typing import Annotated, Literal

import pydantic
import pytest
from pydantic import Field

from toolwire import (
    AssistantMessage,
    Completion,
    ModelRequestsForbidden,
    ScriptedModel,
    TestModel,
    TextBlock,
    ToolCall,
    model,
    tool,
)
from toolwire.models import (
    allow_model_requests,
    check_model_requests_allowed,
    forbid_model_requests,
)
from toolwire.models.base import CompletionDone, TextDelta, ToolCallDelta
from toolwire.models.testing import example_arguments

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    street: str = Field(min_length=12)
    number: int = Field(ge=10, le=20)
    tags: list[str] = Field(min_length=2)


def complex_tool(
    color: Color,
    when: dt.datetime,
    day: dt.date,
    mode: Literal["fast", "slow"],
    address: Address,
    ratio: Annotated[float, Field(gt=0.5, lt=0.9)],
    note: str | None = None,
    count: int = 3,
) -> str:
    """Exercise many schema features."""
    return "ok"


async def test_test_model_arguments_satisfy_the_schema() -> None:
    t = tool(complex_tool)
    args = example_arguments(t.parameters)
    parsed = t.parse_args(args)
    assert parsed["color"] is Color.RED
    assert parsed["mode"] == "fast"
    assert 0.5 < parsed["ratio"] < 0.9


async def test_example_arguments_for_raw_schemas() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 5, "maximum": 9},
            "x": {"type": "number", "exclusiveMinimum": 2},
            "s": {"type": "string", "minLength": 10, "maxLength": 12},
            "items": {"type": "array", "items": {"type": "boolean"}, "minItems": 2},
            "choice": {"anyOf": [{"type": "null"}, {"type": "string", "format": "uuid"}]},
            "fixed": {"const": "v1"},
            "nested": {"$ref": "#/$defs/N"},
        },
        "required": ["n", "x", "s", "items", "choice", "fixed", "nested"],
        "$defs": {
            "N": {
                "type": "object",
                "properties": {"k": {"type": "string", "enum": ["a", "b"]}},
                "required": ["k"],
            }
        },
    }
    args = example_arguments(schema)
    assert 5 <= args["n"] <= 9 and args["x"] > 2 and 10 <= len(args["s"]) <= 12
    assert args["items"] == [True, True]
    assert args["choice"] == "00000000-0000-4000-8000-000000000000"
    assert args["fixed"] == "v1" and args["nested"] == {"k": "a"}
    from toolwire._validate import SchemaValidator

    assert SchemaValidator(schema).problems(args) == []


async def test_test_model_respects_call_tools_and_final_text() -> None:
    @tool
    def a() -> str:
        """A."""
        return "a"

    @tool
    def b() -> str:
        """B."""
        return "b"

    m = TestModel(call_tools=["b"], final_text="finished")
    first = await m.complete("go", tools=[a, b])
    assert [c.name for c in first.tool_calls] == ["b"]
    assert first.finish_reason == "tool_calls"
    history = [*m.requests[0].messages, first.message, first.tool_calls[0].result("b")]
    second = await m.complete(None, history=history, tools=[a, b])
    assert second.text == "finished" and second.finish_reason == "stop"
    none = await TestModel().complete("go", tools=[a], tool_choice="none")
    assert none.text == "success (no tool calls)"


async def test_scripted_model_accepts_every_reply_shape() -> None:
    custom = Completion(message=AssistantMessage(parts=[TextBlock("raw")]), finish_reason="length")
    m = ScriptedModel(
        [
            "text",
            ToolCall("id1", "f", "{}"),
            ("g", {"x": 1}),
            [("h", '{"y": 2}'), ToolCall("id2", "i", "{}")],
            AssistantMessage(parts=[TextBlock("message")]),
            custom,
        ]
    )
    assert (await m.complete("a")).text == "text"
    assert [c.id for c in (await m.complete("a")).tool_calls] == ["id1"]
    g = (await m.complete("a")).tool_calls[0]
    assert (g.name, g.args) == ("g", {"x": 1})
    assert [c.name for c in (await m.complete("a")).tool_calls] == ["h", "i"]
    assert (await m.complete("a")).text == "message"
    assert await m.complete("a") is custom
    assert m.remaining == 0
    with pytest.raises(Exception, match="no reply left"):
        await m.complete("a")
    m.add("more")
    assert (await m.complete("a")).text == "more"
    with pytest.raises(TypeError, match="cannot answer"):
        await ScriptedModel([42]).complete("x")  # type: ignore[list-item]


async def test_streaming_a_scripted_reply() -> None:
    m = ScriptedModel([[("f", {"a": "long argument text"}), ("g", {})], "hello big world"])
    events = [e async for e in m.stream_complete("x")]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0, 1}
    assembled = "".join(d.arguments for d in deltas if d.index == 0)
    assert assembled == '{"a": "long argument text"}'
    assert isinstance(events[-1], CompletionDone)
    text_events = [e async for e in m.stream_complete("y")]
    assert "".join(e.text for e in text_events if isinstance(e, TextDelta)) == "hello big world"


def test_model_resolution() -> None:
    assert isinstance(model("test"), TestModel)
    assert model("test:custom").model_name == "custom"
    with pytest.raises(ValueError, match=r"Unknown model provider 'nope'.*Known providers: .*test"):
        model("nope:x")


def test_request_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    check_model_requests_allowed("openai")
    with forbid_model_requests():
        with pytest.raises(ModelRequestsForbidden, match="openai"):
            check_model_requests_allowed("openai")
        with allow_model_requests():
            check_model_requests_allowed("openai")
    monkeypatch.setenv("TOOLWIRE_ALLOW_MODEL_REQUESTS", "0")
    with pytest.raises(ModelRequestsForbidden):
        check_model_requests_allowed("anthropic")
    with allow_model_requests():
        check_model_requests_allowed("anthropic")


async def test_offline_models_work_while_requests_are_forbidden() -> None:
    with forbid_model_requests():
        result = await ScriptedModel(["fine"]).complete("x")
    assert result.text == "fine"
