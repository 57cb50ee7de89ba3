"""The Gemini adapter against every recorded Gemini API and Vertex AI conversation, replayed on
127.0.0.1 through the official `google-genai` SDK.

One driver rebuilds each recorded conversation: for every recorded request it sends toolwire's
history (the user turns and tool results the recording holds, the assistant turns toolwire parsed),
then checks the body it sent against the recorded one; each test then checks what was understood.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from google.oauth2.credentials import Credentials

from recordings.replay import Interaction, ReplayServer, Reply, load_cassette
from toolwire import (
    Agent,
    AssistantMessage,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    dump_history,
    load_history,
    tool,
)
from toolwire.messages import Message
from toolwire.models import ModelRequest, model
from toolwire.models.base import (
    Completion,
    CompletionDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from toolwire.models.google import GeminiModel, gemini, vertex
from toolwire.tools import Tool

VERTEX_PROJECT = "gen-lang-client-0498264908"


@functools.cache
def cassette(name: str) -> list[Interaction]:
    return load_cassette(f"google/{name}.yaml")


def model_of(interaction: Interaction) -> str:
    return interaction.uri.split("/models/")[1].split(":")[0]


@asynccontextmanager
async def replayed(name: str) -> AsyncIterator[tuple[ReplayServer, GeminiModel]]:
    interactions = cassette(name)
    replies = [Reply(i.status, i.body, i.headers, expect_path=i.path) for i in interactions]
    with ReplayServer(replies) as server:
        if "aiplatform" in interactions[0].uri:
            made = vertex(
                model_of(interactions[0]),
                project=VERTEX_PROJECT,
                location="global",
                credentials=Credentials(token="fake-vertex-token"),
                base_url=server.base_url,
            )
        else:
            made = gemini(model_of(interactions[0]), api_key="test-key", base_url=server.base_url)
        async with made:
            yield server, made
    assert server.mismatches == []


# --- comparing request bodies -------------------------------------------------------------------


def _schema(value: Any) -> Any:
    # The recorded clients sent JSON Schema (`parameters_json_schema`) or OpenAPI types in capitals;
    # toolwire sends the gemini dialect, which the SDK writes with capital types. Compare the shapes.
    if isinstance(value, dict):
        out = {k: _schema(v) for k, v in value.items() if k != "additionalProperties"}
        if isinstance(out.get("type"), str):
            out["type"] = out["type"].lower()
        return out
    if isinstance(value, list):
        return [_schema(v) for v in value]
    return value


def normalised(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with what legitimately differs between clients made equal.

    Call ids are numbered in order of appearance (a call and its response must still share one);
    pydantic-ai answered calls with `{"return_value": ...}`, toolwire with `{"output": ...}`; a
    missing `toolConfig` is the API's AUTO.
    """
    body = copy.deepcopy(body)
    for entry in body.get("tools") or ():
        for declaration in entry.get("functionDeclarations") or ():
            for key in ("parameters_json_schema", "parametersJsonSchema", "parameters"):
                if key in declaration:
                    declaration["parameters"] = _schema(declaration.pop(key))
    ids: dict[str, str] = {}
    for content in body["contents"]:
        for part in content["parts"]:
            for key in ("functionCall", "functionResponse"):
                if key in part and "id" in part[key]:
                    part[key]["id"] = ids.setdefault(part[key]["id"], f"id{len(ids)}")
            response = part.get("functionResponse", {}).get("response")
            if isinstance(response, dict) and set(response) == {"return_value"}:
                part["functionResponse"]["response"] = {"output": response["return_value"]}
    config = body.get("toolConfig") or {}
    if config.get("functionCallingConfig") == {"mode": "AUTO"}:
        del config["functionCallingConfig"]
    if not config:
        body.pop("toolConfig", None)
    return body


# --- the driver -----------------------------------------------------------------------------------


def _tools(body: dict[str, Any]) -> tuple[list[Tool], list[dict[str, Any]]]:
    functions: list[Tool] = []
    native: list[dict[str, Any]] = []
    for entry in body.get("tools") or ():
        if "functionDeclarations" not in entry:
            native.append(entry)
            continue
        for declaration in entry["functionDeclarations"]:
            schema = next(
                declaration[k]
                for k in ("parameters_json_schema", "parametersJsonSchema", "parameters")
                if k in declaration
            )
            functions.append(
                tool(
                    name=declaration["name"],
                    description=declaration.get("description", ""),
                    parameters=_schema(schema),
                    execute=lambda args: "unused",
                )
            )
    return functions, native


def _settings(body: dict[str, Any]) -> dict[str, Any]:
    return dict(body.get("generationConfig") or {})


def _new_turns(content: dict[str, Any], calls: list[ToolCall]) -> list[Message]:
    """The user-side turns a recorded content adds (prompts, or results of the last calls)."""
    out: list[Message] = []
    for part in content["parts"]:
        if "text" in part:
            out.append(UserMessage.of(part["text"]))
        elif "functionResponse" in part:
            response = part["functionResponse"]
            call = next(c for c in calls if c.name == response["name"])
            calls.remove(call)
            value = response["response"].get("return_value", response["response"])
            out.append(call.result(value))
    return out


async def drive(
    name: str, streamed: frozenset[int] = frozenset()
) -> tuple[ReplayServer, GeminiModel, list[Message], list[Completion], list[list[StreamEvent]]]:
    """Make the recorded conversation; streamed: the indexes of requests sent as streams."""
    completions: list[Completion] = []
    events: list[list[StreamEvent]] = []
    async with replayed(name) as (server, made):
        history: list[Message] = []
        pending: list[ToolCall] = []
        seen = 0
        for index, interaction in enumerate(cassette(name)):
            body = interaction.request_json
            if index == 0 and "systemInstruction" in body:
                history.append(SystemMessage(body["systemInstruction"]["parts"][0]["text"]))
            for content in body["contents"][seen:]:
                assert content["role"] == "user"
                history.extend(_new_turns(content, pending))
            functions, native = _tools(body)
            calling = (body.get("toolConfig") or {}).get("functionCallingConfig")
            request = ModelRequest(
                messages=list(history),
                tools=functions,
                tool_choice=calling or "auto",
                settings=ModelRequest.build(settings={"extra": _settings(body)}).settings,
                native_tools=native,
            )
            if index in streamed:
                seen_events = [e async for e in made.send_stream(request)]
                done = seen_events[-1]
                assert isinstance(done, CompletionDone)
                completion = done.completion
                events.append(seen_events)
            else:
                completion = await made.send(request)
            completions.append(completion)
            history.append(completion.message)
            pending = completion.tool_calls
            seen = len(body["contents"]) + 1
    sent = [r.json for r in server.received]
    recorded = [i.request_json for i in cassette(name)]
    assert len(sent) == len(recorded)
    for index, (ours, theirs) in enumerate(zip(sent, recorded, strict=True)):
        assert normalised(ours) == normalised(theirs), f"request {index + 1} differs"
    return server, made, history, completions, events


def signatures(body: dict[str, Any]) -> list[str]:
    return [
        part["thoughtSignature"]
        for content in body["contents"]
        for part in content["parts"]
        if "thoughtSignature" in part
    ]


# --- the recordings -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_tool_output_round_trip_with_forced_calls() -> None:
    server, _, _, completions, _ = await drive("test_google_tool_output")
    first, second = completions
    assert first.finish_reason == "tool_calls" and first.raw_finish_reason == "STOP"
    assert [(c.name, c.args) for c in first.tool_calls] == [("get_user_country", {})]
    # Gemini 2.0 sent no call id: one was made, and the result answered it.
    assert first.tool_calls[0].id.startswith("call_")
    assert server.received[1].json["contents"][2]["parts"][0]["functionResponse"]["id"] == (
        first.tool_calls[0].id
    )
    assert second.tool_calls[0].args == {"city": "Mexico City", "country": "Mexico"}
    assert first.usage.input_tokens == 33 and first.usage.output_tokens == 5
    assert first.message.provider == "google" and first.message.api == "generate-content"
    assert server.received[0].headers["x-goog-api-key"] == "test-key"


@pytest.mark.anyio
async def test_parallel_calls_keep_the_signature_on_the_first_call_only() -> None:
    name = "test_google_instructions_only_with_tool_calls"
    server, _, history, completions, _ = await drive(name)
    first = completions[0]
    calls = [p for p in first.message.parts if isinstance(p, ToolCallBlock)]
    assert [c.name for c in calls] == ["generate_topic"] * 3
    assert len({c.id for c in calls}) == 3
    assert calls[0].provider_state and "thought_signature" in calls[0].provider_state
    assert calls[1].provider_state is None and calls[2].provider_state is None
    # The three results went back in one user content, in the calls' order.
    responses = server.received[1].json["contents"][2]["parts"]
    assert [r["functionResponse"]["id"] for r in responses] == [c.id for c in calls]
    # Every signature Gemini sent came back, in order, on the same parts.
    assert len(signatures(server.received[-1].json)) == 4
    assert first.finish_reason == "tool_calls" and first.raw_finish_reason == "STOP"
    assert load_history(dump_history(history)) == history


@pytest.mark.anyio
async def test_streamed_call_signature_replayed_unchanged() -> None:
    name = "test_google_streaming_tool_call_thought_signature"
    server, _, _, completions, events = await drive(name, streamed=frozenset({0, 1}))
    call_events = [e for e in events[0] if isinstance(e, ToolCallDelta)]
    assert call_events[0].name == "get_country" and call_events[0].id
    assert "".join(e.arguments for e in call_events) == "{}"
    first, second = completions
    assert first.finish_reason == "tool_calls"
    assert first.usage.reasoning_tokens == 202 and first.usage.output_tokens == 212
    recorded = cassette(name)[1].request_json
    assert signatures(server.received[1].json) == signatures(recorded)
    assert "".join(e.text for e in events[1] if isinstance(e, TextDelta)) == second.text
    assert second.text == "The capital of Mexico is Mexico City."
    assert second.usage.input_tokens == 257  # the last chunk's totals, not a sum


@pytest.mark.anyio
async def test_code_execution_parts_replay_whole() -> None:
    server, _, _, completions, _ = await drive("test_code_execution")
    first = completions[0]
    kinds = [type(p).__name__ for p in first.message.parts]
    assert kinds[:4] == [
        "ServerToolCallBlock",
        "ServerToolResultBlock",
        "ServerToolCallBlock",
        "ServerToolResultBlock",
    ]
    code = first.message.parts[0]
    assert isinstance(code, ServerToolCallBlock) and code.name == "code_execution"
    assert "pytz" in code.arguments["code"]
    result = first.message.parts[1]
    assert isinstance(result, ServerToolResultBlock) and not result.is_error
    assert result.content["output"].startswith("Current day in Utrecht")
    assert first.usage.server_tool_requests == {"code_execution": 2}
    assert "Thursday" in first.text
    recorded = cassette("test_code_execution")[1].request_json
    assert signatures(server.received[1].json) == signatures(recorded)


@pytest.mark.anyio
async def test_code_execution_stream() -> None:
    _, _, _, completions, events = await drive(
        "test_code_execution_stream", streamed=frozenset({0})
    )
    (done,) = completions
    assert [type(p).__name__ for p in done.message.parts] == [
        "ServerToolCallBlock",
        "ServerToolResultBlock",
        "TextBlock",
        "TextBlock",
    ]
    # The signature that came on the last (empty) text part stays on a part of its own.
    last = done.message.parts[-1]
    assert isinstance(last, TextBlock) and last.text == "" and last.provider_state
    assert done.text.endswith("-428,330,955.97745**.")
    assert "".join(e.text for e in events[0] if isinstance(e, TextDelta)) == done.text
    usage = done.usage
    assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (507, 276, 168)


@pytest.mark.anyio
async def test_builtin_and_function_tools_together() -> None:
    name = "test_function_tools_with_builtin_tools"
    server, _, _, completions, _ = await drive(name)
    first = completions[0]
    assert server.received[0].json["toolConfig"] == {"includeServerSideToolInvocations": True}
    call = first.tool_calls[0]
    assert (call.id, call.name, call.args) == ("oqeiriep", "calculator", {"expression": "2+2"})
    server_calls = first.server_tool_calls
    assert server_calls[0].name == "google_search_web"
    assert server_calls[0].arguments == {"queries": ["current weather in Tokyo"]}
    recorded = cassette(name)[1].request_json
    assert signatures(server.received[1].json) == signatures(recorded)
    assert completions[-1].citations  # the final answer is grounded


@pytest.mark.anyio
async def test_web_search_grounding_becomes_citations() -> None:
    _, _, _, completions, _ = await drive("test_google_model_web_search_tool")
    first = completions[0]
    citations = first.citations
    assert citations and all(c.url for c in citations)
    block = next(p for p in first.message.parts if isinstance(p, TextBlock) and p.citations)
    for citation in block.citations:
        assert citation.cited_text is not None
        assert block.text[citation.start_index : citation.end_index] == citation.cited_text
    assert first.message.provider_state
    assert first.message.provider_state["grounding_metadata"]["webSearchQueries"]
    assert first.usage.server_tool_requests["web_search"] >= 1


@pytest.mark.anyio
async def test_web_search_stream_matches_the_whole_answer() -> None:
    _, _, _, completions, events = await drive(
        "test_google_model_web_search_tool_stream", streamed=frozenset({0})
    )
    streamed = completions[0]
    assert streamed.citations
    assert "".join(e.text for e in events[0] if isinstance(e, TextDelta)) == streamed.text


@pytest.mark.anyio
async def test_vertex_with_fake_credentials() -> None:
    name = "test_google_vertex_tool_combination_omits_include_server_side_tool_invocations"
    server, made, _, completions, _ = await drive(name)
    assert made.provider == "vertex"
    first = server.received[0]
    assert first.headers["authorization"] == "Bearer fake-vertex-token"
    assert "/projects/gen-lang-client-0498264908/locations/global/" in first.path
    assert "includeServerSideToolInvocations" not in json.dumps(first.json)
    assert completions[0].tool_calls[0].id == "vcyiitct"
    assert completions[0].message.provider == "vertex"
    assert completions[-1].citations


# --- replay to others, providers ------------------------------------------------------------------


def test_another_providers_turn_goes_without_state() -> None:
    made = gemini("gemini-3-flash-preview", api_key="k")
    turn = AssistantMessage(
        parts=[
            ReasoningBlock("thinking", provider_state={"signature": "x"}),
            TextBlock("Let me look.", provider_state={"thought_signature": "AAAA"}),
            ToolCallBlock("toolu_1", "lookup", "{}"),
            ToolCallBlock("toolu_2", "lookup", "{}"),
        ],
        provider="anthropic",
        api="messages",
    )
    history: list[Message] = [
        UserMessage.of("hi"),
        turn,
        ToolResultMessage.from_result("toolu_1", "lookup", __import__("toolwire").text_result("a")),
    ]
    contents, _ = made.wire_request(made.prepare(ModelRequest(messages=history)))
    parts = contents[1]["parts"]
    assert [p["text"] for p in parts if "text" in p] == ["Let me look."]
    assert all("thought" not in p for p in parts)
    signatures_sent = [p.get("thought_signature") for p in parts]
    # Gemini's documented placeholder on the first call, nothing else.
    assert signatures_sent == [None, b"skip_thought_signature_validator", None]


def test_providers_resolve_and_need_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(ValueError, match="GEMINI_API_KEY"):
        model("google:gemini-2.5-flash")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    made = model("gemini:gemini-2.5-flash")
    assert isinstance(made, GeminiModel) and made.provider == "google"
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(ValueError, match="GOOGLE_CLOUD_PROJECT"):
        model("vertex:gemini-2.5-flash")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p1")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    made = model("vertex:gemini-2.5-flash", credentials=Credentials(token="t"))
    assert isinstance(made, GeminiModel) and made.provider == "vertex"
    assert made.client._api_client.location == "europe-west4"  # pyright: ignore[reportPrivateUsage]


@pytest.mark.anyio
async def test_agent_loop_on_vertex_with_search_beside_a_function() -> None:
    name = "test_google_vertex_tool_combination_omits_include_server_side_tool_invocations"
    get_user_city = tool(
        name="get_user_city",
        description="The city the user lives in.",
        parameters={"type": "object", "properties": {}},
        execute=lambda args: "San Francisco",
    )
    first = cassette(name)[0].request_json
    settings = {"tools": [{"googleSearch": {}}], **first["generationConfig"]}
    async with replayed(name) as (server, made):
        agent = Agent(
            made,
            instructions="You are a helpful chatbot.",
            tools=[get_user_city],
            settings=settings,
        )
        result = await agent.run(first["contents"][0]["parts"][0]["text"])
    sent = [r.json for r in server.received]
    recorded = [i.request_json for i in cassette(name)]
    assert [normalised(s) for s in sent] == [normalised(r) for r in recorded]
    assert "San Francisco" in result.text
    assert result.usage.requests == 2
    assert load_history(dump_history(result.messages)) == result.messages


def test_state_written_through_the_gemini_api_is_not_replayed_to_vertex() -> None:
    turn = AssistantMessage(
        parts=[
            ServerToolCallBlock(
                "c1", "code_execution", provider_state={"part": {"executableCode": {"code": "1"}}}
            ),
            ToolCallBlock("a", "lookup", "{}", provider_state={"thought_signature": "c2ln"}),
        ],
        provider="google",
        api="generate-content",
    )
    history: list[Message] = [UserMessage.of("hi"), turn]
    on_vertex = vertex("gemini-2.5-flash", project="p", credentials=Credentials(token="t"))
    on_gemini = gemini("gemini-2.5-flash", api_key="k")
    foreign, _ = on_vertex.wire_request(on_vertex.prepare(ModelRequest(messages=history)))
    own, _ = on_gemini.wire_request(on_gemini.prepare(ModelRequest(messages=history)))
    assert foreign[1]["parts"] == [
        {
            "function_call": {"id": "a", "name": "lookup", "args": {}},
            "thought_signature": b"skip_thought_signature_validator",
        }
    ]
    assert len(own[1]["parts"]) == 2
    assert own[1]["parts"][1]["thought_signature"] == b"sig"


@pytest.mark.anyio
async def test_a_stream_assembles_into_the_turn_the_whole_answer_gives() -> None:
    """The recorded code-execution stream, and the same answer sent whole (its chunks' parts in
    one response, consecutive unsigned text joined as Gemini does): the same turn."""
    stream = cassette("test_code_execution_stream")[0].body.decode()
    chunks = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        for part in chunk["candidates"][0]["content"]["parts"]:
            previous = parts[-1] if parts else None
            if part.get("text") == "" and "thoughtSignature" not in part:
                continue
            if (
                previous is not None
                and "text" in part
                and "text" in previous
                and "thoughtSignature" not in part
            ):
                previous["text"] += part["text"]
            else:
                parts.append(dict(part))
    whole = {
        **chunks[-1],
        "candidates": [
            {**chunks[-1]["candidates"][0], "content": {"role": "model", "parts": parts}}
        ],
    }
    replies = [Reply.of_sse(stream), Reply.of_json(200, whole)]
    with ReplayServer(replies) as server:
        async with gemini("gemini-3-flash-preview", api_key="k", base_url=server.base_url) as made:
            events = [e async for e in made.stream_complete("hi")]
            done = events[-1]
            assert isinstance(done, CompletionDone)
            parsed = await made.complete("hi")
    assert done.completion.message == parsed.message
    assert done.completion.usage == parsed.usage
    assert done.completion.finish_reason == parsed.finish_reason == "stop"
