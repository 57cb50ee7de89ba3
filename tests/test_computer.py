"""Computer use end to end: the request toolwire sends, the action it exposes, and the caller's
screenshot replayed in each provider's format, through the real SDKs against a local server.

No public recording of computer-use traffic exists (searched 2026-12-01: pydantic-ai, openai-agents,
langchain, llm cassettes), so the server answers with responses built through the SDKs' own
response models (`BetaMessage`, `Response`, `GenerateContentResponse`, stream event unions), which
validate every field the way the SDK reads it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pydantic
import pytest
from anthropic.types.beta import BetaMessage, BetaRawMessageStreamEvent
from google.genai import types as gtypes
from google.oauth2.credentials import Credentials
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import Response, ResponseStreamEvent

from recordings.replay import ReplayServer, Reply, sse
from toolwire import (
    Agent,
    CompletionDone,
    ComputerAction,
    ComputerCall,
    RunResult,
    UnsupportedError,
    computer_result,
    computer_use,
    dump_history,
    load_history,
    tool,
)
from toolwire.computer import (
    GEMINI_COMPUTER_FUNCTIONS,
    answerable_calls,
    anthropic_action,
    gemini_action,
    openai_actions,
)
from toolwire.messages import AssistantMessage, Message, ServerToolCallBlock, UserMessage
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.azure import azure
from toolwire.models.google import gemini, vertex
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.results import ImagePart

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
PNG_B64 = base64.b64encode(PNG).decode()


Closing = Callable[[Any], Any]


@pytest.fixture
async def closing() -> AsyncIterator[Closing]:
    """Models made in a test, closed at its end (their connections with them)."""
    made: list[Any] = []

    def keep(model: Any) -> Any:
        made.append(model)
        return model

    yield keep
    for model in made:
        await model.aclose()


# --- responses built through the SDKs' models -----------------------------------------------------


def _anthropic_body(content: list[dict[str, Any]], stop: str = "tool_use") -> dict[str, Any]:
    message = BetaMessage.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1200, "output_tokens": 40},
        }
    )
    return message.model_dump(mode="json", exclude_none=True)


def _anthropic(content: list[dict[str, Any]], stop: str = "tool_use") -> Reply:
    return Reply.of_json(200, _anthropic_body(content, stop))


_ANTHROPIC_EVENT: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(BetaRawMessageStreamEvent)


def _anthropic_stream(tool_use: dict[str, Any]) -> Reply:
    start = _anthropic_body([])
    events = [
        {"type": "message_start", "message": start},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**tool_use, "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_use["input"])},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 40},
        },
        {"type": "message_stop"},
    ]
    checked = [
        _ANTHROPIC_EVENT.dump_python(_ANTHROPIC_EVENT.validate_python(e), mode="json")
        for e in events
    ]
    return Reply.of_sse(sse(checked, named=[e["type"] for e in checked]))


_USAGE = {
    "input_tokens": 900,
    "output_tokens": 30,
    "total_tokens": 930,
    "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
    "output_tokens_details": {"reasoning_tokens": 0},
}


def _openai_body(
    output: list[dict[str, Any]], model: str = "gpt-5.4", tools: list[Any] | None = None
) -> dict[str, Any]:
    response = Response.model_validate(
        {
            "id": "resp_01",
            "object": "response",
            "created_at": 1764547200,
            "model": model,
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": tools or [{"type": "computer"}],
            "usage": _USAGE,
        }
    )
    return response.model_dump(mode="json", exclude_none=True)


def _openai(output: list[dict[str, Any]], **kwargs: Any) -> Reply:
    return Reply.of_json(200, _openai_body(output, **kwargs))


_OPENAI_EVENT: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)


def _openai_stream(item: dict[str, Any]) -> Reply:
    done = _openai_body([item])
    started = {**done, "status": "in_progress", "output": []}
    events = [
        {"type": "response.created", "response": started, "sequence_number": 0},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress"},
            "sequence_number": 1,
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": item,
            "sequence_number": 2,
        },
        {"type": "response.completed", "response": done, "sequence_number": 3},
    ]
    checked = [
        _OPENAI_EVENT.dump_python(_OPENAI_EVENT.validate_python(e), mode="json", exclude_none=True)
        for e in events
    ]
    return Reply.of_sse(sse(checked, named=[e["type"] for e in checked]))


def _gemini_body(parts: list[dict[str, Any]]) -> dict[str, Any]:
    response = gtypes.GenerateContentResponse.model_validate(
        {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {
                "promptTokenCount": 800,
                "candidatesTokenCount": 20,
                "totalTokenCount": 820,
            },
            "modelVersion": "gemini-2.5-computer-use-preview-10-2025",
            "responseId": "r1",
        }
    )
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)


def _gemini(parts: list[dict[str, Any]]) -> Reply:
    return Reply.of_json(200, _gemini_body(parts))


def _text_anthropic(text: str) -> Reply:
    return _anthropic([{"type": "text", "text": text}], stop="end_turn")


def _one(server: ReplayServer, index: int) -> dict[str, Any]:
    return server.received[index].json


# --- Anthropic ------------------------------------------------------------------------------------

_SCREEN = {"display_width": 1280, "display_height": 800}
_CLICK = {
    "type": "tool_use",
    "id": "toolu_01",
    "name": "computer",
    "input": {"action": "left_click", "coordinate": [640, 400]},
}


async def test_anthropic_sends_the_beta_tool_and_header_and_replays_the_screenshot(
    closing: Closing,
) -> None:
    replies = [_anthropic([{"type": "text", "text": "Clicking."}, _CLICK]), _text_anthropic("Done")]
    with ReplayServer(replies) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        spec = computer_use(**_SCREEN, display_number=1)
        first = await model.complete("Open the menu", tools=[spec])
        [block] = first.server_tool_calls
        call = ComputerCall.from_block(block)
        assert (call.id, call.provider) == ("toolu_01", "anthropic")
        assert call.actions[0].type == "click"
        assert (call.actions[0].x, call.actions[0].y, call.actions[0].button) == (640, 400, "left")
        assert call.raw == _CLICK["input"]
        assert first.tool_calls == []  # nothing for a function-tool runner to pick up
        assert first.finish_reason == "tool_calls"

        history: list[Message] = [
            UserMessage.of("Open the menu"),
            first.message,
            call.result(PNG, text="The menu is open."),
        ]
        done = await model.complete(history=history, tools=[spec])
    assert done.text == "Done"
    assert server.mismatches == []
    sent = server.received[0]
    assert sent.headers["anthropic-beta"] == "computer-use-2025-01-24"
    assert sent.json["tools"] == [
        {
            "type": "computer_20250124",
            "name": "computer",
            "display_width_px": 1280,
            "display_height_px": 800,
            "display_number": 1,
        }
    ]
    second = _one(server, 1)
    assert second["messages"][1]["content"][1] == _CLICK  # the request goes back verbatim
    result = second["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01"
    assert result["content"] == [
        {"type": "text", "text": "The menu is open."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
    ]
    assert server.received[1].headers["anthropic-beta"] == "computer-use-2025-01-24"


async def test_anthropic_newer_tool_version_sends_its_own_beta(closing: Closing) -> None:
    spec = computer_use(
        **_SCREEN,
        provider_overrides={"anthropic": {"type": "computer_20251124", "enable_zoom": True}},
    )
    zoom = {**_CLICK, "input": {"action": "zoom", "region": [0, 0, 100, 100]}}
    with ReplayServer([_anthropic([zoom])]) as server:
        model = closing(AnthropicModel("claude-opus-4-6", api_key="k", base_url=server.base_url))
        completion = await model.complete(
            "Look closer", tools=[spec], settings={"betas": ["context-1m-2025-08-07"]}
        )
    headers = server.received[0].headers
    assert headers["anthropic-beta"] == "context-1m-2025-08-07,computer-use-2025-11-24"
    assert server.received[0].json["tools"][0]["type"] == "computer_20251124"
    assert "betas" not in server.received[0].json
    [call] = [ComputerCall.from_block(b) for b in completion.server_tool_calls]
    assert call.actions[0].type == "zoom" and call.actions[0].raw["region"] == [0, 0, 100, 100]


async def test_anthropic_streamed_computer_request(closing: Closing) -> None:
    with ReplayServer([_anthropic_stream(_CLICK)]) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        events = [e async for e in model.stream_complete("Click", tools=[computer_use(**_SCREEN)])]
    assert server.received[0].headers["anthropic-beta"] == "computer-use-2025-01-24"
    done = events[-1]
    assert isinstance(done, CompletionDone)
    [call] = [ComputerCall.from_block(b) for b in done.completion.server_tool_calls]
    assert (call.id, call.actions[0].type, call.actions[0].x) == ("toolu_01", "click", 640)


async def test_anthropic_needs_the_screen_size(closing: Closing) -> None:
    model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url="http://127.0.0.1:9"))
    with pytest.raises(UnsupportedError, match="display_width"):
        await model.complete("hi", tools=[computer_use()])
    with pytest.raises(UnsupportedError, match="takes no environment"):
        await model.complete("hi", tools=[computer_use(**_SCREEN, environment="mac")])


# --- the loop -------------------------------------------------------------------------------------


@tool
def note(text: str) -> str:
    """Write a note."""
    return f"noted {text}"


async def test_agent_pauses_for_the_action_and_resumes_with_the_screenshot(
    closing: Closing,
) -> None:
    shot = {**_CLICK, "input": {"action": "screenshot"}}
    noting = {"type": "tool_use", "id": "toolu_02", "name": "note", "input": {"text": "a"}}
    replies = [_anthropic([shot, noting]), _text_anthropic("All done")]
    with ReplayServer(replies) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        agent = Agent(model, tools=[note, computer_use(**_SCREEN)])
        paused = await agent.run("Look at the screen")
        assert paused.stop_reason == "external_calls"
        assert len(server.received) == 1
        [pending] = paused.pending
        assert pending.reason == "computer" and pending.call.name == "computer_use"
        [call] = paused.computer_calls
        assert call.actions[0].type == "screenshot"
        assert [b.name for b in paused.server_tool_calls] == ["computer_use"]
        with pytest.raises(ValueError, match="needs a screenshot"):
            await agent.resume(paused, results={})
        done = await agent.resume(paused, results={call.id: computer_result(PNG)})
    assert done.stop_reason == "completed" and done.text == "All done"
    assert [t.name for t in done.trace] == ["note"]  # the function call ran, the action did not
    results = _one(server, 1)["messages"][2]["content"]
    by_id = {r["tool_use_id"]: r for r in results}
    assert by_id["toolu_02"]["content"] == "noted a"
    assert by_id["toolu_01"]["content"][0]["source"]["data"] == PNG_B64


async def test_agent_stream_pauses_for_the_action_and_resumes_streamed(closing: Closing) -> None:
    replies = [_anthropic_stream(_CLICK), _text_anthropic("Clicked")]
    with ReplayServer(replies) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        agent = Agent(model, tools=[computer_use(**_SCREEN)])
        async with agent.run_stream("Click it") as stream:
            _ = [e async for e in stream]
        paused = stream.result
        assert paused.stop_reason == "external_calls"
        [call] = paused.computer_calls
        done = await agent.run(
            history=paused.messages, results={call.id: computer_result(error="window closed")}
        )
    assert done.text == "Clicked"
    result = _one(server, 1)["messages"][-1]["content"][0]
    assert result["is_error"] is True and "window closed" in json.dumps(result["content"])


async def test_an_unanswered_request_is_repaired_with_an_error_result(closing: Closing) -> None:
    with ReplayServer([_anthropic([_CLICK]), _text_anthropic("ok")]) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        agent = Agent(model, tools=[computer_use(**_SCREEN)])
        paused = await agent.run("Click")
        # A new prompt instead of an answer: the open request gets an error result, never none.
        done = await agent.run("Never mind", history=paused.messages)
    assert done.text == "ok"
    sent = _one(server, 1)["messages"]
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_01"
    assert sent[2]["content"][0]["is_error"] is True


# --- OpenAI Responses and Azure -------------------------------------------------------------------

_OPENAI_CALL = {
    "type": "computer_call",
    "id": "cu_01",
    "call_id": "call_01",
    "status": "completed",
    "pending_safety_checks": [
        {"id": "sc_01", "code": "malicious_instructions", "message": "Check the page."}
    ],
    "actions": [
        {"type": "click", "button": "left", "x": 120, "y": 48},
        {"type": "type", "text": "Ada"},
        {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 30, "y": 40}]},
    ],
}


async def test_openai_ga_computer_call_and_its_output(closing: Closing) -> None:
    replies = [
        _openai([_OPENAI_CALL]),
        _openai(
            [
                {
                    "type": "message",
                    "id": "msg_01",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "Typed.", "annotations": []}],
                }
            ]
        ),
    ]
    with ReplayServer(replies) as server:
        model = closing(
            OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=server.base_url + "/v1")
        )
        first = await model.complete("Fill the form", tools=[computer_use()])
        [call] = first.computer_calls
        assert [b.name for b in first.server_tool_calls] == ["computer_use"]
        assert [a.type for a in call.actions] == ["click", "type", "drag"]
        assert call.actions[2].path == [(1, 2), (30, 40)]
        assert call.safety_checks[0]["id"] == "sc_01"
        assert first.finish_reason == "tool_calls"
        history = [UserMessage.of("Fill the form"), first.message, call.result(PNG, text="Typed")]
        done = await model.complete(history=history, tools=[computer_use()])
    assert done.text == "Typed."
    assert server.mismatches == []
    assert _one(server, 0)["tools"] == [{"type": "computer"}]
    sent = _one(server, 1)["input"]
    assert sent[1] == _OPENAI_CALL  # the item goes back verbatim
    assert sent[2] == {
        "type": "computer_call_output",
        "call_id": "call_01",
        "output": {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG_B64}"},
        "acknowledged_safety_checks": _OPENAI_CALL["pending_safety_checks"],
    }
    assert sent[3] == {"role": "user", "content": "Typed"}


async def test_openai_preview_tool_takes_the_screen_and_truncation(closing: Closing) -> None:
    item = {k: v for k, v in _OPENAI_CALL.items() if k != "actions"}
    item = {**item, "pending_safety_checks": [], "action": {"type": "screenshot"}}
    preview = {"type": "computer_use_preview", **_SCREEN, "environment": "browser"}
    reply = _openai([item], model="computer-use-preview", tools=[preview])
    with ReplayServer([reply]) as server:
        model = closing(
            OpenAIResponsesModel(
                "computer-use-preview", api_key="k", base_url=server.base_url + "/v1"
            )
        )
        completion = await model.complete(
            "Look", tools=[computer_use(**_SCREEN, environment="browser")]
        )
    body = _one(server, 0)
    assert body["tools"] == [preview]
    assert body["truncation"] == "auto"
    [call] = [ComputerCall.from_block(b) for b in completion.server_tool_calls]
    assert call.actions[0].type == "screenshot" and call.safety_checks == []


async def test_openai_refusals_before_any_request(closing: Closing) -> None:
    model = closing(OpenAIResponsesModel("gpt-5.4", api_key="k", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(UnsupportedError, match="computer_use_preview takes them"):
        await model.complete("x", tools=[computer_use(**_SCREEN)])
    preview = closing(
        OpenAIResponsesModel("computer-use-preview", api_key="k", base_url="http://x/v1")
    )
    with pytest.raises(UnsupportedError, match="environment"):
        await preview.complete("x", tools=[computer_use(**_SCREEN, environment="amiga")])
    # An answer without a screenshot has no computer_call_output form.
    with ReplayServer([_openai([_OPENAI_CALL])]) as server:
        live = closing(
            OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=server.base_url + "/v1")
        )
        first = await live.complete("x", tools=[computer_use()])
        call = ComputerCall.from_block(first.server_tool_calls[0])
        history = [UserMessage.of("x"), first.message, call.result(error="no display")]
        with pytest.raises(UnsupportedError, match="takes a screenshot"):
            await live.complete(history=history, tools=[computer_use()])
    assert len(server.received) == 1


async def test_openai_streamed_computer_call(closing: Closing) -> None:
    with ReplayServer([_openai_stream(_OPENAI_CALL)]) as server:
        model = closing(
            OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=server.base_url + "/v1")
        )
        events = [e async for e in model.stream_complete("Fill", tools=[computer_use()])]
    done = events[-1]
    assert isinstance(done, CompletionDone)
    [call] = [ComputerCall.from_block(b) for b in done.completion.server_tool_calls]
    assert call.id == "call_01" and len(call.actions) == 3
    assert _one(server, 0)["stream"] is True


async def test_azure_responses_sends_the_preview_tool(closing: Closing) -> None:
    item = {**_OPENAI_CALL, "actions": None, "action": {"type": "wait"}}
    item = {k: v for k, v in item.items() if v is not None}
    with ReplayServer([_openai([item], model="computer-use-preview")]) as server:
        model = closing(
            azure("computer-use-preview", api="responses", endpoint=server.base_url, api_key="k")
        )
        completion = await model.complete(
            "Wait", tools=[computer_use(**_SCREEN, environment="windows")]
        )
    body = _one(server, 0)
    assert body["tools"] == [{"type": "computer_use_preview", **_SCREEN, "environment": "windows"}]
    assert body["truncation"] == "auto"
    assert server.received[0].path.endswith("/responses")
    [call] = [ComputerCall.from_block(b) for b in completion.server_tool_calls]
    assert call.actions[0].type == "wait"


# --- Gemini and Vertex ----------------------------------------------------------------------------

_GEMINI_CALL = {
    "functionCall": {
        "id": "fc_01",
        "name": "type_text_at",
        "args": {
            "x": 500,
            "y": 250,
            "text": "toolwire",
            "press_enter": True,
            "safety_decision": {"decision": "require_confirmation", "explanation": "A form."},
        },
    },
    "thoughtSignature": base64.b64encode(b"sig").decode(),
}


def _gemini_model(base: str, *, on_vertex: bool = False) -> Any:
    name = "gemini-2.5-computer-use-preview-10-2025"
    if on_vertex:
        return vertex(
            name, project="p", location="global", credentials=Credentials(token="t"), base_url=base
        )
    return gemini(name, api_key="k", base_url=base)


@pytest.mark.parametrize("on_vertex", [False, True], ids=["gemini", "vertex"])
async def test_gemini_computer_use_function_call_and_response(
    on_vertex: bool, closing: Closing
) -> None:
    replies = [_gemini([_GEMINI_CALL]), _gemini([{"text": "Searched."}])]
    spec = computer_use(
        environment="browser",
        excluded_predefined_functions=["drag_and_drop"],
    )
    with ReplayServer(replies) as server:
        model = closing(_gemini_model(server.base_url, on_vertex=on_vertex))
        first = await model.complete("Search for toolwire", tools=[spec, note])
        [call] = [ComputerCall.from_block(b) for b in first.server_tool_calls]
        action = call.actions[0]
        assert (action.type, action.text, action.scale) == ("type", "toolwire", 1000)
        assert (action.in_pixels(1440, 900).x, action.in_pixels(1440, 900).y) == (720, 225)
        assert call.safety_checks == [
            {"decision": "require_confirmation", "explanation": "A form."}
        ]
        assert first.tool_calls == []
        history = [
            UserMessage.of("Search for toolwire"),
            first.message,
            call.result(PNG, url="https://example.com/?q=toolwire"),
        ]
        done = await model.complete(history=history, tools=[spec, note])
    assert done.text == "Searched."
    body = _one(server, 0)
    tools = body["tools"]
    assert tools[0] == {
        "computerUse": {
            "environment": "ENVIRONMENT_BROWSER",
            # Passed through as given (the SDK copies the entry as is; the API reads both).
            "excluded_predefined_functions": ["drag_and_drop"],
        }
    }
    assert tools[1]["functionDeclarations"][0]["name"] == "note"
    contents = _one(server, 1)["contents"]
    model_part = contents[1]["parts"][0]
    assert model_part["functionCall"]["name"] == "type_text_at"
    assert model_part["thoughtSignature"] == _GEMINI_CALL["thoughtSignature"]
    response = contents[2]["parts"][0]["functionResponse"]
    assert response["name"] == "type_text_at"
    assert response["response"] == {
        "url": "https://example.com/?q=toolwire",
        "safety_acknowledgement": "true",
    }
    # The SDK converts the outer key on Vertex only and copies the rest as given: proto JSON
    # takes either spelling of a field.
    [part] = response["parts"]
    [blob] = part.values()
    assert blob == {"data": PNG_B64, "mime_type": "image/png"}


async def test_gemini_declared_function_of_a_predefined_name_stays_a_function_call(
    closing: Closing,
) -> None:
    @tool
    def navigate(url: str) -> str:
        """Open a page in the caller's own way."""
        return url

    reply = _gemini([{"functionCall": {"name": "navigate", "args": {"url": "https://x.test"}}}])
    with ReplayServer([reply]):
        pass
    with ReplayServer([reply]) as server:
        model = closing(_gemini_model(server.base_url))
        spec = computer_use(excluded_predefined_functions=["navigate"])
        completion = await model.complete("Go", tools=[spec, navigate])
    assert [c.name for c in completion.tool_calls] == ["navigate"]
    assert completion.server_tool_calls == []


@pytest.mark.parametrize("on_vertex", [False, True], ids=["gemini", "vertex"])
async def test_gemini_streamed_computer_call(on_vertex: bool, closing: Closing) -> None:
    chunk = _gemini_body([{"functionCall": {"name": "click_at", "args": {"x": 10, "y": 990}}}])
    with ReplayServer([Reply.of_sse(sse([chunk]))]) as server:
        model = closing(_gemini_model(server.base_url, on_vertex=on_vertex))
        events = [e async for e in model.stream_complete("Click", tools=[computer_use()])]
    assert server.received[0].path.endswith(":streamGenerateContent")
    done = events[-1]
    assert isinstance(done, CompletionDone)
    [call] = done.completion.computer_calls
    assert call.actions[0].type == "click"
    assert call.actions[0].in_pixels(1000, 500).y == 495


async def test_gemini_refuses_what_it_does_not_take(closing: Closing) -> None:
    model = closing(_gemini_model("http://127.0.0.1:9"))
    with pytest.raises(UnsupportedError, match="takes no display_width"):
        await model.complete("x", tools=[computer_use(**_SCREEN)])
    with pytest.raises(UnsupportedError, match="environment"):
        await model.complete("x", tools=[computer_use(environment="amiga")])
    # One spec for several providers: `None` takes an option away for one of them.
    spec = computer_use(
        **_SCREEN, provider_overrides={"google": {"display_width": None, "display_height": None}}
    )
    with ReplayServer([_gemini([{"text": "ok"}])]) as server:
        ok = await closing(_gemini_model(server.base_url)).complete("x", tools=[spec])
    assert ok.text == "ok"
    assert _one(server, 0)["tools"] == [{"computerUse": {"environment": "ENVIRONMENT_BROWSER"}}]


# --- the history and other providers --------------------------------------------------------------


async def test_requests_round_trip_and_stay_with_their_provider(closing: Closing) -> None:
    with ReplayServer([_anthropic([_CLICK])]) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        first = await model.complete("Click", tools=[computer_use(**_SCREEN)])
    call = ComputerCall.from_block(first.server_tool_calls[0])
    history: list[Message] = [UserMessage.of("Click"), first.message, call.result(PNG)]
    loaded = load_history(dump_history(history))
    assert loaded == history
    assert isinstance(loaded[1], AssistantMessage)
    assert ComputerCall.from_block(loaded[1].parts[0]) == call  # type: ignore[arg-type]
    assert [c.name for c in answerable_calls(loaded[1])] == ["computer_use"]
    # Another provider gets neither the request nor its answer (it could not pair them).
    with ReplayServer([_openai([{**_OPENAI_CALL, "pending_safety_checks": []}])]) as server:
        other = closing(
            OpenAIResponsesModel("gpt-5.4", api_key="k", base_url=server.base_url + "/v1")
        )
        await other.complete("Next", history=loaded, tools=[computer_use()])
    sent = _one(server, 0)["input"]
    assert sent == [
        {"role": "user", "content": "Click"},
        {"role": "user", "content": "Next"},
    ]


def test_actions_normalised() -> None:
    drag = anthropic_action(
        {"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}
    )
    assert (drag.type, drag.path) == ("drag", [(1, 2), (3, 4)])
    key = anthropic_action({"action": "key", "text": "ctrl+shift+t"})
    assert (key.type, key.keys) == ("keypress", ["ctrl", "shift", "t"])
    scroll = anthropic_action(
        {"action": "scroll", "coordinate": [5, 6], "scroll_direction": "down", "scroll_amount": 3}
    )
    assert (scroll.direction, scroll.amount, scroll.x) == ("down", 3, 5)
    click = anthropic_action({"action": "right_click", "coordinate": [7, 8], "text": "shift"})
    assert (click.type, click.button, click.keys) == ("click", "right", ["shift"])
    assert anthropic_action({"action": "wait", "duration": 2}).duration == 2.0
    [scrolled] = openai_actions(
        {"action": {"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": 300}}
    )
    assert (scrolled.scroll_y, scrolled.x) == (300, 1)
    dragged = gemini_action(
        "drag_and_drop", {"x": 100, "y": 200, "destination_x": 300, "destination_y": 400}
    )
    assert dragged.in_pixels(2000, 1000).path == [(200, 200), (600, 400)]
    assert gemini_action("navigate", {"url": "https://x.test"}).url == "https://x.test"
    assert gemini_action("wait_5_seconds", {}).duration == 5.0
    odd = anthropic_action({"action": "cursor_position"})
    assert odd.type == "cursor_position" and odd.in_pixels(10, 10) is odd
    assert ComputerAction.from_json(drag.to_json()) == drag


def test_answer_needs_a_screenshot_or_an_error() -> None:
    with pytest.raises(ValueError, match="needs a screenshot"):
        computer_result()
    answer = computer_result(ImagePart(url="https://x.test/s.png"), text="ok")
    assert answer.content[-1] == ImagePart(url="https://x.test/s.png")
    assert computer_result(error="gone").is_error
    search = ServerToolCallBlock("ws_1", "web_search", {"query": "x"})
    with pytest.raises(ValueError, match="not a computer-use request"):
        ComputerCall.from_block(search)


async def test_a_paused_request_survives_the_durable_result_store(closing: Closing) -> None:
    with ReplayServer([_anthropic([_CLICK])]) as server:
        model = closing(AnthropicModel("claude-haiku-4-5", api_key="k", base_url=server.base_url))
        paused = await Agent(model, tools=[computer_use(**_SCREEN)]).run("Click")
    loaded = RunResult.from_json(paused.to_json())
    assert loaded.stop_reason == "external_calls"
    assert loaded.computer_calls == paused.computer_calls
    assert loaded.computer_calls[0].actions[0].x == 640


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_FIELD_NAMES = st.sampled_from(
    [
        "action",
        "type",
        "coordinate",
        "start_coordinate",
        "text",
        "x",
        "y",
        "keys",
        "path",
        "scroll_x",
        "scroll_y",
        "scroll_direction",
        "scroll_amount",
        "duration",
        "ms",
        "button",
        "direction",
        "magnitude",
        "destination_x",
        "destination_y",
        "url",
    ]
)
_HOSTILE = st.dictionaries(_FIELD_NAMES | st.text(max_size=6), _JSON, max_size=6)


@settings(max_examples=150, deadline=None)
@given(data=_HOSTILE, name=st.sampled_from(sorted(GEMINI_COMPUTER_FUNCTIONS)) | st.text(max_size=8))
def test_hostile_provider_input_normalises_without_raising(data: dict[str, Any], name: str) -> None:
    actions = [
        anthropic_action(data),
        *openai_actions({"actions": [data], "action": data}),
        gemini_action(name, data),
    ]
    for action in actions:
        assert isinstance(action.type, str)
        for value in (action.x, action.y, action.amount, action.scroll_x, action.scroll_y):
            assert value is None or isinstance(value, int)
        again = ComputerAction.from_json(json.loads(json.dumps(action.to_json())))
        assert again == action
        assert action.in_pixels(800, 600).scale is None
