"""The Anthropic adapter against every recorded Anthropic conversation, replayed on 127.0.0.1.

Each test drives toolwire so that it makes the recorded conversation, then checks both what it
sent (the request bodies) and what it understood (calls, text, reasoning, citations, usage).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import re
import unicodedata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anthropic
import pytest

from recordings.replay import Interaction, ReplayServer, Reply, iter_recordings, load_cassette
from toolwire import (
    Agent,
    AssistantMessage,
    Citation,
    FilePart,
    ImagePart,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    TextPart,
    ToolCallBlock,
    ToolResultMessage,
    UnsupportedError,
    UserMessage,
    dump_history,
    load_history,
    tool,
)
from toolwire.models.anthropic import DEFAULT_MAX_TOKENS, AnthropicModel
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)

# The SDK warns about models nearing end of life (claude-sonnet-4-5 in some recordings).
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


@functools.cache
def cassette(name: str) -> list[Interaction]:
    return load_cassette(f"anthropic/{name}.yaml")


@asynccontextmanager
async def replayed(name: str, **options: Any) -> AsyncIterator[tuple[ReplayServer, AnthropicModel]]:
    """A replay server for a recording and a model pointed at it, with the recorded model name."""
    model_name = cassette(name)[0].request_json["model"]
    replies = [Reply(i.status, i.body, i.headers, expect_path=i.path) for i in cassette(name)]
    with ReplayServer(replies) as server:
        async with AnthropicModel(
            model_name, api_key="test-key", base_url=server.base_url, **options
        ) as model:
            yield server, model
    assert server.mismatches == []


_TYPOGRAPHY = str.maketrans(
    {"\u2013": "-", "\u2014": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
)


def _plain_text(value: Any) -> Any:
    # pydantic-ai stored its request bodies with smart quotes and dashes made ASCII (and NFKC),
    # while the streamed responses kept them: compare text the same way on both sides.
    if isinstance(value, str):
        return unicodedata.normalize("NFKC", value).translate(_TYPOGRAPHY)
    if isinstance(value, list):
        return [_plain_text(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_text(v) for k, v in value.items()}
    return value


def uncached(value: Any) -> Any:
    """`value` without the `cache_control` marks toolwire's caching policy adds to long requests
    (the recordings were made without; tests/models/test_prompt_cache.py pins them), a marked
    system prompt back to its text."""
    if isinstance(value, list):
        return [uncached(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: uncached(v) for k, v in value.items() if k != "cache_control"}
    system = out.get("system")
    if isinstance(system, list) and len(system) == 1 and "messages" in out:
        out["system"] = system[0]["text"]
    return out


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with the API's defaults made explicit-or-absent the same way.

    `tool_choice: auto` and `is_error: false` are Anthropic's defaults; the recorded clients wrote
    them or not, toolwire leaves them out. The recordings predate strict tool use: toolwire's
    `strict: true` on those models, with the closed objects strict mode needs, is compared in
    tests/models/test_anthropic_strict.py; here both leave.
    """
    body = _plain_text(uncached(body))
    for spec in body.get("tools", ()):
        spec.pop("strict", None)
        _open_objects(spec.get("input_schema"))
    if body.get("tool_choice") == {"type": "auto"}:
        del body["tool_choice"]
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and block.get("is_error") is False:
                del block["is_error"]
    return body


def _open_objects(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
        for value in node.values():
            _open_objects(value)
    elif isinstance(node, list):
        for value in node:
            _open_objects(value)


def assert_requests_match(server: ReplayServer, name: str) -> None:
    recorded = [i.request_json for i in cassette(name)]
    sent = [r.json for r in server.received]
    assert len(sent) == len(recorded)
    for index, (ours, theirs) in enumerate(zip(sent, recorded, strict=True)):
        assert normalised(ours) == normalised(theirs), f"request {index + 1} differs"


def settings_of(name: str, *keys: str) -> dict[str, Any]:
    """Settings copied from the first recorded request (e.g. its thinking config)."""
    first = cassette(name)[0].request_json
    return {k: first[k] for k in keys if k in first}


def without_raw(completion: Completion) -> Completion:
    return dataclasses.replace(completion, raw=None)


async def collect(events: AsyncIterator[StreamEvent]) -> tuple[list[StreamEvent], Completion]:
    seen = [e async for e in events]
    assert isinstance(seen[-1], CompletionDone)
    assert not any(isinstance(e, CompletionDone) for e in seen[:-1])
    return seen, seen[-1].completion


# --- non-streamed recordings --------------------------------------------------------------------


@pytest.mark.anyio
async def test_tool_with_thinking_runs_through_the_agent_loop() -> None:
    name = "test_anthropic_tool_with_thinking"
    get_user_country = tool(
        name="get_user_country",
        description="",
        parameters={"additionalProperties": False, "properties": {}, "type": "object"},
        execute=lambda args: "Mexico",
    )
    async with replayed(name) as (server, model):
        agent = Agent(model, tools=[get_user_country], settings=settings_of(name, "thinking"))
        result = await agent.run("What is the largest city in the user country?")
    assert_requests_match(server, name)
    first = result.new_messages[1]
    assert isinstance(first, AssistantMessage) and first.provider == "anthropic"
    thinking, text, call = first.parts
    recorded = cassette(name)[0].response_json["content"][0]
    assert isinstance(thinking, ReasoningBlock)
    assert thinking.text == recorded["thinking"]
    assert thinking.provider_state == {"signature": recorded["signature"]}
    assert isinstance(text, TextBlock) and text.text.startswith("I'll help you find")
    assert call == ToolCallBlock(
        id="toolu_01YGzqpRE16Vricda3Aqcejo", name="get_user_country", arguments="{}"
    )
    assert [t.result for t in result.trace] == ["Mexico"]
    assert result.text.startswith("Based on the information that you're from Mexico")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (398 + 566, 155 + 126)
    assert result.usage.requests == 2


@pytest.mark.anyio
async def test_parallel_tool_calls_run_through_the_agent_loop() -> None:
    name = "test_multiple_parallel_tool_calls"
    facts = {
        "Alice": "alice is bob's wife",
        "Bob": "bob is alice's husband",
        "Charlie": "charlie is alice's son",
        "Daisy": "daisy is bob's daughter and charlie's younger sister",
    }

    def retrieve_entity_info(name: str) -> str:
        """Get the knowledge about the given entity."""
        return facts[name]

    completions: list[Completion] = []
    async with replayed(name) as (server, model):
        agent = Agent(
            model,
            instructions=cassette(name)[0].request_json["system"],
            tools=[retrieve_entity_info],
        )
        agent.subscribe(
            lambda e: completions.append(e.completion) if e.type == "model.response" else None
        )
        result = await agent.run("Alice, Bob, Charlie and Daisy are a family. Who is the youngest?")
    assert_requests_match(server, name)
    calls = completions[0].tool_calls
    assert [c.args for c in calls] == [{"name": n} for n in facts]
    assert len({c.id for c in calls}) == 4 and completions[0].finish_reason == "tool_calls"
    # The four results went back together, in call order, in one user turn.
    assert [t.result for t in result.trace] == list(facts.values())
    assert "Daisy is the youngest" in result.text
    assert completions[1].finish_reason == "stop" and completions[1].raw_finish_reason == "end_turn"


@pytest.mark.anyio
async def test_redacted_thinking_is_replayed_verbatim() -> None:
    name = "test_anthropic_model_thinking_part_redacted"
    recorded = cassette(name)
    prompt = recorded[0].request_json["messages"][0]["content"][0]["text"]
    settings = settings_of(name, "thinking")
    async with replayed(name) as (server, model):
        first = await model.complete(prompt, settings=settings)
        history = [UserMessage.of(prompt), first.message]
        second = await model.complete("What was that?", history=history, settings=settings)
    assert_requests_match(server, name)
    redacted = first.message.parts[0]
    assert isinstance(redacted, ReasoningBlock) and redacted.redacted and redacted.text == ""
    assert redacted.provider_state == {"data": recorded[0].response_json["content"][0]["data"]}
    assert first.reasoning == "" and first.text.startswith("I notice that your message")
    assert second.text.startswith("That message appeared to be")
    assert second.usage.input_tokens == 168 and second.usage.output_tokens == 232


@pytest.mark.anyio
async def test_web_search_server_blocks_and_citations_round_trip() -> None:
    name = "test_anthropic_web_search_tool"
    settings = settings_of(name, "thinking", "tools")  # the web_search server tool, as recorded
    async with replayed(name) as (server, model):
        first = await model.complete(
            "What is the weather in San Francisco today?", settings=settings
        )
        # Provider state survives a trip through JSON, as a stored conversation would.
        history = load_history(
            dump_history(
                [UserMessage.of("What is the weather in San Francisco today?"), first.message]
            )
        )
        second = await model.complete("how about Mexico City?", history=history, settings=settings)
    assert_requests_match(server, name)

    (search,) = first.server_tool_calls
    assert search.id == "srvtoolu_01EoSNE7k4dUJyGatASCV5qs" and search.name == "web_search"
    assert search.arguments == {"query": "San Francisco weather today"}
    result = next(p for p in first.message.parts if isinstance(p, ServerToolResultBlock))
    assert (result.call_id, result.name, result.is_error) == (search.id, "web_search", False)
    assert len(result.content) == 10 and result.content[0]["title"].endswith("AccuWeather")
    citations = first.citations
    recorded = cassette(name)[0].response_json["content"]
    assert len(citations) == sum(len(b.get("citations") or ()) for b in recorded) == 9
    assert (
        citations[0].url
        == "https://www.accuweather.com/en/us/san-francisco/94103/weather-forecast/347629"
    )
    assert (
        citations[0].cited_text
        and citations[0].title == "San Francisco, CA Weather Forecast | AccuWeather"
    )
    cited_block = next(p for p in first.message.parts if isinstance(p, TextBlock) and p.citations)
    assert cited_block.text == "Temperature: 66°F with clear skies"
    assert (cited_block.citations[0].start_index, cited_block.citations[0].end_index) == (
        0,
        len(cited_block.text),
    )
    assert (
        citations[0].provider_state
        and citations[0].provider_state["type"] == "web_search_result_location"
    )
    assert first.usage.server_tool_requests == {"web_search": 1}
    assert first.usage.input_tokens == 8984 and first.finish_reason == "stop"
    assert "Mexico City" in second.text and second.usage.server_tool_requests == {"web_search": 1}


@pytest.mark.anyio
async def test_pause_turn_is_continued_until_the_turn_ends() -> None:
    name = "test_pause_turn_web_search_vcr"
    recorded = cassette(name)
    prompt = recorded[0].request_json["messages"][0]["content"][0]["text"]
    settings = settings_of(name, "thinking", "tools", "max_tokens")
    async with replayed(name) as (server, model):
        completion = await model.complete(prompt, settings=settings)
    # One call, two requests: the second sends the paused content back as the assistant turn.
    assert_requests_match(server, name)
    paused, final = (i.response_json for i in recorded)
    assert len(completion.message.parts) == len(paused["content"]) + len(final["content"])
    assert completion.finish_reason == "stop" and completion.raw_finish_reason == "end_turn"
    assert completion.message.id == final["id"]
    assert isinstance(completion.raw, list) and [r["id"] for r in completion.raw] == [
        paused["id"],
        final["id"],
    ]
    # The search paused mid-way is answered by the first block of the continuation.
    last_paused = completion.message.parts[len(paused["content"]) - 1]
    first_continued = completion.message.parts[len(paused["content"])]
    assert isinstance(last_paused, ServerToolCallBlock)
    assert isinstance(first_continued, ServerToolResultBlock)
    assert first_continued.call_id == last_paused.id
    usage = completion.usage
    assert usage.requests == 2
    assert usage.input_tokens == paused["usage"]["input_tokens"] + final["usage"]["input_tokens"]
    assert usage.output_tokens == paused["usage"]["output_tokens"] + final["usage"]["output_tokens"]
    searches = (
        paused["usage"]["server_tool_use"]["web_search_requests"]
        + final["usage"]["server_tool_use"]["web_search_requests"]
    )
    assert usage.server_tool_requests == {"web_search": searches}
    assert len(completion.server_tool_calls) == 15
    assert completion.citations and completion.text.count("Perfect! All 15 searches") == 1


# --- streamed recordings ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_thinking_stream_assembles_reasoning_signature_and_text() -> None:
    name = "test_anthropic_model_thinking_part_stream"
    async with replayed(name) as (server, model):
        events, completion = await collect(
            model.stream_complete(
                "How do I cross the street?", settings=settings_of(name, "thinking")
            )
        )
    assert_requests_match(server, name)
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert reasoning == completion.reasoning and reasoning.startswith(
        "This is a straightforward question"
    )
    assert text == completion.text and text.endswith("when crossing streets.")
    thinking = completion.message.parts[0]
    assert isinstance(thinking, ReasoningBlock) and thinking.provider_state
    assert thinking.provider_state["signature"].startswith("EvMCCkYICxgCKkCHP2cSuEdcJK")
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (43, 282)
    assert (
        completion.finish_reason == "stop"
        and completion.message.id == "msg_01ALwQ87pTS7hH1PjSdC9wJD"
    )


@pytest.mark.anyio
async def test_web_search_stream_keeps_server_blocks_and_citations() -> None:
    name = "test_anthropic_model_web_search_tool_stream"
    async with replayed(name) as (server, model):
        events, completion = await collect(
            model.stream_complete(
                "What is the weather in San Francisco today?",
                settings=settings_of(name, "thinking", "tools"),
            )
        )
    assert_requests_match(server, name)
    assert [c.arguments for c in completion.server_tool_calls] == [
        {"query": "San Francisco weather today"},
        {"query": "San Francisco weather September 16 2025"},
    ]
    results = [p for p in completion.message.parts if isinstance(p, ServerToolResultBlock)]
    assert [r.call_id for r in results] == [c.id for c in completion.server_tool_calls]
    assert len(completion.citations) == 7
    cited = next(p for p in completion.message.parts if isinstance(p, TextBlock) and p.citations)
    assert cited.text == "today (September 16) shows a high of 76°F and low of 59°F"
    assert (
        cited.citations[0].url
        == "https://www.accuweather.com/en/us/san-francisco/94103/september-weather/347629"
    )
    # Server tool input is not the caller's to run: no tool-call deltas for it.
    assert not any(isinstance(e, ToolCallDelta) for e in events)
    assert completion.usage.server_tool_requests == {"web_search": 2}


@pytest.mark.anyio
async def test_streamed_pause_turn_is_continued() -> None:
    name = "test_pause_turn_web_search_streaming_vcr"
    recorded = cassette(name)
    prompt = recorded[0].request_json["messages"][0]["content"][0]["text"]
    async with replayed(name) as (server, model):
        events, completion = await collect(
            model.stream_complete(
                prompt, settings=settings_of(name, "thinking", "tools", "max_tokens")
            )
        )
    assert_requests_match(server, name)
    assert completion.finish_reason == "stop" and completion.usage.requests == 2
    assert completion.usage.server_tool_requests == {"web_search": 15}
    assert completion.usage.input_tokens == 404500 + 482529
    assert completion.usage.reasoning_tokens == 261
    assert len(completion.server_tool_calls) == 15
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == completion.text
    assert completion.citations


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name",
    [
        "test_fixed_version_tool_chain_regression",
        "test_fixed_version_tool_chain_with_thinking_display_regression",
    ],
)
async def test_streamed_tool_chain_runs_through_the_agent_loop(name: str) -> None:
    fixed_version = tool(
        name="fixed_version",
        description="Return a fixed test version string",
        parameters={"properties": {}, "type": "object"},
        execute=lambda args: "0.32a0",
    )
    prompt = cassette(name)[0].request_json["messages"][0]["content"][0]["text"]
    settings = settings_of(name, "thinking", "max_tokens", "temperature")
    async with replayed(name) as (server, model):
        agent = Agent(model, tools=[fixed_version], settings=settings)
        async with agent.run_stream(prompt) as stream:
            events = [e async for e in stream]
        result = stream.result
    assert_requests_match(server, name)
    starts = [e for e in events if isinstance(e, ToolCallDelta) and e.name]
    assert [e.name for e in starts] == ["fixed_version"]
    assert [t.name for t in result.trace] == ["fixed_version"] and result.trace[0].arguments == "{}"
    assert result.text.startswith("The version is **0.32a0**")
    assert result.usage.requests == 2
    if "thinking" in settings:
        first = result.new_messages[1]
        assert isinstance(first, AssistantMessage)
        assert isinstance(first.parts[0], ReasoningBlock) and first.parts[0].text.startswith(
            "The user wants me to"
        )
        assert result.usage.reasoning_tokens == 53


def streamed_responses() -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for path in iter_recordings("anthropic"):
        for index, interaction in enumerate(load_cassette(path)):
            if "event-stream" in interaction.headers.get("content-type", ""):
                out.append((path.stem, index))
    return out


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "index"), streamed_responses())
async def test_a_stream_gives_what_complete_gives_for_the_same_response(
    name: str, index: int
) -> None:
    interaction = cassette(name)[index]
    reply = Reply(200, interaction.body, interaction.headers)
    with ReplayServer([reply, reply]) as server:
        # The SDK's own stream helper accumulates the message; complete() then parses that body.
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url)
        async with client, client.messages.stream(max_tokens=1, messages=[], model="m") as stream:
            message = await stream.get_final_message()
        server.replies.append(
            Reply.of_json(200, message.model_dump(mode="json", exclude_unset=True))
        )
        async with AnthropicModel(
            "m", api_key="k", base_url=server.base_url, max_continuations=0
        ) as model:
            _, streamed = await collect(model.stream_complete("hi"))
            completed = await model.complete("hi")
    assert without_raw(streamed) == without_raw(completed)
    assert streamed.message.parts


def test_every_recording_is_covered() -> None:
    names = {p.stem for p in iter_recordings("anthropic")}
    tested = {
        "test_anthropic_tool_with_thinking",
        "test_multiple_parallel_tool_calls",
        "test_anthropic_model_thinking_part_redacted",
        "test_anthropic_web_search_tool",
        "test_pause_turn_web_search_vcr",
        "test_anthropic_model_thinking_part_stream",
        "test_anthropic_model_web_search_tool_stream",
        "test_pause_turn_web_search_streaming_vcr",
        "test_fixed_version_tool_chain_regression",
        "test_fixed_version_tool_chain_with_thinking_display_regression",
    }
    assert names == tested


# --- the request mapping -------------------------------------------------------------------------

MINIMAL = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 3, "output_tokens": 1},
}


@asynccontextmanager
async def canned(
    count: int = 1, **options: Any
) -> AsyncIterator[tuple[ReplayServer, AnthropicModel]]:
    with ReplayServer([Reply.of_json(200, MINIMAL)] * count) as server:
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=server.base_url, **options
        ) as model:
            yield server, model


def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, None),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("weather", None, {"type": "tool", "name": "weather"}),
        ({"type": "any", "custom": 1}, None, {"type": "any", "custom": 1}),
    ],
)
async def test_tool_choice_mapping(
    choice: Any, parallel: bool | None, wire: dict[str, Any] | None
) -> None:
    async with canned() as (server, model):
        await model.complete(
            "hi", tools=[weather], tool_choice=choice, settings={"parallel_tool_calls": parallel}
        )
    body = server.received[0].json
    assert body.get("tool_choice") == wire
    assert body["tools"] == [
        {
            "name": "weather",
            "description": "The weather in a city.",
            "input_schema": weather_schema(),
        }
    ]


def weather_schema() -> dict[str, Any]:
    return tool(weather).definition("anthropic").parameters


@pytest.mark.anyio
@pytest.mark.parametrize("choice", ["required", "weather", {"type": "any"}])
@pytest.mark.parametrize("thinking_type", ["enabled", "adaptive"])
async def test_forced_tool_use_with_thinking_is_refused_before_any_request(
    choice: Any, thinking_type: str
) -> None:
    thinking = {"type": thinking_type, "budget_tokens": 1024}
    async with canned(thinking=thinking) as (server, model):
        with pytest.raises(UnsupportedError, match="forced tool use"):
            await model.complete("hi", tools=[weather], tool_choice=choice)
        with pytest.raises(UnsupportedError):
            [e async for e in model.stream_complete("hi", tools=[weather], tool_choice=choice)]
        # Auto is fine with thinking on.
        await model.complete("hi", tools=[weather])
    assert len(server.received) == 1 and server.received[0].json["thinking"] == thinking


@pytest.mark.anyio
async def test_settings_map_to_the_body_and_unknown_options_pass_through() -> None:
    async with canned(2, max_tokens=1000, metadata={"user_id": "u1"}) as (server, model):
        await model.complete(
            history=[SystemMessage("Be brief."), SystemMessage("Be kind."), UserMessage.of("hi")],
            settings={"temperature": 0.2, "top_p": 0.9, "stop": ["END"], "top_k": 5, "timeout": 30},
        )
        await model.complete("again", settings={"max_tokens": 77, "metadata": {"user_id": "u2"}})
    first, second = (r.json for r in server.received)
    assert first == {
        "model": "claude-test",
        "max_tokens": 1000,
        "stream": False,
        "system": "Be brief.\n\nBe kind.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "top_k": 5,
        "metadata": {"user_id": "u1"},
    }
    assert second["max_tokens"] == 77 and second["metadata"] == {"user_id": "u2"}
    assert "tools" not in second and "tool_choice" not in second


@pytest.mark.anyio
async def test_max_tokens_defaults_and_seed_is_refused() -> None:
    async with canned() as (server, model):
        with pytest.raises(UnsupportedError, match="seed"):
            await model.complete("hi", settings={"seed": 1})
        await model.complete("hi")
    assert server.received[0].json["max_tokens"] == DEFAULT_MAX_TOKENS


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


@pytest.mark.anyio
async def test_images_and_documents_in_user_turns() -> None:
    message = UserMessage(
        [
            TextPart("Look"),
            ImagePart(data=PNG, mime_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg", mime_type="image/jpeg"),
            FilePart(data=b"%PDF-1.4", filename="report.pdf"),
            FilePart(url="https://example.com/paper.pdf"),
            FilePart(data=b"plain words", mime_type="text/plain"),
        ]
    )
    async with canned() as (server, model):
        await model.complete(history=[message])
    (sent,) = server.received[0].json["messages"]
    assert sent["content"] == [
        {"type": "text", "text": "Look"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": "iVBORw0KGgoAAAAAAAAAAA==",
            },
        },
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="},
            "title": "report.pdf",
        },
        {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}},
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "plain words"},
        },
    ]


@pytest.mark.anyio
async def test_audio_and_unknown_documents_are_refused() -> None:
    from toolwire.results import AudioPart

    async with canned() as (server, model):
        with pytest.raises(UnsupportedError, match="audio"):
            await model.complete(history=[UserMessage([AudioPart(b"RIFF")])])
        with pytest.raises(UnsupportedError, match="zip"):
            await model.complete(
                history=[UserMessage([FilePart(data=b"PK", mime_type="application/zip")])]
            )
    assert server.received == []


@pytest.mark.anyio
async def test_a_history_with_tool_calls_declares_them_when_the_request_offers_no_tools() -> None:
    # The Messages API refuses tool_use/tool_result blocks in a request without `tools`
    # (e.g. after a handoff to an agent that has none): the called tools are declared, none
    # callable; a request that offers tools sends only those.
    history = [
        UserMessage.of("weather?"),
        AssistantMessage(
            parts=[
                ToolCallBlock(id="toolu_a", name="city", arguments="{}"),
                ToolCallBlock(id="toolu_b", name="weather", arguments="{}"),
                ToolCallBlock(id="toolu_c", name="city", arguments="{}"),
            ],
            provider="anthropic",
        ),
        *(ToolResultMessage(f"toolu_{x}", "t", [TextPart("ok")]) for x in "abc"),
    ]

    @tool
    def other() -> str:
        """Another tool."""
        return ""

    async with canned(2) as (server, model):
        await model.complete(history=history)
        await model.complete(history=history, tools=[other])
    bare, offered = (received.json for received in server.received)
    assert [t["name"] for t in bare["tools"]] == ["city", "weather"]
    assert bare["tool_choice"] == {"type": "none"}
    assert [t["name"] for t in offered["tools"]] == ["other"]
    assert offered.get("tool_choice") != {"type": "none"}


@pytest.mark.anyio
async def test_tool_results_carry_images_and_errors() -> None:
    call = AssistantMessage(
        parts=[
            ToolCallBlock(id="toolu_a", name="shot", arguments='{"page": 1}'),
            ToolCallBlock(id="toolu_b", name="shot", arguments='{"page": 2}'),
        ],
        provider="anthropic",
    )
    results = [
        ToolResultMessage("toolu_a", "shot", [TextPart("page 1"), ImagePart(data=PNG)]),
        ToolResultMessage("toolu_b", "shot", [TextPart("no such page")], is_error=True),
    ]
    async with canned() as (server, model):
        await model.complete(
            history=[UserMessage.of("shoot"), call, *results, UserMessage.of("and?")]
        )
    messages = server.received[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_a",
        "name": "shot",
        "input": {"page": 1},
    }
    # Results first, then the user's words, in one user turn.
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_a",
            "content": [
                {"type": "text", "text": "page 1"},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": "iVBORw0KGgoAAAAAAAAAAA==",
                    },
                },
            ],
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_b",
            "content": "no such page",
            "is_error": True,
        },
        {"type": "text", "text": "and?"},
    ]


@pytest.mark.anyio
async def test_history_from_another_provider_follows_the_drop_rule() -> None:
    other = AssistantMessage(
        parts=[
            ReasoningBlock("I should look it up", provider_state={"encrypted_content": "gAAA"}),
            ServerToolCallBlock(
                id="ws_1", name="web_search", arguments={"q": "x"}, provider_state={"raw": {"a": 1}}
            ),
            ServerToolResultBlock(
                call_id="ws_1", name="web_search", content=[], provider_state={"raw": {"b": 2}}
            ),
            TextBlock(
                "Paris, says a source.", citations=[Citation(url="https://a.example", title="A")]
            ),
            ToolCallBlock(
                id="call_9", name="weather", arguments='{"city": "Paris"}', provider_state={"x": 1}
            ),
        ],
        provider="openai",
        model="gpt-5",
    )
    history = [
        UserMessage.of("weather in the capital of France?"),
        other,
        ToolResultMessage("call_9", "weather", [TextPart("sunny")]),
    ]
    async with canned() as (server, model):
        await model.complete(history=history, tools=[weather])
    assert server.received[0].json["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Paris, says a source."},
                {"type": "tool_use", "id": "call_9", "name": "weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_9", "content": "sunny"}],
        },
    ]


@pytest.mark.anyio
async def test_an_assistant_turn_with_nothing_to_send_is_left_out() -> None:
    only_reasoning = AssistantMessage(parts=[ReasoningBlock("hmm")], provider="google")
    async with canned() as (server, model):
        await model.complete("go on", history=[UserMessage.of("hi"), only_reasoning])
    assert server.received[0].json["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "go on"}],
        }
    ]


def test_the_recorded_bodies_need_no_normalising_beyond_defaults() -> None:
    # The normaliser only touches the two API defaults; a changed thinking signature still differs.
    name = "test_anthropic_tool_with_thinking"
    second = cassette(name)[1].request_json
    changed = copy.deepcopy(second)
    changed["messages"][1]["content"][0]["signature"] = "forged"
    assert normalised(changed) != normalised(second)
    assert json.dumps(normalised(second)) != json.dumps(second)  # is_error false was dropped


def test_importing_the_adapter_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolwire, toolwire.models.anthropic; "
        "assert 'anthropic' not in sys.modules, 'the SDK was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.anyio
async def test_a_conversation_moves_to_openai_and_back() -> None:
    pytest.importorskip("openai")
    from toolwire.models.openai_chat import OpenAIChatModel

    name = "test_anthropic_web_search_tool"
    settings = settings_of(name, "thinking", "tools")
    question = "What is the weather in San Francisco today?"
    async with replayed(name) as (_, claude):
        first = await claude.complete(question, settings=settings)
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Mild, then."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }
    history = [UserMessage.of(question), first.message]
    with ReplayServer([Reply.of_json(200, answer)]) as server:
        gpt = OpenAIChatModel("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        try:
            second = await gpt.complete("So, a jacket?", history=history)
        finally:
            await gpt.aclose()
    sent_to_openai = server.received[0].json
    assistant = sent_to_openai["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"] == first.text
    # No thinking, no signature, no server tool blocks, no encrypted search results.
    text = json.dumps(sent_to_openai)
    for secret in ("signature", "srvtoolu_", "encrypted_content", "encrypted_index"):
        assert secret not in text

    history += [UserMessage.of("So, a jacket?"), second.message]
    async with canned() as (server, claude):
        await claude.complete("Thanks!", history=history, settings=settings)
    messages = uncached(server.received[0].json["messages"])
    # Anthropic's own turn goes back whole; OpenAI's turn as its text.
    assert messages[1]["content"] == cassette(name)[1].request_json["messages"][1]["content"]
    assert messages[2:] == [
        {"role": "user", "content": [{"type": "text", "text": "So, a jacket?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Mild, then."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
    ]


@pytest.mark.anyio
async def test_call_ids_other_providers_wrote_are_made_acceptable_and_still_pair() -> None:
    # Kimi (through OpenRouter, say) writes ids Anthropic refuses: `^[a-zA-Z0-9_-]+$` only.
    other = AssistantMessage(
        parts=[
            ToolCallBlock(id="functions.weather:0", name="weather", arguments='{"city": "A"}'),
            ToolCallBlock(id="functions.weather:1", name="weather", arguments='{"city": "B"}'),
            ToolCallBlock(id="call_ok-1", name="weather", arguments='{"city": "C"}'),
        ],
        provider="openrouter",
    )
    history = [
        UserMessage.of("weather?"),
        other,
        ToolResultMessage("functions.weather:0", "weather", [TextPart("sunny")]),
        ToolResultMessage("functions.weather:1", "weather", [TextPart("rain")]),
        ToolResultMessage("call_ok-1", "weather", [TextPart("snow")]),
    ]
    async with canned() as (server, model):
        await model.complete(history=history, tools=[weather])
    _, calls, results = server.received[0].json["messages"]
    call_ids = [b["id"] for b in calls["content"]]
    assert [b["tool_use_id"] for b in results["content"]] == call_ids
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]+", i) for i in call_ids)
    assert len(set(call_ids)) == 3 and call_ids[2] == "call_ok-1"


@pytest.mark.anyio
async def test_tool_images_of_a_type_anthropic_cannot_read_are_described() -> None:
    from toolwire.results import ResourcePart

    call = AssistantMessage([ToolCallBlock("toolu_a", "draw", "{}")], provider="anthropic")
    result = ToolResultMessage(
        "toolu_a",
        "draw",
        [
            ImagePart(data=b"<svg/>", mime_type="image/svg+xml"),
            ResourcePart("mem://icon", mime_type="image/x-icon", blob=b"\x00\x00\x01\x00"),
            ImagePart(data=PNG, mime_type="image/png"),
        ],
    )
    async with canned() as (server, model):
        await model.complete(history=[UserMessage.of("draw"), call, result])
    (block,) = server.received[0].json["messages"][2]["content"]
    assert block["content"] == [
        {"type": "text", "text": "[image image/svg+xml]"},
        {"type": "text", "text": "[resource mem://icon (image/x-icon)]"},
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": "iVBORw0KGgoAAAAAAAAAAA==",
            },
        },
    ]


@pytest.mark.anyio
async def test_system_messages_anywhere_join_and_blank_ones_are_left_out() -> None:
    history = [
        SystemMessage(""),
        SystemMessage("Be brief."),
        UserMessage.of("hi"),
        AssistantMessage([TextBlock("hello")], provider="anthropic"),
        SystemMessage("  \n"),
        SystemMessage("Answer in French."),
    ]
    async with canned(2) as (server, model):
        await model.complete("again", history=history)
        await model.complete("x", history=[SystemMessage(" ")])
    first, second = (r.json for r in server.received)
    assert first["system"] == "Be brief.\n\nAnswer in French."
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]
    assert "system" not in second
