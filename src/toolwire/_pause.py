"""A turn that pauses the run, and its resumption: which calls wait (for approval, for the
caller's result, for a computer-use screenshot), and the caller's decisions checked and turned
into results. The loop (`_loop`) asks; nothing here runs a tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._config import ApprovalPolicy
from ._run_result import PendingCall
from .budgets import OutputBudget
from .computer import COMPUTER_CALL, ComputerCall, is_computer_call
from .messages import AssistantMessage, ServerToolCallBlock, ToolCallBlock, ToolResultMessage
from .models.base import Model, ToolCall
from .results import TextPart
from .tools import Tool

__all__ = ["decided_calls", "needs_approval", "pending_calls"]


def needs_approval(tool: Tool, policy: ApprovalPolicy) -> bool:
    """Whether a call of `tool` waits for approval under `policy`."""
    if tool.requires_approval:
        return True
    return policy == "destructive" and bool(tool.annotations.destructive_hint)


def _computer_parts(message: AssistantMessage) -> dict[str, ServerToolCallBlock]:
    out: dict[str, ServerToolCallBlock] = {}
    for part in message.parts:
        if isinstance(part, ServerToolCallBlock) and is_computer_call(part):
            out[part.id] = part
    return out


def pending_calls(
    calls: Sequence[ToolCallBlock],
    message: AssistantMessage,
    tools: Mapping[str, Tool],
    policy: ApprovalPolicy,
) -> list[PendingCall]:
    """The calls of a turn the run stops on (none, on most turns)."""
    pending: list[PendingCall] = []
    for call in calls:
        # A computer-use request reaches the loop as a call of that name (`answerable_calls`).
        computer = _computer_parts(message) if call.name == COMPUTER_CALL else None
        if computer and call.id in computer:
            request = ComputerCall.from_block(computer[call.id])
            pending.append(PendingCall(ToolCall.from_block(call), "computer", request))
            continue
        tool = tools.get(call.name)
        if tool is None:
            continue
        if not tool.executable:
            pending.append(PendingCall(ToolCall.from_block(call), "external"))
        elif needs_approval(tool, policy):
            pending.append(PendingCall(ToolCall.from_block(call), "approval"))
    return pending


async def decided_calls(
    last: AssistantMessage,
    calls: Sequence[ToolCallBlock],
    tools: Mapping[str, Tool],
    approvals: Mapping[str, bool | str],
    results: Mapping[str, Any],
    *,
    policy: ApprovalPolicy,
    budget: OutputBudget | None,
    model: Model,
) -> dict[str, ToolResultMessage]:
    """The results the caller's decisions give the paused turn's calls (`calls`, of `last`):
    a result handed in (cut to the budget), or a refusal. The calls approved, and those needing
    nothing, are left to run.

    Raises:
        ValueError: a decision for a call the turn does not hold, or a call left undecided.
    """
    computer = _computer_parts(last)
    # A decision for a call the paused turn does not hold is a mistake of the caller's (a
    # stale result, an id from another run): refused rather than silently ignored.
    ids = {call.id for call in calls}
    unknown = sorted({*approvals, *results} - ids)
    if unknown:
        raise ValueError(
            "cannot resume; the paused turn has no call with id "
            + ", ".join(repr(i) for i in unknown)
            + " (its calls: "
            + ", ".join(repr(c.id) for c in calls)
            + ")"
        )
    decided: dict[str, ToolResultMessage] = {}
    undecided: list[str] = []
    for call in calls:
        tool = tools.get(call.name)
        verdict = approvals.get(call.id)
        if call.id in results:
            given = ToolCall(call.id, call.name, call.arguments).result(results[call.id])
            if budget is not None:  # a result the caller hands in is cut the same way
                given = await budget.hold(given, model.provider, model.model_name)
            decided[call.id] = given
        elif verdict is not None and verdict is not True:
            # A refusal is honoured for any call of the turn, not only the marked ones.
            reason = verdict if isinstance(verdict, str) else "the user refused this call"
            decided[call.id] = ToolResultMessage(
                call_id=call.id,
                name=call.name,
                content=[TextPart(f"Error: not approved: {reason}")],
                is_error=True,
            )
        elif call.id in computer:
            undecided.append(f"{call.id} (computer use: needs a screenshot)")
        elif tool is not None and not tool.executable:
            undecided.append(f"{call.id} ({call.name}: needs a result)")
        elif tool is not None and needs_approval(tool, policy) and verdict is None:
            undecided.append(f"{call.id} ({call.name}: needs approval)")
    if undecided:
        raise ValueError("cannot resume; undecided calls: " + ", ".join(undecided))
    return decided
