"""One OpenAI conversation across its two wire APIs: Responses -> Chat Completions -> Responses,
through the real SDK and a local server. Same provider, different APIs: each adapter replays only
the state its own API wrote (`ModelBase.owns` checks provider and API), so Responses reasoning
items and item ids never reach Chat Completions, Chat's reasoning fields never reach Responses, and
every call keeps its result."""

from __future__ import annotations

from typing import Any

import pytest

from recordings.replay import ReplayServer, Reply
from toolwire import Agent, tool
from toolwire.messages import AssistantMessage, dump_history, load_history
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio

ENCRYPTED = "gAAAA-opaque-reasoning-state"
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Use the adder."}],
    "encrypted_content": ENCRYPTED,
}
CHAT_STATE = [{"type": "reasoning.encrypted", "data": "chat-only-state"}]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def responses_answer(output: list[dict[str, Any]], response_id: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": response_id,
            "object": "response",
            "model": "gpt-5",
            "status": "completed",
            "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "error": None,
        },
    )


def chat_answer(message: dict[str, Any], finish: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-5",
            "choices": [
                {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


def text(value: str, item_id: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


async def test_responses_then_chat_then_responses() -> None:
    responses_replies = [
        responses_answer(
            [
                REASONING,
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_r1",
                    "name": "add",
                    "arguments": '{"a": 1, "b": 2}',
                },
            ],
            "resp_1",
        ),
        responses_answer([text("1 + 2 = 3.", "msg_1")], "resp_2"),
        responses_answer([text("All done: 3 and 7.", "msg_3")], "resp_3"),
    ]
    chat_replies = [
        chat_answer(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_c1",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 3, "b": 4}'},
                    }
                ],
                "reasoning_details": CHAT_STATE,
            },
            "tool_calls",
        ),
        chat_answer({"content": "3 + 4 = 7."}, "stop"),
    ]
    with ReplayServer(responses_replies) as rs, ReplayServer(chat_replies) as cs:
        responses = OpenAIResponsesModel("gpt-5", api_key="k", base_url=rs.base_url + "/v1")
        chat = chat_model("openai", "gpt-5", api_key="k", base_url=cs.base_url + "/v1")
        async with responses, chat:
            first = await Agent(responses, tools=[add]).run("Add 1 and 2.")
            history = load_history(dump_history(first.messages))
            second = await Agent(chat, tools=[add]).run("Now 3 and 4.", history=history)
            third = await Agent(responses, tools=[add]).run("Sum up.", history=second.messages)
    assert rs.mismatches == [] and cs.mismatches == []
    assert third.text == "All done: 3 and 7."
    turns = [m for m in third.messages if isinstance(m, AssistantMessage)]
    assert [(t.provider, t.api) for t in turns] == [
        ("openai", "responses"),
        ("openai", "responses"),
        ("openai", "chat-completions"),
        ("openai", "chat-completions"),
        ("openai", "responses"),
    ]

    # Chat Completions got the Responses turn's call and result, and none of its item state.
    to_chat = cs.received[0].json["messages"]
    assert ENCRYPTED not in str(to_chat) and "rs_1" not in str(to_chat)
    assert "fc_1" not in str(to_chat) and "msg_1" not in str(to_chat)
    assert "Use the adder." not in str(to_chat)
    calls = [m for m in to_chat if m["role"] == "assistant" and m.get("tool_calls")]
    assert calls[0]["tool_calls"][0]["id"] == "call_r1"
    assert {"role": "tool", "tool_call_id": "call_r1", "content": "3"} in to_chat
    assert cs.received[1].json["messages"][-2]["reasoning_details"] == CHAT_STATE

    # Back on Responses: its own items replayed unchanged, the Chat turns as plain items.
    to_responses = rs.received[2].json["input"]
    assert "chat-only-state" not in str(to_responses)
    assert to_responses[1] == REASONING
    assert to_responses[2]["id"] == "fc_1" and to_responses[2]["call_id"] == "call_r1"
    assert to_responses[4]["id"] == "msg_1"
    from_chat = [i for i in to_responses if i.get("call_id") == "call_c1"]
    assert from_chat == [
        {
            "type": "function_call",
            "call_id": "call_c1",
            "name": "add",
            "arguments": '{"a": 3, "b": 4}',
        },
        {"type": "function_call_output", "call_id": "call_c1", "output": "7"},
    ]
    assert {"role": "assistant", "content": "3 + 4 = 7."} in to_responses
