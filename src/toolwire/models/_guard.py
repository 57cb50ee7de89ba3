"""The request guard: tests forbid real provider requests, offline models keep working."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator
from contextvars import ContextVar

from ..errors import ModelRequestsForbidden

__all__ = ["allow_model_requests", "check_model_requests_allowed", "forbid_model_requests"]

_ALLOWED: ContextVar[bool | None] = ContextVar("toolwire_model_requests_allowed", default=None)
_ENV = "TOOLWIRE_ALLOW_MODEL_REQUESTS"


@contextlib.contextmanager
def forbid_model_requests() -> Generator[None]:
    """Make every real provider request in this context raise `ModelRequestsForbidden`.

    For test suites: the offline test models keep working. The environment variable
    `TOOLWIRE_ALLOW_MODEL_REQUESTS=0` does the same for a whole process.
    """
    token = _ALLOWED.set(False)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


@contextlib.contextmanager
def allow_model_requests() -> Generator[None]:
    """Allow provider requests in this context, whatever the environment says."""
    token = _ALLOWED.set(True)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def check_model_requests_allowed(provider: str) -> None:
    """Called by every adapter before it sends a request.

    Raises:
        ModelRequestsForbidden: requests are forbidden here.
    """
    allowed = _ALLOWED.get()
    if allowed is None:
        allowed = os.environ.get(_ENV, "1").strip().lower() not in ("0", "false", "no", "off")
    if not allowed:
        raise ModelRequestsForbidden(
            f"A request to {provider} was blocked: model requests are forbidden here "
            f"(forbid_model_requests() or {_ENV}=0). Use toolwire's offline test models, "
            "or wrap the code in allow_model_requests()."
        )
