"""Native tools: the specs replayed through the real SDKs against the recordings, every "no" cell
of every profile refused before any request, and no tool ever silently dropped."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import pytest
from google.oauth2.credentials import Credentials
from hypothesis import given, settings
from hypothesis import strategies as st

from recordings.replay import Interaction, ReplayServer, Reply, load_cassette
from toolwire import Agent, UnsupportedError
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.azure import azure
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ModelBase,
    ModelRequest,
    forbid_model_requests,
)
from toolwire.models.google import gemini, vertex
from toolwire.models.mistral import MistralModel
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.models.profiles import PROFILES, TOOL_FEES, ModelProfile, ToolFee
from toolwire.models.providers import chat_model
from toolwire.native import (
    NATIVE_KINDS,
    NativeTool,
    code_execution,
    computer_use,
    web_fetch,
    web_search,
)
from toolwire.prebuilt import EgressPolicy
from toolwire.usage import Usage, estimate_cost

pytestmark = [
    pytest.mark.anyio,
    # Recorded model names the installed SDK now calls deprecated.
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]


def city() -> str:
    """Where the user lives."""
    return "Utrecht"


def _replies(interactions: list[Interaction]) -> list[Reply]:
    return [Reply(i.status, i.body, i.headers, expect_path=i.path) for i in interactions]


@asynccontextmanager
async def _served(
    path: str, make: Callable[[str, Interaction], Any]
) -> AsyncIterator[tuple[ReplayServer, Any, list[Interaction]]]:
    interactions = load_cassette(path)
    with ReplayServer(_replies(interactions)) as server:
        async with make(server.base_url, interactions[0]) as model:
            yield server, model, interactions
    assert server.mismatches == []


def _without_nulls(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in t.items() if v is not None} for t in tools]


# --- the recordings, with the specs ---------------------------------------------------------------


def _anthropic(base: str, first: Interaction) -> AnthropicModel:
    return AnthropicModel(first.request_json["model"], api_key="k", base_url=base)


@pytest.mark.parametrize(
    "name", ["test_anthropic_web_search_tool", "test_pause_turn_web_search_vcr"]
)
async def test_anthropic_web_search_spec_sends_the_recorded_tool(name: str) -> None:
    async with _served(f"anthropic/{name}.yaml", _anthropic) as (server, model, recorded):
        body = recorded[0].request_json
        prompt = body["messages"][0]["content"]
        prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
        options = {k: body[k] for k in ("thinking", "max_tokens") if k in body}
        completion = await model.complete(prompt, tools=[web_search()], settings=options)
    sent = [r.json["tools"] for r in server.received]
    assert sent == [_without_nulls(i.request_json["tools"]) for i in recorded[: len(sent)]]
    searches = sum(
        i.response_json["usage"]["server_tool_use"]["web_search_requests"]
        for i in recorded[: len(sent)]
    )
    assert completion.usage.server_tool_requests == {"web_search": searches}
    assert completion.server_tool_calls and completion.server_tool_calls[0].name == "web_search"
    assert completion.finish_reason == "stop"


def _responses(base: str, first: Interaction) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(first.request_json["model"], api_key="k", base_url=base + "/v1")


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("test_openai_responses_model_builtin_tools_web_search", web_search()),
        (
            "test_openai_include_raw_annotations_non_streaming",
            web_search(search_context_size="medium"),
        ),
    ],
)
async def test_openai_responses_web_search_spec(name: str, spec: NativeTool) -> None:
    async with _served(f"openai_responses/{name}.yaml", _responses) as (server, model, recorded):
        body = recorded[0].request_json
        completion = await model.complete(
            body["input"][0]["content"],
            history=[],
            tools=[spec],
            settings={"extra": {"instructions": body["instructions"]}}
            if "instructions" in body
            else None,
        )
    assert server.received[0].json["tools"] == body["tools"]
    assert [c.name for c in completion.server_tool_calls][:1] == ["web_search"]
    if "annotations" in name:
        assert completion.citations and completion.citations[0].url


def _google(base: str, first: Interaction) -> Any:
    model_name = first.uri.split("/models/")[1].split(":")[0]
    if "aiplatform" in first.uri:
        return vertex(
            model_name,
            project="gen-lang-client-0498264908",
            location="global",
            credentials=Credentials(token="t"),
            base_url=base,
        )
    return gemini(model_name, api_key="k", base_url=base)


@pytest.mark.parametrize(
    ("name", "spec", "functions"),
    [
        ("test_google_model_web_search_tool", web_search(), False),
        ("test_code_execution", code_execution(), False),
        ("test_function_tools_with_builtin_tools", web_search(), True),
        (
            "test_google_vertex_tool_combination_omits_include_server_side_tool_invocations",
            web_search(),
            True,
        ),
    ],
)
async def test_gemini_and_vertex_specs(name: str, spec: NativeTool, functions: bool) -> None:
    async with _served(f"google/{name}.yaml", _google) as (server, model, recorded):
        body = recorded[0].request_json
        declared = body["tools"][1]["functionDeclarations"][0] if functions else None
        tools: list[Any] = [spec]
        if declared is not None:
            params = declared.get("parametersJsonSchema") or declared["parameters_json_schema"]
            tools.append(
                {
                    "name": declared["name"],
                    "description": declared["description"],
                    "parameters": params,
                }
            )
        completion = await model.complete(body["contents"][0]["parts"][0]["text"], tools=tools)
    sent = server.received[0].json
    assert sent["tools"][0] == body["tools"][0]
    assert len(sent["tools"]) == len(body["tools"])
    if "vertex" in name:
        assert "includeServerSideToolInvocations" not in sent.get("toolConfig", {})
    elif functions:
        assert sent["toolConfig"]["includeServerSideToolInvocations"] is True
    if name == "test_code_execution":
        assert completion.server_tool_calls[0].name == "code_execution"
    if name == "test_google_model_web_search_tool":
        assert completion.usage.server_tool_requests.get("web_search", 0) >= 1


async def test_openrouter_web_search_spec_and_annotations() -> None:
    def make(base: str, first: Interaction) -> Any:
        model = first.request_json["model"]
        return chat_model("openrouter", model, api_key="k", base_url=base + "/api/v1")

    path = "openrouter/test_openrouter_web_search_annotations.yaml"
    async with _served(path, make) as (server, model, recorded):
        body = recorded[0].request_json
        spec = web_search(max_uses=1, search_context_size="medium")
        completion = await model.complete(body["messages"][0]["content"], tools=[spec])
    assert server.received[0].json["tools"] == body["tools"]
    assert completion.citations and completion.citations[0].url


# --- the "no" cells: refused before any request --------------------------------------------------


def _row_models() -> dict[str, ModelBase]:
    made: dict[str, Any] = {
        "OpenAI Responses": OpenAIResponsesModel("gpt-5", api_key="k"),
        "OpenAI Chat": chat_model("openai", "gpt-4o", api_key="k"),
        "Azure Responses": azure("d", api="responses", endpoint="https://x.test", api_key="k"),
        "Azure Chat": azure("d", endpoint="https://x.test", api_key="k", api_version="2024-10-21"),
        "Anthropic": AnthropicModel("claude-x", api_key="k"),
        "Gemini": gemini("gemini-3-flash-preview", api_key="k"),
        "Vertex": vertex(
            "gemini-3-flash-preview",
            project="p",
            location="global",
            credentials=Credentials(token="t"),
        ),
        "Mistral": MistralModel("mistral-large-latest", api_key="k"),
        "Groq": chat_model("groq", "openai/gpt-oss-120b", api_key="k"),
        "OpenRouter": chat_model("openrouter", "deepseek/deepseek-chat", api_key="k"),
        "Ollama": chat_model("ollama", "gpt-oss:20b", api_key="k"),
        "DeepSeek": chat_model("deepseek", "deepseek-chat", api_key="k"),
        "OpenAI-compatible": chat_model(
            "openai-compatible", "llama", base_url="http://localhost:8000/v1"
        ),
    }
    return made


SUPPORT: dict[str, ModelProfile] = {p.name: p for p in PROFILES}
"""Each profile by its row's name."""


_SPECS: dict[str, Callable[[], NativeTool]] = {
    "web_search": web_search,
    "web_fetch": web_fetch,
    "code_execution": code_execution,
    "computer_use": lambda: computer_use(display_width=1024, display_height=768),
}


def test_every_adapter_row_is_covered() -> None:
    models = _row_models()
    assert set(models) == set(SUPPORT)
    for label, model in models.items():
        assert model.profile is SUPPORT[label]
        assert (model.profile.provider, model.profile.api) == (model.provider, model.api)


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        (label, kind)
        for label, profile in SUPPORT.items()
        for kind in NATIVE_KINDS
        if not profile.cell(kind).supported
    ],
)
async def test_no_cell_raises_before_any_request(label: str, kind: str) -> None:
    model = _row_models()[label]
    # Requests are forbidden: reaching the wire would raise ModelRequestsForbidden instead.
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await model.complete("hi", tools=[city, _SPECS[kind]()])
    message = str(caught.value)
    assert label in message and kind in message
    accepted = [k for k in NATIVE_KINDS if SUPPORT[label].cell(k).supported]
    for name in accepted:
        assert f"{name}()" in message
    if label in ("OpenAI Chat", "Azure Chat"):
        assert "Responses API" in message


async def test_refused_common_options_name_what_the_provider_takes() -> None:
    models = _row_models()
    with forbid_model_requests():
        with pytest.raises(UnsupportedError, match="blocked_domains"):
            await models["OpenAI Responses"].complete(
                "hi", tools=[web_search(blocked_domains=["a.com"])]
            )
        with pytest.raises(UnsupportedError, match="allowed_domains"):
            await models["Gemini"].complete("hi", tools=[web_search(allowed_domains=["a.com"])])
        with pytest.raises(UnsupportedError, match="blocked_domains"):
            await models["Gemini"].complete("hi", tools=[web_search(blocked_domains=["a.com"])])
    with pytest.raises(ValueError, match="not both"):
        web_search(allowed_domains=["a.com"], blocked_domains=["b.com"])
    with pytest.raises(TypeError, match="list of domains"):
        web_search(allowed_domains="a.com")  # pyright: ignore[reportArgumentType]


def test_payloads_per_provider() -> None:
    models = _row_models()

    def payload(label: str, *tools: Any) -> ModelRequest:
        return models[label].resolve_native_tools(ModelRequest.build("hi", tools=list(tools)))

    vertex_search = payload("Vertex", web_search(blocked_domains=["a.com"], search_types={"x": 1}))
    assert vertex_search.native_tools == [
        {"google_search": {"exclude_domains": ["a.com"], "search_types": {"x": 1}}}
    ]
    where = {"city": "Utrecht", "country": "NL"}
    responses = payload(
        "OpenAI Responses", web_search(allowed_domains=["a.com"], user_location=where)
    )
    assert responses.native_tools == [
        {
            "type": "web_search",
            "filters": {"allowed_domains": ["a.com"]},
            "user_location": {"type": "approximate", **where},
        }
    ]
    fetch = payload("Anthropic", web_fetch(citations=True, max_content_tokens=500))
    assert fetch.native_tools == [
        {
            "type": "web_fetch_20250910",
            "name": "web_fetch",
            "citations": {"enabled": True},
            "max_content_tokens": 500,
        }
    ]
    override = web_search(
        provider_overrides={
            "openrouter": {"engine": "exa"},
            "anthropic": {"type": "web_search_20260209"},
        }
    )
    assert payload("OpenRouter", override).native_tools == [
        {"type": "openrouter:web_search", "parameters": {"engine": "exa"}}
    ]
    assert payload("Anthropic", override).native_tools[0]["type"] == "web_search_20260209"
    assert payload("Mistral", web_search(), code_execution()).native_tools == [
        {"type": "web_search"},
        {"type": "code_interpreter"},
    ]
    compound = chat_model("groq", "groq/compound", api_key="k")
    request = compound.resolve_native_tools(ModelRequest.build("hi", tools=[web_fetch()]))
    assert request.native_tools == []
    assert request.settings.extra["compound_custom"] == {
        "tools": {"enabled_tools": ["visit_website"]}
    }
    with pytest.raises(UnsupportedError, match="function tools"):
        compound.resolve_native_tools(ModelRequest.build("hi", tools=[city, web_search()]))
    with pytest.raises(UnsupportedError, match="compound"):
        payload("Groq", web_fetch())


async def test_agent_sends_native_tools_and_keeps_function_tools() -> None:
    agent = Agent(_row_models()["Anthropic"], tools=[city, web_search(max_uses=1)])
    assert set(agent.tools) == {"city"} and [t.kind for t in agent.native_tools] == ["web_search"]
    refusing = Agent(_row_models()["DeepSeek"], tools=[city, web_search()])
    with forbid_model_requests(), pytest.raises(UnsupportedError, match="DeepSeek"):
        await refusing.run("hi")


# --- nothing is ever dropped ---------------------------------------------------------------------

_OPTION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "max_uses": st.integers(1, 5),
    "allowed_domains": st.lists(st.sampled_from(["a.com", "b.org"]), min_size=1, max_size=2),
    "blocked_domains": st.lists(st.sampled_from(["c.com", "d.org"]), min_size=1, max_size=2),
    "user_location": st.just({"country": "NL"}),
    "search_context_size": st.sampled_from(["low", "medium", "high"]),
    "citations": st.booleans(),
    "max_content_tokens": st.integers(100, 1000),
}


@st.composite
def _native_specs(draw: st.DrawFn) -> NativeTool:
    kind = draw(st.sampled_from(NATIVE_KINDS))
    names = {
        "web_search": [
            "max_uses",
            "allowed_domains",
            "blocked_domains",
            "user_location",
            "search_context_size",
        ],
        "web_fetch": [
            "max_uses",
            "allowed_domains",
            "blocked_domains",
            "citations",
            "max_content_tokens",
        ],
    }.get(kind, [])
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=3)) if names else []
    if "allowed_domains" in chosen and "blocked_domains" in chosen:
        chosen.remove("blocked_domains")
    options = {name: draw(_OPTION_VALUES[name]) for name in chosen}
    return (
        _SPECS[kind]()
        if not options
        else {"web_search": web_search, "web_fetch": web_fetch}[kind](**options)
    )


_MODELS = _row_models()


_CHOICES = ["auto", "none", "required", "city", *NATIVE_KINDS]


@settings(max_examples=200, deadline=None)
@given(
    label=st.sampled_from(sorted(SUPPORT)),
    specs=st.lists(_native_specs(), min_size=1, max_size=3),
    functions=st.booleans(),
    choice=st.sampled_from(_CHOICES),
)
def test_no_native_tool_is_dropped_without_an_error(
    label: str, specs: list[NativeTool], functions: bool, choice: str
) -> None:
    model = _MODELS[label]
    tools: list[Any] = [*specs, city] if functions else list(specs)
    built = ModelRequest.build("hi", tools=tools, tool_choice=choice)
    try:
        request = model.resolve_native_tools(built)
    except UnsupportedError:
        return
    assert all(not isinstance(t, NativeTool) for t in request.native_tools)
    names = [t.name for t in request.tools]
    assert names[: int(functions)] == (["city"] if functions else [])
    added = names[int(functions) :]
    if label == "Ollama":
        # Run by toolwire on Ollama's behalf: each spec is a function tool of its name.
        assert request.native_tools == [] and set(added) == {s.kind for s in specs}
    else:
        # Each spec became exactly one wire entry.
        assert len(request.native_tools) == len(specs) and added == []
    _assert_choice_kept(choice, request, specs, functions)


def _assert_choice_kept(
    choice: str, request: ModelRequest, specs: list[NativeTool], functions: bool
) -> None:
    """A forcing choice is never lost: it reaches the request as given, or in its wire form."""
    sent = request.tool_choice
    forced_native = choice in {s.kind for s in specs} or (choice == "required" and not functions)
    if not forced_native:
        assert sent == choice
        return
    assert sent not in ("auto", "none")
    if sent == choice:
        # Kept by name only where the name is a function tool's (Ollama's web tools), or kept
        # as "required", which every adapter sends.
        assert choice == "required" or choice in [t.name for t in request.tools]
        return
    # The wire form names the tool as its wire entry does.
    assert isinstance(sent, dict)
    words = json.dumps(sent)
    assert any(
        f'"{entry.get("name", entry.get("type"))}"' in words
        for entry in request.native_tools
        if isinstance(entry, dict)
    )


# --- fees ----------------------------------------------------------------------------------------


def test_tool_fees_are_added_to_the_token_price() -> None:
    tokens = Usage(input_tokens=1000, output_tokens=100, requests=1)
    searched = tokens + Usage(server_tool_requests={"web_search": 3})
    plain = estimate_cost([("anthropic", "claude-sonnet-4-0", tokens)]).total
    priced = estimate_cost([("anthropic", "claude-sonnet-4-0", searched)]).total
    assert plain is not None and priced is not None
    assert priced - plain == 3 * TOOL_FEES[("anthropic", "web_search")].per_use == Decimal("0.03")


def test_a_tool_without_a_known_fee_makes_the_cost_unknown_until_added() -> None:
    usage = Usage(input_tokens=10, output_tokens=5, server_tool_requests={"web_search": 2})
    cost = estimate_cost([("openrouter", "deepseek/deepseek-chat", usage)])
    assert cost.total is None and cost.reason and "openrouter's web_search" in cost.reason
    TOOL_FEES[("openrouter", "web_search")] = ToolFee(Decimal("0.004"), "test", "2026-12-01")
    try:
        known = estimate_cost([("openrouter", "deepseek/deepseek-chat", usage)])
        tokens_only = estimate_cost(
            [("openrouter", "deepseek/deepseek-chat", Usage(input_tokens=10, output_tokens=5))]
        )
    finally:
        del TOOL_FEES[("openrouter", "web_search")]
    assert known.total is not None and tokens_only.total is not None
    assert known.total - tokens_only.total == Decimal("0.008")


async def test_agent_run_cost_includes_the_search_fee() -> None:
    name = "test_anthropic_web_search_tool"
    async with _served(f"anthropic/{name}.yaml", _anthropic) as (_, model, recorded):
        body = recorded[0].request_json
        agent = Agent(model, tools=[web_search()], settings={"thinking": body["thinking"]})
        result = await agent.run(body["messages"][0]["content"][0]["text"])
    assert result.usage.server_tool_requests == {"web_search": 1}
    assert [c.name for c in result.server_tool_calls] == ["web_search"]
    assert len(result.citations) == 9 and result.citations[0].url
    tokens = dataclasses.replace(result.usage, server_tool_requests={})
    plain = estimate_cost([("anthropic", recorded[0].response_json["model"], tokens)]).total
    assert result.cost.total is not None and plain is not None
    assert result.cost.total - plain == Decimal("0.01")


# --- Ollama: web search and fetch run by toolwire through the egress guard ----------------------


def _chat(message: dict[str, Any], finish: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-oss:20b",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


async def test_ollama_web_search_runs_through_the_cloud_web_api() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "web_search", "arguments": '{"query": "toolwire", "max_results": 2}'},
    }
    chat = [
        _chat({"role": "assistant", "content": "", "tool_calls": [call]}, "tool_calls"),
        _chat({"role": "assistant", "content": "toolwire wires tools."}, "stop"),
    ]
    found = {"results": [{"title": "toolwire", "url": "https://x.test/t", "content": "wires"}]}
    with ReplayServer(chat) as llm, ReplayServer([Reply.of_json(200, found)]) as web:
        spec = web_search(
            provider_overrides={
                "ollama": {
                    "base_url": web.base_url + "/api",
                    "api_key": "ollama-key",
                    "egress": EgressPolicy(allow=["127.0.0.1"]),
                }
            }
        )
        model = chat_model("ollama", "gpt-oss:20b", base_url=llm.base_url + "/v1")
        async with model:
            result = await Agent(model, tools=[spec]).run("what is toolwire?")
    assert result.text == "toolwire wires tools."
    first = llm.received[0].json
    assert [t["function"]["name"] for t in first["tools"]] == ["web_search"]
    (asked,) = web.received
    assert asked.path == "/api/web_search"
    assert asked.headers["authorization"] == "Bearer ollama-key"
    assert asked.json == {"query": "toolwire", "max_results": 2}
    answered = llm.received[1].json["messages"][-1]
    assert answered["role"] == "tool" and "https://x.test/t" in answered["content"]


async def test_ollama_web_tools_go_through_the_egress_guard() -> None:
    spec = web_fetch(
        provider_overrides={"ollama": {"base_url": "http://127.0.0.1:9/api", "api_key": "k"}}
    )
    model = chat_model("ollama", "gpt-oss:20b", api_key="k")
    agent = Agent(model, tools=[spec])
    fetch = agent.tools["web_fetch"]
    result = await fetch.invoke({"url": "https://example.org"})
    assert result.is_error and "127.0.0.1" in result.text
    with pytest.raises(UnsupportedError, match="max_results"):
        Agent(model, tools=[web_search(max_results=3)])


# --- the streamed recordings, with the specs ----------------------------------------------------


async def _streamed(model: Any, prompt: str, spec: NativeTool, **options: Any) -> Completion:
    done: list[Completion] = []
    async for event in model.stream_complete(prompt, tools=[spec], **options):
        if isinstance(event, CompletionDone):
            done.append(event.completion)
    (completion,) = done
    return completion


@pytest.mark.parametrize(
    "name",
    ["test_anthropic_model_web_search_tool_stream", "test_pause_turn_web_search_streaming_vcr"],
)
async def test_anthropic_streamed_web_search_spec(name: str) -> None:
    async with _served(f"anthropic/{name}.yaml", _anthropic) as (server, model, recorded):
        body = recorded[0].request_json
        prompt = body["messages"][0]["content"]
        prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
        options = {k: body[k] for k in ("thinking", "max_tokens") if k in body}
        completion = await _streamed(model, prompt, web_search(), settings=options)
    sent = [r.json["tools"] for r in server.received]
    assert sent == [_without_nulls(i.request_json["tools"]) for i in recorded]
    assert completion.usage.server_tool_requests["web_search"] >= 1
    assert completion.server_tool_calls[0].name == "web_search"


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("test_code_execution_stream", code_execution()),
        ("test_google_model_web_search_tool_stream", web_search()),
    ],
)
async def test_gemini_streamed_specs(name: str, spec: NativeTool) -> None:
    async with _served(f"google/{name}.yaml", _google) as (server, model, recorded):
        body = recorded[0].request_json
        completion = await _streamed(model, body["contents"][0]["parts"][0]["text"], spec)
    assert server.received[0].json["tools"] == body["tools"]
    assert completion.server_tool_calls or completion.citations


async def test_openai_responses_streamed_web_search_spec() -> None:
    name = "test_openai_include_raw_annotations_streaming"
    async with _served(f"openai_responses/{name}.yaml", _responses) as (server, model, recorded):
        body = recorded[0].request_json
        completion = await _streamed(
            model,
            body["input"][0]["content"],
            web_search(search_context_size="medium"),
            settings={"extra": {"instructions": body["instructions"]}}
            if "instructions" in body
            else None,
        )
    assert server.received[0].json["tools"] == body["tools"]
    assert completion.server_tool_calls[0].name == "web_search" and completion.citations
