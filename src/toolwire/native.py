"""Provider-side ("native") tools: one spec per tool, and the one table of who runs what.

`web_search()`, `web_fetch()`, `code_execution()` and `computer_use()` build a `NativeTool`, passed in
`tools=` beside function tools. `ModelRequest.build` sets them apart into `request.native_tools`, and
`ModelBase.prepare` turns each into the payload of the adapter that sends it (`resolve_native`),
keyed by the adapter's provider and wire API in `SUPPORT`. A tool or option a provider does not take
raises `UnsupportedError` there, before any request, naming what that provider does take: a tool is
never dropped. A `tool_choice` forcing a native tool is checked in the same pass, against the
cell's `Force`, and sent in the provider's own form or refused. Raw provider dicts in
`native_tools` go to the wire as given.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

from ._native_force import (
    ANTHROPIC_FORCE,
    GEMINI_FORCE,
    GROQ_FORCE,
    MISTRAL_FORCE,
    OLLAMA_FORCE,
    OPENROUTER_FORCE,
    RESPONSES_FORCE,
    UNFORCEABLE,
    Force,
    forced_choice,
)
from .errors import UnsupportedError

__all__ = [
    "NATIVE_KINDS",
    "SUPPORT",
    "Force",
    "NativeKind",
    "NativePayload",
    "NativeTool",
    "code_execution",
    "computer_use",
    "fee_table_markdown",
    "forcing_matrix_markdown",
    "resolve_native",
    "split_client_run",
    "support_matrix_markdown",
    "web_fetch",
    "web_search",
]

NativeKind: TypeAlias = Literal["web_search", "web_fetch", "code_execution", "computer_use"]
NATIVE_KINDS: tuple[NativeKind, ...] = ("web_search", "web_fetch", "code_execution", "computer_use")

_COMMON: dict[str, tuple[str, ...]] = {
    "web_search": (
        "max_uses",
        "allowed_domains",
        "blocked_domains",
        "user_location",
        "search_context_size",
    ),
    "web_fetch": (
        "max_uses",
        "allowed_domains",
        "blocked_domains",
        "citations",
        "max_content_tokens",
    ),
    "code_execution": (),
    "computer_use": ("display_width", "display_height", "environment"),
}


@dataclass(frozen=True, slots=True)
class NativeTool:
    """A tool the provider runs itself, given in `tools=` beside function tools.

    Attributes:
        kind: Which tool.
        options: The options set: the common ones by their toolwire names, any other one exactly
            as the provider's payload names it.
        provider_overrides: Options merged in for one provider only, by provider name.
    """

    kind: NativeKind
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    provider_overrides: Mapping[str, Mapping[str, Any]] = field(
        default_factory=dict[str, Mapping[str, Any]]
    )

    @property
    def name(self) -> str:
        return self.kind

    def options_for(self, provider: str) -> dict[str, Any]:
        """The options with `provider`'s overrides merged in (an override of `None` removes
        the option for that provider, e.g. a screen size a provider does not take)."""
        merged = dict(self.options)
        merged.update(self.provider_overrides.get(provider, {}))
        return {k: v for k, v in merged.items() if v is not None}


def _spec(
    kind: NativeKind,
    common: Mapping[str, Any],
    extra: Mapping[str, Any],
    overrides: Mapping[str, Mapping[str, Any]] | None,
) -> NativeTool:
    options = {k: v for k, v in common.items() if v is not None}
    options.update(extra)
    for key in ("allowed_domains", "blocked_domains"):
        if key in options:
            value = options[key]
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise TypeError(f"{key} must be a list of domains, not {value!r}")
            domains = cast(Iterable[object], value)
            options[key] = [str(d) for d in domains]
    if options.get("allowed_domains") and options.get("blocked_domains"):
        raise ValueError("give allowed_domains or blocked_domains, not both")
    return NativeTool(kind, options, {p: dict(o) for p, o in (overrides or {}).items()})


def web_search(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    user_location: Mapping[str, str] | None = None,
    search_context_size: Literal["low", "medium", "high"] | None = None,
    provider_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    **options: Any,
) -> NativeTool:
    """The provider's web search.

    Args:
        max_uses: Searches allowed in one request, at most.
        allowed_domains: Search only these domains.
        blocked_domains: Never search these domains.
        user_location: Where the user is: `city`, `region`, `country`, `timezone`.
        search_context_size: How much found text goes to the model.
        provider_overrides: Options for one provider only, e.g. `{"openrouter": {"engine": "exa"}}`.
        **options: Passed into the provider's tool payload as given.
    """
    common = {
        "max_uses": max_uses,
        "allowed_domains": allowed_domains,
        "blocked_domains": blocked_domains,
        "user_location": dict(user_location) if user_location is not None else None,
        "search_context_size": search_context_size,
    }
    return _spec("web_search", common, options, provider_overrides)


def web_fetch(
    *,
    max_uses: int | None = None,
    allowed_domains: Sequence[str] | None = None,
    blocked_domains: Sequence[str] | None = None,
    citations: bool | None = None,
    max_content_tokens: int | None = None,
    provider_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    **options: Any,
) -> NativeTool:
    """The provider fetching a URL named in the conversation.

    Args:
        max_uses: Fetches allowed in one request, at most.
        allowed_domains: Fetch only from these domains.
        blocked_domains: Never fetch from these domains.
        citations: Let the model cite the fetched pages.
        max_content_tokens: Tokens of page text kept per fetch, at most.
        provider_overrides: Options for one provider only.
        **options: Passed into the provider's tool payload as given.
    """
    common = {
        "max_uses": max_uses,
        "allowed_domains": allowed_domains,
        "blocked_domains": blocked_domains,
        "citations": citations,
        "max_content_tokens": max_content_tokens,
    }
    return _spec("web_fetch", common, options, provider_overrides)


def code_execution(
    *, provider_overrides: Mapping[str, Mapping[str, Any]] | None = None, **options: Any
) -> NativeTool:
    """A sandbox where the provider runs code the model writes.

    Args:
        provider_overrides: Options for one provider only.
        **options: Passed into the provider's tool payload as given (e.g. OpenAI's `container`).
    """
    return _spec("code_execution", {}, options, provider_overrides)


def computer_use(
    *,
    display_width: int | None = None,
    display_height: int | None = None,
    environment: str | None = None,
    provider_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    **options: Any,
) -> NativeTool:
    """Computer use: the model asks for screen actions that the caller performs.

    The requests come back as `ComputerCall`s (see `toolwire.computer`); toolwire acts on nothing.

    Args:
        display_width: The screen's width in pixels.
        display_height: The screen's height in pixels.
        environment: The kind of computer (`"browser"`, `"mac"`, ...), where the provider asks.
        provider_overrides: Options for one provider only.
        **options: Passed into the provider's tool payload as given.
    """
    common = {
        "display_width": display_width,
        "display_height": display_height,
        "environment": environment,
    }
    return _spec("computer_use", common, options, provider_overrides)


# --- the support matrix -------------------------------------------------------------------------


@dataclass(slots=True)
class NativePayload:
    """What native tools add to one request.

    Attributes:
        tools: Wire tool entries, appended to the function tools as given.
        body: Top-level request fields (merged into `settings.extra`).
        functions: Function tools toolwire runs on the provider's behalf (Ollama's web API).
        tool_choice: The tool choice to send: the caller's, or its wire form when it forces a
            native tool (`resolve_native` fills it).
    """

    tools: list[Any] = field(default_factory=list[Any])
    body: dict[str, Any] = field(default_factory=dict[str, Any])
    functions: list[Any] = field(default_factory=list[Any])
    tool_choice: Any = "auto"


@dataclass(frozen=True, slots=True)
class _Context:
    provider: str
    api: str
    model_name: str
    function_tools: bool
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


_Build: TypeAlias = Callable[[dict[str, Any], dict[str, Any], _Context], NativePayload]


@dataclass(frozen=True, slots=True)
class Cell:
    """One cell of the matrix: how a provider takes a tool, or why it cannot.

    Attributes:
        wire: The provider's name for the tool (the docs show it), or why there is none.
        takes: The common options this provider maps.
        build: Maps (common options, other options, context) to the payload; `None` for "no".
        force: How `tool_choice` can force the tool (only read when `build` is set).
    """

    wire: str
    takes: tuple[str, ...] = ()
    build: _Build | None = None
    force: Force = UNFORCEABLE

    @property
    def supported(self) -> bool:
        return self.build is not None


def _no(reason: str) -> Cell:
    return Cell(reason)


def _location(value: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "approximate", **value}


def _tool(base: dict[str, Any], common: dict[str, Any], extra: dict[str, Any]) -> NativePayload:
    return NativePayload([{**base, **common, **extra}])


def _anthropic_search(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    if "user_location" in c:
        c["user_location"] = _location(c["user_location"])
    return _tool({"type": "web_search_20250305", "name": "web_search"}, c, e)


def _anthropic_fetch(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    if "citations" in c:
        c["citations"] = {"enabled": bool(c["citations"])}
    return _tool({"type": "web_fetch_20250910", "name": "web_fetch"}, c, e)


def _anthropic_code(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    return _tool({"type": "code_execution_20250825", "name": "code_execution"}, c, e)


def _responses_search(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    entry: dict[str, Any] = {"type": "web_search"}
    if "allowed_domains" in c:
        entry["filters"] = {"allowed_domains": c["allowed_domains"]}
    if "user_location" in c:
        entry["user_location"] = _location(c["user_location"])
    if "search_context_size" in c:
        entry["search_context_size"] = c["search_context_size"]
    return NativePayload([{**entry, **e}])


def _responses_code(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    return _tool({"type": "code_interpreter", "container": {"type": "auto"}}, c, e)


def _gemini(key: str) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
        inner: dict[str, Any] = {}
        if "blocked_domains" in c:
            inner["exclude_domains"] = c["blocked_domains"]
        return NativePayload([{key: {**inner, **e}}])

    return build


def _typed(type_: str) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
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


def _anthropic_computer(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
    width, height = _display(c, "Anthropic's computer tool")
    entry = {
        "type": "computer_20250124",
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
    }
    return NativePayload([{**entry, **e}])


_OPENAI_ENVIRONMENTS = ("windows", "mac", "linux", "ubuntu", "browser")


def _responses_computer(preview_only: bool) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
        preview = (
            preview_only
            or e.get("type") == "computer_use_preview"
            or ctx.model_name.startswith("computer-use-preview")
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


def _gemini_computer(c: dict[str, Any], e: dict[str, Any], _: _Context) -> NativePayload:
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


def _groq(kind: str, builtin: str | None) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
        if "compound" in ctx.model_name:
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


def _openrouter(type_: str) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
        parameters = dict(c)
        if "blocked_domains" in parameters:
            parameters["excluded_domains"] = parameters.pop("blocked_domains")
        parameters.update(e)
        return NativePayload([{"type": type_, "parameters": parameters}])

    return build


_OLLAMA_SETTINGS = frozenset({"api_key", "base_url", "timeout", "egress"})


def _ollama(kind: str) -> _Build:
    def build(c: dict[str, Any], e: dict[str, Any], ctx: _Context) -> NativePayload:
        from .prebuilt.ollama_web import ollama_web_fetch_tool, ollama_web_search_tool

        unknown = sorted(set(e) - _OLLAMA_SETTINGS)
        if unknown:
            raise UnsupportedError(
                f"Ollama's {kind} takes no {', '.join(unknown)}; it takes "
                f"{', '.join(sorted(_OLLAMA_SETTINGS))}"
            )
        make = ollama_web_search_tool if kind == "web_search" else ollama_web_fetch_tool
        return NativePayload(functions=[make(**e)])

    return build


_RESPONSES_ROW: dict[str, Cell] = {
    "web_search": Cell(
        "web_search",
        ("allowed_domains", "user_location", "search_context_size"),
        _responses_search,
        RESPONSES_FORCE["web_search"],
    ),
    "web_fetch": _no("no fetch tool: browsing happens inside web_search"),
    "code_execution": Cell(
        "code_interpreter", (), _responses_code, RESPONSES_FORCE["code_execution"]
    ),
    "computer_use": Cell(
        "computer; computer_use_preview on computer-use-preview models",
        ("display_width", "display_height", "environment"),
        _responses_computer(preview_only=False),
        RESPONSES_FORCE["computer_use"],
    ),
}


def _chat_row(prefix: str) -> dict[str, Cell]:
    reason = f"only through the Responses API: use {prefix}"
    return {kind: _no(reason) for kind in NATIVE_KINDS}


_GEMINI_ROW: dict[str, Cell] = {
    "web_search": Cell("google_search", (), _gemini("google_search"), GEMINI_FORCE),
    "web_fetch": Cell("url_context", (), _gemini("url_context"), GEMINI_FORCE),
    "code_execution": Cell("code_execution", (), _gemini("code_execution"), GEMINI_FORCE),
    "computer_use": Cell("computer_use", ("environment",), _gemini_computer, GEMINI_FORCE),
}

_NONE = "no provider-side tools"
SUPPORT: dict[str, dict[str, Cell]] = {
    "OpenAI Responses": _RESPONSES_ROW,
    "OpenAI Chat": _chat_row("openai-responses:<model>"),
    "Azure Responses": {
        **_RESPONSES_ROW,
        "computer_use": Cell(
            "computer_use_preview",
            ("display_width", "display_height", "environment"),
            _responses_computer(preview_only=True),
            RESPONSES_FORCE["computer_use"],
        ),
    },
    "Azure Chat": _chat_row('azure(..., api="responses")'),
    "Anthropic": {
        "web_search": Cell(
            "web_search_20250305",
            ("max_uses", "allowed_domains", "blocked_domains", "user_location"),
            _anthropic_search,
            ANTHROPIC_FORCE,
        ),
        "web_fetch": Cell(
            "web_fetch_20250910",
            ("max_uses", "allowed_domains", "blocked_domains", "citations", "max_content_tokens"),
            _anthropic_fetch,
            ANTHROPIC_FORCE,
        ),
        "code_execution": Cell("code_execution_20250825", (), _anthropic_code, ANTHROPIC_FORCE),
        "computer_use": Cell(
            "computer_20250124 (beta header sent)",
            ("display_width", "display_height"),
            _anthropic_computer,
            ANTHROPIC_FORCE,
        ),
    },
    "Gemini": _GEMINI_ROW,
    "Vertex": {
        **_GEMINI_ROW,
        "web_search": Cell(
            "google_search", ("blocked_domains",), _gemini("google_search"), GEMINI_FORCE
        ),
    },
    "Mistral": {
        "web_search": Cell(
            "web_search (Conversations API)", (), _typed("web_search"), MISTRAL_FORCE
        ),
        "web_fetch": _no("no fetch tool"),
        "code_execution": Cell(
            "code_interpreter (Conversations API)",
            (),
            _typed("code_interpreter"),
            MISTRAL_FORCE,
        ),
        "computer_use": _no("no computer use"),
    },
    "Groq": {
        "web_search": Cell(
            "browser_search; compound: web_search",
            (),
            _groq("web_search", "browser_search"),
            GROQ_FORCE,
        ),
        "web_fetch": Cell(
            "compound models only: visit_website", (), _groq("web_fetch", None), GROQ_FORCE
        ),
        "code_execution": Cell(
            "code_interpreter", (), _groq("code_execution", "code_interpreter"), GROQ_FORCE
        ),
        "computer_use": _no("no computer use"),
    },
    "OpenRouter": {
        "web_search": Cell(
            "openrouter:web_search",
            ("max_uses", "allowed_domains", "blocked_domains", "search_context_size"),
            _openrouter("openrouter:web_search"),
            OPENROUTER_FORCE,
        ),
        "web_fetch": Cell(
            "openrouter:web_fetch",
            ("max_uses", "allowed_domains", "blocked_domains"),
            _openrouter("openrouter:web_fetch"),
            OPENROUTER_FORCE,
        ),
        "code_execution": _no("no code execution"),
        "computer_use": _no("no computer use"),
    },
    "Ollama": {
        "web_search": Cell(
            "function tool over ollama.com/api/web_search",
            (),
            _ollama("web_search"),
            OLLAMA_FORCE,
        ),
        "web_fetch": Cell(
            "function tool over ollama.com/api/web_fetch", (), _ollama("web_fetch"), OLLAMA_FORCE
        ),
        "code_execution": _no("no code execution"),
        "computer_use": _no("no computer use"),
    },
    "DeepSeek": {kind: _no(_NONE) for kind in NATIVE_KINDS},
}
"""The support matrix: adapter label -> tool kind -> `Cell`. docs/native-tools.md is made from it."""

_ROWS: dict[tuple[str, str | None], str] = {
    ("openai", "responses"): "OpenAI Responses",
    ("openai", "chat-completions"): "OpenAI Chat",
    ("azure", "responses"): "Azure Responses",
    ("azure", "chat-completions"): "Azure Chat",
    ("anthropic", None): "Anthropic",
    ("google", None): "Gemini",
    ("vertex", None): "Vertex",
    ("mistral", None): "Mistral",
    ("groq", None): "Groq",
    ("openrouter", None): "OpenRouter",
    ("ollama", None): "Ollama",
    ("deepseek", None): "DeepSeek",
}


def row_label(provider: str, api: str) -> str | None:
    """The matrix row of an adapter, by its provider and wire API; `None` when it has none."""
    return _ROWS.get((provider, api)) or _ROWS.get((provider, None))


def _accepted(row: Mapping[str, Cell]) -> str:
    names = [f"{kind}() as {cell.wire}" for kind, cell in row.items() if cell.supported]
    return ", ".join(names) if names else "no native tools"


def resolve_native(
    tools: Sequence[Any],
    *,
    provider: str,
    api: str,
    model_name: str,
    function_tools: bool,
    tool_choice: Any = "auto",
    function_names: Collection[str] = (),
    options: Mapping[str, Any] | None = None,
) -> NativePayload:
    """Turn native tool specs into one adapter's payload; raw dicts pass through as given.

    A `tool_choice` naming a spec's kind (`"web_search"`, ...), or `"required"` with only native
    tools, is checked against the row's `Force` and turned into the provider's wire choice
    (`NativePayload.tool_choice`); any other choice is kept as given.

    Args:
        function_names: The function tools' names (a choice naming one of them is theirs).
        options: The request body's defaults and `settings.extra` (e.g. Anthropic's `thinking`).

    Raises:
        UnsupportedError: a tool, an option or a forced choice this provider does not take
            (before any request).
    """
    out = NativePayload(tool_choice=tool_choice)
    label = row_label(provider, api)
    ctx = _Context(provider, api, model_name, function_tools, options or {})
    resolved: list[tuple[NativeTool, Cell, NativePayload]] = []
    for tool in tools:
        if not isinstance(tool, NativeTool):
            out.tools.append(tool)
            continue
        if label is None:
            raise UnsupportedError(
                f"{provider} ({api}) has no native tools in toolwire's support matrix, so "
                f"{tool.kind}() cannot be sent; see docs/native-tools.md"
            )
        row = SUPPORT[label]
        cell = row[tool.kind]
        if cell.build is None:
            raise UnsupportedError(
                f"{label} cannot take {tool.kind}() ({cell.wire}); it accepts {_accepted(row)}"
            )
        options_given = tool.options_for(provider)
        common_names = _COMMON[tool.kind]
        common = {k: v for k, v in options_given.items() if k in common_names}
        extra = {k: v for k, v in options_given.items() if k not in common_names}
        refused = [k for k in common if k not in cell.takes]
        if refused:
            takes = ", ".join(cell.takes) if cell.takes else "none of the common options"
            raise UnsupportedError(
                f"{label}'s {tool.kind} takes no {', '.join(refused)}; of the common options "
                f"it takes {takes} (provider-specific options pass through as given)"
            )
        payload = cell.build(common, extra, ctx)
        resolved.append((tool, cell, payload))
        out.tools.extend(payload.tools)
        out.functions.extend(payload.functions)
        for key, value in payload.body.items():
            if key in out.body:
                raise UnsupportedError(f"{label} takes one {key!r}; two native tools set it")
            out.body[key] = value
    if label is not None and resolved:
        out.tool_choice = forced_choice(
            SUPPORT[label], label, tool_choice, resolved, function_names, ctx
        )
    return out


def split_client_run(
    provider: str, api: str, tools: Sequence[NativeTool]
) -> tuple[list[Any], list[Any]]:
    """For a loop: the specs the provider runs, and the function tools toolwire runs for it.

    On Ollama, `web_search()`/`web_fetch()` are function tools the loop must run itself; other
    providers keep every spec (resolved, and refused if need be, at request time).
    """
    if api == "test" or row_label(provider, api) != "Ollama":
        # An offline stand-in (api "test") keeps the specs; it refuses client-run ones itself.
        return list(tools), []
    kept: list[Any] = []
    functions: list[Any] = []
    for spec in tools:
        if spec.kind in ("web_search", "web_fetch"):
            payload = resolve_native(
                [spec], provider=provider, api=api, model_name="", function_tools=True
            )
            functions.extend(payload.functions)
        else:
            kept.append(spec)
    return kept, functions


def support_matrix_markdown() -> str:
    """The support matrix as a Markdown table (the one docs/native-tools.md shows)."""
    head = "| adapter | " + " | ".join(f"`{k}()`" for k in NATIVE_KINDS) + " |"
    lines = [head, "|---" * (len(NATIVE_KINDS) + 1) + "|"]
    for label, row in SUPPORT.items():
        cells: list[str] = []
        for kind in NATIVE_KINDS:
            cell = row[kind]
            if cell.supported:
                takes = f" (options: {', '.join(cell.takes)})" if cell.takes else ""
                cells.append(f"yes: `{cell.wire}`{takes}")
            else:
                cells.append(f"no: {cell.wire}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def forcing_matrix_markdown() -> str:
    """How `tool_choice` forces each native tool, per adapter, as a Markdown table (the one
    docs/native-tools.md shows); made from the `force` of each `SUPPORT` cell."""
    kinds = [k for k in NATIVE_KINDS if any(row[k].supported for row in SUPPORT.values())]
    head = "| adapter | " + " | ".join(f'`tool_choice="{k}"`' for k in kinds)
    lines = [head + ' | `"required"`, native tools only |', "|---" * (len(kinds) + 2) + "|"]
    for label, row in SUPPORT.items():
        cells: list[str] = []
        forces = [row[k].force for k in kinds if row[k].supported]
        for kind in kinds:
            cell = row[kind]
            if not cell.supported:
                cells.append("tool refused")
            elif cell.force.by_name is not None:
                cells.append(f"yes: {cell.force.wire}")
            else:
                cells.append(f"no: {cell.force.wire}")
        if not forces:
            cells.append("no native tools")
        else:
            # One row forces "required" one way (the cells of a row share it).
            force = forces[0]
            answer = "yes" if force.required is not None else "no"
            cells.append(f"{answer}: {force.required_wire}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fee_table_markdown() -> str:
    """`toolwire.usage.TOOL_FEES` as a Markdown table (the one docs/native-tools.md shows)."""
    from .usage import TOOL_FEES

    lines = ["| provider | tool | USD per use | source | as of |", "|---|---|---|---|---|"]
    for (provider, kind), fee in TOOL_FEES.items():
        lines.append(f"| {provider} | {kind} | {fee.per_use} | {fee.source} | {fee.as_of} |")
    return "\n".join(lines) + "\n"
