"""The whole support matrix, cell by cell: for every provider row and native tool, the offline
stand-in (`ScriptedModel(provider=...)`; `TestModel` checks the same way but cannot invent the
caller's side of computer use) and the real adapter (its SDK talking to a local server)
accept or refuse alike, and each accepts exactly where the profile's cell says "yes".

The local server answers any wire API with a minimal valid answer (Chat Completions, Responses,
Messages, generateContent, Mistral's chat and Conversations), so an accepted cell is a request
that reached the wire; a refused one raised `UnsupportedError` before any request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from google.oauth2.credentials import Credentials
from mistralai.client import models as mistral_wire

from recordings.replay import Received, ReplayServer, Reply
from toolwire import (
    ScriptedModel,
    TestModel,
    UnsupportedError,
    code_execution,
    computer_use,
    web_fetch,
    web_search,
)
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.azure import azure
from toolwire.models.base import ModelBase
from toolwire.models.google import gemini, vertex
from toolwire.models.mistral import MistralModel
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.models.profiles import PROFILES
from toolwire.models.providers import chat_model
from toolwire.native import NATIVE_KINDS, NativeTool

pytestmark = pytest.mark.anyio

_SCREEN = {"display_width": None, "display_height": None}
SPECS: dict[str, Callable[[], NativeTool]] = {
    "web_search": web_search,
    "web_fetch": web_fetch,
    "code_execution": code_execution,
    # One spec every provider with computer use can take: OpenAI's GA tool and Gemini read the
    # screen from the screenshots, the others need its size.
    "computer_use": lambda: computer_use(
        display_width=1280,
        display_height=800,
        provider_overrides={"openai": _SCREEN, "google": _SCREEN, "vertex": _SCREEN},
    ),
}


class AnyApiServer(ReplayServer):
    """Answers each request with a minimal valid answer of the wire API its path names."""

    def __init__(self) -> None:
        super().__init__([])

    def _next(self, received: Received) -> Reply:
        with self._lock:
            self.received.append(received)
        return _answer(received.path)


def _answer(path: str) -> Reply:
    if path.endswith("/responses"):
        message = {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
        return Reply.of_json(
            200,
            {
                "id": "resp_1",
                "object": "response",
                "model": "m",
                "status": "completed",
                "output": [message],
                "usage": {"input_tokens": 1, "output_tokens": 1},
                "error": None,
            },
        )
    if path.endswith("/messages"):
        return Reply.of_json(
            200,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )
    if ":generateContent" in path:
        return Reply.of_json(
            200,
            {
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "ok"}]},
                        "finishReason": "STOP",
                    }
                ],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
            },
        )
    if path.endswith("/conversations"):
        response = mistral_wire.ConversationResponse(
            conversation_id="conv_1",
            outputs=[mistral_wire.MessageOutputEntry(content="ok")],
            usage=mistral_wire.ConversationUsageInfo(
                prompt_tokens=1, completion_tokens=1, total_tokens=2
            ),
        )
        return Reply.of_json(200, response.model_dump(mode="json", by_alias=True))
    return Reply.of_json(
        200,
        {
            "id": "c",
            "object": "chat.completion",
            "model": "m",
            "created": 1,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "ok"},
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
    )


# Each row: the prefix a stand-in takes (`TestModel(provider=...)`), the model names to try
# (families behave differently: Groq's compound models), and the real adapter on a base URL.
Build = Callable[[str, str], ModelBase]
ROWS: dict[str, tuple[str, tuple[str, ...], Build]] = {
    "OpenAI Responses": (
        "openai-responses",
        ("gpt-5", "computer-use-preview"),
        lambda url, name: OpenAIResponsesModel(name, api_key="k", base_url=url + "/v1"),
    ),
    "OpenAI Chat": (
        "openai",
        ("gpt-5", "computer-use-preview"),
        lambda url, name: chat_model("openai", name, api_key="k", base_url=url + "/v1"),
    ),
    "Azure Responses": (
        "azure",
        ("my-gpt",),
        lambda url, name: azure(name, api="responses", endpoint=url, api_key="k"),
    ),
    "Azure Chat": (
        "azure",
        ("my-gpt",),
        lambda url, name: azure(name, endpoint=url, api_key="k", api_version="2024-10-21"),
    ),
    "Anthropic": (
        "anthropic",
        ("claude-sonnet-4-5",),
        lambda url, name: AnthropicModel(name, api_key="k", base_url=url),
    ),
    "Gemini": (
        "gemini",
        ("gemini-3-flash-preview",),
        lambda url, name: gemini(name, api_key="k", base_url=url),
    ),
    "Vertex": (
        "vertex",
        ("gemini-3-flash-preview",),
        lambda url, name: vertex(
            name, project="p", location="global", credentials=Credentials(token="t"), base_url=url
        ),
    ),
    "Mistral": (
        "mistral",
        ("mistral-medium-latest",),
        lambda url, name: MistralModel(name, api_key="k", base_url=url),
    ),
    "Groq": (
        "groq",
        ("openai/gpt-oss-120b", "groq/compound"),
        lambda url, name: chat_model("groq", name, api_key="k", base_url=url + "/v1"),
    ),
    "OpenRouter": (
        "openrouter",
        ("deepseek/deepseek-chat",),
        lambda url, name: chat_model("openrouter", name, api_key="k", base_url=url + "/v1"),
    ),
    "Ollama": (
        "ollama",
        ("gpt-oss:20b",),
        lambda url, name: chat_model("ollama", name, api_key="k", base_url=url + "/v1"),
    ),
    "DeepSeek": (
        "deepseek",
        ("deepseek-chat",),
        lambda url, name: chat_model("deepseek", name, api_key="k", base_url=url + "/v1"),
    ),
    "OpenAI-compatible": (
        "openai-compatible",
        ("llama",),
        lambda url, name: chat_model("openai-compatible", name, base_url=url + "/v1"),
    ),
}


async def _outcome(model: Any, spec: NativeTool) -> str | None:
    """`None` when the model took the tool (an answer came), else the refusal's text."""
    try:
        completion = await model.complete("Use the tool.", tools=[spec])
    except UnsupportedError as exc:
        return str(exc)
    assert completion.message.text == "ok"  # the local server's, or the script's
    return None


def test_every_row_of_the_matrix_is_tried() -> None:
    assert set(ROWS) == {p.name for p in PROFILES}


@pytest.mark.parametrize("label", list(ROWS))
async def test_stand_in_and_real_adapter_accept_or_refuse_alike(label: str) -> None:
    prefix, names, build = ROWS[label]
    profile = next(p for p in PROFILES if p.name == label)
    seen: list[tuple[str, str, bool]] = []
    with AnyApiServer() as server:
        for name in names:
            real = build(server.base_url, name)
            async with real:  # type: ignore[attr-defined]
                assert real.profile is profile
                for kind in NATIVE_KINDS:
                    before = len(server.received)
                    real_says = await _outcome(real, SPECS[kind]())
                    stand_in = ScriptedModel(["ok"], provider=prefix, model_name=name)
                    stand_in_says = await _outcome(stand_in, SPECS[kind]())
                    where = f"{label} ({name}) {kind}()"
                    # Alike: both take it, or both refuse it, naming the tool.
                    assert (real_says is None) == (stand_in_says is None), (
                        where,
                        real_says,
                        stand_in_says,
                    )
                    if real_says is not None and stand_in_says is not None:
                        assert kind in real_says and kind in stand_in_says, where
                        assert len(server.received) == before, f"{where}: refused after sending"
                    else:
                        assert len(server.received) == before + 1, f"{where}: nothing sent"
                    seen.append((name, kind, real_says is None))
    # A "yes" cell is taken by at least one of the row's models, a "no" cell by none.
    for kind in NATIVE_KINDS:
        taken = any(ok for _, k, ok in seen if k == kind)
        assert taken == profile.cell(kind).supported, (label, kind)


async def test_openai_and_azure_chat_take_native_tools_now() -> None:
    with AnyApiServer() as server:
        for label in ("OpenAI Chat", "Azure Chat"):
            prefix, names, build = ROWS[label]
            async with build(server.base_url, names[0]) as real:  # type: ignore[attr-defined]
                assert await _outcome(real, web_search()) is None
            stand_in = TestModel(provider=prefix, model_name=names[0])
            assert (await stand_in.complete("hi", tools=[web_search()])).server_tool_calls
    assert [r.path.rsplit("/", 1)[-1] for r in server.received] == ["responses", "responses"]
