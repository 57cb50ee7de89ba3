"""Sampling: a server asking the client's model for a completion during a tool call.

`McpClient(..., sampling=Sampler(model, approve=...))` declares the `sampling` capability (with
tool use) and answers each `sampling/createMessage` with a completion of `model`; without a
sampler the capability is not declared and a server that asks anyway gets a JSON-RPC error. The
server's messages become toolwire messages (text, image and audio content, tool calls and their
results), its system prompt, `maxTokens`, `temperature` and `stopSequences` become the request's
settings, and its tools are offered to the model as declarations only: the model may ask for
them, the server runs them. `modelPreferences` is advice: a hint picks one of the sampler's
models when a name matches, the priorities are shown to the approval callback and otherwise left
alone. `includeContext` is not honoured (the `context` sub-capability is not declared), and
`metadata` is never passed to the provider: both are shown to the approval callback.

Whatever goes wrong (a malformed request, a refusal, a model error) becomes a JSON-RPC error for
the server, never an exception in the client.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import mcp_types
from mcp.client.session import ClientRequestContext, SamplingFnT

from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    UserPart,
)
from ..models.base import Completion, Model, ModelRequest, ModelSettings
from ..results import AudioPart, ContentPart, ImagePart, TextPart
from ..tools import Tool, tool
from ._content import McpProtocolError, McpToolSpec, lenient_schema, parse_part, parse_tool_spec

__all__ = ["Sampler", "SamplingApproval", "SamplingRequest", "SamplingReview"]

USER_REJECTED = -1
"""The code the MCP specification's example gives a request the user turned down."""
NOT_SUPPORTED = -32600
"""Invalid request: this client offers no sampling (what the official SDK answers too)."""
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


@dataclass(frozen=True, slots=True)
class SamplingRequest:
    """What the server asks the client's model, as toolwire values.

    Attributes:
        messages: The conversation, as toolwire messages (no system message).
        max_tokens: The most tokens the server wants (capped by `Sampler.max_tokens`).
        system_prompt: The server's system prompt.
        temperature: The server's temperature.
        stop_sequences: Where the server wants the answer to stop.
        tools: Tools the model may ask for (the server runs them).
        tool_choice: `"auto"`, `"required"` or `"none"`, when the server says.
        model_hints: Model names the server suggests, best first (substrings of a name).
        priorities: The server's `costPriority`, `speedPriority` and `intelligencePriority`
            (0 to 1), those it gave.
        include_context: Context the server asked to attach; not attached.
        metadata: Provider-specific data the server sent; not passed on.
        server: The server asking (its URL, or the stdio command).
    """

    messages: list[Message]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    tools: list[McpToolSpec] = field(default_factory=list[McpToolSpec])
    tool_choice: Literal["auto", "required", "none"] | None = None
    model_hints: list[str] = field(default_factory=list[str])
    priorities: dict[str, float] = field(default_factory=dict[str, float])
    include_context: str | None = None
    metadata: dict[str, Any] | None = None
    server: str | None = None

    @property
    def text(self) -> str:
        """The text of the last message, for showing the request to a person."""
        return self.messages[-1].text if self.messages else ""


SamplingApproval: TypeAlias = Callable[[SamplingRequest], bool | Awaitable[bool]]
"""Sees each request and returns whether to answer it (sync or async); `False` refuses it."""

SamplingReview: TypeAlias = Callable[[SamplingRequest, Completion], bool | Awaitable[bool]]
"""Sees the model's answer before the server does (sync or async); `False` withholds it."""


@dataclass(frozen=True, slots=True)
class Sampler:
    """How a client answers sampling requests.

    Args:
        model: The model that answers.
        approve: Called with each request before the model sees it; `False` (or an exception)
            refuses it and the server gets an error. `None` answers every request: give one
            whenever a person should see what a server asks in their name. A sync callback runs
            on the event loop, so it must not block (use an async one to ask a person).
        models: Other models a server's `modelPreferences` hint may pick by name; `model`
            answers when no hint matches.
        max_tokens: The most tokens any answer may take, whatever the server asks.
        review: Called with each request and the model's answer before it is sent, so a person
            can read what goes back to the server; `False` (or an exception) withholds it and
            the server gets an error instead.
    """

    model: Model
    approve: SamplingApproval | None = None
    models: Sequence[Model] = ()
    max_tokens: int | None = None
    review: SamplingReview | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {self.max_tokens}")

    def choose(self, request: SamplingRequest) -> Model:
        """The model for `request`: the first hint that names one of the models, else `model`."""
        candidates = [self.model, *self.models]
        for hint in request.model_hints:
            wanted = hint.casefold()
            for candidate in candidates:
                if wanted and wanted in candidate.model_name.casefold():
                    return candidate
        return self.model


def capability(sampler: Sampler | None) -> dict[str, Any]:
    """What a client declares: sampling with tool use when it has a sampler, else nothing."""
    return {"sampling": {"tools": {}}} if sampler is not None else {}


class SamplingRefused(Exception):
    """The request cannot be answered: a JSON-RPC error for the server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# --- the request ------------------------------------------------------------------------------


def _as_dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SamplingRefused(INVALID_PARAMS, f"{what} is not an object")
    return typing.cast(dict[str, Any], value)


def _blocks(message: dict[str, Any], index: int) -> list[dict[str, Any]]:
    content: Any = message.get("content")
    items: list[Any] = typing.cast(list[Any], content) if isinstance(content, list) else [content]
    return [_as_dict(item, f"messages[{index}].content") for item in items]


def _user_part(block: dict[str, Any], where: str) -> UserPart:
    if block.get("type") not in ("text", "image", "audio"):
        raise SamplingRefused(INVALID_PARAMS, f"{where} has content of type {block.get('type')!r}")
    part = _parse(block, where)
    assert isinstance(part, TextPart | ImagePart | AudioPart)
    return part


def _parse(block: dict[str, Any], where: str) -> ContentPart:
    try:
        return parse_part(block, 0)
    except McpProtocolError as exc:
        raise SamplingRefused(INVALID_PARAMS, f"{where}: {exc.message}") from None


def _assistant_turn(
    blocks: list[dict[str, Any]], where: str, names: dict[str, str]
) -> AssistantMessage:
    parts: list[AssistantPart] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(TextBlock(block["text"]))
        elif kind == "tool_use":
            call_id, name, args = block.get("id"), block.get("name"), block.get("input")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise SamplingRefused(INVALID_PARAMS, f"{where}: a tool_use needs an id and a name")
            names[call_id] = name
            arguments = json.dumps(_as_dict(args if args is not None else {}, f"{where} input"))
            parts.append(ToolCallBlock(id=call_id, name=name, arguments=arguments))
        else:
            # Providers take only text and tool calls in a model's own turn.
            raise SamplingRefused(
                INVALID_PARAMS, f"{where}: an assistant turn cannot hold {kind!r} content here"
            )
    return AssistantMessage(parts=parts)


def _tool_result(block: dict[str, Any], where: str, names: dict[str, str]) -> ToolResultMessage:
    call_id = block.get("toolUseId")
    if not isinstance(call_id, str) or call_id not in names:
        raise SamplingRefused(
            INVALID_PARAMS, f"{where}: a tool_result answers no earlier tool_use ({call_id!r})"
        )
    raw: Any = block.get("content") or []
    if not isinstance(raw, list):
        raise SamplingRefused(INVALID_PARAMS, f"{where}: a tool_result's content is not a list")
    content = [_parse(_as_dict(item, where), where) for item in typing.cast(list[Any], raw)]
    return ToolResultMessage(
        call_id=call_id,
        name=names[call_id],
        content=content,
        is_error=block.get("isError") is True,
        structured=block.get("structuredContent"),
    )


def _messages(raw: Any) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise SamplingRefused(INVALID_PARAMS, "sampling/createMessage needs messages")
    out: list[Message] = []
    names: dict[str, str] = {}  # tool_use id -> tool name, for the results that answer them
    for index, item in enumerate(typing.cast(list[Any], raw)):
        message = _as_dict(item, f"messages[{index}]")
        where = f"messages[{index}]"
        blocks = _blocks(message, index)
        role = message.get("role")
        if role == "assistant":
            out.append(_assistant_turn(blocks, where, names))
        elif role == "user":
            results = [b for b in blocks if b.get("type") == "tool_result"]
            out.extend(_tool_result(b, where, names) for b in results)
            rest = [_user_part(b, where) for b in blocks if b.get("type") != "tool_result"]
            if rest or not results:
                out.append(UserMessage(content=rest))
        else:
            raise SamplingRefused(INVALID_PARAMS, f"{where} has the unknown role {role!r}")
    return out


def _preferences(raw: Any) -> tuple[list[str], dict[str, float]]:
    if not isinstance(raw, dict):
        return [], {}
    prefs = typing.cast(dict[str, Any], raw)
    hints_raw: Any = prefs.get("hints")
    hints = [
        typing.cast(dict[str, Any], h)["name"]
        for h in (typing.cast(list[Any], hints_raw) if isinstance(hints_raw, list) else [])
        if isinstance(h, dict) and isinstance(typing.cast(dict[str, Any], h).get("name"), str)
    ]
    priorities = {
        key: float(value)
        for key in ("costPriority", "speedPriority", "intelligencePriority")
        if isinstance(value := prefs.get(key), int | float) and not isinstance(value, bool)
    }
    return hints, priorities


def parse_request(params: Any, server: str | None = None) -> SamplingRequest:
    """The `sampling/createMessage` parameters as a `SamplingRequest`.

    Raises:
        SamplingRefused: they break the protocol or hold what a toolwire model cannot take.
    """
    found = _as_dict(params, "sampling/createMessage's params")
    max_tokens = found.get("maxTokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        raise SamplingRefused(INVALID_PARAMS, "sampling/createMessage needs a positive maxTokens")
    system = found.get("systemPrompt")
    temperature = found.get("temperature")
    stops: Any = found.get("stopSequences")
    if stops is not None and not (
        isinstance(stops, list) and all(isinstance(s, str) for s in typing.cast(list[Any], stops))
    ):
        raise SamplingRefused(INVALID_PARAMS, "stopSequences must be a list of strings")
    tools_raw: Any = found.get("tools") or []
    if not isinstance(tools_raw, list):
        raise SamplingRefused(INVALID_PARAMS, "tools must be a list")
    try:
        specs = [parse_tool_spec(t) for t in typing.cast(list[Any], tools_raw)]
    except McpProtocolError as exc:
        raise SamplingRefused(INVALID_PARAMS, exc.message) from None
    choice: Any = found.get("toolChoice")
    mode: Any = (
        typing.cast(dict[str, Any], choice).get("mode") if isinstance(choice, dict) else None
    )
    if mode is not None and mode not in ("auto", "required", "none"):
        raise SamplingRefused(INVALID_PARAMS, f"toolChoice has the unknown mode {mode!r}")
    hints, priorities = _preferences(found.get("modelPreferences"))
    metadata: Any = found.get("metadata")
    context = found.get("includeContext")
    return SamplingRequest(
        messages=_messages(found.get("messages")),
        max_tokens=max_tokens,
        system_prompt=system if isinstance(system, str) and system else None,
        temperature=float(temperature)
        if isinstance(temperature, int | float) and not isinstance(temperature, bool)
        else None,
        stop_sequences=list(typing.cast(list[str], stops)) if stops else None,
        tools=specs,
        tool_choice=mode,
        model_hints=hints,
        priorities=priorities,
        include_context=context if isinstance(context, str) else None,
        metadata=typing.cast(dict[str, Any], metadata) if isinstance(metadata, dict) else None,
        server=server,
    )


def _declared(spec: McpToolSpec) -> Tool:
    # A declaration only: the model may ask for it, and the server runs it.
    return tool(
        name=spec.name,
        description=spec.description,
        parameters=lenient_schema(spec.input_schema),
        strict=False,
    )


# --- the answer -------------------------------------------------------------------------------


def _stop_reason(completion: Completion) -> str:
    reason = completion.finish_reason
    if reason == "tool_calls":
        return "toolUse"
    if reason == "length":
        return "maxTokens"
    if reason == "stop":
        raw = (completion.raw_finish_reason or "").casefold()
        return "stopSequence" if raw in ("stop_sequence", "stopsequence") else "endTurn"
    return completion.raw_finish_reason or reason


def _content(completion: Completion, with_tools: bool) -> Any:
    if not with_tools:
        return {"type": "text", "text": completion.text}
    blocks: list[dict[str, Any]] = []
    for part in completion.message.parts:
        if isinstance(part, TextBlock) and part.text:
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallBlock):
            try:
                args: Any = json.loads(part.arguments) if part.arguments.strip() else {}
            except ValueError:
                args = None
            if not isinstance(args, dict):
                raise SamplingRefused(
                    INTERNAL_ERROR,
                    f"the model called {part.name!r} with arguments that are not a JSON object",
                )
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": args})
    return blocks or [{"type": "text", "text": ""}]


async def _verdict(what: str, check: Callable[..., Any], *args: Any) -> bool:
    try:
        verdict = check(*args)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:  # the callback is the caller's code: its failure goes to the server
        raise SamplingRefused(INTERNAL_ERROR, f"the sampling {what} failed: {exc}") from exc
    return verdict is True


async def answer(sampler: Sampler | None, params: Any, server: str | None = None) -> dict[str, Any]:
    """The `CreateMessageResult` to send for one `sampling/createMessage`, as JSON.

    Raises:
        SamplingRefused: no sampler, a malformed request, a refusal, or a failed model.
    """
    if sampler is None:
        raise SamplingRefused(NOT_SUPPORTED, "Sampling not supported: this client has no model")
    request = parse_request(params, server)
    if sampler.approve is not None and not await _verdict("approval", sampler.approve, request):
        raise SamplingRefused(USER_REJECTED, "User rejected sampling request")
    model = sampler.choose(request)
    history: list[Message] = list(request.messages)
    if request.system_prompt is not None:
        history.insert(0, SystemMessage(request.system_prompt))
    limit = request.max_tokens
    if sampler.max_tokens is not None:
        limit = min(limit, sampler.max_tokens)
    settings = ModelSettings(
        max_tokens=limit, temperature=request.temperature, stop=request.stop_sequences
    )
    with_tools = bool(request.tools)
    try:
        asked = ModelRequest.build(
            None,
            history=history,
            tools=[_declared(spec) for spec in request.tools],
            tool_choice=request.tool_choice or "auto",
            settings=settings,
        )
        completion = await model.send(asked)
    except Exception as exc:  # any model failure is the server's error, not the client's crash
        raise SamplingRefused(
            INTERNAL_ERROR, f"the client's model failed: {type(exc).__name__}: {exc}"
        ) from exc
    content = _content(completion, with_tools)
    if sampler.review is not None and not await _verdict(
        "review", sampler.review, request, completion
    ):
        raise SamplingRefused(USER_REJECTED, "User rejected the sampled answer")
    return {
        "role": "assistant",
        "content": content,
        "model": completion.model or model.model_name,
        "stopReason": _stop_reason(completion),
    }


def sdk_callback(sampler: Sampler, server: str | None = None) -> SamplingFnT:
    """The same answers for the SDK's stdio client, as its sampling callback."""

    async def callback(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        raw = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            found = await answer(sampler, raw, server)
        except SamplingRefused as exc:
            return mcp_types.ErrorData(code=exc.code, message=str(exc))
        if isinstance(found["content"], list):
            return mcp_types.CreateMessageResultWithTools.model_validate(found)
        return mcp_types.CreateMessageResult.model_validate(found)

    return callback
