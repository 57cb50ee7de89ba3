"""An MCP server whose tool list changes: the SDK's low-level server, where the `reveal` and
`hide` tools add and remove a `secret` tool and announce it (`notifications/tools/list_changed`
on the call's answer stream in the handshake era, on `subscriptions/listen` streams with
2026-07-28). Run as `python live_server.py` it serves the same over stdio.

It imports nothing of toolwire's, so the stdio peer runs whatever toolwire is installed.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS


def stamp(ctx: ServerRequestContext[Any], result: dict[str, Any]) -> dict[str, Any]:
    # The 2026-07-28 revision wants these on every result; older ones must not see them.
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}
    return result


_OPEN = {"type": "object", "properties": {}}
_BASE: list[dict[str, Any]] = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "reveal", "description": "Add the secret tool.", "inputSchema": _OPEN},
    {"name": "hide", "description": "Remove the secret tool.", "inputSchema": _OPEN},
]
SECRET: dict[str, Any] = {"name": "secret", "description": "Revealed.", "inputSchema": _OPEN}


class _Announcing(Server[Any]):
    """Says, in the handshake era, that it announces tool list changes."""

    def create_initialization_options(self, *args: Any, **kwargs: Any) -> Any:
        return super().create_initialization_options(
            NotificationOptions(tools_changed=True), *args[1:], **kwargs
        )


class LiveServer:
    """The SDK's low-level server with a tool list that `reveal` and `hide` change."""

    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = list(_BASE)
        self.bus = InMemorySubscriptionBus()
        self.sessions: list[ServerSession] = []
        self.server = _Announcing("live", on_subscriptions_listen=ListenHandler(self.bus))
        self.server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, self.list)
        self.server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, self.call)

    async def list(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.sessions.append(ctx.session)
        return stamp(ctx, {"tools": list(self.tools)})

    async def call(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        name = params.name
        if name == "reveal" and SECRET not in self.tools:
            self.tools.append(SECRET)
            await self.announce(ctx)
        elif name == "hide" and SECRET in self.tools:
            self.tools.remove(SECRET)
            await self.announce(ctx)
        elif name == "secret":
            if SECRET not in self.tools:
                return stamp(ctx, {"content": [_text("no such tool: secret")], "isError": True})
            return stamp(ctx, {"content": [_text("the secret")]})
        elif name == "echo":
            return stamp(ctx, {"content": [_text((params.arguments or {}).get("text", ""))]})
        return stamp(ctx, {"content": [_text(f"{name} done")]})

    async def announce(self, ctx: ServerRequestContext[Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.bus.publish(ToolsListChanged())
        else:
            # On the call's own answer stream, ahead of its result.
            await ctx.session.send_notification(
                mcp_types.ToolListChangedNotification(), related_request_id=ctx.request_id
            )


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


async def _serve() -> None:
    live = LiveServer()
    async with stdio_server() as (read, write):
        await live.server.run(read, write, live.server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
