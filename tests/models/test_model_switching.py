"""One conversation across providers and wire APIs: OpenAI -> Anthropic -> OpenAI through the real
SDKs and a local server. Each adapter replays only the state its own provider's API wrote, keeps the
text and tool calls of every other turn, and every request it sends is one its provider accepts
(every call answered, ids it takes, no foreign opaque state)."""

from __future__ import annotations

from typing import Any

import pytest

from recordings.replay import ReplayServer, Reply
from toolwire import Agent, tool
from toolwire.messages import (
    AssistantMessage,
    ReasoningBlock,
    TextBlock,
    ToolCallBlock,
    UserMessage,
    dump_history,
    load_history,
)
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def chat_answer(message: dict[str, Any], finish: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [
                {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


def messages_answer(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    )


DETAILS = [{"type": "reasoning.encrypted", "data": "opaque-openai-state"}]


def assert_chat_history_valid(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered by a tool message before the next assistant turn."""
    open_ids: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            assert not open_ids, f"unanswered calls {open_ids}"
            open_ids = {c["id"] for c in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            open_ids.remove(message["tool_call_id"])
    assert not open_ids


async def test_openai_then_anthropic_then_openai() -> None:
    openai_replies = [
        chat_answer(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_abc",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                    }
                ],
                "reasoning_details": DETAILS,
            },
            "tool_calls",
        ),
        chat_answer({"content": "1 + 2 = 3."}, "stop"),
        chat_answer({"content": "All done: 3 and 7."}, "stop"),
    ]
    anthropic_replies = [
        messages_answer(
            [
                {"type": "thinking", "thinking": "Add again.", "signature": "sig-anthropic"},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 3, "b": 4}},
            ],
            "tool_use",
        ),
        messages_answer([{"type": "text", "text": "3 + 4 = 7."}], "end_turn"),
    ]
    with ReplayServer(openai_replies) as oa, ReplayServer(anthropic_replies) as an:
        gpt = chat_model("openai", "gpt-test", api_key="k", base_url=oa.base_url + "/v1")
        claude = AnthropicModel("claude-test", api_key="k", base_url=an.base_url)
        async with gpt, claude:
            first = await Agent(gpt, tools=[add]).run("Add 1 and 2.")
            # The history goes through JSON between providers, as a stored conversation would.
            history = load_history(dump_history(first.messages))
            second = await Agent(claude, tools=[add]).run("Now 3 and 4.", history=history)
            third = await Agent(gpt, tools=[add]).run("Sum up.", history=second.messages)
    assert oa.mismatches == [] and an.mismatches == []
    assert third.text == "All done: 3 and 7."

    turns = [m for m in third.messages if isinstance(m, AssistantMessage)]
    assert [(t.provider, t.api) for t in turns] == [
        ("openai", "chat-completions"),
        ("openai", "chat-completions"),
        ("anthropic", "messages"),
        ("anthropic", "messages"),
        ("openai", "chat-completions"),
    ]

    # Anthropic got OpenAI's call and result as plain blocks, and none of OpenAI's state.
    to_claude = an.received[0].json
    assert "opaque-openai-state" not in str(to_claude)
    blocks = [b for m in to_claude["messages"] for b in m["content"] if isinstance(b, dict)]
    assert {
        "type": "tool_use",
        "id": "call_abc",
        "name": "add",
        "input": {"a": 1, "b": 2},
    } in blocks
    assert any(b.get("type") == "tool_result" and b["tool_use_id"] == "call_abc" for b in blocks)
    # Its own thinking went back to it on the follow-up, signature unchanged.
    follow_up = an.received[1].json["messages"]
    assert {"type": "thinking", "thinking": "Add again.", "signature": "sig-anthropic"} in [
        b for m in follow_up if m["role"] == "assistant" for b in m["content"]
    ]

    # Back on OpenAI: its own reasoning state replayed, Anthropic's thinking not sent at all.
    to_gpt = oa.received[2].json["messages"]
    assert_chat_history_valid(to_gpt)
    assert "sig-anthropic" not in str(to_gpt) and "Add again." not in str(to_gpt)
    assistants = [m for m in to_gpt if m["role"] == "assistant"]
    assert assistants[0]["reasoning_details"] == DETAILS
    assert assistants[2]["tool_calls"][0]["id"] == "toolu_1"
    assert all("reasoning_details" not in m for m in assistants[2:])


async def test_a_turn_of_another_api_of_the_same_provider_is_not_replayed() -> None:
    # Written by OpenAI's Responses API: the Chat Completions adapter must not send its opaque
    # state (encrypted reasoning, item fields), only its text and calls.
    responses_turn = AssistantMessage(
        parts=[
            ReasoningBlock("thinking", provider_state={"encrypted_content": "gAAA-responses"}),
            TextBlock("Let me add.", provider_state={"item_id": "msg_1"}),
            ToolCallBlock(
                id="call_r", name="add", arguments='{"a": 1, "b": 1}', provider_state={"id": "fc_1"}
            ),
        ],
        provider="openai",
        api="responses",
        provider_state={"fields": {"reasoning_details": DETAILS}},
    )
    chat_turn = AssistantMessage(
        parts=[TextBlock("Done.")],
        provider="openai",
        api="chat-completions",
        provider_state={"fields": {"reasoning_details": DETAILS}},
    )
    model = chat_model("openai", "gpt-test", api_key="k", base_url="http://127.0.0.1:9/v1")
    wire = model.wire_messages([UserMessage.of("hi"), responses_turn, chat_turn])
    assert wire[1] == {
        "role": "assistant",
        "content": "Let me add.",
        "tool_calls": [
            {
                "id": "call_r",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 1}'},
            }
        ],
    }
    # The same provider and API: the turn's own state goes back.
    assert wire[2]["reasoning_details"] == DETAILS
    # A turn saved before turns recorded their API is matched on the provider alone.
    legacy = AssistantMessage(
        parts=[TextBlock("Old.")],
        provider="openai",
        provider_state={"fields": {"reasoning_details": DETAILS}},
    )
    assert model.wire_messages([legacy])[0]["reasoning_details"] == DETAILS
    await model.aclose()
