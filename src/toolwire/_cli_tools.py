"""The tools named on a `toolwire` command line: `--tools module:attribute` and `--prebuilt`."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._cli_common import CliError
from .tools import Tool, as_tool

__all__ = ["load_tools", "prebuilt_tools"]


def load_tools(specs: Sequence[str]) -> list[Tool]:
    """Tools from `module:attribute` or `path/to/file.py:attribute` specs; the attribute is a
    tool, a function, or a list."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # so `--tools mytools:search` finds ./mytools.py
    found: list[Tool] = []
    for spec in specs:
        module_name, sep, attribute = spec.rpartition(":")
        if not sep or not module_name or not attribute:
            raise CliError(
                f"--tools takes module:attribute or path/to/file.py:attribute, got {spec!r}"
            )
        module = _import_tools(module_name)
        try:
            value = getattr(module, attribute)
        except AttributeError:
            raise CliError(f"module {module_name!r} has no attribute {attribute!r}") from None
        items: list[Any] = list(value) if isinstance(value, list | tuple) else [value]  # pyright: ignore[reportUnknownArgumentType]
        for item in items:
            try:
                found.append(as_tool(item))
            except TypeError as exc:
                raise CliError(f"{spec}: {exc}") from exc
    return found


def _import_tools(where: str) -> Any:
    if not (where.endswith(".py") or "/" in where or os.sep in where):
        try:
            return importlib.import_module(where)
        except ImportError as exc:
            raise CliError(f"cannot import {where!r}: {exc}") from exc
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise CliError(f"no such file: {where}")
    # Loaded under its own name, so the tools' functions show where they came from.
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot load {where!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)
    try:
        spec.loader.exec_module(module)
    except ImportError as exc:
        raise CliError(f"cannot import {where!r}: {exc}") from exc
    return module


def prebuilt_tools() -> list[Tool]:
    """The prebuilt tools whose needs are met here."""
    # Imported here, by the commands that serve or run them: building the 18 tools (schemas,
    # dialect checks) is most of a command's start-up, which `--tools` alone need not pay.
    from .prebuilt import available

    return list(available())
