"""`agent.to_vercel_ai()`: the AI SDK UI message stream of a run, its requests, its bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from test_ui_ag_ui import add, refund, scripted_turns
from ui_helpers import node, node_env, post, serve, sse_data

from toolwire import Agent, FunctionModel, ScriptedModel

pytestmark = pytest.mark.anyio


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "parts": [{"type": "text", "text": text}]}


async def chunks_of(app: Any, body: Any) -> list[Any]:
    response = await post(app, body)
    assert response.status_code == 200, response.text
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers["content-type"].startswith("text/event-stream")
    chunks = sse_data(response.text)
    assert chunks[-1] == "[DONE]"
    return chunks[:-1]


def kinds(chunks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for chunk in chunks:
        if not out or out[-1] != chunk["type"] or not chunk["type"].endswith("delta"):
            out.append(chunk["type"])
    return out


async def test_a_run_streams_steps_tool_input_output_and_text() -> None:
    agent = Agent(ScriptedModel([("add", {"a": 20, "b": 22}), "The answer is 42."]), tools=[add])
    chunks = await chunks_of(agent.to_vercel_ai(), {"messages": [user("20 + 22?")]})
    assert kinds(chunks) == [
        "start",
        "start-step",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-output-available",
        "finish-step",
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "finish-step",
        "finish",
    ]
    available = next(c for c in chunks if c["type"] == "tool-input-available")
    assert (available["toolName"], available["input"]) == ("add", {"a": 20, "b": 22})
    output = next(c for c in chunks if c["type"] == "tool-output-available")
    assert (output["toolCallId"], output["output"]) == (available["toolCallId"], 42)
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    assert text == "The answer is 42."
    assert chunks[-1] == {"type": "finish", "finishReason": "stop"}


async def test_a_multi_step_answer_becomes_one_turn_per_step() -> None:
    model = ScriptedModel(["Yes."])
    assistant = {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {
                "type": "tool-add",
                "toolCallId": "c1",
                "state": "output-available",
                "input": {"a": 1, "b": 2},
                "output": 3,
            },
            {"type": "step-start"},
            {"type": "text", "text": "It is 3."},
        ],
    }
    messages = [user("1 + 2?"), assistant, user("Sure?", id="u2")]
    await chunks_of(Agent(model, tools=[add]).to_vercel_ai(), {"messages": messages})
    seen = model.requests[0].messages
    assert [m.kind for m in seen] == ["user", "assistant", "tool_result", "assistant", "user"]
    assert seen[1].tool_calls[0].arguments == json.dumps({"a": 1, "b": 2})
    assert (seen[2].text, seen[3].text) == ("3", "It is 3.")


async def test_an_approval_request_and_a_denial() -> None:
    model = ScriptedModel([("refund", {"order": 7}), "Not refunded."])
    app = Agent(model, tools=[refund]).to_vercel_ai()
    first = await chunks_of(app, {"messages": [user("Refund order 7")]})
    request = next(c for c in first if c["type"] == "tool-approval-request")
    assert request["approvalId"] == request["toolCallId"]
    assert "tool-output-available" not in kinds(first)
    assert first[-1]["finishReason"] == "tool-calls"

    part = {
        "type": "tool-refund",
        "toolCallId": request["toolCallId"],
        "state": "approval-responded",
        "input": {"order": 7},
        "approval": {"id": request["approvalId"], "approved": False, "reason": "shipped"},
    }
    answered = {"id": "a1", "role": "assistant", "parts": [part]}
    second = await chunks_of(app, {"messages": [user("Refund order 7"), answered]})
    assert second[0] == {"type": "start", "messageId": "a1"}  # the same message goes on
    assert {"type": "tool-output-denied", "toolCallId": request["toolCallId"]} in second
    assert "shipped" in model.requests[-1].messages[-1].text


async def test_a_failing_run_sends_an_error_chunk_and_the_server_keeps_serving() -> None:
    app = Agent(FunctionModel(scripted_turns), tools=[refund]).to_vercel_ai()
    chunks = await chunks_of(app, {"messages": [user("fail")]})
    assert chunks[-1] == {"type": "error", "errorText": "RuntimeError: the model is down"}
    again = await chunks_of(app, {"messages": [user("Refund order 7")]})
    assert again[-1]["type"] == "finish"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"[1,", "not JSON"),
        ({"id": "c"}, "'messages' list"),
        ({"messages": [{"role": "user"}]}, "'parts' list"),
        ({"messages": [{"role": "robot", "parts": []}]}, "role must be"),
        ({"messages": [{"role": "user", "parts": [{"text": "hi"}]}]}, "not a part"),
        (
            {"messages": [{"role": "assistant", "parts": [{"type": "tool-add"}]}]},
            "toolCallId",
        ),
        ({"messages": [user("hi")], "tools": [1]}, "'tools' must be an object"),
        ({"messages": [user("hi")], "tools": {"add": {}}}, "add"),
    ],
)
async def test_bad_requests_are_refused_with_a_clear_message(body: Any, says: str) -> None:
    app = Agent(ScriptedModel(["unused"]), tools=[add]).to_vercel_ai()
    response = await post(app, body)
    assert response.status_code == 400
    assert says in response.json()["error"]


async def test_the_ai_sdk_client_accepts_the_stream_and_drives_approvals_and_frontend_tools() -> (
    None
):
    agent = Agent(FunctionModel(scripted_turns), tools=[refund])
    script = Path(__file__).with_name("vercel_ai_client.cjs")
    async with serve(agent.to_vercel_ai()) as url:
        done = await anyio.run_process([node(), str(script), url], env=node_env(), check=False)
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)

    paused, finished = out["approval"]["paused"], out["approval"]["done"]
    (asked,) = [p for p in paused["parts"] if p["type"] == "tool-refund"]
    assert asked["state"] == "approval-requested" and asked["input"] == {"order": 7}
    assert finished["id"] == paused["id"]
    (ran,) = [p for p in finished["parts"] if p["type"] == "tool-refund"]
    assert (ran["state"], ran["output"]) == ("output-available", "refunded order 7")
    assert finished["parts"][-1] == {
        "type": "text",
        "text": "Done: refunded order 7.",
        "state": "done",
    }

    frontend = out["frontend"]["done"]
    (picked,) = [p for p in frontend["parts"] if p["type"] == "tool-pick_color"]
    assert picked["output"] == "red"
    assert frontend["parts"][-1]["text"] == "You picked red."

    assert out["failure"]["error"] == "RuntimeError: the model is down"

    parts = [p for p in out["reasoning"]["message"]["parts"] if p["type"] != "step-start"]
    assert [(p["type"], p["text"]) for p in parts] == [
        ("reasoning", "Six times seven."),
        ("text", "42."),
    ]
