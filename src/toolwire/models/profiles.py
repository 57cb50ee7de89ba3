"""Provider profiles: what each adapter's provider takes and refuses, in one frozen value each.

A `ModelProfile` holds everything that differs between providers beyond the wire format: the wire
API, one native-tool `Cell` per `NativeKind` (with how `tool_choice` forces it), structured output,
strict schemas, thinking rules, per-use tool fees, call-id shape, model-name families and, for
servers speaking Chat Completions, their `ChatQuirks`. Every adapter has a `profile`; adapters that
serve several providers (Chat Completions: OpenAI, Groq, DeepSeek, OpenRouter, Ollama, Azure and
any compatible server) pick the provider's own.

Built from these and nothing else: the support matrix and the forcing table in
docs/native-tools.md (`_matrix.support_matrix_markdown`, `forcing_matrix_markdown`), the per-use
fees (`TOOL_FEES`), and the provider entries `model("provider:name")` resolves (`PROVIDERS`).

A kind a profile has no cell for is a documented "no": `ModelProfile.cell` answers a `Cell`
without a builder, and resolving it raises `UnsupportedError` with the reason, never `KeyError`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Literal

from .._record import record
from ..native import NATIVE_KINDS
from ._parts import (
    ANTHROPIC_FORCE,
    GEMINI_FORCE,
    GROQ_FORCE,
    MISTRAL_FORCE,
    OLLAMA_FORCE,
    OPENROUTER_FORCE,
    RESPONSES_FORCE,
    Cell,
    ChatQuirks,
    Thinking,
    ToolFee,
    anthropic_code,
    anthropic_computer,
    anthropic_fetch,
    anthropic_search,
    gemini,
    gemini_computer,
    groq,
    no,
    ollama,
    openrouter,
    responses_code,
    responses_computer,
    responses_search,
    typed,
)
from ._search_cells import ANTHROPIC_SEARCH, LOCAL_SEARCH, RESPONSES_SEARCH

__all__ = [
    "ANTHROPIC",
    "AZURE_CHAT",
    "AZURE_RESPONSES",
    "CUSTOM",
    "DEEPSEEK",
    "GEMINI",
    "GEMINI_NO_EXCLUDE_DOMAINS",
    "GROQ",
    "MISTRAL",
    "OLLAMA",
    "OPENAI_CHAT",
    "OPENAI_COMPATIBLE",
    "OPENAI_RESPONSES",
    "OPENROUTER",
    "PROFILES",
    "PROVIDERS",
    "TEST",
    "TOOL_FEES",
    "VERTEX",
    "ChatQuirks",
    "ModelProfile",
    "ProviderEntry",
    "Thinking",
    "ToolFee",
    "common_profile",
    "profile_for",
    "profile_of",
    "stand_in_profile",
]


StructuredOutput = Literal["json_schema", "json_object", "none"]


@record(frozen=True, kw_only=True)
class ModelProfile:
    """One provider as one adapter speaks to it.

    Attributes:
        name: The row's name in the docs tables (e.g. `"OpenAI Responses"`).
        provider: The provider's name, as stored on turns and used for prices.
        api: The wire API (the adapter's `api`).
        native: One `Cell` per native kind; a kind left out is a "no" (`cell()`).
        structured_output: How a native structured answer is asked for: `"json_schema"` (the
            provider's schema-constrained output), `"json_object"` (JSON mode, the schema in the
            instructions) or `"none"` (use tool or prompted mode).
        output_with_native_tools: Native tools and a structured answer share one request.
        strict: Function tools go out in the provider's strict mode (`strict: true`, the
            `openai-strict` schema) when their schema allows.
        thinking: Extended thinking's switch and what it refuses.
        fees: Per-use fees of its native tools by kind; a use without one makes the cost unknown.
        call_id_prefix: The prefix of call ids the adapter makes up when the provider sends none.
        call_id_max: The longest call id the provider takes back (longer ones are shortened).
        families: Model-name families that behave differently, by a pattern searched in the
            model's name (e.g. Groq's compound models).
        chat: Chat Completions quirks (only `OpenAIChatModel` reads them).
        tool_search: How the provider searches deferred tools itself (`toolwire.tool_search`);
            a "no" means toolwire's local search tool stands in.
        strict_models: A pattern searched in the model's name: only those models take strict
            tools (`None`: every model, when `strict`).
        native_api: The provider's other wire API that a request with native tool specs goes
            through (OpenAI's and Azure's Chat Completions: `"responses"`); the cells are then
            that API's, and the adapter routes such a request there by itself.
    """

    name: str
    provider: str
    api: str
    native: Mapping[str, Cell] = field(default_factory=dict[str, Cell])
    structured_output: StructuredOutput = "none"
    output_with_native_tools: bool = False
    strict: bool = False
    thinking: Thinking = field(default_factory=Thinking)
    fees: Mapping[str, ToolFee] = field(default_factory=dict[str, ToolFee])
    call_id_prefix: str = "call"
    call_id_max: int | None = None
    families: Mapping[str, str] = field(default_factory=dict[str, str])
    chat: ChatQuirks = field(default_factory=ChatQuirks)
    tool_search: Cell = LOCAL_SEARCH
    native_api: str | None = None
    strict_models: str | None = None

    def __post_init__(self) -> None:
        # Frozen all the way down: a profile is shared by every model of its provider.
        for name in ("native", "fees", "families"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def native_output(self) -> bool:
        """The provider has a structured output of its own (`mode="native"` works)."""
        return self.structured_output != "none"

    def cell(self, kind: str) -> Cell:
        """The cell of `kind`; a kind without one is a documented "no"."""
        found = self.native.get(kind)
        if found is not None:
            return found
        if kind in NATIVE_KINDS:
            return no(f"no {kind} tool in toolwire's {self.name} profile")
        return no(f"{kind!r} is not a native tool toolwire knows")

    def check_forcing(self, choice: object, body: Mapping[str, Any]) -> None:
        """Refuse a `tool_choice` forcing a tool (`"required"` or a tool's name) where this
        profile's thinking rule refuses it, before any request.

        Raises:
            UnsupportedError: thinking is on in `body` and the provider refuses forced tool use.
        """
        if isinstance(choice, str) and choice not in ("auto", "none"):
            self.thinking.check_forced(body, self.name)

    def strict_for(self, model_name: str) -> bool:
        """Whether `model_name` takes tools in the provider's strict mode."""
        pattern = self.strict_models
        return self.strict and (pattern is None or re.search(pattern, model_name) is not None)

    def family(self, model_name: str) -> str | None:
        """The family of `model_name` among `families`, if any."""
        for name, pattern in self.families.items():
            if re.search(pattern, model_name):
                return name
        return None

    def accepted(self) -> str:
        """The native tools it takes, for error messages."""
        names = [f"{k}() as {self.cell(k).wire}" for k in NATIVE_KINDS if self.cell(k).supported]
        return ", ".join(names) if names else "no native tools"


def _none(reason: str) -> dict[str, Cell]:
    return {kind: no(reason) for kind in NATIVE_KINDS}


_AS_OF = "2026-11-30"
_CHAT_ID_MAX = 40
"""OpenAI's Chat Completions refuses longer call ids; its copies are held to the same."""

# --- OpenAI and Azure ---------------------------------------------------------------------------

_RESPONSES_CELLS: dict[str, Cell] = {
    "web_search": Cell(
        "web_search",
        ("allowed_domains", "user_location", "search_context_size"),
        responses_search,
        RESPONSES_FORCE["web_search"],
    ),
    "web_fetch": no("no fetch tool: browsing happens inside web_search"),
    "code_execution": Cell(
        "code_interpreter", (), responses_code, RESPONSES_FORCE["code_execution"]
    ),
    "computer_use": Cell(
        "computer; computer_use_preview on computer-use-preview models",
        ("display_width", "display_height", "environment"),
        responses_computer(preview_only=False),
        RESPONSES_FORCE["computer_use"],
    ),
}


def _through_responses(responses: ModelProfile) -> dict[str, Cell]:
    """The Responses API's cells for a Chat Completions profile whose adapter sends a request
    with native tools through the Responses API (the matrix says so in each cell)."""
    return {
        kind: dataclasses.replace(cell, wire=f"{cell.wire} (through the Responses API)")
        if cell.supported
        else cell
        for kind, cell in responses.native.items()
    }


OPENAI_RESPONSES = ModelProfile(
    name="OpenAI Responses",
    provider="openai",
    api="responses",
    native=_RESPONSES_CELLS,
    structured_output="json_schema",
    strict=True,
    fees={
        "web_search": ToolFee(
            Decimal("0.01"), "OpenAI pricing: web search tool calls, $10 per 1,000", _AS_OF
        ),
        "code_execution": ToolFee(
            Decimal("0.03"),
            "OpenAI pricing: code interpreter, $0.03 per 1 GB container session (counted per call)",
            _AS_OF,
        ),
    },
    families={"computer-use-preview": r"^computer-use-preview"},
    tool_search=RESPONSES_SEARCH,
)
OPENAI_CHAT = ModelProfile(
    name="OpenAI Chat",
    provider="openai",
    api="chat-completions",
    native=_through_responses(OPENAI_RESPONSES),
    structured_output="json_schema",
    strict=True,
    call_id_max=_CHAT_ID_MAX,
    families=OPENAI_RESPONSES.families,
    native_api="responses",
)
AZURE_RESPONSES = ModelProfile(
    name="Azure Responses",
    provider="azure",
    api="responses",
    native={
        **_RESPONSES_CELLS,
        "computer_use": Cell(
            "computer_use_preview",
            ("display_width", "display_height", "environment"),
            responses_computer(preview_only=True),
            RESPONSES_FORCE["computer_use"],
        ),
    },
    structured_output="json_schema",
    strict=True,
    tool_search=RESPONSES_SEARCH,
)
AZURE_CHAT = ModelProfile(
    name="Azure Chat",
    provider="azure",
    api="chat-completions",
    native=_through_responses(AZURE_RESPONSES),
    structured_output="json_schema",
    strict=True,
    call_id_max=_CHAT_ID_MAX,
    chat=ChatQuirks(content_filter_error=True),
    native_api="responses",
)

# --- Anthropic, Google, Mistral -------------------------------------------------------------------

ANTHROPIC = ModelProfile(
    name="Anthropic",
    provider="anthropic",
    api="messages",
    native={
        "web_search": Cell(
            "web_search_20250305",
            ("max_uses", "allowed_domains", "blocked_domains", "user_location"),
            anthropic_search,
            ANTHROPIC_FORCE,
        ),
        "web_fetch": Cell(
            "web_fetch_20250910",
            ("max_uses", "allowed_domains", "blocked_domains", "citations", "max_content_tokens"),
            anthropic_fetch,
            ANTHROPIC_FORCE,
        ),
        "code_execution": Cell("code_execution_20250825", (), anthropic_code, ANTHROPIC_FORCE),
        "computer_use": Cell(
            "computer_20250124 (beta header sent)",
            ("display_width", "display_height"),
            anthropic_computer,
            ANTHROPIC_FORCE,
        ),
    },
    structured_output="json_schema",
    # Strict tool use (`strict: true`, generally available without a beta header) on the models
    # with structured outputs: Claude Opus 4.5/4.6, Sonnet 4.5/4.6, Haiku 4.5 and later
    # (platform.claude.com/docs/en/build-with-claude/structured-outputs, read 2026-12-01).
    strict=True,
    strict_models=r"claude-(?:opus|sonnet|haiku)-(?:4-[5-9]|[5-9])(?:$|[^0-9])",
    # Anthropic refuses tool_choice "any" or "tool" while extended thinking is on.
    thinking=Thinking(forced_tool=False),
    fees={
        "web_search": ToolFee(
            Decimal("0.01"), "Anthropic pricing: web search, $10 per 1,000 searches", _AS_OF
        ),
        "web_fetch": ToolFee(
            Decimal(0), "Anthropic pricing: web fetch has no fee beyond tokens", _AS_OF
        ),
        "code_execution": ToolFee(
            Decimal(0),
            "Anthropic pricing: billed per container-hour after 1,550 free hours a month, "
            "not per use",
            _AS_OF,
        ),
    },
    call_id_prefix="toolu",
    tool_search=ANTHROPIC_SEARCH,
)

GEMINI_NO_EXCLUDE_DOMAINS = (
    "the Gemini API rejects googleSearch.excludeDomains (400 INVALID_ARGUMENT, 'Unknown name "
    '"excludeDomains"\'; the google-genai SDK refuses it outside Vertex AI), reported in '
    "https://github.com/google-gemini/cookbook/issues/1389; Vertex takes it"
)
"""Why the Gemini API's `web_search()` refuses `blocked_domains` (Vertex maps it)."""

_GEMINI_CELLS: dict[str, Cell] = {
    "web_search": Cell(
        "google_search",
        (),
        gemini("google_search"),
        GEMINI_FORCE,
        why_not=(("blocked_domains", GEMINI_NO_EXCLUDE_DOMAINS),),
    ),
    "web_fetch": Cell("url_context", (), gemini("url_context"), GEMINI_FORCE),
    "code_execution": Cell("code_execution", (), gemini("code_execution"), GEMINI_FORCE),
    "computer_use": Cell("computer_use", ("environment",), gemini_computer, GEMINI_FORCE),
}
GEMINI = ModelProfile(
    name="Gemini",
    provider="google",
    api="generate-content",
    native=_GEMINI_CELLS,
    structured_output="json_schema",
    output_with_native_tools=True,
    fees={
        "web_search": ToolFee(
            Decimal("0.014"),
            "Gemini API pricing: Google Search grounding (Gemini 3), $14 per 1,000 queries "
            "after the free monthly allowance",
            _AS_OF,
        ),
        "code_execution": ToolFee(
            Decimal(0), "Gemini API pricing: code execution has no fee beyond tokens", _AS_OF
        ),
    },
)
VERTEX = ModelProfile(
    name="Vertex",
    provider="vertex",
    api="generate-content",
    native={
        **_GEMINI_CELLS,
        "web_search": Cell(
            "google_search", ("blocked_domains",), gemini("google_search"), GEMINI_FORCE
        ),
    },
    structured_output="json_schema",
    output_with_native_tools=True,
    fees={
        "web_search": ToolFee(
            Decimal("0.014"),
            "Vertex AI pricing: Grounding with Google Search (Gemini 3), $14 per 1,000 queries",
            _AS_OF,
        ),
        "code_execution": ToolFee(
            Decimal(0), "Vertex AI pricing: code execution has no fee beyond tokens", _AS_OF
        ),
    },
)
MISTRAL = ModelProfile(
    name="Mistral",
    provider="mistral",
    api="mistral-chat",
    native={
        "web_search": Cell(
            "web_search (Conversations API)", (), typed("web_search"), MISTRAL_FORCE
        ),
        "web_fetch": no("no fetch tool"),
        "code_execution": Cell(
            "code_interpreter (Conversations API)",
            (),
            typed("code_interpreter"),
            MISTRAL_FORCE,
        ),
        "computer_use": no("no computer use"),
    },
    structured_output="json_schema",
    strict=True,
)

# --- servers that copy Chat Completions ---------------------------------------------------------

GROQ = ModelProfile(
    name="Groq",
    provider="groq",
    api="chat-completions",
    call_id_max=_CHAT_ID_MAX,
    native={
        "web_search": Cell(
            "browser_search; compound: web_search",
            (),
            groq("web_search", "browser_search"),
            GROQ_FORCE,
        ),
        "web_fetch": Cell(
            "compound models only: visit_website", (), groq("web_fetch", None), GROQ_FORCE
        ),
        "code_execution": Cell(
            "code_interpreter", (), groq("code_execution", "code_interpreter"), GROQ_FORCE
        ),
        "computer_use": no("no computer use"),
    },
    structured_output="json_schema",
    strict=True,
    families={"compound": r"compound"},
    # Groq's own clients send earlier reasoning back as <think> tags; it reports usage in the
    # last chunk without being asked.
    chat=ChatQuirks(reasoning_replay="think_tags", stream_usage=False),
)
OPENROUTER = ModelProfile(
    name="OpenRouter",
    provider="openrouter",
    api="chat-completions",
    call_id_max=_CHAT_ID_MAX,
    native={
        "web_search": Cell(
            "openrouter:web_search",
            ("max_uses", "allowed_domains", "blocked_domains", "search_context_size"),
            openrouter("openrouter:web_search"),
            OPENROUTER_FORCE,
        ),
        "web_fetch": Cell(
            "openrouter:web_fetch",
            ("max_uses", "allowed_domains", "blocked_domains"),
            openrouter("openrouter:web_fetch"),
            OPENROUTER_FORCE,
        ),
        "code_execution": no("no code execution"),
        "computer_use": no("no computer use"),
    },
    structured_output="json_schema",
    strict=True,
    fees={
        "web_fetch": ToolFee(
            Decimal("0.001"), "OpenRouter: web fetch (Exa/Parallel), $0.001 per page", _AS_OF
        ),
    },
    chat=ChatQuirks(
        reasoning_replay="field",
        reasoning_field="reasoning",
        file_urls=True,
        max_tokens_field="max_tokens",
    ),
)
OLLAMA = ModelProfile(
    name="Ollama",
    provider="ollama",
    api="chat-completions",
    call_id_max=_CHAT_ID_MAX,
    native={
        "web_search": Cell(
            "function tool over ollama.com/api/web_search",
            (),
            ollama("web_search"),
            OLLAMA_FORCE,
            client_run=True,
        ),
        "web_fetch": Cell(
            "function tool over ollama.com/api/web_fetch",
            (),
            ollama("web_fetch"),
            OLLAMA_FORCE,
            client_run=True,
        ),
        "code_execution": no("no code execution"),
        "computer_use": no("no computer use"),
    },
    structured_output="json_schema",
    strict=True,
    chat=ChatQuirks(
        reasoning_replay="field", reasoning_field="reasoning", max_tokens_field="max_tokens"
    ),
)
DEEPSEEK = ModelProfile(
    name="DeepSeek",
    provider="deepseek",
    api="chat-completions",
    call_id_max=_CHAT_ID_MAX,
    native=_none("no provider-side tools"),
    # DeepSeek has JSON mode, not JSON Schema.
    structured_output="json_object",
    strict=True,
    # In thinking mode DeepSeek wants `reasoning_content` back on the turns of a tool loop. Its
    # API takes text only: an image part fails the whole request.
    chat=ChatQuirks(
        reasoning_replay="field",
        reasoning_field="reasoning_content",
        reasoning_on_every_turn=True,
        max_tokens_field="max_tokens",
        media=False,
    ),
)
OPENAI_COMPATIBLE = ModelProfile(
    name="OpenAI-compatible",
    provider="openai-compatible",
    api="chat-completions",
    call_id_max=_CHAT_ID_MAX,
    native=_none("no provider-side tools known"),
    structured_output="json_schema",
    strict=True,
    chat=ChatQuirks(max_tokens_field="max_tokens"),
)

PROFILES: tuple[ModelProfile, ...] = (
    OPENAI_RESPONSES,
    OPENAI_CHAT,
    AZURE_RESPONSES,
    AZURE_CHAT,
    ANTHROPIC,
    GEMINI,
    VERTEX,
    MISTRAL,
    GROQ,
    OPENROUTER,
    OLLAMA,
    DEEPSEEK,
    OPENAI_COMPATIBLE,
)
"""Every provider profile, in the order of the docs tables."""

CUSTOM = ModelProfile(name="custom", provider="custom", api="custom")
"""A model without a profile of its own: no native tools, no native structured output."""

TEST = ModelProfile(
    name="test", provider="test", api="test", structured_output="json_schema", strict=True
)
"""The offline models' own profile (`provider="test"`): `request.output` reaches the script."""


_BY_API = {(p.provider, p.api): p for p in PROFILES}


def profile_for(provider: str, api: str) -> ModelProfile:
    """The profile of `provider` over the wire API `api`, for adapters serving several providers.

    A provider without one (a server toolwire does not know) gets a plain profile under its own
    name: no native tools, the wire API's structured output.
    """
    found = _BY_API.get((provider, api))
    if found is not None:
        return found
    return ModelProfile(
        name=provider,
        provider=provider,
        api=api,
        native=_none(f"no provider-side tools known for {provider!r}"),
        structured_output="json_schema",
        strict=True,
        call_id_max=_CHAT_ID_MAX if api == "chat-completions" else None,
    )


def stand_in_profile(provider: str) -> ModelProfile:
    """The profile an offline model standing in for `provider` follows, so it accepts and
    refuses what the real adapter does, cell by cell.

    `provider` is a prefix of `model()` (`"openai"`, `"openai-responses"`, `"azure"`,
    `"gemini"`, ...: that entry's profile) or a profile's provider name (`"google"`, `"vertex"`:
    its profile that takes the most native tools); `"test"` is `TEST`. A tool toolwire runs
    itself for the provider (Ollama's web API) is accepted as a tool the script answers, like
    any provider-run tool: an offline model never reaches the network.
    """
    if provider == "test":
        return TEST
    entry = PROVIDERS.get(provider)
    if entry is not None and entry.profile.name != TEST.name:
        best = entry.profile
    else:
        rows = [p for p in PROFILES if p.provider == provider]
        if not rows:
            return profile_for(provider, "chat-completions")
        best = max(rows, key=lambda p: sum(p.cell(k).supported for k in NATIVE_KINDS))
    cells = {kind: dataclasses.replace(best.cell(kind), client_run=False) for kind in NATIVE_KINDS}
    return dataclasses.replace(best, native=cells)


def common_profile(profiles: Sequence[ModelProfile]) -> ModelProfile:
    """The first profile, its structured output narrowed to what every one of them takes (for a
    wrapper over several models that may answer, e.g. a fallback)."""
    first = profiles[0] if profiles else CUSTOM
    if len(profiles) <= 1:
        return first
    outputs = {p.structured_output for p in profiles}
    structured: StructuredOutput = (
        "none"
        if "none" in outputs
        else "json_object"
        if "json_object" in outputs
        else "json_schema"
    )
    return dataclasses.replace(
        first,
        structured_output=structured,
        output_with_native_tools=all(p.output_with_native_tools for p in profiles),
        # A native search payload would reach a provider that cannot read it on a fallback.
        tool_search=first.tool_search
        if all(p.tool_search == first.tool_search for p in profiles)
        else LOCAL_SEARCH,
    )


def profile_of(model: object) -> ModelProfile:
    """The profile of `model`; a `Model` without one (a custom implementation) gets `CUSTOM`."""
    found = getattr(model, "profile", None)
    return found if isinstance(found, ModelProfile) else CUSTOM


def _fees() -> dict[tuple[str, str], ToolFee]:
    table: dict[tuple[str, str], ToolFee] = {}
    for profile in PROFILES:
        for kind, fee in profile.fees.items():
            table[(profile.provider, kind)] = fee
    return table


TOOL_FEES: dict[tuple[str, str], ToolFee] = _fees()
"""Per-use fees of provider-side tools by (provider, tool kind), built from the profiles' `fees`.

`toolwire.usage.estimate_cost` adds them to the token price; a tool use whose (provider, kind) has
no entry makes the cost unknown, with the reason, rather than silently free. Add or replace entries
for prices of your own (a contract, a provider toolwire does not price).
"""


# --- provider entries ------------------------------------------------------------------------


@record(frozen=True, kw_only=True)
class ProviderEntry:
    """A provider prefix of `model("provider:model-name")`: where it lives and what it needs.

    Attributes:
        name: The prefix.
        factory: `module:attribute` of the factory taking the model name and the options.
        profile: The profile the factory's models have.
        extra: The toolwire extra to install, and the module it brings (checked before the
            factory is imported); `None` for none.
        key_env: The environment variable holding the API key.
        key_required: Building a model without a key raises `MissingApiKeyError`.
        base_url: The API root; `None` leaves the SDK's default.
        base_url_env: An environment variable that overrides `base_url`.
    """

    name: str
    factory: str
    profile: ModelProfile
    extra: tuple[str, str] | None = None
    key_env: str | None = None
    key_required: bool = True
    base_url: str | None = None
    base_url_env: str | None = None


_OPENAI = ("openai", "openai")
_GOOGLE = ("google", "google.genai")
_HERE = "toolwire.models.providers:"


def _entry(
    name: str, factory: str, profile: ModelProfile, extra: tuple[str, str] | None, **more: Any
) -> ProviderEntry:
    return ProviderEntry(name=name, factory=factory, profile=profile, extra=extra, **more)


PROVIDERS: dict[str, ProviderEntry] = {
    entry.name: entry
    for entry in (
        _entry(
            "anthropic",
            _HERE + "anthropic",
            ANTHROPIC,
            ("anthropic", "anthropic"),
            key_env="ANTHROPIC_API_KEY",
        ),
        _entry(
            "azure",
            "toolwire.models.azure:azure",
            AZURE_CHAT,
            _OPENAI,
            key_env="AZURE_OPENAI_API_KEY",
            base_url_env="AZURE_OPENAI_ENDPOINT",
        ),
        _entry(
            "deepseek",
            _HERE + "deepseek",
            DEEPSEEK,
            _OPENAI,
            key_env="DEEPSEEK_API_KEY",
            base_url="https://api.deepseek.com",
        ),
        _entry(
            "gemini", "toolwire.models.google:gemini", GEMINI, _GOOGLE, key_env="GEMINI_API_KEY"
        ),
        _entry(
            "google", "toolwire.models.google:gemini", GEMINI, _GOOGLE, key_env="GEMINI_API_KEY"
        ),
        _entry(
            "groq",
            _HERE + "groq",
            GROQ,
            _OPENAI,
            key_env="GROQ_API_KEY",
            base_url="https://api.groq.com/openai/v1",
        ),
        _entry(
            "mistral",
            "toolwire.models.mistral:MistralModel",
            MISTRAL,
            ("mistral", "mistralai"),
            key_env="MISTRAL_API_KEY",
        ),
        _entry(
            "ollama",
            _HERE + "ollama",
            OLLAMA,
            _OPENAI,
            key_env="OLLAMA_API_KEY",
            key_required=False,
            base_url="http://localhost:11434/v1",
            base_url_env="OLLAMA_BASE_URL",
        ),
        _entry("openai", _HERE + "openai", OPENAI_CHAT, _OPENAI, key_env="OPENAI_API_KEY"),
        _entry(
            "openai-compatible",
            _HERE + "openai_compatible",
            OPENAI_COMPATIBLE,
            _OPENAI,
            key_required=False,
        ),
        _entry(
            "openai-responses",
            "toolwire.models.openai_responses:OpenAIResponsesModel",
            OPENAI_RESPONSES,
            _OPENAI,
            key_env="OPENAI_API_KEY",
        ),
        _entry(
            "openrouter",
            _HERE + "openrouter",
            OPENROUTER,
            _OPENAI,
            key_env="OPENROUTER_API_KEY",
            base_url="https://openrouter.ai/api/v1",
        ),
        _entry("test", "toolwire.models.testing:TestModel", TEST, None, key_required=False),
        _entry("vertex", "toolwire.models.google:vertex", VERTEX, _GOOGLE, key_required=False),
    )
}
"""Every provider prefix `model()` resolves, by name."""
