"""History repair: every tool call gets exactly one result before a history is sent."""

from __future__ import annotations

from collections.abc import Sequence

from .computer import answerable_calls
from .messages import AssistantMessage, Message, SystemMessage, ToolCallBlock, ToolResultMessage
from .results import TextPart

__all__ = ["missing_result", "prepare_history", "repair_history"]


def missing_result(call: ToolCallBlock, why: str) -> ToolResultMessage:
    """The error result that stands in for a call that got none."""
    return ToolResultMessage(
        call_id=call.id, name=call.name, content=[TextPart(f"Error: {why}")], is_error=True
    )


def repair_history(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """Give every tool call exactly one result, and drop results that answer no call.

    Returns the repaired history and a description of each repair (empty when none was needed).
    """
    out: list[Message] = []
    repairs: list[str] = []
    open_calls: dict[str, ToolCallBlock] = {}
    answered: set[str] = set()

    def close_turn() -> None:
        for call in open_calls.values():
            out.append(missing_result(call, "no result was recorded for this call"))
            repairs.append(f"added a missing result for call {call.id!r} ({call.name})")
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolResultMessage):
            if message.call_id in open_calls:
                open_calls.pop(message.call_id)
                answered.add(message.call_id)
                out.append(message)
            elif message.call_id in answered:
                repairs.append(f"dropped a second result for call {message.call_id!r}")
            else:
                repairs.append(f"dropped a result for unknown call {message.call_id!r}")
            continue
        close_turn()
        out.append(message)
        if isinstance(message, AssistantMessage):
            answered = set()
            for call in answerable_calls(message):
                open_calls[call.id] = call
    close_turn()
    return out, repairs


def prepare_history(
    history: Sequence[Message] | None, instructions: str | None, *, resuming: bool
) -> tuple[list[Message], list[str]]:
    """The history a run starts from: `history` repaired (a paused turn's open calls kept for
    the resume to answer), with `instructions` as its system message when it has none; and
    what was repaired."""
    messages: list[Message] = list(history or ())
    repairs: list[str] = []
    if messages:
        last = messages[-1]
        # A paused turn's open calls are answered by resume_turn, not repaired away.
        paused = resuming and isinstance(last, AssistantMessage) and bool(answerable_calls(last))
        body = messages[:-1] if paused else messages
        fixed, repairs = repair_history(body)
        messages = [*fixed, last] if paused else fixed
    if instructions and not any(isinstance(m, SystemMessage) for m in messages):
        messages.insert(0, SystemMessage(instructions))
    return messages, repairs
