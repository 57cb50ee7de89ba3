"""Provider factories: a model of one provider, its key read from the environment at the edge.

Where each provider lives (key variable, base URL, extra, profile) is its entry in
`toolwire.models.profiles.PROVIDERS`; each factory here is `factory(model_name, **options)`
returning an `OpenAIChatModel` (or an `AnthropicModel`), with the options of that class
(`api_key`, `base_url`, `timeout`, `max_retries`, `client`, `profile`, and `openai.AsyncOpenAI`
options). A provider never falls back to another provider's key. A model is checked when it is
built: a missing SDK raises `MissingDependencyError` naming the extra to install, and a missing
required key raises `MissingApiKeyError` naming its variable.

| provider            | key variable         | default base URL                 |
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
from typing import Any

from .._extras import require_extra
from ..errors import MissingApiKeyError
from ..usage import preload_prices
from .anthropic import AnthropicModel
from .openai_chat import OpenAIChatModel
from .profiles import PROVIDERS, ProviderEntry

__all__ = [
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


def chat_model(
    provider: str,
    model_name: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    **options: Any,
) -> OpenAIChatModel:
    """A Chat Completions model of one provider entry (`profiles.PROVIDERS`).

    Args:
        provider: The entry's name (`"groq"`, `"ollama"`, ...).
        model_name: The model, as the provider names it.
        api_key: Overrides the key from the environment.
        base_url: Overrides the entry's URL.
        **options: Passed to `OpenAIChatModel` (`timeout`, `max_retries`, `client`, `profile`...);
            `profile=None` means the entry's profile.

    Raises:
        MissingDependencyError: the `openai` extra is not installed.
        MissingApiKeyError: a required key is neither passed nor in the entry's variable.
        ValueError: an unknown provider, or no base URL for `openai-compatible`.
    """
    entry = PROVIDERS.get(provider)
    if entry is None or not _is_chat(entry):
        known = sorted(n for n, e in PROVIDERS.items() if _is_chat(e))
        raise ValueError(f"unknown provider {provider!r}; known: {', '.join(known)}")
    if options.get("client") is None:
        require_extra("openai", needed_by=f"the {provider} models")
        if api_key is None and entry.key_env:
            api_key = os.environ.get(entry.key_env) or None
        if api_key is None:
            if entry.key_required and entry.key_env:
                raise MissingApiKeyError(provider, entry.key_env)
            api_key = _NO_KEY
        if base_url is None and entry.base_url_env:
            base_url = os.environ.get(entry.base_url_env) or None
        if base_url is None:
            base_url = entry.base_url
        if base_url is None and provider == "openai-compatible":
            raise ValueError(
                "openai-compatible needs base_url=..., e.g. 'http://localhost:8000/v1'"
            )
    if options.get("profile") is None:  # `profile=None` means the entry's
        options["profile"] = entry.profile
    preload_prices()  # so the first run's cost does not block the event loop
    return OpenAIChatModel(
        model_name, provider=entry.profile.provider, api_key=api_key, base_url=base_url, **options
    )


def _is_chat(entry: ProviderEntry) -> bool:
    return entry.factory.startswith(__name__ + ":") and entry.profile.api == "chat-completions"


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
    variable = PROVIDERS["anthropic"].key_env or "ANTHROPIC_API_KEY"
    if options.get("client") is None:
        require_extra("anthropic", needed_by="the anthropic models")
        api_key = api_key or os.environ.get(variable) or None
        if api_key is None:
            raise MissingApiKeyError("anthropic", variable)
    preload_prices()  # so the first run's cost does not block the event loop
    return AnthropicModel(model_name, api_key=api_key, **options)
