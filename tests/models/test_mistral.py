"""The Mistral chat adapter against both recorded Mistral conversations, replayed by a local server
that the real `mistralai` SDK talks to (its `server_url`), plus streaming built from those answers.

Each replay makes toolwire hold the conversation the recording had, then compares the request
bodies it sent with the recorded ones and what it parsed from the recorded answers.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from model_servers import closing

from recordings.mistral_streams import stream_of
from recordings.replay import Interaction, ReplayServer, Reply, load_cassette, sse
from toolwire import Agent, tool
from toolwire.messages import (
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models import model as resolve
from toolwire.models.base import Completion, CompletionDone, TextDelta, ToolCallDelta, Usage
from toolwire.models.mistral import MistralModel, wire_id
from toolwire.results import TextPart
from toolwire.tools import Tool, as_tool

pytestmark = pytest.mark.anyio

AUTO = "mistral/test_tool_choice_matrix[auto-mistral].yaml"
REQUIRED = "mistral/TestToolsPlusOutput.test_tools_plus_output_multiple_function_tools.yaml"


def connect(server: ReplayServer | str, name: str = "mistral-large-latest") -> MistralModel:
    """A Mistral model whose SDK talks to the local server (closed after the test)."""
    root = server if isinstance(server, str) else server.base_url
    return closing(MistralModel(name, api_key="test-key", base_url=root))


# --- comparing request bodies -----------------------------------------------------------------


def normalise(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with what carries no meaning taken out.

    The recordings were made by a client that always sent `n: 1` and `top_p: 1.0` (the API's
    defaults); a tool's `type` is `"function"` by default; an assistant turn's empty content
    equals none; `"required"` is Mistral's synonym
    of `"any"` (toolwire sends `"any"`, Mistral's own word).
    """
    body = copy.deepcopy(body)
    if body.get("n") == 1:
        del body["n"]
    if body.get("top_p") == 1.0:
        del body["top_p"]
    if body.get("tool_choice") == "required":
        body["tool_choice"] = "any"
    for spec in body.get("tools", []):
        spec.setdefault("type", "function")
    for message in body.get("messages", []):
        if message.get("role") == "assistant" and message.get("content") in (None, "", []):
            message.pop("content", None)
    return body


def assert_requests_match(server: ReplayServer, recorded: list[Interaction]) -> None:
    assert server.mismatches == []
    assert len(server.received) == len(recorded)
    for sent, expected in zip(server.received, recorded, strict=True):
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == "Bearer test-key"
        assert normalise(sent.json) == normalise(expected.request_json)


def recorded_tools(interaction: Interaction) -> list[Tool]:
    """Schema-only tools with exactly the recorded definitions (none strict)."""
    return [
        as_tool({**spec["function"], "strict": False}) for spec in interaction.request_json["tools"]
    ]


def without_raw(completion: Completion) -> Completion:
    return Completion(
        message=completion.message,
        usage=completion.usage,
        finish_reason=completion.finish_reason,
        raw_finish_reason=completion.raw_finish_reason,
        model=completion.model,
    )


# --- the recorded conversations ---------------------------------------------------------------


async def test_auto_choice_tool_loop_through_the_agent() -> None:
    recorded = load_cassette(AUTO)
    seen: list[str] = []

    @tool(strict=False)
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        seen.append(city)
        return "Sunny, 22C in Paris"

    completions: list[Completion] = []
    with ReplayServer.from_cassette(AUTO) as server:
        agent = Agent(
            connect(server),
            tools=[get_weather],
            subscribers=[
                lambda e: completions.append(e.completion) if e.type == "model.response" else None
            ],
        )
        result = await agent.run("What's the weather in Paris?")
    assert_requests_match(server, recorded)
    assert seen == ["Paris"]
    assert result.text == recorded[1].response_json["choices"][0]["message"]["content"]
    first, second = completions
    call = first.message.parts[0]
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name, call.arguments) == ("KikbB849t", "get_weather", '{"city": "Paris"}')
    assert first.message.parts == [call]  # the empty content is no text block
    assert (first.finish_reason, first.raw_finish_reason) == ("tool_calls", "tool_calls")
    assert (first.message.provider, first.message.api) == ("mistral", "mistral-chat")
    assert first.message.id == "1ecfb2eb89144df48968ae279308e0ee"
    assert first.usage == Usage(input_tokens=77, output_tokens=12, cache_read_tokens=76, requests=1)
    assert second.usage == Usage(
        input_tokens=100, output_tokens=29, cache_read_tokens=99, requests=1
    )
    assert (second.finish_reason, second.model) == ("stop", "mistral-large-latest")
    reply = result.messages[2]
    assert isinstance(reply, ToolResultMessage) and reply.call_id == "KikbB849t"


async def test_required_choice_with_parallel_calls() -> None:
    recorded = load_cassette(REQUIRED)
    interaction = recorded[0]
    with ReplayServer.from_cassette(REQUIRED) as server:
        completion = await connect(server).complete(
            "Get weather for Denver and summarize",
            tools=recorded_tools(interaction),
            tool_choice="required",
        )
    assert_requests_match(server, recorded)
    assert server.received[0].json["tool_choice"] == "any"
    assert [(c.id, c.name, c.args) for c in completion.tool_calls] == [
        ("ENXLc6EwO", "get_weather", {"city": "Denver"}),
        (
            "ujVp0kyuT",
            "final_result",
            {"city": "Denver", "summary": "Getting weather information..."},
        ),
    ]
    assert completion.text == ""
    assert completion.finish_reason == "tool_calls"
    assert completion.usage == Usage(input_tokens=212, output_tokens=33, requests=1)
    assert completion.raw.id == "d26dfef5878d43e795be3eecef97ce9d"  # the SDK's typed response


async def test_model_spec_resolves_to_the_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", "from-env")
    with ReplayServer.from_cassette(REQUIRED) as server:
        model = resolve("mistral:mistral-large-latest", base_url=server.base_url)
        assert isinstance(model, MistralModel)
        closing(model)
        await model.complete("hi")
    assert server.received[0].headers["authorization"] == "Bearer from-env"
    monkeypatch.delenv("MISTRAL_API_KEY")
    with pytest.raises(ValueError, match="MISTRAL_API_KEY"):
        MistralModel("mistral-large-latest")


# --- streaming, built from the recorded answers (recordings/mistral_streams.py) ----------------


@pytest.mark.parametrize(
    ("cassette", "index"), [(AUTO, 0), (AUTO, 1), (REQUIRED, 0)], ids=["calls", "text", "parallel"]
)
async def test_streaming_gives_the_same_completion(cassette: str, index: int) -> None:
    answer = load_cassette(cassette)[index].response_json
    replies = [Reply.of_json(200, answer), Reply.of_sse(stream_of(answer))]
    with ReplayServer(replies) as server:
        model = connect(server)
        whole = await model.complete("go")
        events = [e async for e in model.stream_complete("go")]
    assert server.received[1].json["stream"] is True
    done = events[-1]
    assert isinstance(done, CompletionDone)
    streamed = done.completion
    assert without_raw(streamed) == without_raw(whole)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == whole.text
    starts = [(e.index, e.id, e.name) for e in events if isinstance(e, ToolCallDelta)]
    assert starts == [(i, c.id, c.name) for i, c in enumerate(whole.tool_calls)]


async def test_streamed_calls_split_into_argument_pieces_are_joined() -> None:
    top = {"id": "s1", "object": "chat.completion.chunk", "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**top, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    first = {"id": "abcdefghi", "index": 0, "function": {"name": "f", "arguments": '{"a"'}}
    rest = {"index": 0, "function": {"name": "", "arguments": ": 1}"}}
    second = {"id": "jklmnopqr", "index": 1, "function": {"name": "g", "arguments": {"b": 2}}}
    stream = sse(
        [
            chunk({"tool_calls": [first]}),
            chunk({"tool_calls": [rest]}),
            chunk({"tool_calls": [second]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    with ReplayServer([Reply.of_sse(stream)]) as server:
        events = [e async for e in connect(server).stream_complete("go")]
    completion = events[-1].completion
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("abcdefghi", "f", '{"a": 1}'),
        ("jklmnopqr", "g", '{"b":2}'),
    ]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.index for d in deltas] == [0, 0, 1]


# --- the state Mistral replays ----------------------------------------------------------------


def _magistral_answer() -> dict[str, Any]:
    return {
        "id": "r-think",
        "object": "chat.completion",
        "model": "magistral-medium-latest",
        "created": 1,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": [{"type": "text", "text": "2+2 is 4."}]},
                        {"type": "text", "text": "4"},
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14},
    }


async def test_reasoning_goes_back_only_to_mistral_chat() -> None:
    replies = [Reply.of_json(200, _magistral_answer()), Reply.of_json(200, _magistral_answer())]
    with ReplayServer(replies) as server:
        model = connect(server, "magistral-medium-latest")
        first = await model.complete("2+2?")
        assert first.reasoning == "2+2 is 4." and first.text == "4"
        history = [UserMessage.of("2+2?"), first.message]
        foreign = AssistantMessage(
            parts=[ReasoningBlock("secret", provider_state={"signature": "x"}), TextBlock("hi")],
            provider="anthropic",
            api="messages",
        )
        await model.complete("and 3+3?", history=[*history, foreign])
    sent = server.received[1].json["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "2+2 is 4."}]},
            {"type": "text", "text": "4"},
        ],
        "prefix": False,
    }
    assert sent[2] == {"role": "assistant", "content": "hi", "prefix": False}


async def test_foreign_call_ids_are_rewritten_alike_in_call_and_result() -> None:
    history = [
        UserMessage.of("weather?"),
        AssistantMessage(
            parts=[
                ToolCallBlock("toolu_01ABC", "get_weather", '{"city": "Paris"}'),
                ToolCallBlock("call_x/y:1", "get_weather", '{"city": "Rome"}'),
            ],
            provider="anthropic",
        ),
        ToolResultMessage("toolu_01ABC", "get_weather", [TextPart("sunny")]),
        ToolResultMessage("call_x/y:1", "get_weather", [TextPart("rain")]),
    ]
    with ReplayServer([Reply.of_json(200, load_cassette(AUTO)[1].response_json)]) as server:
        await connect(server).complete(None, history=history)
    sent = server.received[0].json["messages"]
    ids = [c["id"] for c in sent[1]["tool_calls"]]
    assert ids == [wire_id("toolu_01ABC"), wire_id("call_x/y:1")]
    assert all(len(i) == 9 and i.isalnum() for i in ids) and ids[0] != ids[1]
    assert [sent[2]["tool_call_id"], sent[3]["tool_call_id"]] == ids
    assert wire_id("KikbB849t") == "KikbB849t"
    assert json.loads(sent[1]["tool_calls"][1]["function"]["arguments"]) == {"city": "Rome"}
