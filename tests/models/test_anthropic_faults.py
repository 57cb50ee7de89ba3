"""The Anthropic adapter against hostile answers: broken streams, odd payloads, HTTP errors."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import httpx2
import pytest

from recordings.replay import ReplayServer, Reply, sse
from toolwire import (
    AssistantMessage,
    ModelConnectionError,
    ModelHTTPError,
    ModelRequestsForbidden,
    ModelResponseError,
    RetryableModelError,
    ToolArgumentsError,
    UserMessage,
)
from toolwire.middleware import is_retryable
from toolwire.models import forbid_model_requests
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.base import Completion, CompletionDone, StreamEvent, TextDelta, ToolCallDelta


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


async def ask(
    model: AnthropicModel, stream: bool, settings: dict[str, Any] | None = None
) -> Completion:
    """One request, streamed or not."""
    if stream:
        events = [e async for e in model.stream_complete("hi", settings=settings)]
        assert isinstance(events[-1], CompletionDone)
        return events[-1].completion
    return await model.complete("hi", settings=settings)


async def streamed(
    model: AnthropicModel, prompt: str = "hi"
) -> tuple[list[StreamEvent], Completion]:
    events = [e async for e in model.stream_complete(prompt)]
    assert isinstance(events[-1], CompletionDone)
    return events, events[-1].completion


# --- broken tool calls ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_parallel_calls_streamed_interleaved_never_mix_arguments() -> None:
    events = [
        start(),
        tool_start(0, "toolu_a"),
        tool_start(1, "toolu_b"),
        json_delta(0, '{"q": '),
        json_delta(1, '{"q": "be'),
        json_delta(0, '"alpha"}'),
        json_delta(1, 'ta"}'),
        stop(1),
        stop(0),
        *end(),
    ]
    async with serving(stream_of(events)) as (_, model):
        seen, completion = await streamed(model)
    assert [(c.id, c.args) for c in completion.tool_calls] == [
        ("toolu_a", {"q": "alpha"}),
        ("toolu_b", {"q": "beta"}),
    ]
    pieces: dict[int, str] = {}
    for event in seen:
        if isinstance(event, ToolCallDelta):
            pieces[event.index] = pieces.get(event.index, "") + event.arguments
    assert pieces == {0: '{"q": "alpha"}', 1: '{"q": "beta"}'}
    assert completion.finish_reason == "tool_calls"


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
async def test_missing_and_duplicate_ids_get_stable_unique_ones() -> None:
    content = [
        {"type": "tool_use", "name": "lookup", "input": {"n": 1}},
        {"type": "tool_use", "id": "toolu_same", "name": "lookup", "input": {"n": 2}},
        {"type": "tool_use", "id": "toolu_same", "name": "lookup", "input": {"n": 3}},
    ]
    events = [
        start("msg_x"),
        tool_start(0, None),
        stop(0),
        tool_start(1, "toolu_same"),
        stop(1),
        tool_start(2, "toolu_same"),
        stop(2),
        *end(),
    ]
    whole = Reply.of_json(200, message(content, stop="tool_use"))
    async with serving(whole, whole, stream_of(events)) as (_, model):
        first = await model.complete("hi")
        again = await model.complete("hi")
        _, streamed_completion = await streamed(model)
    ids = [c.id for c in first.tool_calls]
    assert ids == ["toolu_msg_x_0", "toolu_same", "toolu_same_2"]
    assert [c.id for c in again.tool_calls] == ids
    assert [c.id for c in streamed_completion.tool_calls] == ids


@pytest.mark.anyio
async def test_a_tool_use_without_a_name_is_refused() -> None:
    bad = Reply.of_json(
        200, message([{"type": "tool_use", "id": "toolu_1", "input": {}}], stop="tool_use")
    )
    events = [
        start(),
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t"},
        },
    ]
    async with serving(bad, stream_of(events)) as (_, model):
        with pytest.raises(ModelResponseError, match="without a tool name"):
            await model.complete("hi")
        with pytest.raises(ModelResponseError, match="without a tool name"):
            await streamed(model)


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
@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("refusal", "content_filter"),
    ],
)
async def test_stop_reasons_are_normalised(raw: str, normalised: str) -> None:
    async with serving(Reply.of_json(200, message([{"type": "text", "text": "x"}], stop=raw))) as (
        _,
        model,
    ):
        completion = await model.complete("hi")
    assert (completion.finish_reason, completion.raw_finish_reason) == (normalised, raw)


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
async def test_a_stream_cut_inside_a_tool_call_raises_and_never_completes() -> None:
    events = [
        start(),
        text_start(0),
        text_delta(0, "Let me look."),
        stop(0),
        tool_start(1, "toolu_a"),
        json_delta(1, '{"q": "ha'),
    ]
    async with serving(stream_of(events)) as (_, model):
        seen: list[StreamEvent] = []

        async def consume() -> None:
            async for event in model.stream_complete("hi"):
                seen.append(event)

        with pytest.raises(ModelResponseError, match="before message_stop"):
            await consume()
    assert seen[0] == TextDelta("Let me look.")
    assert not any(isinstance(e, CompletionDone) for e in seen)


@pytest.mark.anyio
async def test_a_stream_without_message_stop_raises() -> None:
    events = [start(), text_start(0), text_delta(0, "done"), stop(0), end("end_turn")[0]]
    async with serving(stream_of(events)) as (_, model):
        with pytest.raises(ModelResponseError, match="incomplete"):
            await streamed(model)


@pytest.mark.anyio
async def test_a_connection_dropped_mid_stream_raises() -> None:
    body = sse([start(), tool_start(0, "toolu_a"), json_delta(0, '{"q": ')])
    with dropping_server(body.encode()) as port:
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=f"http://127.0.0.1:{port}"
        ) as model:
            seen: list[StreamEvent] = []

            async def consume() -> None:
                async for event in model.stream_complete("hi"):
                    seen.append(event)

            with anyio.fail_after(10), pytest.raises(ModelResponseError, match="cut"):
                await consume()
    assert [e.id for e in seen if isinstance(e, ToolCallDelta)] == ["toolu_a", None]


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


@pytest.mark.anyio
async def test_broken_payloads_are_response_errors() -> None:
    replies = [
        Reply(200, b"<html>oops</html>", {"content-type": "text/html"}),
        Reply.of_json(200, {"id": "msg", "content": "not a list"}),
        Reply.of_json(200, ["a", "list"]),
        Reply.of_sse("event: message_start\ndata: {not json\n\n"),
    ]
    async with serving(*replies) as (_, model):
        with pytest.raises(ModelResponseError, match="not JSON"):
            await model.complete("hi")
        with pytest.raises(ModelResponseError, match="content list"):
            await model.complete("hi")
        with pytest.raises(ModelResponseError, match="other than a message"):
            await model.complete("hi")
        with pytest.raises(ModelResponseError, match="not JSON"):
            await streamed(model)


# --- HTTP errors, refused connections, timeouts ----------------------------------------------------


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": text}}


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (404, "not_found_error"),
        (413, "request_too_large"),
    ],
)
async def test_client_errors_are_http_errors_with_the_providers_message(
    status: int, kind: str, stream: bool
) -> None:
    async with serving(Reply.of_json(status, error_body(kind, f"the {kind} message"))) as (
        _,
        model,
    ):
        with pytest.raises(ModelHTTPError) as caught:
            await ask(model, stream)
    error = caught.value
    assert type(error) is ModelHTTPError and not is_retryable(error)[0]
    assert (error.status_code, error.provider, error.message) == (
        status,
        "anthropic",
        f"the {kind} message",
    )
    assert error.body == error_body(kind, f"the {kind} message")


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "headers", "wait"),
    [
        (429, {"retry-after": "7"}, 7.0),
        (429, {"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        (500, {}, None),
        (503, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        (529, {"retry-after": "2"}, 2.0),
    ],
)
async def test_rate_limits_and_server_errors_are_retryable(
    status: int, headers: dict[str, str], wait: float | None, stream: bool
) -> None:
    reply = Reply.of_json(status, error_body("overloaded_error", "busy"), headers)
    async with serving(reply) as (_, model):
        with pytest.raises(RetryableModelError) as caught:
            await ask(model, stream)
    assert caught.value.status_code == status and caught.value.retry_after == wait
    assert caught.value.message == "busy" and is_retryable(caught.value)[0]


@contextmanager
def dropping_server(partial: bytes) -> Iterator[int]:
    """A server that starts a chunked SSE answer, sends `partial`, then drops the connection."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, rest = request.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            while len(rest) < length:
                rest += connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
                + f"{len(partial):x}\r\n".encode()
                + partial
                + b"\r\n"
            )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        thread.join(timeout=10)
        listener.close()


@contextmanager
def closed_port() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield port


@contextmanager
def silent_server() -> Iterator[int]:
    """A listening socket that never answers: requests wait until they time out."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
async def test_connection_refused_is_a_connection_error(stream: bool) -> None:
    with closed_port() as port:
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=f"http://127.0.0.1:{port}"
        ) as model:
            with pytest.raises(ModelConnectionError) as caught:
                await ask(model, stream)
    assert caught.value.provider == "anthropic" and is_retryable(caught.value)[0]


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("where", ["model", "settings"])
async def test_timeouts_are_connection_errors(stream: bool, where: str) -> None:
    with silent_server() as port:
        options: dict[str, Any] = {"timeout": 0.2} if where == "model" else {}
        settings = {"timeout": 0.2} if where == "settings" else None
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=f"http://127.0.0.1:{port}", **options
        ) as model:
            with anyio.fail_after(10), pytest.raises(ModelConnectionError, match="in time"):
                await ask(model, stream, settings)


@pytest.mark.anyio
async def test_forbidden_requests_never_leave_the_process() -> None:
    async with serving(Reply.of_json(200, message([]))) as (server, model):
        with forbid_model_requests():
            with pytest.raises(ModelRequestsForbidden):
                await model.complete("hi")
            with pytest.raises(ModelRequestsForbidden):
                await streamed(model)
    assert server.received == []


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


# --- continuations, early stops, empty results ------------------------------------------------------


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


class _ClosingLog(httpx2.AsyncByteStream):
    """A response body that notes when it is closed."""

    def __init__(self, inner: httpx2.AsyncByteStream, log: list[str]) -> None:
        self.inner, self.log = inner, log

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in self.inner:
            yield piece

    async def aclose(self) -> None:
        self.log.append("closed")
        await self.inner.aclose()


class _LoggingTransport(httpx2.AsyncBaseTransport):
    """The real transport, with every response body's closing noted (public httpx API)."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.log: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self.inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        self.log.append("opened")
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_ClosingLog(response.stream, self.log),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.anyio
async def test_a_consumer_that_stops_early_closes_the_response() -> None:
    import anthropic

    events = [start(), text_start(0), text_delta(0, "a"), text_delta(0, "b"), stop(0), *end()]
    with ReplayServer([stream_of(events)]) as server:
        transport = _LoggingTransport()
        client = anthropic.AsyncAnthropic(
            api_key="k",
            base_url=server.base_url,
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=transport),
        )
        async with AnthropicModel("claude-test", client=client) as model:
            stream = model.stream_complete("hi")
            assert await anext(stream) == TextDelta("a")
            await stream.aclose()
            # Closed by aclose() itself, not later by the garbage collector.
            assert transport.log == ["opened", "closed"]


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


def test_a_model_serves_one_run_sync_after_another() -> None:
    # Each run_sync has its own event loop and closes the model when it ends: the next one
    # must get fresh connections, as the OpenAI adapter does.
    from toolwire import Agent

    reply = Reply.of_json(200, message([{"type": "text", "text": "x"}]))
    with ReplayServer([reply, reply]) as server:
        agent = Agent(AnthropicModel("claude-test", api_key="k", base_url=server.base_url))
        assert agent.run_sync("hi").text == "x"
        assert agent.run_sync("again").text == "x"
    assert len(server.received) == 2
