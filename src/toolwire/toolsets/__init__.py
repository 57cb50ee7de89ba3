"""Toolsets: tools asked for per step of a run, composed from small wrappers.

```python
from toolwire.toolsets import CombinedToolset, FunctionToolset

math = FunctionToolset([add, multiply], label="math")
tools = CombinedToolset(math.prefixed("m"), registry, mcp_client, on_conflict="prefix")
agent = Agent(model, tools=[tools])
```

A `Toolset` answers `await toolset.tools_for(ctx)` each step; `filtered`, `prefixed`, `renamed`
and `prepared` wrap one; `CombinedToolset` joins several and settles name conflicts by the
caller's rule. `ToolRegistry`, `McpClient` and `McpToolRegistry` are toolsets, and
`Agent(tools=[...])` takes toolsets beside plain tools.
"""

from ._base import (
    CombinedToolset,
    FilteredToolset,
    FunctionToolset,
    OnConflict,
    PrefixedToolset,
    Prepare,
    PreparedToolset,
    RenamedTool,
    RenamedToolset,
    StepTools,
    Toolset,
    ToolsetContext,
    ToolsetLike,
    WrapperToolset,
    as_toolset,
    run_toolset,
    same_tools,
)

__all__ = [
    "CombinedToolset",
    "FilteredToolset",
    "FunctionToolset",
    "OnConflict",
    "PrefixedToolset",
    "Prepare",
    "PreparedToolset",
    "RenamedTool",
    "RenamedToolset",
    "StepTools",
    "Toolset",
    "ToolsetContext",
    "ToolsetLike",
    "WrapperToolset",
    "as_toolset",
    "run_toolset",
    "same_tools",
]
