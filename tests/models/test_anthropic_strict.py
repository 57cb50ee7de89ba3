"""Anthropic's strict tool use: on the models that have it (a profile fact), a strict tool goes
out with `strict: true` and its schema as strict mode takes it, the definition's change report
saying what that required. Request shapes through the real SDK against a local server (no
recording of strict tool use exists)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from model_servers import closing
from pydantic import BaseModel, Field

from recordings.replay import ReplayServer, Reply
from toolwire import ToolArgumentsError, compile_schema, tool
from toolwire._dialect_anthropic import STRICT_LIMITS
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.profiles import ANTHROPIC

pytestmark = pytest.mark.anyio


def answer() -> Reply:
    return Reply.of_json(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    )


@tool
def book(
    city: str,
    nights: Annotated[int, Field(ge=1, le=30)],
    code: Annotated[str, Field(min_length=3, pattern=r"^[A-Z]+$")],
    note: str | None = None,
) -> str:
    """Book a hotel."""
    return city


@tool
def anything(data: dict[str, Any]) -> str:
    """Takes any object (not strict)."""
    return "ok"


class Node(BaseModel):
    name: str
    children: list[Node] = []


@tool
def tree(root: Node) -> str:
    """Walk a tree (recursive: OpenAI's strict mode takes it, Anthropic's does not)."""
    return root.name


async def sent_tools(model_name: str, *tools: Any) -> list[dict[str, Any]]:
    with ReplayServer([answer()]) as server:
        model = closing(AnthropicModel(model_name, api_key="k", base_url=server.base_url))
        await model.complete("Book it.", tools=list(tools))
    assert server.mismatches == []
    return server.received[0].json["tools"]


def test_which_models_take_strict_tools_is_a_profile_fact() -> None:
    for name in ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-opus-4-6"):
        assert ANTHROPIC.strict_for(name), name
    assert ANTHROPIC.strict_for("claude-haiku-4-5")
    for name in ("claude-3-5-haiku-latest", "claude-opus-4-1", "claude-sonnet-4-0", "claude-x"):
        assert not ANTHROPIC.strict_for(name), name


async def test_a_strict_tool_goes_out_strict_with_what_strict_mode_required() -> None:
    (spec,) = await sent_tools("claude-sonnet-4-5", book)
    assert spec["strict"] is True
    schema = spec["input_schema"]
    assert schema["additionalProperties"] is False
    # Optional parameters stay optional (unlike OpenAI's strict mode).
    assert sorted(schema["required"]) == ["city", "code", "nights"]
    assert schema["properties"]["nights"] == {"type": "integer"}
    assert schema["properties"]["code"]["pattern"] == "^[A-Z]+$"
    assert "minLength" not in schema["properties"]["code"]
    changes = book.definition("anthropic-strict").changes
    assert any("properties.nights: dropped 'minimum'" in c for c in changes)
    assert any("properties.code: dropped 'minLength'" in c for c in changes)
    opened = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 9}}}
    compiled = compile_schema(opened, "anthropic-strict")
    assert compiled.schema["additionalProperties"] is False
    assert compiled.changes == (
        "(root): set 'additionalProperties' to false (was unset; anthropic-strict needs it)",
        "properties.a: dropped 'maxLength' (anthropic-strict takes no such constraint; "
        "toolwire still checks it)",
    )
    # toolwire still checks what strict mode could not.
    with pytest.raises(ToolArgumentsError, match="nights"):
        book.parse_args('{"city": "Utrecht", "nights": 0, "code": "NLD"}')


async def test_older_models_and_loose_schemas_are_not_sent_strict() -> None:
    (old,) = await sent_tools("claude-opus-4-1", book)
    assert "strict" not in old
    assert old["input_schema"]["properties"]["nights"]["minimum"] == 1
    (loose,) = await sent_tools("claude-sonnet-4-5", anything)
    assert "strict" not in loose


async def test_a_schema_strict_mode_cannot_express_is_sent_plain_with_the_reason() -> None:
    assert tree.strict  # OpenAI's strict mode expresses the recursion
    (spec,) = await sent_tools("claude-sonnet-4-5", tree)
    assert "strict" not in spec
    changes = tree.definition("anthropic-strict").changes
    assert any("not sent strict" in c and "recursive '$ref'" in c for c in changes)


async def test_past_the_per_request_caps_every_tool_goes_plain() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    many = [
        tool(parameters=schema, name=f"t{i}", description="A tool.")
        for i in range(STRICT_LIMITS["strict tools"] + 1)
    ]
    specs = await sent_tools("claude-sonnet-4-5", *many)
    assert len(specs) == 21 and not any("strict" in s for s in specs)
    specs = await sent_tools("claude-sonnet-4-5", *many[:20])
    assert all(s["strict"] is True for s in specs)
