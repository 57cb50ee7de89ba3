"""The Mistral chat adapter through a local server and the real `mistralai` SDK: the answers only
this API sends (its error bodies and events, a choice without a message) and the request mapping
(tool choice, settings, media, results).

What every adapter does with hostile answers (ids, usage, finish reasons, HTTP and connection
errors, cut streams) is the contract suite's: test_contract.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import tool
from toolwire.errors import (
    ModelHTTPError,
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
from toolwire.models.base import ModelSettings
from toolwire.models.mistral import MistralModel
from toolwire.results import AudioPart, ImagePart, TextPart

pytestmark = pytest.mark.anyio


def connect(server: ReplayServer | str, **options: Any) -> MistralModel:
    root = server if isinstance(server, str) else server.base_url
    return closing(MistralModel("mistral-test", api_key="test-key", base_url=root, **options))


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


# --- broken answers ----------------------------------------------------------------------------


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


# --- broken streams ---------------------------------------------------------------------------


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


# --- HTTP errors ---------------------------------------------------------------------------------


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
