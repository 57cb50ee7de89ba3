"""`Agent.as_tool`: a whole agent as a tool of another, offline with scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolwire import (
    Agent,
    AgentTool,
    FunctionModel,
    RunResult,
    ScriptedModel,
    ToolContext,
    ToolResultMessage,
    telemetry,
    tool,
)
from toolwire.messages import Message
from toolwire.models.base import PreparedRequest

pytestmark = pytest.mark.anyio


class Verdict(pydantic.BaseModel):
    ok: bool
    reason: str


class Query(pydantic.BaseModel):
    city: str
    days: int


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def results_of(result: RunResult) -> list[ToolResultMessage]:
    return [m for m in result.messages if isinstance(m, ToolResultMessage)]


async def test_the_sub_run_answers_the_call_and_its_spending_rolls_up() -> None:
    researcher_model = ScriptedModel([("lookup", {"city": "Recife"}), "Recife is sunny."])
    researcher = Agent(
        researcher_model,
        name="researcher",
        tools=[lookup],
    )
    boss_model = ScriptedModel([("researcher", {"input": "Weather in Recife?"}), "Sunny."])
    boss = Agent(boss_model, name="boss", tools=[researcher.as_tool()])
    result = await boss.run("Go.")

    assert result.stop_reason == "completed" and result.text == "Sunny."
    assert results_of(result)[0].text == "Recife is sunny."
    # Two requests of the boss, two of the researcher, all in the caller's usage.
    assert result.usage.requests == 4
    assert {k: u.requests for k, u in result.usage_by_agent.items()} == {
        "boss": 2,
        "researcher": 2,
    }
    assert sum(u.total_tokens for u in result.usage_by_agent.values()) == (
        result.usage.total_tokens
    )
    assert set(result.cost_by_agent) == {"boss", "researcher"}
    # The sub-run's tool calls nest under the call that ran it.
    [entry] = result.trace
    assert entry.name == "researcher"
    assert [(c.name, c.result) for c in entry.children] == [("lookup", "Recife: sunny")]
    # The sub-agent got the prompt the calling model wrote, and nothing of the caller's history.
    sub_request = researcher_model.requests[0]
    assert [m.kind for m in sub_request.messages] == ["user"]
    # The codec keeps all of it.
    again = RunResult.from_json(result.to_json())
    assert again.usage_by_agent == result.usage_by_agent
    assert again.trace[0].children[0].name == "lookup"


async def test_a_typed_answer_is_the_json_result_and_typed_input_is_the_schema() -> None:
    seen: list[str] = []

    def check(messages: list[Message], request: PreparedRequest) -> str:
        seen.append(messages[-1].text)  # type: ignore[union-attr]
        return '{"ok": true, "reason": "fine"}'

    checker = Agent(FunctionModel(check), name="checker", output_type=Verdict)
    as_tool = checker.as_tool(name="check_plan", description="Check a plan.", input=Query)
    assert isinstance(as_tool, AgentTool) and as_tool.agent is checker
    assert as_tool.parameters["properties"].keys() == {"city", "days"}
    assert as_tool.description == "Check a plan."
    boss = Agent(
        ScriptedModel([("check_plan", {"city": "Lima", "days": 3}), "Checked."]),
        tools=[as_tool],
    )
    result = await boss.run("Go.")
    answer = results_of(result)[0]
    assert json.loads(answer.text) == {"ok": True, "reason": "fine"}
    assert answer.structured == {"ok": True, "reason": "fine"}
    assert json.loads(seen[0]) == {"city": "Lima", "days": 3}


async def test_arguments_that_do_not_fit_the_input_are_the_models_to_fix() -> None:
    checker = Agent(ScriptedModel(), name="checker")
    boss = Agent(ScriptedModel([("checker", {"input": 3}), "Gave up."]), tools=[checker.as_tool()])
    result = await boss.run("Go.")
    assert results_of(result)[0].is_error
    assert result.usage_by_agent.keys() == {"agent"}  # the sub-agent never ran


async def test_a_failing_sub_agent_gives_an_error_result_never_a_crash() -> None:
    broken = Agent(ScriptedModel([]), name="broken")  # no reply: the model call fails
    boss = Agent(
        ScriptedModel([("broken", {"input": "help"}), "It failed; sorry."]),
        tools=[broken.as_tool()],
    )
    result = await boss.run("Go.")
    assert result.stop_reason == "completed" and result.text == "It failed; sorry."
    failed = results_of(result)[0]
    assert failed.is_error and "'broken' agent failed: ModelResponseError" in failed.text


async def test_a_sub_agent_stopped_by_its_limit_is_an_error_result() -> None:
    looping = Agent(
        ScriptedModel([("lookup", {"city": "A"}), ("lookup", {"city": "B"})]),
        name="looping",
        tools=[lookup],
        max_iterations=1,
        raise_on_limit=True,  # the sub-run's limit never raises into the caller
    )
    boss = Agent(
        ScriptedModel([("looping", {"input": "go"}), "Stopped."]), tools=[looping.as_tool()]
    )
    result = await boss.run("Go.")
    assert result.text == "Stopped."
    stopped = results_of(result)[0]
    assert stopped.is_error and "stopped before answering: max iterations" in stopped.text


async def test_the_token_budget_is_shared_across_the_tree() -> None:
    # The caller may spend 12 tokens; its first request spends some, so the sub-run has less
    # than its own (larger) budget and stops on the caller's remainder.
    worker = Agent(
        ScriptedModel([("lookup", {"city": "A"}), ("lookup", {"city": "B"}), "done"]),
        name="worker",
        tools=[lookup],
        max_tokens=1000,
    )
    boss = Agent(
        ScriptedModel([("worker", {"input": "many words to spend the budget"}), "Out."]),
        tools=[worker.as_tool()],
        max_tokens=12,
    )
    result = await boss.run("Please do the work.")
    sub = results_of(result)[0]
    assert sub.is_error and "token limit" in sub.text
    # The sub-run's tokens count for the caller too: its own budget is then spent.
    assert result.stop_reason == "token_limit"
    assert result.usage.total_tokens == sum(u.total_tokens for u in result.usage_by_agent.values())


async def test_the_callers_deps_reach_the_sub_agents_tools() -> None:
    seen: list[Any] = []

    @tool
    def whoami(ctx: ToolContext) -> str:
        """Say who asks."""
        seen.append(ctx.deps)
        return "you"

    helper = Agent(ScriptedModel([("whoami", {}), "ok"]), name="helper", tools=[whoami])
    boss = Agent(ScriptedModel([("helper", {"input": "?"}), "done"]), tools=[helper.as_tool()])
    await boss.run("Go.", deps={"user": 7})
    assert seen == [{"user": 7}]


async def test_two_sub_agents_called_in_one_turn_both_roll_up() -> None:
    one = Agent(ScriptedModel(["one"]), name="one")
    two = Agent(ScriptedModel(["two"]), name="two")
    boss = Agent(
        ScriptedModel([[("one", {"input": "a"}), ("two", {"input": "b"})], "both"]),
        tools=[one.as_tool(), two.as_tool()],
    )
    result = await boss.run("Go.")
    assert [m.text for m in results_of(result)] == ["one", "two"]
    assert {k: u.requests for k, u in result.usage_by_agent.items()} == {
        "agent": 2,
        "one": 1,
        "two": 1,
    }


async def test_an_approval_in_the_sub_agent_pauses_the_caller_and_resumes_there() -> None:
    janitor = Agent(
        ScriptedModel([("delete", {"path": "/tmp/x"}), "Cleaned."]),
        name="janitor",
        tools=[delete],
    )
    boss = Agent(
        ScriptedModel([[("janitor", {"input": "clean"}), ("lookup", {"city": "A"})], "Done."]),
        name="boss",
        tools=[janitor.as_tool(), lookup],
    )
    paused = await boss.run("Go.")
    assert paused.stop_reason == "approval_required"
    [pending] = paused.pending
    assert pending.reason == "approval" and pending.call.name == "delete"
    assert pending.call.id.startswith("call_1/")
    # The turn is open again: no result in the history yet, not even the finished lookup's.
    assert paused.messages[-1].kind == "assistant"
    # Resumed from JSON, as a stored paused run would be: the sub-run goes on where it stopped.
    stored = RunResult.from_json(paused.to_json())
    with pytest.raises(ValueError, match="undecided calls: call_1/"):
        await boss.resume(stored, approvals={})
    done = await boss.resume(stored, approvals={pending.call.id: True})
    assert done.stop_reason == "completed" and done.text == "Done."
    assert [m.text for m in results_of(done)] == ["Cleaned.", "A: sunny"]
    assert "toolwire/paused" not in str(done.messages)
    assert [c.result for c in done.trace[0].children] == ["deleted /tmp/x"]
    # The lookup ran once, before the pause; the resumed turn kept its result.
    assert [t.name for t in paused.trace] == ["lookup"]


async def test_a_refused_call_in_the_sub_agent_is_the_sub_agents_to_handle() -> None:
    janitor_model = ScriptedModel([("delete", {"path": "/"}), "I was not allowed."])
    janitor = Agent(
        janitor_model,
        name="janitor",
        tools=[delete],
    )
    boss = Agent(
        ScriptedModel([("janitor", {"input": "clean"}), "Not done."]), tools=[janitor.as_tool()]
    )
    paused = await boss.run("Go.")
    done = await boss.resume(paused, approvals={paused.pending[0].call.id: "never the root"})
    assert results_of(done)[0].text == "I was not allowed."
    # The sub-agent's model read the refusal as its call's result.
    refusal = janitor_model.requests[1].messages[-1]
    assert isinstance(refusal, ToolResultMessage)
    assert refusal.is_error and "never the root" in refusal.text


async def test_a_pause_two_agents_deep_surfaces_at_the_top() -> None:
    janitor = Agent(
        ScriptedModel([("delete", {"path": "/tmp/y"}), "Cleaned."]),
        name="janitor",
        tools=[delete],
    )
    manager = Agent(
        ScriptedModel([("janitor", {"input": "clean"}), "Janitor done."]),
        name="manager",
        tools=[janitor.as_tool()],
    )
    boss = Agent(
        ScriptedModel([("manager", {"input": "tidy"}), "All tidy."]),
        name="boss",
        tools=[manager.as_tool()],
    )
    paused = await boss.run("Go.")
    [pending] = paused.pending
    assert pending.call.id.count("/") == 2
    done = await boss.resume(paused, approvals={pending.call.id: True})
    assert done.text == "All tidy."
    assert done.usage_by_agent.keys() == {"boss", "manager", "janitor"}
    assert done.trace[0].children[0].children[0].result == "deleted /tmp/y"


async def test_an_agent_tool_called_outside_a_run_still_answers() -> None:
    helper = Agent(ScriptedModel(["hello"]), name="helper")
    result = await helper.as_tool().invoke({"input": "hi"})
    assert not result.is_error and result.text == "hello"


def test_an_input_type_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(TypeError, match="JSON Schema is an object"):
        Agent(ScriptedModel(), name="x").as_tool(input=int)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        telemetry.uninstrument()
        provider.shutdown()


async def test_the_sub_runs_span_is_a_child_of_the_tool_calls_span(
    spans: InMemorySpanExporter,
) -> None:
    researcher = Agent(
        ScriptedModel([("lookup", {"city": "A"}), "ok"]), name="researcher", tools=[lookup]
    )
    boss = Agent(
        ScriptedModel([("researcher", {"input": "?"}), "done"]),
        name="boss",
        tools=[researcher.as_tool()],
    )
    await boss.run("Go.")
    by_name = {s.name: s for s in spans.get_finished_spans()}
    call = by_name["execute_tool researcher"]
    sub = by_name["invoke_agent researcher"]
    assert sub.parent is not None and call.context is not None
    assert sub.parent.span_id == call.context.span_id
    inner = by_name["execute_tool lookup"]
    assert inner.parent is not None and sub.context is not None
    assert inner.parent.span_id == sub.context.span_id
    top = by_name["invoke_agent boss"]
    assert call.parent is not None and top.context is not None
    assert call.parent.span_id == top.context.span_id


async def test_cost_rolls_up_per_agent_and_the_cost_budget_is_shared() -> None:
    def priced(replies: list[Any]) -> ScriptedModel:
        return ScriptedModel(replies, model_name="gpt-4o", provider="openai")

    worker = Agent(
        priced([("lookup", {"city": "A"}), ("lookup", {"city": "B"}), "done"]),
        name="worker",
        tools=[lookup],
    )
    boss = Agent(
        priced([("worker", {"input": "go"}), "Out."]),
        name="boss",
        tools=[worker.as_tool()],
    )
    free = await boss.run("Go.")
    assert free.cost.total is not None and free.cost.total > 0
    boss_cost, worker_cost = free.cost_by_agent["boss"].total, free.cost_by_agent["worker"].total
    assert boss_cost is not None and worker_cost is not None
    assert boss_cost + worker_cost == free.cost.total

    # A budget of what the boss alone spent above: after the boss's first request the worker
    # gets only the rest, stops on it, and what it spent ends the boss's run too.
    tight = Agent(
        priced([("worker", {"input": "go"}), "Out."]),
        name="boss",
        tools=[
            Agent(
                priced([("lookup", {"city": "A"}), ("lookup", {"city": "B"}), "done"]),
                name="worker",
                tools=[lookup],
            ).as_tool()
        ],
        max_cost=float(boss_cost),
    )
    result = await tight.run("Go.")
    stopped = results_of(result)[0]
    assert stopped.is_error and "cost limit" in stopped.text
    assert result.stop_reason == "cost_limit"


async def test_after_a_handoff_the_next_agents_requests_are_traced_in_the_same_run(
    spans: InMemorySpanExporter,
) -> None:
    billing = Agent(
        ScriptedModel([("lookup", {"city": "A"}), "ok"], model_name="billing-model"),
        name="billing",
        tools=[lookup],
    )
    triage = Agent(
        ScriptedModel([("transfer_to_billing", {})], model_name="triage-model"),
        name="triage",
        handoffs=[billing],
    )
    await triage.run("Go.")
    finished = list(spans.get_finished_spans())
    [run] = [s for s in finished if s.name.startswith("invoke_agent")]
    chats = [s.name for s in finished if s.name.startswith("chat")]
    assert chats == ["chat triage-model", "chat billing-model", "chat billing-model"]
    assert run.context is not None
    for span in finished:
        if span is not run:
            assert span.parent is not None and span.parent.span_id == run.context.span_id
