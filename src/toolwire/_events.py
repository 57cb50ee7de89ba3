"""The events of a run, in the order a subscriber or a stream sees them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

from ._record import record
from ._run_result import RunResult
from .messages import ToolResultMessage
from .models.base import Completion, StreamEvent

__all__ = [
    "FunctionCallCompleted",
    "FunctionCallStarted",
    "ModelRequestEvent",
    "ModelResponseEvent",
    "RunCompleted",
    "RunEvent",
    "StreamSink",
    "Subscriber",
]


@record
class ModelRequestEvent:
    """The loop is about to ask the model (iteration `iteration`, `message_count` messages)."""

    iteration: int
    message_count: int
    type: Literal["model.request"] = "model.request"


@record
class ModelResponseEvent:
    """The model answered `completion` in iteration `iteration`."""

    iteration: int
    completion: Completion
    type: Literal["model.response"] = "model.response"


@record
class FunctionCallStarted:
    """A tool call is about to run."""

    call_id: str
    name: str
    arguments: str
    iteration: int
    type: Literal["function_call.started"] = "function_call.started"


@record
class FunctionCallCompleted:
    """A tool call finished: its result message, whether it failed, how long it took."""

    call_id: str
    name: str
    arguments: str
    result: ToolResultMessage
    is_error: bool
    duration: float
    iteration: int
    type: Literal["function_call.completed"] = "function_call.completed"


@record
class RunCompleted:
    """The run ended; `result` is what `Agent.run` returns."""

    result: RunResult
    type: Literal["run.completed"] = "run.completed"


RunEvent: TypeAlias = (
    ModelRequestEvent
    | ModelResponseEvent
    | FunctionCallStarted
    | FunctionCallCompleted
    | RunCompleted
)
Subscriber: TypeAlias = Callable[[RunEvent], Any]
StreamSink: TypeAlias = Callable[[StreamEvent | RunEvent], Awaitable[None]]
"""Where a streamed run's events go: the model's deltas and the run events, in order."""
