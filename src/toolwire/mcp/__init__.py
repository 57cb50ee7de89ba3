"""MCP for toolwire: remote servers' tools as ordinary tools, and toolwire tools served over MCP.

Needs the `mcp` extra (`pip install 'toolwire[mcp]'`). `import toolwire` never imports this
package; `import toolwire.mcp` imports the official `mcp` SDK.
"""

from __future__ import annotations

# What a server offers besides tools, and what its tools can ask of the client.
from .._tool_client import Elicited, LogLevel, Sampled, ToolClient
from . import _requirements  # noqa: F401  # pyright: ignore[reportUnusedImport] - checks the extra first
from ._asgi import AsgiTransport
from ._content import (
    APPROVAL_META_KEY,
    McpAuthError,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpToolSpec,
)
from ._serve_checks import MIN_TOKEN_CHARS
from ._server_context import release_stream
from ._sessions import SessionPolicy
from ._stdio import StdioTransport
from ._transport import HttpTransport, McpClientOptions, McpTransport
from .client import McpClient, McpTarget, McpTool, StdioServerParameters, from_mcp
from .prompts import Prompt, prompt
from .registry import (
    McpRegistry,
    McpServerConfig,
    McpServerInfo,
    McpToolRegistry,
    StaticMcpRegistry,
    run_agent,
)
from .resource_auth import ProtectedResource, TokenIntrospection, TokenVerifier
from .resources import Resource, ResourceUpdates, resource
from .server import LOCAL_HOSTS, build_server, create_app, serve

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/mcp/test_mcp_server.py checks
    "APPROVAL_META_KEY",
    "AsgiTransport",
    "Elicited",
    "HttpTransport",
    "LOCAL_HOSTS",
    "LogLevel",
    "MIN_TOKEN_CHARS",
    "McpAuthError",
    "McpClient",
    "McpClientOptions",
    "McpConnectionError",
    "McpError",
    "McpProtocolError",
    "McpRegistry",
    "McpServerConfig",
    "McpServerInfo",
    "McpTarget",
    "McpTool",
    "McpToolRegistry",
    "McpToolSpec",
    "McpTransport",
    "Prompt",
    "ProtectedResource",
    "Resource",
    "ResourceUpdates",
    "Sampled",
    "SessionPolicy",
    "StaticMcpRegistry",
    "StdioServerParameters",
    "StdioTransport",
    "TokenIntrospection",
    "TokenVerifier",
    "ToolClient",
    "build_server",
    "create_app",
    "from_mcp",
    "prompt",
    "release_stream",
    "resource",
    "run_agent",
    "serve",
]
