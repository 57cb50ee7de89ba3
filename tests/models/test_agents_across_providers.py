"""Agents of different providers working together, through the real SDKs and local servers
speaking each wire format: an Anthropic agent hands the conversation to a Gemini agent, and an
OpenAI agent calls an Anthropic agent as a tool. Each provider gets a history it accepts: its own
opaque state back, none of the other's."""

from __future__ import annotations

from typing import Any

import pytest

from recordings.replay import ReplayServer, Reply
from toolwire import Agent, ToolResultMessage, tool
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.google import gemini
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio


@tool
def order_status(order: str) -> str:
    """The status of an order."""
    return f"order {order}: shipped"


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
            "usage": {"input_tokens": 20, "output_tokens": 5},
        },
    )


def gemini_answer(parts: list[dict[str, Any]]) -> Reply:
    return Reply.of_json(
        200,
        {
            "candidates": [
                {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 30,
                "candidatesTokenCount": 7,
                "totalTokenCount": 37,
            },
            "modelVersion": "gemini-test",
        },
    )


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
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
        },
    )


async def test_an_anthropic_agent_hands_the_conversation_to_a_gemini_agent() -> None:
    anthropic_replies = [
        messages_answer(
            [
                {"type": "thinking", "thinking": "Orders go to support.", "signature": "sig-a"},
                {"type": "tool_use", "id": "toolu_1", "name": "transfer_to_support", "input": {}},
            ],
            "tool_use",
        )
    ]
    gemini_replies = [
        gemini_answer(
            [
                {
                    "functionCall": {"name": "order_status", "args": {"order": "A1"}},
                    "thoughtSignature": "c2lnLWdlbWluaQ==",
                }
            ]
        ),
        gemini_answer([{"text": "Order A1 has shipped."}]),
        gemini_answer([{"text": "You are welcome."}]),
    ]
    with ReplayServer(anthropic_replies) as an, ReplayServer(gemini_replies) as ge:
        claude = AnthropicModel("claude-test", api_key="k", base_url=an.base_url)
        flash = gemini("gemini-test", api_key="k", base_url=ge.base_url)
        async with claude, flash:
            support = Agent(
                flash, name="support", instructions="You track orders.", tools=[order_status]
            )
            triage = Agent(claude, name="triage", instructions="Route.", handoffs=[support])
            result = await triage.run("Where is order A1?")
            later = await triage.run("Thanks!", history=result.messages)
    assert an.mismatches == [] and ge.mismatches == []
    assert result.text == "Order A1 has shipped."
    assert result.agent == "support" and result.agent_path == ["triage", "support"]
    assert result.usage_by_agent["triage"].input_tokens == 20
    assert result.usage_by_agent["support"].input_tokens == 60
    assert later.text == "You are welcome." and later.agent == "support"
    assert len(an.received) == 1  # the follow-up went to the agent that had the conversation

    first = ge.received[0].json
    # Gemini got its own instructions, the transfer as a plain call and result, and nothing of
    # Anthropic's signed thinking.
    assert first["systemInstruction"]["parts"][0]["text"] == "You track orders."
    assert "sig-a" not in str(first) and "Orders go to support." not in str(first)
    parts = [p for c in first["contents"] for p in c["parts"]]
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    assert [(c["name"], c["args"]) for c in calls] == [("transfer_to_support", {})]
    assert any("functionResponse" in p for p in parts)
    assert [d["name"] for t in first["tools"] for d in t["functionDeclarations"]] == [
        "order_status"
    ]
    # Its own thought signature went back to it with its call.
    second = ge.received[1].json
    signed = {
        p["functionCall"]["name"]: p["thoughtSignature"]
        for c in second["contents"]
        for p in c["parts"]
        if "functionCall" in p
    }
    assert signed["order_status"] == "c2lnLWdlbWluaQ=="
    # Anthropic's call carries the placeholder Gemini takes for calls it did not sign.
    assert signed["transfer_to_support"] != "sig-a"


async def test_an_openai_agent_calls_an_anthropic_agent_as_a_tool() -> None:
    anthropic_replies = [
        messages_answer(
            [
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "order_status",
                    "input": {"order": "B2"},
                }
            ],
            "tool_use",
        ),
        messages_answer([{"type": "text", "text": "B2 shipped yesterday."}], "end_turn"),
    ]
    openai_replies = [
        chat_answer(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "orders", "arguments": '{"input": "Status of B2?"}'},
                    }
                ],
            },
            "tool_calls",
        ),
        chat_answer({"content": "Your order B2 shipped yesterday."}, "stop"),
    ]
    with ReplayServer(anthropic_replies) as an, ReplayServer(openai_replies) as oa:
        claude = AnthropicModel("claude-test", api_key="k", base_url=an.base_url)
        gpt = chat_model("openai", "gpt-test", api_key="k", base_url=oa.base_url + "/v1")
        async with claude, gpt:
            orders = Agent(claude, name="orders", tools=[order_status])
            front = Agent(gpt, name="front", tools=[orders.as_tool(description="Order desk.")])
            result = await front.run("Where is B2?")
    assert an.mismatches == [] and oa.mismatches == []
    assert result.text == "Your order B2 shipped yesterday."
    # The sub-agent got only the prompt the calling model wrote.
    assert an.received[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Status of B2?"}]}
    ]
    # The caller's model read the sub-agent's answer as the call's result.
    follow_up = oa.received[1].json["messages"]
    assert follow_up[-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "B2 shipped yesterday.",
    }
    tool_def = oa.received[0].json["tools"][0]["function"]
    assert tool_def["name"] == "orders" and tool_def["description"] == "Order desk."
    assert {k: (u.input_tokens, u.output_tokens) for k, u in result.usage_by_agent.items()} == {
        "front": (22, 6),
        "orders": (40, 10),
    }
    assert result.usage.input_tokens == 62
    answer = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert answer.text == "B2 shipped yesterday."
    assert [c.name for c in result.trace[0].children] == ["order_status"]
