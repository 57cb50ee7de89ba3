"""The public surface of `toolwire` is explicit: this list changes only on purpose."""

from __future__ import annotations

import subprocess
import sys

import toolwire

EXPECTED = [
    "Agent",
    "AgentTool",
    "ArgumentProblem",
    "AssistantMessage",
    "Attempt",
    "AudioPart",
    "AuthInfo",
    "CachePolicy",
    "CachedModel",
    "Citation",
    "CombinedToolset",
    "CompiledSchema",
    "Completion",
    "CompletionDone",
    "ComputerAction",
    "ComputerCall",
    "ContentPart",
    "Cost",
    "Dialect",
    "DuplicateToolError",
    "FallbackModel",
    "FilePart",
    "FilteredToolset",
    "FunctionCallCompleted",
    "FunctionCallStarted",
    "FunctionModel",
    "FunctionTool",
    "FunctionToolset",
    "Handoff",
    "Hooks",
    "ImagePart",
    "McpAuthError",
    "McpConnectionError",
    "McpError",
    "McpProtocolError",
    "MemoryStore",
    "Message",
    "Middleware",
    "MissingApiKeyError",
    "MissingDependencyError",
    "Model",
    "ModelBase",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelRequestsForbidden",
    "ModelResponseError",
    "ModelResponseEvent",
    "ModelSettings",
    "ModelStreamError",
    "NativeTool",
    "OutputBudget",
    "OutputSpec",
    "OutputType",
    "OutputValidationError",
    "ParseResult",
    "PartialOutput",
    "PendingCall",
    "PrefixedToolset",
    "PreparedToolset",
    "ReasoningBlock",
    "ReasoningDelta",
    "RenamedToolset",
    "ResourceLinkPart",
    "ResourcePart",
    "RetryModel",
    "RetryPolicy",
    "RetryableError",
    "RetryableModelError",
    "RunCompleted",
    "RunConfig",
    "RunEvent",
    "RunOptions",
    "RunResult",
    "RunStream",
    "RunsDatabaseError",
    "SchemaError",
    "ScriptedModel",
    "ServerToolCallBlock",
    "ServerToolResultBlock",
    "StopReason",
    "SystemMessage",
    "TestModel",
    "TextBlock",
    "TextDelta",
    "TextPart",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallBlock",
    "ToolCallDelta",
    "ToolContext",
    "ToolCost",
    "ToolDefinition",
    "ToolError",
    "ToolInvocation",
    "ToolNameConflictError",
    "ToolNameError",
    "ToolRegistry",
    "ToolResult",
    "ToolResultMessage",
    "ToolSearch",
    "ToolTimeoutError",
    "ToolWrapper",
    "Toolset",
    "ToolsetContext",
    "ToolwireError",
    "TraceEntry",
    "UnknownToolError",
    "UnsupportedError",
    "Usage",
    "UsageLimitExceeded",
    "UserMessage",
    "WrapperToolset",
    "__version__",
    "allow_model_requests",
    "apply_middleware",
    "as_tool",
    "as_toolset",
    "code_execution",
    "compile_schema",
    "compose_hooks",
    "computer_result",
    "computer_use",
    "deferred",
    "dump_history",
    "error_result",
    "forbid_model_requests",
    "handoff",
    "load_history",
    "model",
    "repair_history",
    "run_loop",
    "text_result",
    "tool",
    "tool_cost",
    "web_fetch",
    "web_search",
    "with_hooks",
    "with_retry",
    "with_timeout",
    "without_tool_calls",
]


def test_all_is_the_expected_sorted_list() -> None:
    assert toolwire.__all__ == EXPECTED
    assert sorted(toolwire.__all__) == toolwire.__all__


def test_every_public_name_exists() -> None:
    missing = [name for name in toolwire.__all__ if not hasattr(toolwire, name)]
    assert missing == []


def test_no_public_name_outside_all() -> None:
    public = {
        name
        for name, value in vars(toolwire).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("toolwire")
    }
    assert public <= set(toolwire.__all__)


def test_import_pulls_in_no_provider_sdk() -> None:
    code = (
        "import sys, toolwire\n"
        "bad = [m for m in ('openai', 'anthropic', 'google.genai', 'mistralai', 'mcp') "
        "if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_names_load_on_first_use() -> None:
    code = (
        "import sys, toolwire\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolwire')))\n"
        "toolwire.Agent\n"
        "print('toolwire._loop' in sys.modules, 'Agent' in vars(toolwire), 'Agent' in dir(toolwire))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # `import toolwire` loads itself and the lazy-name helper (standard library only), nothing else.
    assert out.stdout.splitlines() == ["['toolwire', 'toolwire._lazy']", "True True True"]
