"""The step seam: how the loop hands its model requests and tool calls to a backend.

A run without a backend (the default) runs its steps in process, with no indirection; a durable
backend (`toolwire.durable`) checkpoints each step and returns the checkpoint on a replay.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeAlias

import anyio

from .messages import ToolCallBlock, ToolResultMessage
from .models.base import Completion
from .tools import Tool

__all__ = ["StepBackend", "ToolTracer", "Turnstile", "idempotency_key"]


class StepBackend(Protocol):
    """Runs the loop's steps: the seam a durable backend plugs into.

    The loop calls `model_step` for each model request and `tool_step` for each tool call, with a
    thunk that does the work; a durable backend checkpoints what the thunk returns and, when the
    run is replayed after a crash, returns the checkpoint instead of calling the thunk again. When
    a run has no backend (the default) the loop calls the thunks itself, with no indirection.
    """

    async def model_step(self, step: Callable[[], Awaitable[Completion]]) -> Completion:
        """Ask the model once (or return the checkpointed answer)."""
        ...

    def tool_step(
        self, call: ToolCallBlock, step: Callable[[str], Awaitable[ToolResultMessage]]
    ) -> Awaitable[ToolResultMessage]:
        """Run one tool call (or return its checkpointed result).

        `step(key)` runs the call with `key` as its `ToolContext.idempotency_key` (see
        `idempotency_key`): the same on every retry of this call, distinct for every call of the
        run.

        Not a coroutine function: the loop calls it for a turn's parallel calls one at a time, in
        call order, and the backend fixes the step's place in the run before returning, so a
        replay finds each call's checkpoint whatever order the calls finish in.
        """
        ...


ToolTracer: TypeAlias = Callable[
    [
        ToolCallBlock,
        "Tool | None",
        Callable[[], Awaitable[tuple[ToolResultMessage, BaseException | None]]],
    ],
    Awaitable[tuple[ToolResultMessage, BaseException | None]],
]
"""Runs one tool call (the thunk) inside a span: `trace_tool(call, tool or None, thunk)`."""


class Turnstile:
    """Lets a batch's calls reach the backend one at a time, in call order."""

    __slots__ = ("_next", "_open")

    def __init__(self, size: int) -> None:
        self._open = [anyio.Event() for _ in range(size)]
        self._next = 0
        if size:
            self._open[0].set()

    async def wait(self, position: int) -> None:
        await self._open[position].wait()

    def advance(self) -> None:
        self._next += 1
        if self._next < len(self._open):
            self._open[self._next].set()


def idempotency_key(run_id: str, position: int, call_id: str) -> str:
    """A tool call's idempotency key: the run id, the call's position among the run's tool steps,
    and the call id.

    The position is there because a call id alone may repeat within a run (some providers give
    none, and the ids made for them restart with each process), while a step's position is the
    same on every replay.
    """
    return f"{run_id}:{position}:{call_id}"
