"""The Responses API adapter against every recorded conversation in `openai_responses/`, replayed by
a local server that the real `openai` SDK talks to.

Each test holds the conversation the recording had, then checks the request bodies toolwire sent
against the recorded ones and what it parsed from the recorded answers. Where toolwire's request
differs on purpose from what the recording's client sent, the difference is named in `normalise`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from model_servers import closing

from recordings.replay import Interaction, ReplayServer, Reply, load_cassette
from toolwire import Agent, tool
from toolwire.messages import (
    AssistantMessage,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    UserMessage,
    dump_history,
    load_history,
)
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.results import TextPart, ToolResult
from toolwire.tools import Tool, as_tool

pytestmark = pytest.mark.anyio

DIR = "openai_responses/"


def make_model(server: ReplayServer, name: str, **options: Any) -> OpenAIResponsesModel:
    return closing(
        OpenAIResponsesModel(name, api_key="test-key", base_url=server.base_url + "/v1", **options)
    )


def _schema(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _schema(v) for k, v in node.items() if not (k == "required" and not v)}
        if isinstance(out.get("required"), list):
            out["required"] = sorted(out["required"])
        return out
    if isinstance(node, list):
        return [_schema(v) for v in node]
    return node


def normalise(body: dict[str, Any], *, item_ids: bool = True) -> dict[str, Any]:
    """A request body with what carries no meaning, or differs on purpose, taken out.

    - `store`: toolwire sends `false` by default; these recordings were made with the field unset
      (its own test pins the default).
    - `stream: false` (the default), an empty `instructions`, a `previous_response_id: null`, a `status: null` on a replayed
      call, and an empty assistant message before function calls (the recording client's habits)
      mean nothing; a tool's `description` `""` equals `null`.
    - `item_ids=False` drops function-call item ids: the older recordings' client did not replay
      them, toolwire does (the thinking recording, whose client did, is compared with them).
    - `prompt_cache_key`: toolwire's caching policy adds one to long requests; the recordings
      were made without (tests/models/test_prompt_cache.py pins it).
    """
    body = copy.deepcopy(body)
    body.pop("store", None)
    body.pop("prompt_cache_key", None)
    if body.get("stream") is False:
        del body["stream"]
    if body.get("instructions") == "":
        del body["instructions"]
    if "previous_response_id" in body and body["previous_response_id"] is None:
        del body["previous_response_id"]
    items = []
    for item in body.get("input", []):
        if item.get("role") == "assistant" and item.get("content") == "" and "type" not in item:
            continue
        if item.get("type") == "function_call":
            if item.get("status", "") is None:
                del item["status"]
            if not item_ids:
                item.pop("id", None)
        items.append(item)
    body["input"] = items
    for spec in body.get("tools", []):
        if spec.get("description") == "":
            spec["description"] = None
    if "tools" in body:
        body["tools"] = _schema(body["tools"])
    return body


def assert_requests_match(
    server: ReplayServer, recorded: list[Interaction], *, item_ids: bool = True
) -> None:
    assert server.mismatches == []
    assert len(server.received) == len(recorded)
    for sent, expected in zip(server.received, recorded, strict=True):
        assert normalise(sent.json, item_ids=item_ids) == normalise(
            expected.request_json, item_ids=item_ids
        )


def recorded_tools(interaction: Interaction) -> list[Tool]:
    return [
        as_tool(
            {
                "name": spec["name"],
                "description": spec.get("description") or "",
                "parameters": spec["parameters"],
                "strict": bool(spec.get("strict")),
            }
        )
        for spec in interaction.request_json.get("tools", [])
        if spec["type"] == "function"
    ]


def text_result(text: str) -> ToolResult:
    return ToolResult(content=[TextPart(text)])


async def collect(
    model: OpenAIResponsesModel, request: ModelRequest
) -> tuple[list[Any], Completion]:
    events = [e async for e in model.send_stream(request)]
    done = events[-1]
    assert isinstance(done, CompletionDone)
    assert not any(isinstance(e, CompletionDone) for e in events[:-1])
    return events[:-1], done.completion


def sse_final(raw: bytes) -> dict[str, Any]:
    """The response object of a recorded stream's terminal event (read independently)."""
    final: dict[str, Any] = {}
    for line in raw.decode().splitlines():
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            if event["type"] in ("response.completed", "response.incomplete"):
                final = event["response"]
    return final


# --- function calls ---------------------------------------------------------------------------


async def test_single_call_through_the_agent() -> None:
    cassette = DIR + "test_openai_responses_model_simple_response_with_tool_call.yaml"
    recorded = load_cassette(cassette)
    seen: list[str] = []

    @tool
    def get_capital(country: str) -> str:
        seen.append(country)
        return "Potato City"

    completions: list[Completion] = []
    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(
            make_model(server, "gpt-4o"),
            tools=[get_capital],
            subscribers=[
                lambda e: completions.append(e.completion) if e.type == "model.response" else None
            ],
        )
        result = await agent.run("What is the capital of PotatoLand?")
    assert_requests_match(server, recorded, item_ids=False)
    assert seen == ["PotatoLand"]
    first, last = completions
    call = first.message.tool_calls[0]
    assert (call.id, call.name, call.arguments) == (
        "call_YfwRsW8sUxDKipwyhWTzOXCA",
        "get_capital",
        '{"country":"PotatoLand"}',
    )
    assert call.provider_state == {"id": "fc_04907f5d3de791830068fbaa1b310c81958dc9c508e878c632"}
    # The function call went back with its item id, as the API wants it next to reasoning.
    replayed = server.received[1].json["input"][1]
    assert replayed["id"] == "fc_04907f5d3de791830068fbaa1b310c81958dc9c508e878c632"
    assert (first.finish_reason, first.raw_finish_reason) == ("tool_calls", "completed")
    assert first.message.id == "resp_04907f5d3de791830068fbaa19bb908195a91378279dba0f14"
    assert (first.message.provider, first.message.api) == ("openai", "responses")
    assert first.model == "gpt-4o-2024-08-06"
    assert first.usage == Usage(input_tokens=40, output_tokens=18, requests=1)
    assert last.finish_reason == "stop"
    text = last.message.parts[0]
    assert isinstance(text, TextBlock)
    assert text.provider_state == {"id": "msg_0e9950da9eac6a780068fbaa1c738c819d8bddf998e57232c3"}
    assert result.text == "The capital of PotatoLand is Potato City."
    assert result.usage.input_tokens == 40 + 67 and result.usage.requests == 2


async def test_parallel_calls_turn_by_turn() -> None:
    cassette = DIR + "test_openai_responses_model_retry.yaml"
    recorded = load_cassette(cassette)
    tools = recorded_tools(recorded[0])
    history: list[Message] = [UserMessage.of("What is the location of Londos and London?")]
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model(server, "gpt-4o")
        first = await model.complete(history=history, tools=tools)
        assert [(c.id, c.args) for c in first.tool_calls] == [
            ("call_LWVp74L5HaH2KNvgVz9PJsrj", {"loc_name": "Londos"}),
            ("call_YnRAWeTyxI91m5uNa5bxXwVO", {"loc_name": "London"}),
        ]
        history.append(first.message)
        outputs = [item["output"] for item in recorded[1].request_json["input"][-2:]]
        for call, output in zip(first.tool_calls, outputs, strict=True):
            history.append(call.result(text_result(output)))
        last = await model.complete(history=history, tools=tools)
    assert_requests_match(server, recorded, item_ids=False)
    assert first.finish_reason == "tool_calls"
    assert last.text.startswith('It seems "Londos" might be incorrect')
    assert last.usage == Usage(input_tokens=335, output_tokens=44, requests=1)


async def test_streamed_call_then_streamed_answer() -> None:
    cassette = DIR + "test_openai_responses_stream.yaml"
    recorded = load_cassette(cassette)

    @tool
    def get_capital(country: str) -> str:
        return {"France": "Paris"}[country]

    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(make_model(server, "gpt-4o"), tools=[get_capital])
        async with agent.run_stream("What is the capital of France?") as run:
            events = [e async for e in run]
        result = run.result
    # The recording's client sent the call's item id as its `call_id`; the API's rule (and
    # toolwire's) is the `call_id` the model wrote, so that is what toolwire sent.
    sent = server.received[1].json["input"]
    assert [i.get("call_id") for i in sent[1:]] == ["call_kL0PCQV7M2WMoVX8V8OtYSAL"] * 2
    expected = copy.deepcopy(recorded)
    for item in expected[1].request_json["input"][1:]:
        assert item["call_id"] == "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2"
        item["call_id"] = "call_kL0PCQV7M2WMoVX8V8OtYSAL"
    assert_requests_match(server, expected, item_ids=False)
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(
        index=0, id="call_kL0PCQV7M2WMoVX8V8OtYSAL", name="get_capital"
    )
    assert "".join(c.arguments for c in calls) == '{"country":"France"}'
    assert {c.index for c in calls} == {0}
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == result.text == "The capital of France is Paris."
    assert result.usage == Usage(input_tokens=255 + 278, output_tokens=16 + 9, requests=2)


async def test_a_stream_parses_to_the_same_turn_as_its_final_response() -> None:
    cassette = DIR + "test_openai_responses_stream.yaml"
    recorded = load_cassette(cassette)
    replies = [Reply(i.status, i.body, i.headers) for i in recorded]
    replies += [Reply.of_json(200, sse_final(i.body)) for i in recorded]
    history: list[Message] = [UserMessage.of("What is the capital of France?")]
    tools = recorded_tools(recorded[0])
    with ReplayServer(replies) as server:
        model = make_model(server, "gpt-4o")
        _, streamed_first = await collect(model, ModelRequest.build(history=history, tools=tools))
        follow = [*history, streamed_first.message, streamed_first.tool_calls[0].result("Paris")]
        _, streamed_last = await collect(model, ModelRequest.build(history=follow, tools=tools))
        whole_first = await model.complete(history=history, tools=tools)
        whole_last = await model.complete(history=follow, tools=tools)
    for streamed, whole in ((streamed_first, whole_first), (streamed_last, whole_last)):
        assert streamed.message == whole.message
        assert (streamed.usage, streamed.finish_reason) == (whole.usage, whole.finish_reason)
        assert isinstance(streamed.raw, list)  # every event kept
        assert streamed.raw[0]["type"] == "response.created"


# --- reasoning --------------------------------------------------------------------------------


async def test_encrypted_reasoning_is_replayed_unchanged() -> None:
    cassette = DIR + "test_openai_responses_thinking_with_tool_calls.yaml"
    recorded = load_cassette(cassette)
    first_request = recorded[0].request_json
    tools = recorded_tools(recorded[0])
    history: list[Message] = [
        SystemMessage(first_request["instructions"]),
        UserMessage.of(first_request["input"][0]["content"]),
    ]
    settings = {"reasoning": {"effort": "low", "summary": "detailed"}}
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model(server, "gpt-5")
        first = await model.complete(history=history, tools=tools, settings=settings)
        # Through JSON, as a stored conversation would be.
        history = load_history(dump_history([*history, first.message]))
        history.append(first.tool_calls[0].result("plan updated"))
        last = await model.complete(history=history, tools=tools, settings=settings)
    # Compared with item ids: the reasoning item, its id, summary and encrypted content, and the
    # function call's item id went back exactly as OpenAI sent them.
    assert_requests_match(server, recorded)
    assert server.received[0].json["include"] == ["reasoning.encrypted_content"]
    reasoning = first.message.parts[0]
    assert isinstance(reasoning, ReasoningBlock) and not reasoning.redacted
    assert reasoning.text.startswith("**Creating a structured poem**")
    assert reasoning.text.count("\n\n**") == 4  # five summary parts
    raw_item = recorded[0].response_json["output"][0]
    assert reasoning.provider_state == {"item": raw_item}
    assert first.reasoning == reasoning.text
    assert first.usage == Usage(
        input_tokens=124, output_tokens=1926, reasoning_tokens=1792, requests=1
    )
    assert last.usage.cache_read_tokens == 2048
    assert last.text.startswith("Softly old fountains illumine alleys")


# --- provider-side tools and citations ----------------------------------------------------------


async def test_web_search_items_citations_and_their_replay() -> None:
    cassette = DIR + "test_openai_responses_model_builtin_tools_web_search.yaml"
    recorded = load_cassette(cassette)
    request = ModelRequest.build("Give me the top 3 news in the world today")
    request.native_tools = [{"type": "web_search"}]
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model(server, "gpt-5")
        completion = await model.send(request)
    assert_requests_match(server, recorded)
    output = recorded[0].response_json["output"]
    searches = completion.server_tool_calls
    assert len(searches) == 6
    assert searches[0].name == "web_search"
    assert searches[0].arguments == {
        "query": "top world news September 12, 2025 Reuters",
        "type": "search",
    }
    assert searches[0].provider_state == {"item": output[1]}
    results = [p for p in completion.message.parts if isinstance(p, ServerToolResultBlock)]
    assert [r.call_id for r in results] == [s.id for s in searches]
    assert not any(r.is_error for r in results)
    thoughts = [p for p in completion.message.parts if isinstance(p, ReasoningBlock)]
    assert len(thoughts) == 7 and all(t.redacted and not t.text for t in thoughts)
    assert [c.url for c in completion.citations][1] == (
        "https://apnews.com/article/aad7af5ddfb56b7484fa9db591297c9e?utm_source=openai"
    )
    assert (completion.citations[0].start_index, completion.citations[0].end_index) == (294, 460)
    assert completion.usage == Usage(
        input_tokens=115886,
        output_tokens=1720,
        cache_read_tokens=92160,
        reasoning_tokens=1472,
        requests=1,
        server_tool_requests={"web_search": 6},
    )
    # The next request replays every item in order: reasoning and searches verbatim, then the
    # message by its id with its annotations.
    follow = ModelRequest.build("And in Brazil?", history=[*request.messages, completion.message])
    follow.native_tools = [{"type": "web_search"}]
    sent = model.wire_request(model.prepare(follow))["input"]
    assert sent[0] == {"role": "user", "content": "Give me the top 3 news in the world today"}
    assert sent[1:14] == output[:13]
    message = sent[14]
    assert message["id"] == output[13]["id"] and message["type"] == "message"
    assert message["content"][0]["text"] == output[13]["content"][0]["text"]
    assert message["content"][0]["annotations"] == output[13]["content"][0]["annotations"]
    assert sent[15] == {"role": "user", "content": "And in Brazil?"}


async def test_citations_without_streaming() -> None:
    cassette = DIR + "test_openai_include_raw_annotations_non_streaming.yaml"
    recorded = load_cassette(cassette)
    history: list[Message] = [
        SystemMessage("Use web search and include citations in your answer."),
        UserMessage.of(
            "What is the tallest mountain in Alberta? Provide one sentence with a citation."
        ),
    ]
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model(server, "gpt-5.2")
        answers = []
        for _ in recorded:
            request = ModelRequest.build(history=history)
            request.native_tools = [{"search_context_size": "medium", "type": "web_search"}]
            answers.append(await model.send(request))
    assert_requests_match(server, recorded)
    first = answers[0]
    assert first.text.startswith("The tallest mountain in Alberta is **Mount Columbia**")
    (cite,) = first.citations
    assert cite.url == "https://www.britannica.com/place/Mount-Columbia?utm_source=openai"
    assert cite.title == "Mount Columbia | mountain, Alberta, Canada | Britannica"
    assert (cite.start_index, cite.end_index) == (126, 211)
    assert first.text[126:211].startswith("([britannica.com]")
    (search,) = first.server_tool_calls
    assert search.arguments["queries"] == [
        "tallest mountain in Alberta",
        "Mount Columbia tallest mountain in Alberta elevation",
    ]
    assert first.usage.server_tool_requests == {"web_search": 1}


async def test_citations_and_search_events_while_streaming() -> None:
    cassette = DIR + "test_openai_include_raw_annotations_streaming.yaml"
    recorded = load_cassette(cassette)
    system = SystemMessage("Use web search and include citations in your answer.")
    question = UserMessage.of(
        "What is the tallest mountain in Alberta? Provide one sentence with a citation."
    )
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model(server, "gpt-5.2")
        streamed = []
        for _ in recorded[:2]:
            request = ModelRequest.build(history=[system, question])
            request.native_tools = [{"search_context_size": "medium", "type": "web_search"}]
            streamed.append(await collect(model, request))
        plain = ModelRequest.build("What is 2+2?", history=[SystemMessage("Answer directly.")])
        streamed.append(await collect(model, plain))
    assert_requests_match(server, recorded)
    for (events, completion), interaction in zip(streamed, recorded, strict=True):
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text == completion.text
        final = sse_final(interaction.body)
        assert completion.message.id == final["id"]
        message = next(i for i in final["output"] if i["type"] == "message")
        assert completion.text == message["content"][0]["text"]
        annotations = message["content"][0]["annotations"]
        assert [c.url for c in completion.citations] == [a["url"] for a in annotations]
        kinds = {e["type"] for e in completion.raw}
        if annotations:
            assert "response.output_text.annotation.added" in kinds
            assert "response.web_search_call.searching" in kinds
    first = streamed[0][1]
    assert len(first.server_tool_calls) == 2
    assert first.usage.server_tool_requests == {"web_search": 2}
    assert first.usage.reasoning_tokens == 100
    assert streamed[2][1].text == "2+2 = 4"
    assert not any(isinstance(e, ReasoningDelta) for e in streamed[2][0])


async def test_server_blocks_survive_json_and_go_back_whole() -> None:
    cassette = DIR + "test_openai_include_raw_annotations_non_streaming.yaml"
    recorded = load_cassette(cassette)
    with ReplayServer([Reply(recorded[0].status, recorded[0].body, recorded[0].headers)]) as server:
        model = make_model(server, "gpt-5.2")
        completion = await model.complete("Alberta?")
    history = load_history(dump_history([UserMessage.of("Alberta?"), completion.message]))
    turn = history[1]
    assert isinstance(turn, AssistantMessage) and turn == completion.message
    assert isinstance(turn.parts[0], ServerToolCallBlock)
    sent = model.wire_input(history)
    assert sent[1] == recorded[0].response_json["output"][0]
    assert sent[2]["id"] == recorded[0].response_json["output"][1]["id"]
    assert len(sent) == 3  # the result block went back inside its call's item
    parts = [type(p) for p in turn.parts]
    assert parts == [ServerToolCallBlock, ServerToolResultBlock, TextBlock]
    assert not any(isinstance(p, ToolCallBlock) for p in turn.parts)
