"""`agent.to_ag_ui()`: the AG-UI event stream of a run, its requests, and its bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pydantic
import pytest
from ag_ui.core import Event
from ui_helpers import node, node_env, post, serve, sse_data

from toolwire import Agent, FunctionModel, ScriptedModel, tool
from toolwire.messages import AssistantMessage, ReasoningBlock, TextBlock

pytestmark = pytest.mark.anyio

EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Event)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(requires_approval=True)
def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded order {order}"


def run_input(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"threadId": "t1", "runId": "r1", "messages": messages, **extra}


def user(text: str, id: str = "u1") -> dict[str, Any]:
    return {"id": id, "role": "user", "content": text}


async def events_of(app: Any, body: Any) -> list[dict[str, Any]]:
    response = await post(app, body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_data(response.text)
    for event in events:
        EVENTS.validate_python(event)  # every event is one the protocol's own types accept
    return events


def types(events: list[dict[str, Any]]) -> list[str]:
    kinds: list[str] = []
    for event in events:
        if (
            not kinds
            or kinds[-1] != event["type"]
            or not event["type"].endswith(("CONTENT", "ARGS"))
        ):
            kinds.append(event["type"])
    return kinds


async def test_a_run_streams_tool_calls_results_and_text() -> None:
    agent = Agent(ScriptedModel([("add", {"a": 20, "b": 22}), "The answer is 42."]), tools=[add])
    events = await events_of(agent.to_ag_ui(), run_input([user("20 + 22?")]))
    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "add" and start["parentMessageId"]
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"a": 20, "b": 22}
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert (result["toolCallId"], result["content"]) == (start["toolCallId"], "42")
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "The answer is 42."
    finished = events[-1]
    assert (finished["threadId"], finished["runId"]) == ("t1", "r1")
    assert finished["outcome"] == {"type": "success"}
    assert finished["result"]["stopReason"] == "completed"


async def test_reasoning_streams_as_its_own_message_before_the_text() -> None:
    agent = Agent(FunctionModel(scripted_turns))
    events = await events_of(agent.to_ag_ui(), run_input([user("think")]))
    assert types(events) == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    thought = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    assert thought == "Six times seven."


async def test_the_conversation_sent_is_the_history_the_model_sees() -> None:
    model = ScriptedModel(["Still 42."])
    agent = Agent(model, tools=[add])
    messages = [
        {"id": "s", "role": "system", "content": "Be brief."},
        user("20 + 22?"),
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "42"},
        {"id": "a2", "role": "assistant", "content": "42."},
        user("Sure?", id="u2"),
    ]
    await events_of(agent.to_ag_ui(), run_input(messages))
    seen = model.requests[0].messages
    assert [m.kind for m in seen] == [
        "system",
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
    ]
    assert seen[3].text == "42" and seen[-1].text == "Sure?"


async def test_an_approval_pauses_as_an_interrupt_and_resume_answers_it() -> None:
    model = ScriptedModel([("refund", {"order": 7}), "Order 7 is refunded."])
    app = Agent(model, tools=[refund]).to_ag_ui()
    first = await events_of(app, run_input([user("Refund order 7")]))
    snapshot = next(e for e in first if e["type"] == "STATE_SNAPSHOT")
    (pending,) = snapshot["snapshot"]["toolwire"]["pendingApprovals"]
    assert pending["toolCallName"] == "refund"
    assert "TOOL_CALL_RESULT" not in types(first)
    outcome = first[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    assert interrupt["id"] == interrupt["toolCallId"] == pending["toolCallId"]

    call = {"id": pending["toolCallId"], "type": "function"}
    call["function"] = {"name": "refund", "arguments": pending["arguments"]}
    messages = [user("Refund order 7"), {"id": "a1", "role": "assistant", "toolCalls": [call]}]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    second = await events_of(app, run_input(messages, resume=resume))
    result = next(e for e in second if e["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "refunded order 7"
    assert second[-1]["outcome"] == {"type": "success"}


async def test_a_refusal_reason_reaches_the_model() -> None:
    model = ScriptedModel([("refund", {"order": 7}), "Not refunded."])
    app = Agent(model, tools=[refund]).to_ag_ui()
    first = await events_of(app, run_input([user("Refund order 7")]))
    call_id = first[-1]["outcome"]["interrupts"][0]["id"]
    call = {"id": call_id, "type": "function", "function": {"name": "refund", "arguments": "{}"}}
    messages = [user("Refund"), {"id": "a1", "role": "assistant", "toolCalls": [call]}]
    payload = {"approved": False, "reason": "order 7 shipped"}
    resume = [{"interruptId": call_id, "status": "resolved", "payload": payload}]
    second = await events_of(app, run_input(messages, resume=resume))
    result = next(e for e in second if e["type"] == "TOOL_CALL_RESULT")
    assert "order 7 shipped" in result["content"]
    assert model.requests[-1].messages[-1].text == result["content"]


async def test_a_frontend_tool_pauses_the_run_and_its_result_continues_it() -> None:
    model = ScriptedModel([("pick_color", {"hint": "warm"}), "You picked red."])
    app = Agent(model, tools=[add]).to_ag_ui()
    tools = [
        {
            "name": "pick_color",
            "description": "Ask the user for a color.",
            "parameters": {"type": "object", "properties": {"hint": {"type": "string"}}},
        }
    ]
    first = await events_of(app, run_input([user("Pick a color")], tools=tools))
    start = next(e for e in first if e["type"] == "TOOL_CALL_START")
    assert start["toolCallName"] == "pick_color"
    assert "TOOL_CALL_RESULT" not in types(first)
    assert first[-1]["outcome"] == {"type": "success", "pendingToolCallIds": [start["toolCallId"]]}
    assert [t.name for t in model.requests[0].tools] == ["add", "pick_color"]

    call = {"id": start["toolCallId"], "type": "function"}
    call["function"] = {"name": "pick_color", "arguments": '{"hint": "warm"}'}
    messages = [
        user("Pick a color"),
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": start["toolCallId"], "content": "red"},
    ]
    second = await events_of(app, run_input(messages, tools=tools))
    assert model.requests[-1].messages[-1].text == "red"
    text = "".join(e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "You picked red."


async def test_a_failing_run_ends_with_run_error_and_the_server_keeps_serving() -> None:
    def fail(messages: Any, request: Any) -> str:
        if messages[-1].text == "fail":
            raise RuntimeError("the model is down")
        return "fine"

    app = Agent(FunctionModel(fail)).to_ag_ui()
    events = await events_of(app, run_input([user("fail")]))
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "RuntimeError"
    assert "the model is down" in events[-1]["message"]
    again = await events_of(app, run_input([user("hello")]))
    assert again[-1]["type"] == "RUN_FINISHED"


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not JSON"),
        ({"runId": "r", "messages": []}, 400, "threadId"),
        (run_input([{"id": "x", "role": "robot", "content": "hi"}]), 400, "RunAgentInput"),
        (
            run_input(
                [user("hi"), {"id": "t", "role": "tool", "toolCallId": "nope", "content": "1"}]
            ),
            400,
            "nope",
        ),
        (run_input([user("hi")], tools=[{"name": "add", "description": "x"}]), 400, "add"),
        (
            run_input(
                [user("hi")], resume=[{"interruptId": "c", "status": "resolved", "payload": 3}]
            ),
            400,
            "payload",
        ),
    ],
)
async def test_bad_requests_are_refused_with_a_clear_message(
    body: Any, status: int, says: str
) -> None:
    app = Agent(ScriptedModel(["unused"]), tools=[add]).to_ag_ui()
    response = await post(app, body)
    assert response.status_code == status
    assert says in response.json()["error"]


async def test_get_is_refused() -> None:
    app = Agent(ScriptedModel(["unused"])).to_ag_ui()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://ui.test") as client:
        response = await client.get("/")
    assert response.status_code == 405


async def test_a_client_that_leaves_cancels_its_run() -> None:
    entered, cancelled = anyio.Event(), anyio.Event()

    @tool
    async def wait_forever() -> str:
        """Wait."""
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    agent = Agent(ScriptedModel([("wait_forever", {}), "done"]), tools=[wait_forever])
    async with serve(agent.to_ag_ui()) as url, httpx.AsyncClient(timeout=20) as client:
        async with client.stream("POST", url, json=run_input([user("wait")])) as response:
            assert response.status_code == 200
            with anyio.fail_after(20):
                await entered.wait()
        # The response is closed: the server sees the disconnect and cancels the run.
        with anyio.fail_after(20):
            await cancelled.wait()
        events = sse_data((await client.post(url, json=run_input([user("again")]))).text)
        assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")


def scripted_turns(messages: list[Any], request: Any) -> Any:
    """A model for the AG-UI client test: a refund (approval), a color (frontend tool), a fault."""
    last = messages[-1]
    if last.kind == "user":
        if last.text == "fail":
            raise RuntimeError("the model is down")
        if last.text == "think":
            return AssistantMessage([ReasoningBlock("Six times seven."), TextBlock("42.")])
        if last.text == "Refund order 7":
            return ("refund", {"order": 7})
        return ("pick_color", {"hint": "warm"})
    if last.name == "refund":
        return f"Done: {last.text}."
    return f"You picked {last.text}."


async def test_the_protocol_client_accepts_the_stream_and_drives_approvals_and_frontend_tools() -> (
    None
):
    agent = Agent(FunctionModel(scripted_turns), tools=[refund])
    script = Path(__file__).with_name("ag_ui_client.cjs")
    async with serve(agent.to_ag_ui()) as url:
        done = await anyio.run_process([node(), str(script), url], env=node_env(), check=False)
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)

    approval = out["approval"]
    (interrupt,) = approval["interrupts"]
    assert interrupt["reason"] == "tool_approval"
    assert approval["state"]["toolwire"]["pendingApprovals"][0]["toolCallName"] == "refund"
    assert approval["left"] == 0
    assert approval["after"] == {"toolwire": {"pendingApprovals": []}}
    roles = [(m["role"], m.get("content")) for m in approval["messages"]]
    assert ("tool", "refunded order 7") in roles
    assert roles[-1] == ("assistant", "Done: refunded order 7.")
    (call,) = [c for m in approval["messages"] for c in m.get("toolCalls", [])]
    assert call["id"] == interrupt["toolCallId"]
    assert json.loads(call["function"]["arguments"]) == {"order": 7}

    frontend = out["frontend"]
    (pending,) = frontend["pending"]
    assert [m["role"] for m in frontend["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert frontend["messages"][1]["toolCalls"][0]["id"] == pending
    assert frontend["messages"][-1]["content"] == "You picked red."

    assert "the model is down" in out["failure"]["error"]

    roles = [(m["role"], m.get("content")) for m in out["reasoning"]["messages"]]
    assert roles == [("user", "think"), ("reasoning", "Six times seven."), ("assistant", "42.")]
