"""The run codec: `RunResult.to_json()` / `RunResult.from_json()` lose nothing.

The round trip is checked with EVERY field of every type a result holds set to something other
than its default, so a field added without a codec entry (or without a value here) fails.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypedDict

import pydantic
import pytest

from toolwire import PendingCall, RunResult, ToolError, TraceEntry
from toolwire._run_result import _ENCODERS  # pyright: ignore[reportPrivateUsage]
from toolwire.computer import ComputerAction, ComputerCall
from toolwire.messages import (
    AssistantMessage,
    Citation,
    ServerToolCallBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models.base import ToolCall
from toolwire.results import TextPart
from toolwire.usage import Cost, Usage


class City(pydantic.BaseModel):
    name: str
    population: int


@dataclass
class Point:
    x: int
    y: int


@dataclass
class Point3(Point):
    z: int


class Movie(TypedDict):
    title: str
    year: int


def _computer() -> ComputerCall:
    action = ComputerAction(
        type="drag",
        x=1,
        y=2,
        button="left",
        text="hi",
        keys=["ctrl"],
        path=[(1, 2), (3, 4)],
        scroll_x=5,
        scroll_y=6,
        direction="down",
        amount=7,
        duration=0.5,
        url="https://x.test/",
        scale=1000,
        raw={"action": "drag"},
    )
    return ComputerCall(
        "cu_1", [action], [{"id": "sc_1", "code": "x"}], "openai", {"type": "computer_call"}
    )


def full_result() -> RunResult:
    """A result with every field (and every field of what it holds) away from its default."""
    cite = Citation(url="https://x.test/", title="X", cited_text="x", start_index=1, end_index=2)
    search = ServerToolCallBlock("ws_1", "web_search", {"query": "x"})
    computer = ServerToolCallBlock("cu_1", "computer_use", {"format": "openai"})
    call = ToolCallBlock(id="c1", name="add", arguments='{"a": 1}')
    answer = AssistantMessage(parts=[TextBlock("Paris", citations=[cite]), search, call])
    messages = [
        SystemMessage("be brief"),
        UserMessage.of("where?"),
        answer,
        ToolResultMessage(call_id="c1", name="add", content=[TextPart("2")], is_error=False),
        AssistantMessage(parts=[computer]),
    ]
    error = ValueError("boom")
    return RunResult(
        text="Paris",
        messages=messages,
        new_messages=messages[1:],
        usage=Usage(1, 2, 3, 4, 5, 6, {"web_search": 1}, 7, 8, 9),
        cost=Cost(Decimal("0.0123"), "partly priced", "EUR"),
        trace=[TraceEntry("c1", "add", '{"a": 1}', "2", True, 0.25, 2, error, [_leaf()])],
        stop_reason="external_calls",
        pending=[PendingCall(ToolCall("cu_1", "computer_use", "{}"), "computer", _computer())],
        iterations=3,
        output=City(name="Paris", population=2_100_000),
        refusal="no",
        agent="writer",
        agent_path=["triage", "writer"],
        usage_by_agent={"writer": Usage(1, 2, 3, 4, 5, 6, {"web_search": 1})},
        cost_by_agent={"writer": Cost(Decimal("0.0123"), "partly priced", "EUR")},
    )


def _leaf() -> TraceEntry:
    """A sub-agent's tool call, nested under the call that ran the sub-agent."""
    return TraceEntry("s1", "look", "{}", "found", True, 0.5, 1, KeyError("k"))


def _walk(value: Any) -> list[Any]:
    """Every dataclass instance of the codec's types inside a result."""
    found: list[Any] = []
    if isinstance(value, RunResult | TraceEntry | PendingCall | Usage | Cost | ToolCall):
        found.append(value)
    if isinstance(value, ComputerCall | ComputerAction):
        found.append(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not isinstance(value, AssistantMessage | SystemMessage | UserMessage):
            for f in dataclasses.fields(value):
                found.extend(_walk(getattr(value, f.name)))
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            found.extend(_walk(item))
    return found


def test_every_field_of_the_sample_is_set() -> None:
    # A new field left at its default here would slip through the round trip unseen.
    objects = _walk(full_result())
    kinds = {type(o) for o in objects}
    assert kinds == {
        RunResult,
        TraceEntry,
        PendingCall,
        Usage,
        Cost,
        ToolCall,
        ComputerCall,
        ComputerAction,
    }
    for obj in objects:
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if obj == _leaf() and f.name == "children":
                continue  # the innermost call of the nesting has none
            assert value not in (None, "", 0, [], {}), f"{type(obj).__name__}.{f.name} is unset"
            if f.default is not dataclasses.MISSING:
                assert value != f.default, f"{type(obj).__name__}.{f.name} keeps its default"


def test_every_field_has_a_codec_entry() -> None:
    assert list(_ENCODERS) == [f.name for f in dataclasses.fields(RunResult)]


def test_a_full_result_comes_back_equal() -> None:
    result = full_result()
    loaded = RunResult.from_json(result.to_json(), output_type=City)
    for f in dataclasses.fields(RunResult):
        assert getattr(loaded, f.name) == getattr(result, f.name), f.name
    # Estimates are left out of Usage's equality: checked here one by one.
    assert (loaded.usage.tool_definition_tokens, loaded.usage.message_tokens) == (8, 9)
    assert loaded == result
    assert loaded.new_messages == result.messages[1:]
    assert loaded.citations == result.citations and loaded.citations[0].title == "X"
    assert loaded.server_tool_calls == result.server_tool_calls
    assert loaded.computer_calls == result.computer_calls
    assert loaded.computer_calls[0].actions[0].path == [(1, 2), (3, 4)]
    assert isinstance(loaded.output, City)
    # An exception is not data: it comes back as a ToolError naming the original.
    error = loaded.trace[0].error
    assert isinstance(error, ToolError) and str(error) == "ValueError: boom"


def test_the_text_is_json_and_a_decoded_object_reads_too() -> None:
    text = full_result().to_json()
    assert RunResult.from_json(json.loads(text), output_type=City) == full_result()
    assert RunResult.from_json(text.encode(), output_type=City) == full_result()


@pytest.mark.parametrize(
    ("output_type", "value"),
    [
        (City, City(name="Oslo", population=700_000)),
        (Point, Point(1, 2)),
        (Movie, Movie(title="Heat", year=1995)),
        (int, 42),
        (str, "hello"),
        (float, 1.5),
        (bool, True),
        (list[City], [City(name="A", population=1), City(name="B", population=2)]),
        (int | str, "seven"),
        (City | None, City(name="Rome", population=3)),
        # Point3's fields are a superset of Point's: its own type must win.
        (Point | Point3, Point3(1, 2, 3)),
        (Point | Point3, Point(1, 2)),
        (City | Point, Point(5, 6)),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}),
    ],
)
def test_typed_output_is_rebuilt_from_the_output_type(output_type: Any, value: Any) -> None:
    result = dataclasses.replace(full_result(), output=value)
    loaded = RunResult.from_json(result.to_json(), output_type=output_type)
    assert loaded.output == value
    assert type(loaded.output) is type(value)


def test_without_an_output_type_the_output_stays_decoded_json() -> None:
    loaded = RunResult.from_json(full_result().to_json())
    assert loaded.output == {"name": "Paris", "population": 2_100_000}


def test_no_output_stays_none() -> None:
    result = dataclasses.replace(full_result(), output=None, refusal=None)
    loaded = RunResult.from_json(result.to_json(), output_type=City)
    assert loaded.output is None and loaded.refusal is None


def test_what_is_not_a_result_is_refused() -> None:
    with pytest.raises(ValueError, match="not a run result"):
        RunResult.from_json('{"text": "x"}')
    with pytest.raises(ValueError, match="does not fit the output type"):
        RunResult.from_json(full_result().to_json(), output_type=Point)


def test_a_result_stored_before_the_codec_still_reads() -> None:
    # What durable runs stored as their result (and paused state) before the codec existed.
    old = {
        "messages": [
            {"kind": "user", "content": [{"kind": "text", "text": "hi"}]},
            {"kind": "assistant", "parts": [{"kind": "text", "text": "hello"}]},
        ],
        "start": 0,
        "usage": {"input_tokens": 3, "output_tokens": 1, "requests": 1},
        "cost": {"total": "0.5", "reason": None},
        "trace": [
            {
                "call_id": "c1",
                "name": "add",
                "arguments": "{}",
                "result": "2",
                "is_error": False,
                "duration": 0.1,
                "iteration": 1,
            }
        ],
        "stop_reason": "completed",
        "pending": [{"id": "c2", "name": "add", "arguments": "{}", "reason": "approval"}],
        "iterations": 1,
    }
    loaded = RunResult.from_json(json.dumps(old))
    assert loaded.text == "hello" and loaded.new_messages == loaded.messages
    assert loaded.cost.total == Decimal("0.5") and loaded.usage.input_tokens == 3
    assert loaded.trace[0].result == "2" and loaded.pending[0].call.id == "c2"
    assert loaded.output is None
