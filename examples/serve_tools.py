"""Serve your own tools (and the prebuilt ones) over MCP, then call them as any MCP client would.

`python examples/serve_tools.py --forever` keeps serving on http://127.0.0.1:8765/mcp for other
clients (Claude Desktop, the MCP inspector, `toolwire tools <url>`); without the flag it serves on
a free port, calls the tools once through the official SDK's client, and exits.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass

import anyio
import uvicorn

from mcp import Client
from toolwire import ToolAnnotations, ToolError, tool
from toolwire.mcp import create_app
from toolwire.prebuilt import calculator


@dataclass
class Order:
    id: int
    status: str
    items: list[str]


ORDERS = {7: Order(7, "shipped", ["lamp", "bulb"]), 8: Order(8, "packing", ["desk"])}


@tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def lookup_order(order_id: int) -> Order:
    """Look up an order by its number.

    Args:
        order_id: The order number.
    """
    if order_id not in ORDERS:
        raise ToolError(f"There is no order {order_id}; known orders: {sorted(ORDERS)}.")
    return ORDERS[order_id]


TOOLS = [lookup_order, calculator]


async def serve_and_call() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    server = uvicorn.Server(uvicorn.Config(create_app(TOOLS), log_level="warning"))
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: server.serve(sockets=[listener]))
        print("serving at", url)
        async with Client(url) as client:  # the official MCP SDK's client
            listed = await client.list_tools()
            for t in listed.tools:
                hints = t.annotations.model_dump(exclude_none=True) if t.annotations else {}
                print(
                    f"- {t.name}: {t.description.splitlines()[0] if t.description else ''} {hints}"
                )
            found = await client.call_tool("lookup_order", {"order_id": 7})
            print("lookup_order(7) ->", found.structured_content, "error:", found.is_error)
            missing = await client.call_tool("lookup_order", {"order_id": 99})
            print("lookup_order(99) ->", missing.content[0].text, "error:", missing.is_error)  # type: ignore[union-attr]
            math = await client.call_tool("calculator", {"expression": "2^10"})
            print("calculator(2^10) ->", math.content[0].text)  # type: ignore[union-attr]
        server.should_exit = True


def main() -> None:
    if "--forever" in sys.argv:
        from toolwire.mcp import serve

        print("serving at http://127.0.0.1:8765/mcp (Ctrl-C stops)")
        anyio.run(lambda: serve(TOOLS, port=8765))
    else:
        anyio.run(serve_and_call)


if __name__ == "__main__":
    main()
