"""OpenAI's and Azure's Chat Completions models with a native tool: the request goes through the
Responses API by itself (same client and credentials), requests without one stay on Chat, each
API replays only what it wrote, and `native_tools_via_responses=False` refuses instead.

Real SDK clients against a local server: the recorded Responses web search
(`openai_responses/test_openai_responses_model_builtin_tools_web_search.yaml`) followed by a
scripted Chat Completions answer on the same server.
"""

from __future__ import annotations

from typing import Any

import pytest
from model_servers import closing
from test_openai_responses import DIR, assert_requests_match

from recordings.replay import ReplayServer, Reply, load_cassette
from toolwire import Agent, UnsupportedError, code_execution, model, web_search
from toolwire.messages import AssistantMessage, ServerToolCallBlock
from toolwire.models.azure import azure
from toolwire.models.base import ModelRequest, forbid_model_requests
from toolwire.models.openai_chat import OpenAIChatModel
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio

CASSETTE = DIR + "test_openai_responses_model_builtin_tools_web_search.yaml"
PROMPT = "Give me the top 3 news in the world today"


def chat_answer(text: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-5",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


def responses_answer(text: str) -> Reply:
    item = {
        "type": "message",
        "id": "msg_9",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    body = {
        "id": "resp_9",
        "object": "response",
        "model": "gpt-5",
        "status": "completed",
        "output": [item],
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "error": None,
    }
    return Reply.of_json(200, body)


def chat(server: ReplayServer, **options: Any) -> OpenAIChatModel:
    return closing(
        chat_model("openai", "gpt-5", api_key="k", base_url=server.base_url + "/v1", **options)
    )


async def test_a_native_tool_goes_through_responses_and_the_next_plain_turn_through_chat() -> None:
    recorded = load_cassette(CASSETTE)
    replies = [Reply(i.status, i.body, i.headers, expect_path=i.path) for i in recorded]
    with ReplayServer([*replies, chat_answer("And Brazil: carnival.")]) as server:
        gpt = chat(server)
        first = await gpt.complete(PROMPT, tools=[web_search()])
        follow = await gpt.complete(
            "And in Brazil?", history=[ModelRequest.build(PROMPT).messages[0], first.message]
        )
    # The first request is the recorded Responses request, through the same client.
    assert [r.path for r in server.received] == ["/v1/responses", "/v1/chat/completions"]
    server.received, server.replies = server.received[:1], server.replies[:1]
    assert_requests_match(server, recorded[:1])
    assert (first.message.provider, first.message.api) == ("openai", "responses")
    assert len(first.server_tool_calls) == 6
    assert first.usage.server_tool_requests == {"web_search": 6}
    assert (follow.message.provider, follow.message.api) == ("openai", "chat-completions")


async def test_chat_replays_only_what_it_owns_and_responses_gets_its_items_back() -> None:
    recorded = load_cassette(CASSETTE)
    output = recorded[0].response_json["output"]
    replies = [Reply(i.status, i.body, i.headers) for i in recorded]
    with ReplayServer([*replies, chat_answer("Carnival."), responses_answer("Done.")]) as server:
        gpt = chat(server)
        agent = Agent(gpt, tools=[web_search()])
        first = await agent.run(PROMPT)
        second = await Agent(gpt).run("And in Brazil?", history=first.messages)
        third = await agent.run("Anything else?", history=second.messages)
    assert server.mismatches == []
    turns = [m for m in third.messages if isinstance(m, AssistantMessage)]
    # The run's trace says which API answered each turn.
    assert [t.api for t in turns] == ["responses", "chat-completions", "responses"]
    to_chat = server.received[1].json["messages"]
    assert server.received[1].path == "/v1/chat/completions"
    # Chat gets the Responses turn's text, none of its reasoning or search items.
    assert [m["role"] for m in to_chat] == ["user", "assistant", "user"]
    assert "web_search_call" not in str(to_chat) and "encrypted_content" not in str(to_chat)
    # Back on Responses: the search items go back verbatim, the Chat turn as plain text.
    to_responses = server.received[2].json["input"]
    assert server.received[2].path == "/v1/responses"
    assert to_responses[1:14] == output[:13]
    assert to_responses[-2] == {"role": "assistant", "content": "Carnival."}
    assert server.received[2].json["tools"] == [{"type": "web_search"}]


async def test_streaming_routes_the_same_way() -> None:
    body = (
        "event: response.completed\n"
        'data: {"type": "response.completed", "response": {"id": "resp_1", "object": "response",'
        ' "model": "gpt-5", "status": "completed", "output": [{"type": "message", "id": "m1",'
        ' "role": "assistant", "status": "completed", "content": [{"type": "output_text",'
        ' "text": "Hi.", "annotations": []}]}], "usage": {"input_tokens": 1,'
        ' "output_tokens": 1}}}\n\n'
    )
    with ReplayServer([Reply.of_sse(body)]) as server:
        gpt = chat(server)
        events = [e async for e in gpt.stream_complete("Hi", tools=[code_execution()])]
    done = events[-1]
    assert server.received[0].path == "/v1/responses"
    assert server.received[0].json["tools"] == [
        {"type": "code_interpreter", "container": {"type": "auto"}}
    ]
    assert done.completion.message.api == "responses"


async def test_a_forced_native_tool_is_forced_the_responses_way() -> None:
    with ReplayServer([responses_answer("ok")]) as server:
        gpt = chat(server)
        await gpt.complete("News?", tools=[web_search()], tool_choice="web_search")
    assert server.received[0].json["tool_choice"] == {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": "web_search"}],
    }


async def test_one_api_only_refuses_before_any_request() -> None:
    gpt = model("openai:gpt-5", api_key="k", native_tools_via_responses=False)
    assert isinstance(gpt, OpenAIChatModel)
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await gpt.complete("News?", tools=[web_search()])
    assert "native_tools_via_responses=False" in str(caught.value)
    assert "openai-responses:" in str(caught.value)


async def test_raw_tool_payloads_stay_on_chat() -> None:
    # A raw dict is the caller's own wire entry, not a spec: it goes where the model goes.
    with ReplayServer([chat_answer("ok")]) as server:
        gpt = chat(server)
        request = ModelRequest.build("Hi")
        request.native_tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
        await gpt.send(request)
    assert server.received[0].path == "/v1/chat/completions"


async def test_a_tool_the_responses_api_lacks_is_refused_by_name() -> None:
    from toolwire import web_fetch

    gpt = OpenAIChatModel("gpt-5", api_key="k")
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await gpt.complete("Read it", tools=[web_fetch()])
    assert "cannot take web_fetch()" in str(caught.value)


async def test_azure_chat_sends_native_tools_to_the_v1_responses_route() -> None:
    with ReplayServer([responses_answer("ok"), chat_answer("plain")]) as server:
        deployment = closing(
            azure("my-gpt", endpoint=server.base_url, api_key="az-key", api_version="2024-10-21")
        )
        routed = await deployment.complete("News?", tools=[web_search()])
        plain = await deployment.complete("Hi")
    first, second = server.received
    assert first.path == "/openai/v1/responses" and "api-version" not in first.query
    assert first.headers["api-key"] == "az-key" and first.json["model"] == "my-gpt"
    assert second.path == "/openai/deployments/my-gpt/chat/completions"
    assert "api-version=2024-10-21" in second.query
    assert (routed.message.provider, routed.message.api) == ("azure", "responses")
    assert plain.message.api == "chat-completions"


async def test_azure_one_api_only() -> None:
    deployment = azure(
        "my-gpt",
        endpoint="https://example.invalid",
        api_key="k",
        api_version="2024-10-21",
        native_tools_via_responses=False,
    )
    with forbid_model_requests(), pytest.raises(UnsupportedError):
        await deployment.complete("News?", tools=[web_search()])


def test_the_routed_turns_server_blocks_are_the_responses_ones() -> None:
    # A Chat model never claims the Responses turns' state for itself.
    gpt = OpenAIChatModel("gpt-5", api_key="k")
    turn = AssistantMessage(
        [ServerToolCallBlock("ws_1", "web_search", {}, provider_state={"item": {}})],
        provider="openai",
        api="responses",
    )
    assert not gpt.owns(turn) and gpt.responses_model().owns(turn)
