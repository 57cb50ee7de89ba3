"""The Gemini adapter against what only Gemini sends: blocked prompts and answers, calls it could not
produce, thoughts; Vertex AI without credentials; and the request mapping (tool choice, media).

What every adapter does with hostile answers (ids, usage, finish reasons, HTTP and connection
errors, cut streams) is the contract suite's: test_contract.py."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from recordings.replay import ReplayServer, Reply, sse
from toolwire import UnsupportedError, tool
from toolwire.errors import (
    ModelError,
    ModelStreamError,
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


# --- credentials ----------------------------------------------------------------------------------


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
