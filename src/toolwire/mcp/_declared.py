"""A function behind a served prompt or resource template: its arguments, checks and call.

MCP gives prompt and template arguments as strings; the function's type hints say what they
become (`id: int` accepts `"123"`), as a tool's arguments are checked, and a parameter
annotated `ToolContext` gets the call's context (the client included), never an argument.
Completion suggestions for an argument are a list (filtered by what was typed) or a function.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

import anyio.to_thread
import pydantic

from .._schema import inspect_function, problems_from_validation_error
from ..errors import ToolArgumentsError
from ..tools import ToolContext

__all__ = ["MAX_COMPLETIONS", "Completer", "Declared", "complete_values"]

Completer: TypeAlias = "Sequence[str] | Callable[[str], Sequence[str] | Awaitable[Sequence[str]]]"
"""Suggestions for one argument: the possible values (those starting with what the user typed
are offered), or a function from the typed prefix to suggestions (sync or async)."""

MAX_COMPLETIONS = 100
"""The most values one completion answer carries (MCP's limit)."""


class Declared:
    """A function's arguments as MCP lists them, and a checked call of it."""

    def __init__(self, fn: Callable[..., Any], what: str) -> None:
        signature = inspect_function(fn, ToolContext)
        if signature.positional:
            raise TypeError(f"{what}: positional-only parameters are not supported")
        self.fn = fn
        self.what = what
        self.description = signature.description
        self.schema = signature.parameters
        self._adapter = signature.validator
        self._context_param = signature.context_param
        self._is_async = signature.is_async
        properties: dict[str, Any] = self.schema.get("properties", {})
        required = set(self.schema.get("required", []))
        self.arguments: list[dict[str, Any]] = []
        for name, spec in properties.items():
            entry: dict[str, Any] = {"name": name, "required": name in required}
            described = typing.cast(dict[str, Any], spec).get("description")
            if isinstance(described, str) and described:
                entry["description"] = described
            self.arguments.append(entry)

    @property
    def takes_context(self) -> bool:
        """Whether the function takes a `ToolContext` (and so may talk back to the client)."""
        return self._context_param is not None

    @property
    def names(self) -> list[str]:
        """The argument names, in the function's order."""
        return [a["name"] for a in self.arguments]

    async def call(self, arguments: Mapping[str, Any], ctx: ToolContext) -> Any:
        """Check `arguments` against the function's hints, then call it.

        Raises:
            ToolArgumentsError: the arguments do not fit (missing, unknown, wrong type).
        """
        try:
            kwargs = self._adapter.validate_python(dict(arguments))
        except pydantic.ValidationError as exc:
            problems = problems_from_validation_error(exc, dict(arguments))
            raise ToolArgumentsError(self.what, problems) from None
        if self._context_param is not None:
            kwargs = {**kwargs, self._context_param: ctx}
        if self._is_async:
            return await self.fn(**kwargs)
        value = await anyio.to_thread.run_sync(
            functools.partial(self.fn, **kwargs), abandon_on_cancel=True
        )
        return await value if inspect.isawaitable(value) else value


async def complete_values(completer: Completer, typed: str) -> dict[str, Any]:
    """The `completion` object of a `completion/complete` answer."""
    if callable(completer):
        found = completer(typed)
        values = list(await found if inspect.isawaitable(found) else found)
    else:
        prefix = typed.casefold()
        values = [v for v in completer if v.casefold().startswith(prefix)]
    values = [str(v) for v in values]
    return {
        "values": values[:MAX_COMPLETIONS],
        "total": len(values),
        "hasMore": len(values) > MAX_COMPLETIONS,
    }
