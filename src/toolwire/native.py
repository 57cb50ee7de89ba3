"""Provider-side ("native") tools: one spec per tool, with no provider knowledge.

`web_search()`, `web_fetch()`, `code_execution()` and `computer_use()` build a `NativeTool`, passed in
`tools=` beside function tools. `ModelRequest.build` sets them apart into `request.native_tools`, and
`ModelBase.prepare` turns each into the payload of the adapter that sends it, through the cell of
that tool in the adapter's profile (`toolwire.models.profiles`). A tool or option a provider does not
take raises `UnsupportedError` there, before any request: a tool is never dropped. Raw provider
dicts in `native_tools` go to the wire as given.

Adding a native tool: a kind in `NativeKind`, its common options in `COMMON_OPTIONS` and its spec
function here, then one cell in each profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, TypeAlias, cast

from ._record import record

__all__ = [
    "COMMON_OPTIONS",
    "NATIVE_KINDS",
    "NativeKind",
    "NativeTool",
    "code_execution",
    "computer_use",
    "web_fetch",
    "web_search",
]

NativeKind: TypeAlias = Literal["web_search", "web_fetch", "code_execution", "computer_use"]
NATIVE_KINDS: tuple[NativeKind, ...] = ("web_search", "web_fetch", "code_execution", "computer_use")

COMMON_OPTIONS: dict[str, tuple[str, ...]] = {
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
"""The options each spec names the toolwire way; a profile's cell maps the ones it takes (any other
option goes into the provider's payload as given)."""


@record(frozen=True)
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
