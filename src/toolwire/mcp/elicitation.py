"""Elicitation: a server asking the person behind the client for input during a tool call.

`McpClient(..., elicitation=handler)` declares the capability and answers each
`elicitation/create` with `handler`'s answer; without a handler every request is declined, so a
server that asks anyway gets a clear "no" instead of an error. A form answer is completed with
the defaults the requested schema gives for fields left out (SEP-1034) and checked against the
schema before it is sent, so a handler's mistake is an error the server sees, not bad data.
"""

from __future__ import annotations

import typing
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

import mcp_types
from mcp.client.session import ClientRequestContext, ElicitationFnT

from .._record import record
from .._validate import SchemaValidator
from ..errors import SchemaError

__all__ = ["Elicitation", "ElicitationAnswer", "ElicitationHandler"]


@record(frozen=True)
class Elicitation:
    """What the server asks.

    Attributes:
        message: What to show the person.
        mode: `"form"` (fill in `schema`) or `"url"` (visit `url`, e.g. to sign in elsewhere).
        schema: The requested form's JSON Schema: an object of flat, primitive properties.
        url: The address to send the person to, in URL mode.
    """

    message: str
    mode: Literal["form", "url"] = "form"
    schema: dict[str, Any] | None = None
    url: str | None = None


@record(frozen=True)
class ElicitationAnswer:
    """The person's answer.

    Attributes:
        action: `"accept"` (submitted), `"decline"` (said no) or `"cancel"` (dismissed).
        content: The submitted form, for an accepted form; fields left out get the schema's
            defaults.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


ElicitationHandler: TypeAlias = Callable[[Elicitation], Awaitable[ElicitationAnswer]]
"""Asks the person and returns their answer."""

CAPABILITY: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}
"""What a client with a handler declares."""


class ElicitationRefused(Exception):
    """The request or the handler's answer cannot be sent on: a JSON-RPC error for the server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_request(params: Any) -> Elicitation:
    """The `elicitation/create` parameters as an `Elicitation`.

    Raises:
        ElicitationRefused: they break the protocol.
    """
    if not isinstance(params, dict):
        raise ElicitationRefused(-32602, "elicitation/create needs parameters")
    found = typing.cast(dict[str, Any], params)
    message = found.get("message")
    mode = found.get("mode", "form")
    if not isinstance(message, str) or mode not in ("form", "url"):
        raise ElicitationRefused(-32602, "elicitation/create needs a message and a known mode")
    if mode == "url":
        url = found.get("url")
        if not isinstance(url, str) or not url:
            raise ElicitationRefused(-32602, "a URL-mode elicitation needs a url")
        return Elicitation(message, "url", url=url)
    schema: Any = found.get("requestedSchema")
    if not isinstance(schema, dict) or typing.cast(dict[str, Any], schema).get("type") != "object":
        raise ElicitationRefused(-32602, "a form elicitation needs an object requestedSchema")
    return Elicitation(message, "form", schema=typing.cast(dict[str, Any], schema))


def with_defaults(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """`content` with each property it leaves out set to the schema's default, where there is one."""
    filled = dict(content)
    properties: Any = schema.get("properties")
    if isinstance(properties, dict):
        for name, spec in typing.cast(dict[str, Any], properties).items():
            if name not in filled and isinstance(spec, dict) and "default" in spec:
                filled[name] = typing.cast(dict[str, Any], spec)["default"]
    return filled


async def answer(handler: ElicitationHandler | None, params: Any) -> dict[str, Any]:
    """The `ElicitResult` to send for one `elicitation/create`, as JSON.

    Raises:
        ElicitationRefused: the request is malformed, the handler failed, or its form answer
            does not match the requested schema.
    """
    request = parse_request(params)
    if handler is None:
        return {"action": "decline"}
    try:
        reply = await handler(request)
    except Exception as exc:  # the handler is the caller's code: its failure goes to the server
        raise ElicitationRefused(-32603, f"the elicitation handler failed: {exc}") from exc
    if reply.action != "accept" or request.mode == "url":
        return {"action": reply.action}
    assert request.schema is not None
    content = with_defaults(request.schema, reply.content or {})
    try:
        problems = SchemaValidator(request.schema).problems(content, limit=3)
    except SchemaError as exc:
        raise ElicitationRefused(-32602, f"the requested schema is not valid: {exc}") from None
    if problems:
        where = "; ".join(
            f"{'.'.join(map(str, p.path)) or 'the form'}: {p.message}" for p in problems
        )
        raise ElicitationRefused(
            -32602, f"the answer does not match the requested schema ({where})"
        )
    return {"action": "accept", "content": content}


def sdk_callback(handler: ElicitationHandler | None) -> ElicitationFnT:
    """The same answers for the SDK's stdio client, as its elicitation callback."""

    async def callback(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        raw = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            found = await answer(handler, raw)
        except ElicitationRefused as exc:
            return mcp_types.ErrorData(code=exc.code, message=str(exc))
        return mcp_types.ElicitResult.model_validate(found)

    return callback
