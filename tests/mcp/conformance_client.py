"""The client the conformance suite drives: `python conformance_client.py SERVER_URL`.

It connects with toolwire's `McpClient`, lists the tools and calls each one, exiting non-zero
when anything fails. The suite decides what to check from `MCP_CONFORMANCE_SCENARIO`.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from toolwire.mcp import McpClient

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}


async def main(url: str) -> int:
    failures = 0
    async with McpClient(url, client_name="toolwire-conformance", timeout=20) as client:
        for spec in await client.list_tools():
            result = await client.call_tool(spec.name, ARGUMENTS.get(spec.name, {}))
            print(f"{spec.name}: {'ERROR ' if result.is_error else ''}{result.text}")
            failures += result.is_error
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
