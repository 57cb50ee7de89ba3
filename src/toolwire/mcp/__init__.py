"""MCP for toolwire: remote servers' tools as ordinary tools, and toolwire tools served over MCP.

Needs the `mcp` extra (`pip install 'toolwire[mcp]'`). `import toolwire` never imports this
package; `import toolwire.mcp` imports the official `mcp` SDK.
"""

from __future__ import annotations

from . import _requirements  # noqa: F401  # pyright: ignore[reportUnusedImport] - checks the extra first
from ._content import (
    APPROVAL_META_KEY,
    McpAuthError,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpToolSpec,
)
from ._serve_checks import MIN_TOKEN_CHARS
from ._sessions import SessionPolicy
from .client import McpClient, McpTool, StdioServerParameters, from_mcp
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

__all__ = [
    "APPROVAL_META_KEY",
    "LOCAL_HOSTS",
    "MIN_TOKEN_CHARS",
    "McpAuthError",
    "McpClient",
    "McpConnectionError",
    "McpError",
    "McpProtocolError",
    "McpRegistry",
    "McpServerConfig",
    "McpServerInfo",
    "McpTool",
    "McpToolRegistry",
    "McpToolSpec",
    "ProtectedResource",
    "SessionPolicy",
    "StaticMcpRegistry",
    "StdioServerParameters",
    "TokenIntrospection",
    "TokenVerifier",
    "build_server",
    "create_app",
    "from_mcp",
    "run_agent",
    "serve",
]
