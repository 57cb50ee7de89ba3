"""Many MCP servers at once: `McpToolRegistry`, server directories, and `run_agent`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Protocol, Self, Unpack, runtime_checkable

import anyio

from ._http import DEFAULT_MAX_ANSWER_BYTES
from .auth import ClientCredentials, CrossAppAccess, OAuth
from .client import McpClient, McpTool
from .elicitation import ElicitationHandler
from .sampling import Sampler

if TYPE_CHECKING:
    from .._config import RunOptions
    from .._run_result import RunResult
    from ..models.base import Model

__all__ = [
    "McpRegistry",
    "McpServerConfig",
    "McpServerInfo",
    "McpToolRegistry",
    "StaticMcpRegistry",
    "run_agent",
]

logger = logging.getLogger("toolwire.mcp")


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """How to reach one Streamable HTTP MCP server.

    Attributes:
        url: The server's MCP endpoint.
        auth_token: Sent as `Authorization: Bearer <token>`.
        auth: OAuth for the server (`OAuth`, `ClientCredentials` or `CrossAppAccess`; see
            `McpClient`).
        headers: Extra HTTP headers for every request.
        client_name: How the client introduces itself.
        prefix: Prepended to the server's tool names as `"{prefix}_{name}"`.
        timeout: Seconds a request may take (see `McpClient`).
        requires_approval: Ask for approval before every call of this server's tools, whatever
            the server says (tools it marks as needing approval need it anyway).
        max_answer_bytes: The largest answer read (see `McpClient`).
        elicitation: Answers the server's requests for input (see `McpClient`).
        sampling: Answers the server's requests for a completion with a model (see
            `McpClient`).
    """

    url: str
    auth_token: str | None = field(default=None, repr=False)
    auth: OAuth | ClientCredentials | CrossAppAccess | None = field(default=None, repr=False)
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    client_name: str = "toolwire"
    prefix: str | None = None
    timeout: float | None = 60.0
    requires_approval: bool = False
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    elicitation: ElicitationHandler | None = field(default=None, repr=False)
    sampling: Sampler | Model | None = field(default=None, repr=False)

    def client(self) -> McpClient:
        """A new, unconnected client for this server."""
        return McpClient(
            self.url,
            auth_token=self.auth_token,
            auth=self.auth,
            headers=self.headers,
            client_name=self.client_name,
            timeout=self.timeout,
            max_answer_bytes=self.max_answer_bytes,
            elicitation=self.elicitation,
            sampling=self.sampling,
        )


class McpToolRegistry:
    """The tools of several MCP servers, connected concurrently and kept connected.

        async with McpToolRegistry([McpServerConfig(url_a), McpServerConfig(url_b)]) as reg:
            tools = await reg.discover_tools()

    A server that fails is logged and recorded in `failures`; the others' tools are still
    returned.
    """

    def __init__(self, servers: Sequence[McpServerConfig | str] = ()) -> None:
        self.servers = [
            s if isinstance(s, McpServerConfig) else McpServerConfig(s) for s in servers
        ]
        self.clients: dict[str, McpClient] = {}
        self.failures: dict[str, BaseException] = {}

    async def discover_tools(self) -> list[McpTool]:
        """Connect to every server not yet connected, concurrently, and list all their tools.

        Tools come in the order of `servers`. Calling it again lists the tools afresh.
        """
        found: dict[int, list[McpTool]] = {}
        self.failures = {}
        # One connection per URL, even when a server is listed twice (with two prefixes, say).
        locks = {config.url: anyio.Lock() for config in self.servers}

        async def discover(index: int, config: McpServerConfig) -> None:
            try:
                async with locks[config.url]:
                    client = self.clients.get(config.url)
                    if client is None:
                        client = config.client()
                        await client.connect()
                        self.clients[config.url] = client
                found[index] = await client.tools(
                    prefix=config.prefix, requires_approval=config.requires_approval
                )
            except Exception as exc:
                logger.warning("MCP server %s failed: %s", config.url, exc)
                self.failures[config.url] = exc

        async with anyio.create_task_group() as tg:
            for index, config in enumerate(self.servers):
                tg.start_soon(discover, index, config)
        return [t for index in sorted(found) for t in found[index]]

    async def close(self) -> None:
        """Close every connection."""
        clients, self.clients = list(self.clients.values()), {}
        with anyio.CancelScope(shield=True):
            for client in clients:
                await client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


@dataclass(frozen=True, slots=True)
class McpServerInfo:
    """An entry of a server directory.

    Attributes:
        name: The server's name.
        url: Its MCP endpoint.
        tools: The names of its tools, when the directory knows them.
        transport: How to talk to it.
    """

    name: str
    url: str
    tools: Sequence[str] = ()
    transport: Literal["streamable-http", "stdio"] = "streamable-http"


@runtime_checkable
class McpRegistry(Protocol):
    """A directory of MCP servers."""

    async def search(self, query: str) -> list[McpServerInfo]:
        """Servers whose name contains `query`, ignoring case."""
        ...

    async def discover(self) -> list[McpServerInfo]:
        """Every server the directory knows."""
        ...


class StaticMcpRegistry:
    """A fixed directory of servers, given up front."""

    def __init__(self, *servers: McpServerInfo) -> None:
        self.servers = list(servers)

    async def search(self, query: str) -> list[McpServerInfo]:
        """Servers whose name contains `query`, ignoring case."""
        needle = query.casefold()
        return [s for s in self.servers if needle in s.name.casefold()]

    async def discover(self) -> list[McpServerInfo]:
        """Every server given."""
        return list(self.servers)


async def run_agent(
    model: Model | str,
    prompt: str,
    *,
    servers: Sequence[McpServerConfig | str],
    **agent_options: Unpack[RunOptions],
) -> RunResult:
    """Run the agent loop with the tools of the given MCP servers, closing them afterwards.

    Args:
        model: A `Model` or a `"provider:model-name"` string.
        prompt: The user's message.
        servers: The MCP servers whose tools the agent may call.
        **agent_options: The run options of `Agent` (the fields of `RunConfig`); a `tools`
            list there is offered alongside the servers' tools.
    """
    from ..agent import Agent

    async with McpToolRegistry(servers) as registry:
        mcp_tools = await registry.discover_tools()
        options: RunOptions = {
            **agent_options,
            "tools": [*agent_options.get("tools", ()), *mcp_tools],
        }
        agent = Agent(model, **options)
        return await agent.run(prompt)
