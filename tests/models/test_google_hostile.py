"""The Gemini adapter against answers that go wrong: HTTP errors, broken and cut bodies, blocked
prompts and answers, calls Gemini could not produce. Each one ends in a documented error, fast."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from recordings.replay import ReplayServer, Reply, sse
from toolwire import UnsupportedError, tool
from toolwire.errors import (
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelStreamError,
    RetryableModelError,
)
from toolwire.models.base import Completion, CompletionDone
from toolwire.models.google import GeminiModel, gemini, vertex


@asynccontextmanager
async def serving(replies: Sequence[Reply]) -> AsyncIterator[tuple[ReplayServer, GeminiModel]]:
    with ReplayServer(replies) as server:
        async with gemini("gemini-2.5-flash", api_key="k", base_url=server.base_url) as made:
            with anyio.fail_after(20):
                yield server, made


def candidate(
    parts: list[dict[str, Any]], finish: str | None = "STOP", **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0, **extra}
    if finish is not None:
        body["finishReason"] = finish
    return body


def answer(*candidates: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "candidates": list(candidates),
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
        **extra,
    }


async def streamed(made: GeminiModel, prompt: str = "hi") -> Completion:
    last = None
    async for event in made.stream_complete(prompt):
        last = event
    assert isinstance(last, CompletionDone)
    return last.completion


# --- HTTP errors and broken bodies ----------------------------------------------------------------


@pytest.mark.anyio
async def test_rate_limit_is_retryable_with_retry_after() -> None:
    error = {
        "error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}
    }
    async with serving([Reply.of_json(429, error, {"retry-after": "7"})]) as (_, made):
        with pytest.raises(RetryableModelError) as caught:
            await made.complete("hi")
    assert caught.value.status_code == 429 and caught.value.retry_after == 7
    assert "Resource exhausted" in str(caught.value) and caught.value.provider == "google"


@pytest.mark.anyio
async def test_bad_request_names_the_problem_in_both_modes() -> None:
    error = {
        "error": {"code": 400, "message": "Invalid JSON payload", "status": "INVALID_ARGUMENT"}
    }
    async with serving([Reply.of_json(400, error), Reply.of_json(400, error)]) as (_, made):
        with pytest.raises(ModelHTTPError, match="Invalid JSON payload") as caught:
            await made.complete("hi")
        assert not isinstance(caught.value, RetryableModelError)
        with pytest.raises(ModelHTTPError, match="Invalid JSON payload"):
            await streamed(made)


@pytest.mark.anyio
async def test_server_error_is_retryable() -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}
    async with serving([Reply.of_json(503, error)]) as (_, made):
        with pytest.raises(RetryableModelError, match="overloaded"):
            await made.complete("hi")


@pytest.mark.anyio
async def test_a_body_that_is_not_json() -> None:
    reply = Reply(200, b"<html>proxy error</html>", {"content-type": "text/html"})
    async with serving([reply]) as (_, made):
        with pytest.raises(ModelResponseError):
            await made.complete("hi")


@pytest.mark.anyio
async def test_a_stream_event_that_is_not_json() -> None:
    good = answer(candidate([{"text": "Hel"}], finish=None))
    async with serving([Reply.of_sse(sse([good, "{not json"]))]) as (_, made):
        with pytest.raises(ModelResponseError):
            await streamed(made)


@pytest.mark.anyio
async def test_a_stream_that_ends_before_its_finish_reason() -> None:
    chunks = [answer(candidate([{"text": "Hel"}], finish=None))]
    async with serving([Reply.of_sse(sse(chunks))]) as (_, made):
        events: list[Any] = []

        async def consume() -> None:
            async for event in made.stream_complete("hi"):
                events.append(event)

        with pytest.raises(ModelResponseError, match="ended before a finish reason"):
            await consume()
    assert [e.text for e in events] == ["Hel"]


@pytest.mark.anyio
async def test_no_candidate_at_all() -> None:
    async with serving([Reply.of_json(200, {"modelVersion": "x"})]) as (_, made):
        with pytest.raises(ModelResponseError, match="without a candidate"):
            await made.complete("hi")


@pytest.mark.anyio
async def test_nobody_listening() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with gemini("gemini-2.5-flash", api_key="k", base_url=f"http://127.0.0.1:{port}") as made:
        with anyio.fail_after(20), pytest.raises(ModelConnectionError):
            await made.complete("hi")


@pytest.mark.anyio
async def test_vertex_without_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    async with vertex("gemini-2.5-flash", project="p", base_url="http://127.0.0.1:9") as made:
        with anyio.fail_after(20), pytest.raises(ModelError, match="credentials"):
            await made.complete("hi")


# --- safety and failed calls -------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_blocked_prompt_names_the_category() -> None:
    body = {
        "promptFeedback": {
            "blockReason": "SAFETY",
            "safetyRatings": [
                {
                    "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                    "probability": "HIGH",
                    "blocked": True,
                },
                {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
            ],
        },
        "usageMetadata": {"promptTokenCount": 9},
    }
    async with serving([Reply.of_json(200, body)]) as (_, made):
        with pytest.raises(ModelStreamError) as caught:
            await made.complete("hi")
    assert caught.value.code == "SAFETY"
    assert "HARM_CATEGORY_DANGEROUS_CONTENT" in str(caught.value)
    assert "HARASSMENT" not in str(caught.value)


@pytest.mark.anyio
async def test_a_withheld_answer_names_the_category() -> None:
    ratings = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "HIGH", "blocked": True}]
    body = answer({"finishReason": "SAFETY", "index": 0, "safetyRatings": ratings})
    async with serving([Reply.of_json(200, body)]) as (_, made):
        with pytest.raises(ModelStreamError, match="SAFETY: HARM_CATEGORY_HATE_SPEECH") as caught:
            await made.complete("hi")
    assert caught.value.code == "SAFETY"


@pytest.mark.anyio
async def test_an_answer_cut_by_safety_keeps_what_came() -> None:
    ratings = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "MEDIUM", "blocked": True}]
    chunks = [
        answer(candidate([{"text": "Once upon"}], finish=None)),
        answer(candidate([{"text": " a time"}], finish="SAFETY", safetyRatings=ratings)),
    ]
    async with serving([Reply.of_sse(sse(chunks))]) as (_, made):
        done = await streamed(made)
    assert done.text == "Once upon a time"
    assert (done.finish_reason, done.raw_finish_reason) == ("content_filter", "SAFETY")
    assert done.message.provider_state == {"blocked_categories": ["HARM_CATEGORY_HARASSMENT"]}


@pytest.mark.anyio
async def test_malformed_function_call() -> None:
    body = answer({"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0})
    async with serving([Reply.of_json(200, body), Reply.of_sse(sse([body]))]) as (_, made):
        with pytest.raises(ModelStreamError, match="MALFORMED_FUNCTION_CALL") as caught:
            await made.complete("hi")
        assert caught.value.code == "MALFORMED_FUNCTION_CALL"
        with pytest.raises(ModelStreamError, match="MALFORMED_FUNCTION_CALL"):
            await streamed(made)


# --- what the request says -------------------------------------------------------------------------


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return city


@pytest.mark.anyio
async def test_tool_choice_modes_and_settings_on_the_wire() -> None:
    reply = answer(candidate([{"text": "ok"}]))
    async with serving([Reply.of_json(200, reply)] * 4) as (server, made):
        await made.complete("a", tools=[lookup], tool_choice="required")
        await made.complete("b", tools=[lookup], tool_choice="none")
        await made.complete("c", tools=[lookup], tool_choice="lookup")
        settings = {
            "max_tokens": 50,
            "temperature": 0.2,
            "stop": ["END"],
            "seed": 3,
            "thinking_config": {"thinking_budget": 128, "include_thoughts": True},
        }
        await made.complete("d", tools=[lookup], settings=settings)
    configs = [r.json.get("toolConfig") for r in server.received]
    assert configs == [
        {"functionCallingConfig": {"mode": "ANY"}},
        {"functionCallingConfig": {"mode": "NONE"}},
        {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["lookup"]}},
        None,
    ]
    assert server.received[3].json["generationConfig"] == {
        "maxOutputTokens": 50,
        "temperature": 0.2,
        "stopSequences": ["END"],
        "seed": 3,
        # The SDK writes nested settings with field names, which the API's JSON reading accepts.
        "thinkingConfig": {"thinking_budget": 128, "include_thoughts": True},
    }


@pytest.mark.anyio
async def test_requests_gemini_cannot_take() -> None:
    async with serving([]) as (server, made):
        with pytest.raises(UnsupportedError, match="parallel_tool_calls"):
            await made.complete("hi", tools=[lookup], settings={"parallel_tool_calls": False})
        with pytest.raises(UnsupportedError, match="not among the tools"):
            await made.complete("hi", tools=[lookup], tool_choice="other")
        choice = {"mode": "AUTO", "stream_function_call_arguments": True}
        with pytest.raises(UnsupportedError, match="whole"):
            await made.complete("hi", tools=[lookup], tool_choice=choice)
        with pytest.raises(UnsupportedError, match="settings"):
            await made.complete("hi", settings={"no_such_field": 1})
    assert server.received == []


@pytest.mark.anyio
async def test_thoughts_stream_as_reasoning_and_replay_with_their_signature() -> None:
    chunks = [
        answer(candidate([{"text": "Let me think", "thought": True}], finish=None)),
        answer(candidate([{"text": " more.", "thought": True}], finish=None)),
        answer(candidate([{"text": "Answer.", "thoughtSignature": "c2lnbmF0dXJl"}], finish="STOP")),
    ]
    second = answer(candidate([{"text": "ok"}]))
    async with serving([Reply.of_sse(sse(chunks)), Reply.of_json(200, second)]) as (server, made):
        events = [e async for e in made.stream_complete("hi")]
        done = events[-1]
        assert isinstance(done, CompletionDone)
        assert [type(e).__name__ for e in events] == [
            "ReasoningDelta",
            "ReasoningDelta",
            "TextDelta",
            "CompletionDone",
        ]
        assert done.completion.reasoning == "Let me think more."
        await made.complete(history=[done.completion.message])
    sent = server.received[1].json["contents"][0]["parts"]  # the turn, state and all
    assert sent == [
        {"text": "Let me think more.", "thought": True},
        {"text": "Answer.", "thoughtSignature": "c2lnbmF0dXJl"},
    ]


@pytest.mark.anyio
async def test_an_error_object_inside_the_stream() -> None:
    good = answer(candidate([{"text": "Hel"}], finish=None))
    error = {"error": {"code": 503, "message": "The model is overloaded", "status": "UNAVAILABLE"}}
    async with serving([Reply.of_sse(sse([good, error]))]) as (_, made):
        with pytest.raises(RetryableModelError, match="overloaded"):
            await streamed(made)


def _cut_server() -> tuple[socket.socket, str]:
    """A server that promises a long stream, sends one event, and hangs up."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    chunk = json.dumps(answer(candidate([{"text": "Hel"}], finish=None)))
    event = f"data: {chunk}\r\n\r\n".encode()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
            )
            while len(body) < length:
                body += connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                + f"content-length: {len(event) + 5000}\r\n\r\n".encode()
                + event
            )

    threading.Thread(target=serve, daemon=True).start()
    host, port = listener.getsockname()
    return listener, f"http://{host}:{port}"


@pytest.mark.anyio
async def test_a_stream_cut_by_the_connection() -> None:
    listener, url = _cut_server()
    with listener:
        async with gemini("gemini-2.5-flash", api_key="k", base_url=url) as made:
            with anyio.fail_after(20), pytest.raises(ModelResponseError, match="cut"):
                await streamed(made)


def camel(value: Any) -> Any:
    """The SDK writes some nested fields by their Python names, which the API also reads."""
    if isinstance(value, dict):
        return {
            re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


@pytest.mark.anyio
async def test_media_in_user_turns_and_tool_results_on_the_wire() -> None:
    from toolwire import (
        AssistantMessage,
        AudioPart,
        FilePart,
        ImagePart,
        TextPart,
        ToolCallBlock,
        ToolResultMessage,
        UserMessage,
    )
    from toolwire.results import ToolResult

    history = [
        UserMessage(
            [
                TextPart("Look:"),
                ImagePart(data=b"\x89PNG", mime_type="image/png"),
                FilePart(url="gs://bucket/report.pdf", mime_type="application/pdf"),
                AudioPart(data=b"RIFF", mime_type="audio/wav"),
            ]
        ),
        AssistantMessage(
            [ToolCallBlock("c1", "lookup", '{"city": "Recife"}')],
            provider="google",
            api="generate-content",
        ),
        ToolResultMessage.from_result(
            "c1",
            "lookup",
            ToolResult([TextPart("a chart"), ImagePart(data=b"GIF8", mime_type="image/gif")]),
        ),
        ToolResultMessage.from_result(
            "c2", "lookup", ToolResult([TextPart("no such city")], is_error=True)
        ),
    ]
    async with serving([Reply.of_json(200, answer(candidate([{"text": "ok"}])))]) as (server, made):
        await made.complete(history=history)
    contents = camel(server.received[0].json["contents"])
    assert contents[0]["parts"] == [
        {"text": "Look:"},
        {"inlineData": {"data": "iVBORw==", "mimeType": "image/png"}},
        {"fileData": {"fileUri": "gs://bucket/report.pdf", "mimeType": "application/pdf"}},
        {"inlineData": {"data": "UklGRg==", "mimeType": "audio/wav"}},
    ]
    assert contents[1]["parts"] == [
        {"functionCall": {"id": "c1", "name": "lookup", "args": {"city": "Recife"}}}
    ]
    first, second = contents[2]["parts"]
    assert first["functionResponse"]["response"] == {"output": "a chart"}
    assert first["functionResponse"]["parts"][0]["inlineData"]["mimeType"] == "image/gif"
    assert second["functionResponse"]["response"] == {"error": "no such city"}


def test_run_sync_twice_rebuilds_the_client_for_each_event_loop() -> None:
    from toolwire import Agent

    replies = [Reply.of_json(200, answer(candidate([{"text": f"answer {n}"}]))) for n in (1, 2)]
    with ReplayServer(replies) as server:
        agent = Agent(gemini("gemini-2.5-flash", api_key="k", base_url=server.base_url))
        assert agent.run_sync("one").text == "answer 1"
        assert agent.run_sync("two").text == "answer 2"
    assert len(server.received) == 2


@pytest.mark.anyio
async def test_a_slow_answer_times_out() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts the connection, never answers
    with listener:
        url = "http://{}:{}".format(*listener.getsockname())
        async with gemini("gemini-2.5-flash", api_key="k", base_url=url) as made:
            with anyio.fail_after(20), pytest.raises(ModelConnectionError, match="in time"):
                await made.complete("hi", settings={"timeout": 0.2})
