"""Resources a toolwire MCP server offers: fixed URIs, URI templates, and their update notices.

```python
@resource("config://app", mime_type="application/json")
def app_config() -> dict[str, str]:
    "The application's settings."
    return {"theme": "dark"}


@resource("users://{user_id}/profile")
def profile(user_id: int) -> str:
    "A user's profile."
    return f"user {user_id}"
```

The function's return becomes the resource's contents: `str` is text, `bytes` a blob, a content
part (`ResourcePart`, `TextPart`, `ImagePart`, `AudioPart`) or a list of them is used as it is,
and anything else (a dict, a model, a list) is sent as JSON. A URI with `{name}` parts is a
template (RFC 6570, simple `{name}` and reserved `{+name}` expansions): the function takes those
names as parameters, checked against its type hints. `ResourceUpdates` tells subscribed clients
that a resource changed.
"""

from __future__ import annotations

import base64
import re
import typing
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, overload

import pydantic_core

from .._record import record
from ..results import AudioPart, ImagePart, ResourcePart, TextPart
from ..tools import ToolContext
from ._declared import Completer, Declared

__all__ = ["Resource", "ResourceUpdates", "resource"]

_VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


@record(frozen=True, eq=False)
class Resource:
    """A resource (or a family of them, when `uri` is a template) and the function reading it.

    Build it with `resource()`.

    Attributes:
        uri: The resource's URI, or a URI template with `{name}` parts.
        name: A short name for listings.
        description: What it holds (the function's docstring by default).
        mime_type: Its media type, when known.
        title: A human-readable title.
        complete: Suggestions per template variable, for `completion/complete`.
    """

    uri: str
    name: str
    description: str
    read: Callable[..., Any]
    mime_type: str | None = None
    title: str | None = None
    complete: Mapping[str, Completer] = field(default_factory=dict[str, Completer])
    _declared: Declared | None = None
    _pattern: re.Pattern[str] | None = None

    @property
    def takes_context(self) -> bool:
        """Whether the function takes a `ToolContext` (and so may talk back to the client)."""
        return self._declared is not None and self._declared.takes_context

    @property
    def is_template(self) -> bool:
        """Whether `uri` is a template standing for many resources."""
        return self._pattern is not None

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables `uri` fills in, or `None` when it is not one of these."""
        if self._pattern is None:
            return {} if uri == self.uri else None
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {k: urllib.parse.unquote(v) for k, v in found.groupdict().items()}

    def listing(self) -> dict[str, Any]:
        """The entry in `resources/list` (or `resources/templates/list` for a template)."""
        entry: dict[str, Any] = {"uriTemplate" if self.is_template else "uri": self.uri}
        entry["name"] = self.name
        if self.title is not None:
            entry["title"] = self.title
        if self.description:
            entry["description"] = self.description
        if self.mime_type is not None:
            entry["mimeType"] = self.mime_type
        return entry

    async def contents(
        self, uri: str, variables: Mapping[str, str], ctx: ToolContext
    ) -> list[dict[str, Any]]:
        """Call the function and turn its return into `resources/read` contents."""
        assert self._declared is not None
        value = await self._declared.call(variables, ctx)
        return _contents(value, uri, self.mime_type)


@overload
def resource(
    uri: str,
    read: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Resource: ...
@overload
def resource(
    uri: str,
    read: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Callable[[Callable[..., Any]], Resource]: ...
def resource(
    uri: str,
    read: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    complete: Mapping[str, Completer] | None = None,
) -> Resource | Callable[[Callable[..., Any]], Resource]:
    """Declare a resource read by a function: `@resource(uri)` or `resource(uri, fn)`.

    Args:
        uri: The resource's URI, or a template such as `"users://{user_id}/profile"`.
        read: The function returning the contents; a template's function takes its variables.
        name: The listed name (the function's name by default).
        description: The listed description (the function's docstring by default).
        mime_type: The contents' media type (else text/plain for text, JSON for data).
        title: A human-readable title.
        complete: Suggestions per template variable: values, or a function of what was typed.

    Raises:
        TypeError: the function's parameters do not match the template's variables.
    """

    def build(fn: Callable[..., Any]) -> Resource:
        label = name or getattr(fn, "__name__", None) or uri
        declared = Declared(fn, f"resource {uri!r}")
        variables = [m.group(2) for m in _VARIABLE.finditer(uri)]
        required = {a["name"] for a in declared.arguments if a["required"]}
        if set(declared.names) - set(variables) or required - set(variables):
            raise TypeError(
                f"resource {uri!r}: the function's parameters ({', '.join(declared.names)}) "
                f"must be the template's variables ({', '.join(variables) or 'none'})"
            )
        unknown = set(complete or {}) - set(variables)
        if unknown:
            raise ValueError(f"resource {uri!r}: complete names no variable: {sorted(unknown)}")
        return Resource(
            uri=uri,
            name=label,
            description=description if description is not None else declared.description,
            read=fn,
            mime_type=mime_type,
            title=title,
            complete=dict(complete or {}),
            _declared=declared,
            _pattern=_template(uri) if variables else None,
        )

    return build(read) if read is not None else build


def _template(uri: str) -> re.Pattern[str]:
    pattern: list[str] = []
    last = 0
    for found in _VARIABLE.finditer(uri):
        pattern.append(re.escape(uri[last : found.start()]))
        # A simple expansion stops at the next slash (its value is percent-encoded); a reserved
        # one (`{+path}`) may hold slashes.
        pattern.append(f"(?P<{found.group(2)}>{'.+' if found.group(1) else '[^/?#]+'})")
        last = found.end()
    pattern.append(re.escape(uri[last:]))
    return re.compile("".join(pattern))


def _contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    # A list of parts is several contents; any other list is data, sent as JSON.
    items: list[Any] = (
        list(typing.cast(list[Any], value))
        if isinstance(value, list | tuple)
        and value
        and all(
            isinstance(v, ResourcePart | TextPart | ImagePart | AudioPart)
            for v in typing.cast(list[Any], value)
        )
        else [value]
    )
    return [_content(item, uri, mime_type) for item in items]


def _content(value: Any, uri: str, mime_type: str | None) -> dict[str, Any]:
    if isinstance(value, ResourcePart):
        entry: dict[str, Any] = {"uri": value.uri}
        if value.mime_type is not None:
            entry["mimeType"] = value.mime_type
        if value.text is not None:
            entry["text"] = value.text
        else:
            entry["blob"] = base64.b64encode(value.blob or b"").decode("ascii")
        return entry
    if isinstance(value, str | TextPart):
        text = value if isinstance(value, str) else value.text
        return {"uri": uri, "mimeType": mime_type or "text/plain", "text": text}
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode("ascii")
        return {"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}
    if isinstance(value, ImagePart | AudioPart) and value.data is not None:
        blob = base64.b64encode(value.data).decode("ascii")
        return {"uri": uri, "mimeType": value.mime_type, "blob": blob}
    text = pydantic_core.to_json(value).decode()
    return {"uri": uri, "mimeType": mime_type or "application/json", "text": text}


Notify = Callable[[str], Any]
"""Sends `notifications/resources/updated` for a URI to one subscriber (an awaitable)."""


class ResourceUpdates:
    """Tells subscribed clients that a resource changed.

    Give the same object to `create_app(..., updates=updates)` (or `serve`); clients subscribe
    with `resources/subscribe`, and `await updates.updated(uri)` sends each of them
    `notifications/resources/updated` on its session. A subscriber that has gone is dropped
    when told, and past `max_subscriptions` the oldest subscription is forgotten, so sessions
    that ended without unsubscribing cannot grow it for ever.
    """

    def __init__(self, max_subscriptions: int = 10_000) -> None:
        if max_subscriptions <= 0:
            raise ValueError(f"max_subscriptions must be positive, got {max_subscriptions}")
        self._max = max_subscriptions
        # (uri, session) -> how to tell it, oldest subscription first.
        self._all: OrderedDict[tuple[str, str], Notify] = OrderedDict()
        self._by_uri: dict[str, set[str]] = {}

    def subscribe(self, uri: str, session: str, notify: Notify) -> None:
        """Record a session's subscription (the server calls this)."""
        self._all.pop((uri, session), None)
        self._all[(uri, session)] = notify
        self._by_uri.setdefault(uri, set()).add(session)
        while len(self._all) > self._max:
            oldest_uri, oldest_session = next(iter(self._all))
            self.unsubscribe(oldest_uri, oldest_session)

    def unsubscribe(self, uri: str, session: str) -> None:
        """Forget a session's subscription (the server calls this)."""
        self._all.pop((uri, session), None)
        sessions = self._by_uri.get(uri)
        if sessions is not None:
            sessions.discard(session)
            if not sessions:
                del self._by_uri[uri]

    def subscribers(self, uri: str) -> int:
        """How many sessions are subscribed to `uri`."""
        return len(self._by_uri.get(uri, ()))

    async def updated(self, uri: str) -> int:
        """Notify every session subscribed to `uri`; returns how many were told."""
        told = 0
        for session in list(self._by_uri.get(uri, ())):
            notify = self._all.get((uri, session))
            if notify is None:
                continue
            try:
                await notify(uri)
            except Exception:  # a session that closed: forget it, tell the others
                self.unsubscribe(uri, session)
            else:
                told += 1
        return told
