"""toolwire: wire Python functions and MCP servers to any large language model."""

from __future__ import annotations

from ._dialects import (
    CompiledSchema,
    Dialect,
)
from .errors import (
    ArgumentProblem,
    DuplicateToolError,
    RetryableError,
    SchemaError,
    ToolArgumentsError,
    ToolError,
    ToolNameError,
    ToolTimeoutError,
    ToolwireError,
    UnknownToolError,
    UnsupportedError,
)
from .middleware import (
    Hooks,
    Middleware,
    ToolInvocation,
    ToolWrapper,
    apply_middleware,
    compose_hooks,
    with_hooks,
    with_retry,
    with_timeout,
)
from .registry import (
    ToolRegistry,
)
from .results import (
    AudioPart,
    ContentPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
    error_result,
    text_result,
)
from .tools import (
    FunctionTool,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolDefinition,
    as_tool,
    compile_schema,
    tool,
)

__version__ = "0.1.0"

__all__ = [
    "ArgumentProblem",
    "AudioPart",
    "CompiledSchema",
    "ContentPart",
    "Dialect",
    "DuplicateToolError",
    "FunctionTool",
    "Hooks",
    "ImagePart",
    "Middleware",
    "ResourceLinkPart",
    "ResourcePart",
    "RetryableError",
    "SchemaError",
    "TextPart",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentsError",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolNameError",
    "ToolRegistry",
    "ToolResult",
    "ToolTimeoutError",
    "ToolWrapper",
    "ToolwireError",
    "UnknownToolError",
    "UnsupportedError",
    "__version__",
    "apply_middleware",
    "as_tool",
    "compile_schema",
    "compose_hooks",
    "error_result",
    "text_result",
    "tool",
    "with_hooks",
    "with_retry",
    "with_timeout",
]
