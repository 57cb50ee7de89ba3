"""Models: the `Model` protocol, the offline test models, the wrapper models (fallback, retry,
cache), and `model()` to resolve a name.

Provider adapters live in their own modules and are imported only when asked for, so
`import toolwire` never imports a provider SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._extras import require_extra
from .profiles import PROVIDERS, ModelProfile

if TYPE_CHECKING:
    from .._attempts import Attempt
    from ..usage import Usage
    from ._cache import CachePolicy
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
    "Attempt": "toolwire._attempts",
    "CachePolicy": "._cache",
    "CallIds": "._completion",
    "Completion": "._completion",
    "CompletionDone": "._completion",
    "FinishReason": "._completion",
    "Model": "._request",
    "ModelBase": ".base",
    "ModelRequest": "._request",
    "ModelSettings": "._request",
    "OutputSpec": "._request",
    "PreparedRequest": "._request",
    "ReasoningDelta": "._completion",
    "StreamEvent": "._completion",
    "TextDelta": "._completion",
    "ToolCall": "._completion",
    "ToolCallDelta": "._completion",
    "ToolChoice": "._request",
    "Usage": "toolwire.usage",
    "allow_model_requests": "._guard",
    "check_model_requests_allowed": "._guard",
    "forbid_model_requests": "._guard",
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
"""Imported on first use: a run that needs neither the offline models nor the wrappers does not pay
for them, and the low modules that read the profiles (`toolwire.usage` reads the fees) import this
package without importing `models.base`, which imports them."""


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
    "CachePolicy",
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
    "ModelProfile",
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


def model(spec: str, **options: Any) -> Model:
    """Resolve `"provider:model-name"` (or just `"test"`) to a model.

    Raises:
        ValueError: an unknown provider; the message lists the known ones.
        MissingDependencyError: the provider's extra is not installed (the message names it).
        MissingApiKeyError: the provider needs a key and its variable is unset.
    """
    provider, _, name = spec.partition(":")
    entry = PROVIDERS.get(provider)
    if entry is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ValueError(
            f"Unknown model provider {provider!r} in {spec!r}. Known providers: {known}."
        )
    if entry.extra is not None:
        require_extra(entry.extra[0], entry.extra[1], needed_by=f"the {provider} models")
    module_name, _, attribute = entry.factory.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    if provider == "test":
        return factory(model_name=name or "test", **options)
    if not name:
        raise ValueError(f"{spec!r} names no model; write it as '{provider}:<model-name>'")
    return factory(name, **options)
