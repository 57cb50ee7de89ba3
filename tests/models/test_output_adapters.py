"""Native structured output on the wire, through the real SDKs and a local server: OpenAI's
`response_format` (strict JSON Schema, or JSON mode for DeepSeek), Anthropic's `output_config`,
refusals, and tool mode refused where the provider refuses forced tool use."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from recordings.replay import ReplayServer, Reply
from toolwire.errors import UnsupportedError
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.providers import chat_model

pytestmark = pytest.mark.anyio


class Weather(pydantic.BaseModel):
    city: str
    celsius: float
    note: str | None = None


def chat(message: dict[str, Any]) -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        },
    )


def claude(content: list[dict[str, Any]], stop: str = "end_turn") -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    )


async def test_openai_sends_a_strict_json_schema_and_validates_the_answer() -> None:
    answer = '{"city": "Recife", "celsius": 31, "note": null}'
    with ReplayServer([chat({"content": answer})]) as server:
        async with chat_model(
            "openai", "gpt-test", api_key="k", base_url=server.base_url + "/v1"
        ) as model:
            result = await model.parse("Weather in Recife?", output_type=Weather)
    assert result.output == Weather(city="Recife", celsius=31)
    body = server.received[0].json
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]
    assert schema["name"] == "Weather" and schema["strict"] is True
    # Strict: every property listed, optional ones nullable, no extra properties.
    assert sorted(schema["schema"]["required"]) == ["celsius", "city", "note"]
    assert schema["schema"]["additionalProperties"] is False
    assert "tools" not in body


async def test_openai_refusal_is_reported_not_validated() -> None:
    with ReplayServer([chat({"content": None, "refusal": "I can't."})]) as server:
        async with chat_model(
            "openai", "gpt-test", api_key="k", base_url=server.base_url + "/v1"
        ) as model:
            result = await model.parse("?", output_type=Weather)
    assert result.output is None and result.refusal == "I can't."


async def test_deepseek_uses_json_mode_with_the_schema_in_the_instructions() -> None:
    answer = '{"city": "Natal", "celsius": 29.5}'
    with ReplayServer([chat({"content": answer})]) as server:
        async with chat_model(
            "deepseek", "deepseek-chat", api_key="k", base_url=server.base_url
        ) as model:
            result = await model.parse("Weather in Natal?", output_type=Weather)
    assert result.output == Weather(city="Natal", celsius=29.5)
    body = server.received[0].json
    assert body["response_format"] == {"type": "json_object"}
    first = body["messages"][0]
    assert first["role"] == "system" and '"celsius"' in first["content"]


async def test_anthropic_sends_output_config_and_keeps_other_output_settings() -> None:
    answer = '{"city": "Olinda", "celsius": 30, "note": "humid"}'
    with ReplayServer([claude([{"type": "text", "text": answer}])]) as server:
        async with AnthropicModel(
            "claude-test", api_key="k", base_url=server.base_url, output_config={"effort": "low"}
        ) as model:
            result = await model.parse("Weather in Olinda?", output_type=Weather)
    assert result.output == Weather(city="Olinda", celsius=30, note="humid")
    config = server.received[0].json["output_config"]
    assert config["effort"] == "low"
    assert config["format"]["type"] == "json_schema"
    assert config["format"]["schema"]["additionalProperties"] is False


async def test_anthropic_tool_mode_runs_through_a_forced_final_tool() -> None:
    call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Weather",
        "input": {"city": "X", "celsius": 1},
    }
    with ReplayServer([claude([call], "tool_use")]) as server:
        async with AnthropicModel("claude-test", api_key="k", base_url=server.base_url) as model:
            result = await model.parse("?", output_type=Weather, mode="tool")
    assert result.output == Weather(city="X", celsius=1)
    body = server.received[0].json
    assert body["tool_choice"] == {"type": "tool", "name": "Weather"}
    assert "output_config" not in body


async def test_anthropic_tool_mode_with_thinking_is_refused_before_any_request() -> None:
    with ReplayServer([]) as server:
        async with AnthropicModel(
            "claude-test",
            api_key="k",
            base_url=server.base_url,
            thinking={"type": "enabled", "budget_tokens": 1024},
        ) as model:
            with pytest.raises(UnsupportedError, match="forced tool use"):
                await model.parse("?", output_type=Weather, mode="tool")
    assert server.received == []


def native_request(model: Any) -> Any:
    from toolwire.models import ModelRequest
    from toolwire.output import OutputType

    request = ModelRequest.build("Weather?")
    request.output = OutputType(Weather).specs("native")[0]
    return model.prepare(request)


def test_openai_responses_asks_through_text_format() -> None:
    from toolwire.models.openai_responses import OpenAIResponsesModel

    model = OpenAIResponsesModel("gpt-test", api_key="k")
    body = model.wire_request(native_request(model))
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "Weather" and fmt["strict"] is True
    assert fmt["schema"]["additionalProperties"] is False


def test_gemini_asks_for_json_with_the_schema() -> None:
    from toolwire.models.google import gemini

    model = gemini("gemini-2.5-flash", api_key="not-used")
    _, config = model.wire_request(native_request(model))
    assert config["response_mime_type"] == "application/json"
    assert set(config["response_json_schema"]["properties"]) == {"city", "celsius", "note"}
    assert model.profile.output_with_native_tools


def test_mistral_asks_through_response_format() -> None:
    from toolwire.models.mistral import MistralModel

    model = MistralModel("mistral-large-latest", api_key="not-used")
    kwargs = model.wire_request(native_request(model))
    fmt = kwargs["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Weather" and fmt["json_schema"]["strict"] is True
    assert "celsius" in fmt["json_schema"]["schema_definition"]["properties"]


def test_mistral_native_tools_with_a_structured_answer_are_refused_before_any_request() -> None:
    from toolwire.models.mistral_conversations import MistralConversationsModel

    model = MistralConversationsModel("mistral-large-latest", api_key="not-used")
    with pytest.raises(UnsupportedError, match="output_mode"):
        model.wire_request(native_request(model))
