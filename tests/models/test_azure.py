"""Azure OpenAI through the real `openai` SDK against a local server that checks Azure's URL shapes
(`/openai/deployments/{deployment}/chat/completions?api-version=...`, `/openai/v1/responses`) and
headers (`api-key`, or `Authorization: Bearer` from an Entra ID token provider), and answers the
way Azure does, content-filter results included."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import pytest
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, tool
from toolwire.errors import ModelError, ModelHTTPError, ModelStreamError
from toolwire.models import model as resolve
from toolwire.models.azure import azure, filtered_categories
from toolwire.models.openai_chat import OpenAIChatModel
from toolwire.models.openai_responses import OpenAIResponsesModel

pytestmark = pytest.mark.anyio

_ENV = (
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "AZURE_OPENAI_API_VERSION",
    "OPENAI_API_VERSION",
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


def make(deployment: str, **options: Any) -> OpenAIChatModel | OpenAIResponsesModel:
    return closing(azure(deployment, **options))


SAFE = {
    "hate": {"filtered": False, "severity": "safe"},
    "self_harm": {"filtered": False, "severity": "safe"},
    "sexual": {"filtered": False, "severity": "safe"},
    "violence": {"filtered": False, "severity": "safe"},
}


def chat_reply(message: dict[str, Any], finish: str, results: dict[str, Any] = SAFE) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-az",
            "object": "chat.completion",
            "model": "gpt-4o-2024-11-20",
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": SAFE}],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": finish,
                    "message": {"role": "assistant", **message},
                    "content_filter_results": results,
                }
            ],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
        },
    )


def responses_reply(output: list[dict[str, Any]], **top: Any) -> Reply:
    body: dict[str, Any] = {
        "id": "resp_az",
        "object": "response",
        "model": "gpt-5-mini",
        "status": "completed",
        "output": output,
        "usage": {"input_tokens": 9, "output_tokens": 2},
        "error": None,
    }
    body.update(top)
    return Reply.of_json(200, body)


def text_item(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_az",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def query(received: Any) -> dict[str, list[str]]:
    return parse_qs(received.query)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


# --- Chat Completions ---------------------------------------------------------------------------


async def test_chat_from_the_environment_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    replies = [
        chat_reply(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_az",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
                    }
                ],
            },
            "tool_calls",
        ),
        chat_reply({"content": "5"}, "stop"),
    ]
    with ReplayServer(replies) as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base_url + "/")
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-06-01")
        monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2024-10-21")
        model = make("my-gpt4o")
        result = await Agent(model, tools=[add]).run("2 + 3?")
    assert server.mismatches == []
    for received in server.received:
        assert received.path == "/openai/deployments/my-gpt4o/chat/completions"
        assert query(received) == {"api-version": ["2024-10-21"]}
        assert received.headers["api-key"] == "az-key"
        assert "authorization" not in received.headers
    assert server.received[0].json["model"] == "my-gpt4o"
    assert result.text == "5"
    turn = result.messages[1]
    assert (turn.provider, turn.api) == ("azure", "chat-completions")  # type: ignore[union-attr]
    assert server.received[1].json["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_az",
        "content": "5",
    }


async def test_chat_with_an_entra_token_provider_called_per_request() -> None:
    tokens = iter(["tok-1", "tok-2"])
    replies = [chat_reply({"content": "a"}, "stop"), chat_reply({"content": "b"}, "stop")]
    with ReplayServer(replies) as server:
        model = make(
            "dep",
            endpoint=server.base_url,
            token_provider=lambda: next(tokens),
            api_version="2024-10-21",
        )
        await model.complete("x")
        await model.complete("y")
    assert [r.headers["authorization"] for r in server.received] == [
        "Bearer tok-1",
        "Bearer tok-2",
    ]
    assert all("api-key" not in r.headers for r in server.received)


async def test_an_async_token_provider_works_and_a_bad_one_fails_clearly() -> None:
    async def token() -> str:
        return "async-tok"

    async def empty() -> str:
        return ""

    with ReplayServer([chat_reply({"content": "ok"}, "stop")]) as server:
        model = make("dep", endpoint=server.base_url, token_provider=token, api_version="v")
        await model.complete("x")
        broken = make("dep", endpoint=server.base_url, token_provider=empty, api_version="v")
        with pytest.raises(ModelError, match="no token") as caught:
            await broken.complete("x")
    assert type(caught.value) is ModelError  # a credential failure, not a broken answer
    assert server.received[0].headers["authorization"] == "Bearer async-tok"


async def test_a_filtered_answer_raises_naming_the_category() -> None:
    filtered = {**SAFE, "violence": {"filtered": True, "severity": "medium"}}
    chunks = [
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "gpt-4o",
            "choices": [{"index": 0, "delta": {"content": "Partial"}, "finish_reason": None}],
        },
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "delta": {},
                    "finish_reason": "content_filter",
                    "content_filter_results": filtered,
                }
            ],
        },
        "[DONE]",
    ]
    replies = [
        chat_reply({"content": "Part"}, "content_filter", filtered),
        Reply.of_sse(sse(chunks)),
    ]
    with ReplayServer(replies) as server:
        model = make("dep", endpoint=server.base_url, api_key="k", api_version="2024-10-21")
        with pytest.raises(ModelStreamError) as whole:
            await model.complete("x")
        with pytest.raises(ModelStreamError) as streamed:
            [e async for e in model.stream_complete("x")]
    for caught, partial in ((whole.value, "Part"), (streamed.value, "Partial")):
        assert caught.code == "content_filter" and caught.provider == "azure"
        assert "violence (medium)" in str(caught)
        assert caught.failed_generation == partial


async def test_a_refused_prompt_is_an_http_error_naming_the_categories() -> None:
    body = {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's "
            "content management policy.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": {
                    **SAFE,
                    "hate": {"filtered": True, "severity": "high"},
                    "jailbreak": {"filtered": True, "detected": True},
                    "custom_blocklists": {
                        "filtered": True,
                        "details": [{"filtered": True, "id": "my-list"}],
                    },
                },
            },
        }
    }
    replies = [Reply.of_json(400, body, {"x-request-id": "req-az"})] * 2
    with ReplayServer(replies) as server:
        chat = make("dep", endpoint=server.base_url, api_key="k", api_version="2024-10-21")
        with pytest.raises(ModelHTTPError) as caught:
            await chat.complete("x")
        responses = make("dep", api="responses", endpoint=server.base_url, api_key="k")
        with pytest.raises(ModelHTTPError) as caught_too:
            await responses.complete("x")
    for error in (caught.value, caught_too.value):
        assert error.status_code == 400 and error.request_id == "req-az"
        assert "hate (high), jailbreak (detected), custom_blocklists (my-list)" in str(error)


# --- the Responses v1 API -----------------------------------------------------------------------


async def test_responses_on_the_v1_route_with_a_key() -> None:
    replies = [responses_reply([text_item("hi")]), responses_reply([text_item("again")])]
    with ReplayServer(replies) as server:
        model = make(
            "my-gpt5", api="responses", endpoint=server.base_url, api_key="az-key", store=True
        )
        first = await model.complete("x")
        preview = make(
            "my-gpt5",
            api="responses",
            endpoint=server.base_url,
            api_key="az-key",
            api_version="preview",
        )
        await preview.complete("y", history=[])
    first_request, second_request = server.received
    assert first_request.path == second_request.path == "/openai/v1/responses"
    assert query(first_request) == {}
    assert query(second_request) == {"api-version": ["preview"]}
    assert first_request.headers["api-key"] == "az-key"
    assert "authorization" not in first_request.headers
    assert first_request.json["model"] == "my-gpt5" and first_request.json["store"] is True
    assert second_request.json["store"] is False
    assert first.text == "hi"
    assert (first.message.provider, first.message.api) == ("azure", "responses")


async def test_responses_with_a_token_and_a_filtered_answer() -> None:
    incomplete = responses_reply(
        [text_item("Some")],
        status="incomplete",
        incomplete_details={"reason": "content_filter"},
        content_filters=[
            {
                "blocked": True,
                "source_type": "completion",
                "content_filter_results": {"sexual": {"filtered": True, "severity": "high"}},
            }
        ],
    )
    with ReplayServer([responses_reply([text_item("ok")]), incomplete]) as server:
        model = make("dep", api="responses", endpoint=server.base_url, token_provider=lambda: "t")
        assert (await model.complete("x")).text == "ok"
        with pytest.raises(ModelStreamError) as caught:
            await model.complete("y")
    assert server.received[0].headers["authorization"] == "Bearer t"
    assert caught.value.code == "content_filter"
    assert "sexual (high)" in str(caught.value) and caught.value.failed_generation == "Some"


# --- configuration ------------------------------------------------------------------------------


async def test_missing_or_conflicting_configuration_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT"):
        azure("dep", api_key="k", api_version="v")
    with pytest.raises(ValueError, match="AZURE_OPENAI_API_KEY"):
        azure("dep", endpoint="https://r.openai.azure.com", api_version="v")
    with pytest.raises(ValueError, match="not both"):
        azure("dep", endpoint="https://x", api_key="k", token_provider=lambda: "t")
    with pytest.raises(ValueError, match="OPENAI_API_VERSION"):
        azure("dep", endpoint="https://x", api_key="k")
    with pytest.raises(ValueError, match="api must be"):
        azure("dep", endpoint="https://x", api_key="k", api="assistants")  # type: ignore[arg-type]
    from openai import AsyncAzureOpenAI

    own = AsyncAzureOpenAI(
        azure_endpoint="https://r.openai.azure.com", api_version="v", api_key="k"
    )
    passed = azure("dep", client=own)
    assert isinstance(passed, OpenAIChatModel) and passed.client is own
    assert passed.profile.chat.content_filter_error
    await passed.aclose()
    assert not own.is_closed()  # the caller's client stays open
    await own.close()
    # The Responses v1 route needs no version.
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://r.openai.azure.com")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "k")
    built = resolve("azure:dep", api="responses")
    assert isinstance(built, OpenAIResponsesModel) and built.provider == "azure"
    assert str(built.client.base_url) == "https://r.openai.azure.com/openai/v1/"
    await built.aclose()


async def test_filtered_categories_reads_every_shape() -> None:
    assert filtered_categories({"choices": [{"content_filter_results": SAFE}]}) == []
    nested = {"a": [{"content_filter_results": {"violence": {"filtered": True}}}]}
    assert filtered_categories(nested) == ["violence"]
