"""The Responses adapter through a local server and the real `openai` SDK: the answers only this
API sends (failed responses, unknown items and events, reasoning, refusals, request ids) and the
request mapping (tool choice, settings, state, foreign history).

What every adapter does with hostile answers (ids, usage, finish reasons, HTTP and connection
errors, cut streams) is the contract suite's: test_contract.py."""

from __future__ import annotations

from typing import Any

import pytest
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, tool
from toolwire.errors import (
    ModelStreamError,
    RetryableModelError,
    UnsupportedError,
)
from toolwire.messages import (
    AssistantMessage,
    Citation,
    FilePart,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models import model as resolve
from toolwire.models.base import ModelRequest, ReasoningDelta, TextDelta
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.results import AudioPart, ImagePart, TextPart

pytestmark = pytest.mark.anyio


def connect(
    server: ReplayServer | str, name: str = "gpt-4o", **options: Any
) -> OpenAIResponsesModel:
    root = server if isinstance(server, str) else server.base_url
    return closing(OpenAIResponsesModel(name, api_key="test-key", base_url=root + "/v1", **options))


def response(output: list[dict[str, Any]], status: str = "completed", **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "resp_test",
        "object": "response",
        "model": "gpt-test-2026",
        "status": status,
        "output": output,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 2},
        },
        "error": None,
        "incomplete_details": None,
    }
    body.update(top)
    return body


def message(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(
    name: str | None, arguments: str, call_id: str | None = "call_1", item_id: str = "fc_1"
) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function_call", "id": item_id, "arguments": arguments}
    if name is not None:
        item["name"] = name
    if call_id is not None:
        item["call_id"] = call_id
    return item


def events(*payloads: dict[str, Any]) -> Reply:
    return Reply.of_sse(sse(list(payloads), named=[p["type"] for p in payloads]))


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": response([], status="in_progress")}


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "output_index": index,
        "content_index": 0,
        "delta": text,
    }


def completed(
    output: list[dict[str, Any]], status: str = "completed", **top: Any
) -> dict[str, Any]:
    kind = "response.completed" if status == "completed" else f"response.{status}"
    return {"type": kind, "response": response(output, status, **top)}


async def stream(model: OpenAIResponsesModel, prompt: str = "go", **kwargs: Any) -> list[Any]:
    return [e async for e in model.stream_complete(prompt, **kwargs)]


# --- streams that go wrong ------------------------------------------------------------------------


async def test_response_failed_and_error_events_raise_stream_errors_with_what_came_before() -> None:
    failed = {
        "type": "response.failed",
        "response": response(
            [], status="failed", error={"code": "server_error", "message": "boom"}
        ),
    }
    error = {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}
    replies = [
        Reply(
            200,
            events(created(), text_delta("par"), failed).body,
            {"content-type": "text/event-stream", "x-request-id": "req_abc"},
        ),
        events(created(), error),
    ]
    with ReplayServer(replies) as server:
        model = connect(server)
        with pytest.raises(ModelStreamError) as caught:
            await stream(model)
        first = caught.value
        with pytest.raises(ModelStreamError) as caught:
            await stream(model)
        second = caught.value
    assert (first.code, first.failed_generation, first.request_id) == (
        "server_error",
        "par",
        "req_abc",
    )
    assert "boom" in str(first) and first.provider == "openai"
    assert second.code == "rate_limit_exceeded" and "slow down" in str(second)


async def test_unknown_events_and_items_are_kept_never_a_crash() -> None:
    odd_item = {"type": "hologram_call", "id": "hg_1", "status": "completed", "shape": "cube"}
    reply = events(
        created(),
        {"type": "response.hologram.projecting", "output_index": 0, "sparkle": True},
        {"type": "response.output_item.done", "output_index": 0, "item": odd_item},
        {"type": "response.output_item.added", "output_index": 1, "item": message("")},
        text_delta("fine", 1),
        completed([odd_item, message("fine")]),
    )
    with ReplayServer([reply, Reply.of_json(200, response([odd_item, message("fine")]))]) as server:
        model = connect(server)
        streamed = (await stream(model))[-1].completion
        whole = await model.complete("go")
    for completion in (streamed, whole):
        odd = completion.message.parts[0]
        assert isinstance(odd, ServerToolCallBlock) and odd.name == "hologram"
        assert odd.provider_state == {"item": odd_item}
        assert completion.text == "fine"
        # Replayed verbatim to the same API.
        sent = model.wire_input([UserMessage.of("go"), completion.message])
        assert sent[1] == odd_item
    assert any(e["type"] == "response.hologram.projecting" for e in streamed.raw)


async def test_streamed_reasoning_reads_as_the_turn_does() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_s",
        "summary": [
            {"type": "summary_text", "text": "First."},
            {"type": "summary_text", "text": "Second."},
        ],
        "encrypted_content": "enc",
    }
    reply = events(
        created(),
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "summary": []}},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "First."},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 1},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Second."},
        completed([item, message("ok")]),
    )
    with ReplayServer([reply]) as server:
        got = await stream(connect(server, "o4-mini"))
    completion = got[-1].completion
    streamed = "".join(e.text for e in got if isinstance(e, ReasoningDelta))
    assert streamed == completion.reasoning == "First.\n\nSecond."
    block = completion.message.parts[0]
    assert isinstance(block, ReasoningBlock) and block.provider_state == {"item": item}
    assert server.received[0].json["include"] == ["reasoning.encrypted_content"]


async def test_a_terminal_event_without_output_uses_the_finished_items() -> None:
    reply = events(
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": call("f", "", "c9", "fc_9"),
        },
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"},
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": call("f", "{}", "c9", "fc_9"),
        },
        completed([]),
    )
    with ReplayServer([reply]) as server:
        result = await stream(connect(server))
    completion = result[-1].completion
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [("c9", "f", "{}")]
    assert completion.finish_reason == "tool_calls"


# --- answers that go wrong ------------------------------------------------------------------------


async def test_a_failed_response_is_a_stream_error_with_its_code() -> None:
    failed = response([], status="failed", error={"code": "bad", "message": "no"})
    with (
        ReplayServer([Reply.of_json(200, failed)]) as server,
        pytest.raises(ModelStreamError, match="no") as caught,
    ):
        await connect(server).complete("x")
    assert caught.value.code == "bad"


async def test_refusals_are_surfaced_as_such() -> None:
    refusal = {
        "type": "message",
        "id": "msg_r",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    reply = events(
        created(),
        {
            "type": "response.refusal.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": "I can't help with that.",
        },
        completed([refusal]),
    )
    with ReplayServer([reply]) as server:
        model = connect(server)
        got = await stream(model)
    completion = got[-1].completion
    (block,) = completion.message.parts
    assert isinstance(block, TextBlock) and block.provider_state == {"id": "msg_r", "refusal": True}
    assert got[0] == TextDelta("I can't help with that.")
    sent = model.wire_input([UserMessage.of("go"), completion.message])[1]
    assert sent["content"] == [{"type": "refusal", "refusal": "I can't help with that."}]


async def test_usage_and_request_ids_are_kept() -> None:
    reply = Reply.of_json(200, response([message("hi")]), {"x-request-id": "req_42"})
    with ReplayServer([reply]) as server:
        completion = await connect(server).complete("x")
    usage = completion.usage
    assert (
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_read_tokens,
        usage.reasoning_tokens,
    ) == (10, 5, 4, 2)
    assert completion.message.provider_state == {"request_id": "req_42"}


# --- HTTP errors ---------------------------------------------------------------------------------


async def test_http_errors_keep_the_request_id() -> None:
    limited = Reply.of_json(
        429,
        {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
        {"retry-after": "7", "x-request-id": "req_429"},
    )
    with ReplayServer([limited]) as server, pytest.raises(RetryableModelError) as caught:
        await connect(server).complete("x")
    assert (caught.value.request_id, caught.value.retry_after) == ("req_429", 7.0)


# --- the request ----------------------------------------------------------------------------------


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


@tool(strict=False)
def loose(query: str) -> str:
    """Loosely look something up."""
    return query


def body_of(model: OpenAIResponsesModel, prompt: str = "go", **kwargs: Any) -> dict[str, Any]:
    request = ModelRequest.build(prompt, **kwargs)
    return model.wire_request(model.prepare(request))


def offline(name: str = "gpt-4o", **options: Any) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(name, api_key="sk-not-used", **options)


async def test_defaults_store_nothing_and_ask_reasoning_models_for_encrypted_reasoning() -> None:
    plain = body_of(offline("gpt-4o"))
    assert plain["store"] is False and "include" not in plain
    thinking = body_of(offline("gpt-5-mini"))
    assert thinking["store"] is False and thinking["include"] == ["reasoning.encrypted_content"]
    asked = body_of(offline("my-deployment"), settings={"reasoning": {"effort": "low"}})
    assert asked["include"] == ["reasoning.encrypted_content"]
    assert asked["reasoning"] == {"effort": "low"}
    off = body_of(offline("o4-mini", encrypted_reasoning=False))
    assert "include" not in off
    merged = body_of(offline("gpt-5"), settings={"include": ["web_search_call.action.sources"]})
    assert merged["include"] == ["web_search_call.action.sources", "reasoning.encrypted_content"]


async def test_tools_state_strictness_and_tool_choice_maps() -> None:
    model = offline()
    body = body_of(model, tools=[lookup, loose], settings={"parallel_tool_calls": False})
    assert [(t["name"], t["strict"]) for t in body["tools"]] == [("lookup", True), ("loose", False)]
    assert body["tools"][0]["description"] == "Look something up."
    assert body["tool_choice"] == "auto" and body["parallel_tool_calls"] is False
    assert body_of(model, tools=[lookup], tool_choice="required")["tool_choice"] == "required"
    assert body_of(model, tools=[lookup], tool_choice="lookup")["tool_choice"] == {
        "type": "function",
        "name": "lookup",
    }
    raw = {"type": "allowed_tools", "mode": "required", "tools": [{"type": "web_search"}]}
    request = ModelRequest.build("go", tools=[lookup], tool_choice=raw)
    request.native_tools = [{"type": "web_search"}]
    body = model.wire_request(model.prepare(request))
    assert body["tool_choice"] == raw and body["tools"][1] == {"type": "web_search"}
    request.tool_choice = "web_search"
    assert model.wire_request(model.prepare(request))["tool_choice"] == {"type": "web_search"}
    with pytest.raises(UnsupportedError, match="names no tool"):
        body_of(model, tools=[lookup], tool_choice="nonexistent")
    with pytest.raises(UnsupportedError, match="no tools"):
        body_of(model, tool_choice="required")


async def test_settings_map_and_unsupported_ones_raise() -> None:
    model = offline()
    body = body_of(
        model, settings={"max_tokens": 99, "temperature": 0.2, "top_p": 0.9, "truncation": "auto"}
    )
    assert (body["max_output_tokens"], body["temperature"], body["top_p"]) == (99, 0.2, 0.9)
    assert body["truncation"] == "auto"
    with pytest.raises(UnsupportedError, match="stop"):
        body_of(model, settings={"stop": ["x"]})
    with pytest.raises(UnsupportedError, match="seed"):
        body_of(model, settings={"seed": 1})


async def test_user_parts_tool_results_and_instructions() -> None:
    model = offline()
    history: list[Message] = [
        SystemMessage("Be brief."),
        UserMessage(
            [
                TextPart("Look:"),
                ImagePart(data=b"\x89PNG", mime_type="image/png"),
                FilePart(data=b"%PDF", filename="a.pdf"),
                FilePart(url="https://x.test/b.pdf"),
            ]
        ),
        AssistantMessage([ToolCallBlock("c1", "lookup", "{}")], provider="openai", api="responses"),
        ToolResultMessage(
            "c1", "lookup", [TextPart("bad"), ImagePart(url="https://x.test/i.png")], is_error=True
        ),
        SystemMessage("Still brief."),
    ]
    body = model.wire_request(model.prepare(ModelRequest.build(None, history=history)))
    assert body["instructions"] == "Be brief.\n\nStill brief."
    parts = body["input"][0]["content"]
    assert [p["type"] for p in parts] == ["input_text", "input_image", "input_file", "input_file"]
    assert parts[1]["image_url"].startswith("data:image/png;base64,")
    assert parts[2]["filename"] == "a.pdf" and parts[3] == {
        "type": "input_file",
        "file_url": "https://x.test/b.pdf",
    }
    output = body["input"][2]
    assert output["output"][0]["type"] == "input_text"
    assert output["output"][0]["text"].startswith("Error: bad")
    assert output["output"][1]["image_url"] == "https://x.test/i.png"
    with pytest.raises(UnsupportedError, match="audio"):
        model.wire_input([UserMessage([AudioPart(data=b"RIFF", mime_type="audio/wav")])])


async def test_foreign_turns_keep_text_and_calls_only() -> None:
    model = offline()
    foreign = AssistantMessage(
        [
            ReasoningBlock("secret", provider_state={"item": {"type": "reasoning", "id": "rs_x"}}),
            TextBlock(
                "Hi", citations=[Citation(url="https://a.test")], provider_state={"id": "msg_x"}
            ),
            ServerToolCallBlock(
                "ws_1", "web_search", provider_state={"item": {"type": "web_search_call"}}
            ),
            ServerToolResultBlock("ws_1", "web_search"),
            ToolCallBlock("toolu_1", "lookup", '{"query": "q"}', provider_state={"id": "fc_x"}),
        ],
        provider="openai",
        api="chat-completions",
    )
    sent = model.wire_input([foreign])
    assert sent == [
        {"role": "assistant", "content": "Hi"},
        {
            "type": "function_call",
            "call_id": "toolu_1",
            "name": "lookup",
            "arguments": '{"query": "q"}',
        },
    ]
    azure_turn = AssistantMessage(foreign.parts, provider="azure", api="responses")
    assert model.wire_input([azure_turn]) == sent


async def test_previous_response_id_mode_sends_only_what_came_after() -> None:
    replies = [
        Reply.of_json(200, response([call("lookup", '{"query":"a"}')], id="resp_1")),
        Reply.of_json(200, response([message("done")], id="resp_2")),
    ]
    with ReplayServer(replies) as server:
        model = connect(server, previous_response_id=True)
        result = await Agent(model, tools=[lookup], instructions="Be brief.").run("find a")
    first, second = (r.json for r in server.received)
    assert first["store"] is True and "previous_response_id" not in first
    assert second["previous_response_id"] == "resp_1"
    assert second["instructions"] == "Be brief."
    assert second["input"] == [{"type": "function_call_output", "call_id": "call_1", "output": "a"}]
    assert result.text == "done"
    with pytest.raises(ValueError, match="store"):
        offline(previous_response_id=True, store=False)


async def test_resolved_by_prefix() -> None:
    model = resolve("openai-responses:gpt-5", api_key="sk-x")
    assert isinstance(model, OpenAIResponsesModel)
    assert (model.provider, model.model_name, model.api) == ("openai", "gpt-5", "responses")
    await model.aclose()
