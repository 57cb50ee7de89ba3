"""Forcing native tools with `tool_choice`: one check, before any request, decided by the `force`
of each cell of each profile (`toolwire.models.profiles`); what can be forced reaches the wire in the provider's
own form, through the real SDKs."""

from __future__ import annotations

from typing import Any

import pytest

from recordings.replay import ReplayServer
from test_native import (
    _SPECS,
    SUPPORT,
    _anthropic,
    _chat,
    _responses,
    _row_models,
    _served,
    city,
)
from toolwire import UnsupportedError, computer_use, tool, web_fetch, web_search
from toolwire.models._matrix import forcing_matrix_markdown
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.base import ModelBase, ModelRequest, forbid_model_requests
from toolwire.models.mistral import MistralModel
from toolwire.models.providers import chat_model
from toolwire.native import NATIVE_KINDS

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]

_BY_NAME_REFUSED = [
    (label, kind)
    for label, profile in SUPPORT.items()
    for kind in NATIVE_KINDS
    if profile.cell(kind).supported and profile.cell(kind).force.by_name is None
]
_REQUIRED_REFUSED = [
    (label, kind)
    for label, profile in SUPPORT.items()
    for kind in NATIVE_KINDS
    if profile.cell(kind).supported and profile.cell(kind).force.required is None
]


def _spec_for(label: str, kind: str) -> Any:
    if kind == "computer_use" and label in ("Gemini", "Vertex"):
        return computer_use(environment="browser")  # Gemini takes no screen size
    return _SPECS[kind]()


def _model_for(label: str, kind: str) -> ModelBase:
    if (label, kind) == ("Groq", "web_fetch"):
        return chat_model("groq", "groq/compound", api_key="k")  # fetch exists on compound only
    return _row_models()[label]


def test_the_refusals_cover_the_rows_the_facts_name() -> None:
    refused = {label for label, _ in _BY_NAME_REFUSED}
    assert {"Gemini", "Vertex", "Mistral", "Groq", "OpenRouter"} <= refused
    assert not refused & {"OpenAI Responses", "Azure Responses", "Anthropic", "Ollama"}
    assert {label for label, _ in _REQUIRED_REFUSED} == {"Gemini", "Vertex", "OpenRouter"}


@pytest.mark.parametrize(("label", "kind"), _BY_NAME_REFUSED)
async def test_forcing_by_name_where_no_provider_can_raises_before_any_request(
    label: str, kind: str
) -> None:
    model = _model_for(label, kind)
    tools: list[Any] = (
        [_spec_for(label, kind)]
        if "compound" in model.model_name
        else [city, _spec_for(label, kind)]
    )
    # Requests are forbidden: reaching the wire would raise ModelRequestsForbidden instead.
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await model.complete("hi", tools=tools, tool_choice=kind)
    message = str(caught.value)
    assert label in message and f"{kind}()" in message
    assert SUPPORT[label].cell(kind).force.wire in message


@pytest.mark.parametrize(("label", "kind"), _REQUIRED_REFUSED)
async def test_required_with_only_unforceable_native_tools_raises_before_any_request(
    label: str, kind: str
) -> None:
    model = _model_for(label, kind)
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await model.complete("hi", tools=[_spec_for(label, kind)], tool_choice="required")
    assert label in str(caught.value) and "required" in str(caught.value)


async def test_streaming_checks_the_same_way() -> None:
    model = _row_models()["Gemini"]
    with forbid_model_requests(), pytest.raises(UnsupportedError, match="Gemini"):
        async for _ in model.stream_complete("hi", tools=[web_search()], tool_choice="web_search"):
            pass


async def test_anthropic_refuses_forcing_with_extended_thinking_before_any_request() -> None:
    thinking = {"type": "enabled", "budget_tokens": 2000}
    by_settings = AnthropicModel("claude-x", api_key="k")
    by_default = AnthropicModel("claude-x", api_key="k", thinking=thinking)
    with forbid_model_requests():
        for choice in ("web_search", "required"):
            with pytest.raises(UnsupportedError, match="extended thinking"):
                await by_settings.complete(
                    "hi",
                    tools=[web_search()],
                    tool_choice=choice,
                    settings={"thinking": thinking},
                )
            with pytest.raises(UnsupportedError, match="extended thinking"):
                await by_default.complete("hi", tools=[web_search()], tool_choice=choice)


async def test_groq_compound_models_refuse_required_but_gpt_oss_takes_it() -> None:
    compound = chat_model("groq", "groq/compound", api_key="k")
    with forbid_model_requests(), pytest.raises(UnsupportedError, match="compound"):
        await compound.complete("hi", tools=[web_fetch()], tool_choice="required")
    gpt_oss = _row_models()["Groq"]
    request = gpt_oss.prepare(
        ModelRequest.build("hi", tools=[web_search()], tool_choice="required")
    )
    body = gpt_oss.wire_request(request)
    assert body["tool_choice"] == "required" and body["tools"] == [{"type": "browser_search"}]


def test_function_tools_keep_their_own_choices() -> None:
    # "required" with a function beside the native tools is honoured by the function, so Gemini
    # takes it; a function named like a native kind is the one a choice of that name forces.
    gemini = _row_models()["Gemini"]
    built = ModelRequest.build("hi", tools=[web_search(), city], tool_choice="required")
    assert gemini.resolve_native_tools(built).tool_choice == "required"
    notes = tool(city, name="web_search")
    built = ModelRequest.build("hi", tools=[web_fetch(), notes], tool_choice="web_search")
    assert gemini.resolve_native_tools(built).tool_choice == "web_search"


def test_forced_wire_choices_per_row() -> None:
    models = _row_models()

    def forced(label: str, choice: str, *tools: Any) -> Any:
        built = ModelRequest.build("hi", tools=list(tools), tool_choice=choice)
        return models[label].resolve_native_tools(built).tool_choice

    allowed = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "web_search"}]}
    assert forced("OpenAI Responses", "web_search", web_search()) == allowed
    assert forced("Azure Responses", "web_search", web_search(), city) == allowed
    assert forced("OpenAI Responses", "code_execution", _SPECS["code_execution"]()) == {
        "type": "code_interpreter"
    }
    assert forced("Anthropic", "web_fetch", web_fetch()) == {"type": "tool", "name": "web_fetch"}
    assert forced("Anthropic", "required", web_search()) == "required"
    assert forced("Ollama", "web_search", web_search()) == "web_search"
    assert forced("Mistral", "required", web_search()) == "required"


async def test_openai_responses_forced_web_search_goes_through_the_sdk() -> None:
    # The recording was made with tool_choice "auto"; only the choice sent differs here.
    name = "test_openai_responses_model_builtin_tools_web_search"
    async with _served(f"openai_responses/{name}.yaml", _responses) as (server, model, recorded):
        body = recorded[0].request_json
        completion = await model.complete(
            body["input"][0]["content"], tools=[web_search()], tool_choice="web_search"
        )
    sent = server.received[0].json
    assert sent["tool_choice"] == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "web_search"}],
    }
    assert sent["tools"] == body["tools"]
    assert completion.server_tool_calls[0].name == "web_search"


async def test_anthropic_forced_web_search_goes_through_the_sdk() -> None:
    # Recorded with thinking and tool_choice "auto"; forced here without thinking, which
    # Anthropic requires, so only the request's choice and thinking differ from the recording.
    name = "test_anthropic_web_search_tool"
    async with _served(f"anthropic/{name}.yaml", _anthropic) as (server, model, recorded):
        prompt = recorded[0].request_json["messages"][0]["content"][0]["text"]
        completion = await model.complete(prompt, tools=[web_search()], tool_choice="web_search")
    assert server.received[0].json["tool_choice"] == {"type": "tool", "name": "web_search"}
    assert "thinking" not in server.received[0].json
    assert completion.usage.server_tool_requests == {"web_search": 1}


async def test_ollama_forced_web_search_is_a_forced_function_on_the_wire() -> None:
    with ReplayServer([_chat({"role": "assistant", "content": "ok"}, "stop")]) as llm:
        model = chat_model("ollama", "gpt-oss:20b", base_url=llm.base_url + "/v1")
        async with model:
            spec = web_search(provider_overrides={"ollama": {"api_key": "k"}})
            await model.complete("hi", tools=[spec], tool_choice="web_search")
    sent = llm.received[0].json
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "web_search"}}
    assert [t["function"]["name"] for t in sent["tools"]] == ["web_search"]


def test_mistral_required_is_sent_as_any_through_the_conversations_api() -> None:
    model = MistralModel("mistral-large-latest", api_key="k")
    request = model.prepare(ModelRequest.build("hi", tools=[web_search()], tool_choice="required"))
    conversations: Any = model.conversations()
    kwargs = conversations.wire_request(request)
    assert kwargs["completion_args"]["tool_choice"] == "any"
    assert kwargs["tools"] == [{"type": "web_search"}]


def test_the_forcing_table_lists_every_row() -> None:
    table = forcing_matrix_markdown()
    for label in SUPPORT:
        assert f"| {label} |" in table
