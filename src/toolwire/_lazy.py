"""A package's public names that live in its submodules, each imported on first access (PEP 562).

Used by the package `__init__` modules whose import must stay light: `toolwire` itself, `mcp`,
`prebuilt`, `durable` and `ui`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    namespace: MutableMapping[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of the package whose `globals()` is `namespace`.

    `homes` maps each public name to the module that defines it, relative to the package
    (`".tools"`). A name is imported on first access and kept in the package's namespace, so
    later lookups do not come back here.
    """
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__
