"""Prompts a toolwire MCP server offers: message templates a user picks, filled by a function.

```python
@prompt
def review(code: str, language: str = "python") -> str:
    '''Ask for a code review.

    Args:
        code: The code to review.
        language: Its language.
    '''
    return f"Review this {language} code:\\n{code}"
```

The function's parameters are the prompt's arguments (MCP sends them as strings; the type hints
say what they become), its docstring the description. It returns the messages: a `str` (one
user message), a `UserMessage` or `AssistantMessage`, a content part (`TextPart`, `ImagePart`,
`AudioPart`, `ResourcePart`, `ResourceLinkPart`: one user message each), or a list of these.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, overload

from .._record import record
from ..messages import AssistantMessage, FilePart, UserMessage, UserPart
from ..results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart
from ..tools import ToolContext
from ._content import part_to_mcp
from ._declared import Completer, Declared

__all__ = ["Prompt", "prompt"]


@record(frozen=True, eq=False)
class Prompt:
    """A prompt and the function that fills it. Build it with `prompt()`.

    Attributes:
        name: The prompt's name.
        description: What it is for (the function's docstring by default).
        render: The function returning the messages.
        title: A human-readable title.
        complete: Suggestions per argument, for `completion/complete`.
    """

    name: str
    description: str
    render: Callable[..., Any]
    title: str | None = None
    complete: Mapping[str, Completer] = field(default_factory=dict[str, Completer])
    _declared: Declared | None = None

    @property
    def takes_context(self) -> bool:
        """Whether the function takes a `ToolContext` (and so may talk back to the client)."""
        return self._declared is not None and self._declared.takes_context

    @property
    def arguments(self) -> list[dict[str, Any]]:
        """The arguments as `prompts/list` gives them (name, description, required)."""
        assert self._declared is not None
        return [dict(a) for a in self._declared.arguments]

    def listing(self) -> dict[str, Any]:
        """The entry in `prompts/list`."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description:
            entry["description"] = self.description
        entry["arguments"] = self.arguments
        return entry

    async def get(self, arguments: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Call the function and turn its return into a `prompts/get` result."""
        assert self._declared is not None
        value = await self._declared.call(arguments, ctx)
        out: dict[str, Any] = {"messages": _messages(value, self.name)}
        if self.description:
            out["description"] = self.description
        return out


@overload
def prompt(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Prompt: ...
@overload
def prompt(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Callable[[Callable[..., Any]], Prompt]: ...
def prompt(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Prompt | Callable[[Callable[..., Any]], Prompt]:
    """Declare a prompt filled by a function: `@prompt`, `@prompt(name=...)` or `prompt(fn)`.

    Args:
        fn: The function returning the messages.
        name: The prompt's name (the function's name by default).
        description: Its description (the function's docstring by default).
        title: A human-readable title.
        complete: Suggestions per argument: values, or a function of what was typed.

    Raises:
        TypeError: a parameter has no type hint, or is `*args`/`**kwargs`.
    """

    def build(function: Callable[..., Any]) -> Prompt:
        label = name or getattr(function, "__name__", None)
        if not label:
            raise ValueError("a prompt needs a name")
        declared = Declared(function, f"prompt {label!r}")
        unknown = set(complete or {}) - set(declared.names)
        if unknown:
            raise ValueError(f"prompt {label!r}: complete names no argument: {sorted(unknown)}")
        return Prompt(
            name=label,
            description=description if description is not None else declared.description,
            render=function,
            title=title,
            complete=dict(complete or {}),
            _declared=declared,
        )

    return build(fn) if fn is not None else build


_PARTS = (TextPart, ImagePart, AudioPart, ResourcePart, ResourceLinkPart)


def _user_block(part: UserPart) -> dict[str, Any]:
    if not isinstance(part, FilePart):
        return part_to_mcp(part)
    # MCP prompts have no file content: a document travels as an embedded resource (or a link).
    uri = part.url or f"file:///{part.filename or 'document'}"
    if part.data is None:
        return part_to_mcp(ResourceLinkPart(uri=uri, name=part.filename, mime_type=part.mime_type))
    return part_to_mcp(ResourcePart(uri=uri, mime_type=part.mime_type, blob=part.data))


def _messages(value: Any, name: str) -> list[dict[str, Any]]:
    items: list[Any] = (
        list(typing.cast(list[Any], value)) if isinstance(value, list | tuple) else [value]
    )
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            out.append({"role": "user", "content": {"type": "text", "text": item}})
        elif isinstance(item, _PARTS):
            out.append({"role": "user", "content": part_to_mcp(item)})
        elif isinstance(item, UserMessage):
            out.extend({"role": "user", "content": _user_block(p)} for p in item.content)
        elif isinstance(item, AssistantMessage):
            out.append({"role": "assistant", "content": {"type": "text", "text": item.text}})
        else:
            raise TypeError(
                f"prompt {name!r} returned {type(item).__name__}: return text, messages or "
                "content parts"
            )
    return out
