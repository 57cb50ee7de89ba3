"""What a run returns (`RunResult` and the types it holds) and its one JSON codec.

`RunResult.to_json()` / `RunResult.from_json(data, output_type=...)` are the only way a run is
written down and read back (durable checkpoints, the `runs` commands): every field has an entry
in `_ENCODERS`, and a test fills every field of every type here and fails when one does not come
back equal.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, fields
from decimal import Decimal
from typing import Any, Literal, TypeAlias, cast

import pydantic
import pydantic_core

from ._record import empty_dict, empty_list, record
from .computer import ComputerCall, is_computer_call
from .errors import ToolError
from .messages import (
    AssistantMessage,
    Citation,
    Message,
    ServerToolCallBlock,
    TextBlock,
    dump_history,
    load_history,
)
from .models.base import ToolCall
from .output import OutputType
from .usage import Cost, Usage

__all__ = ["PendingCall", "RunResult", "StopReason", "TraceEntry", "dump_result", "load_result"]

StopReason: TypeAlias = Literal[
    "completed",
    "refused",
    "max_iterations",
    "token_limit",
    "cost_limit",
    "time_limit",
    "external_calls",
    "approval_required",
    "cancelled",
    "error",
]


@record
class TraceEntry:
    """One tool call of a run, as it happened.

    `error` is the exception the call raised; a result read back from JSON carries a `ToolError`
    naming the original type and message instead (an exception object is not data).
    `children` holds the tool calls of the sub-run an agent tool (`Agent.as_tool`) ran for this
    call, nested the same way.
    """

    call_id: str
    name: str
    arguments: str
    result: str
    is_error: bool
    duration: float
    iteration: int
    error: BaseException | None = field(default=None, repr=False, compare=False)
    children: list[TraceEntry] = field(default_factory=empty_list)


@record
class PendingCall:
    """A call the run stopped on: it needs approval, or the caller must answer it.

    Attributes:
        call: The call (a computer-use request is a call named `"computer_use"` whose arguments
            are the request's, as JSON).
        reason: `"approval"`, `"external"` (a tool the caller runs) or `"computer"` (the model
            asks for screen actions; answer with `computer_result(...)`).
        computer: The computer-use request, normalised, when `reason == "computer"`.
    """

    call: ToolCall
    reason: Literal["approval", "external", "computer"]
    computer: ComputerCall | None = None


@record
class RunResult:
    """The outcome of a run.

    Attributes:
        text: The model's final answer (empty when the run stopped before one).
        messages: The whole history, the input included; every call has its result.
        new_messages: What this run added.
        usage: Summed over every model request.
        cost: From `genai-prices`; `cost.total is None` with `cost.reason` when unknown.
        trace: Every tool call, in order.
        stop_reason: Why the run ended.
        pending: The calls waiting for approval or for the caller's answer.
        iterations: Model requests made.
        output: The validated typed answer, when the run asked for one (`output_type`).
        refusal: Why the model declined to give the typed answer (`stop_reason == "refused"`).
        agent: The name of the agent that had the conversation last (after handoffs, the one
            that answered).
        agent_path: The agents that had the conversation, in order (one name without handoffs).
        usage_by_agent: `usage` split by agent name, sub-agents run as tools included.
        cost_by_agent: `cost` split the same way.
    """

    text: str
    messages: list[Message]
    new_messages: list[Message]
    usage: Usage
    cost: Cost
    trace: list[TraceEntry]
    stop_reason: StopReason
    pending: list[PendingCall] = field(default_factory=empty_list)
    iterations: int = 0
    output: Any = None
    refusal: str | None = None
    agent: str = "agent"
    agent_path: list[str] = field(default_factory=empty_list)
    usage_by_agent: dict[str, Usage] = field(default_factory=empty_dict)
    cost_by_agent: dict[str, Cost] = field(default_factory=empty_dict)

    def __repr__(self) -> str:
        # The history and the trace by their length: Python 3.11's `asyncio.run` formats the
        # repr of the task holding the result when it ends, so a full one cost the caller of
        # `asyncio.run(agent.run(...))` a walk of every message (as much as the whole run at
        # 1,600 rounds); print `result.messages` to see them. The usage by its counts, for the
        # same reason: its repr works out the token estimates a run leaves for whoever reads
        # them; print `result.usage` to see them.
        usage = self.usage
        return (
            f"RunResult(text={self.text!r}, stop_reason={self.stop_reason!r}, "
            f"iterations={self.iterations}, messages=<{len(self.messages)} messages>, "
            f"new_messages=<{len(self.new_messages)} messages>, "
            f"trace=<{len(self.trace)} calls>, usage=<{usage.requests} requests, "
            f"{usage.input_tokens} input and {usage.output_tokens} output tokens>, "
            f"cost={self.cost!r}, pending={self.pending!r}, output={self.output!r}, "
            f"refusal={self.refusal!r})"
        )

    @property
    def citations(self) -> list[Citation]:
        """Every source the model cited in this run's answers, in order."""
        return [
            c
            for m in self.new_messages
            if isinstance(m, AssistantMessage)
            for b in m.parts
            if isinstance(b, TextBlock)
            for c in b.citations
        ]

    @property
    def computer_calls(self) -> list[ComputerCall]:
        """The computer-use requests the run stopped on, waiting for the caller's screenshots."""
        return [p.computer for p in self.pending if p.computer is not None]

    @property
    def server_tool_calls(self) -> list[ServerToolCallBlock]:
        """Every call of a provider-side tool in this run: the ones the provider ran (web
        search...) and the computer-use requests it asked the caller to carry out."""
        return [
            b
            for m in self.new_messages
            if isinstance(m, AssistantMessage)
            for b in m.parts
            if isinstance(b, ServerToolCallBlock)
        ]

    def to_json(self) -> str:
        """The whole result as JSON text; `RunResult.from_json` reads it back equal."""
        return json.dumps(dump_result(self))

    @classmethod
    def from_json(
        cls, data: str | bytes | Mapping[str, Any], *, output_type: Any = None
    ) -> RunResult:
        """Read a result written by `to_json` (the text, or its decoded object).

        Args:
            data: What `to_json` wrote.
            output_type: The run's `output_type`: `output` is validated back into it (a
                Pydantic model, dataclass, TypedDict, primitive, list, union or raw JSON
                Schema). `None` leaves `output` as decoded JSON.

        Raises:
            ValueError: not a result `to_json` wrote (or the output does not fit the type).
        """
        raw = json.loads(data) if isinstance(data, str | bytes) else data
        return load_result(raw, output_type)


# --- the codec -----------------------------------------------------------------------------------


@functools.cache
def _computer() -> pydantic.TypeAdapter[ComputerCall]:
    # Built on first use (a paused computer-use run being saved or loaded): a schema built at
    # import costs every `from toolwire import Agent`.
    return pydantic.TypeAdapter(ComputerCall)


def _dump_messages(result: RunResult) -> Any:
    return json.loads(dump_history(result.messages))


def _dump_new(result: RunResult) -> Any:
    # The new messages are the history's tail: kept as where they start, not twice.
    return len(result.messages) - len(result.new_messages)


def _dump_cost(cost: Cost) -> dict[str, Any]:
    return {
        "total": None if cost.total is None else str(cost.total),
        "reason": cost.reason,
        "currency": cost.currency,
    }


def _dump_trace(entry: TraceEntry) -> dict[str, Any]:
    error = entry.error
    return {
        "call_id": entry.call_id,
        "name": entry.name,
        "arguments": entry.arguments,
        "result": entry.result,
        "is_error": entry.is_error,
        "duration": entry.duration,
        "iteration": entry.iteration,
        "error": None if error is None else f"{type(error).__qualname__}: {error}",
        "children": [_dump_trace(child) for child in entry.children],
    }


def _dump_pending(pending: PendingCall) -> dict[str, Any]:
    computer = pending.computer
    return {
        "call": {"id": pending.call.id, "name": pending.call.name, "args": pending.call.arguments},
        "reason": pending.reason,
        "computer": None if computer is None else _computer().dump_python(computer, mode="json"),
    }


def _dump_output(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    # The type's name picks the member of a union of object types when the value is read back.
    return {"value": pydantic_core.to_jsonable_python(value), "type": type(value).__name__}


def _dump_usage(usage: Usage) -> dict[str, Any]:
    return {f.name: getattr(usage, f.name) for f in fields(Usage)}


def _load_cost(cost: Mapping[str, Any]) -> Cost:
    total = cost["total"]
    return Cost(None if total is None else Decimal(total), cost["reason"], cost["currency"])


_ENCODERS: dict[str, Callable[[RunResult], Any]] = {
    "text": lambda r: r.text,
    "messages": _dump_messages,
    "new_messages": _dump_new,
    "usage": lambda r: _dump_usage(r.usage),
    "cost": lambda r: _dump_cost(r.cost),
    "trace": lambda r: [_dump_trace(t) for t in r.trace],
    "stop_reason": lambda r: r.stop_reason,
    "pending": lambda r: [_dump_pending(p) for p in r.pending],
    "iterations": lambda r: r.iterations,
    "output": lambda r: _dump_output(r.output),
    "refusal": lambda r: r.refusal,
    "agent": lambda r: r.agent,
    "agent_path": lambda r: list(r.agent_path),
    "usage_by_agent": lambda r: {k: _dump_usage(u) for k, u in r.usage_by_agent.items()},
    "cost_by_agent": lambda r: {k: _dump_cost(c) for k, c in r.cost_by_agent.items()},
}
"""One entry per field of `RunResult` (a test keeps them in step)."""


def dump_result(result: RunResult) -> dict[str, Any]:
    """`result` as a JSON-ready object (what `RunResult.to_json` writes)."""
    return {name: encode(result) for name, encode in _ENCODERS.items()}


def _load_trace(raw: Mapping[str, Any]) -> TraceEntry:
    error = raw.get("error")
    return TraceEntry(
        call_id=raw["call_id"],
        name=raw["name"],
        arguments=raw["arguments"],
        result=raw["result"],
        is_error=raw["is_error"],
        duration=raw["duration"],
        iteration=raw["iteration"],
        error=None if error is None else ToolError(error),
        children=[_load_trace(child) for child in raw.get("children") or ()],
    )


def _load_pending(raw: Mapping[str, Any]) -> PendingCall:
    call = raw["call"]
    computer = raw.get("computer")
    return PendingCall(
        ToolCall(call["id"], call["name"], call["args"]),
        raw["reason"],
        None if computer is None else _computer().validate_python(computer),
    )


def load_output(stored: Mapping[str, Any] | None, output_type: Any) -> Any:
    """A typed answer read back from JSON: validated into `output_type` (`None`: as decoded)."""
    if stored is None:
        return None
    data = stored["value"]
    if output_type is None:
        return data
    spec = (
        cast(OutputType[Any], output_type)
        if isinstance(output_type, OutputType)
        else OutputType(output_type)
    )
    branches: Sequence[Any] = spec.branches
    named = [b for b in branches if b.name == stored.get("type")]
    others = [b for b in branches if b.name != stored.get("type")]
    adapters = [b.adapter for b in [*named, *others] if b.adapter is not None]
    if not adapters:  # a raw JSON Schema: the answer is the decoded JSON itself
        return data
    # A union of object types has one branch per member, named after it: the value's own type
    # is tried first, so a member whose fields the value also fits does not take it.
    problems: list[str] = []
    for adapter in adapters:
        try:
            return adapter.validate_python(data)
        except pydantic.ValidationError as exc:
            problems.append(str(exc))
    raise ValueError("the stored output does not fit the output type: " + "; ".join(problems))


def _legacy(raw: Mapping[str, Any]) -> RunResult:
    """A result stored by toolwire before the codec (durable runs of round 2): no output, no
    refusal, the new messages as where they start, the pending calls without their request."""
    messages = load_history(json.dumps(raw["messages"]))
    last = messages[-1] if messages else None
    completed = raw["stop_reason"] == "completed" and isinstance(last, AssistantMessage)
    requests = {
        p.id: ComputerCall.from_block(p)
        for p in (last.parts if isinstance(last, AssistantMessage) else ())
        if isinstance(p, ServerToolCallBlock) and is_computer_call(p)
    }
    total = raw["cost"]["total"]
    return RunResult(
        text=last.text if completed and isinstance(last, AssistantMessage) else "",
        messages=messages,
        new_messages=messages[raw["start"] :],
        usage=Usage(**raw["usage"]),
        cost=Cost(None if total is None else Decimal(total), raw["cost"]["reason"]),
        trace=[TraceEntry(**t) for t in raw["trace"]],
        stop_reason=raw["stop_reason"],
        pending=[
            PendingCall(
                ToolCall(p["id"], p["name"], p["arguments"]),
                p["reason"],
                requests.get(p["id"]) if p["reason"] == "computer" else None,
            )
            for p in raw["pending"]
        ],
        iterations=raw["iterations"],
    )


def load_result(raw: Mapping[str, Any], output_type: Any = None) -> RunResult:
    """A `RunResult` from what `dump_result` wrote (or what durable runs stored before it)."""
    try:
        if "start" in raw and "new_messages" not in raw:
            return _legacy(raw)
        messages = load_history(json.dumps(raw["messages"]))
        usage: Mapping[str, Any] = raw["usage"]
        cost: Mapping[str, Any] = raw["cost"]
        by_agent: Mapping[str, Mapping[str, Any]] = raw.get("usage_by_agent") or {}
        costs: Mapping[str, Mapping[str, Any]] = raw.get("cost_by_agent") or {}
        total = cost["total"]
        return RunResult(
            text=raw["text"],
            messages=messages,
            new_messages=messages[raw["new_messages"] :],
            usage=Usage(**usage),
            cost=Cost(None if total is None else Decimal(total), cost["reason"], cost["currency"]),
            trace=[_load_trace(t) for t in raw["trace"]],
            stop_reason=raw["stop_reason"],
            pending=[_load_pending(p) for p in raw["pending"]],
            iterations=raw["iterations"],
            output=load_output(raw["output"], output_type),
            refusal=raw["refusal"],
            # Results written before agents delegated have none of these.
            agent=raw.get("agent", "agent"),
            agent_path=list(raw.get("agent_path") or ()),
            usage_by_agent={k: Usage(**u) for k, u in by_agent.items()},
            cost_by_agent={k: _load_cost(c) for k, c in costs.items()},
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a run result written by RunResult.to_json: {exc!r}") from exc
