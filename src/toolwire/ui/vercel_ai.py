"""An agent run as the Vercel AI SDK's UI message stream (`agent.to_vercel_ai()`).

The endpoint takes what `useChat`'s default transport POSTs (`{"id", "messages": [UIMessage],
"trigger", ...}`) and answers Server-Sent Events whose `data:` lines are UI message chunks,
with the `x-vercel-ai-ui-message-stream: v1` header: `start`, per model turn `start-step`,
`text-start/-delta/-end`, `reasoning-start/-delta/-end`, `tool-input-start/-delta/-available`,
`tool-output-available` (or `tool-output-error`) per call the server ran, `source-url` per cited
page, `finish-step`; then `finish` and `[DONE]`. A run that fails sends an `error` chunk.

- A call that needs approval sends `tool-approval-request` (its `approvalId` is the call id);
  the frontend answers with `addToolApprovalResponse`, which puts `approval: {id, approved,
  reason}` on the tool part, and sends the conversation again.
- A call of a frontend tool (one the request lists in `tools`, or any tool part the server does
  not know) ends the stream after `tool-input-available`; the browser runs it
  (`onToolCall` + `addToolOutput`) and sends the conversation again with the output.

The server keeps nothing between requests: each request carries the whole conversation.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Mapping
from typing import Any, cast

from .._arguments import load_json_object
from .._events import (
    FunctionCallCompleted,
    ModelRequestEvent,
    ModelResponseEvent,
    RunCompleted,
    RunEvent,
)
from ..errors import ToolArgumentsError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..models.base import ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta
from ..results import TextPart
from ._asgi import BadRequest, Receive, Scope, Send, serve_stream
from ._turn import CallPieces, UiAgent, UiTurn, dump_output, frontend_tool

__all__ = ["HEADERS", "VercelAiApp", "read_chat_request"]

HEADERS = ((b"x-vercel-ai-ui-message-stream", b"v1"),)
"""The header that tells the AI SDK's client this is a UI message stream, version 1."""


class VercelAiApp:
    """An ASGI app that runs `agent` for each `useChat` request POSTed to it.

    Mount it anywhere (its path is not looked at). Build it with `agent.to_vercel_ai()`.
    """

    def __init__(self, agent: UiAgent) -> None:
        self.agent = agent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve_stream(scope, receive, send, self._open, HEADERS)

    def _open(self, body: Any) -> AsyncGenerator[str]:
        turn = read_chat_request(body)
        return self._events(turn, turn.agent(self.agent))

    async def _events(self, turn: UiTurn, agent: UiAgent) -> AsyncGenerator[str]:
        # The client resets its message when the id changes: a continued answer keeps its id.
        yield _sse({"type": "start", "messageId": turn.reply_id or _new_id()})
        translate = _Translator(turn.approvals)
        try:
            async with turn.start(agent) as stream:
                async for event in stream:
                    for chunk in translate.event(event):
                        yield _sse(chunk)
            result = stream.result
        except Exception as exc:
            for chunk in translate.close():
                yield _sse(chunk)
            yield _sse({"type": "error", "errorText": f"{type(exc).__name__}: {exc}"})
            yield "data: [DONE]\n\n"
            return
        for chunk in translate.close():
            yield _sse(chunk)
        for pending in result.pending:
            if pending.reason == "approval":
                request = {"approvalId": pending.call.id, "toolCallId": pending.call.id}
                yield _sse({"type": "tool-approval-request", **request})
        yield _sse({"type": "finish", "finishReason": _finish_reason(result.stop_reason)})
        yield "data: [DONE]\n\n"


def _finish_reason(stop_reason: str) -> str:
    if stop_reason == "completed":
        return "stop"
    if stop_reason in ("external_calls", "approval_required"):
        return "tool-calls"
    if stop_reason in ("max_iterations", "token_limit", "cost_limit", "time_limit"):
        return "length"
    return "other"


def _sse(chunk: Mapping[str, Any]) -> str:
    return f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n"


def _new_id() -> str:
    return uuid.uuid4().hex


class _Translator:
    """The run's events as UI message chunks, keeping which parts are open."""

    def __init__(self, approvals: Mapping[str, bool | str]) -> None:
        self.approvals = approvals
        self.resulted: set[str] = set()
        self.step_open = False
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.texted = False
        self.calls = CallPieces()
        self.names: dict[str, str] = {}
        self.started: set[str] = set()

    def event(self, event: StreamEvent | RunEvent) -> list[dict[str, Any]]:
        if isinstance(event, ModelRequestEvent):
            out = self._close_step()
            self.step_open = True
            self.texted = False
            self.calls.clear()
            return [*out, {"type": "start-step"}]
        if isinstance(event, TextDelta):
            if not event.text:
                return []
            out = self._close_reasoning()
            if self.text_id is None:
                self.text_id = _new_id()
                out.append({"type": "text-start", "id": self.text_id})
            self.texted = True
            return [*out, {"type": "text-delta", "id": self.text_id, "delta": event.text}]
        if isinstance(event, ReasoningDelta):
            if not event.text:
                return []
            out = self._close_text()
            if self.reasoning_id is None:
                self.reasoning_id = _new_id()
                out.append({"type": "reasoning-start", "id": self.reasoning_id})
            return [*out, {"type": "reasoning-delta", "id": self.reasoning_id, "delta": event.text}]
        if isinstance(event, ToolCallDelta):
            return self._call_delta(event)
        if isinstance(event, ModelResponseEvent):
            return self._done(event.completion.message)
        if isinstance(event, FunctionCallCompleted):
            return [self._result(event.result)]
        if isinstance(event, RunCompleted):
            # Results no call event announced: the refusals a resumed run answered with.
            return [
                {"type": "tool-output-denied", "toolCallId": m.call_id}
                if self.approvals.get(m.call_id, True) is not True
                else self._result(m)
                for m in event.result.new_messages
                if isinstance(m, ToolResultMessage) and m.call_id not in self.resulted
            ]
        return []

    def _result(self, result: ToolResultMessage) -> dict[str, Any]:
        self.resulted.add(result.call_id)
        if result.is_error:
            return {
                "type": "tool-output-error",
                "toolCallId": result.call_id,
                "errorText": result.text,
            }
        output = result.structured if result.structured is not None else result.text
        return {"type": "tool-output-available", "toolCallId": result.call_id, "output": output}

    def close(self) -> list[dict[str, Any]]:
        """Close whatever a run that ended left open."""
        return self._close_step()

    def _close_text(self) -> list[dict[str, Any]]:
        if self.text_id is None:
            return []
        chunk = {"type": "text-end", "id": self.text_id}
        self.text_id = None
        return [chunk]

    def _close_reasoning(self) -> list[dict[str, Any]]:
        if self.reasoning_id is None:
            return []
        chunk = {"type": "reasoning-end", "id": self.reasoning_id}
        self.reasoning_id = None
        return [chunk]

    def _close_step(self) -> list[dict[str, Any]]:
        out = [*self._close_reasoning(), *self._close_text()]
        if self.step_open:
            self.step_open = False
            out.append({"type": "finish-step"})
        return out

    def _call_delta(self, delta: ToolCallDelta) -> list[dict[str, Any]]:
        out = [*self._close_reasoning(), *self._close_text()]
        call_id, first = self.calls.take(delta)
        if call_id is None:
            return out
        if first is not None:
            self.started.add(call_id)
            out.append({"type": "tool-input-start", "toolCallId": call_id, "toolName": first.name})
            delta = first
        if delta.arguments:
            out.append(
                {
                    "type": "tool-input-delta",
                    "toolCallId": call_id,
                    "inputTextDelta": delta.arguments,
                }
            )
        return out

    def _done(self, message: AssistantMessage) -> list[dict[str, Any]]:
        out = self._close_reasoning()
        text = message.text
        if text and not self.texted:
            # A model that answered without streaming its text: the whole text at once.
            text_id = _new_id()
            out += [
                {"type": "text-start", "id": text_id},
                {"type": "text-delta", "id": text_id, "delta": text},
                {"type": "text-end", "id": text_id},
            ]
        out += self._close_text()
        for part in message.parts:
            if isinstance(part, TextBlock):
                for citation in part.citations:
                    if citation.url:
                        source: dict[str, Any] = {
                            "type": "source-url",
                            "sourceId": _new_id(),
                            "url": citation.url,
                        }
                        if citation.title:
                            source["title"] = citation.title
                        out.append(source)
            elif isinstance(part, ToolCallBlock):
                if part.id not in self.started:
                    self.started.add(part.id)
                    out.append(
                        {"type": "tool-input-start", "toolCallId": part.id, "toolName": part.name}
                    )
                out.append(
                    {
                        "type": "tool-input-available",
                        "toolCallId": part.id,
                        "toolName": part.name,
                        "input": _input(part.arguments, part.name),
                    }
                )
        return out


def _input(arguments: str, name: str) -> Any:
    if not arguments.strip():
        return {}
    try:
        return load_json_object(arguments, name)
    except ToolArgumentsError:
        return arguments  # the model's text as it wrote it; the tool's result says what is wrong


# --- the request ------------------------------------------------------------------------------


def read_chat_request(body: Any) -> UiTurn:
    """The run a `useChat` request asks for.

    Raises:
        BadRequest: the body is not a chat request, or holds what toolwire cannot run.
    """
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object with a 'messages' list")
    request = cast(dict[str, Any], body)
    messages: Any = request.get("messages")
    if not isinstance(messages, list):
        raise BadRequest("the body must be a JSON object with a 'messages' list")
    tools: Any = request.get("tools") or {}
    if not isinstance(tools, dict):
        raise BadRequest("'tools' must be an object: tool name -> {description, inputSchema}")
    frontend = [
        frontend_tool(name, _field(spec, "description"), _field(spec, "inputSchema"))
        for name, spec in cast(dict[str, Any], tools).items()
    ]
    history: list[Message] = []
    approvals: dict[str, bool | str] = {}
    listed = cast(list[Any], messages)
    for index, raw in enumerate(listed):
        history += _message(raw, index, approvals)
    reply_id = None
    if listed and cast(dict[str, Any], listed[-1]).get("role") == "assistant":
        found = cast(dict[str, Any], listed[-1]).get("id")
        reply_id = found if isinstance(found, str) and found else None
    return UiTurn(history, frontend, approvals, reply_id)


def _field(spec: Any, name: str) -> Any:
    return cast(dict[str, Any], spec).get(name) if isinstance(spec, dict) else None


def _message(raw: Any, index: int, approvals: dict[str, bool | str]) -> list[Message]:
    where = f"messages[{index}]"
    if not isinstance(raw, dict):
        raise BadRequest(f"{where} is not an object")
    message = cast(dict[str, Any], raw)
    role, parts = message.get("role"), message.get("parts")
    if not isinstance(parts, list):
        raise BadRequest(f"{where} has no 'parts' list")
    typed = [_part(p, f"{where}.parts[{i}]") for i, p in enumerate(cast(list[Any], parts))]
    if role == "system":
        return [SystemMessage(_texts(typed))]
    if role == "user":
        return [UserMessage([TextPart(_texts(typed))])]
    if role == "assistant":
        return _assistant(typed, approvals)
    raise BadRequest(f"{where}: role must be 'system', 'user' or 'assistant', not {role!r}")


def _part(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or not isinstance(cast(dict[str, Any], raw).get("type"), str):
        raise BadRequest(f"{where} is not a part (an object with a 'type')")
    return cast(dict[str, Any], raw)


def _texts(parts: list[dict[str, Any]]) -> str:
    return "\n".join(str(p.get("text", "")) for p in parts if p["type"] == "text")


def _assistant(parts: list[dict[str, Any]], approvals: dict[str, bool | str]) -> list[Message]:
    # One UI message holds a whole multi-step answer; toolwire's history holds one assistant
    # turn per step, followed by its results. A step ends at `step-start`, or where text or a
    # call follows a call that has its output.
    out: list[Message] = []
    turn: list[AssistantPart] = []
    results: list[ToolResultMessage] = []

    def flush() -> None:
        if turn:
            out.append(AssistantMessage(list(turn)))
            out.extend(results)
        turn.clear()
        results.clear()

    for part in parts:
        kind: str = part["type"]
        if kind == "step-start":
            flush()
        elif kind == "text":
            if results:
                flush()
            text = part.get("text")
            if isinstance(text, str) and text:
                turn.append(TextBlock(text))
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            if results:
                flush()
            call, result = _tool_part(part, kind, approvals)
            turn.append(call)
            if result is not None:
                results.append(result)
    flush()
    return out


def _tool_part(
    part: dict[str, Any], kind: str, approvals: dict[str, bool | str]
) -> tuple[ToolCallBlock, ToolResultMessage | None]:
    name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
    call_id = part.get("toolCallId")
    if not isinstance(name, str) or not name or not isinstance(call_id, str) or not call_id:
        raise BadRequest(f"a {kind!r} part needs a tool name and a 'toolCallId'")
    arguments = json.dumps(part.get("input") or {})
    call = ToolCallBlock(call_id, name, arguments)
    state = part.get("state")
    approval: Any = part.get("approval")
    if state == "output-available":
        text = dump_output(part.get("output"))
        return call, ToolResultMessage(call_id, name, [TextPart(text)])
    if state == "output-error":
        text = str(part.get("errorText") or "the tool failed")
        return call, ToolResultMessage(call_id, name, [TextPart(text)], is_error=True)
    if state == "output-denied":
        text = "Error: not approved"
        return call, ToolResultMessage(call_id, name, [TextPart(text)], is_error=True)
    if state == "approval-responded" and isinstance(approval, dict):
        answer = cast(dict[str, Any], approval)
        approved, reason = answer.get("approved"), answer.get("reason")
        if not isinstance(approved, bool):
            raise BadRequest(f"tool call {call_id!r}: 'approval.approved' must be true or false")
        approvals[call_id] = (
            reason if not approved and isinstance(reason, str) and reason else approved
        )
    return call, None
