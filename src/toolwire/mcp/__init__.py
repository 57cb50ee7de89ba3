"""MCP for toolwire: remote servers' tools as ordinary tools, and toolwire tools served over MCP.

Needs the `mcp` extra (`pip install 'toolwire[mcp]'`). `import toolwire` never imports this
package; `import toolwire.mcp` imports the official `mcp` SDK.
"""

from __future__ import annotations

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
from ._stdio import StdioTransport
from ._transport import HttpTransport, McpClientOptions, McpTransport
from .client import McpClient, McpTarget, McpTool, StdioServerParameters, from_mcp
from .registry import (
    McpRegistry,
    McpServerConfig,
    McpServerInfo,
    McpToolRegistry,
    StaticMcpRegistry,
    run_agent,
)
from .resource_auth import ProtectedResource, TokenIntrospection, TokenVerifier
from .server import LOCAL_HOSTS, build_server, create_app, serve

__all__ = [  # noqa: RUF022 - plain sorted(), as tests/mcp/test_mcp_server.py checks
    "APPROVAL_META_KEY",
    "AsgiTransport",
    "HttpTransport",
    "LOCAL_HOSTS",
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
    "ProtectedResource",
    "StaticMcpRegistry",
    "StdioServerParameters",
    "StdioTransport",
    "TokenIntrospection",
    "TokenVerifier",
    "build_server",
    "create_app",
    "from_mcp",
    "run_agent",
    "serve",
]
