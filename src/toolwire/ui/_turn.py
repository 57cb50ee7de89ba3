"""What a UI request asks of the agent, whichever protocol carried it: a `UiTurn`.

Both protocols send the whole conversation with every request (the server keeps nothing between
requests), the tools the browser runs, and the answers to a paused run's approvals. Each protocol
module parses its own wire into a `UiTurn`; `start` runs it over `Agent.run_stream`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

from .._config import RunConfig
from .._events import RunEvent
from .._run_result import RunResult
from ..messages import Message
from ..models.base import Model, StreamEvent, ToolCallDelta
from ..tools import Tool
from ._asgi import BadRequest

__all__ = ["CallPieces", "UiAgent", "UiStream", "UiTurn", "dump_output", "frontend_tool"]


class UiStream(Protocol):
    """What `Agent.run_stream` returns, as the UI endpoints use it."""

    @property
    def result(self) -> RunResult: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None: ...

    def __aiter__(self) -> AsyncIterator[StreamEvent | RunEvent]: ...


class UiAgent(Protocol):
    """An `Agent`, as the UI endpoints use it (this package sits below `agent.py`)."""

    model: Model
    tools: dict[str, Tool]

    def __init__(self, model: Model, *, config: RunConfig | None = None) -> None: ...

    @property
    def config(self) -> RunConfig: ...

    def run_stream(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] | None = None,
        approvals: Mapping[str, bool | str] | None = None,
    ) -> UiStream: ...


@dataclass(slots=True)
class UiTurn:
    """One request of a UI stream, as the run it starts.

    Attributes:
        history: The conversation the frontend sent, in toolwire's terms.
        frontend_tools: Tools the browser runs: schema-only tools, so a call of one pauses the
            run as an external call and the browser answers it in its next request.
        approvals: Call id -> `True`, `False` or a refusal reason, for a run paused on approval.
        reply_id: The id of the frontend's assistant message this run continues (a paused run's
            answer goes on in the same message), when it continues one.
    """

    history: list[Message]
    frontend_tools: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    approvals: dict[str, bool | str] = field(default_factory=dict[str, bool | str])
    reply_id: str | None = None

    def agent(self, agent: UiAgent) -> UiAgent:
        """The agent to run: `agent`, plus the browser's tools when it sent some.

        Raises:
            BadRequest: a frontend tool named like one of the agent's tools.
        """
        return _with_tools(agent, self.frontend_tools) if self.frontend_tools else agent

    def start(self, agent: UiAgent) -> UiStream:
        """The run this request asks for, on `self.agent(...)` (not started until entered)."""
        return agent.run_stream(None, history=self.history, approvals=self.approvals or None)


def frontend_tool(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    """A tool the browser runs, as a schema-only tool definition.

    Raises:
        BadRequest: a name that is not a non-empty string, or parameters that are not an object.
    """
    if not isinstance(name, str) or not name:
        raise BadRequest("a frontend tool needs a non-empty string name")
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, Mapping):
        raise BadRequest(f"the parameters of frontend tool {name!r} are not a JSON object")
    text = description if isinstance(description, str) else ""
    return {"name": name, "description": text, "parameters": dict(parameters)}  # pyright: ignore[reportUnknownArgumentType]


def _with_tools(agent: UiAgent, extra: Sequence[dict[str, Any]]) -> UiAgent:
    # A copy of the agent for this request alone: its model (already wrapped in any retry
    # policy, so `retry` is not applied twice) and configuration plus the browser's tools.
    known = set(agent.tools)
    for item in extra:
        name = item["name"]
        if name in known:
            raise BadRequest(f"frontend tool {name!r} has the name of one of the agent's tools")
    config = agent.config.replace(tools=[*agent.config.tools, *extra], retry=None)
    return type(agent)(agent.model, config=config)


def dump_output(value: Any) -> str:
    """A tool's structured output or text as the JSON text a frontend shows."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


class CallPieces:
    """The tool-call pieces of one streamed model turn, by index. A piece that comes before its
    call's id and name (some providers stream arguments first) waits, merged with the pieces after
    it, until both are known: a UI is told of a call only once it can name it."""

    __slots__ = ("by_index", "waiting")

    def __init__(self) -> None:
        self.by_index: dict[int, str] = {}
        self.waiting: dict[int, ToolCallDelta] = {}

    def clear(self) -> None:
        """Forget the turn's calls (a new model turn starts)."""
        self.by_index.clear()
        self.waiting.clear()

    def take(self, delta: ToolCallDelta) -> tuple[str | None, ToolCallDelta | None]:
        """The call id `delta` belongs to (`None` while it waits), and the piece that starts the
        call, with what waited merged in (`None` unless this piece starts it)."""
        call_id = self.by_index.get(delta.index)
        if call_id is not None:
            return call_id, None
        held = self.waiting.get(delta.index)
        if held is not None:
            delta = ToolCallDelta(
                delta.index,
                delta.id or held.id,
                delta.name or held.name,
                held.arguments + delta.arguments,
            )
        if delta.id is None or delta.name is None:
            self.waiting[delta.index] = delta
            return None, None
        self.waiting.pop(delta.index, None)
        self.by_index[delta.index] = delta.id
        return delta.id, delta
