"""Many MCP servers at once: `McpToolRegistry`, server directories, and `run_agent`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Protocol, Self, Unpack, runtime_checkable

import anyio
import anyio.abc

from ..tools import Tool
from ..toolsets import CombinedToolset, OnConflict, Toolset, ToolsetContext
from ._content import McpConnectionError
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
        follow_changes: Keep a stream open for the server's tool list changes while the
            registry is open (see `McpClient`).
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
    follow_changes: bool = True

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
            follow_changes=self.follow_changes,
        )


class McpToolRegistry(Toolset):
    """The tools of several MCP servers, connected concurrently and kept connected.

        async with McpToolRegistry([McpServerConfig(url_a), McpServerConfig(url_b)]) as reg:
            tools = await reg.discover_tools()

    A server that fails is logged and recorded in `failures`; the others' tools are still
    returned.

    The registry is a toolset: `Agent(model, tools=[registry])` offers, at every step, the
    tools of every server that answers, each server's listed again only after it announced a
    change (used as `async with`, the registry keeps each server's change stream open).
    Names two servers share are settled by `on_conflict` (by default the later server's tool
    is prefixed with the server's `prefix` or name); each problem is reported once
    (`problems`), and one failing or hostile server never stops the others.

    Args:
        servers: The servers, as configurations or URLs.
        on_conflict: The rule for a name two servers offer (see `toolwire.toolsets.OnConflict`).
    """

    label = "mcp"
    remote = True

    def __init__(
        self, servers: Sequence[McpServerConfig | str] = (), *, on_conflict: OnConflict = "prefix"
    ) -> None:
        self.servers = [
            s if isinstance(s, McpServerConfig) else McpServerConfig(s) for s in servers
        ]
        self.clients: dict[str, McpClient] = {}
        self.failures: dict[str, BaseException] = {}
        self._tried = False
        self._tasks: anyio.abc.TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self._watching: list[anyio.CancelScope] = []
        members = [_ServerToolset(self, config) for config in self.servers]
        self._combined = CombinedToolset(*members, on_conflict=on_conflict, label=self.label)

    @property
    def problems(self) -> list[str]:
        return self._combined.problems

    def report(self, problem: str) -> None:
        self._combined.report(problem)

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        """Every answering server's tools for one step (servers are connected on first use)."""
        if not self._tried:
            await self.discover_tools()
        return await self._combined.tools_for(ctx)

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
                        if self._tasks is not None and client.follow_changes:
                            self._tasks.start_soon(self._watch, client)
                found[index] = list(
                    await client.live_tools(
                        prefix=config.prefix, requires_approval=config.requires_approval, fresh=True
                    )
                )
            except Exception as exc:
                logger.warning("MCP server %s failed: %s", config.url, exc)
                self.failures[config.url] = exc

        self._tried = True
        async with anyio.create_task_group() as tg:
            for index, config in enumerate(self.servers):
                tg.start_soon(discover, index, config)
        return [t for index in sorted(found) for t in found[index]]

    async def _watch(self, client: McpClient) -> None:
        # A scope per watcher: cancelling the group's own would cancel the registry's owner.
        with anyio.CancelScope() as scope:
            self._watching.append(scope)
            await client.watch_tools()

    async def close(self) -> None:
        """Close every connection."""
        clients, self.clients = list(self.clients.values()), {}
        self._tried = False
        with anyio.CancelScope(shield=True):
            for client in clients:
                await client.close()

    async def __aenter__(self) -> Self:
        # The servers' change streams run in this task group, between enter and exit.
        stack = AsyncExitStack()
        self._tasks = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(self._tasks.cancel_scope.cancel)
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self._tasks = self._stack, None, None
        for scope in self._watching:
            scope.cancel()
        self._watching = []
        try:
            await self.close()
        finally:
            if stack is not None:
                await stack.aclose()


class _ServerToolset(Toolset):
    """One server of a registry, as a member of its combined toolset."""

    remote = True

    def __init__(self, registry: McpToolRegistry, config: McpServerConfig) -> None:
        self.registry = registry
        self.config = config

    @property
    def label(self) -> str:  # pyright: ignore[reportIncompatibleVariableOverride]
        client = self.registry.clients.get(self.config.url)
        return self.config.prefix or (client.label if client is not None else self.config.url)

    async def tools_for(self, ctx: ToolsetContext) -> Sequence[Tool]:
        client = self.registry.clients.get(self.config.url)
        if client is None:
            failure = self.registry.failures.get(self.config.url)
            raise McpConnectionError(f"not connected ({failure or 'not tried'})")
        return await client.live_tools(
            prefix=self.config.prefix, requires_approval=self.config.requires_approval
        )


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
        await registry.discover_tools()
        # The registry as a toolset: names the servers share are settled by its rule, and
        # tools a server adds or removes during the run are seen at the next step.
        options: RunOptions = {
            **agent_options,
            "tools": [*agent_options.get("tools", ()), registry],
        }
        agent = Agent(model, **options)
        return await agent.run(prompt)
