"""Wrapper models around the real adapters, against local HTTP servers: a primary that answers
503, times out, refuses the connection or rate-limits with `Retry-After`, and a backup that
replays recorded provider traffic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from model_servers import closing, free_port

from recordings.replay import ReplayServer, Reply, load_cassette
from toolwire import Agent, ModelResponseEvent, RunEvent, TextDelta, tool
from toolwire.errors import RetryableModelError
from toolwire.models import Completion, FallbackModel, RetryModel, RetryPolicy
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.openai_chat import OpenAIChatModel

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]

INSTRUCTIONS = "openai_chat/test_openai_instructions_with_tool_calls_keep_instructions.yaml"
STREAMED = "openai_chat/test_run_stream_sync_streams_real_model.yaml"


def openai(base_url: str, name: str, **options: Any) -> OpenAIChatModel:
    return closing(OpenAIChatModel(name, api_key="test-key", base_url=base_url + "/v1", **options))


def anthropic(base_url: str, name: str, **options: Any) -> AnthropicModel:
    return closing(AnthropicModel(name, api_key="test-key", base_url=base_url, **options))


def overloaded(count: int, **headers: str) -> list[Reply]:
    body = {"error": {"message": "The server is overloaded", "type": "server_error"}}
    return [Reply.of_json(503, body, headers) for _ in range(count)]


@tool
def get_temperature(city: str) -> float:
    """The temperature in a city."""
    assert city == "Tokyo"
    return 20.0


def messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    # An assistant turn's `content: null` is the same as no content.
    return [{k: v for k, v in m.items() if v is not None} for m in body["messages"]]


def _watch(into: list[Completion]) -> Callable[[RunEvent], None]:
    def subscriber(event: RunEvent) -> None:
        if isinstance(event, ModelResponseEvent):
            into.append(event.completion)

    return subscriber


async def test_a_503_falls_back_to_a_model_that_answers() -> None:
    recorded = load_cassette(INSTRUCTIONS)
    completions: list[Completion] = []
    with (
        ReplayServer(overloaded(2)) as primary,
        ReplayServer.from_cassette(INSTRUCTIONS) as backup,
    ):
        model = FallbackModel(
            openai(primary.base_url, "gpt-primary"), openai(backup.base_url, "gpt-4.1-mini")
        )
        agent = Agent(
            model,
            instructions="You are a helpful assistant.",
            tools=[get_temperature],
            subscribers=[_watch(completions)],
        )
        result = await agent.run("What is the temperature in Tokyo?")
    assert result.text == "The temperature in Tokyo is currently 20.0 degrees Celsius."
    assert backup.mismatches == []
    # Each round asked the primary first, with the same conversation the backup then received.
    assert len(primary.received) == len(backup.received) == 2
    for failed, answered, expected in zip(primary.received, backup.received, recorded, strict=True):
        assert failed.json["model"] == "gpt-primary"
        assert failed.json["messages"] == answered.json["messages"]
        assert messages(answered.json) == messages(expected.request_json)
    for completion in completions:
        first, second = completion.attempts
        assert (first.model, second.model) == ("gpt-primary", "gpt-4.1-mini")
        assert isinstance(first.error, RetryableModelError) and first.error.status_code == 503
        assert second.ok and completion.model == "gpt-4.1-mini-2025-04-14"


async def test_a_refused_connection_falls_back_to_another_provider() -> None:
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "Bonjour."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 9, "output_tokens": 2},
    }
    with ReplayServer([Reply.of_json(200, answer)]) as backup:
        model = FallbackModel(
            openai(f"http://127.0.0.1:{free_port()}", "gpt-primary"),
            anthropic(backup.base_url, "claude-test"),
        )
        completion = await model.complete("Say hello in French.")
    assert completion.text == "Bonjour."
    assert completion.message.provider == "anthropic" and model.provider == "openai"
    assert [(a.provider, type(a.error).__name__) for a in completion.attempts] == [
        ("openai", "ModelConnectionError"),
        ("anthropic", "NoneType"),
    ]
    (sent,) = backup.received
    assert sent.path == "/v1/messages"
    assert sent.json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Say hello in French."}]}
    ]


async def test_a_timeout_falls_back(silent_server: str) -> None:
    with ReplayServer.from_cassette(INSTRUCTIONS) as backup:
        model = FallbackModel(
            openai(silent_server, "gpt-primary", timeout=0.2),
            openai(backup.base_url, "gpt-4.1-mini"),
        )
        agent = Agent(model, instructions="You are a helpful assistant.", tools=[get_temperature])
        result = await agent.run("What is the temperature in Tokyo?")
    assert result.text.startswith("The temperature in Tokyo is currently 20.0")
    assert backup.mismatches == []


async def test_a_streamed_run_falls_back_before_the_first_event() -> None:
    @tool
    def get_capital(country: str) -> str:
        """The capital of a country."""
        return {"UK": "London"}[country]

    with ReplayServer(overloaded(2)) as primary, ReplayServer.from_cassette(STREAMED) as backup:
        model = FallbackModel(
            openai(primary.base_url, "gpt-primary"), openai(backup.base_url, "gpt-4o-mini")
        )
        agent = Agent(model, tools=[get_capital])
        async with agent.run_stream(
            "What is the capital of the UK? Use the tool, then answer."
        ) as run:
            events = [e async for e in run]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == run.result.text == "The capital of the UK is London."
    assert [r.json["stream"] for r in primary.received] == [True, True]
    assert backup.mismatches == [] and len(backup.received) == 2


async def test_retry_honours_the_retry_after_header_of_a_429() -> None:
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    recorded = load_cassette(INSTRUCTIONS)
    limited = Reply.of_json(
        429, {"error": {"message": "Rate limit reached", "type": "requests"}}, {"retry-after": "3"}
    )
    replies = [limited, *(Reply(i.status, i.body, i.headers) for i in recorded)]
    completions: list[Completion] = []
    with ReplayServer(replies) as server:
        model = RetryModel(
            openai(server.base_url, "gpt-4.1-mini"),
            RetryPolicy(initial_delay=0.5, max_delay=10, jitter=False),
            sleep=sleep,
        )
        agent = Agent(
            model,
            instructions="You are a helpful assistant.",
            tools=[get_temperature],
            subscribers=[_watch(completions)],
        )
        result = await agent.run("What is the temperature in Tokyo?")
    assert result.text == "The temperature in Tokyo is currently 20.0 degrees Celsius."
    assert delays == [3.0]
    # The rate-limited request was sent again unchanged.
    assert server.received[0].json == server.received[1].json
    assert [len(c.attempts) for c in completions] == [2, 1]
    error = completions[0].attempts[0].error
    assert isinstance(error, RetryableModelError) and error.status_code == 429


async def test_a_retry_after_longer_than_the_policy_allows_is_raised() -> None:
    with ReplayServer(overloaded(1, **{"retry-after": "600"})) as server:
        model = RetryModel(openai(server.base_url, "gpt-4.1-mini"), RetryPolicy(max_delay=60))
        with pytest.raises(RetryableModelError) as caught:
            await model.complete("hi")
    assert caught.value.retry_after == 600
    assert len(server.received) == 1


async def test_adapters_with_sdk_retries_are_refused() -> None:
    from anthropic import AsyncAnthropic

    with pytest.raises(ValueError, match="max_retries=2"):
        RetryModel(openai("http://127.0.0.1:9", "gpt", max_retries=2))
    # A client passed in keeps the SDK's default of 2 retries.
    client = AsyncAnthropic(api_key="test-key", base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="max_retries=0"):
        RetryModel(AnthropicModel("claude-test", client=client))
    await client.close()
    RetryModel(openai("http://127.0.0.1:9", "gpt"))  # toolwire's adapters default to 0
