"""The same three tools served by toolwire's `create_app` and by the SDK's `MCPServer`, for the
transport round (tests/mcp/test_transport.py). `python transport_servers.py toolwire|sdk LOG`
serves them over stdio, writing what the probe sees to LOG."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SdkToolError
from pydantic import BaseModel

from toolwire import ToolError, tool
from toolwire.mcp import create_app, serve


class Probe:
    """What the test sees of a server: a slow call started, then cancelled. A server in the
    test's process sets events; one in a subprocess writes the same news to `log`."""

    def __init__(self, log: Path | None = None) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.log = log

    def _tell(self, event: anyio.Event, news: str) -> None:
        event.set()
        if self.log is not None:
            with self.log.open("a") as out:
                out.write(news + "\n")

    async def pause(self, seconds: float) -> str:
        self._tell(self.started, "started")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            self._tell(self.cancelled, "cancelled")
            raise
        return "awake"


def toolwire_tools(probe: Probe) -> list[Any]:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def broken() -> str:
        """Always fails."""
        raise ToolError("the tool broke on purpose")

    @tool
    async def pause(seconds: float) -> str:
        """Sleep, then answer."""
        return await probe.pause(seconds)

    return [add, broken, pause]


def toolwire_app(probe: Probe) -> Any:
    return create_app(toolwire_tools(probe), name="toolwire-round")


class Answer(BaseModel):
    word: str


def sdk_server(probe: Probe) -> MCPServer:
    server = MCPServer("sdk-round")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def broken() -> str:
        """Always fails."""
        raise SdkToolError("the tool broke on purpose")

    @server.tool()
    async def pause(seconds: float) -> str:
        """Sleep, then answer."""
        return await probe.pause(seconds)

    @server.tool()
    async def ask(ctx: Context) -> str:
        """Report progress, then ask the client for a word in the middle of the call."""
        await ctx.report_progress(1, 2, "asking")
        answer = await ctx.elicit("Say a word", Answer)
        return answer.data.word if answer.action == "accept" else f"no word: {answer.action}"

    return server


def sdk_app(probe: Probe) -> Any:
    return sdk_server(probe).streamable_http_app()


async def main(kind: str, log: str) -> None:
    probe = Probe(Path(log))
    if kind == "toolwire":
        await serve(toolwire_tools(probe), stdio=True, name="toolwire-round")
    else:
        await sdk_server(probe).run_stdio_async()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    anyio.run(main, sys.argv[1], sys.argv[2])
