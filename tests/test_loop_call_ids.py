"""The loop's side of the call-id contract, and pricing by the provider that answered.

Adapters own call ids (`CallIds`); the loop checks every turn and never rewrites one. These tests
use a model implementing only the `Model` protocol, so nothing but the loop checks its ids.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import anyio
import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    Completion,
    Message,
    Model,
    ModelResponseError,
    RunCompleted,
    RunEvent,
    TextBlock,
    ToolCallBlock,
    Usage,
    run_loop,
    tool,
)
from toolwire.models.base import (
    CompletionDone,
    ModelBase,
    ModelRequest,
    StreamEvent,
)

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class BareModel:
    """A `Model` by protocol alone: its turns reach the loop exactly as written."""

    model_name = "bare"

    def __init__(self, turns: Sequence[AssistantMessage], provider: str = "bare") -> None:
        self.provider = provider
        self.turns = list(turns)
        self.histories: list[list[Message]] = []

    def _next(self, history: Sequence[Message]) -> Completion:
        self.histories.append(list(history))
        message = self.turns.pop(0)
        return Completion(message=message, usage=Usage(10, 5, requests=1), model=message.model)

    async def send(self, request: ModelRequest) -> Completion:
        return self._next(request.messages)

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield CompletionDone(self._next(request.messages))


def calls_turn(*ids: str) -> AssistantMessage:
    parts = [ToolCallBlock(id=i, name="add", arguments='{"a": 1, "b": 2}') for i in ids]
    return AssistantMessage(parts=list(parts), provider="bare")


def test_the_bare_model_is_a_model_but_not_a_model_base() -> None:
    model = BareModel([])
    assert isinstance(model, Model) and not isinstance(model, ModelBase)


@pytest.mark.parametrize(
    ("ids", "says"),
    [
        (("dup", "dup"), "call id 'dup' appears twice in one turn"),
        (("a", ""), "a call has no id"),
    ],
)
async def test_a_turn_breaking_the_contract_ends_the_run_with_an_error(
    ids: tuple[str, ...], says: str
) -> None:
    broken = calls_turn(*ids)
    model = BareModel([calls_turn("first"), broken])
    events: list[RunEvent] = []
    with pytest.raises(ModelResponseError, match="bare \\(BareModel\\) broke the call-id") as info:
        await run_loop(model, "go", tools=[add], subscribers=[events.append])
    assert says in str(info.value)
    done = events[-1]
    assert isinstance(done, RunCompleted) and done.result.stop_reason == "error"
    history = done.result.messages
    # The first round is whole; the broken turn never entered the history.
    assert [m.kind for m in history] == ["user", "assistant", "tool_result"]
    assert all(m is not broken for m in history)
    # The adapter's message is the adapter's: the loop did not rename anything in it.
    assert [c.id for c in broken.tool_calls] == list(ids)


async def test_a_streamed_turn_breaking_the_contract_ends_the_streamed_run() -> None:
    model = BareModel([calls_turn("x", "x")])
    agent = Agent(model, tools=[add])
    with anyio.fail_after(10):
        async with agent.run_stream("go") as stream:
            with pytest.raises(ModelResponseError, match="appears twice"):
                async for _ in stream:
                    pass
    assert stream.result.stop_reason == "error"
    assert [m.kind for m in stream.result.messages] == ["user"]


async def test_a_well_formed_turn_enters_the_history_untouched() -> None:
    turn = calls_turn("c1", "c2")
    model = BareModel([turn, AssistantMessage(parts=[TextBlock("6")], provider="bare")])
    result = await run_loop(model, "go", tools=[add])
    assert result.stop_reason == "completed" and result.text == "6"
    assert result.messages[1] is turn
    assert [c.id for c in turn.tool_calls] == ["c1", "c2"]
    assert [r.call_id for r in result.messages if r.kind == "tool_result"] == ["c1", "c2"]


async def test_the_cost_uses_the_provider_that_answered() -> None:
    # A model named after one provider whose answer came from another (as a fallback model's
    # does): the answer is priced with the provider written on the turn.
    answered = AssistantMessage(
        parts=[TextBlock("hi")], provider="openai", model="gpt-4o-2024-08-06"
    )
    priced = await run_loop(BareModel([answered], provider="test"), "go")
    assert priced.cost.total is not None and priced.cost.total > 0

    offline = AssistantMessage(parts=[TextBlock("hi")], provider="test", model="gpt-4o")
    unpriced = await run_loop(BareModel([offline], provider="openai"), "go")
    assert unpriced.cost.total is None and "offline 'test' model" in (unpriced.cost.reason or "")


async def test_a_turn_without_a_provider_is_priced_by_the_model_s_provider() -> None:
    answered = AssistantMessage(parts=[TextBlock("hi")], model="gpt-4o-2024-08-06")
    result = await run_loop(BareModel([answered], provider="openai"), "go")
    assert result.cost.total is not None and result.cost.total > 0
