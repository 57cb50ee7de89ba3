"""The specification's native-tool rules through the real SDKs against a local server: Groq's
compound tools in one `compound_custom`, `parse(tools=[web_search()])` on Gemini and Vertex, and
Gemini's `blocked_domains` refusal with its reason."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.oauth2.credentials import Credentials
from model_servers import closing
from pydantic import BaseModel

from recordings.replay import ReplayServer, Reply
from toolwire import (
    TestModel,
    UnsupportedError,
    code_execution,
    tool,
    web_fetch,
    web_search,
)
from toolwire.models.base import ModelRequest, forbid_model_requests
from toolwire.models.google import gemini, vertex
from toolwire.models.profiles import GEMINI_NO_EXCLUDE_DOMAINS
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio


class City(BaseModel):
    name: str
    country: str


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return city


def groq_answer() -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-g",
            "object": "chat.completion",
            "model": "groq/compound",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Found it."},
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        },
    )


async def test_groq_compound_merges_its_built_in_tools_into_one_list() -> None:
    with ReplayServer([groq_answer()]) as server:
        compound = closing(
            chat_model("groq", "groq/compound", api_key="k", base_url=server.base_url + "/v1")
        )
        answer = await compound.complete(
            "Read example.org and compute its length",
            tools=[web_search(), web_fetch(), code_execution()],
        )
    assert answer.message.text == "Found it."
    body = server.received[0].json
    assert body["compound_custom"] == {
        "tools": {"enabled_tools": ["web_search", "visit_website", "code_interpreter"]}
    }
    assert "tools" not in body


async def test_groq_compound_merge_keeps_each_tools_own_settings_and_refuses_a_clash() -> None:
    compound = chat_model("groq", "groq/compound-mini", api_key="k")
    with forbid_model_requests():
        search = web_search(provider_overrides={"groq": {"models": {"reasoning": "a"}}})
        request = compound.resolve_native_tools(
            ModelRequest.build("hi", tools=[search, web_fetch(), web_search()])
        )
        assert request.settings.extra["compound_custom"] == {
            "tools": {"enabled_tools": ["web_search", "visit_website"]},
            "models": {"reasoning": "a"},
        }
        clash = web_fetch(provider_overrides={"groq": {"models": {"reasoning": "b"}}})
        with pytest.raises(UnsupportedError, match="differently"):
            await compound.complete("hi", tools=[search, clash])


def gemini_answer(text: str) -> Reply:
    return Reply.of_json(
        200,
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6},
            "modelVersion": "gemini-3-flash-preview",
        },
    )


@pytest.mark.parametrize("where", ["gemini", "vertex"])
async def test_parse_takes_native_specs_in_tools_on_gemini_and_vertex(where: str) -> None:
    answer = json.dumps({"name": "Utrecht", "country": "NL"})
    with ReplayServer([gemini_answer(answer), gemini_answer(answer)]) as server:
        if where == "gemini":
            made: Any = gemini("gemini-3-flash-preview", api_key="k", base_url=server.base_url)
        else:
            made = vertex(
                "gemini-3-flash-preview",
                project="p",
                location="global",
                credentials=Credentials(token="t"),
                base_url=server.base_url,
            )
        async with made:
            parsed = await made.parse("Where is the Dom?", output_type=City, tools=[web_search()])
            streamed = [
                p
                async for p in made.stream_parse(
                    "Where is the Dom?", output_type=City, tools=[web_search()]
                )
            ]
    assert parsed.output == City(name="Utrecht", country="NL")
    assert streamed[-1].final and streamed[-1].value == parsed.output
    for received in server.received:
        body = received.json
        assert body["tools"] == [{"googleSearch": {}}]
        assert body["generationConfig"]["responseMimeType"] == "application/json"


async def test_parse_refuses_function_tools_only() -> None:
    model = TestModel(provider="gemini", model_name="gemini-3-flash-preview")
    with pytest.raises(TypeError, match="no function tools"):
        await model.parse("Where?", output_type=City, tools=[web_search(), lookup])
    # Elsewhere a native tool with a structured answer is refused before any request.
    claude = TestModel(provider="anthropic", model_name="claude-sonnet-4-5")
    with pytest.raises(UnsupportedError, match="cannot combine native tools"):
        await claude.parse("Where?", output_type=City, tools=[web_search()])
    # The keyword takes specs and raw payloads alike.
    parsed = await model.parse("Where?", output_type=City, native_tools=[{"google_search": {}}])
    assert isinstance(parsed.output, City)
    assert model.requests[-1].native_tools == [{"google_search": {}}]


async def test_gemini_refuses_blocked_domains_with_the_reason_and_vertex_maps_it() -> None:
    made = gemini("gemini-3-flash-preview", api_key="k")
    with forbid_model_requests(), pytest.raises(UnsupportedError) as caught:
        await made.complete("News?", tools=[web_search(blocked_domains=["x.com"])])
    assert GEMINI_NO_EXCLUDE_DOMAINS in str(caught.value)
    assert "cookbook/issues/1389" in str(caught.value)
    with ReplayServer([gemini_answer("ok")]) as server:
        async with vertex(
            "gemini-3-flash-preview",
            project="p",
            location="global",
            credentials=Credentials(token="t"),
            base_url=server.base_url,
        ) as on_vertex:
            await on_vertex.complete("News?", tools=[web_search(blocked_domains=["x.com"])])
    # The SDK sends the proto field name, which Vertex reads as `excludeDomains`.
    assert server.received[0].json["tools"] == [{"googleSearch": {"exclude_domains": ["x.com"]}}]
