"""One run configuration for every door: `Agent`, `run_loop` and `Agent.run_stream`."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Sequence
from typing import Any, Unpack

import anyio
import pytest

import toolwire.tools
import toolwire.toolsets
from toolwire import (
    Agent,
    FunctionCallCompleted,
    Hooks,
    Message,
    OutputBudget,
    RunCompleted,
    RunConfig,
    RunEvent,
    RunOptions,
    RunResult,
    ScriptedModel,
    TextDelta,
    ToolAnnotations,
    ToolCall,
    ToolResultMessage,
    ToolSearch,
    run_loop,
    tool,
)
from toolwire.models import RetryPolicy
from toolwire.models.base import ModelSettings

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


lookup = tool(
    name="lookup",
    description="Look up an order.",
    parameters={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
)


def tool_results(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ToolResultMessage)]


# --- the doors take the same options ---------------------------------------------------------


def test_run_options_and_run_config_hold_the_same_options_with_the_same_types() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    assert fields == set(RunOptions.__annotations__)
    # String type aliases (ToolLike, ToolsetLike) and names imported only for type checkers
    # (RetryPolicy, ToolSearch, the toolsets) are resolved in the namespaces that define them.
    names = {
        **vars(toolwire.tools),
        **vars(toolwire.toolsets),
        "RetryPolicy": RetryPolicy,
        "ToolSearch": ToolSearch,
    }
    assert typing.get_type_hints(RunConfig, localns=names) == typing.get_type_hints(
        RunOptions, localns=names
    )
    assert RunOptions.__total__ is False
    assert {"approval_policy", "on_tool_call", "on_tool_result", "retry"} <= fields


@pytest.mark.parametrize("door", [Agent.__init__, run_loop], ids=["Agent", "run_loop"])
def test_every_door_takes_exactly_the_run_options(door: Any) -> None:
    parameters = inspect.signature(door).parameters
    keywords = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [p.name for p in keywords] == ["options"]
    assert typing.get_type_hints(door)["options"] == Unpack[RunOptions]
    assert parameters["config"].default is None
    # No option is also written out as a parameter of its own, where it could drift.
    assert not set(parameters) & set(RunOptions.__annotations__)


def test_run_run_sync_and_run_stream_take_the_same_per_run_arguments() -> None:
    def arguments(method: Any) -> list[tuple[str, Any, Any, Any]]:
        parameters = list(inspect.signature(method).parameters.values())[1:]
        return [(p.name, p.kind, p.default, p.annotation) for p in parameters]

    run = arguments(Agent.run)
    assert [name for name, *_ in run] == [
        "prompt",
        "history",
        "deps",
        "subscribers",
        "approvals",
        "results",
    ]
    assert arguments(Agent.run_sync) == run
    assert arguments(Agent.run_stream) == run


def test_every_option_is_accepted_by_every_door_and_reaches_the_config() -> None:
    values: dict[str, Any] = {
        "name": "helper",
        "instructions": "Be brief.",
        "tools": [add],
        "max_iterations": 3,
        "max_tokens": 1000,
        "max_cost": 0.5,
        "max_seconds": 30.0,
        "raise_on_limit": True,
        "max_concurrency": 2,
        "tool_choice": "required",
        "settings": {"temperature": 0.1, "logprobs": True},
        "hooks": Hooks(),
        "on_tool_call": print,
        "on_tool_result": print,
        "subscribers": [print],
        "approval_policy": "destructive",
        "deps": {"user": 7},
        "retry": RetryPolicy(attempts=2),
        "output_type": int,
        "output_mode": "tool",
        "output_retries": 2,
        "output_budget": OutputBudget(tokens=500),
        "tool_search": ToolSearch(defer="auto"),
        "handoffs": [Agent(ScriptedModel(), name="other")],
    }
    assert set(values) == set(RunOptions.__annotations__)
    agent = Agent(ScriptedModel(), **values)
    config = agent.config
    for name, value in values.items():
        got = getattr(config, name)
        if name in ("tools", "subscribers", "handoffs"):
            assert list(got) == value, name
        elif name == "settings":
            assert got == ModelSettings(temperature=0.1, extra={"logprobs": True})
        else:
            assert got is value or got == value, name
    assert config.limits.max_tokens == 1000 and config.limits.raise_on_limit
    assert RunConfig(**values) == dataclasses.replace(config)


async def test_a_config_object_is_shared_and_keywords_override_it() -> None:
    config = RunConfig(instructions="Answer in French.", tools=[add], max_iterations=2)
    model = ScriptedModel(["oui", "ja"])
    french = Agent(model, config=config)
    german = Agent(model, config=config, instructions="Answer in German.")
    assert french.config is config and german.config.tools == config.tools
    await french.run("hi")
    await german.run("hi")
    assert [r.messages[0].text for r in model.requests] == [
        "Answer in French.",
        "Answer in German.",
    ]
    once = await run_loop(ScriptedModel(["ok"]), "hi", config=config, max_iterations=1)
    assert once.stop_reason == "completed"


def test_unknown_options_are_refused_with_a_suggestion() -> None:
    bad: dict[str, Any] = {"max_iteration": 3}
    with pytest.raises(TypeError, match="unknown run option 'max_iteration' \\(did you mean"):
        Agent(ScriptedModel(), **bad)
    with pytest.raises(TypeError, match="'max_iterations'"):
        RunConfig().replace(**bad)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_concurrency": 0}, "max_concurrency must be at least 1"),
        ({"approval_policy": "sometimes"}, "approval_policy must be 'marked' or 'destructive'"),
        ({"max_iterations": 0}, "max_iterations must be at least 1"),
        ({"max_cost": -1}, "max_cost must be positive"),
    ],
)
def test_bad_option_values_are_refused_when_configured(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        RunConfig(**options)
    with pytest.raises(ValueError, match=message):
        Agent(ScriptedModel(), **options)


def test_the_config_keeps_its_own_copies() -> None:
    tools: list[Any] = [add]
    config = RunConfig(tools=tools)
    tools.append(delete_file)
    assert list(config.tools) == [add]
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_iterations = 3  # type: ignore[misc]


async def test_subscribe_adds_to_the_config_of_later_runs() -> None:
    agent = Agent(ScriptedModel(["a", "b"]))
    seen: list[str] = []
    await agent.run("first")
    agent.subscribe(lambda event: seen.append(event.type))
    assert len(agent.config.subscribers) == 1
    await agent.run("second")
    assert seen[-1] == "run.completed" and seen.count("run.completed") == 1


# --- run_loop gains what it lacked -----------------------------------------------------------


async def test_run_loop_takes_the_approval_policy_and_both_callbacks() -> None:
    @tool(annotations=ToolAnnotations(destructive_hint=True))
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    paused = await run_loop(
        ScriptedModel([("wipe", {}), "ok"]), "go", tools=[wipe], approval_policy="destructive"
    )
    assert paused.stop_reason == "approval_required"

    calls: list[str] = []
    results: list[str] = []

    def on_result(call: ToolCall, result: ToolResultMessage) -> None:
        results.append(result.text)

    done = await run_loop(
        ScriptedModel([("add", {"a": 1, "b": 2}), "3"]),
        "go",
        tools=[add],
        on_tool_call=lambda call: calls.append(call.name),
        on_tool_result=on_result,
    )
    assert done.text == "3" and calls == ["add"] and results == ["3"]


async def test_run_loop_resumes_a_paused_run() -> None:
    model = ScriptedModel([("delete_file", {"path": "a"}), "done"])
    paused = await run_loop(model, "go", tools=[delete_file])
    call_id = paused.pending[0].call.id
    done = await run_loop(
        model, None, history=paused.messages, approvals={call_id: True}, tools=[delete_file]
    )
    assert done.text == "done" and tool_results(done.messages) == ["deleted a"]


# --- run_stream: approvals, external results and resume ---------------------------------------


async def stream_all(agent: Agent, prompt: str | None = None, **per_run: Any) -> StreamedRun:
    events: list[Any] = []
    with anyio.fail_after(10):
        async with agent.run_stream(prompt, **per_run) as stream:
            async for event in stream:
                events.append(event)
    return StreamedRun(events, stream.result)


@dataclasses.dataclass
class StreamedRun:
    events: list[Any]
    result: RunResult

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def completed_calls(self) -> list[str]:
        return [e.result.text for e in self.events if isinstance(e, FunctionCallCompleted)]


async def test_a_streamed_run_paused_for_approval_resumes_streamed() -> None:
    model = ScriptedModel(
        [[("delete_file", {"path": "a"}), ("delete_file", {"path": "b"})], "Deleted a only."]
    )
    agent = Agent(model, tools=[delete_file])
    paused = await stream_all(agent, "clean up")
    assert paused.result.stop_reason == "approval_required"
    assert isinstance(paused.events[-1], RunCompleted) and paused.completed_calls == []
    first, second = (p.call.id for p in paused.result.pending)

    resumed = await stream_all(
        agent, history=paused.result.messages, approvals={first: True, second: "keep b"}
    )
    assert resumed.completed_calls == ["deleted a"]  # a refusal runs nothing
    assert resumed.text == "Deleted a only."
    assert resumed.result.stop_reason == "completed" and resumed.result.text == "Deleted a only."
    assert tool_results(resumed.result.messages) == ["deleted a", "Error: not approved: keep b"]


async def test_a_streamed_pause_resumes_without_streaming_and_the_other_way_round() -> None:
    model = ScriptedModel([("delete_file", {"path": "a"}), "one", ("delete_file", {"path": "b"})])
    model.add("two")
    agent = Agent(model, tools=[delete_file])
    streamed = await stream_all(agent, "first")
    call_id = streamed.result.pending[0].call.id
    done = await agent.resume(streamed.result, approvals={call_id: True})
    assert done.text == "one" and tool_results(done.new_messages) == ["deleted a"]

    paused = await agent.run("second", history=done.messages)
    assert paused.stop_reason == "approval_required"
    call_id = paused.pending[0].call.id
    resumed = await stream_all(agent, history=paused.messages, approvals={call_id: True})
    assert resumed.text == "two" and resumed.completed_calls == ["deleted b"]


async def test_a_streamed_run_takes_external_results() -> None:
    model = ScriptedModel([("lookup", {"id": 7}), "Order 7 is shipped."])
    agent = Agent(model, tools=[lookup])
    paused = await stream_all(agent, "Where is order 7?")
    assert paused.result.stop_reason == "external_calls"
    call_id = paused.result.pending[0].call.id
    resumed = await stream_all(
        agent, history=paused.result.messages, results={call_id: {"status": "shipped"}}
    )
    assert resumed.text == "Order 7 is shipped."
    assert tool_results(resumed.result.messages) == ['{"status":"shipped"}']


async def test_a_streamed_resume_with_a_wrong_id_fails_clearly() -> None:
    model = ScriptedModel([("delete_file", {"path": "a"})])
    agent = Agent(model, tools=[delete_file])
    paused = await stream_all(agent, "go")
    events: list[RunEvent] = []
    with anyio.fail_after(10):
        async with agent.run_stream(
            None,
            history=paused.result.messages,
            approvals={"nope": True},
            subscribers=[events.append],
        ) as stream:
            with pytest.raises(ValueError, match="no call with id 'nope'"):
                async for _ in stream:
                    pass
    assert stream.result.stop_reason == "error"
    assert isinstance(events[-1], RunCompleted)
    assert model.requests[1:] == []  # nothing was sent to the model


async def test_the_retry_option_wraps_the_model_in_a_retry_policy() -> None:
    from toolwire import FunctionModel
    from toolwire.errors import RetryableModelError
    from toolwire.models import RetryModel

    failures = [RetryableModelError(503, "overloaded", provider="test")]

    def reply(messages: Any, request: Any) -> str:
        if failures:
            raise failures.pop()
        return "fine"

    seen: list[Any] = []
    agent = Agent(
        FunctionModel(reply),
        retry=RetryPolicy(attempts=2, initial_delay=0.0, jitter=False),
        subscribers=[seen.append],
    )
    assert isinstance(agent.model, RetryModel)
    result = await agent.run("hi")
    assert result.text == "fine"
    response = next(e for e in seen if e.type == "model.response")
    assert [a.ok for a in response.completion.attempts] == [False, True]


def _chat_reply(text: str) -> Any:
    from recordings.replay import Reply

    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-key",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        },
    )


async def test_a_model_named_by_a_string_takes_its_key_and_endpoint_on_the_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recordings.replay import ReplayServer
    from toolwire.errors import MissingApiKeyError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # The message a newcomer sees names the keyword the agent takes...
    with pytest.raises(MissingApiKeyError, match=r"pass api_key=\.\.\."):
        Agent("openai:gpt-4o-mini")
    # ...and the agent takes it: the key and endpoint reach the request.
    with ReplayServer([_chat_reply("hi")]) as server:
        agent = Agent("openai:gpt-4o-mini", api_key="sk-agent", base_url=server.base_url + "/v1")
        try:
            result = await agent.run("hello")
        finally:
            await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.text == "hi"
    (request,) = server.received
    assert request.headers["authorization"] == "Bearer sk-agent"
    assert request.path == "/v1/chat/completions"


def test_model_options_for_a_built_model_are_refused_with_the_fix() -> None:
    with pytest.raises(
        TypeError, match=r"api_key= configure a model named by a string.*ScriptedModel"
    ):
        Agent(ScriptedModel(), api_key="sk-x")
    with pytest.raises(TypeError, match="unknown run option 'api_keys'"):
        Agent("test", api_keys="sk-x")  # type: ignore[call-arg]


def test_loop_config_is_public_and_fresh_per_run() -> None:
    agent = Agent(ScriptedModel(), deps="configured")
    config = agent.loop_config()
    assert config.deps == "configured" and config.backend is None and config.stream_sink is None
    assert agent.loop_config(deps="mine").deps == "mine"
    assert agent.loop_config() is not config


def test_loop_config_holds_each_part_of_the_agent_in_its_field() -> None:
    model = ScriptedModel()
    agent = Agent(model, tools=[add], max_iterations=3, subscribers=[print])

    async def sink(event: Any) -> None: ...

    def mine(event: Any) -> None: ...

    config = agent.loop_config(deps="d", subscribers=[mine], sink=sink)
    assert config.model is model and config.options is agent.config
    assert config.tools is agent.tools and list(config.tools) == ["add"]
    assert config.settings == ModelSettings() and config.limits.max_iterations == 3
    assert config.deps == "d" and list(config.subscribers) == [print, mine]
    assert config.stream_sink is sink and config.native_tools == []
    assert config.backend is None and config.trace_tool is None
    assert config.delegates is False and config.toolset is None
