"""The Chat Completions adapter against every recorded conversation (openai_chat, groq, deepseek,
openrouter, ollama), replayed by a local server that the real `openai` SDK talks to.

Each test makes toolwire hold the same conversation the recording had, then checks the request
bodies it sent against the recorded ones and what it parsed from the recorded answers.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from model_servers import closing

from recordings.replay import Interaction, ReplayServer, Reply, load_cassette
from toolwire import Agent, tool
from toolwire.messages import (
    AssistantMessage,
    Message,
    ReasoningBlock,
    SystemMessage,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from toolwire.models.openai_chat import ModelStreamError, OpenAIChatModel
from toolwire.models.providers import chat_model
from toolwire.tools import Tool, as_tool

pytestmark = pytest.mark.anyio

# The path prefix each provider's real base URL has, so the replayed paths line up.
_PREFIX = {"groq": "/openai/v1", "openrouter": "/api/v1", "deepseek": "", "ollama": "/v1"}


def make_model(provider: str, name: str, server: ReplayServer, **options: Any) -> OpenAIChatModel:
    """A preset's model pointed at the replay server (closed after the test)."""
    base = server.base_url + _PREFIX.get(provider, "/v1")
    return closing(chat_model(provider, name, api_key="test-key", base_url=base, **options))


# --- comparing request bodies -------------------------------------------------------------------


def _schema(node: Any) -> Any:
    # `required` is a set: its order, and an empty list against no list, carry no meaning.
    if isinstance(node, dict):
        out = {k: _schema(v) for k, v in node.items() if not (k == "required" and not v)}
        if isinstance(out.get("required"), list):
            out["required"] = sorted(out["required"])
        return out
    if isinstance(node, list):
        return [_schema(v) for v in node]
    return node


def normalise(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with what carries no meaning taken out.

    `n: 1` is the default; an assistant turn's `content: null` equals no content. The
    `prompt_cache_key` toolwire's caching policy adds to long requests is not in the recordings
    (tests/models/test_prompt_cache.py pins it).
    """
    body = copy.deepcopy(body)
    body.pop("prompt_cache_key", None)
    if body.get("n") == 1:
        del body["n"]
    for message in body.get("messages", []):
        if message.get("content", "") is None:
            del message["content"]
    if "tools" in body:
        body["tools"] = _schema(body["tools"])
    return body


def assert_requests_match(server: ReplayServer, recorded: list[Interaction]) -> None:
    assert server.mismatches == []
    assert len(server.received) == len(recorded)
    for sent, expected in zip(server.received, recorded, strict=True):
        assert normalise(sent.json) == normalise(expected.request_json)


# --- folding a recorded stream into the equivalent non-streamed answer ------------------------


def fold_stream(raw: bytes) -> dict[str, Any]:
    """The `chat.completion` object a recorded SSE stream amounts to (written independently of
    the adapter, to check that streaming and non-streaming give the same `Completion`)."""
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    calls: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {"object": "chat.completion", "choices": []}
    finish = None
    for line in raw.decode().splitlines():
        if not line.startswith("data: {"):
            continue
        chunk = json.loads(line[len("data: ") :])
        out.setdefault("id", chunk.get("id"))
        out.setdefault("model", chunk.get("model"))
        if chunk.get("usage"):
            out["usage"] = chunk["usage"]
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            message["content"] += delta.get("content") or ""
            for field in ("reasoning_content", "reasoning"):
                if delta.get(field):
                    message[field] = message.get(field, "") + delta[field]
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    call["index"], {"type": "function", "function": {"arguments": ""}}
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                function = call.get("function") or {}
                if function.get("name"):
                    slot["function"]["name"] = function["name"]
                slot["function"]["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    out["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    return out


def without_raw(completion: Completion) -> Completion:
    return Completion(
        message=completion.message,
        usage=completion.usage,
        finish_reason=completion.finish_reason,
        raw_finish_reason=completion.raw_finish_reason,
        model=completion.model,
    )


async def collect(model: OpenAIChatModel, **kwargs: Any) -> tuple[list[Any], Completion]:
    events = [e async for e in model.stream_complete(None, **kwargs)]
    done = events[-1]
    assert isinstance(done, CompletionDone)
    assert not any(isinstance(e, CompletionDone) for e in events[:-1])
    return events[:-1], done.completion


def recorded_tools(interaction: Interaction) -> list[Tool]:
    """Schema-only tools with exactly the recorded definitions (and strictness)."""
    out: list[Tool] = []
    for spec in interaction.request_json.get("tools", []):
        function = spec["function"]
        out.append(as_tool({**function, "strict": bool(function.get("strict"))}))
    return out


# --- openai_chat ------------------------------------------------------------------------------


async def test_openai_parallel_calls_through_the_agent() -> None:
    cassette = "openai_chat/test_temporal_agent_with_hitl_tool.yaml"
    recorded = load_cassette(cassette)
    ran: list[tuple[str, str]] = []

    @tool
    def create_file(path: str) -> str:
        ran.append(("create", path))
        return "Success"

    @tool
    def delete_file(path: str) -> bool:
        ran.append(("delete", path))
        return True

    completions: list[Completion] = []
    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(
            make_model("openai", "gpt-4o", server),
            instructions="Just call tools without asking for confirmation.",
            tools=[create_file, delete_file],
            subscribers=[
                lambda e: completions.append(e.completion) if e.type == "model.response" else None
            ],
        )
        result = await agent.run("Delete the file `.env` and create `test.txt`")
    assert_requests_match(server, recorded)
    assert sorted(ran) == [("create", "test.txt"), ("delete", ".env")]
    first, last = completions
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("call_jYdIdRZHxZTn5bWCq5jlMrJi", "delete_file", '{"path": ".env"}'),
        ("call_TmlTVWQbzrXCZ4jNsCVNbNqu", "create_file", '{"path": "test.txt"}'),
    ]
    assert (first.finish_reason, first.raw_finish_reason) == ("tool_calls", "tool_calls")
    assert first.text == "" and first.model == "gpt-4o-2024-08-06"
    assert first.message.provider == "openai"
    assert first.message.id == "chatcmpl-C9f7f1SbHRzcwlJwrYKdSonTRWPvV"
    assert first.usage == Usage(input_tokens=71, output_tokens=46, requests=1)
    assert last.finish_reason == "stop"
    assert result.text == (
        "The file `.env` has been deleted and `test.txt` has been created successfully."
    )
    assert result.usage.input_tokens == 71 + 133 and result.usage.requests == 2


async def test_openai_system_prompt_and_single_call() -> None:
    cassette = "openai_chat/test_openai_instructions_with_tool_calls_keep_instructions.yaml"

    @tool
    def get_temperature(city: str) -> float:
        assert city == "Tokyo"
        return 20.0

    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(
            make_model("openai", "gpt-4.1-mini", server),
            instructions="You are a helpful assistant.",
            tools=[get_temperature],
        )
        result = await agent.run("What is the temperature in Tokyo?")
    assert_requests_match(server, load_cassette(cassette))
    assert result.text == "The temperature in Tokyo is currently 20.0 degrees Celsius."
    assert [t.result for t in result.trace] == ["20.0"]
    assert result.usage == Usage(input_tokens=125, output_tokens=30, requests=2)


async def test_openai_streamed_run() -> None:
    cassette = "openai_chat/test_run_stream_sync_streams_real_model.yaml"

    @tool
    def get_capital(country: str) -> str:
        return {"UK": "London"}[country]

    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(make_model("openai", "gpt-4o-mini", server), tools=[get_capital])
        async with agent.run_stream(
            "What is the capital of the UK? Use the tool, then answer."
        ) as run:
            events = [e async for e in run]
        result = run.result
    assert_requests_match(server, load_cassette(cassette))
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert calls[0] == ToolCallDelta(
        index=0, id="call_ZR5UUuTt3pf61kjwAJIYdVMj", name="get_capital"
    )
    assert "".join(c.arguments for c in calls) == '{"country":"UK"}'
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == result.text == "The capital of the UK is London."
    assert result.usage.requests == 2 and result.usage.input_tokens > 0


async def test_openai_streamed_parallel_calls_with_required_choice() -> None:
    """19 tools of mixed strictness, `tool_choice="required"` on every request, two parallel
    calls assembled by index; driven turn by turn as the recording was."""
    cassette = "openai_chat/test_complex_agent_run.yaml"
    recorded = load_cassette(cassette)
    tools = recorded_tools(recorded[0])
    answers = {"get_country": "Mexico", "get_product_name": "Pydantic AI", "get_weather": "sunny"}
    history: list[Message] = [
        UserMessage.of("Tell me: the capital of the country; the weather there; the product name")
    ]
    completions: list[Completion] = []
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model("openai", "gpt-4o", server)
        for _ in recorded:
            events, completion = await collect(
                model, history=history, tools=tools, tool_choice="required"
            )
            completions.append(completion)
            history.append(completion.message)
            for call in completion.tool_calls:
                if call.name in answers:
                    history.append(call.result(answers[call.name]))
            pieces: dict[int, str] = {}
            for event in events:
                if isinstance(event, ToolCallDelta):
                    pieces[event.index] = pieces.get(event.index, "") + event.arguments
            assert list(pieces.values()) == [c.arguments for c in completion.tool_calls]
    assert_requests_match(server, recorded)
    first, second, third = completions
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("get_country", "{}"),
        ("get_product_name", "{}"),
    ]
    assert [c.id for c in first.tool_calls] == [
        "call_q2UyBRP7eXNTzAoR8lEhjc9Z",
        "call_b51ijcpFkDiTQG1bQzsrmtW5",
    ]
    assert first.usage == Usage(input_tokens=364, output_tokens=40, requests=1)
    assert second.tool_calls[0].args == {"city": "Mexico City"}
    final = third.tool_calls[0]
    assert final.name == "final_result"
    assert [a["label"] for a in final.args["answers"]] == ["Capital", "Weather", "Product Name"]
    assert final.args["answers"][1]["answer"] == "The weather in Mexico City is currently sunny."
    assert all(c.finish_reason == "tool_calls" for c in completions)


# --- groq -------------------------------------------------------------------------------------


async def test_groq_tool_round_trip() -> None:
    cassette = "groq/test_tool_choice_matrix[auto-groq].yaml"

    @tool(strict=False)
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"Sunny, 22C in {city}"

    with ReplayServer.from_cassette(cassette) as server:
        agent = Agent(
            make_model("groq", "meta-llama/llama-4-scout-17b-16e-instruct", server),
            tools=[get_weather],
        )
        result = await agent.run("What's the weather in Paris?")
    assert_requests_match(server, load_cassette(cassette))
    call = result.messages[1]
    assert isinstance(call, AssistantMessage) and call.provider == "groq"
    assert call.tool_calls == [ToolCallBlock("48f5r72yf", "get_weather", '{"city":"Paris"}')]
    assert result.text == "The weather in Paris is sunny with a temperature of 22C."
    assert result.usage == Usage(input_tokens=717 + 774, output_tokens=29 + 15, requests=2)


def _stream_reasoning(raw: bytes) -> str:
    message = fold_stream(raw)["choices"][0]["message"]
    return message.get("reasoning", "")


async def test_groq_failed_tool_generation_then_streamed_loop() -> None:
    """Groq refuses a call that breaks the schema with an in-stream `tool_use_failed` error:
    toolwire raises it with the failed generation. The conversation then goes on as the recording
    did (the refused call answered with a validation error), and Groq's earlier reasoning is sent
    back as `<think>` tags."""
    cassette = "groq/test_tool_use_failed_error_streaming.yaml"
    recorded = load_cassette(cassette)
    seen: list[str] = []

    @tool(strict=False)
    def get_something_by_name(name: str) -> str:
        seen.append(name)
        return f"Something with name: {name}"

    system = SystemMessage("Be concise. Never use pretty double quotes, just regular ones.")
    user = UserMessage.of(
        'Please call the "get_something_by_name" tool with non-existent parameters to test '
        "error handling; on the second try you can use valid args"
    )
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model("groq", "openai/gpt-oss-120b", server)
        with pytest.raises(ModelStreamError) as caught:
            await collect(model, history=[system, user], tools=[get_something_by_name])
        error = caught.value
        assert error.code == "tool_use_failed" and error.provider == "groq"
        assert "did not match schema" in str(error)
        failed = json.loads(error.failed_generation or "")
        assert failed == {"name": "get_something_by_name", "arguments": {"invalid_param": "value"}}

        refused = AssistantMessage(
            parts=[
                ReasoningBlock(
                    _stream_reasoning(recorded[0].body), provider_state={"field": "reasoning"}
                ),
                ToolCallBlock(
                    "pyd_ai_53c381537e5a4ce2852509adfb88b3d5",
                    failed["name"],
                    json.dumps(failed["arguments"], separators=(",", ":")),
                ),
            ],
            provider="groq",
        )
        retry_text = recorded[1].request_json["messages"][3]["content"]
        answer = ToolResultMessage.from_result(
            refused.tool_calls[0].id,
            failed["name"],
            _text_result(retry_text),
        )
        agent = Agent(model, tools=[get_something_by_name])
        async with agent.run_stream(None, history=[system, user, refused, answer]) as run:
            events = [e async for e in run]
        result = run.result
    assert_requests_match(server, recorded)
    assert seen == ["example"]
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning.startswith("We need to call the function with correct parameter")
    turn = result.messages[4]
    assert isinstance(turn, AssistantMessage)
    assert isinstance(turn.parts[0], ReasoningBlock)
    assert turn.tool_calls[0].id == "fc_bfb39741-3748-4def-9886-a93fc9c64a90"
    assert result.text.endswith("valid call.")
    # Groq reports usage in the finishing chunk (and again under x_groq).
    assert result.usage.input_tokens == 304 + 339
    assert result.usage.reasoning_tokens == 23 + 38


def _text_result(text: str) -> Any:
    from toolwire.results import TextPart, ToolResult

    return ToolResult(content=[TextPart(text)])


# --- deepseek ---------------------------------------------------------------------------------


def _schema_tool(interaction: Interaction, name: str, fn: Any) -> Tool:
    for spec in interaction.request_json["tools"]:
        function = spec["function"]
        if function["name"] == name:
            return tool(
                parameters=function["parameters"],
                execute=fn,
                name=name,
                description=function["description"],
                strict=bool(function.get("strict")),
            )
    raise LookupError(name)


async def test_deepseek_reasoning_content_goes_back() -> None:
    cassette = "deepseek/test_deepseek_deferred_capability_with_thinking.yaml"
    recorded = load_cassette(cassette)
    later = recorded[1]
    load = _schema_tool(later, "load_capability", lambda args: {})
    search = _schema_tool(later, "search_tools", lambda args: "unused")
    name = _schema_tool(later, "get_player_name", lambda args: "Anne")
    dice = _schema_tool(later, "roll_dice", lambda args: 4)
    history: list[Message] = [
        SystemMessage(
            "You're a dice game, you should roll the die and see if the number you get back "
            "matches the user's guess. If so, tell them they're a winner. Use the player's name "
            "in the response."
        ),
        SystemMessage(
            "The following capabilities are deferred and can be loaded using the "
            "`load_capability` tool:\n- DICE_ROLL"
        ),
        UserMessage.of("My guess is 4"),
    ]
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model("deepseek", "deepseek-reasoner", server)
        first = await model.complete(history=history, tools=[load, search])
        assert first.reasoning.startswith("The user wants to play a dice game.")
        assert first.text == "Let me load the dice rolling capability!"
        assert first.tool_calls[0].args == {"id": "DICE_ROLL"}
        assert first.usage == Usage(
            input_tokens=563,
            output_tokens=116,
            cache_read_tokens=512,
            reasoning_tokens=60,
            requests=1,
        )
        history.append(first.message)
        history.append(first.tool_calls[0].result({}))
        # The search call the recording's framework made on the model's behalf.
        found = later.request_json["messages"][6]["content"]
        history.append(
            AssistantMessage(
                parts=[
                    ToolCallBlock(
                        "auto_load_eb5fc31bb581b4e7", "search_tools", '{"queries":["DICE_ROLL"]}'
                    )
                ],
                provider="deepseek",
            )
        )
        history.append(
            ToolResultMessage.from_result(
                "auto_load_eb5fc31bb581b4e7", "search_tools", _text_result(found)
            )
        )
        agent = Agent(model, tools=[load, name, dice, search])
        result = await agent.run(None, history=history)
    assert_requests_match(server, recorded)
    assert [t.name for t in result.trace] == ["get_player_name", "roll_dice"]
    assert "Anne" in result.text and "4" in result.text
    final = result.messages[-1]
    assert isinstance(final, AssistantMessage) and isinstance(final.parts[0], ReasoningBlock)
    assert result.usage.cache_read_tokens == 896


# --- ollama -----------------------------------------------------------------------------------


async def test_ollama_reasoning_field_and_final_tool() -> None:
    cassette = "ollama/test_ollama_cloud_tool_output.yaml"
    recorded = load_cassette(cassette)
    final_result = _schema_tool(recorded[0], "final_result", lambda args: "accepted")
    closing = Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "model": "gpt-oss:20b",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Done."},
                }
            ],
            "usage": {"prompt_tokens": 300, "completion_tokens": 2, "total_tokens": 302},
        },
    )
    server = ReplayServer.from_cassette(cassette)
    server.replies.append(closing)
    with server:
        model = make_model("ollama", "gpt-oss:20b", server)
        first = await model.complete("What is the capital of France?", tools=[final_result])
        assert first.text == "Paris." and first.finish_reason == "stop"
        assert first.reasoning.startswith("We need to answer question")
        retry = recorded[1].request_json["messages"][2]["content"]
        history: list[Message] = [
            UserMessage.of("What is the capital of France?"),
            first.message,
            UserMessage.of(retry),
        ]
        result = await Agent(model, tools=[final_result]).run(None, history=history)
    assert_requests_match(server, [*recorded, _fake_interaction(server.received[2].json)])
    assert result.trace[0].arguments == '{"city":"Paris","country":"France"}'
    assert result.text == "Done."
    third = server.received[2].json["messages"]
    assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "tool"]
    assert third[3]["reasoning"].startswith("The conversation: user asked")
    assert third[4] == {"role": "tool", "tool_call_id": "call_o2vnpxrw", "content": "accepted"}


def _fake_interaction(body: dict[str, Any]) -> Interaction:
    return Interaction("POST", "/v1/chat/completions", body, 200, {}, b"")


# --- openrouter -------------------------------------------------------------------------------


async def test_openrouter_tool_call() -> None:
    cassette = "openrouter/test_openrouter_tool_calling.yaml"
    recorded = load_cassette(cassette)
    divide = _schema_tool(
        recorded[0], "divide", lambda args: args["numerator"] / args["denominator"]
    )
    closing = Reply.of_json(
        200,
        {
            "id": "gen-2",
            "model": "mistralai/mistral-small",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "native_finish_reason": "stop",
                    "message": {"role": "assistant", "content": "About 0.27.", "reasoning": None},
                }
            ],
            "usage": {"prompt_tokens": 190, "completion_tokens": 6, "total_tokens": 196},
        },
    )
    server = ReplayServer.from_cassette(cassette)
    server.replies.append(closing)
    with server:
        agent = Agent(make_model("openrouter", "mistralai/mistral-small", server), tools=[divide])
        result = await agent.run("What is 123 / 456?")
    assert_requests_match(server, [*recorded, _fake_interaction(server.received[1].json)])
    call = result.messages[1]
    assert isinstance(call, AssistantMessage)
    assert call.tool_calls[0].id == "3sniiMddS"
    assert json.loads(call.tool_calls[0].arguments) == {
        "numerator": 123,
        "denominator": 456,
        "on_inf": "infinity",
    }
    assert result.trace[0].result == str(123 / 456)
    tool_turn = server.received[1].json["messages"][2]
    assert tool_turn == {"role": "tool", "tool_call_id": "3sniiMddS", "content": str(123 / 456)}
    assert result.text == "About 0.27."


async def test_openrouter_web_search_citations() -> None:
    cassette = "openrouter/test_openrouter_web_search_annotations.yaml"
    recorded = load_cassette(cassette)
    with ReplayServer.from_cassette(cassette) as server:
        model = make_model("openrouter", "deepseek/deepseek-chat", server)
        completion = await model.complete(
            "Use web search to find Pydantic AI's GitHub repository and answer with its URL only.",
            settings={"tools": recorded[0].request_json["tools"]},
        )
    assert_requests_match(server, recorded)
    assert completion.text == "https://github.com/pydantic/pydantic-ai"
    citations = completion.citations
    assert [c.url for c in citations] == [
        "https://github.com/pydantic/pydantic-ai",
        "https://pydantic.dev/pydantic-ai",
        "https://github.com/pydantic/pydantic-ai/releases/tag/v2.0.0",
        "https://pydantic.dev/docs/ai/overview/",
        "https://github.com/pydantic/pydantic-ai/tree/refs/tags/v1.44.0",
    ]
    assert citations[0].title == "AI Agent Framework, the Pydantic way"
    assert citations[1].title is None  # an empty title is no title
    assert (citations[0].cited_text or "").startswith("# pydantic/pydantic-ai")
    assert completion.usage == Usage(
        input_tokens=2315, output_tokens=40, requests=1, server_tool_requests={"web_search": 1}
    )


# --- streaming equals non-streaming -----------------------------------------------------------

_STREAMS = [
    ("openai", "openai_chat/test_complex_agent_run.yaml", [0, 1, 2]),
    ("openai", "openai_chat/test_run_stream_sync_streams_real_model.yaml", [0, 1]),
    ("groq", "groq/test_tool_use_failed_error_streaming.yaml", [1, 2]),
]


@pytest.mark.parametrize(("provider", "cassette", "indexes"), _STREAMS)
async def test_stream_and_complete_agree(provider: str, cassette: str, indexes: list[int]) -> None:
    recorded = load_cassette(cassette)
    replies: list[Reply] = []
    for i in indexes:
        replies.append(Reply.of_sse(recorded[i].body.decode()))
        replies.append(Reply.of_json(200, fold_stream(recorded[i].body)))
    with ReplayServer(replies) as server:
        model = make_model(provider, "m", server)
        for _ in indexes:
            events, streamed = await collect(model, history=[UserMessage.of("hi")])
            whole = await model.complete(history=[UserMessage.of("hi")])
            assert without_raw(streamed) == without_raw(whole)
            assert isinstance(streamed.raw, list) and streamed.raw
            text = "".join(e.text for e in events if isinstance(e, TextDelta))
            assert text == whole.text
