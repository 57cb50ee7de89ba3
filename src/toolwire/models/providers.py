"""Providers: base URLs, API key variables and wire quirks, kept apart from the wire formats
(`openai_chat`, `anthropic`).

Each preset is a factory `preset(model_name, **options)` returning an `OpenAIChatModel`; the options
are those of `OpenAIChatModel` (`api_key`, `base_url`, `timeout`, `max_retries`, `client`,
`profile`, and `openai.AsyncOpenAI` options). Keys are read from the environment here, at the edge,
and a provider never falls back to another provider's key. A model is checked when it is built:
a missing SDK raises `MissingDependencyError` naming the extra to install, and a missing required key
raises `MissingApiKeyError` naming its variable.

| preset              | key variable         | default base URL                 |
|---------------------|----------------------|----------------------------------|
| `openai`            | `OPENAI_API_KEY`     | the SDK's (`OPENAI_BASE_URL`)    |
| `groq`              | `GROQ_API_KEY`       | https://api.groq.com/openai/v1   |
| `deepseek`          | `DEEPSEEK_API_KEY`   | https://api.deepseek.com         |
| `openrouter`        | `OPENROUTER_API_KEY` | https://openrouter.ai/api/v1     |
| `ollama`            | `OLLAMA_API_KEY` (optional) | `OLLAMA_BASE_URL` or http://localhost:11434/v1 |
| `openai-compatible` | none (optional `api_key`)   | `base_url` is required           |
| `anthropic`         | `ANTHROPIC_API_KEY`  | the SDK's (`ANTHROPIC_BASE_URL`) |
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._extras import require_extra
from ..errors import MissingApiKeyError
from ..usage import preload_prices
from .openai_chat import ChatProfile, OpenAIChatModel

if TYPE_CHECKING:
    from .anthropic import AnthropicModel

__all__ = [
    "PRESETS",
    "ProviderPreset",
    "anthropic",
    "chat_model",
    "deepseek",
    "groq",
    "ollama",
    "openai",
    "openai_compatible",
    "openrouter",
]

_NO_KEY = "not-needed"
"""Sent as the bearer token to servers that need none (the SDK refuses to run without one)."""


@dataclass(frozen=True, slots=True)
class ProviderPreset:
    """Where a provider lives and how its server differs from OpenAI's.

    Attributes:
        name: The provider's name, stored on the assistant turns it writes.
        base_url: The API root; `None` leaves the SDK's default (OpenAI).
        key_env: The environment variable holding the API key.
        key_required: Refuse to build a model without a key.
        base_url_env: An environment variable that overrides `base_url`.
        profile: The server's quirks.
    """

    name: str
    base_url: str | None
    key_env: str | None
    key_required: bool
    base_url_env: str | None = None
    profile: ChatProfile = field(default_factory=ChatProfile)


PRESETS: dict[str, ProviderPreset] = {
    "openai": ProviderPreset("openai", None, "OPENAI_API_KEY", True),
    "groq": ProviderPreset(
        "groq",
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        True,
        # Groq's own clients send earlier reasoning back as <think> tags; it reports usage in
        # the last chunk without being asked.
        profile=ChatProfile(reasoning_replay="think_tags", stream_usage=False),
    ),
    "deepseek": ProviderPreset(
        "deepseek",
        "https://api.deepseek.com",
        "DEEPSEEK_API_KEY",
        True,
        # In thinking mode DeepSeek wants `reasoning_content` back on the turns of a tool loop.
        # Its API takes text only: an image part fails the whole request.
        profile=ChatProfile(
            reasoning_replay="field",
            reasoning_field="reasoning_content",
            reasoning_on_every_turn=True,
            max_tokens_field="max_tokens",
            media=False,
            # DeepSeek has JSON mode, not JSON Schema.
            structured_output="json_object",
        ),
    ),
    "openrouter": ProviderPreset(
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        True,
        profile=ChatProfile(
            reasoning_replay="field",
            reasoning_field="reasoning",
            file_urls=True,
            max_tokens_field="max_tokens",
        ),
    ),
    "ollama": ProviderPreset(
        "ollama",
        "http://localhost:11434/v1",
        "OLLAMA_API_KEY",
        False,
        base_url_env="OLLAMA_BASE_URL",
        profile=ChatProfile(
            reasoning_replay="field", reasoning_field="reasoning", max_tokens_field="max_tokens"
        ),
    ),
    "openai-compatible": ProviderPreset(
        "openai-compatible",
        None,
        None,
        False,
        profile=ChatProfile(max_tokens_field="max_tokens"),
    ),
}
"""Every preset by provider name."""


def chat_model(
    provider: str,
    model_name: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    **options: Any,
) -> OpenAIChatModel:
    """A Chat Completions model for one of the `PRESETS`.

    Args:
        provider: A key of `PRESETS`.
        model_name: The model, as the provider names it.
        api_key: Overrides the key from the environment.
        base_url: Overrides the preset's URL.
        **options: Passed to `OpenAIChatModel` (`timeout`, `max_retries`, `client`, `profile`...).

    Raises:
        MissingDependencyError: the `openai` extra is not installed.
        MissingApiKeyError: a required key is neither passed nor in the preset's variable.
        ValueError: an unknown provider, or no base URL for `openai-compatible`.
    """
    preset = PRESETS.get(provider)
    if preset is None:
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(sorted(PRESETS))}")
    if options.get("client") is None:
        require_extra("openai", needed_by=f"the {provider} models")
        if api_key is None and preset.key_env:
            api_key = os.environ.get(preset.key_env) or None
        if api_key is None:
            if preset.key_required and preset.key_env:
                raise MissingApiKeyError(provider, preset.key_env)
            api_key = _NO_KEY
        if base_url is None and preset.base_url_env:
            base_url = os.environ.get(preset.base_url_env) or None
        if base_url is None:
            base_url = preset.base_url
        if base_url is None and provider == "openai-compatible":
            raise ValueError(
                "openai-compatible needs base_url=..., e.g. 'http://localhost:8000/v1'"
            )
    if options.get("profile") is None:  # `profile=None` means the preset's, not no quirks
        options["profile"] = preset.profile
    preload_prices()  # so the first run's cost does not block the event loop
    return OpenAIChatModel(
        model_name, provider=preset.name, api_key=api_key, base_url=base_url, **options
    )


def openai(model_name: str, **options: Any) -> OpenAIChatModel:
    """OpenAI's Chat Completions (`OPENAI_API_KEY`)."""
    return chat_model("openai", model_name, **options)


def groq(model_name: str, **options: Any) -> OpenAIChatModel:
    """Groq (`GROQ_API_KEY`); a refused tool generation raises `ModelStreamError`."""
    return chat_model("groq", model_name, **options)


def deepseek(model_name: str, **options: Any) -> OpenAIChatModel:
    """DeepSeek (`DEEPSEEK_API_KEY`); `reasoning_content` goes back on later turns."""
    return chat_model("deepseek", model_name, **options)


def openrouter(model_name: str, **options: Any) -> OpenAIChatModel:
    """OpenRouter (`OPENROUTER_API_KEY`); `url_citation` annotations become citations."""
    return chat_model("openrouter", model_name, **options)


def ollama(model_name: str, **options: Any) -> OpenAIChatModel:
    """A local Ollama server (`OLLAMA_BASE_URL`, default http://localhost:11434/v1; no key)."""
    return chat_model("ollama", model_name, **options)


def openai_compatible(
    model_name: str, *, base_url: str | None = None, **options: Any
) -> OpenAIChatModel:
    """Any server speaking Chat Completions (vLLM, llama.cpp, LM Studio); `base_url` required."""
    return chat_model("openai-compatible", model_name, base_url=base_url, **options)


def anthropic(model_name: str, *, api_key: str | None = None, **options: Any) -> AnthropicModel:
    """Anthropic's Messages API (`ANTHROPIC_API_KEY`); options as for `AnthropicModel`.

    Raises:
        MissingDependencyError: the `anthropic` extra is not installed.
        MissingApiKeyError: no key passed and `ANTHROPIC_API_KEY` unset.
    """
    from .anthropic import AnthropicModel

    if options.get("client") is None:
        require_extra("anthropic", needed_by="the anthropic models")
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        if api_key is None:
            raise MissingApiKeyError("anthropic", "ANTHROPIC_API_KEY")
    preload_prices()  # so the first run's cost does not block the event loop
    return AnthropicModel(model_name, api_key=api_key, **options)
