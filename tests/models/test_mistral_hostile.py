"""The Mistral chat adapter against made-up answers and failures, through a local server and the
real `mistralai` SDK: broken tool calls, odd finish reasons, cut and broken streams, HTTP errors,
unreachable and silent servers, and the request mapping (tool choice, settings, media, results)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, tool
from toolwire.errors import (
    ModelConnectionError,
    ModelHTTPError,
    ModelRequestsForbidden,
    ModelResponseError,
    ModelStreamError,
    RetryableModelError,
    UnsupportedError,
)
from toolwire.messages import (
    AssistantMessage,
    FilePart,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models.base import CompletionDone, ModelSettings, forbid_model_requests
from toolwire.models.mistral import MistralModel
from toolwire.results import AudioPart, ImagePart, TextPart

pytestmark = pytest.mark.anyio

_OPEN: list[MistralModel] = []


def connect(server: ReplayServer | str, **options: Any) -> MistralModel:
    root = server if isinstance(server, str) else server.base_url
    model = MistralModel("mistral-test", api_key="test-key", base_url=root, **options)
    _OPEN.append(model)
    return model


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    while _OPEN:
        await _OPEN.pop().aclose()


def completion_json(message: dict[str, Any], finish: Any = "stop") -> dict[str, Any]:
    return {
        "id": "cmpl-test",
        "object": "chat.completion",
        "model": "mistral-test-2026",
        "created": 1,
        "choices": [
            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def answer(text: str = "ok") -> Reply:
    return Reply.of_json(200, completion_json({"content": text}))


def call(call_id: str | None, name: str, arguments: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        out["id"] = call_id
    return out


def calls_reply(*calls: dict[str, Any], finish: Any = "tool_calls") -> Reply:
    return Reply.of_json(200, completion_json({"content": "", "tool_calls": list(calls)}, finish))


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "cmpl-s",
        "object": "chat.completion.chunk",
        "model": "mistral-test-2026",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


async def stream_events(model: MistralModel, **kwargs: Any) -> list[Any]:
    with anyio.fail_after(20):  # a hang is a failure, not a stuck suite
        return [e async for e in model.stream_complete("go", **kwargs)]


# --- broken tool calls ------------------------------------------------------------------------


async def test_malformed_arguments_are_kept_and_answered_with_an_argument_error() -> None:
    seen: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        seen.append(city)
        return "sunny"

    broken = '{"city": "Par'
    replies = [calls_reply(call("abcdefghi", "get_weather", broken)), answer("Sorry.")]
    with ReplayServer(replies) as server:
        result = await Agent(connect(server), tools=[get_weather]).run("weather?")
    assert seen == []
    turn = result.messages[1]
    assert isinstance(turn, AssistantMessage) and turn.tool_calls[0].arguments == broken
    reply = result.messages[2]
    assert isinstance(reply, ToolResultMessage) and reply.is_error
    sent = server.received[1].json["messages"]
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == broken
    assert sent[2]["role"] == "tool" and sent[2]["tool_call_id"] == "abcdefghi"
    assert sent[2]["content"].startswith("Error:") and "not valid JSON" in sent[2]["content"]
    assert result.text == "Sorry."


async def test_unknown_finish_reason_is_other_with_the_raw_kept() -> None:
    reply = Reply.of_json(200, completion_json({"content": "hm"}, "banana"))
    with ReplayServer(
        [reply, Reply.of_json(200, completion_json({"content": "x"}, "model_length"))]
    ) as server:
        model = connect(server)
        odd = await model.complete("x")
        cut = await model.complete("x")
    assert (odd.finish_reason, odd.raw_finish_reason) == ("other", "banana")
    assert (cut.finish_reason, cut.raw_finish_reason) == ("length", "model_length")


async def test_missing_and_duplicate_ids_become_unique_in_both_modes() -> None:
    calls = [call(None, "a", "{}"), call("dupdupdup", "b", "{}"), call("dupdupdup", "c", "{}")]
    stream = sse(
        [
            chunk({"tool_calls": [{**calls[0], "index": 0}]}),
            chunk({"tool_calls": [{**calls[1], "index": 1}]}),
            chunk({"tool_calls": [{**calls[2], "index": 2}]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    with ReplayServer([calls_reply(*calls), Reply.of_sse(stream)]) as server:
        model = connect(server)
        whole = await model.complete("x")
        events = await stream_events(model)
    streamed = events[-1].completion
    for completion, response_id in ((whole, "cmpl-test"), (streamed, "cmpl-s")):
        ids = [c.id for c in completion.tool_calls]
        assert ids == [f"call_{response_id}_0", "dupdupdup", "dupdupdup_2"]
        assert [c.name for c in completion.tool_calls] == ["a", "b", "c"]


async def test_a_call_without_a_name_is_a_response_error() -> None:
    with (
        ReplayServer([calls_reply(call("abcdefghi", "", "{}"))]) as server,
        pytest.raises(ModelResponseError, match="without a name"),
    ):
        await connect(server).complete("x")


async def test_answers_without_choices_or_message_are_response_errors() -> None:
    empty = completion_json({"content": "x"})
    empty["choices"] = []
    no_message = completion_json({"content": "x"})
    del no_message["choices"][0]["message"]
    replies = [Reply.of_json(200, empty), Reply.of_json(200, no_message)]
    with ReplayServer(replies) as server:
        model = connect(server)
        with pytest.raises(ModelResponseError, match="no choices"):
            await model.complete("x")
        with pytest.raises(ModelResponseError, match="without a message"):
            await model.complete("x")


async def test_a_body_that_is_not_the_api_shape_is_a_response_error() -> None:
    replies = [
        Reply(200, b"<html>gateway</html>", {"content-type": "application/json"}),
        Reply.of_json(200, {"unexpected": True}),
    ]
    with ReplayServer(replies) as server:
        model = connect(server)
        for _ in replies:
            with pytest.raises(ModelResponseError, match="cannot read"):
                await model.complete("x")


# --- broken streams ---------------------------------------------------------------------------


async def test_a_stream_cut_before_the_finish_raises_and_never_hangs() -> None:
    cut = sse(
        [chunk({"content": "The weather"}), chunk({"content": " is"})]
    )  # no finish, no [DONE]
    with (
        ReplayServer([Reply.of_sse(cut)]) as server,
        pytest.raises(ModelResponseError, match="ended before the model finished"),
    ):
        await stream_events(connect(server))


async def test_an_error_event_in_a_stream_is_a_stream_error() -> None:
    error = {
        "object": "error",
        "message": "Service unavailable",
        "type": "internal",
        "code": "3000",
    }
    stream = sse([chunk({"content": "par"}), error])
    with (
        ReplayServer([Reply.of_sse(stream)]) as server,
        pytest.raises(ModelStreamError, match="Service unavailable") as caught,
    ):
        await stream_events(connect(server))
    assert (caught.value.code, caught.value.provider) == ("3000", "mistral")


async def test_a_chunk_of_another_shape_is_a_response_error() -> None:
    stream = sse([chunk({"content": "a"}), {"choices": "nonsense"}])
    with (
        ReplayServer([Reply.of_sse(stream)]) as server,
        pytest.raises(ModelResponseError, match="cannot read"),
    ):
        await stream_events(connect(server))


# --- HTTP errors and unreachable servers ------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (
            400,
            {"object": "error", "message": "Invalid model", "type": "invalid_request"},
            "Invalid model",
        ),
        (401, {"message": "Unauthorized", "request_id": "r1"}, "Unauthorized"),
        (404, {"detail": "Not Found"}, "Not Found"),
        (
            422,
            {"detail": [{"loc": ["body", "model"], "msg": "Field required", "type": "missing"}]},
            "Field required",
        ),
    ],
)
async def test_client_errors_keep_the_status_and_the_provider_message(
    status: int, body: dict[str, Any], message: str
) -> None:
    with (
        ReplayServer([Reply.of_json(status, body)]) as server,
        pytest.raises(ModelHTTPError) as caught,
    ):
        await connect(server).complete("x")
    error = caught.value
    assert not isinstance(error, RetryableModelError)
    assert (error.status_code, error.provider) == (status, "mistral")
    assert message in error.message
    assert error.body == body


async def test_rate_limits_and_server_errors_are_retryable() -> None:
    replies = [
        Reply.of_json(429, {"message": "Requests rate limit exceeded"}, {"retry-after": "7"}),
        Reply.of_json(500, {"object": "error", "message": "boom"}),
        Reply(503, b"upstream connect error", {"content-type": "text/plain"}),
    ]
    errors: list[RetryableModelError] = []
    with ReplayServer(replies) as server:
        model = connect(server)
        for _ in replies:
            with pytest.raises(RetryableModelError) as caught:
                await model.complete("x")
            errors.append(caught.value)
    assert [(e.status_code, e.message, e.retry_after) for e in errors] == [
        (429, "Requests rate limit exceeded", 7.0),
        (500, "boom", None),
        (503, "upstream connect error", None),
    ]
    assert len(server.received) == 3  # the SDK's own retries are off


async def test_a_stream_request_refused_with_an_http_error() -> None:
    refused = Reply.of_json(429, {"message": "quota"}, {"retry-after": "2"})
    with ReplayServer([refused]) as server, pytest.raises(RetryableModelError) as caught:
        await stream_events(connect(server))
    assert (caught.value.retry_after, caught.value.message) == (2.0, "quota")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_dead_server_is_a_connection_error() -> None:
    model = connect(f"http://127.0.0.1:{_free_port()}")
    with pytest.raises(ModelConnectionError, match="cannot reach mistral") as caught:
        await model.complete("x")
    assert caught.value.provider == "mistral"
    with pytest.raises(ModelConnectionError):
        await stream_events(model)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A socket that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


async def test_a_timeout_is_a_connection_error(silent_server: str) -> None:
    with anyio.fail_after(20):
        with pytest.raises(ModelConnectionError, match="did not answer in time"):
            await connect(silent_server, timeout=0.2).complete("x")
        other = connect(silent_server, timeout=30)
        with pytest.raises(ModelConnectionError, match="in time"):
            await other.complete("x", settings=ModelSettings(timeout=0.2))


async def test_forbidden_requests_never_leave() -> None:
    with ReplayServer([answer()]) as server:
        model = connect(server)
        with forbid_model_requests(), pytest.raises(ModelRequestsForbidden):
            await model.complete("x")
        with forbid_model_requests(), pytest.raises(ModelRequestsForbidden):
            await stream_events(model)
    assert server.received == []


# --- the request mapping ----------------------------------------------------------------------


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return term


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "any"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
        (
            {"type": "function", "function": {"name": "lookup"}},
            {"type": "function", "function": {"name": "lookup"}},
        ),
    ],
)
async def test_tool_choice_in_mistral_words(choice: Any, wire: Any) -> None:
    with ReplayServer([answer()]) as server:
        await connect(server).complete("x", tools=[lookup], tool_choice=choice)
    body = server.received[0].json
    assert body["tool_choice"] == wire
    assert body["tools"][0]["function"]["name"] == "lookup"
    assert body["tools"][0]["function"]["strict"] is True  # toolwire made it strict


async def test_no_tools_no_tool_choice_and_settings_mapped() -> None:
    settings = ModelSettings(
        max_tokens=50,
        temperature=0.2,
        top_p=0.9,
        stop=["END"],
        seed=7,
        extra={"safe_prompt": True, "presence_penalty": 0.5},
    )
    with ReplayServer([answer(), answer()]) as server:
        model = connect(server)
        await model.complete("x", settings=settings)
        await model.complete("x", tools=[lookup], settings={"parallel_tool_calls": False})
    first, second = (r.json for r in server.received)
    assert "tools" not in first and "tool_choice" not in first
    assert {k: first[k] for k in ("max_tokens", "temperature", "top_p", "stop", "random_seed")} == {
        "max_tokens": 50,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END"],
        "random_seed": 7,
    }
    assert (first["safe_prompt"], first["presence_penalty"]) == (True, 0.5)
    assert second["parallel_tool_calls"] is False


async def test_unknown_settings_and_unreadable_parts_fail_before_any_request() -> None:
    with ReplayServer([answer()]) as server:
        model = connect(server)
        with pytest.raises(UnsupportedError, match="'logit_bias'"):
            await model.complete("x", settings={"extra": {"logit_bias": {}}})
        with pytest.raises(UnsupportedError, match="refused the request before sending"):
            await model.complete("x", settings={"extra": {"presence_penalty": "high"}})
        pdf = UserMessage([TextPart("read"), FilePart(data=b"%PDF-1.4")])
        with pytest.raises(UnsupportedError, match="by URL"):
            await model.complete(None, history=[pdf])
        audio = UserMessage([AudioPart(data=b"RIFF", mime_type="audio/wav")])
        with pytest.raises(UnsupportedError, match="audio"):
            await model.complete(None, history=[audio])
    assert server.received == []


async def test_system_media_and_tool_results_on_the_wire() -> None:
    history = [
        SystemMessage("Be brief."),
        UserMessage(
            [
                TextPart("What is this?"),
                ImagePart(data=b"\x89PNG", mime_type="image/png"),
                ImagePart(url="https://example.com/a.jpg"),
                FilePart(url="https://example.com/a.pdf", filename="a.pdf"),
            ]
        ),
        AssistantMessage([], provider="mistral"),
        ToolResultMessage("abcdefghi", "lookup", [], is_error=True),
        ToolResultMessage("bcdefghij", "lookup", []),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(
            None,
            history=history,
            settings={
                "tools": [{"type": "function", "function": {"name": "raw", "parameters": {}}}]
            },
        )
    sent = server.received[0].json
    messages = sent["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": "data:image/png;base64,iVBORw=="},
        {"type": "image_url", "image_url": "https://example.com/a.jpg"},
        {
            "type": "document_url",
            "document_url": "https://example.com/a.pdf",
            "document_name": "a.pdf",
        },
    ]
    assert messages[2] == {"role": "assistant", "content": "", "prefix": False}
    assert messages[3]["content"] == "Error: The tool failed without a message."
    assert messages[4]["content"] == "(no output)"
    assert sent["tools"] == [{"type": "function", "function": {"name": "raw", "parameters": {}}}]
    assert "tool_choice" not in sent  # only raw tools, and the default choice


async def test_a_done_event_ends_every_stream() -> None:
    stream = sse([chunk({"content": "hi"}), chunk({"content": ""}, "stop"), "[DONE]"])
    with ReplayServer([Reply.of_sse(stream)]) as server:
        events = await stream_events(connect(server))
    assert isinstance(events[-1], CompletionDone)
    assert events[-1].completion.text == "hi"
    assert events[-1].completion.usage.requests == 1
