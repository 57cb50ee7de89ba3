"""The offline models with native tools: specs accepted and kept, scripted server tool uses shaped
as adapters return them (usage counted, fees applied through a stand-in provider), TestModel's
example uses, and a stand-in refusing exactly what its provider's row refuses."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest

from toolwire import (
    Agent,
    ScriptedModel,
    TestModel,
    UnsupportedError,
    code_execution,
    computer_use,
    web_fetch,
    web_search,
)
from toolwire.messages import (
    AssistantMessage,
    Citation,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ToolCallBlock,
    dump_history,
    load_history,
)
from toolwire.models.base import CompletionDone, ModelRequest
from toolwire.models.profiles import TOOL_FEES, stand_in_profile
from toolwire.models.testing import FunctionModel, NativeReply, ServerCall
from toolwire.native import NATIVE_KINDS, NativeTool
from toolwire.usage import estimate_cost

pytestmark = pytest.mark.anyio


def city() -> str:
    """Where the user lives."""
    return "Utrecht"


_FOUND = [{"url": "https://knmi.nl/rain", "title": "Rain radar", "snippet": "Showers at noon."}]


def _searched(text: str = "Showers at noon.") -> NativeReply:
    return NativeReply(
        text,
        [ServerCall("web_search", {"query": "rain Utrecht"}, _FOUND)],
        [Citation("https://knmi.nl/rain", "Rain radar", "Showers at noon.", 0, len(text))],
    )


# --- ScriptedModel ----------------------------------------------------------------------------


async def test_scripted_server_tool_uses_come_back_as_adapters_return_them() -> None:
    model = ScriptedModel([_searched()])
    completion = await model.complete("Rain today?", tools=[web_search(max_uses=2)])
    parts = completion.message.parts
    assert [type(p) for p in parts] == [ServerToolCallBlock, ServerToolResultBlock, TextBlock]
    call, result, text = parts
    assert isinstance(call, ServerToolCallBlock) and isinstance(result, ServerToolResultBlock)
    assert result.call_id == call.id and call.arguments == {"query": "rain Utrecht"}
    assert result.content == _FOUND and not result.is_error
    assert completion.server_tool_calls == [call]
    assert completion.citations[0].url == "https://knmi.nl/rain"
    assert isinstance(text, TextBlock) and text.text == "Showers at noon."
    assert completion.usage.server_tool_requests == {"web_search": 1}
    # The spec reached the model as given, for tests to assert on.
    assert model.requests[0].native_tools == [web_search(max_uses=2)]


async def test_server_uses_and_function_calls_share_a_turn_with_unique_ids() -> None:
    both = NativeReply(
        server_calls=[
            ServerCall("web_search", {"query": "a"}, _FOUND),
            ServerCall("code_execution", {"code": "1/0"}, {"stderr": "ZeroDivisionError"}, True),
        ],
        tool_calls=[("city", {})],
    )
    model = ScriptedModel([both, _searched("Done.")])
    result = await Agent(model, tools=[city, web_search(), code_execution()]).run("go")
    assert result.text == "Done."
    assert result.usage.server_tool_requests == {"web_search": 2, "code_execution": 1}
    ids = [c.id for c in result.server_tool_calls]
    assert len(ids) == len(set(ids)) == 3
    first = result.new_messages[1]
    assert isinstance(first, AssistantMessage)
    assert isinstance(first.parts[-1], ToolCallBlock) and first.parts[-1].name == "city"
    failed = [p for p in first.parts if isinstance(p, ServerToolResultBlock) and p.is_error]
    assert [p.name for p in failed] == ["code_execution"]
    # Server parts round-trip through JSON with the rest of the history.
    assert load_history(dump_history(result.messages)) == result.messages


async def test_a_stand_in_provider_prices_tokens_and_tool_fees() -> None:
    offline = await Agent(ScriptedModel([_searched()]), tools=[web_search()]).run("Rain?")
    assert offline.cost.total is None and "offline" in (offline.cost.reason or "")

    model = ScriptedModel([_searched()], provider="anthropic", model_name="claude-sonnet-4-0")
    result = await Agent(model, tools=[web_search()]).run("Rain?")
    assert result.messages[-1].provider == "anthropic"
    tokens = dataclasses.replace(result.usage, server_tool_requests={})
    plain = estimate_cost([("anthropic", "claude-sonnet-4-0", tokens)]).total
    fee = TOOL_FEES[("anthropic", "web_search")].per_use
    assert plain is not None and result.cost.total == plain + fee == plain + Decimal("0.01")


async def test_tool_fees_count_towards_a_cost_limit_offline() -> None:
    turn = NativeReply(
        server_calls=[ServerCall("web_search", {"query": str(n)}, _FOUND) for n in range(3)],
        tool_calls=[("city", {})],
    )
    model = ScriptedModel(
        [turn, turn, turn, "done"], provider="anthropic", model_name="claude-sonnet-4-0"
    )
    # Three searches a turn: $0.03 of fees per turn, so the second turn passes $0.05.
    result = await Agent(model, tools=[city, web_search()], max_cost=0.05).run("go")
    assert result.stop_reason == "cost_limit"
    assert result.usage.server_tool_requests == {"web_search": 6}


async def test_streamed_scripted_server_uses() -> None:
    model = ScriptedModel([_searched()])
    done = [
        e
        async for e in model.stream_complete("Rain?", tools=[web_search()])
        if isinstance(e, CompletionDone)
    ]
    assert done[0].completion.server_tool_calls[0].name == "web_search"
    assert done[0].completion.usage.server_tool_requests == {"web_search": 1}


async def test_function_model_reads_the_specs_it_was_given() -> None:
    def answer(messages: Any, request: ModelRequest) -> Any:
        kinds = [t.kind for t in request.native_tools if isinstance(t, NativeTool)]
        return NativeReply(", ".join(kinds), [ServerCall(k) for k in kinds])

    completion = await FunctionModel(answer).complete("hi", tools=[web_fetch(), code_execution()])
    assert completion.text == "web_fetch, code_execution"
    assert completion.usage.server_tool_requests == {"web_fetch": 1, "code_execution": 1}


# --- TestModel --------------------------------------------------------------------------------


async def test_test_model_runs_each_native_tool_once_and_cites_what_it_found() -> None:
    model = TestModel()
    tools = [city, web_search(), web_fetch(), code_execution()]
    result = await Agent(model, tools=tools).run("Read https://knmi.nl/today and search rain")
    assert [c.name for c in result.server_tool_calls] == [
        "web_search",
        "web_fetch",
        "code_execution",
    ]
    fetch = result.server_tool_calls[1]
    assert fetch.arguments == {"url": "https://knmi.nl/today"}
    assert result.usage.server_tool_requests == {
        "web_search": 1,
        "web_fetch": 1,
        "code_execution": 1,
    }
    assert result.text == '{"city": "Utrecht"}'  # the function tool was called too
    assert {c.url for c in result.citations} == {"https://example.com/", "https://knmi.nl/today"}
    assert all(c.end_index == len(result.text) for c in result.citations)
    # The first turn called the native tools and the function; the second answered.
    assert len(model.requests) == 2


async def test_test_model_with_only_native_tools_answers_with_their_results() -> None:
    result = await Agent(TestModel(), tools=[code_execution()]).run("compute")
    assert (
        result.text
        == '{"code_execution": {"stdout": "example\\n", "stderr": "", "return_code": 0}}'
    )
    assert result.citations == []


async def test_test_model_honours_a_forced_native_tool_and_none() -> None:
    agent = Agent(
        TestModel(), tools=[city, web_search(), code_execution()], tool_choice="code_execution"
    )
    forced = await agent.run("go")
    assert [c.name for c in forced.server_tool_calls] == ["code_execution"]
    turn = forced.new_messages[1]
    assert isinstance(turn, AssistantMessage) and turn.tool_calls == []
    nothing = await TestModel().complete("go", tools=[web_search()], tool_choice="none")
    assert nothing.server_tool_calls == [] and nothing.usage.server_tool_requests == {}


async def test_test_model_refuses_computer_use() -> None:
    with pytest.raises(UnsupportedError, match="ScriptedModel"):
        await TestModel().complete("click", tools=[computer_use(display_width=800)])


# --- stand-ins refuse what their provider refuses ----------------------------------------------

_STAND_INS = ["anthropic", "openai", "azure", "google", "vertex", "mistral", "groq", "openrouter"]


@pytest.mark.parametrize("provider", _STAND_INS)
@pytest.mark.parametrize("kind", NATIVE_KINDS)
async def test_a_stand_in_takes_exactly_what_its_row_takes(provider: str, kind: str) -> None:
    profile = stand_in_profile(provider)
    spec = {
        "web_search": web_search,
        "web_fetch": web_fetch,
        "code_execution": code_execution,
        # Each row's own shape: a screen size for Anthropic and Azure's preview tool, nothing
        # for OpenAI's GA tool, an environment for Gemini.
        "computer_use": lambda: (
            computer_use(display_width=800, display_height=600)
            if provider in ("anthropic", "azure")
            else computer_use()
            if provider == "openai"
            else computer_use(environment="browser")
        ),
    }[kind]()
    model = ScriptedModel(["ok"], provider=provider, model_name="openai/gpt-oss-120b")
    if profile.cell(kind).supported and (provider, kind) != ("groq", "web_fetch"):
        completion = await model.complete("hi", tools=[spec])
        assert completion.text == "ok" and model.requests[0].native_tools == [spec]
    else:
        with pytest.raises(UnsupportedError):
            await model.complete("hi", tools=[spec])
        assert model.requests == []


async def test_a_stand_in_refuses_a_forced_choice_its_provider_refuses() -> None:
    gemini = TestModel(provider="google", model_name="gemini-3-flash-preview")
    with pytest.raises(UnsupportedError, match="Gemini cannot be made to use web_search"):
        await gemini.complete("hi", tools=[web_search()], tool_choice="web_search")
    openai = TestModel(provider="openai", model_name="gpt-5")
    completion = await openai.complete("hi", tools=[web_search()], tool_choice="web_search")
    assert [c.name for c in completion.server_tool_calls] == ["web_search"]
    # The script sees the caller's choice, not the wire form.
    assert openai.requests[0].tool_choice == "web_search"


async def test_an_ollama_stand_in_takes_web_tools_offline_as_provider_tools() -> None:
    # The real adapter takes web_search() on Ollama (toolwire runs it online); the stand-in
    # takes it too, as a tool the script answers, so nothing reaches the network.
    model = ScriptedModel(["ok", "ok"], provider="ollama", model_name="gpt-oss:20b")
    completion = await model.complete("hi", tools=[web_search()])
    assert completion.message.text == "ok"
    assert model.requests[0].native_tools == [web_search()] and model.requests[0].tools == []
    agent = Agent(model, tools=[web_search()])
    assert agent.tools == {} and [t.kind for t in agent.native_tools] == ["web_search"]
    assert (await agent.run("hi")).text == "ok"
