"""The events of a run, in the order a subscriber or a stream sees them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

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


@dataclass(slots=True)
class ModelRequestEvent:
    iteration: int
    message_count: int
    type: Literal["model.request"] = "model.request"


@dataclass(slots=True)
class ModelResponseEvent:
    iteration: int
    completion: Completion
    type: Literal["model.response"] = "model.response"


@dataclass(slots=True)
class FunctionCallStarted:
    call_id: str
    name: str
    arguments: str
    iteration: int
    type: Literal["function_call.started"] = "function_call.started"


@dataclass(slots=True)
class FunctionCallCompleted:
    call_id: str
    name: str
    arguments: str
    result: ToolResultMessage
    is_error: bool
    duration: float
    iteration: int
    type: Literal["function_call.completed"] = "function_call.completed"


@dataclass(slots=True)
class RunCompleted:
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
