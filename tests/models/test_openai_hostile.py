"""The Chat Completions adapter and its presets, through a local server and the real `openai` SDK:
the answers only this API can send (ids without an index, arguments as an object, named error
events), and the request mapping (tool choice, media, settings, foreign history, presets).

What every adapter does with hostile answers (ids, usage, finish reasons, HTTP and connection
errors, cut streams) is the contract suite's: test_contract.py."""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import anyio
import pytest
from model_servers import closing

from recordings.replay import ReplayServer, Reply, sse
from toolwire import Agent, tool
from toolwire.errors import (
    ModelResponseError,
    UnsupportedError,
)
from toolwire.messages import (
    AssistantMessage,
    Citation,
    FilePart,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    dump_history,
    load_history,
)
from toolwire.models.base import ModelSettings
from toolwire.models.openai_chat import ModelStreamError, OpenAIChatModel
from toolwire.models.profiles import PROVIDERS
from toolwire.models.providers import chat_model, ollama, openai_compatible
from toolwire.results import AudioPart, ImagePart, ResourcePart, TextPart

pytestmark = pytest.mark.anyio

_PREFIX = {"groq": "/openai/v1", "openrouter": "/api/v1", "deepseek": ""}


def connect(
    server: ReplayServer | str, provider: str = "openai", **options: Any
) -> OpenAIChatModel:
    """A preset's model pointed at the local server (closed after the test)."""
    root = server if isinstance(server, str) else server.base_url
    base = root + _PREFIX.get(provider, "/v1")
    return closing(chat_model(provider, "test-model", api_key="test-key", base_url=base, **options))


def completion_json(message: dict[str, Any], finish: Any = "stop", **top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model-2026",
        "choices": [
            {"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    body.update(top)
    return body


def answer(text: str = "ok", **message: Any) -> Reply:
    return Reply.of_json(200, completion_json({"content": text, **message}))


def calls_reply(*calls: dict[str, Any], finish: Any = "tool_calls") -> Reply:
    return Reply.of_json(200, completion_json({"content": None, "tool_calls": list(calls)}, finish))


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "model": "test-model-2026",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


def call_delta(
    index: int | None, call_id: str | None, name: str | None, args: Any
) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function", "function": {"arguments": args}}
    if index is not None:
        call["index"] = index
    if call_id is not None:
        call["id"] = call_id
    if name is not None:
        call["function"]["name"] = name
    return {"tool_calls": [call]}


async def stream_events(model: OpenAIChatModel, **kwargs: Any) -> list[Any]:
    return [e async for e in model.stream_complete("go", **kwargs)]


# --- broken tool calls ------------------------------------------------------------------------


async def test_the_loop_answers_every_call_when_ids_are_missing() -> None:
    @tool
    def ping(n: int) -> int:
        return n

    replies = [
        calls_reply(
            {"type": "function", "function": {"name": "ping", "arguments": '{"n": 1}'}},
            {"type": "function", "function": {"name": "ping", "arguments": '{"n": 2}'}},
        ),
        answer("done"),
    ]
    with ReplayServer(replies) as server:
        result = await Agent(connect(server), tools=[ping]).run("go")
    sent = server.received[1].json["messages"]
    call_ids = [c["id"] for c in sent[1]["tool_calls"]]
    assert [m["tool_call_id"] for m in sent[2:]] == call_ids
    assert [m["content"] for m in sent[2:]] == ["1", "2"]
    assert result.text == "done"


async def test_arguments_sent_as_an_object_become_json_text() -> None:
    obj = {"city": "Paris", "days": 2}
    stream = sse(
        [
            chunk(call_delta(0, "c1", "forecast", obj)),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    reply = calls_reply(
        {"id": "c1", "type": "function", "function": {"name": "forecast", "arguments": obj}}
    )
    with ReplayServer([reply, Reply.of_sse(stream)]) as server:
        model = closing(ollama("gpt-oss:20b", base_url=server.base_url + "/v1"))
        whole = await model.complete("x")
        streamed = (await stream_events(model))[-1].completion
    for completion in (whole, streamed):
        assert completion.tool_calls[0].arguments == '{"city":"Paris","days":2}'
        assert completion.tool_calls[0].args == obj
    assert server.received[0].headers["authorization"] == "Bearer not-needed"


async def test_stream_calls_without_an_index_are_told_apart_by_id() -> None:
    stream = sse(
        [
            chunk(call_delta(None, "c0", "a", '{"x":')),
            chunk(call_delta(None, None, None, "1}")),
            chunk(call_delta(None, "c1", "b", "{}")),
            chunk({}, "tool_calls"),
        ]
    )
    with ReplayServer([Reply.of_sse(stream)]) as server:
        completion = (await stream_events(connect(server)))[-1].completion
    assert [(c.id, c.arguments) for c in completion.tool_calls] == [("c0", '{"x":1}'), ("c1", "{}")]


# --- broken answers ---------------------------------------------------------------------------


async def test_empty_choices_is_a_response_error() -> None:
    body = completion_json({"content": "x"})
    body["choices"] = []
    empty_stream = sse([{"id": "s", "object": "chat.completion.chunk", "choices": []}, "[DONE]"])
    with ReplayServer([Reply.of_json(200, body), Reply.of_sse(empty_stream)]) as server:
        model = connect(server)
        with pytest.raises(ModelResponseError, match="no choices"):
            await model.complete("x")
        with pytest.raises(ModelResponseError, match="no finish_reason"):
            await stream_events(model)


async def test_an_error_inside_a_stream_is_raised() -> None:
    error = {"error": {"message": "overloaded mid-answer", "type": "server_error", "code": "busy"}}
    named = "event: error\ndata: " + json.dumps(error) + "\n\n"
    stream = sse([chunk({"content": "Hel"}), error])
    with ReplayServer(
        [Reply.of_sse(stream), Reply.of_sse(sse([chunk({"content": "x"})]) + named)]
    ) as server:
        model = connect(server)
        for _ in range(2):
            with pytest.raises(ModelStreamError, match="overloaded mid-answer") as caught:
                await stream_events(model)
            assert caught.value.code == "busy" and caught.value.failed_generation is None


# --- the request mapping ----------------------------------------------------------------------


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    return term


async def test_tool_choice_and_parallel_tool_calls_mapping() -> None:
    cases: list[tuple[Any, bool | None, Any]] = [
        ("auto", None, "auto"),
        ("none", None, "none"),
        ("required", True, "required"),
        ("lookup", False, {"type": "function", "function": {"name": "lookup"}}),
        (
            {"type": "allowed_tools", "mode": "auto"},
            None,
            {"type": "allowed_tools", "mode": "auto"},
        ),
    ]
    with ReplayServer([answer() for _ in cases] + [answer()]) as server:
        model = connect(server)
        for choice, parallel, _ in cases:
            settings = ModelSettings(parallel_tool_calls=parallel)
            await model.complete("x", tools=[lookup], tool_choice=choice, settings=settings)
        await model.complete("x", settings=ModelSettings(parallel_tool_calls=True))
    for sent, (_, parallel, expected) in zip(server.received, cases, strict=False):
        body = sent.json
        assert body["tool_choice"] == expected
        assert body.get("parallel_tool_calls") == parallel
        assert body["tools"][0]["function"]["name"] == "lookup"
        assert body["tools"][0]["function"]["strict"] is True
    bare = server.received[-1].json
    assert "tools" not in bare and "tool_choice" not in bare and "parallel_tool_calls" not in bare


async def test_settings_and_extra_go_into_the_body() -> None:
    settings = ModelSettings(
        max_tokens=99,
        temperature=0.25,
        top_p=0.5,
        stop=["END"],
        seed=7,
        extra={"reasoning_effort": "low", "logit_bias": {"42": -100}, "temperature": 0.75},
    )
    with ReplayServer(
        [answer(), answer(), Reply.of_sse(sse([chunk({"content": "x"}, "stop")]))]
    ) as server:
        await connect(server).complete("x", settings=settings)
        await connect(server, "openrouter").complete("x", settings=ModelSettings(max_tokens=5))
        await stream_events(connect(server, "deepseek"))
    body = server.received[0].json
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body
    assert (body["top_p"], body["stop"], body["seed"]) == (0.5, ["END"], 7)
    assert body["reasoning_effort"] == "low" and body["logit_bias"] == {"42": -100}
    assert body["temperature"] == 0.75  # an explicit extra wins over the common field
    assert server.received[1].json["max_tokens"] == 5
    streamed = server.received[2].json
    assert streamed["stream"] is True and streamed["stream_options"] == {"include_usage": True}


async def test_images_audio_and_files_in_user_turns() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    pdf = b"%PDF-1.4 fake"
    wav = b"RIFFfake"
    turn = UserMessage(
        [
            TextPart("Describe these."),
            ImagePart(data=png, mime_type="image/png"),
            ImagePart(url="https://example.com/cat.jpg"),
            FilePart(data=pdf, filename="report.pdf"),
            AudioPart(data=wav, mime_type="audio/wav"),
        ]
    )
    with ReplayServer([answer(), answer()]) as server:
        await connect(server).complete(history=[turn])
        web_file = UserMessage([FilePart(url="https://example.com/a.pdf")])
        await connect(server, "openrouter").complete(history=[web_file])
        with pytest.raises(UnsupportedError, match="cannot fetch a file from a URL"):
            await connect(server).complete(history=[web_file])
        with pytest.raises(UnsupportedError, match="wav or mp3"):
            await connect(server).complete(history=[UserMessage([AudioPart(b"x", "audio/ogg")])])
    content = server.received[0].json["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "Describe these."},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
        },
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
        {
            "type": "file",
            "file": {
                "file_data": "data:application/pdf;base64," + base64.b64encode(pdf).decode(),
                "filename": "report.pdf",
            },
        },
        {
            "type": "input_audio",
            "input_audio": {"data": base64.b64encode(wav).decode(), "format": "wav"},
        },
    ]
    routed = server.received[1].json["messages"][0]["content"][0]
    assert routed == {
        "type": "file",
        "file": {"file_data": "https://example.com/a.pdf", "filename": "file.pdf"},
    }
    assert len(server.received) == 2  # refused parts never reach the server


async def test_images_a_tool_returned_follow_as_a_user_turn() -> None:
    history: list[Message] = [
        UserMessage.of("show me"),
        AssistantMessage([ToolCallBlock("c1", "snap", "{}")], provider="openai"),
        ToolResultMessage(
            "c1", "snap", [TextPart("here"), ImagePart(url="https://example.com/s.png")]
        ),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(history=history)
    messages = server.received[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["content"].startswith("here")
    assert messages[3]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "https://example.com/s.png"},
    }


# --- history from another provider, and provider state ---------------------------------------


def anthropic_turn() -> AssistantMessage:
    return AssistantMessage(
        parts=[
            ReasoningBlock("Let me search first.", provider_state={"signature": "sig=="}),
            ReasoningBlock(redacted=True, provider_state={"data": "opaque"}),
            ServerToolCallBlock("srv_1", "web_search", {"query": "weather Paris"}),
            ServerToolResultBlock("srv_1", "web_search", [{"url": "https://meteo.example"}]),
            TextBlock(
                "It is sunny", citations=[Citation(url="https://meteo.example", cited_text="sunny")]
            ),
            TextBlock(" in Paris."),
            ToolCallBlock(
                "toolu_1", "get_forecast", '{"city":"Paris"}', provider_state={"caller": "x"}
            ),
        ],
        provider="anthropic",
        model="claude-sonnet-4-5",
        provider_state={"fields": {"secret": "anthropic only"}},
    )


async def test_an_anthropic_turn_sent_to_openai_follows_the_drop_rule() -> None:
    history: list[Message] = [
        UserMessage.of("Weather in Paris, and the forecast?"),
        anthropic_turn(),
        ToolResultMessage("toolu_1", "get_forecast", [TextPart("rain tomorrow")]),
    ]
    # The history survives JSON on the way, as a stored conversation would.
    history = load_history(dump_history(history))
    with ReplayServer([answer("Sunny today, rain tomorrow."), answer("ok")]) as server:
        model = connect(server)
        completion = await model.complete(history=history)
        history.append(completion.message)
        history.append(UserMessage.of("thanks"))
        await connect(server, "deepseek").complete(history=history)
    to_openai = server.received[0].json["messages"]
    assert to_openai[1] == {
        "role": "assistant",
        "content": "It is sunny in Paris.",
        "tool_calls": [
            {
                "id": "toolu_1",
                "type": "function",
                "function": {"name": "get_forecast", "arguments": '{"city":"Paris"}'},
            }
        ],
    }
    assert to_openai[2] == {"role": "tool", "tool_call_id": "toolu_1", "content": "rain tomorrow"}
    # DeepSeek wants the reasoning field on every turn: foreign turns send it empty.
    to_deepseek = server.received[1].json["messages"]
    assert to_deepseek[1]["reasoning_content"] == "" and "secret" not in to_deepseek[1]
    assert to_deepseek[3] == {
        "role": "assistant",
        "content": "Sunny today, rain tomorrow.",
        "reasoning_content": "",
    }


async def test_own_reasoning_goes_back_per_provider() -> None:
    def turn(provider: str, field: str) -> AssistantMessage:
        return AssistantMessage(
            [ReasoningBlock("thinking", provider_state={"field": field}), TextBlock("answer")],
            provider=provider,
        )

    cases = [
        ("deepseek", "reasoning_content", {"content": "answer", "reasoning_content": "thinking"}),
        ("ollama", "reasoning", {"content": "answer", "reasoning": "thinking"}),
        ("openrouter", "reasoning", {"content": "answer", "reasoning": "thinking"}),
        ("groq", "reasoning", {"content": "<think>\nthinking\n</think>\n\nanswer"}),
        ("openai", "reasoning", {"content": "answer"}),
        ("openai-compatible", "reasoning_content", {"content": "answer"}),
    ]
    with ReplayServer([answer() for _ in cases]) as server:
        for provider, field, _ in cases:
            base = server.base_url + _PREFIX.get(provider, "/v1")
            model = closing(chat_model(provider, "m", api_key="k", base_url=base))
            await model.complete("next", history=[UserMessage.of("q"), turn(provider, field)])
    for sent, (_, _, expected) in zip(server.received, cases, strict=True):
        assert sent.json["messages"][1] == {"role": "assistant", **expected}


async def test_openrouter_reasoning_details_go_back_verbatim() -> None:
    details = [
        {"type": "reasoning.encrypted", "data": "gAAA", "id": "r1", "format": "openai-responses-v1"}
    ]
    first = answer("hi", reasoning="short", reasoning_details=details)
    with ReplayServer([first, answer("again")]) as server:
        model = connect(server, "openrouter")
        completion = await model.complete("x")
        await model.complete("y", history=[UserMessage.of("x"), completion.message])
    assert completion.reasoning == "short"
    sent = server.received[1].json["messages"][1]
    assert sent == {
        "role": "assistant",
        "content": "hi",
        "reasoning": "short",
        "reasoning_details": details,
    }


async def test_refusals_and_cached_usage() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 64},
        "completion_tokens_details": {"reasoning_tokens": 12},
    }
    reply = Reply.of_json(
        200,
        completion_json(
            {"content": None, "refusal": "I can't help."}, "content_filter", usage=usage
        ),
    )
    with ReplayServer([reply]) as server:
        completion = await connect(server).complete("x")
    assert completion.text == "I can't help." and completion.finish_reason == "content_filter"
    assert (completion.usage.cache_read_tokens, completion.usage.reasoning_tokens) == (64, 12)
    assert completion.usage.input_tokens == 100 and completion.usage.requests == 1


# --- presets --------------------------------------------------------------------------------


async def test_importing_the_adapter_leaves_the_sdk_unimported() -> None:
    code = (
        "import sys, toolwire.models.providers, toolwire.models.openai_chat\n"
        "print('openai' in sys.modules)\n"
    )
    out = await anyio.run_process([sys.executable, "-c", code])
    assert out.stdout.decode().strip() == "False"


async def test_presets_read_their_own_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GROQ_API_KEY", "OLLAMA_BASE_URL", "OLLAMA_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    with pytest.raises(ValueError, match="GROQ_API_KEY"):
        chat_model("groq", "llama")  # never falls back to OpenAI's key
    monkeypatch.setenv("GROQ_API_KEY", "gsk-groq")
    model = chat_model("groq", "llama")
    assert (model.provider, model.client.api_key, str(model.client.base_url)) == (
        "groq",
        "gsk-groq",
        "https://api.groq.com/openai/v1/",
    )
    local = ollama("qwen3")
    assert str(local.client.base_url) == "http://localhost:11434/v1/" and local.provider == "ollama"
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://gpu-box:11434/v1")
    assert str(ollama("qwen3").client.base_url) == "http://gpu-box:11434/v1/"
    with pytest.raises(ValueError, match="base_url"):
        openai_compatible("local")
    vllm = openai_compatible("local", base_url="http://127.0.0.1:8000/v1")
    assert vllm.provider == "openai-compatible" and vllm.client.max_retries == 0
    with pytest.raises(ValueError, match="unknown provider"):
        chat_model("nope", "x")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4o")


async def test_every_preset_factory_takes_a_name_and_options() -> None:
    from toolwire.models import providers

    for name, factory in [
        ("openai", providers.openai),
        ("groq", providers.groq),
        ("deepseek", providers.deepseek),
        ("openrouter", providers.openrouter),
        ("ollama", providers.ollama),
        ("openai-compatible", providers.openai_compatible),
    ]:
        model = factory("some-model", api_key="k", base_url="http://127.0.0.1:9/v1", timeout=5)
        assert (model.provider, model.model_name) == (name, "some-model")
        assert model.profile == PROVIDERS[name].profile
        assert model.client.timeout == 5


# --- tool results the API cannot take as they are ---------------------------------------------


async def test_error_and_empty_tool_results_are_clear_in_the_text() -> None:
    calls = AssistantMessage(
        [ToolCallBlock(f"c{i}", "f", "{}") for i in range(4)], provider="openai"
    )
    history: list[Message] = [
        UserMessage.of("go"),
        calls,
        # Chat Completions has no `is_error`: the text itself must say the call failed.
        ToolResultMessage("c0", "f", [TextPart("city not found")], is_error=True),
        ToolResultMessage("c1", "f", [TextPart("Error: already said")], is_error=True),
        ToolResultMessage("c2", "f", [TextPart("")]),
        ToolResultMessage("c3", "f", [], is_error=True),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(history=history)
    sent = [m["content"] for m in server.received[0].json["messages"][2:]]
    assert sent[0] == "Error: city not found"
    assert sent[1] == "Error: already said"
    assert sent[2].strip() and not sent[2].lower().startswith("error")
    assert sent[3].startswith("Error:") and sent[3].removeprefix("Error:").strip()


async def test_audio_a_tool_returned_never_makes_the_request_unsendable() -> None:
    history: list[Message] = [
        UserMessage.of("record"),
        AssistantMessage([ToolCallBlock("c1", "rec", "{}")], provider="openai"),
        ToolResultMessage("c1", "rec", [TextPart("done"), AudioPart(b"OggS", "audio/ogg")]),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(history=history)
    messages = server.received[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[2]["content"] == "done\n[audio audio/ogg]"


async def test_long_call_ids_from_other_providers_are_shortened_and_still_pair() -> None:
    # OpenAI refuses call ids over 40 characters; other providers write longer ones.
    long_a = "fc_" + "a" * 60
    long_b = "fc_" + "a" * 59 + "b"
    history: list[Message] = [
        UserMessage.of("go"),
        AssistantMessage(
            [ToolCallBlock(long_a, "f", "{}"), ToolCallBlock(long_b, "f", "{}")],
            provider="google",
        ),
        ToolResultMessage(long_a, "f", [TextPart("1")]),
        ToolResultMessage(long_b, "f", [TextPart("2")]),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(history=history)
    messages = server.received[0].json["messages"]
    ids = [c["id"] for c in messages[1]["tool_calls"]]
    assert [m["tool_call_id"] for m in messages[2:]] == ids
    assert all(len(i) <= 40 for i in ids) and len(set(ids)) == 2


async def test_images_a_tool_returned_are_sent_only_when_the_api_reads_them() -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    history: list[Message] = [
        UserMessage.of("draw"),
        AssistantMessage([ToolCallBlock("c1", "draw", "{}")], provider="openai"),
        ToolResultMessage(
            "c1",
            "draw",
            [
                ImagePart(data=b"<svg/>", mime_type="image/svg+xml"),
                ResourcePart("mem://chart", mime_type="image/png", blob=png),
            ],
        ),
    ]
    with ReplayServer([answer()]) as server:
        await connect(server).complete(history=history)
    messages = server.received[0].json["messages"]
    assert messages[2]["content"] == "[image image/svg+xml]\n[resource mem://chart]"
    # The SVG stays described in the text; the embedded PNG is shown.
    assert messages[3]["content"][1:] == [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
        }
    ]


async def test_a_text_only_server_gets_no_media() -> None:
    # DeepSeek refuses any image part ("unknown variant `image_url`"), which would make every
    # later request of the conversation fail: a tool's image stays described in its text.
    png = b"\x89PNG\r\n\x1a\nfake"
    history: list[Message] = [
        UserMessage.of("snap"),
        AssistantMessage([ToolCallBlock("c1", "snap", "{}")], provider="deepseek"),
        ToolResultMessage("c1", "snap", [TextPart("here"), ImagePart(data=png)]),
    ]
    with ReplayServer([answer()]) as server:
        model = connect(server, "deepseek")
        await model.complete(history=history)
        with pytest.raises(UnsupportedError, match="text only"):
            await model.complete(history=[UserMessage([TextPart("see"), ImagePart(data=png)])])
    assert len(server.received) == 1
    messages = server.received[0].json["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[2]["content"] == "here\n[image image/png]"


async def test_profile_none_keeps_the_presets_quirks() -> None:
    from toolwire.models import providers

    model = providers.deepseek("deepseek-chat", api_key="k", profile=None)
    assert model.profile == PROVIDERS["deepseek"].profile
    await model.aclose()


async def test_a_raw_function_tool_can_be_forced_by_name() -> None:
    raw = {
        "type": "function",
        "function": {"name": "raw_fn", "parameters": {"type": "object", "properties": {}}},
    }
    with ReplayServer([answer()]) as server:
        await connect(server).complete("x", tool_choice="raw_fn", settings={"tools": [raw]})
    body = server.received[0].json
    assert body["tools"] == [raw]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "raw_fn"}}
