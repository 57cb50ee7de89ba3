"""The parts a profile is made of: its native-tool cells (how each provider takes each native tool,
and how `tool_choice` forces it), its thinking rule, its Chat Completions quirks and its tool fees.

A `Cell` maps a `NativeTool`'s options onto one provider's payload (`build`), or says why the
provider has no such tool (`build=None`); its `Force` says what a `tool_choice` naming the tool (or
`"required"` with only native tools) becomes on the wire, or why it is refused. The profiles in
`profiles.py` hold one cell per native kind; `_matrix.py` applies them before any request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from decimal import Decimal
from typing import Any, Literal, TypeAlias, cast

from .._record import record
from ..errors import UnsupportedError

__all__ = [
    "ANTHROPIC_FORCE",
    "GEMINI_FORCE",
    "GROQ_FORCE",
    "MISTRAL_FORCE",
    "OLLAMA_FORCE",
    "OPENROUTER_FORCE",
    "RESPONSES_FORCE",
    "UNFORCEABLE",
    "Cell",
    "CellContext",
    "ChatQuirks",
    "ClientTool",
    "Force",
    "NativePayload",
    "Thinking",
    "ToolFee",
]


@record(frozen=True)
class ToolFee:
    """What one use of a provider-side tool costs, beside the tokens.

    Attributes:
        per_use: US dollars per use (per entry of `Usage.server_tool_requests`).
        source: Where the price was published, and how it is counted.
        as_of: The date the price was read.
    """

    per_use: Decimal
    source: str
    as_of: str


@record(frozen=True)
class Thinking:
    """A provider's extended thinking: how a request turns it on, and what it then refuses.

    Attributes:
        field: The request body field that carries the thinking settings.
        on: The values of that field's `type` that turn thinking on.
        forced_tool: A forced tool (`tool_choice` "required" or a tool's name) is accepted while
            thinking is on.
    """

    field: str = "thinking"
    on: tuple[str, ...] = ("enabled", "adaptive")
    forced_tool: bool = True

    def is_on(self, body: Mapping[str, Any]) -> bool:
        """Whether the request body (defaults and `settings.extra`) turns thinking on."""
        value = body.get(self.field)
        if not isinstance(value, Mapping):
            return False
        return cast(Mapping[str, Any], value).get("type") in self.on

    def check_forced(self, body: Mapping[str, Any], who: str) -> None:
        """Refuse a forced tool while thinking is on, where the provider refuses it.

        Raises:
            UnsupportedError: thinking is on and `who` refuses forced tool use with it.
        """
        if not self.forced_tool and self.is_on(body):
            raise UnsupportedError(
                f"{who} refuses forced tool use (tool_choice 'required' or a tool name) while "
                "extended thinking is on; use tool_choice='auto' or turn thinking off"
            )


@record(frozen=True)
class ChatQuirks:
    """What differs between servers that speak Chat Completions (read by `OpenAIChatModel`).

    Attributes:
        reasoning_replay: How a turn's own reasoning goes back in later requests: `"omit"`,
            `"field"` (a message field, see `reasoning_field`) or `"think_tags"` (`<think>` tags
            before the text, as Groq accepts).
        reasoning_field: The message field for `"field"`; `None` uses the field it arrived in.
        reasoning_on_every_turn: Send the field on every assistant turn, empty when there is
            nothing to send (DeepSeek's thinking mode wants it on tool-call turns).
        stream_usage: Ask for usage in the last chunk of a stream (`stream_options`).
        max_tokens_field: The body field `ModelSettings.max_tokens` goes to.
        file_urls: The server takes a URL as a file's data (OpenRouter); elsewhere files must be
            bytes, and a URL raises `UnsupportedError`.
        system_role: The role system messages are sent with.
        media: The server reads images, audio and files; a text-only server (DeepSeek) raises
            `UnsupportedError` for them in user turns, and a tool's media stay described in its
            result's text.
        content_filter_error: A turn the content filter stopped raises `ModelStreamError`
            (code `content_filter`) naming the filtered categories (Azure), instead of finishing
            with `content_filter`; a refused prompt's HTTP error names them too.
    """

    reasoning_replay: Literal["omit", "field", "think_tags"] = "omit"
    reasoning_field: str | None = None
    reasoning_on_every_turn: bool = False
    stream_usage: bool = True
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    file_urls: bool = False
    system_role: Literal["system", "developer"] = "system"
    media: bool = True
    content_filter_error: bool = False


@record(frozen=True)
class ClientTool:
    """A function tool toolwire runs on the provider's behalf (Ollama's web API), described here
    and built when a request or an agent needs it (`_matrix.client_tools`).

    Attributes:
        factory: The prebuilt tool's factory as `module:attribute`, imported on first use (as
            `PROVIDERS` names the model factories), so the profiles never import the prebuilt
            tools and a program that never asks Ollama for web search never loads them.
        name: The function tool's name, as the model calls it.
        options: The factory's keyword arguments (key, base URL, timeout, egress).
    """

    factory: str
    name: str
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


@record
class NativePayload:
    """What native tools add to one request.

    Attributes:
        tools: Wire tool entries, appended to the function tools as given.
        body: Top-level request fields (merged into `settings.extra`).
        functions: Function tools toolwire runs on the provider's behalf (Ollama's web API):
            `ClientTool`s from a cell, built into `FunctionTool`s by `resolve_native`.
        tool_choice: The tool choice to send: the caller's, or its wire form when it forces a
            native tool (`resolve_native` fills it).
    """

    tools: list[Any] = field(default_factory=list[Any])
    body: dict[str, Any] = field(default_factory=dict[str, Any])
    functions: list[Any] = field(default_factory=list[Any])
    tool_choice: Any = "auto"


@record(frozen=True)
class CellContext:
    """What a cell may read besides the options.

    Attributes:
        provider: The provider the request goes to.
        model_name: The model asked for.
        family: The model's family in the profile (`ModelProfile.families`), if it has one.
        function_tools: Function tools go in the same request.
        options: The request body's defaults and `settings.extra` (e.g. Anthropic's `thinking`).
    """

    provider: str
    model_name: str
    family: str | None
    function_tools: bool
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


Build: TypeAlias = Callable[[dict[str, Any], dict[str, Any], CellContext], NativePayload]
"""(common options, other options, context) -> the payload."""
Choose: TypeAlias = Callable[[NativePayload, CellContext], Any]
"""(the tool's payload, context) -> the wire tool choice."""


@record(frozen=True)
class Force:
    """How `tool_choice` makes a provider use one native tool, or why it cannot.

    Attributes:
        wire: What is sent for a tool forced by name (the docs show it), or why it cannot be.
        by_name: `tool_choice="<kind>"` (e.g. `"web_search"`) to the wire choice, given the
            tool's payload; `None`: refused before any request.
        required: `tool_choice="required"` with only native tools to the wire choice; `None`:
            refused before any request (with function tools beside, "required" is theirs).
        required_wire: What "required" becomes or why it is refused (the docs show it).
    """

    wire: str
    by_name: Choose | None = None
    required: Choose | None = None
    required_wire: str = ""


UNFORCEABLE = Force("the provider offers no way to force it", required_wire="no way to force it")


@record(frozen=True)
class Cell:
    """One cell of a profile: how a provider takes a native tool, or why it cannot.

    Attributes:
        wire: The provider's name for the tool (the docs show it), or why there is none.
        takes: The common options (`native.COMMON_OPTIONS`) this provider maps.
        build: Maps (common options, other options, context) to the payload; `None` for "no".
        force: How `tool_choice` can force the tool (only read when `build` is set).
        client_run: toolwire runs the tool itself as a function tool (`ClientTool`), not the
            provider (Ollama's web API); an agent adds those tools to its own.
        why_not: Why a common option is refused, with its source, by option name (the refusal
            and the docs say it).
    """

    wire: str
    takes: tuple[str, ...] = ()
    build: Build | None = None
    force: Force = UNFORCEABLE
    client_run: bool = False
    why_not: tuple[tuple[str, str], ...] = ()

    @property
    def supported(self) -> bool:
        return self.build is not None


def no(reason: str) -> Cell:
    """A documented "no": the provider has no such tool, and `reason` says so."""
    return Cell(reason)


def _location(value: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "approximate", **value}


def _tool(base: dict[str, Any], common: dict[str, Any], extra: dict[str, Any]) -> NativePayload:
    return NativePayload([{**base, **common, **extra}])


def anthropic_search(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    if "user_location" in c:
        c["user_location"] = _location(c["user_location"])
    return _tool({"type": "web_search_20250305", "name": "web_search"}, c, e)


def anthropic_fetch(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    if "citations" in c:
        c["citations"] = {"enabled": bool(c["citations"])}
    return _tool({"type": "web_fetch_20250910", "name": "web_fetch"}, c, e)


def anthropic_code(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    return _tool({"type": "code_execution_20250825", "name": "code_execution"}, c, e)


def responses_search(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    entry: dict[str, Any] = {"type": "web_search"}
    if "allowed_domains" in c:
        entry["filters"] = {"allowed_domains": c["allowed_domains"]}
    if "user_location" in c:
        entry["user_location"] = _location(c["user_location"])
    if "search_context_size" in c:
        entry["search_context_size"] = c["search_context_size"]
    return NativePayload([{**entry, **e}])


def responses_code(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    return _tool({"type": "code_interpreter", "container": {"type": "auto"}}, c, e)


def gemini(key: str) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        inner: dict[str, Any] = {}
        if "blocked_domains" in c:
            # Vertex only (the Gemini API refuses it). The SDK writes the proto field name,
            # which Vertex's JSON reads as `excludeDomains`.
            inner["exclude_domains"] = c["blocked_domains"]
        return NativePayload([{key: {**inner, **e}}])

    return build


def typed(type_: str) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        return _tool({"type": type_}, c, e)

    return build


# --- computer use (the caller acts; see toolwire.computer) ---------------------------------------


def _display(c: dict[str, Any], who: str) -> tuple[int, int]:
    try:
        return int(c["display_width"]), int(c["display_height"])
    except KeyError:
        raise UnsupportedError(
            f"{who} needs the screen size: computer_use(display_width=..., display_height=...)"
        ) from None


def anthropic_computer(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    width, height = _display(c, "Anthropic's computer tool")
    entry = {
        "type": "computer_20250124",
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
    }
    return NativePayload([{**entry, **e}])


_OPENAI_ENVIRONMENTS = ("windows", "mac", "linux", "ubuntu", "browser")


def responses_computer(preview_only: bool) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        preview = (
            preview_only
            or e.get("type") == "computer_use_preview"
            or ctx.family == "computer-use-preview"
        )
        if not preview:
            if c:
                raise UnsupportedError(
                    f"OpenAI's computer tool takes no {', '.join(sorted(c))} (the model reads "
                    "the screen from the screenshots); computer_use_preview takes them: "
                    'provider_overrides={"openai": {"type": "computer_use_preview"}}'
                )
            return NativePayload([{"type": "computer", **e}])
        width, height = _display(c, "OpenAI's computer_use_preview")
        environment = c.get("environment", "browser")
        if environment not in _OPENAI_ENVIRONMENTS:
            raise UnsupportedError(
                f"computer_use_preview takes environment {', '.join(_OPENAI_ENVIRONMENTS)}, "
                f"not {environment!r}"
            )
        entry = {
            "type": "computer_use_preview",
            "display_width": width,
            "display_height": height,
            "environment": environment,
        }
        # The preview model answers only with truncation on (OpenAI's computer use guide).
        return NativePayload([{**entry, **e}], body={"truncation": "auto"})

    return build


_GEMINI_ENVIRONMENTS = {
    "browser": "ENVIRONMENT_BROWSER",
    "desktop": "ENVIRONMENT_DESKTOP",
    "mobile": "ENVIRONMENT_MOBILE",
}


def gemini_computer(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    given = str(c.get("environment", "browser"))
    environment = _GEMINI_ENVIRONMENTS.get(given.lower(), given)
    if environment not in _GEMINI_ENVIRONMENTS.values():
        raise UnsupportedError(
            f"Gemini's computer_use takes environment {', '.join(_GEMINI_ENVIRONMENTS)}, "
            f"not {given!r}"
        )
    return NativePayload([{"computer_use": {"environment": environment, **e}}])


_GROQ_COMPOUND = {"web_search": "web_search", "web_fetch": "visit_website"}
_GROQ_COMPOUND["code_execution"] = "code_interpreter"


def groq(kind: str, builtin: str | None) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        if ctx.family == "compound":
            if ctx.function_tools:
                raise UnsupportedError(
                    f"Groq's compound model {ctx.model_name!r} takes no function tools beside "
                    "its built-in tools; drop the function tools or use a gpt-oss model"
                )
            enabled = {"tools": {"enabled_tools": [_GROQ_COMPOUND[kind]]}}
            return NativePayload(body={"compound_custom": {**enabled, **e}})
        if builtin is None:
            raise UnsupportedError(
                f"Groq's {kind} runs only on its compound models (groq/compound, "
                f"groq/compound-mini), not on {ctx.model_name!r}"
            )
        return _tool({"type": builtin}, c, e)

    return build


def openrouter(type_: str) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        parameters = dict(c)
        if "blocked_domains" in parameters:
            parameters["excluded_domains"] = parameters.pop("blocked_domains")
        parameters.update(e)
        return NativePayload([{"type": type_, "parameters": parameters}])

    return build


_OLLAMA_SETTINGS = frozenset({"api_key", "base_url", "timeout", "egress"})


def ollama(kind: str) -> Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
        unknown = sorted(set(e) - _OLLAMA_SETTINGS)
        if unknown:
            raise UnsupportedError(
                f"Ollama's {kind} takes no {', '.join(unknown)}; it takes "
                f"{', '.join(sorted(_OLLAMA_SETTINGS))}"
            )
        factory = f"toolwire.prebuilt.ollama_web:ollama_{kind}_tool"
        return NativePayload(functions=[ClientTool(factory, kind, dict(e))])

    return build


# --- forcing (the `Force` of each cell) ------------------------------------------------------


def _required(_: NativePayload, ctx: CellContext) -> Any:
    return "required"


def _by_type(payload: NativePayload, _: CellContext) -> Any:
    return {"type": payload.tools[0]["type"]}


def _allowed_tools(payload: NativePayload, _: CellContext) -> Any:
    # GA `web_search` is not a `{"type": ...}` tool choice; the allowed-tools form takes it.
    return {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": payload.tools[0]["type"]}],
    }


def _anthropic_name(payload: NativePayload, _: CellContext) -> Any:
    return {"type": "tool", "name": payload.tools[0]["name"]}


def _function_name(payload: NativePayload, _: CellContext) -> Any:
    return payload.functions[0].name


def _groq_required(payload: NativePayload, ctx: CellContext) -> Any:
    if ctx.family == "compound":
        raise UnsupportedError(
            f"Groq's compound model {ctx.model_name!r} picks its built-in tools itself; "
            "tool_choice='required' cannot force one"
        )
    return "required"


RESPONSES_FORCE: dict[str, Force] = {
    "web_search": Force(
        '`{"type": "allowed_tools", "mode": "required", "tools": [{"type": "web_search"}]}`',
        _allowed_tools,
        _required,
        "`required`",
    ),
    "code_execution": Force('`{"type": "code_interpreter"}`', _by_type, _required, "`required`"),
    "computer_use": Force(
        '`{"type": "computer"}` (`computer_use_preview` on preview models)',
        _by_type,
        _required,
        "`required`",
    ),
}
ANTHROPIC_FORCE = Force(
    '`{"type": "tool", "name": ...}`',
    _anthropic_name,
    _required,
    '`{"type": "any"}`',
)
GEMINI_FORCE = Force(
    "no built-in tool can be forced (function calling modes cover functions only)",
    required_wire="no built-in tool can be forced",
)
MISTRAL_FORCE = Force(
    "the Conversations API forces no tool by name", required=_required, required_wire="`any`"
)
GROQ_FORCE = Force(
    "no tool choice names a built-in tool",
    required=_groq_required,
    required_wire="`required` on gpt-oss models; compound models pick their tools themselves",
)
OPENROUTER_FORCE = Force(
    "tool_choice names functions only; server tools run when the model picks them",
    required_wire="server tools are never forced",
)
OLLAMA_FORCE = Force(
    "the function tool, by its name", _function_name, _required, "`required` (function tools)"
)
