"""Serving resources and prompts: listings, reads, subscriptions and argument completion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import ToolArgumentsError, ToolError
from ..tools import ToolContext
from ._declared import complete_values
from ._server_context import Talk, interactive, session_key
from .prompts import Prompt
from .resources import Resource, ResourceUpdates

__all__ = ["RESOURCE_NOT_FOUND", "add_completion", "add_prompts", "add_resources"]

RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code MCP gives a read of a resource the server does not have."""

_MAX_ECHOED = 200
"""How much of an unknown URI or name an error echoes back."""


def _shown(text: str) -> str:
    return text if len(text) <= _MAX_ECHOED else text[:_MAX_ECHOED] + "..."


def _failed(what: str, exc: Exception) -> MCPError:
    # A `ToolError` speaks to the caller; anything else is named by its type too, as a tool's
    # failure would be.
    told = str(exc) if isinstance(exc, ToolError) else f"{type(exc).__name__}: {exc}"
    return MCPError(code=mcp_types.INTERNAL_ERROR, message=f"{what}: {told}")


def _complete(ctx: ServerRequestContext[Any], result: dict[str, Any]) -> dict[str, Any]:
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return {**result, "resultType": "complete"}
    return result


def _unique(kind: str, names: Sequence[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"two {kind} named {name!r}")
        seen.add(name)


def add_resources(
    server: Server[Any],
    resources: Sequence[Resource],
    talk: Talk,
    updates: ResourceUpdates,
    subscriptions: bool = True,
) -> None:
    """Answer `resources/*` with `resources` (fixed ones first when looking up a URI).

    Without `subscriptions` (a stateless server: no session to notify) `resources/subscribe`
    is not offered.
    """
    fixed = [r for r in resources if not r.is_template]
    templates = [r for r in resources if r.is_template]
    _unique("resources", [r.uri for r in resources])
    listed = {"resources": [r.listing() for r in fixed]}
    listed_templates = {"resourceTemplates": [r.listing() for r in templates]}

    async def list_resources(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        return _complete(ctx, listed)

    async def list_templates(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        return _complete(ctx, listed_templates)

    async def read(
        ctx: ServerRequestContext[Any], params: mcp_types.ReadResourceRequestParams
    ) -> dict[str, Any]:
        uri = str(params.uri)
        for found in (*fixed, *templates):
            variables = found.match(uri)
            if variables is not None:
                break
        else:
            raise MCPError(
                code=RESOURCE_NOT_FOUND,
                message=f"Resource not found: {_shown(uri)}",
                data={"uri": _shown(uri)},
            )
        call = talk.call(ctx, params)
        context = ToolContext(tool_name=found.name, client=call)

        async def run() -> dict[str, Any]:
            try:
                contents = await found.contents(uri, variables, context)
            except ToolArgumentsError as exc:
                raise MCPError(code=mcp_types.INVALID_PARAMS, message=str(exc)) from None
            except Exception as exc:  # the function's failure is the request's error
                raise _failed(f"Resource {_shown(uri)} could not be read", exc) from None
            return {"contents": contents}

        return _complete(ctx, await interactive(call, run))

    async def subscribe(
        ctx: ServerRequestContext[Any], params: mcp_types.SubscribeRequestParams
    ) -> dict[str, Any]:
        session = ctx.session
        uri = str(params.uri)

        async def notify(changed: str) -> None:
            await session.send_notification(
                mcp_types.ResourceUpdatedNotification(
                    params=mcp_types.ResourceUpdatedNotificationParams(uri=changed)
                )
            )

        updates.subscribe(uri, session_key(ctx), notify)
        return {}

    async def unsubscribe(
        ctx: ServerRequestContext[Any], params: mcp_types.UnsubscribeRequestParams
    ) -> dict[str, Any]:
        updates.unsubscribe(str(params.uri), session_key(ctx))
        return {}

    server.add_request_handler("resources/list", mcp_types.PaginatedRequestParams, list_resources)
    server.add_request_handler(
        "resources/templates/list", mcp_types.PaginatedRequestParams, list_templates
    )
    server.add_request_handler("resources/read", mcp_types.ReadResourceRequestParams, read)
    if subscriptions:
        server.add_request_handler(
            "resources/subscribe", mcp_types.SubscribeRequestParams, subscribe
        )
        server.add_request_handler(
            "resources/unsubscribe", mcp_types.UnsubscribeRequestParams, unsubscribe
        )


def add_prompts(server: Server[Any], prompts: Sequence[Prompt], talk: Talk) -> None:
    """Answer `prompts/*` with `prompts`."""
    _unique("prompts", [p.name for p in prompts])
    by_name = {p.name: p for p in prompts}
    listed = {"prompts": [p.listing() for p in prompts]}

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        return _complete(ctx, listed)

    async def get(
        ctx: ServerRequestContext[Any], params: mcp_types.GetPromptRequestParams
    ) -> dict[str, Any]:
        found = by_name.get(params.name)
        if found is None:
            raise MCPError(
                code=mcp_types.INVALID_PARAMS, message=f"Unknown prompt: {_shown(params.name)}"
            )
        call = talk.call(ctx, params)
        context = ToolContext(tool_name=found.name, client=call)

        async def run() -> dict[str, Any]:
            try:
                return await found.get(params.arguments or {}, context)
            except ToolArgumentsError as exc:
                raise MCPError(code=mcp_types.INVALID_PARAMS, message=str(exc)) from None
            except Exception as exc:  # the function's failure is the request's error
                raise _failed(f"Prompt {found.name!r} failed", exc) from None

        return _complete(ctx, await interactive(call, run))

    server.add_request_handler("prompts/list", mcp_types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", mcp_types.GetPromptRequestParams, get)


def add_completion(
    server: Server[Any], resources: Sequence[Resource], prompts: Sequence[Prompt]
) -> None:
    """Answer `completion/complete` for prompt arguments and template variables."""
    by_prompt = {p.name: p for p in prompts}
    by_template = {r.uri: r for r in resources if r.is_template}

    async def complete(
        ctx: ServerRequestContext[Any], params: mcp_types.CompleteRequestParams
    ) -> dict[str, Any]:
        ref = params.ref
        if isinstance(ref, mcp_types.PromptReference):
            owner = by_prompt.get(ref.name)
            if owner is None:
                raise MCPError(
                    code=mcp_types.INVALID_PARAMS, message=f"Unknown prompt: {_shown(ref.name)}"
                )
            completers = owner.complete
        else:
            template = by_template.get(ref.uri)
            if template is None:
                raise MCPError(
                    code=mcp_types.INVALID_PARAMS,
                    message=f"Unknown resource template: {_shown(ref.uri)}",
                )
            completers = template.complete
        completer = completers.get(params.argument.name)
        if completer is None:
            # An argument without suggestions is not an error: there is just nothing to offer.
            return _complete(ctx, {"completion": {"values": [], "total": 0, "hasMore": False}})
        return _complete(
            ctx, {"completion": await complete_values(completer, params.argument.value)}
        )

    server.add_request_handler("completion/complete", mcp_types.CompleteRequestParams, complete)
