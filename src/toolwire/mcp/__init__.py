"""MCP for toolwire: remote servers' tools as ordinary tools, and toolwire tools served over MCP.

Needs the `mcp` extra (`pip install 'toolwire[mcp]'`). `import toolwire` never imports this
package; `import toolwire.mcp` checks that the official `mcp` SDK is installed, and each name
imports its module (and the SDK) on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

# Checks the extra first, so a missing `mcp` says how to install it whatever name is asked for.
from . import _requirements  # noqa: F401  # pyright: ignore[reportUnusedImport]

if TYPE_CHECKING:
    # What a server offers besides tools, and what its tools can ask of the client.
    from .._tool_client import Elicited, LogLevel, Sampled, ToolClient
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

_HOMES: dict[str, str] = {
    "APPROVAL_META_KEY": "._content",
    "AsgiTransport": "._asgi",
    "Elicited": ".._tool_client",
    "HttpTransport": "._transport",
    "LOCAL_HOSTS": ".server",
    "LogLevel": ".._tool_client",
    "MIN_TOKEN_CHARS": "._serve_checks",
    "McpAuthError": "._content",
    "McpClient": ".client",
    "McpClientOptions": "._transport",
    "McpConnectionError": "._content",
    "McpError": "._content",
    "McpProtocolError": "._content",
    "McpRegistry": ".registry",
    "McpServerConfig": ".registry",
    "McpServerInfo": ".registry",
    "McpTarget": ".client",
    "McpTool": ".client",
    "McpToolRegistry": ".registry",
    "McpToolSpec": "._content",
    "McpTransport": "._transport",
    "Prompt": ".prompts",
    "ProtectedResource": ".resource_auth",
    "Resource": ".resources",
    "ResourceUpdates": ".resources",
    "Sampled": ".._tool_client",
    "SessionPolicy": "._sessions",
    "StaticMcpRegistry": ".registry",
    "StdioServerParameters": ".client",
    "StdioTransport": "._stdio",
    "TokenIntrospection": ".resource_auth",
    "TokenVerifier": ".resource_auth",
    "ToolClient": ".._tool_client",
    "build_server": ".server",
    "create_app": ".server",
    "from_mcp": ".client",
    "prompt": ".prompts",
    "release_stream": "._server_context",
    "resource": ".resources",
    "run_agent": ".registry",
    "serve": ".server",
}
"""Each public name -> the module that defines it. Imported on first use, so a server
(`toolwire serve`, `create_app`) loads none of the client's modules and a client none of the
server's."""


__getattr__, __dir__ = _lazy.lazy_names(globals(), _HOMES)
