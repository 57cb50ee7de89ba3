"""MCP servers the tests talk to: built in-process, or run as `python mcp_servers.py KIND PORT`.

KIND is one of `toolwire` (toolwire tools served by `create_app`), `toolwire-stdio` (the same
tools served over stdio by `serve`; no PORT), `sdk` (the SDK's low-level server with every content
type, paginated), `sdk-stdio` (the same over stdio; no PORT), `mismatch-stdio` (tools whose
structured results break their output schema, over stdio), and `malformed` (answers tools/call
with results MCP does not allow; `malformed-stdio` the same over stdio).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolwire import ToolAnnotations, ToolError, tool
from toolwire.mcp import create_app
from toolwire.results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart

# The smallest valid PNG (1x1) and a tiny WAV header, for content-type round trips.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- the SDK's low-level server: every content type, annotations, pagination ----------------

SDK_TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "title": "Echo"},
    },
    {
        "name": "everything",
        "description": "Return one part of every content type.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "weather",
        "description": "Structured output.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
            "required": ["city", "celsius"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
    },
    {
        "name": "fail",
        "description": "Always an error result.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"destructiveHint": True},
    },
    {
        "name": "region",
        "description": "Echo the region, which 2026-07-28 clients mirror in a header.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
        },
    },
    {
        "name": "slow",
        "description": "Sleep for `seconds`.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "annotations": {"readOnlyHint": True},
    },
]

SDK_EVENTS: list[str] = []
"""What the in-process SDK server saw (e.g. a cancelled call), for assertions."""


def stamp(ctx: ServerRequestContext[Any], result: dict[str, Any]) -> dict[str, Any]:
    # The 2026-07-28 revision wants these on every result; older ones must not see them.
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}
    return result


def sdk_server(page_size: int = 2) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        start = int(params.cursor or 0)
        page: dict[str, Any] = {"tools": SDK_TOOLS[start : start + page_size]}
        if start + page_size < len(SDK_TOOLS):
            page["nextCursor"] = str(start + page_size)
        return stamp(ctx, page)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        return stamp(ctx, await answer(params))

    async def answer(params: mcp_types.CallToolRequestParams) -> dict[str, Any]:
        args = params.arguments or {}
        if params.name == "echo":
            return {"content": [{"type": "text", "text": args["text"]}]}
        if params.name == "everything":
            return {
                "content": [
                    {"type": "text", "text": "hello"},
                    {"type": "image", "data": b64(PNG), "mimeType": "image/png"},
                    {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"},
                    {
                        "type": "resource",
                        "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "inline"},
                    },
                    {"type": "resource", "resource": {"uri": "test://b", "blob": b64(b"\x00\x01")}},
                    {
                        "type": "resource_link",
                        "uri": "test://link",
                        "name": "link",
                        "description": "a link",
                        "mimeType": "text/html",
                    },
                ]
            }
        if params.name == "weather":
            data = {"city": args.get("city", "Oslo"), "celsius": 4.5}
            return {
                "content": [{"type": "text", "text": json.dumps(data)}],
                "structuredContent": data,
            }
        if params.name == "region":
            return {"content": [{"type": "text", "text": args["region"]}]}
        if params.name == "die":
            os._exit(3)  # a server process that dies mid-call (used over stdio)
        if params.name == "fail":
            return {"content": [{"type": "text", "text": "it broke"}], "isError": True}
        if params.name == "slow":
            try:
                await anyio.sleep(float(args.get("seconds", 1)))
            except anyio.get_cancelled_exc_class():
                SDK_EVENTS.append("slow cancelled")
                raise
            return {"content": [{"type": "text", "text": "done"}]}
        return {
            "content": [{"type": "text", "text": f"unknown tool {params.name}"}],
            "isError": True,
        }

    server: Server[Any] = Server("sdk-test")
    server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, call_tool)
    return server


def sdk_app() -> Starlette:
    return sdk_server().streamable_http_app()


# --- an SDK server whose structured results break its own output schema ----------------------

MISMATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"celsius": {"type": "number"}},
    "required": ["celsius"],
}


def mismatch_server() -> Server[Any]:
    """`wrong_type` and `missing` declare an output schema their results do not meet."""
    tools = [
        {"name": name, "inputSchema": {"type": "object"}, "outputSchema": MISMATCH_SCHEMA}
        for name in ("right", "wrong_type", "missing", "failed")
    ]
    results: dict[str, dict[str, Any]] = {
        "right": {
            "content": [{"type": "text", "text": "4.5"}],
            "structuredContent": {"celsius": 4.5},
        },
        "wrong_type": {
            "content": [{"type": "text", "text": "hot"}],
            "structuredContent": {"celsius": "hot"},
        },
        "missing": {"content": [{"type": "text", "text": "no data"}]},
        # An error result needs no structured content.
        "failed": {"content": [{"type": "text", "text": "it broke"}], "isError": True},
    }

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        return stamp(ctx, {"tools": tools})

    async def call_tool(
        ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        return stamp(ctx, results[params.name])

    server: Server[Any] = Server("mismatch")
    server.add_request_handler("tools/list", mcp_types.PaginatedRequestParams, list_tools)
    server.add_request_handler("tools/call", mcp_types.CallToolRequestParams, call_tool)
    return server


def mismatch_app() -> Starlette:
    return mismatch_server().streamable_http_app()


# --- toolwire tools ---------------------------------------------------------------------------

CALLS: list[str] = []
"""Names of toolwire tools run in this process, in order."""


def mark(text: str) -> None:
    # A subprocess server's log is how a test learns that a call reached the tool.
    print(text, file=sys.stderr, flush=True)


def toolwire_tools() -> list[Any]:
    @tool(annotations=ToolAnnotations(read_only_hint=True, title="Add"))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        CALLS.append("add")
        return a + b

    @tool
    def record(note: str) -> str:
        """Write a note (neither read-only nor idempotent)."""
        CALLS.append("record")
        return f"recorded {note}"

    @tool(annotations=ToolAnnotations(read_only_hint=True))
    async def pause(seconds: float) -> str:
        """Sleep, then answer."""
        CALLS.append("pause")
        mark("pause started")
        await anyio.sleep(seconds)
        return "awake"

    @tool
    async def slow_write(seconds: float) -> str:
        """Sleep, then write (neither read-only nor idempotent)."""
        CALLS.append("slow_write")
        mark("slow_write started")
        await anyio.sleep(seconds)
        return "written"

    @tool
    def media() -> list[Any]:
        """One part of every content type."""
        CALLS.append("media")
        return [
            TextPart("hi"),
            ImagePart(data=PNG, mime_type="image/png"),
            AudioPart(data=WAV, mime_type="audio/wav"),
            ResourcePart(uri="test://r", mime_type="text/plain", text="inline"),
            ResourcePart(uri="test://b", mime_type="application/octet-stream", blob=b"\x00"),
            ResourceLinkPart(uri="test://l", name="l", description="d", mime_type="text/html"),
        ]

    @tool
    def forecast(city: str) -> dict[str, Any]:
        """Structured data."""
        CALLS.append("forecast")
        return {"city": city, "celsius": 21}

    @tool
    def broken() -> str:
        """Always fails."""
        CALLS.append("broken")
        raise ToolError("the tool broke on purpose")

    return [add, record, pause, slow_write, media, forecast, broken]


def toolwire_app(**options: Any) -> Any:
    return create_app(toolwire_tools(), name="toolwire-test", **options)


# --- a server that breaks the protocol --------------------------------------------------------


def malformed_app() -> Starlette:
    bad_results: dict[str, Any] = {
        "not_object": 42,
        "bad_content": {"content": "nope"},
        "bad_base64": {"content": [{"type": "image", "data": "***", "mimeType": "image/png"}]},
        "unknown_type": {"content": [{"type": "hologram"}]},
    }

    async def endpoint(request: Request) -> Response:
        if request.method == "DELETE":
            return Response(status_code=200)
        body = json.loads(await request.body())
        method = body.get("method")
        if "id" not in body:
            return Response(status_code=202)
        if method == "initialize":
            result: Any = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "malformed", "version": "0"},
            }
        elif method == "tools/list":
            result = {
                "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in bad_results]
            }
        elif method == "tools/call":
            name = body["params"]["name"]
            if name == "not_json":
                return Response("{oops", media_type="application/json")
            result = bad_results[name]
        else:
            result = {}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": result})

    return Starlette(routes=[Route("/mcp", endpoint, methods=["POST", "DELETE"])])


def malformed_stdio() -> None:
    """A bare JSON-RPC loop over stdio whose tools/call results MCP does not allow."""
    bad_results: dict[str, Any] = {
        "bad_content": {"content": "nope"},
        "bad_base64": {"content": [{"type": "image", "data": "***", "mimeType": "image/png"}]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        if method == "initialize":
            result: Any = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "malformed-stdio", "version": "0"},
            }
        elif method == "tools/list":
            result = {
                "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in bad_results]
            }
        elif method == "tools/call":
            result = bad_results[message["params"]["name"]]
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)


APPS: dict[str, Callable[[], Any]] = {
    "toolwire": toolwire_app,
    "sdk": sdk_app,
    "malformed": malformed_app,
}


def main() -> None:
    kind = sys.argv[1]
    if kind == "toolwire-stdio":
        from toolwire.mcp import serve

        anyio.run(lambda: serve(toolwire_tools(), stdio=True, name="toolwire-stdio"))
        return
    if kind == "malformed-stdio":
        malformed_stdio()
        return
    if kind in ("sdk-stdio", "mismatch-stdio"):
        from mcp.server.stdio import stdio_server

        async def run_stdio() -> None:
            server = sdk_server() if kind == "sdk-stdio" else mismatch_server()
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(run_stdio)
        return
    import uvicorn

    port = int(sys.argv[2])
    uvicorn.run(APPS[kind](), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
