"""Handoffs: one agent hands the conversation to another, offline with scripted models."""

from __future__ import annotations

import pydantic
import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    Message,
    RunResult,
    ScriptedModel,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    handoff,
    tool,
    without_tool_calls,
)

pytestmark = pytest.mark.anyio


class Refund(pydantic.BaseModel):
    order: str
    approved: bool


@tool
def lookup_order(order: str) -> str:
    """Look an order up."""
    return f"order {order}: delivered"


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order."""
    return f"refunded {order}"


def results_of(result: RunResult) -> list[ToolResultMessage]:
    return [m for m in result.messages if isinstance(m, ToolResultMessage)]


async def test_the_next_agent_answers_with_its_own_instructions_tools_and_output() -> None:
    billing_model = ScriptedModel(
        [("lookup_order", {"order": "A1"}), '{"order": "A1", "approved": true}']
    )
    billing = Agent(
        billing_model,
        name="billing",
        instructions="You handle refunds.",
        tools=[lookup_order],
        output_type=Refund,
    )
    triage_model = ScriptedModel([("transfer_to_billing", {})])
    triage = Agent(triage_model, name="triage", instructions="Route.", handoffs=[billing])
    assert "transfer_to_billing" in triage.tools

    result = await triage.run("I want a refund for A1.")
    assert result.stop_reason == "completed"
    assert result.output == Refund(order="A1", approved=True)
    assert result.agent == "billing" and result.agent_path == ["triage", "billing"]
    assert {k: u.requests for k, u in result.usage_by_agent.items()} == {
        "triage": 1,
        "billing": 2,
    }
    # Billing saw its own instructions (not triage's), the whole conversation and its own tools.
    first = billing_model.requests[0]
    assert next(m for m in first.messages if isinstance(m, SystemMessage)).text == (
        "You handle refunds."
    )
    assert not any(isinstance(m, SystemMessage) and m.text == "Route." for m in first.messages)
    assert any(isinstance(m, UserMessage) for m in first.messages)
    assert {t.name for t in first.tools} >= {"lookup_order"}
    assert "transfer_to_billing" not in {t.name for t in first.tools}
    assert results_of(result)[0].text.startswith("Transferred to billing")
    assert result.messages[0] == SystemMessage("You handle refunds.")


async def test_a_history_filter_decides_what_the_next_agent_sees() -> None:
    expert_model = ScriptedModel(["Expert answer."])
    expert = Agent(expert_model, name="expert")
    front = Agent(
        ScriptedModel([("lookup_order", {"order": "B2"}), ("transfer_to_expert", {})]),
        name="front",
        tools=[lookup_order],
        handoffs=[handoff(expert, history=without_tool_calls)],
    )
    result = await front.run("Help with B2.")
    assert result.text == "Expert answer."
    sent = expert_model.requests[0].messages
    assert [m.kind for m in sent] == ["user"]


async def test_a_callback_may_summarise_the_history() -> None:
    summaries: list[int] = []

    async def summarise(messages: list[Message]) -> list[Message]:
        summaries.append(len(messages))
        return [UserMessage.of("Summary: the user wants help with order C3.")]

    expert_model = ScriptedModel(["On it."])
    expert = Agent(expert_model, name="expert", instructions="Be an expert.")
    front = Agent(
        ScriptedModel([("transfer_to_specialist", {})]),
        name="front",
        handoffs=[handoff(expert, tool_name="transfer_to_specialist", history=summarise)],
    )
    result = await front.run("Order C3 is broken, and more words.")
    assert summaries == [3]  # the prompt, the transfer call and its result
    assert [m.kind for m in expert_model.requests[0].messages] == ["system", "user"]
    assert result.messages[1] == UserMessage.of("Summary: the user wants help with order C3.")
    assert result.agent == "expert"


async def test_a_handoff_to_an_unknown_agent_is_an_error_the_model_sees() -> None:
    other = Agent(ScriptedModel(), name="other")
    front = Agent(
        ScriptedModel([("transfer_to_nobody", {}), "Sorry, I stay."]),
        name="front",
        handoffs=[other],
    )
    result = await front.run("Hi.")
    assert result.text == "Sorry, I stay." and result.agent == "front"
    error = results_of(result)[0]
    assert error.is_error and "unknown tool" in error.text and "transfer_to_other" in error.text


async def test_a_cycle_of_handoffs_ends_on_the_runs_limits() -> None:
    no_args: dict[str, str] = {}
    ping = Agent(ScriptedModel([("transfer_to_pong", no_args)] * 5), name="ping")
    pong = Agent(ScriptedModel([("transfer_to_ping", no_args)] * 5), name="pong")
    ping.add_handoffs(pong)
    pong.add_handoffs(ping)
    result = await Agent(ping.model, config=ping.config.replace(max_iterations=4)).run("Go.")
    assert result.stop_reason == "max_iterations"
    assert result.agent_path == ["ping", "pong", "ping", "pong", "ping"]
    assert result.iterations == 4


async def test_two_handoffs_in_one_turn_take_the_first() -> None:
    a = Agent(ScriptedModel(["A here."]), name="a")
    b = Agent(ScriptedModel(["B here."]), name="b")
    front = Agent(
        ScriptedModel([[("transfer_to_a", {}), ("transfer_to_b", {})]]),
        name="front",
        handoffs=[a, b],
    )
    result = await front.run("Hi.")
    assert result.text == "A here." and result.agent_path == ["front", "a"]
    second = results_of(result)[1]
    assert second.is_error and "handed to 'a'; one handoff per turn" in second.text


async def test_a_conversation_goes_on_with_the_agent_that_has_it() -> None:
    billing = Agent(ScriptedModel(["Billing here.", "Still billing."]), name="billing")
    triage = Agent(ScriptedModel([("transfer_to_billing", {})]), name="triage", handoffs=[billing])
    first = await triage.run("Refund, please.")
    later = await triage.run("And one more thing.", history=first.messages)
    assert later.text == "Still billing." and later.agent == "billing"


async def test_an_approval_after_a_handoff_resumes_with_the_next_agent() -> None:
    billing = Agent(
        ScriptedModel([("refund", {"order": "D4"}), "Refunded."]),
        name="billing",
        tools=[refund],
    )
    triage = Agent(ScriptedModel([("transfer_to_billing", {})]), name="triage", handoffs=[billing])
    paused = await triage.run("Refund D4.")
    assert paused.stop_reason == "approval_required" and paused.agent == "billing"
    stored = RunResult.from_json(paused.to_json())
    done = await triage.resume(stored, approvals={paused.pending[0].call.id: True})
    assert done.text == "Refunded." and done.agent == "billing"
    assert results_of(done)[-1].text == "refunded D4"


async def test_a_handoff_streams_and_the_stream_ends_with_the_next_agents_answer() -> None:
    billing = Agent(ScriptedModel(["Billing here."]), name="billing")
    triage = Agent(ScriptedModel([("transfer_to_billing", {})]), name="triage", handoffs=[billing])
    async with triage.run_stream("Hi.") as stream:
        kinds = [type(event).__name__ async for event in stream]
    assert kinds[-1] == "RunCompleted"
    assert stream.result.text == "Billing here." and stream.result.agent == "billing"
    answers = [m for m in stream.result.messages if isinstance(m, AssistantMessage)]
    assert [a.text for a in answers] == ["", "Billing here."]


def test_a_handoff_tool_name_is_fit_for_every_provider() -> None:
    odd = Agent(ScriptedModel(), name="Billing & Refunds (EU)")
    front = Agent(ScriptedModel(), handoffs=[odd])
    assert "transfer_to_Billing_Refunds_EU" in front.tools


def test_a_handoff_whose_tool_name_clashes_is_refused() -> None:
    other = Agent(ScriptedModel(), name="other")
    front = Agent(ScriptedModel(), handoffs=[other])
    with pytest.raises(ValueError, match="two tools are named 'transfer_to_other'"):
        front.add_handoffs(other)


async def test_a_chain_of_handoffs_and_an_agent_tool_after_one() -> None:
    # triage -> billing -> fraud; fraud asks a `checker` agent as a tool, which itself hands over.
    second_opinion = Agent(ScriptedModel(["Looks fine."]), name="second_opinion")
    checker = Agent(
        ScriptedModel([("transfer_to_second_opinion", {})]),
        name="checker",
        handoffs=[second_opinion],
    )
    fraud = Agent(
        ScriptedModel([("checker", {"input": "check E5"}), "No fraud found."]),
        name="fraud",
        tools=[checker.as_tool()],
    )
    billing = Agent(ScriptedModel([("transfer_to_fraud", {})]), name="billing", handoffs=[fraud])
    triage = Agent(ScriptedModel([("transfer_to_billing", {})]), name="triage", handoffs=[billing])
    result = await triage.run("Is E5 fraud?")
    assert result.text == "No fraud found."
    assert result.agent_path == ["triage", "billing", "fraud"]
    assert {k: u.requests for k, u in result.usage_by_agent.items()} == {
        "triage": 1,
        "billing": 1,
        "fraud": 2,
        "checker": 1,
        "second_opinion": 1,
    }
    answer = next(m for m in results_of(result) if m.name == "checker")
    assert answer.text == "Looks fine."
