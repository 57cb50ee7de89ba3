"""The one model seam (issue 24): `Model.send(request)` is the only way in, the request is prepared
once (a named tool choice checked, definitions compiled once for the dialect), and every adapter,
offline model and wrapper refuses the same mistakes the same way, before any request."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Iterator

import anyio
import pytest

from recordings.replay import ReplayServer
from toolwire import tool, web_search
from toolwire.errors import ModelConnectionError, UnsupportedError
from toolwire.messages import AssistantMessage, TextBlock
from toolwire.middleware import ToolWrapper
from toolwire.models import FallbackModel, FunctionModel, RetryModel, ScriptedModel, TestModel
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.azure import azure
from toolwire.models.base import (
    Completion,
    CompletionDone,
    Model,
    ModelBase,
    ModelRequest,
    OutputSpec,
    PreparedRequest,
    StreamEvent,
)
from toolwire.models.google import gemini, vertex
from toolwire.models.mistral import MistralModel
from toolwire.models.mistral_conversations import MistralConversationsModel
from toolwire.models.openai_chat import OpenAIChatModel
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.tools import DefinitionDialect, Tool, ToolDefinition

pytestmark = pytest.mark.anyio


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return term


@tool
def other(n: int) -> int:
    """Another tool."""
    return n


class Counting(ToolWrapper):
    """A tool that counts how often its definition is compiled."""

    def __init__(self, wrapped: Tool) -> None:
        super().__init__(wrapped)
        self.compiled: list[DefinitionDialect] = []

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        self.compiled.append(dialect)
        return super().definition(dialect)


Factory = Callable[[str], ModelBase]

ADAPTERS: dict[str, Factory] = {
    "openai-chat": lambda root: OpenAIChatModel("m", api_key="k", base_url=root + "/v1"),
    "openai-responses": lambda root: OpenAIResponsesModel("m", api_key="k", base_url=root + "/v1"),
    "azure-chat": lambda root: azure("d", endpoint=root, api_key="k", api_version="2024-10-21"),
    "azure-responses": lambda root: azure("d", api="responses", endpoint=root, api_key="k"),
    "anthropic": lambda root: AnthropicModel("m", api_key="k", base_url=root),
    "gemini": lambda root: gemini("gemini-2.5-flash", api_key="k", base_url=root),
    "vertex": lambda root: vertex("gemini-2.5-flash", project="p", base_url=root),
    "mistral": lambda root: MistralModel("m", api_key="k", base_url=root),
    "mistral-conversations": lambda root: MistralConversationsModel(
        "m", api_key="k", base_url=root
    ),
}

OFFLINE: dict[str, Callable[[], ModelBase]] = {
    "scripted": lambda: ScriptedModel(["never sent"]),
    "scripted-as-anthropic": lambda: ScriptedModel(["never sent"], provider="anthropic"),
    "function": lambda: FunctionModel(lambda messages, request: "never sent"),
    "test": lambda: TestModel(),
    "test-as-openai": lambda: TestModel(provider="openai"),
}

EXPECTED = (
    "tool_choice='lookp' names no tool of this request: 'lookp' is not among the tools "
    "(lookup, other)"
)


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer([]) as running:
        yield running


async def _refusals(model: Model) -> list[str]:
    """The messages of the refusals of a misnamed tool choice, plain and streamed."""
    request = ModelRequest.build("hi", tools=[lookup, other], tool_choice="lookp")
    found: list[str] = []
    with pytest.raises(UnsupportedError) as plain:
        await model.send(request)
    found.append(str(plain.value))
    with pytest.raises(UnsupportedError) as streamed:
        async for _ in model.send_stream(request):
            pass
    found.append(str(streamed.value))
    return found


@pytest.mark.parametrize("name", sorted(ADAPTERS))
async def test_every_adapter_refuses_a_tool_choice_naming_no_tool_before_any_request(
    name: str, server: ReplayServer
) -> None:
    model = ADAPTERS[name](server.base_url)
    try:
        assert await _refusals(model) == [EXPECTED, EXPECTED]
    finally:
        await getattr(model, "aclose")()  # noqa: B009
    assert server.received == []


@pytest.mark.parametrize("name", sorted(OFFLINE))
async def test_every_offline_model_refuses_it_the_same_way(name: str) -> None:
    model = OFFLINE[name]()
    assert await _refusals(model) == [EXPECTED, EXPECTED]
    assert getattr(model, "requests") == []  # noqa: B009


async def test_a_wrapper_refuses_it_once_without_falling_back(server: ReplayServer) -> None:
    backup = ScriptedModel(["not asked"])
    first = OpenAIChatModel("m", api_key="k", base_url=server.base_url + "/v1")
    model = RetryModel(FallbackModel(first, backup))
    try:
        assert await _refusals(model) == [EXPECTED, EXPECTED]
    finally:
        await model.aclose()
    assert server.received == [] and backup.remaining == 1


async def test_a_named_choice_may_name_a_native_tool_or_a_raw_tool() -> None:
    # A native spec's kind and a raw tool payload's name are tools of the request too.
    native = ScriptedModel(["ok"], provider="anthropic")
    await native.complete("hi", tools=[web_search()], tool_choice="web_search")
    assert native.requests[0].tool_choice != "auto"
    chat = OpenAIChatModel("m", api_key="k")
    raw = {"type": "function", "function": {"name": "raw_fn", "parameters": {"type": "object"}}}
    request = ModelRequest.build(
        "hi", tools=[lookup], tool_choice="raw_fn", settings={"tools": [raw]}
    )
    body = chat.wire_request(chat.prepare(request))
    assert body["tool_choice"] == {"type": "function", "function": {"name": "raw_fn"}}
    await chat.aclose()
    # The modes and raw provider values are not names.
    for choice in ("auto", "none", "required", {"type": "any"}):
        ScriptedModel(["x"]).prepare(ModelRequest.build("hi", tools=[lookup], tool_choice=choice))


def _request() -> tuple[ModelRequest, Counting, Counting]:
    one, two = Counting(lookup), Counting(other)
    request = ModelRequest.build("hi", tools=[one, two], tool_choice="required")
    return request, one, two


@pytest.mark.parametrize("name", sorted(ADAPTERS))
async def test_no_adapter_compiles_a_definition_again(name: str) -> None:
    model = ADAPTERS[name]("http://127.0.0.1:9")
    request, one, two = _request()
    prepared = model.prepare(request)
    assert one.compiled == two.compiled == [model.dialect]
    assert [d.name for d in prepared.definitions] == ["lookup", "other"]
    model.wire_request(prepared)
    model.wire_request(prepared)
    assert one.compiled == two.compiled == [model.dialect]  # the adapter only reads them
    await getattr(model, "aclose")()  # noqa: B009


async def test_a_prepared_request_is_frozen_and_carries_the_compiled_output() -> None:
    model = ScriptedModel(["{}"])
    spec = OutputSpec("answer", {"type": "object", "properties": {"a": {"type": "string"}}})
    prepared = model.prepare(ModelRequest.build("hi", output=spec), stream=True)
    assert prepared.stream is True and prepared.output is spec
    assert prepared.output_definition is not None
    assert prepared.output_definition.parameters["required"] == ["a"]  # strict where it can
    with pytest.raises(AttributeError):
        prepared.tools = []  # type: ignore[misc]


async def test_send_compiles_each_tool_once_per_request() -> None:
    request, one, two = _request()
    model = ScriptedModel(["a", "b"])
    await model.send(request)
    events = [e async for e in model.send_stream(request)]
    assert isinstance(events[-1], CompletionDone)
    assert len(one.compiled) == len(two.compiled) == 2  # one per request, none in between
    assert all(isinstance(r, PreparedRequest) for r in model.requests)
    assert [d.name for d in model.requests[0].definitions] == ["lookup", "other"]


class OnlySend:
    """A model by the protocol alone: provider, model name, send and send_stream."""

    provider = "mine"
    model_name = "mine-1"

    def __init__(self) -> None:
        self.seen: list[ModelRequest] = []

    async def send(self, request: ModelRequest) -> Completion:
        self.seen.append(request)
        return Completion(AssistantMessage([TextBlock("hello")], provider="mine"))

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield CompletionDone(await self.send(request))


async def test_the_protocol_is_send_and_send_stream() -> None:
    mine = OnlySend()
    assert isinstance(mine, Model)
    assert not isinstance(object(), Model)
    spec = OutputSpec("answer", {"type": "object"})
    request = ModelRequest.build("hi", output=spec)
    completion = await FallbackModel(mine).send(request)
    assert completion.text == "hello" and mine.seen == [request]
    assert [(a.provider, a.model) for a in completion.attempts] == [("mine", "mine-1")]


async def test_provider_name_and_repr_come_from_the_base() -> None:
    chat = OpenAIChatModel("gpt-4o", provider="groq", api_key="k", base_url="http://127.0.0.1:9")
    claude = AnthropicModel("claude-x", api_key="k")
    mistral = MistralModel("mistral-x", api_key="k")
    assert (chat.provider, chat.model_name) == ("groq", "gpt-4o")
    assert repr(chat) == "OpenAIChatModel('gpt-4o', provider='groq')"
    assert repr(claude) == "AnthropicModel('claude-x', provider='anthropic')"
    assert repr(mistral) == "MistralModel('mistral-x', provider='mistral')"
    assert repr(ScriptedModel(model_name="s")) == "ScriptedModel('s', provider='test')"
    for model in (chat, claude, mistral):
        await model.aclose()


@pytest.mark.parametrize("name", sorted(set(ADAPTERS) - {"vertex"}))  # vertex asks for credentials
async def test_every_adapter_maps_a_refused_connection_the_same_way_plain_and_streamed(
    name: str,
) -> None:
    # One hook (`map_error`) maps the SDK's failure for both kinds of call.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ADAPTERS[name](f"http://127.0.0.1:{port}")
    request = ModelRequest.build("hi")
    try:
        with anyio.fail_after(30):
            with pytest.raises(ModelConnectionError) as plain:
                await model.send(request)
            with pytest.raises(ModelConnectionError) as streamed:
                async for _ in model.send_stream(request):
                    pass
    finally:
        await getattr(model, "aclose")()  # noqa: B009
    assert plain.value.provider == streamed.value.provider == model.provider
