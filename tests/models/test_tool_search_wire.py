"""Native tool search through the real SDKs and a local server speaking each wire format:
Anthropic's tool search tool and OpenAI Responses' hosted `tool_search`. What goes out (deferred
definitions marked, the search tool, no reordering between requests) and what comes back (the
provider's search blocks, replayed verbatim in the next request; the found tool callable)."""

from __future__ import annotations

from typing import Any

import pytest
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, deferred, tool
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.tool_search import discovered_tools

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, subject: str) -> str:
    """Send an email."""
    return "sent"


TOOLS = [add, *deferred(get_weather, send_email)]

# --- Anthropic ---------------------------------------------------------------------------------

SEARCH_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_01",
    "name": "tool_search_tool_bm25",
    "input": {"query": "weather"},
}
SEARCH_RESULT = {
    "type": "tool_search_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}],
    },
}


def anthropic_message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 50, "output_tokens": 20},
    }


async def test_anthropic_native_search_round_trips_its_blocks() -> None:
    replies = [
        Reply.of_json(
            200,
            anthropic_message(
                [
                    SEARCH_USE,
                    SEARCH_RESULT,
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                ],
                "tool_use",
            ),
        ),
        Reply.of_json(200, anthropic_message([{"type": "text", "text": "Sunny."}], "end_turn")),
    ]
    with ReplayServer(replies) as server:
        model = closing(AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.base_url))
        result = await Agent(model, tools=TOOLS).run("Weather in Paris?")

    first, second = (r.json for r in server.received)
    assert first["tools"] == second["tools"]  # the same definitions, in the same order
    assert [(t.get("name"), t.get("defer_loading")) for t in first["tools"]] == [
        ("add", None),
        ("get_weather", True),
        ("send_email", True),
        ("tool_search_tool_bm25", None),
    ]
    assert first["tools"][-1]["type"] == "tool_search_tool_bm25_20251119"
    # Generally available: sent without a beta header or the beta query.
    assert "anthropic-beta" not in server.received[0].headers
    assert server.received[0].query == ""
    assistant = second["messages"][1]
    assert assistant["content"][:2] == [SEARCH_USE, SEARCH_RESULT]
    answer = second["messages"][2]["content"][0]
    assert answer["type"] == "tool_result" and answer["tool_use_id"] == "toolu_01"
    assert "sunny in Paris" in str(answer["content"])
    assert result.text == "Sunny."
    assert discovered_tools(result.messages) == ["get_weather"]


# --- OpenAI Responses ------------------------------------------------------------------------

SEARCH_CALL = {
    "type": "tool_search_call",
    "id": "tsc_1",
    "call_id": None,
    "execution": "server",
    "status": "completed",
    "arguments": {"paths": ["get_weather"]},
}
SEARCH_OUTPUT = {
    "type": "tool_search_output",
    "id": "tso_1",
    "call_id": None,
    "execution": "server",
    "status": "completed",
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "strict": True,
            "defer_loading": True,
        }
    ],
}


def response(output: list[dict[str, Any]], response_id: str) -> dict[str, Any]:
    return {
        "id": response_id,
        "object": "response",
        "model": "gpt-5.4",
        "status": "completed",
        "output": output,
        "usage": {"input_tokens": 40, "output_tokens": 10},
        "error": None,
        "incomplete_details": None,
    }


async def test_responses_hosted_search_round_trips_its_items() -> None:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "status": "completed",
    }
    text = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
    }
    replies = [
        Reply.of_json(200, response([SEARCH_CALL, SEARCH_OUTPUT, call], "resp_1")),
        Reply.of_json(200, response([text], "resp_2")),
    ]
    with ReplayServer(replies) as server:
        model = closing(
            OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=server.base_url + "/v1")
        )
        result = await Agent(model, tools=TOOLS).run("Weather in Paris?")

    first, second = (r.json for r in server.received)
    assert first["tools"] == second["tools"]
    assert [(t.get("name"), t.get("defer_loading")) for t in first["tools"]] == [
        ("add", None),
        ("get_weather", True),
        ("send_email", True),
        (None, None),
    ]
    assert first["tools"][-1] == {"type": "tool_search"}
    items = second["input"]
    assert SEARCH_CALL in items and SEARCH_OUTPUT in items
    assert items.index(SEARCH_CALL) < items.index(SEARCH_OUTPUT)
    output = next(i for i in items if i.get("type") == "function_call_output")
    assert output["call_id"] == "call_1" and output["output"] == "sunny in Paris"
    assert result.text == "Sunny."
    assert discovered_tools(result.messages) == ["get_weather"]


async def test_responses_before_gpt_5_4_gets_the_local_search_tool() -> None:
    replies = [Reply.of_json(200, response([], "resp_1"))]
    with ReplayServer(replies) as server:
        model = closing(
            OpenAIResponsesModel("gpt-4o", api_key="k", base_url=server.base_url + "/v1")
        )
        await Agent(model, tools=TOOLS).run("?")
    sent = server.received[0].json["tools"]
    assert [t["name"] for t in sent] == ["add", "search_tools"]
    assert all("defer_loading" not in t for t in sent)


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


async def test_anthropic_native_search_streamed_keeps_its_blocks() -> None:
    started = event(
        "message_start",
        message={
            "id": "msg_s",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 50, "output_tokens": 1},
        },
    )
    use = {**SEARCH_USE, "input": {}}
    call = {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}}
    events = [
        started,
        event("content_block_start", index=0, content_block=use),
        event(
            "content_block_delta",
            index=0,
            delta={"type": "input_json_delta", "partial_json": '{"query": "weather"}'},
        ),
        event("content_block_stop", index=0),
        event("content_block_start", index=1, content_block=SEARCH_RESULT),
        event("content_block_stop", index=1),
        event("content_block_start", index=2, content_block=call),
        event(
            "content_block_delta",
            index=2,
            delta={"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        ),
        event("content_block_stop", index=2),
        event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
        event("message_stop"),
    ]
    answer = [
        started,
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Sunny."}),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 3}),
        event("message_stop"),
    ]
    replies = [
        Reply.of_sse(sse(events, named=[e["type"] for e in events])),
        Reply.of_sse(sse(answer, named=[e["type"] for e in answer])),
    ]
    with ReplayServer(replies) as server:
        model = closing(AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.base_url))
        async with Agent(model, tools=TOOLS).run_stream("Weather in Paris?") as stream:
            async for _ in stream:
                pass
        result = stream.result

    assert discovered_tools(result.messages) == ["get_weather"]
    second = server.received[1].json
    assert second["messages"][1]["content"][:2] == [SEARCH_USE, SEARCH_RESULT]
    assert result.text == "Sunny."
