"""Mistral's Conversations API (native tools beside function tools) through the real `mistralai`
SDK against a local server that checks the request shape.

No recording of this API exists, so each answer is built from the SDK's own response models
(`ConversationResponse` and its entries) and serialised as the SDK would read it: the shapes are
the SDK's, not made up here.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mistralai.client import models as wire
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, tool
from toolwire.errors import (
    ModelResponseError,
    ModelStreamError,
    RetryableModelError,
    UnsupportedError,
)
from toolwire.messages import (
    AssistantMessage,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    UserMessage,
    dump_history,
    load_history,
)
from toolwire.models.base import CompletionDone, ModelRequest, TextDelta, ToolCallDelta, Usage
from toolwire.models.mistral import MistralModel
from toolwire.models.mistral_conversations import MistralConversationsModel

pytestmark = pytest.mark.anyio

WEB_SEARCH = {"type": "web_search"}


def connect(server: ReplayServer, cls: type[MistralModel] = MistralModel) -> MistralModel:
    return closing(cls("mistral-medium-latest", api_key="test-key", base_url=server.base_url))


def reply(*outputs: Any, connectors: dict[str, int] | None = None) -> Reply:
    response = wire.ConversationResponse(
        conversation_id="conv_1",
        outputs=list(outputs),
        usage=wire.ConversationUsageInfo(
            prompt_tokens=30, completion_tokens=12, total_tokens=42, connectors=connectors
        ),
    )
    return Reply.of_json(200, response.model_dump(mode="json", by_alias=True))


def searched() -> Reply:
    """Mistral ran a web search, then answered with a cited text."""
    return reply(
        wire.ToolExecutionEntry(
            id="tool_exec_1",
            name="web_search",
            arguments='{"query": "weather Paris"}',
            info={"results": 3},
        ),
        wire.MessageOutputEntry(
            id="msg_1",
            model="mistral-medium-2508",
            content=[
                wire.TextChunk(text="Sunny in Paris."),
                wire.ToolReferenceChunk(tool="web_search", title="Météo", url="https://meteo.fr"),
            ],
        ),
        connectors={"web_search": 1},
    )


def called() -> Reply:
    return reply(
        wire.FunctionCallEntry(
            tool_call_id="abcdefghi", name="get_weather", arguments='{"city": "Paris"}'
        )
    )


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"Sunny in {city}"


def search_request(*history: Any, tool_choice: Any = "auto") -> ModelRequest:
    request = ModelRequest.build(
        "Weather in Paris?", history=history, tools=[get_weather], tool_choice=tool_choice
    )
    request.native_tools = [WEB_SEARCH]
    return request


async def test_native_tools_go_through_conversations_with_function_tools() -> None:
    with ReplayServer([searched()]) as server:
        model = connect(server)
        completion = await model.send(search_request(SystemMessage("Be brief.")))
    sent = server.received[0]
    assert sent.path == "/v1/conversations"
    assert sent.headers["authorization"] == "Bearer test-key"
    function = get_weather.definition("openai")
    assert sent.json == {
        "inputs": [
            {
                "type": "message.input",
                "role": "user",
                "content": "Weather in Paris?",
                "object": "entry",
                "prefix": False,
            }
        ],
        "stream": False,
        "store": False,
        "instructions": "Be brief.",
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": function.description,
                    "parameters": function.parameters,
                    "strict": True,
                },
            },
            WEB_SEARCH,
        ],
        "completion_args": {"tool_choice": "auto"},
        "model": "mistral-medium-latest",
    }
    message = completion.message
    assert (message.provider, message.api, message.id) == (
        "mistral",
        "mistral-conversations",
        "conv_1",
    )
    call, result, text = message.parts
    assert isinstance(call, ServerToolCallBlock)
    assert (call.id, call.name, call.arguments) == (
        "tool_exec_1",
        "web_search",
        {"query": "weather Paris"},
    )
    assert isinstance(result, ServerToolResultBlock)
    assert (result.call_id, result.content) == ("tool_exec_1", {"results": 3})
    assert isinstance(text, TextBlock) and text.text == "Sunny in Paris."
    assert [(c.url, c.title) for c in text.citations] == [("https://meteo.fr", "Météo")]
    assert completion.usage == Usage(
        input_tokens=30, output_tokens=12, requests=1, server_tool_requests={"web_search": 1}
    )
    assert (completion.finish_reason, completion.model) == ("stop", "mistral-medium-2508")


async def test_the_conversation_is_sent_back_inline_with_its_own_entries() -> None:
    with ReplayServer(
        [searched(), called(), reply(wire.MessageOutputEntry(content="Done."))]
    ) as server:
        model = connect(server, MistralConversationsModel)
        first = await model.complete("Weather in Paris?", tools=[get_weather])
        foreign = AssistantMessage(
            parts=[
                ReasoningBlock("hidden", provider_state={"signature": "s"}),
                TextBlock("Hello."),
            ],
            provider="anthropic",
            api="messages",
        )
        history = [UserMessage.of("Weather in Paris?"), first.message, foreign]
        agent = Agent(model, tools=[get_weather])
        result = await agent.run("And now?", history=history)
    assert result.text == "Done."
    inputs = server.received[2].json["inputs"]
    assert [(e["type"], e.get("role")) for e in inputs] == [
        ("message.input", "user"),
        ("tool.execution", None),
        ("message.input", "assistant"),
        ("message.input", "assistant"),
        ("message.input", "user"),
        ("function.call", None),
        ("function.result", None),
    ]
    execution = inputs[1]
    assert (execution["id"], execution["name"], execution["info"]) == (
        "tool_exec_1",
        "web_search",
        {"results": 3},
    )
    assert inputs[2]["content"] == "Sunny in Paris."
    assert inputs[3]["content"] == "Hello."  # another provider's reasoning is left out
    assert inputs[5]["tool_call_id"] == inputs[6]["tool_call_id"] == "abcdefghi"
    assert json.loads(inputs[5]["arguments"]) == {"city": "Paris"}
    assert inputs[6]["result"] == "Sunny in Paris"
    turn = result.messages[4]
    assert isinstance(turn, AssistantMessage) and turn.api == "mistral-conversations"
    calls = [p for p in turn.parts if isinstance(p, ToolCallBlock)]
    assert [(c.id, c.name) for c in calls] == [("abcdefghi", "get_weather")]


async def test_forcing_a_tool_by_name_is_refused_before_any_request() -> None:
    with ReplayServer([called()]) as server:
        model = connect(server)
        with pytest.raises(UnsupportedError, match="cannot force a tool"):
            await model.send(search_request(tool_choice="get_weather"))
        request = search_request()
        request.settings.parallel_tool_calls = False
        with pytest.raises(UnsupportedError, match="parallel_tool_calls"):
            await model.send(request)
        assert server.received == []
        completion = await model.send(search_request(tool_choice="required"))
    assert server.received[0].json["completion_args"] == {"tool_choice": "any"}
    assert completion.finish_reason == "tool_calls"
    assert completion.message.api == "mistral-conversations"


async def test_settings_go_to_completion_args() -> None:
    with ReplayServer([searched()]) as server:
        request = search_request()
        request.settings.max_tokens = 99
        request.settings.seed = 3
        request.settings.extra = {"presence_penalty": 0.1, "metadata": {"run": "a"}}
        await connect(server).send(request)
    body = server.received[0].json
    assert body["completion_args"] == {
        "tool_choice": "auto",
        "max_tokens": 99,
        "random_seed": 3,
        "presence_penalty": 0.1,
    }
    assert body["metadata"] == {"run": "a"}


def event_stream(*events: Any) -> Reply:
    """An SSE body of SDK event models, each named by its type as the API names them."""
    dumped = [e.model_dump(mode="json", by_alias=True) for e in events]
    return Reply.of_sse(sse(dumped, named=[d["type"] for d in dumped]))


def streamed_search(done: bool = True) -> Reply:
    events: list[Any] = [
        wire.ResponseStartedEvent(conversation_id="conv_1"),
        wire.ToolExecutionStartedEvent(
            id="tool_exec_1", name="web_search", arguments='{"query": ', output_index=0
        ),
        wire.ToolExecutionDeltaEvent(
            id="tool_exec_1", name="web_search", arguments='"weather Paris"}', output_index=0
        ),
        wire.ToolExecutionDoneEvent(
            id="tool_exec_1", name="web_search", info={"results": 3}, output_index=0
        ),
        wire.MessageOutputEvent(
            id="msg_1", content="Sunny in ", output_index=1, model="mistral-medium-2508"
        ),
        wire.MessageOutputEvent(id="msg_1", content="Paris.", output_index=1),
        wire.MessageOutputEvent(
            id="msg_1",
            content=wire.ToolReferenceChunk(
                tool="web_search", title="Météo", url="https://meteo.fr"
            ),
            output_index=1,
        ),
        wire.FunctionCallEvent(
            id="fc_1",
            name="get_weather",
            tool_call_id="abcdefghi",
            arguments='{"city"',
            output_index=2,
        ),
        wire.FunctionCallEvent(
            id="fc_1",
            name="get_weather",
            tool_call_id="abcdefghi",
            arguments=': "Paris"}',
            output_index=2,
        ),
    ]
    if done:
        usage = wire.ConversationUsageInfo(
            prompt_tokens=30, completion_tokens=12, total_tokens=42, connectors={"web_search": 1}
        )
        events.append(wire.ResponseDoneEvent(usage=usage))
    return event_stream(*events)


async def test_a_streamed_conversation_folds_into_the_same_parts() -> None:
    with ReplayServer([streamed_search()]) as server:
        events = [e async for e in connect(server).send_stream(search_request())]
    assert server.received[0].path == "/v1/conversations"
    assert server.received[0].json["stream"] is True
    done = events[-1]
    assert isinstance(done, CompletionDone)
    message = done.completion.message
    assert [type(p).__name__ for p in message.parts] == [
        "ServerToolCallBlock",
        "ServerToolResultBlock",
        "TextBlock",
        "ToolCallBlock",
    ]
    call, result, text, function = message.parts
    assert isinstance(call, ServerToolCallBlock) and call.arguments == {"query": "weather Paris"}
    assert isinstance(result, ServerToolResultBlock) and result.content == {"results": 3}
    assert isinstance(text, TextBlock) and text.text == "Sunny in Paris."
    assert [c.url for c in text.citations] == ["https://meteo.fr"]
    assert isinstance(function, ToolCallBlock)
    assert (function.id, json.loads(function.arguments)) == ("abcdefghi", {"city": "Paris"})
    assert (message.api, message.id, message.model) == (
        "mistral-conversations",
        "conv_1",
        "mistral-medium-2508",
    )
    assert done.completion.usage.server_tool_requests == {"web_search": 1}
    assert done.completion.finish_reason == "tool_calls"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sunny in Paris."
    deltas = [(e.index, e.id, e.arguments) for e in events if isinstance(e, ToolCallDelta)]
    assert deltas == [(0, "abcdefghi", '{"city"'), (0, None, ': "Paris"}')]


async def test_broken_conversation_streams_and_http_errors() -> None:
    failed = event_stream(
        wire.ResponseStartedEvent(conversation_id="conv_1"),
        wire.ResponseErrorEvent(message="upstream failed", code=3000),
    )
    limited = Reply.of_json(429, {"message": "slow down"}, {"retry-after": "3"})
    with ReplayServer([streamed_search(done=False), failed, limited]) as server:
        model = connect(server)
        with anyio.fail_after(20):
            with pytest.raises(ModelResponseError, match="before the response was done"):
                _ = [e async for e in model.send_stream(search_request())]
            with pytest.raises(ModelStreamError, match="upstream failed") as stream_error:
                _ = [e async for e in model.send_stream(search_request())]
            with pytest.raises(RetryableModelError) as caught:
                await model.send(search_request())
    assert stream_error.value.code == "3000"
    assert (caught.value.status_code, caught.value.retry_after) == (429, 3.0)


async def test_state_goes_back_only_to_the_api_that_wrote_it() -> None:
    chunk = {"type": "thinking", "thinking": [{"type": "text", "text": "think"}]}
    chat_turn = AssistantMessage(
        parts=[ReasoningBlock("think", provider_state={"chunk": chunk}), TextBlock("Hi.")],
        provider="mistral",
        api="mistral-chat",
    )
    with ReplayServer([searched(), searched()]) as server:
        conversations = connect(server, MistralConversationsModel)
        first = await conversations.complete("hello", history=[UserMessage.of("q"), chat_turn])
        # A saved history round-trips; the Conversations turn's entries go back as they came.
        saved = load_history(dump_history([UserMessage.of("q"), first.message]))
        await conversations.complete("more", history=saved)
    first_inputs = server.received[0].json["inputs"]
    assert first_inputs[1] == {
        "type": "message.input",
        "role": "assistant",
        "content": "Hi.",  # the chat API's reasoning is not this API's to replay
        "object": "entry",
        "prefix": False,
    }
    second_inputs = server.received[1].json["inputs"]
    assert second_inputs[1]["type"] == "tool.execution" and second_inputs[1]["id"] == "tool_exec_1"
    with ReplayServer([Reply.of_json(200, _chat_answer())]) as server:
        chat = connect(server)
        await chat.complete("more", history=saved)
    sent = server.received[0].json["messages"]
    assert sent[1] == {"role": "assistant", "content": "Sunny in Paris.", "prefix": False}


def _chat_answer() -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "created": 1,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"content": "ok"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
