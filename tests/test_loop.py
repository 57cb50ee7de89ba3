from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    Completion,
    FunctionCallCompleted,
    FunctionCallStarted,
    FunctionModel,
    Hooks,
    Message,
    ModelRequestEvent,
    ModelResponseError,
    ModelResponseEvent,
    RunCompleted,
    RunEvent,
    ScriptedModel,
    TestModel,
    TextBlock,
    ToolAnnotations,
    ToolCall,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    Usage,
    UsageLimitExceeded,
    UserMessage,
    run_loop,
    tool,
)
from toolwire.models.base import CompletionDone, ModelSettings, StreamEvent, TextDelta
from toolwire.models.profiles import TEST
from toolwire.models.testing import ModelRequest

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def results_of(messages: Sequence[Message]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def assert_every_call_answered_once(messages: Sequence[Message]) -> None:
    calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    answers = [r.call_id for r in results_of(messages)]
    assert sorted(calls) == sorted(answers)
    assert len(set(answers)) == len(answers)


# --- the basic round trip -----------------------------------------------------------------------


async def test_model_asks_tool_runs_model_answers() -> None:
    model = ScriptedModel([("add", {"a": 2, "b": 3}), "The sum is 5."])
    result = await Agent(model, instructions="Be brief.", tools=[add]).run("What is 2 + 3?")
    assert result.text == "The sum is 5."
    assert result.stop_reason == "completed"
    assert result.iterations == 2
    kinds = [m.kind for m in result.messages]
    assert kinds == ["system", "user", "assistant", "tool_result", "assistant"]
    assert results_of(result.messages)[0].text == "5"
    second_request = model.requests[1]
    assert isinstance(second_request.messages[-1], ToolResultMessage)
    assert [t.name for t in second_request.tools] == ["add"]
    assert result.usage.requests == 2
    assert result.cost.total is None and "offline" in (result.cost.reason or "")
    [entry] = result.trace
    assert (entry.name, entry.arguments, entry.result, entry.is_error, entry.iteration) == (
        "add",
        '{"a": 2, "b": 3}',
        "5",
        False,
        1,
    )


async def test_results_are_appended_in_call_order() -> None:
    release_first = anyio.Event()

    @tool
    async def slow_first(n: int) -> int:
        """Wait for the others when n is 0."""
        if n == 0:
            await release_first.wait()
        elif n == 2:
            release_first.set()
        return n

    model = ScriptedModel([[("slow_first", {"n": i}) for i in range(3)], "done"])
    with anyio.fail_after(5):
        result = await run_loop(model, "go", tools=[slow_first])
    assert [r.text for r in results_of(result.messages)] == ["0", "1", "2"]
    assert [t.result for t in result.trace] == ["0", "1", "2"]


async def test_prompt_none_continues_from_history() -> None:
    model = ScriptedModel(["continued"])
    history: list[Message] = [UserMessage.of("earlier question")]
    result = await run_loop(model, None, history=history)
    assert result.text == "continued"
    assert model.requests[0].messages == history
    assert history == [UserMessage.of("earlier question")]  # the caller's list is untouched
    assert result.new_messages == result.messages[1:]


async def test_test_model_calls_every_tool_then_summarises() -> None:
    result = await run_loop(TestModel(), "try everything", tools=[add, shout])
    assert result.stop_reason == "completed"
    summary = json.loads(result.text)
    # A free-text parameter gets the prompt; the rest is made from the schema (add: 1 + 1).
    assert summary == {"add": "2", "shout": "TRY EVERYTHING"}
    assert all(not t.is_error for t in result.trace)


# --- the fault matrix ------------------------------------------------------------------------


async def test_tool_failures_become_error_results_and_the_loop_goes_on() -> None:
    @tool
    def explode() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    @tool
    def refuse() -> str:
        """Refuse."""
        raise ToolError("try again tomorrow")

    @tool(timeout=0.05)
    async def hang() -> str:
        """Hang."""
        await anyio.sleep_forever()
        return ""

    @tool
    def junk() -> object:
        """Return junk."""
        return object()

    calls = [
        ("explode", {}),
        ("refuse", {}),
        ("hang", {}),
        ("junk", {}),
        ("ghost", {"x": 1}),
        ("add", '{"a": 1, "b": '),
        ("add", {"a": "one", "b": 2}),
    ]
    model = ScriptedModel([calls, "recovered"])
    with anyio.fail_after(5):
        result = await run_loop(model, "go", tools=[explode, refuse, hang, junk, add])
    texts = [r.text for r in results_of(result.messages)]
    # junk's object is no failure: it reaches the model as its str() (see json_representation).
    errors = [r.is_error for r in results_of(result.messages)]
    assert errors == [True, True, True, False, True, True, True]
    assert texts[0] == "RuntimeError: disk on fire"
    assert texts[1] == "try again tomorrow"
    assert "timed out after 0.05 seconds" in texts[2]
    assert texts[3].startswith('"<object object at 0x')
    assert (
        texts[4]
        == 'Error: unknown tool "ghost". Available tools: add, explode, hang, junk, refuse.'
    )
    assert "not valid JSON" in texts[5]
    assert "a: input should be a valid integer" in texts[6]
    assert result.text == "recovered"
    assert isinstance(result.trace[0].error, RuntimeError)
    assert_every_call_answered_once(result.messages)


async def test_duplicate_and_missing_call_ids_each_get_one_result() -> None:
    message = AssistantMessage(
        parts=[
            ToolCallBlock(id="dup", name="add", arguments='{"a": 1, "b": 1}'),
            ToolCallBlock(id="dup", name="add", arguments='{"a": 2, "b": 2}'),
            ToolCallBlock(id="", name="add", arguments='{"a": 3, "b": 3}'),
        ],
        provider="test",
    )
    model = ScriptedModel([message, "ok"])
    result = await run_loop(model, "go", tools=[add])
    # The model makes the ids unique in its own copy of the turn; the script's is untouched.
    assert [c.id for c in message.tool_calls] == ["dup", "dup", ""]
    turn = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    ids = [c.id for c in turn.tool_calls]
    assert len(set(ids)) == 3 and ids[0] == "dup" and all(ids)
    assert [r.text for r in results_of(result.messages)] == ["2", "4", "6"]
    assert [r.call_id for r in results_of(result.messages)] == ids
    assert_every_call_answered_once(result.messages)


async def test_fifty_calls_at_once_are_bounded_by_max_concurrency() -> None:
    running = 0
    peak = 0

    @tool
    async def work(n: int) -> int:
        """Work a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        running -= 1
        return n * n

    model = ScriptedModel([[("work", {"n": i}) for i in range(50)], "done"])
    result = await Agent(model, tools=[work], max_concurrency=7).run("go")
    assert [r.text for r in results_of(result.messages)] == [str(i * i) for i in range(50)]
    assert 1 < peak <= 7


async def test_independent_calls_run_concurrently() -> None:
    arrived = 0
    everyone = anyio.Event()

    @tool
    async def meet(n: int) -> int:
        """Wait until all 20 calls are running."""
        nonlocal arrived
        arrived += 1
        if arrived == 20:
            everyone.set()
        await everyone.wait()  # deadlocks unless all 20 run at the same time
        return n

    model = ScriptedModel([[("meet", {"n": i}) for i in range(20)], "done"])
    with anyio.fail_after(5):
        result = await Agent(model, tools=[meet], max_concurrency=20).run("go")
    assert len(results_of(result.messages)) == 20


async def test_sequential_tools_never_overlap() -> None:
    log: list[str] = []

    @tool(sequential=True)
    async def exclusive(n: int) -> int:
        """Needs the whole machine."""
        log.append(f"start {n}")
        await anyio.lowlevel.checkpoint()
        log.append(f"end {n}")
        return n

    @tool
    async def shared(n: int) -> int:
        """Can share."""
        log.append(f"shared {n}")
        await anyio.lowlevel.checkpoint()
        return n

    calls = [
        ("shared", {"n": 1}),
        ("exclusive", {"n": 2}),
        ("exclusive", {"n": 3}),
        ("shared", {"n": 4}),
    ]
    model = ScriptedModel([calls, "done"])
    await run_loop(model, "go", tools=[shared, exclusive])
    i2, i3 = log.index("start 2"), log.index("start 3")
    assert log[i2 + 1] == "end 2" and log[i3 + 1] == "end 3"
    assert log.index("shared 1") < i2 < i3 < log.index("shared 4")


async def test_cancelled_run_leaves_every_call_answered() -> None:
    started = anyio.Event()
    quick_done = anyio.Event()
    seen: list[RunCompleted] = []

    @tool
    async def forever() -> str:
        """Never end."""
        started.set()
        await anyio.sleep_forever()
        return ""

    def on_result(call: ToolCall, result: ToolResultMessage) -> None:
        if call.name == "shout":
            quick_done.set()

    def on_event(event: RunEvent) -> None:
        if isinstance(event, RunCompleted):
            seen.append(event)

    model = ScriptedModel([[("shout", {"text": "a"}), ("forever", {})], "unreachable"])
    agent = Agent(model, tools=[shout, forever], subscribers=[on_event], on_tool_result=on_result)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            await started.wait()
            await quick_done.wait()
            group.cancel_scope.cancel()
    [done] = seen
    assert done.result.stop_reason == "cancelled"
    assert_every_call_answered_once(done.result.messages)
    texts = [r.text for r in results_of(done.result.messages)]
    assert texts == ["A", "Error: the run was cancelled before this call finished"]


async def test_failing_subscriber_never_breaks_the_run(caplog: pytest.LogCaptureFixture) -> None:
    events: list[str] = []

    def broken(event: RunEvent) -> None:
        raise ValueError("subscriber bug")

    async def recorder(event: RunEvent) -> None:
        events.append(event.type)

    model = ScriptedModel([("add", {"a": 1, "b": 2}), "3"])
    agent = Agent(model, tools=[add], subscribers=[broken])
    agent.subscribe(recorder)
    result = await agent.run("go")
    assert result.text == "3"
    assert events == [
        "model.request",
        "model.response",
        "function_call.started",
        "function_call.completed",
        "model.request",
        "model.response",
        "run.completed",
    ]
    assert "subscriber bug" in caplog.text


async def test_event_payloads() -> None:
    got: list[RunEvent] = []
    model = ScriptedModel([("add", {"a": 4, "b": 4}), "8"])
    await run_loop(model, "go", tools=[add], subscribers=[got.append])
    request, response, started, completed = got[:4]
    assert isinstance(request, ModelRequestEvent) and request.iteration == 1
    assert (
        isinstance(response, ModelResponseEvent) and response.completion.tool_calls[0].name == "add"
    )
    assert isinstance(started, FunctionCallStarted) and started.arguments == '{"a": 4, "b": 4}'
    assert isinstance(completed, FunctionCallCompleted)
    assert completed.result.text == "8" and not completed.is_error and completed.duration >= 0
    assert isinstance(got[-1], RunCompleted) and got[-1].result.text == "8"


async def test_hooks_and_callbacks_that_raise_still_answer_the_call() -> None:
    def before(inv: Any) -> None:
        raise PermissionError("hook says no")

    model = ScriptedModel([("add", {"a": 1, "b": 1}), ("shout", {"text": "x"}), "done"])

    def on_call(call: ToolCall) -> None:
        if call.name == "shout":
            raise RuntimeError("callback failed")

    agent = Agent(
        model, tools=[add, shout], hooks=Hooks(before_execute=before), on_tool_call=on_call
    )
    result = await agent.run("go")
    texts = [r.text for r in results_of(result.messages)]
    # on_tool_call runs first, so shout fails there; add reaches the hook, which refuses it
    assert texts == ["PermissionError: hook says no", "RuntimeError: callback failed"]
    assert_every_call_answered_once(result.messages)

    model2 = ScriptedModel([("shout", {"text": "x"}), "done"])
    result2 = await Agent(model2, tools=[shout], on_tool_call=on_call).run("go")
    assert results_of(result2.messages)[0].text == "RuntimeError: callback failed"


async def test_on_tool_result_sees_each_result() -> None:
    seen: list[tuple[str, str]] = []
    model = ScriptedModel([("add", {"a": 1, "b": 1}), "done"])
    agent = Agent(
        model, tools=[add], on_tool_result=lambda call, res: seen.append((call.name, res.text))
    )
    await agent.run("go")
    assert seen == [("add", "2")]


# --- history repair ------------------------------------------------------------------------


async def test_broken_history_is_repaired_before_the_first_request() -> None:
    history: list[Message] = [
        UserMessage.of("hi"),
        AssistantMessage(
            parts=[
                ToolCallBlock(id="a", name="add", arguments="{}"),
                ToolCallBlock(id="b", name="add", arguments="{}"),
            ]
        ),
        ToolResultMessage(call_id="b", name="add", content=[]),
        ToolResultMessage(call_id="b", name="add", content=[]),
        ToolResultMessage(call_id="zzz", name="add", content=[]),
    ]
    model = ScriptedModel(["fine"])
    result = await run_loop(model, "next", history=history)
    sent = model.requests[0].messages
    assert_every_call_answered_once(sent)
    assert [r.call_id for r in results_of(sent)] == ["b", "a"]
    assert results_of(sent)[1].is_error
    assert result.text == "fine"


# --- external calls and approval ----------------------------------------------------------


async def test_schema_only_tools_stop_the_run_for_the_caller() -> None:
    lookup = tool(
        name="lookup",
        description="Look up an order.",
        parameters={
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "required": ["id"],
        },
    )
    model = ScriptedModel(
        [[("lookup", {"id": 7}), ("add", {"a": 1, "b": 2})], "Order 7 is shipped."]
    )
    agent = Agent(model, tools=[lookup, add])
    paused = await agent.run("Where is order 7?")
    assert paused.stop_reason == "external_calls"
    assert [p.call.name for p in paused.pending] == ["lookup"]
    assert paused.pending[0].call.args == {"id": 7}
    assert paused.text == ""
    with pytest.raises(ValueError, match="needs a result"):
        await agent.resume(paused)
    done = await agent.resume(paused, results={paused.pending[0].call.id: {"status": "shipped"}})
    assert done.text == "Order 7 is shipped."
    assert [r.text for r in results_of(done.messages)] == ['{"status":"shipped"}', "3"]
    assert_every_call_answered_once(done.messages)


async def test_approval_pauses_and_resume_runs_or_refuses() -> None:
    deleted: list[str] = []

    @tool(requires_approval=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    model = ScriptedModel(
        [
            [("delete_file", {"path": "a.txt"}), ("delete_file", {"path": "b.txt"})],
            "Deleted a.txt only.",
        ]
    )
    agent = Agent(model, tools=[delete_file])
    paused = await agent.run("clean up")
    assert paused.stop_reason == "approval_required"
    assert deleted == []
    first, second = (p.call.id for p in paused.pending)
    done = await agent.resume(paused, approvals={first: True, second: "b.txt is still needed"})
    assert deleted == ["a.txt"]
    texts = [r.text for r in results_of(done.messages)]
    assert texts == ["deleted a.txt", "Error: not approved: b.txt is still needed"]
    assert done.text == "Deleted a.txt only."


async def test_destructive_policy_pauses_on_destructive_hint() -> None:
    @tool(annotations=ToolAnnotations(destructive_hint=True))
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    marked = await Agent(ScriptedModel([("wipe", {}), "ok"]), tools=[wipe]).run("go")
    assert marked.stop_reason == "completed"
    strict = await Agent(
        ScriptedModel([("wipe", {}), "ok"]), tools=[wipe], approval_policy="destructive"
    ).run("go")
    assert strict.stop_reason == "approval_required"


async def test_resume_without_a_paused_turn_is_refused() -> None:
    agent = Agent(ScriptedModel(["hi"]))
    done = await agent.run("hello")
    with pytest.raises(ValueError, match="no paused turn"):
        await agent.resume(done, approvals={"x": True})


# --- limits ------------------------------------------------------------------------------------


def looping_model() -> FunctionModel:
    return FunctionModel(lambda messages, request: ("add", {"a": 1, "b": 1}))


async def test_max_iterations_returns_a_whole_partial_result() -> None:
    result = await Agent(looping_model(), tools=[add], max_iterations=3).run("loop")
    assert result.stop_reason == "max_iterations"
    assert result.iterations == 3
    assert len(results_of(result.messages)) == 3
    assert_every_call_answered_once(result.messages)


async def test_limit_can_raise_with_the_partial_result() -> None:
    agent = Agent(looping_model(), tools=[add], max_iterations=2, raise_on_limit=True)
    with pytest.raises(UsageLimitExceeded) as info:
        await agent.run("loop")
    assert info.value.limit == "max_iterations"
    assert info.value.result.iterations == 2  # type: ignore[attr-defined]


async def test_token_budget() -> None:
    result = await Agent(looping_model(), tools=[add], max_iterations=50, max_tokens=10).run(
        "one two three four five"
    )
    assert result.stop_reason == "token_limit"
    assert result.usage.total_tokens >= 10
    assert result.iterations < 50


class PricedModel:
    """A minimal custom `Model`: priced as gpt-4o, always calls `add`."""

    provider = "openai"
    model_name = "gpt-4o"

    async def send(self, request: ModelRequest) -> Completion:
        message = AssistantMessage(
            parts=[ToolCallBlock(id=f"c{id(request)}", name="add", arguments='{"a": 1, "b": 2}')],
            provider="openai",
        )
        return Completion(
            message=message,
            usage=Usage(input_tokens=100_000, output_tokens=10_000, requests=1),
            finish_reason="tool_calls",
            model="gpt-4o",
        )

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield CompletionDone(await self.send(request))


async def test_cost_is_priced_and_budgeted() -> None:
    result = await Agent(PricedModel(), tools=[add], max_iterations=20, max_cost=1.0).run("go")  # type: ignore[arg-type]
    assert result.stop_reason == "cost_limit"
    assert result.cost.total is not None and result.cost.total >= Decimal("1.0")
    # gpt-4o: $2.50 per million input tokens, $10 per million output tokens -> $0.35 per request
    assert result.cost.total == Decimal("0.35") * result.iterations


async def test_time_budget_cuts_a_hanging_turn_cleanly() -> None:
    @tool
    async def forever() -> str:
        """Never end."""
        await anyio.sleep_forever()
        return ""

    model = ScriptedModel([[("add", {"a": 1, "b": 1}), ("forever", {})], "unreachable"])
    with anyio.fail_after(5):
        result = await Agent(model, tools=[add, forever], max_seconds=0.1).run("go")
    assert result.stop_reason == "time_limit"
    texts = [r.text for r in results_of(result.messages)]
    assert texts == ["2", "Error: the run's time limit was reached before this call finished"]


def test_invalid_limits() -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        Agent(ScriptedModel(), max_iterations=0)
    with pytest.raises(ValueError, match="max_tokens"):
        Agent(ScriptedModel(), max_tokens=0)
    with pytest.raises(ValueError, match="max_concurrency"):
        Agent(ScriptedModel(), max_concurrency=0)


# --- tool choice, settings, model errors ------------------------------------------------------


async def test_forced_tool_choice_applies_to_the_first_request_only() -> None:
    model = ScriptedModel([("add", {"a": 1, "b": 1}), "done"])
    await Agent(
        model, tools=[add], tool_choice="required", settings={"temperature": 0, "top_k": 3}
    ).run("go")
    assert [r.tool_choice for r in model.requests] == ["required", "auto"]
    settings = model.requests[0].settings
    assert settings == ModelSettings(temperature=0, extra={"top_k": 3})


async def test_model_errors_propagate_to_the_caller() -> None:
    model = ScriptedModel([])
    with pytest.raises(Exception, match="no reply left"):
        await run_loop(model, "go")


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Agent(ScriptedModel(), tools=[add, add])


# --- the sync door and streaming ---------------------------------------------------------------


def test_run_sync() -> None:
    model = ScriptedModel([("add", {"a": 20, "b": 22}), "42"])
    result = Agent(model, tools=[add]).run_sync("go")
    assert result.text == "42"


async def test_run_sync_inside_a_loop_is_refused() -> None:
    with pytest.raises(RuntimeError, match="inside an event loop"):
        Agent(ScriptedModel(["x"])).run_sync("go")


async def test_run_stream_yields_deltas_then_the_result() -> None:
    model = ScriptedModel([("add", {"a": 1, "b": 2}), "The answer is 3."])
    agent = Agent(model, tools=[add])
    events: list[Any] = []
    async with agent.run_stream("go") as stream:
        async for event in stream:
            events.append(event)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "The answer is 3."
    assert isinstance(events[-1], RunCompleted)
    assert stream.result.text == "The answer is 3."
    assert any(isinstance(e, FunctionCallCompleted) for e in events)


async def test_leaving_a_stream_early_cancels_the_run_cleanly() -> None:
    @tool
    async def forever() -> str:
        """Never end."""
        await anyio.sleep_forever()
        return ""

    model = ScriptedModel([("forever", {}), "unreachable"])
    with anyio.fail_after(5):
        async with Agent(model, tools=[forever]).run_stream("go") as stream:
            async for event in stream:
                if isinstance(event, FunctionCallStarted):
                    break
    assert stream.result.stop_reason == "cancelled"
    assert_every_call_answered_once(stream.result.messages)


async def test_stream_reports_model_errors() -> None:
    async def consume() -> None:
        async with Agent(ScriptedModel([])).run_stream("go") as stream:
            async for _ in stream:
                pass

    with pytest.raises(ModelResponseError, match="no reply left"):
        await consume()


async def test_function_model_sees_history_and_tools() -> None:
    seen: list[tuple[int, list[str]]] = []

    async def decide(messages: list[Message], request: ModelRequest) -> Any:
        seen.append((len(messages), [t.name for t in request.tools]))
        if not any(isinstance(m, ToolResultMessage) for m in messages):
            return [("shout", {"text": "hi"})]
        last = messages[-1]
        assert isinstance(last, ToolResultMessage)
        return f"got {last.text}"

    result = await run_loop(FunctionModel(decide), "go", tools=[shout])
    assert result.text == "got HI"
    assert seen == [(1, ["shout"]), (3, ["shout"])]


async def test_custom_model_protocol_with_mapping_settings() -> None:
    captured: list[Mapping[str, Any] | ModelSettings | None] = []

    class Echo:
        provider = "test"
        model_name = "echo"

        async def send(self, request: ModelRequest) -> Completion:
            captured.append(request.settings)
            return Completion(message=AssistantMessage(parts=[TextBlock("echo")]))

        async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            yield CompletionDone(await self.send(request))

    result = await Agent(Echo(), settings={"max_tokens": 5}).run("hi")  # type: ignore[arg-type]
    assert result.text == "echo"
    assert captured == [ModelSettings(max_tokens=5)]


async def test_a_model_error_reaches_the_caller_and_subscribers_see_an_error_stop() -> None:
    seen: list[RunCompleted] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, RunCompleted):
            seen.append(event)

    model = ScriptedModel([("add", {"a": 1, "b": 1})])  # then nothing: the second request fails
    with pytest.raises(ModelResponseError):
        await Agent(model, tools=[add], subscribers=[on_event]).run("go")
    [done] = seen
    assert done.result.stop_reason == "error"
    assert_every_call_answered_once(done.result.messages)
    assert [r.text for r in results_of(done.result.messages)] == ["2"]


async def test_closing_a_model_leaves_a_callers_own_client_open() -> None:
    from openai import AsyncOpenAI

    from toolwire.models.anthropic import AnthropicModel
    from toolwire.models.openai_chat import OpenAIChatModel

    mine = OpenAIChatModel("gpt-4.1-mini", api_key="k")
    await mine.aclose()
    assert mine.client.is_closed()  # built by the model: the model closes it

    client = AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    theirs = OpenAIChatModel("gpt-4.1-mini", client=client)
    await theirs.aclose()  # what run_sync does at the end of its event loop
    assert not client.is_closed()  # passed in: the caller's to close
    await client.close()

    from anthropic import AsyncAnthropic

    anthropic_client = AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9")
    await AnthropicModel("claude-sonnet-4-5", client=anthropic_client).aclose()
    assert not anthropic_client.is_closed()
    await anthropic_client.close()


@dataclasses.dataclass
class Total:
    total: int


class SeamOnly:
    """A model with nothing but the one seam the loop calls: `send` and `send_stream`."""

    provider = "test"
    model_name = "seam"
    profile = TEST  # a profile with native structured output, so the output travels in the request

    def __init__(self) -> None:
        self.requests: list[tuple[str, ModelRequest]] = []

    async def send(self, request: ModelRequest) -> Completion:
        self.requests.append(("send", request))
        return self._answer(request)

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(("send_stream", request))
        yield TextDelta("{")
        yield CompletionDone(self._answer(request))

    @staticmethod
    def _answer(request: ModelRequest) -> Completion:
        text = '{"total": 5}' if request.output is not None else "plain"
        return Completion(message=AssistantMessage(parts=[TextBlock(text)]))


async def test_the_loop_calls_a_model_only_through_send_with_the_output_in_the_request() -> None:
    model = SeamOnly()
    agent = Agent(model, output_type=Total, output_mode="native")  # type: ignore[arg-type]
    result = await agent.run("2 + 3?")
    assert result.output == Total(5)
    async with agent.run_stream("2 + 3?") as stream:
        async for _ in stream:
            pass
    assert stream.result.output == Total(5)
    plain = await Agent(model).run("hi")  # type: ignore[arg-type]
    assert plain.text == "plain"
    how = [(way, request.output is not None) for way, request in model.requests]
    assert how == [("send", True), ("send_stream", True), ("send", False)]
    # The request value carries the history the loop holds, the prompt as its last turn.
    assert model.requests[-1][1].messages[-1].text == "hi"
