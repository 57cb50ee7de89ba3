"""Optional extras: find out, before importing, whether one is installed.

Checking first turns a missing extra into one line naming the `pip install` that adds it, where the
import itself would fail deep inside an adapter with a bare `ModuleNotFoundError`.
"""

from __future__ import annotations

import importlib.util

from .errors import MissingDependencyError

__all__ = ["require_extra"]


def require_extra(extra: str, *modules: str, needed_by: str) -> None:
    """Raise `MissingDependencyError` unless every module of `extra` can be imported.

    Args:
        extra: The toolwire extra, e.g. `"openai"` for `toolwire[openai]`.
        *modules: The top-level modules it installs (the extra's own name when none are given).
        needed_by: What needs them, for the message, e.g. `"the openai models"`.
    """
    for module in modules or (extra,):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # `a.b` whose parent `a` is missing too
            found = False
        except ValueError:  # a module whose __spec__ is None (set up by hand): it is there
            found = True
        if not found:
            raise MissingDependencyError(module, extra, needed_by=needed_by)
