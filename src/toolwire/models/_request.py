"""The request values of the model seam and the `Model` protocol.

`ModelRequest` is what a caller asks (the conversation, tools, tool choice, settings, native tool
specs, a structured answer); `ModelBase.prepare` turns it into a `PreparedRequest` for one model:
the native specs resolved into that adapter's payload and the tool and output definitions compiled
once for its dialect. An adapter reads only the prepared request, and compiles nothing itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, cast, runtime_checkable

from .._record import empty_dict, empty_list, record, unguarded
from ..errors import UnsupportedError
from ..messages import Message, UserMessage
from ..native import NativeTool
from ..tools import DefinitionDialect, Tool, ToolDefinition, ToolLike, as_tool, tool
from ._completion import Completion, StreamEvent

if TYPE_CHECKING:
    from ._cache import CachePolicy

__all__ = [
    "Model",
    "ModelRequest",
    "ModelSettings",
    "OutputMode",
    "OutputSpec",
    "PreparedRequest",
    "ToolChoice",
    "check_tool_choice",
    "prepared_request",
    "request_messages",
    "resolve_tools",
]

ToolChoice: TypeAlias = "Literal['auto', 'none', 'required'] | str | Mapping[str, Any]"
"""`"auto"`, `"none"`, `"required"`, a tool's name, or any other value passed raw to the provider."""

OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
"""How a structured answer is asked for: the provider's own structured output, a final-answer tool,
or the schema in the instructions (see `toolwire.output`)."""

_MODES = ("auto", "none", "required")


@record
class ModelSettings:
    """Request settings common to providers; `extra` goes straight into the request body.

    `None` leaves the provider's default. `cache` is the prompt-caching policy (a
    `CachePolicy`; `None` or `True`: the default policy, `False`: no caching hints; see
    docs/context.md).
    """

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list[str] | None = None
    seed: int | None = None
    parallel_tool_calls: bool | None = None
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=empty_dict)
    cache: CachePolicy | bool | None = None

    @classmethod
    def coerce(cls, value: ModelSettings | Mapping[str, Any] | None) -> ModelSettings:
        """Accept settings as this class, a plain mapping, or `None`.

        Keys of a mapping that are not fields of this class go to `extra`.
        """
        if value is None:
            return cls()
        if isinstance(value, ModelSettings):
            return value
        known = {k: v for k, v in value.items() if k in cls.__dataclass_fields__ and k != "extra"}
        extra = {k: v for k, v in value.items() if k not in cls.__dataclass_fields__}
        extra.update(value.get("extra") or {})
        return cls(**known, extra=extra)


@record(frozen=True)
class OutputSpec:
    """A structured answer asked of the model: a JSON Schema the final answer must satisfy.

    Only `native` specs reach an adapter (`ModelRequest.output`); tool and prompted modes are plain
    tools and instructions by the time a request is built.

    Attributes:
        name: A name for the schema (providers that take one show it to the model).
        schema: The JSON Schema of the answer (an object at the root).
        description: What the answer is, for the model.
        strict: Ask for the provider's strict mode; `None` uses it when the schema allows.
        mode: How the answer is asked for.
    """

    name: str
    schema: Mapping[str, Any]
    description: str | None = None
    strict: bool | None = None
    mode: OutputMode = "native"

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        """The schema compiled for `dialect`, strict when the schema allows (as tools are)."""
        spec = tool(parameters=dict(self.schema), name=self.name, strict=self.strict)
        return spec.definition(dialect)


@record
class ModelRequest:
    """Everything one model call asks for: the value every model takes through `Model.send`.

    Attributes:
        messages: The conversation, the prompt (if any) appended as the last user turn.
        tools: The caller's function tools, resolved.
        tool_choice: `"auto"`, `"none"`, `"required"`, a tool's name or a raw provider value.
        settings: The request settings.
        native_tools: Provider-side tool specifications (`toolwire.native`) or raw provider
            payloads, sent beside the function tools.
        output: The structured answer asked for natively, if any.
    """

    messages: list[Message]
    tools: list[Tool] = field(default_factory=empty_list)
    tool_choice: ToolChoice = "auto"
    settings: ModelSettings = field(default_factory=ModelSettings)
    native_tools: list[Any] = field(default_factory=empty_list)
    output: OutputSpec | None = None

    @classmethod
    def build(
        cls,
        prompt: str | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[ToolLike] = (),
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
        output: OutputSpec | None = None,
    ) -> ModelRequest:
        """The request `complete(prompt, history=..., ...)` describes: native tool specs in
        `tools` go to `native_tools`, function tools are resolved."""
        natives: list[Any] = [t for t in tools if isinstance(t, NativeTool)]
        return cls(
            messages=request_messages(prompt, history),
            tools=resolve_tools(tools),
            tool_choice=tool_choice,
            settings=ModelSettings.coerce(settings),
            native_tools=natives,
            output=output,
        )


@record(frozen=True)
class PreparedRequest:
    """A `ModelRequest` made ready for one model by `ModelBase.prepare`; what adapters read.

    Attributes:
        messages: The conversation.
        tools: The function tools (with any a native spec adds that toolwire runs itself).
        definitions: `tools` compiled for the model's dialect, in the same order.
        tool_choice: The tool choice, in its wire form when it forces a native tool.
        settings: The request settings (`extra` holds what native specs add to the body).
        native_tools: The native tool specs resolved into this adapter's payload.
        output: The structured answer asked for natively, if any.
        output_definition: `output` compiled for the model's dialect.
        stream: Whether the answer is streamed.
    """

    messages: list[Message]
    tools: list[Tool] = field(default_factory=empty_list)
    definitions: list[ToolDefinition] = field(default_factory=empty_list)
    tool_choice: ToolChoice = "auto"
    settings: ModelSettings = field(default_factory=ModelSettings)
    native_tools: list[Any] = field(default_factory=empty_list)
    output: OutputSpec | None = None
    output_definition: ToolDefinition | None = None
    stream: bool = False


_PREPARING: Any = unguarded(PreparedRequest)


def prepared_request(
    messages: list[Message],
    tools: list[Tool],
    definitions: list[ToolDefinition],
    tool_choice: ToolChoice,
    settings: ModelSettings,
    native_tools: list[Any],
    output: OutputSpec | None,
    output_definition: ToolDefinition | None,
    stream: bool,
) -> PreparedRequest:
    """`PreparedRequest(...)` with every field given, built without the frozen class's
    `object.__setattr__` per field (see `_record.unguarded`): `prepare` makes one per request."""
    request = object.__new__(_PREPARING)
    request.messages = messages
    request.tools = tools
    request.definitions = definitions
    request.tool_choice = tool_choice
    request.settings = settings
    request.native_tools = native_tools
    request.output = output
    request.output_definition = output_definition
    request.stream = stream
    request.__class__ = PreparedRequest
    return request


def request_messages(prompt: str | None, history: Sequence[Message]) -> list[Message]:
    """The conversation to send: the history, then the prompt as a user turn when given."""
    messages = list(history)
    if prompt is not None:
        messages.append(UserMessage.of(prompt))
    return messages


def resolve_tools(tools: Sequence[ToolLike]) -> list[Tool]:
    """The function tools among `tools`, resolved (native tool specs are left out)."""
    return [as_tool(t) for t in tools if not isinstance(t, NativeTool)]


def check_tool_choice(request: ModelRequest) -> None:
    """Refuse a `tool_choice` that names a tool the request does not carry.

    A name may be a function tool's, a native spec's kind (`"web_search"`), or the name (or type)
    of a raw tool payload in `native_tools` or `settings.extra["tools"]`.

    Raises:
        UnsupportedError: the named tool is not in the request; the message lists the tools.
    """
    choice = request.tool_choice
    if not isinstance(choice, str) or choice in _MODES:
        return
    names = [t.name for t in request.tools]
    if choice in names:
        return
    raw: list[Any] = list(request.native_tools)
    extra_tools = request.settings.extra.get("tools")
    if isinstance(extra_tools, list | tuple):
        raw.extend(cast(Sequence[Any], extra_tools))
    for spec in raw:
        names.extend(_spec_names(spec))
    if choice in names:
        return
    listed = ", ".join(dict.fromkeys(names)) or "none"
    raise UnsupportedError(
        f"tool_choice={choice!r} names no tool of this request: {choice!r} is not among the "
        f"tools ({listed})"
    )


def _spec_names(spec: Any) -> list[str]:
    if isinstance(spec, NativeTool):
        return [spec.kind]
    if not isinstance(spec, Mapping):
        return []
    found: list[str] = []
    payload = cast(Mapping[str, Any], spec)
    function = payload.get("function")
    if isinstance(function, Mapping):
        payload = {**payload, "function_name": cast(Mapping[str, Any], function).get("name")}
    for key in ("name", "type", "function_name"):
        value = payload.get(key)
        if isinstance(value, str):
            found.append(value)
    return found


@runtime_checkable
class Model(Protocol):
    """A model toolwire can talk to: one request value in, one completion (or its events) out.

    Adapters, the offline test models and the wrapper models implement it through `ModelBase`,
    which adds the friendly doors (`complete`, `stream_complete`, `parse`, `stream_parse`).
    """

    @property
    def provider(self) -> str:
        """The provider's name (e.g. `"openai"`); matches `AssistantMessage.provider`."""
        ...

    @property
    def model_name(self) -> str: ...

    async def send(self, request: ModelRequest) -> Completion:
        """Ask the model for the answer to `request`."""
        ...

    def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """`send` as events; the last one is `CompletionDone`."""
        ...
