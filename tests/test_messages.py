from __future__ import annotations

import json

import pytest

from toolwire import (
    AssistantMessage,
    AudioPart,
    Citation,
    FilePart,
    ImagePart,
    Message,
    ReasoningBlock,
    ResourceLinkPart,
    ResourcePart,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    TextPart,
    ToolCall,
    ToolCallBlock,
    ToolError,
    ToolResultMessage,
    UserMessage,
    dump_history,
    load_history,
    text_result,
)
from toolwire.errors import ToolArgumentsError

PNG = b"\x89PNG\r\n\x1a\n\x00\x01\xff"


def full_history() -> list[Message]:
    return [
        SystemMessage("You are terse."),
        UserMessage(
            [
                TextPart("Compare these"),
                ImagePart(data=PNG, mime_type="image/png"),
                ImagePart(url="https://example.com/cat.jpg", mime_type="image/jpeg"),
                FilePart(data=b"%PDF-1.7 ...", filename="report.pdf"),
                AudioPart(data=b"RIFF....WAVE", mime_type="audio/wav"),
            ]
        ),
        AssistantMessage(
            parts=[
                ReasoningBlock("Let me think.", provider_state={"signature": "EqQBCkgI..."}),
                ReasoningBlock(redacted=True, provider_state={"data": "EmwKAhgB..."}),
                ServerToolCallBlock(
                    id="srvtoolu_1", name="web_search", arguments={"query": "cats"}
                ),
                ServerToolResultBlock(
                    call_id="srvtoolu_1",
                    name="web_search",
                    content=[
                        {
                            "type": "web_search_result",
                            "url": "https://a.example",
                            "encrypted_content": "Eq...",
                        }
                    ],
                ),
                TextBlock(
                    "Cats sleep a lot.",
                    citations=[
                        Citation(
                            url="https://a.example",
                            title="A",
                            cited_text="sleep 15h",
                            start_index=0,
                            end_index=17,
                        )
                    ],
                ),
                ToolCallBlock(
                    id="call_1",
                    name="lookup",
                    arguments='{"q": "x"}',
                    provider_state={"thoughtSignature": "CiQB..."},
                ),
                ToolCallBlock(id="call_2", name="lookup", arguments='{"q": "y"}'),
            ],
            provider="anthropic",
            model="claude-sonnet-4-0",
            id="msg_01",
            provider_state={"container": None},
        ),
        ToolResultMessage(
            call_id="call_1",
            name="lookup",
            content=[TextPart("one"), ImagePart(data=PNG)],
            structured={"n": 1},
        ),
        ToolResultMessage(
            call_id="call_2",
            name="lookup",
            content=[
                ResourcePart(uri="mem://r", blob=b"\x00\x01"),
                ResourceLinkPart(uri="file:///x", name="x"),
            ],
            is_error=True,
        ),
    ]


def test_history_round_trips_through_json_unchanged() -> None:
    history = full_history()
    text = dump_history(history)
    assert json.loads(text)[0] == {"text": "You are terse.", "kind": "system"}
    assert load_history(text) == history
    assert dump_history(load_history(text)) == text


def test_bytes_are_base64_in_json() -> None:
    data = json.loads(dump_history([UserMessage([ImagePart(data=PNG)])]))
    assert data[0]["content"][0]["data"] == "iVBORw0KGgoAAf8="


def test_load_history_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="kind"):
        load_history('[{"kind": "robot", "text": "x"}]')


def test_assistant_views() -> None:
    message = full_history()[2]
    assert isinstance(message, AssistantMessage)
    assert message.text == "Cats sleep a lot."
    assert [c.id for c in message.tool_calls] == ["call_1", "call_2"]


def test_file_part_needs_data_or_url() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        FilePart()


def test_tool_call_args_and_result() -> None:
    call = ToolCall(id="c1", name="lookup", arguments='{"q": "x"}')
    assert call.args == {"q": "x"}
    assert ToolCall("c", "f", "").args == {}
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        _ = ToolCall("c", "f", "{").args
    with pytest.raises(ToolArgumentsError, match="JSON object"):
        _ = ToolCall("c", "f", "[1]").args

    ok = call.result({"hits": 3})
    assert (ok.call_id, ok.name, ok.text, ok.structured, ok.is_error) == (
        "c1",
        "lookup",
        '{"hits":3}',
        {"hits": 3},
        False,
    )
    flagged = call.result("nothing found", is_error=True)
    assert flagged.is_error and flagged.text == "nothing found"
    failed = call.result(ToolError("quota exceeded"))
    assert failed.is_error and failed.text == "quota exceeded"
    passthrough = call.result(text_result("a", "b"))
    assert passthrough.text == "a\nb"


def test_tool_result_message_from_result() -> None:
    message = ToolResultMessage.from_result("c", "n", text_result("x", structured=[1]))
    assert message == ToolResultMessage(
        call_id="c", name="n", content=[TextPart("x")], structured=[1]
    )
