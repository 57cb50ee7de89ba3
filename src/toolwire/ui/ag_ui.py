"""An agent run as an AG-UI event stream (`agent.to_ag_ui()`), on the `ag-ui-protocol` types.

The endpoint takes a `RunAgentInput` (POST, JSON) and answers Server-Sent Events:

- `RUN_STARTED`, then per model turn the reasoning (`REASONING_START`,
  `REASONING_MESSAGE_START/CONTENT/END`, `REASONING_END`), `TEXT_MESSAGE_START/CONTENT/END` and
  `TOOL_CALL_START/ARGS/END` (one assistant message id per turn, the calls' parent), a
  `TOOL_CALL_RESULT` per call the server ran, `CUSTOM` events `toolwire.citations`,
  `toolwire.server_tool_call` and `toolwire.server_tool_result`;
- a run paused on approval: a `STATE_SNAPSHOT` whose `toolwire.pendingApprovals` lists the calls,
  and `RUN_FINISHED` with an `interrupt` outcome, one interrupt per call (its id is the call
  id). The next request answers them in `resume`: `resolved` with payload `true`, `false`,
  `{"approved": bool, "reason": str}`, or `cancelled` (refused);
- a call of a frontend tool (one of the request's `tools`): `RUN_FINISHED` with a `success`
  outcome naming it in `pendingToolCallIds`; the browser runs it and sends its result as a
  `tool` message in the next request;
- a run that fails: `RUN_ERROR` with the exception's type as `code`.

The server keeps nothing between requests: each request carries the whole conversation.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

import pydantic
from ag_ui.core import (
    AssistantMessage as AgAssistant,
)
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    DeveloperMessage,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)
from ag_ui.core import (
    SystemMessage as AgSystem,
)
from ag_ui.core import (
    TextPart as AgTextPart,
)
from ag_ui.core import (
    UserMessage as AgUser,
)

from .._events import (
    FunctionCallCompleted,
    ModelRequestEvent,
    ModelResponseEvent,
    RunCompleted,
    RunEvent,
)
from .._run_result import RunResult
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ServerToolCallBlock,
    ServerToolResultBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..models.base import ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta
from ..results import TextPart
from ..usage import estimate_cost
from ._asgi import BadRequest, Receive, Scope, Send, serve_stream
from ._turn import CallPieces, UiAgent, UiTurn, frontend_tool

__all__ = ["AgUiApp", "read_run_input"]

TRACE_TEXT = 4000
"""The characters of a tool result a `toolwire.trace` event holds (the whole result is in
`TOOL_CALL_RESULT`)."""

APPROVAL_REASON = "tool_approval"
"""The `reason` of the interrupts a run paused on approval ends with."""


class AgUiApp:
    """An ASGI app that runs `agent` for each AG-UI `RunAgentInput` POSTed to it.

    Mount it anywhere (its path is not looked at). Build it with `agent.to_ag_ui()`.

    Args:
        agent: The agent each request runs.
        trace: Also send a `CUSTOM` `toolwire.trace` event per model request (seconds, tokens)
            and per tool call (arguments, result, seconds), for a timeline of the run.
    """

    def __init__(self, agent: UiAgent, *, trace: bool = False) -> None:
        self.agent = agent
        self.trace = trace

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve_stream(scope, receive, send, self._open)

    def _open(self, body: Any) -> AsyncGenerator[str]:
        run_input, turn = read_run_input(body)
        return self._events(run_input, turn, turn.agent(self.agent))

    async def _events(
        self, run_input: RunAgentInput, turn: UiTurn, agent: UiAgent
    ) -> AsyncGenerator[str]:
        ids = _Ids(run_input.thread_id, run_input.run_id)
        yield _sse(RunStartedEvent(thread_id=ids.thread, run_id=ids.run))
        translate = _Translator(self.trace)
        try:
            async with turn.start(agent) as stream:
                async for event in stream:
                    for out in translate.event(event):
                        yield _sse(out)
            result = stream.result
        except Exception as exc:
            for out in translate.close():
                yield _sse(out)
            yield _sse(
                RunErrorEvent(message=str(exc) or type(exc).__name__, code=type(exc).__name__)
            )
            return
        for out in translate.close():
            yield _sse(out)
        for out in _finish(result, ids, answered=bool(turn.approvals)):
            yield _sse(out)


def _sse(event: BaseEvent) -> str:
    return f"data: {event.model_dump_json(by_alias=True, exclude_none=True)}\n\n"


@dataclass(frozen=True, slots=True)
class _Ids:
    thread: str
    run: str

    def finished(self, **fields: Any) -> RunFinishedEvent:
        return RunFinishedEvent(thread_id=self.thread, run_id=self.run, **fields)


def _finish(result: RunResult, ids: _Ids, *, answered: bool) -> list[BaseEvent]:
    approvals = [p for p in result.pending if p.reason == "approval"]
    if approvals:
        listed = [
            {"toolCallId": p.call.id, "toolCallName": p.call.name, "arguments": p.call.arguments}
            for p in approvals
        ]
        interrupts = [
            Interrupt(
                id=p.call.id,
                reason=APPROVAL_REASON,
                tool_call_id=p.call.id,
                message=f"Run {p.call.name}?",
                response_schema={
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}, "reason": {"type": "string"}},
                    "required": ["approved"],
                },
            )
            for p in approvals
        ]
        return [
            StateSnapshotEvent(snapshot={"toolwire": {"pendingApprovals": listed}}),
            ids.finished(outcome=RunFinishedInterruptOutcome(interrupts=interrupts)),
        ]
    # A request that answered approvals clears the list the last snapshot left on the client.
    cleared: list[BaseEvent] = (
        [StateSnapshotEvent(snapshot={"toolwire": {"pendingApprovals": []}})] if answered else []
    )
    if result.stop_reason == "cancelled":
        return [*cleared, ids.finished(outcome=RunFinishedCancelledOutcome())]
    summary = {
        "stopReason": result.stop_reason,
        "text": result.text,
        "inputTokens": result.usage.input_tokens,
        "outputTokens": result.usage.output_tokens,
        "cost": None if result.cost.total is None else str(result.cost.total),
    }
    pending = [p.call.id for p in result.pending]
    outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=pending or None)
    return [*cleared, ids.finished(result=summary, outcome=outcome)]


class _Translator:
    """The run's events as AG-UI events, keeping which message and calls are open."""

    def __init__(self, trace: bool = False) -> None:
        self.trace = trace
        self.asked_at = time.monotonic()
        self.message_id = _new_id()
        self.text_open = False
        self.reasoning_id: str | None = None
        self.texted = False
        self.calls = CallPieces()
        self.started: set[str] = set()
        self.ended: set[str] = set()
        self.resulted: set[str] = set()

    def event(self, event: StreamEvent | RunEvent) -> list[BaseEvent]:
        if isinstance(event, ModelRequestEvent):
            self.asked_at = time.monotonic()
            self.message_id = _new_id()
            self.texted = False
            self.calls.clear()
            return []
        if isinstance(event, ReasoningDelta):
            if not event.text:
                return []
            out = self._close_text()
            if self.reasoning_id is None:
                # The reasoning is a message of its own, before the turn's text and calls.
                self.reasoning_id = _new_id()
                out.append(ReasoningStartEvent(message_id=self.reasoning_id))
                out.append(ReasoningMessageStartEvent(message_id=self.reasoning_id))
            content = ReasoningMessageContentEvent(message_id=self.reasoning_id, delta=event.text)
            return [*out, content]
        if isinstance(event, TextDelta):
            if not event.text:
                return []
            out = [*self._close_reasoning(), *self._open_text()]
            self.texted = True
            return [*out, TextMessageContentEvent(message_id=self.message_id, delta=event.text)]
        if isinstance(event, ToolCallDelta):
            return self._call_delta(event)
        if isinstance(event, ModelResponseEvent):
            out = self._done(event.completion.message)
            if self.trace:
                completion = event.completion
                usage = completion.usage
                # Priced as the run prices it: by the provider that answered, from the tables.
                model = completion.model or completion.message.model
                cost = estimate_cost([(completion.message.provider or "", model, usage)])
                entry = {
                    "kind": "model",
                    "iteration": event.iteration,
                    "model": completion.model,
                    "seconds": round(time.monotonic() - self.asked_at, 6),
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "cacheReadTokens": usage.cache_read_tokens,
                    "finishReason": completion.finish_reason,
                    "cost": None if cost.total is None else str(cost.total),
                    "costReason": cost.reason,
                }
                out.append(CustomEvent(name="toolwire.trace", value=entry))
            return out
        if isinstance(event, FunctionCallCompleted):
            out = [self._result(event.call_id, event.result.text)]
            if self.trace:
                text = event.result.text
                entry = {
                    "kind": "tool",
                    "iteration": event.iteration,
                    "callId": event.call_id,
                    "name": event.name,
                    "arguments": event.arguments,
                    "result": text[:TRACE_TEXT],
                    "resultChars": len(text),
                    "isError": event.is_error,
                    "seconds": round(event.duration, 6),
                }
                out.append(CustomEvent(name="toolwire.trace", value=entry))
            return out
        if isinstance(event, RunCompleted):
            # Results no call event announced: the refusals a resumed run answered with.
            return [
                self._result(m.call_id, m.text)
                for m in event.result.new_messages
                if isinstance(m, ToolResultMessage) and m.call_id not in self.resulted
            ]
        return []

    def _result(self, call_id: str, text: str) -> BaseEvent:
        self.resulted.add(call_id)
        return ToolCallResultEvent(
            message_id=_new_id(), tool_call_id=call_id, content=text, role="tool"
        )

    def close(self) -> list[BaseEvent]:
        """Close whatever a run that ended early left open."""
        out = [*self._close_reasoning(), *self._close_text()]
        for call_id in self.started - self.ended:
            self.ended.add(call_id)
            out.append(ToolCallEndEvent(tool_call_id=call_id))
        return out

    def _open_text(self) -> list[BaseEvent]:
        if self.text_open:
            return []
        self.text_open = True
        return [TextMessageStartEvent(message_id=self.message_id, role="assistant")]

    def _close_reasoning(self) -> list[BaseEvent]:
        if self.reasoning_id is None:
            return []
        done = self.reasoning_id
        self.reasoning_id = None
        return [ReasoningMessageEndEvent(message_id=done), ReasoningEndEvent(message_id=done)]

    def _close_text(self) -> list[BaseEvent]:
        if not self.text_open:
            return []
        self.text_open = False
        return [TextMessageEndEvent(message_id=self.message_id)]

    def _call_delta(self, delta: ToolCallDelta) -> list[BaseEvent]:
        out = [*self._close_reasoning(), *self._close_text()]
        call_id, first = self.calls.take(delta)
        if call_id is None:
            return out
        if first is not None:
            out.append(self._start(call_id, first.name or ""))
            delta = first
        if delta.arguments:
            out.append(ToolCallArgsEvent(tool_call_id=call_id, delta=delta.arguments))
        return out

    def _start(self, call_id: str, name: str) -> BaseEvent:
        self.started.add(call_id)
        return ToolCallStartEvent(
            tool_call_id=call_id, tool_call_name=name, parent_message_id=self.message_id
        )

    def _done(self, message: AssistantMessage) -> list[BaseEvent]:
        out = self._close_reasoning()
        text = message.text
        if text and not self.texted:
            # A model that answered without streaming its text: the whole text at once.
            out += self._open_text()
            out.append(TextMessageContentEvent(message_id=self.message_id, delta=text))
            self.texted = True
        out += self._close_text()
        citations = [
            {"url": c.url, "title": c.title, "citedText": c.cited_text}
            for part in message.parts
            if isinstance(part, TextBlock)
            for c in part.citations
        ]
        if citations:
            value = {"messageId": self.message_id, "citations": citations}
            out.append(CustomEvent(name="toolwire.citations", value=value))
        for part in message.parts:
            out += self._part(part)
        return out

    def _part(self, part: AssistantPart) -> list[BaseEvent]:
        if isinstance(part, ToolCallBlock):
            out: list[BaseEvent] = []
            if part.id not in self.started:
                out.append(self._start(part.id, part.name))
                if part.arguments:
                    out.append(ToolCallArgsEvent(tool_call_id=part.id, delta=part.arguments))
            if part.id not in self.ended:
                self.ended.add(part.id)
                out.append(ToolCallEndEvent(tool_call_id=part.id))
            return out
        if isinstance(part, ServerToolCallBlock):
            value = {"id": part.id, "name": part.name, "arguments": part.arguments}
            return [CustomEvent(name="toolwire.server_tool_call", value=value)]
        if isinstance(part, ServerToolResultBlock):
            value = {
                "callId": part.call_id,
                "name": part.name,
                "content": part.content,
                "isError": part.is_error,
            }
            return [CustomEvent(name="toolwire.server_tool_result", value=value)]
        return []


def _new_id() -> str:
    return uuid.uuid4().hex


# --- the request ------------------------------------------------------------------------------


def read_run_input(body: Any) -> tuple[RunAgentInput, UiTurn]:
    """A POSTed `RunAgentInput` and the run it asks for.

    Raises:
        BadRequest: the body is not a valid `RunAgentInput`, or holds what toolwire cannot run.
    """
    try:
        run_input = RunAgentInput.model_validate(body)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise BadRequest(f"not an AG-UI RunAgentInput: {problems}") from None
    tools = [frontend_tool(t.name, t.description, t.parameters) for t in run_input.tools or ()]
    history = _history(run_input)
    approvals = {entry.interrupt_id: _decision(entry) for entry in run_input.resume or ()}
    return run_input, UiTurn(history, tools, approvals)


def _decision(entry: ResumeEntry) -> bool | str:
    if entry.status == "cancelled":
        return "the user cancelled it"
    payload: Any = entry.payload
    if isinstance(payload, bool):
        return payload
    if isinstance(payload, dict):
        answer = cast(dict[str, Any], payload)
        approved, reason = answer.get("approved"), answer.get("reason")
        if isinstance(approved, bool):
            if not approved and isinstance(reason, str) and reason:
                return reason
            return approved
    raise BadRequest(
        f"resume entry {entry.interrupt_id!r}: the payload must be true, false or "
        '{"approved": bool, "reason": str}'
    )


def _history(run_input: RunAgentInput) -> list[Message]:
    names: dict[str, str] = {}
    history: list[Message] = []
    for message in run_input.messages:
        if isinstance(message, AgSystem | DeveloperMessage):
            history.append(SystemMessage(message.content))
        elif isinstance(message, AgUser):
            history.append(UserMessage([TextPart(_text(message.content, message.id))]))
        elif isinstance(message, AgAssistant):
            parts: list[AssistantPart] = []
            if message.content:
                parts.append(TextBlock(message.content))
            for call in message.tool_calls or ():
                names[call.id] = call.function.name
                parts.append(ToolCallBlock(call.id, call.function.name, call.function.arguments))
            history.append(AssistantMessage(parts))
        elif isinstance(message, ToolMessage):
            name = names.get(message.tool_call_id)
            if name is None:
                raise BadRequest(
                    f"tool message {message.id!r} answers call {message.tool_call_id!r}, which "
                    "no assistant message before it made"
                )
            text = _text(message.content, message.id)
            is_error = message.error is not None
            content = [TextPart(message.error or text if is_error and not text else text)]
            history.append(
                ToolResultMessage(message.tool_call_id, name, content=content, is_error=is_error)  # pyright: ignore[reportArgumentType]
            )
        # Activity and reasoning messages are the frontend's own display: not for the model.
    return history


def _text(content: Any, message_id: str) -> str:
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content:
        if not isinstance(part, AgTextPart):
            raise BadRequest(
                f"message {message_id!r}: toolwire's AG-UI endpoint takes text parts only, "
                f"not {getattr(part, 'type', type(part).__name__)!r}"
            )
        texts.append(part.text)
    return "\n".join(texts)
