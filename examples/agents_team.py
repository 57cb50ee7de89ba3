"""A small support desk of agents: a triage agent hands customers over to a billing agent, which
asks a policy agent (called as a tool) before it decides, and needs a person's approval to refund.

Runs offline with no keys: every agent answers from a `FunctionModel` that plays its part. Swap in
real models ("openai:gpt-4o", "anthropic:claude-sonnet-4-5", "google:gemini-2.5-flash", ...) and
the same wiring works across providers.
"""

from __future__ import annotations

import asyncio
import json

import pydantic

from toolwire import (
    Agent,
    FunctionModel,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    tool,
)
from toolwire.models.base import PreparedRequest


class Decision(pydantic.BaseModel):
    order: str
    refund: bool
    reason: str


@tool
def order_status(order: str) -> str:
    """The delivery status of an order."""
    return {"A1": "delivered broken", "B2": "delivered"}.get(order, "unknown order")


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order (a person approves each refund)."""
    return f"refunded {order}"


def last_results(messages: list[Message]) -> list[ToolResultMessage]:
    out: list[ToolResultMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolResultMessage):
            break
        out.insert(0, message)
    return out


def policy_brain(messages: list[Message], request: PreparedRequest) -> str:
    question = next(m for m in messages if isinstance(m, UserMessage)).text
    if "broken" in question:
        return "Policy 4.2: broken on delivery -> full refund."
    return "Policy 1.0: no refund for orders delivered intact."


def billing_brain(messages: list[Message], request: PreparedRequest) -> str | ToolCall:
    done = {m.name: m.text for m in messages if isinstance(m, ToolResultMessage)}
    if "order_status" not in done:
        return ToolCall("s1", "order_status", json.dumps({"order": "A1"}))
    if "policy" not in done:
        question = f"Order A1 is {done['order_status']}. Refund?"
        return ToolCall("p1", "policy", json.dumps({"input": question}))
    if "full refund" in done["policy"] and "refund" not in done:
        return ToolCall("r1", "refund", json.dumps({"order": "A1"}))
    refunded = done.get("refund", "").startswith("refunded")
    decision = Decision(order="A1", refund=refunded, reason=done["policy"])
    return decision.model_dump_json()


def triage_brain(messages: list[Message], request: PreparedRequest) -> ToolCall:
    return ToolCall("t1", "transfer_to_billing", "{}")


policy = Agent(FunctionModel(policy_brain), name="policy", instructions="Quote the policy.")
billing = Agent(
    FunctionModel(billing_brain),
    name="billing",
    instructions="Decide refunds by the policy.",
    tools=[order_status, refund, policy.as_tool(description="Ask the policy desk.")],
    output_type=Decision,
)
triage = Agent(
    FunctionModel(triage_brain),
    name="triage",
    instructions="Send each customer to the right desk.",
    handoffs=[billing],
)


async def main() -> None:
    paused = await triage.run("My order A1 arrived broken. I want my money back.")
    print("handed over:", " -> ".join(paused.agent_path))
    print("stopped for:", paused.stop_reason, [p.call.name for p in paused.pending])

    # A person approves the refund; the run goes on with billing, where it stopped.
    approvals = {p.call.id: True for p in paused.pending}
    done = await triage.resume(paused, approvals=approvals)
    print("answered by:", done.agent)
    print("decision:", done.output)
    for entry in [*paused.trace, *done.trace]:
        print(f"  call {entry.name}: {entry.result!r}")
    spent = {
        name: sum(
            r.usage_by_agent[name].requests for r in (paused, done) if name in r.usage_by_agent
        )
        for name in {**paused.usage_by_agent, **done.usage_by_agent}
    }
    print("model requests by agent:", spent)


if __name__ == "__main__":
    asyncio.run(main())
