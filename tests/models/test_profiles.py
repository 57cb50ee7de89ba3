"""Provider profiles: every adapter and provider entry has one, the tables come from them, and what
a profile lacks is a documented "no" (`UnsupportedError`), never a `KeyError`."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from typing import Any, cast

import pytest
from google.oauth2.credentials import Credentials
from pydantic import BaseModel

from toolwire import (
    AssistantMessage,
    TestModel,
    ToolCallBlock,
    ToolResultMessage,
    UnsupportedError,
    model,
    tool,
    web_fetch,
    web_search,
)
from toolwire.models import FallbackModel, ModelBase, ModelRequest, allow_model_requests
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.openai_chat import OpenAIChatModel
from toolwire.models.profiles import (
    ANTHROPIC,
    CUSTOM,
    GROQ,
    OPENAI_RESPONSES,
    PROFILES,
    PROVIDERS,
    TOOL_FEES,
    ModelProfile,
    profile_of,
    stand_in_profile,
)
from toolwire.native import NATIVE_KINDS, NativeTool

pytestmark = pytest.mark.anyio

_THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


@tool
def city() -> str:
    """Where the user lives."""
    return "Utrecht"


class City(BaseModel):
    name: str


def test_profile_names_are_unique_and_each_provider_api_pair_has_one_profile() -> None:
    assert len({p.name for p in PROFILES}) == len(PROFILES)
    assert len({(p.provider, p.api) for p in PROFILES}) == len(PROFILES)


def test_the_fee_table_is_built_from_the_profiles() -> None:
    built = {(p.provider, k): fee for p in PROFILES for k, fee in p.fees.items()}
    assert built == TOOL_FEES
    for profile in PROFILES:
        # A fee is for a tool the profile takes: a fee on a "no" cell is a mistake.
        assert all(profile.cell(kind).supported for kind in profile.fees)


# --- every adapter and provider entry has its profile -------------------------------------------


def _build(name: str, monkeypatch: pytest.MonkeyPatch) -> ModelBase:
    entry = PROVIDERS[name]
    if entry.key_env:
        monkeypatch.setenv(entry.key_env, "k")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    options: dict[str, Any] = {}
    if name == "vertex":
        options = {"project": "p", "location": "global", "credentials": Credentials(token="t")}
    if name == "openai-compatible":
        options = {"base_url": "http://localhost:8000/v1"}
    return cast(ModelBase, model(f"{name}:some-model", **options))


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_every_provider_entry_builds_a_model_with_its_profile(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = PROVIDERS[name]
    built = _build(name, monkeypatch)
    assert built.profile is entry.profile
    assert (built.provider, built.api) == (entry.profile.provider, entry.profile.api)
    module, _, attribute = entry.factory.partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))
    if entry.extra is not None:
        assert importlib.util.find_spec(entry.extra[1]) is not None


def test_every_profile_is_some_adapters() -> None:
    entries = {id(e.profile) for e in PROVIDERS.values()}
    # Azure's Responses profile is reached through `azure(..., api="responses")`.
    missing = [p.name for p in PROFILES if id(p) not in entries]
    assert missing == ["Azure Responses"]


def test_an_unknown_server_gets_a_plain_profile_that_names_it() -> None:
    together = OpenAIChatModel("m", provider="together", api_key="k")
    assert (together.profile.name, together.profile.provider) == ("together", "together")
    assert together.profile.native_output
    request = ModelRequest.build("hi", tools=[web_search()])
    with pytest.raises(UnsupportedError, match="together cannot take web_search"):
        together.resolve_native_tools(request)


def test_a_model_without_a_profile_reads_as_custom() -> None:
    class Bare:
        provider = "bare"

    assert profile_of(Bare()) is CUSTOM
    assert profile_of(TestModel()).name == "test"


# --- a missing cell is a documented "no" ---------------------------------------------------------


@pytest.mark.parametrize("kind", NATIVE_KINDS)
def test_a_profile_without_a_cell_refuses_the_tool_with_its_reason(kind: str) -> None:
    bare = dataclasses.replace(ANTHROPIC, name="Bare", native={})
    cell = bare.cell(kind)
    assert not cell.supported and "Bare profile" in cell.wire
    claude = AnthropicModel("claude-x", api_key="k")
    claude.profile = bare
    spec = NativeTool(cast(Any, kind))
    with pytest.raises(UnsupportedError, match=f"Bare cannot take {kind}") as caught:
        claude.resolve_native_tools(ModelRequest.build("hi", tools=[spec]))
    assert "no native tools" in str(caught.value)


def test_a_kind_no_profile_knows_is_refused_not_a_key_error() -> None:
    spec = NativeTool(cast(Any, "image_generation"))
    for profile in PROFILES:
        assert not profile.cell("image_generation").supported
    claude = AnthropicModel("claude-x", api_key="k")
    with pytest.raises(UnsupportedError, match="'image_generation' is not a native tool"):
        claude.resolve_native_tools(ModelRequest.build("hi", tools=[spec]))


# --- one thinking rule ---------------------------------------------------------------------------


async def test_anthropic_refuses_any_forced_tool_while_thinking_with_one_message() -> None:
    claude = AnthropicModel("claude-x", api_key="k", **_THINKING)
    with pytest.raises(UnsupportedError) as function_forced:
        await claude.complete("hi", tools=[city], tool_choice="required")
    with pytest.raises(UnsupportedError) as native_forced:
        await claude.complete("hi", tools=[web_search()], tool_choice="web_search")
    assert str(function_forced.value) == str(native_forced.value)
    assert "Anthropic refuses forced tool use" in str(native_forced.value)
    assert not ANTHROPIC.thinking.forced_tool
    assert all(p.thinking.forced_tool for p in PROFILES if p is not ANTHROPIC)


async def test_a_stand_in_for_anthropic_follows_the_thinking_rule() -> None:
    stand_in = TestModel(provider="anthropic", model_name="claude-sonnet-4-5")
    with pytest.raises(UnsupportedError, match="extended thinking"):
        await stand_in.complete(
            "hi", tools=[web_fetch()], tool_choice="web_fetch", settings=_THINKING
        )
    done = await stand_in.complete("hi", tools=[web_fetch()], settings=_THINKING)
    assert [c.name for c in done.server_tool_calls] == ["web_fetch"]


# --- families, stand-ins, wrappers -----------------------------------------------------------------


def test_model_name_families() -> None:
    assert GROQ.family("groq/compound-mini") == "compound"
    assert GROQ.family("openai/gpt-oss-120b") is None
    assert OPENAI_RESPONSES.family("computer-use-preview-2025-03-11") == "computer-use-preview"
    assert OPENAI_RESPONSES.family("gpt-5") is None


def test_stand_ins_follow_the_row_model_builds_for_their_provider() -> None:
    # A model() prefix gives that entry's row; a provider name its richest row.
    assert stand_in_profile("openai").name == "OpenAI Chat"
    assert stand_in_profile("openai").cell("web_search").supported  # through Responses
    assert stand_in_profile("openai-responses").name == "OpenAI Responses"
    assert stand_in_profile("azure").name == "Azure Chat"
    assert stand_in_profile("gemini").name == "Gemini"
    assert stand_in_profile("vertex").name == "Vertex"
    assert stand_in_profile("anthropic") == ANTHROPIC
    # Ollama's web tools are accepted as tools the script answers: never run online.
    ollama = stand_in_profile("ollama")
    assert ollama.cell("web_search").supported and not ollama.cell("web_search").client_run


async def test_a_stand_in_combines_native_tools_and_output_where_its_provider_does() -> None:
    gemini = TestModel(provider="google", model_name="gemini-3-flash-preview")
    parsed = await gemini.parse("Where?", output_type=City, native_tools=[web_search()])
    assert isinstance(parsed.output, City)
    claude = TestModel(provider="anthropic", model_name="claude-sonnet-4-5")
    with pytest.raises(UnsupportedError, match="cannot combine native tools"):
        await claude.parse("Where?", output_type=City, native_tools=[web_search()])


def test_a_fallback_asks_natively_only_for_what_every_model_takes() -> None:
    both = FallbackModel(TestModel(provider="google"), TestModel(provider="deepseek"))
    assert both.profile.structured_output == "json_object"
    assert not both.profile.output_with_native_tools
    plain = TestModel()
    plain.profile = dataclasses.replace(plain.profile, structured_output="none")
    assert not FallbackModel(TestModel(), plain).profile.native_output
    single = FallbackModel(TestModel(provider="google"))
    assert single.profile.name == "Gemini"


def test_profiles_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ANTHROPIC.name = "x"  # type: ignore[misc]
    assert isinstance(ANTHROPIC, ModelProfile)


@pytest.mark.parametrize("name", ["openai", "groq", "deepseek", "openrouter", "ollama"])
def test_chat_call_ids_are_held_to_the_profiles_length(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = cast(OpenAIChatModel, _build(name, monkeypatch))
    longest = chat.profile.call_id_max
    assert longest is not None
    long_id = "toolu_" + "x" * 60  # another provider's id, longer than Chat Completions takes
    history = [
        AssistantMessage(parts=[ToolCallBlock(long_id, "city", "{}")], provider="anthropic"),
        ToolResultMessage(call_id=long_id, name="city", content=[]),
    ]
    body = chat.wire_request(chat.prepare(ModelRequest.build("and now?", history=history)))
    sent_call = body["messages"][0]["tool_calls"][0]["id"]
    assert len(sent_call) == longest and body["messages"][1]["tool_call_id"] == sent_call


@pytest.mark.parametrize("name", sorted(set(PROVIDERS) - {"test"}))
def test_strict_tools_go_out_where_the_profile_says(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _build(name, monkeypatch)
    with allow_model_requests():
        prepared = built.prepare(ModelRequest.build("hi", tools=[city]))
    # Strict is a fact of the model as well as the provider (Anthropic: Claude 4.5 and later).
    assert prepared.definitions[0].strict is built.profile.strict_for(built.model_name)
    if name == "anthropic":
        newer = cast(ModelBase, model("anthropic:claude-sonnet-4-5"))
        with allow_model_requests():
            sent = newer.prepare(ModelRequest.build("hi", tools=[city]))
        assert sent.definitions[0].strict is True and built.profile.strict is True


async def test_a_stand_in_for_anthropic_refuses_a_forced_function_while_thinking() -> None:
    stand_in = TestModel(provider="anthropic", model_name="claude-sonnet-4-5")
    real = AnthropicModel("claude-x", api_key="k", **_THINKING)
    with pytest.raises(UnsupportedError, match="extended thinking") as offline:
        await stand_in.complete("hi", tools=[city], tool_choice="city", settings=_THINKING)
    with pytest.raises(UnsupportedError, match="extended thinking") as online:
        await real.complete("hi", tools=[city], tool_choice="city")
    assert str(offline.value) == str(online.value) and stand_in.requests == []
    # Without thinking, or without forcing, both take it.
    assert (await stand_in.complete("hi", tools=[city], tool_choice="city")).tool_calls
    assert (await stand_in.complete("hi", tools=[city], settings=_THINKING)).tool_calls


def test_the_profiles_load_no_prebuilt_tool_until_one_is_needed() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import toolwire.usage, toolwire.models.base\n"
        "from toolwire.models.providers import ollama\n"
        "print('toolwire.prebuilt' in sys.modules)\n"
        "from toolwire import web_search\n"
        "from toolwire.models import ModelRequest\n"
        "model = ollama('gpt-oss:20b', api_key='k')\n"
        "request = model.resolve_native_tools(ModelRequest.build('hi', tools=[web_search()]))\n"
        "print([t.name for t in request.tools], 'toolwire.prebuilt.ollama_web' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False", "['web_search'] True"]


def test_a_profiles_tables_cannot_be_changed_in_place() -> None:
    with pytest.raises(TypeError):
        ANTHROPIC.native["web_search"] = ANTHROPIC.cell("web_fetch")  # type: ignore[index]
    with pytest.raises(TypeError):
        ANTHROPIC.fees["web_search"] = ANTHROPIC.fees["web_fetch"]  # type: ignore[index]
    changed = dataclasses.replace(ANTHROPIC, native={})
    assert not changed.cell("web_search").supported and ANTHROPIC.cell("web_search").supported
