"""What a handoff is: `Handoff`, `handoff()` and the history filters handed to one.

Only the declaration lives here (below the run configuration, which holds a list of them); the
run switching agents is `_delegation`'s.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeAlias

from ._record import record
from .messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolResultMessage,
)

__all__ = [
    "AgentLike",
    "Handoff",
    "HandoffLike",
    "HistoryFilter",
    "as_handoff",
    "handoff",
    "tool_name_for",
    "without_tool_calls",
]

HistoryFilter: TypeAlias = Callable[[list[Message]], "list[Message] | Awaitable[list[Message]]"]
"""Turns the conversation so far into the one the next agent starts from (sync or async)."""


class AgentLike(Protocol):
    """What a handoff or an agent tool needs of an agent (`Agent` is one)."""

    @property
    def name(self) -> str: ...

    def loop_config(
        self, *, deps: Any = None, subscribers: Sequence[Any] = (), sink: Any = None
    ) -> Any:
        """The agent's configuration resolved for one run."""
        ...


@record(frozen=True)
class Handoff:
    """An agent the conversation may be handed to, and how.

    Build it with `handoff()`; a bare agent in `handoffs=[...]` is `handoff(agent)`.

    Attributes:
        agent: The agent that takes over.
        tool_name: The tool the model calls to hand over (`transfer_to_<agent name>`).
        description: That tool's description.
        history: What the next agent sees: `None` passes the whole conversation (its own
            instructions replacing the system prompt), a function returns the messages to pass
            (a filter, or a summary made by a callback).
    """

    agent: AgentLike
    tool_name: str
    description: str
    history: HistoryFilter | None = None


HandoffLike: TypeAlias = Handoff | AgentLike


def tool_name_for(agent_name: str) -> str:
    """`transfer_to_<name>`, the name made fit for every provider's tool names."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", agent_name).strip("_") or "agent"
    return f"transfer_to_{cleaned}"[:64]


def handoff(
    agent: AgentLike,
    *,
    tool_name: str | None = None,
    description: str | None = None,
    history: HistoryFilter | None = None,
) -> Handoff:
    """Declare that the conversation may be handed to `agent`.

    Args:
        agent: The agent that takes over (its instructions, model, tools and output type).
        tool_name: The tool the model calls (default `transfer_to_<agent name>`).
        description: That tool's description (default: says which agent takes over).
        history: What the next agent sees (default: the whole conversation); e.g.
            `without_tool_calls`, or an async function that summarises it.
    """
    return Handoff(
        agent=agent,
        tool_name=tool_name or tool_name_for(agent.name),
        description=description
        or f"Hand the conversation over to the {agent.name!r} agent, which answers from then on.",
        history=history,
    )


def as_handoff(item: HandoffLike) -> Handoff:
    """A `Handoff` for an item of `handoffs=[...]`."""
    return item if isinstance(item, Handoff) else handoff(item)


def without_tool_calls(messages: list[Message]) -> list[Message]:
    """A history filter: the conversation without tool calls and their results.

    What remains is the system prompt, the user's turns and the assistants' text, so the next
    agent sees what was said but none of the tools it may not have.
    """
    out: list[Message] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            continue
        if isinstance(message, AssistantMessage):
            text = message.text
            if text:
                # The text alone: no turn-level state that would speak of the calls dropped.
                out.append(
                    AssistantMessage(
                        parts=[TextBlock(text)], provider=message.provider, model=message.model
                    )
                )
            continue
        out.append(message)  # the system prompt and the user's turns
    return out
