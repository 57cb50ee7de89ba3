"""Use an MCP server's tools in the agent loop, as ordinary toolwire tools.

Runs offline: it starts the official MCP SDK's own server (`MCPServer`) over stdio as a
subprocess, connects with toolwire's `McpClient`, lists and calls its tools, then lets an agent
(a scripted offline model here; any provider in real use) call them through the loop.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap

from toolwire import Agent, ScriptedModel
from toolwire.mcp import McpClient, StdioServerParameters

SERVER = textwrap.dedent(
    '''
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("inventory", log_level="WARNING")

    @server.tool()
    def stock(sku: str) -> int:
        """Units in stock for a product code."""
        return {"LAMP-1": 12, "DESK-2": 0}.get(sku, 0)

    @server.tool()
    def reserve(sku: str, units: int) -> str:
        """Reserve units of a product."""
        if units <= 0:
            raise ToolError("units must be positive")
        return f"reserved {units} x {sku}"

    server.run("stdio")
    '''
)


async def main() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVER])
    async with McpClient(params) as client:
        specs = await client.list_tools()
        print("server tools:", [(s.name, s.input_schema.get("required")) for s in specs])

        direct = await client.call_tool("stock", {"sku": "LAMP-1"})
        print("stock(LAMP-1) ->", direct.text)
        failed = await client.call_tool("reserve", {"sku": "LAMP-1", "units": 0})
        print("reserve(units=0) -> error:", failed.is_error, "|", failed.text)

        tools = await client.tools(prefix="inv")  # ordinary tools, named inv_stock, inv_reserve
        model = ScriptedModel(
            [
                [("inv_stock", {"sku": "LAMP-1"}), ("inv_stock", {"sku": "DESK-2"})],
                [("inv_reserve", {"sku": "LAMP-1", "units": 2})],
                "Reserved 2 lamps; the desk is out of stock.",
            ]
        )
        result = await Agent(model, tools=tools).run("Reserve two lamps if we have them.")
        for entry in result.trace:
            print(f"  {entry.name}({entry.arguments}) -> {entry.result}")
        print("answer:", result.text)


if __name__ == "__main__":
    asyncio.run(main())
