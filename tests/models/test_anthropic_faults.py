"""The Anthropic adapter against what only the Messages API sends: inconsistent event streams,
paused turns and their continuations, in-stream error kinds, unknown blocks, usage details, and
what toolwire sends back (broken calls, empty results).

What every adapter does with hostile answers (ids, usage, finish reasons, HTTP and connection
errors, cut streams) is the contract suite's: test_contract.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from recordings.replay import ReplayServer, Reply, sse
from toolwire import (
    AssistantMessage,
    ModelResponseError,
    RetryableModelError,
    ToolArgumentsError,
    UserMessage,
)
from toolwire.middleware import is_retryable
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.base import Completion, CompletionDone, StreamEvent, ToolCallDelta


@asynccontextmanager
async def serving(
    *replies: Reply, **options: Any
) -> AsyncIterator[tuple[ReplayServer, AnthropicModel]]:
    with ReplayServer(replies) as server:
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=server.base_url, **options
        ) as model:
            yield server, model


def message(
    content: list[dict[str, Any]], stop: str | None = "end_turn", **extra: Any
) -> dict[str, Any]:
    return {
        "id": "msg_x",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        **extra,
    }


def start(message_id: str = "msg_s") -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }


def tool_start(index: int, call_id: str | None, name: str = "lookup") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": {}}
    if call_id is not None:
        block["id"] = call_id
    return {"type": "content_block_start", "index": index, "content_block": block}


def json_delta(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": text},
    }


def text_start(index: int) -> dict[str, Any]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "text", "text": ""},
    }


def text_delta(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str = "tool_use", output_tokens: int = 20) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def stream_of(events: list[dict[str, Any]]) -> Reply:
    return Reply.of_sse(sse(events, named=[e["type"] for e in events]))


async def streamed(
    model: AnthropicModel, prompt: str = "hi"
) -> tuple[list[StreamEvent], Completion]:
    events = [e async for e in model.stream_complete(prompt)]
    assert isinstance(events[-1], CompletionDone)
    return events, events[-1].completion


# --- broken tool calls ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_malformed_tool_input_in_a_stream_is_kept_for_the_loop_to_answer() -> None:
    broken = '{"city": "Par'
    events = [start(), tool_start(0, "toolu_a"), json_delta(0, broken), stop(0), *end()]
    async with serving(
        stream_of(events), Reply.of_json(200, message([{"type": "text", "text": "ok"}]))
    ) as (server, model):
        _, completion = await streamed(model)
        (call,) = completion.tool_calls
        assert call.arguments == broken
        with pytest.raises(ToolArgumentsError, match="not valid JSON"):
            _ = call.args
        # Sent back, the broken call has an empty input; its error result explains.
        history = [
            UserMessage.of("hi"),
            completion.message,
            call.result(ToolArgumentsError("lookup", [])),
        ]
        await model.complete(history=history)
    assistant = server.received[1].json["messages"][1]
    assert assistant["content"] == [
        {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {}}
    ]


@pytest.mark.anyio
async def test_text_deltas_for_a_tool_block_are_refused() -> None:
    events = [start(), tool_start(0, "toolu_a"), text_delta(0, "oops"), stop(0), *end()]
    async with serving(stream_of(events)) as (_, model):
        with pytest.raises(ModelResponseError, match="text_delta for a tool_use block"):
            await streamed(model)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "events",
    [
        pytest.param([start(), json_delta(3, "{}")], id="delta-for-unopened-block"),
        pytest.param([start(), text_start(0), text_start(0)], id="block-started-twice"),
        pytest.param([start(), stop(0)], id="stop-for-unopened-block"),
        pytest.param([text_start(0)], id="block-before-message-start"),
        pytest.param([start(), text_start(0), *end("end_turn")], id="message-stop-with-open-block"),
        pytest.param(
            [start(), {"type": "content_block_start", "content_block": {"type": "text"}}],
            id="no-index",
        ),
    ],
)
async def test_inconsistent_streams_are_refused(events: list[dict[str, Any]]) -> None:
    async with serving(stream_of(events)) as (_, model):
        with pytest.raises(ModelResponseError):
            await streamed(model)


# --- odd but valid answers -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_unknown_stop_reasons_are_other_and_kept() -> None:
    events = [start(), text_start(0), text_delta(0, "hm"), stop(0), *end("brand_new_reason")]
    whole = Reply.of_json(200, message([{"type": "text", "text": "hm"}], stop="brand_new_reason"))
    async with serving(whole, stream_of(events), Reply.of_json(200, message([], stop=None))) as (
        _,
        model,
    ):
        completed = await model.complete("hi")
        _, streamed_completion = await streamed(model)
        missing = await model.complete("hi")
    for completion in (completed, streamed_completion):
        assert (completion.finish_reason, completion.raw_finish_reason) == (
            "other",
            "brand_new_reason",
        )
        assert completion.text == "hm"
    assert (missing.finish_reason, missing.raw_finish_reason) == ("other", None)


@pytest.mark.anyio
async def test_empty_content_is_an_empty_turn_and_is_not_sent_back() -> None:
    empty = Reply.of_json(200, message([]))
    events = [start(), *end("end_turn")]
    async with serving(empty, stream_of(events), empty) as (server, model):
        completion = await model.complete("hi")
        _, streamed_completion = await streamed(model)
        await model.complete("more", history=[UserMessage.of("hi"), completion.message])
    for done in (completion, streamed_completion):
        assert done.message.parts == [] and done.text == "" and done.tool_calls == []
        assert done.finish_reason == "stop"
    assert [m["role"] for m in server.received[2].json["messages"]] == ["user"]


@pytest.mark.anyio
async def test_usage_maps_cache_reasoning_and_server_tools() -> None:
    usage = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "cache_read_input_tokens": 300,
        "output_tokens": 50,
        "output_tokens_details": {"thinking_tokens": 30},
        "server_tool_use": {
            "web_search_requests": 2,
            "web_fetch_requests": 0,
            "code_execution_requests": 1,
        },
    }
    async with serving(
        Reply.of_json(200, message([{"type": "text", "text": "x"}], usage=usage))
    ) as (_, model):
        completion = await model.complete("hi")
    assert completion.usage.input_tokens == 420
    assert (completion.usage.cache_write_tokens, completion.usage.cache_read_tokens) == (20, 300)
    assert (completion.usage.output_tokens, completion.usage.reasoning_tokens) == (50, 30)
    assert completion.usage.server_tool_requests == {"web_search": 2, "code_execution": 1}


@pytest.mark.anyio
async def test_unknown_blocks_and_events_are_kept_or_ignored() -> None:
    block = {"type": "container_upload", "file_id": "file_1"}
    events = [
        start(),
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "x": 1}},
        stop(0),
        {"type": "ping"},
        {"type": "brand_new_event"},
        *end("end_turn"),
    ]
    async with serving(
        Reply.of_json(200, message([block])), stream_of(events), Reply.of_json(200, message([]))
    ) as (
        server,
        model,
    ):
        completed = await model.complete("hi")
        _, streamed_completion = await streamed(model)
        await model.complete("more", history=[UserMessage.of("hi"), completed.message])
    assert completed.message.parts == streamed_completion.message.parts
    (part,) = completed.message.parts
    assert part.kind == "server_tool_result" and part.provider_state == {"raw": block}
    assert server.received[2].json["messages"][1]["content"] == [block]


@pytest.mark.anyio
async def test_a_paused_turn_is_continued_at_most_max_continuations_times() -> None:
    paused = Reply.of_json(200, message([{"type": "text", "text": "working"}], stop="pause_turn"))
    async with serving(paused, paused, paused, max_continuations=2) as (server, model):
        completion = await model.complete("hi")
    assert len(server.received) == 3
    assert completion.finish_reason == "pause" and completion.usage.requests == 3
    assert completion.text == "working" * 3
    # Each continuation sends everything produced so far as the last assistant turn.
    last = server.received[2].json["messages"][-1]
    assert last == {"role": "assistant", "content": [{"type": "text", "text": "working"}] * 2}


@pytest.mark.anyio
async def test_a_continued_stream_shifts_tool_call_indexes() -> None:
    first = [
        start("msg_1"),
        tool_start(0, "toolu_a"),
        json_delta(0, "{}"),
        stop(0),
        *end("pause_turn"),
    ]
    second = [
        start("msg_2"),
        tool_start(0, "toolu_b"),
        json_delta(0, "{}"),
        stop(0),
        *end("tool_use"),
    ]
    async with serving(stream_of(first), stream_of(second)) as (_, model):
        seen, completion = await streamed(model)
    starts = [(e.index, e.id) for e in seen if isinstance(e, ToolCallDelta) and e.id]
    assert starts == [(0, "toolu_a"), (1, "toolu_b")]
    assert [c.id for c in completion.tool_calls] == ["toolu_a", "toolu_b"]
    assert completion.message.id == "msg_2" and completion.usage.requests == 2


# --- cut streams and in-stream errors -------------------------------------------------------------


@pytest.mark.anyio
async def test_a_stream_without_message_stop_raises() -> None:
    events = [start(), text_start(0), text_delta(0, "done"), stop(0), end("end_turn")[0]]
    async with serving(stream_of(events)) as (_, model):
        with pytest.raises(ModelResponseError, match="incomplete"):
            await streamed(model)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("kind", "status"),
    [("overloaded_error", 529), ("api_error", 500), ("rate_limit_error", 429)],
)
async def test_retryable_in_stream_errors(kind: str, status: int) -> None:
    error = {"type": "error", "error": {"type": kind, "message": "try later"}}
    async with serving(stream_of([start(), text_start(0), text_delta(0, "par"), error])) as (
        _,
        model,
    ):
        with pytest.raises(RetryableModelError) as caught:
            await streamed(model)
    assert caught.value.status_code == status and "try later" in str(caught.value)
    assert is_retryable(caught.value)[0]


@pytest.mark.anyio
async def test_other_in_stream_errors_are_response_errors() -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad thing"}}
    async with serving(stream_of([start(), error])) as (_, model):
        with pytest.raises(ModelResponseError, match=r"invalid_request_error.*bad thing"):
            await streamed(model)


# --- the turn ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_assistant_turn_names_its_provider() -> None:
    async with serving(Reply.of_json(200, message([{"type": "text", "text": "x"}]))) as (_, model):
        completion = await model.complete("hi")
    assert isinstance(completion.message, AssistantMessage)
    assert (completion.message.provider, completion.message.model, completion.message.id) == (
        "anthropic",
        "claude-test",
        "msg_x",
    )
    assert json.loads(json.dumps(completion.raw)) == completion.raw


# --- continuations, empty results ------------------------------------------------------------------


def text_turn(message_id: str, text: str, reason: str) -> Reply:
    return stream_of([start(message_id), text_start(0), text_delta(0, text), stop(0), *end(reason)])


@pytest.mark.anyio
async def test_a_stream_continued_twice_sends_the_paused_content_once() -> None:
    replies = [
        text_turn("msg_1", "one", "pause_turn"),
        text_turn("msg_2", "two", "pause_turn"),
        text_turn("msg_3", "three", "end_turn"),
    ]
    async with serving(*replies) as (server, model):
        _, completion = await streamed(model)
    assert completion.text == "onetwothree" and completion.usage.requests == 3
    # Like `complete`: the original messages, then everything produced so far as one turn.
    sent = [r.json["messages"] for r in server.received]
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert sent[1] == [user, {"role": "assistant", "content": [{"type": "text", "text": "one"}]}]
    assert sent[2] == [
        user,
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
    ]


@pytest.mark.anyio
async def test_empty_and_error_tool_results_are_never_sent_empty() -> None:
    from toolwire import TextBlock, TextPart, ToolCallBlock, ToolResultMessage

    calls = AssistantMessage(
        [
            TextBlock("\n\n"),
            ToolCallBlock("toolu_a", "f", "{}"),
            ToolCallBlock("toolu_b", "f", "{}"),
        ],
        provider="anthropic",
    )
    history = [
        UserMessage.of("go"),
        calls,
        ToolResultMessage("toolu_a", "f", [TextPart("")]),
        ToolResultMessage("toolu_b", "f", [TextPart(" "), TextPart("")], is_error=True),
        UserMessage([TextPart("and?"), TextPart("")]),
    ]
    async with serving(Reply.of_json(200, message([{"type": "text", "text": "ok"}]))) as (
        server,
        model,
    ):
        await model.complete(history=history)
    sent = server.received[0].json["messages"]
    assert [b["type"] for b in sent[1]["content"]] == ["tool_use", "tool_use"]
    results = sent[2]["content"]
    # Anthropic refuses empty text blocks, and an error result without content.
    assert results[0] == {"type": "tool_result", "tool_use_id": "toolu_a"}
    assert results[1]["is_error"] is True and results[1]["content"].strip()
    assert results[2:] == [{"type": "text", "text": "and?"}]
