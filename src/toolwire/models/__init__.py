"""Models: the `Model` protocol, the offline test models, the wrapper models (fallback, retry,
cache), and `model()` to resolve a name.

Provider adapters live in their own modules and are imported only when asked for, so
`import toolwire` never imports a provider SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._attempts import Attempt
from ..usage import Usage
from ._completion import (
    CallIds,
    Completion,
    CompletionDone,
    FinishReason,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from ._guard import allow_model_requests, check_model_requests_allowed, forbid_model_requests
from ._request import (
    Model,
    ModelRequest,
    ModelSettings,
    OutputSpec,
    PreparedRequest,
    ToolChoice,
)

if TYPE_CHECKING:
    from .base import ModelBase
    from .testing import FunctionModel, ScriptedModel, TestModel
    from .wrappers import (
        TRANSIENT_ERRORS,
        CachedModel,
        CompletionStore,
        FallbackModel,
        MemoryStore,
        RetryModel,
        RetryPolicy,
        WrapperModel,
    )

_LAZY: dict[str, str] = {
    "ModelBase": ".base",
    "FunctionModel": ".testing",
    "ScriptedModel": ".testing",
    "TestModel": ".testing",
    "TRANSIENT_ERRORS": ".wrappers",
    "CachedModel": ".wrappers",
    "CompletionStore": ".wrappers",
    "FallbackModel": ".wrappers",
    "MemoryStore": ".wrappers",
    "RetryModel": ".wrappers",
    "RetryPolicy": ".wrappers",
    "WrapperModel": ".wrappers",
}
"""Imported on first use: a run that needs neither the offline models nor the wrappers (the
loop imports `models.base`, and so this package) does not pay for them. `ModelBase` too: it
builds on `toolwire.output`, which imports the request values from this package."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "PROVIDERS",
    "TRANSIENT_ERRORS",
    "Attempt",
    "CachedModel",
    "CallIds",
    "Completion",
    "CompletionDone",
    "CompletionStore",
    "FallbackModel",
    "FinishReason",
    "FunctionModel",
    "MemoryStore",
    "Model",
    "ModelBase",
    "ModelRequest",
    "ModelSettings",
    "OutputSpec",
    "PreparedRequest",
    "ReasoningDelta",
    "RetryModel",
    "RetryPolicy",
    "ScriptedModel",
    "StreamEvent",
    "TestModel",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "Usage",
    "WrapperModel",
    "allow_model_requests",
    "check_model_requests_allowed",
    "forbid_model_requests",
    "model",
]

PROVIDERS: dict[str, str] = {
    "anthropic": "toolwire.models.providers:anthropic",
    "azure": "toolwire.models.azure:azure",
    "deepseek": "toolwire.models.providers:deepseek",
    "gemini": "toolwire.models.google:gemini",
    "google": "toolwire.models.google:gemini",
    "groq": "toolwire.models.providers:groq",
    "mistral": "toolwire.models.mistral:MistralModel",
    "ollama": "toolwire.models.providers:ollama",
    "openai": "toolwire.models.providers:openai",
    "openai-compatible": "toolwire.models.providers:openai_compatible",
    "openai-responses": "toolwire.models.openai_responses:OpenAIResponsesModel",
    "openrouter": "toolwire.models.providers:openrouter",
    "test": "toolwire.models.testing:TestModel",
    "vertex": "toolwire.models.google:vertex",
}
"""Provider prefix -> `module:factory`; the factory takes the model name and the options."""

_EXTRAS: dict[str, tuple[str, str]] = {
    "anthropic": ("anthropic", "anthropic"),
    "azure": ("openai", "openai"),
    "deepseek": ("openai", "openai"),
    "gemini": ("google", "google.genai"),
    "google": ("google", "google.genai"),
    "groq": ("openai", "openai"),
    "mistral": ("mistral", "mistralai"),
    "ollama": ("openai", "openai"),
    "openai": ("openai", "openai"),
    "openai-compatible": ("openai", "openai"),
    "openai-responses": ("openai", "openai"),
    "openrouter": ("openai", "openai"),
    "vertex": ("google", "google.genai"),
}
"""Provider prefix -> (the toolwire extra, the module it installs), checked before the import."""


def model(spec: str, **options: Any) -> Model:
    """Resolve `"provider:model-name"` (or just `"test"`) to a model.

    Raises:
        ValueError: an unknown provider; the message lists the known ones.
        MissingDependencyError: the provider's extra is not installed (the message names it).
        MissingApiKeyError: the provider needs a key and its variable is unset.
    """
    provider, _, name = spec.partition(":")
    target = PROVIDERS.get(provider)
    if target is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(
            f"Unknown model provider {provider!r} in {spec!r}. Known providers: {known}."
        )
    needs = _EXTRAS.get(provider)
    if needs is not None:
        from .._extras import require_extra

        require_extra(needs[0], needs[1], needed_by=f"the {provider} models")
    module_name, _, attribute = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    if provider == "test":
        return factory(model_name=name or "test", **options)
    if not name:
        raise ValueError(f"{spec!r} names no model; write it as '{provider}:<model-name>'")
    return factory(name, **options)
