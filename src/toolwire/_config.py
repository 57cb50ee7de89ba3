"""The one configuration of a run: `RunConfig`, `RunOptions` (its options as keywords) and
`LoopConfig` (a run's configuration resolved for the loop).

`Agent(model, **options)`, `run_loop(model, input, **options)` and (through the agent)
`Agent.run_stream` take exactly the fields of `RunConfig`, typed by `RunOptions`; a test compares
the two field by field, so an option cannot exist in one door and be missing in another.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypedDict, Unpack, cast

from typing_extensions import TypeIs

from ._events import StreamSink, Subscriber
from ._handoff import HandoffLike
from ._record import record
from ._run_result import RunResult
from ._steps import StepBackend, ToolTracer
from .budgets import OutputBudget
from .messages import ToolResultMessage
from .middleware import Hooks, ToolWrapper, with_hooks
from .models.base import Model, ModelSettings, OutputMode, ToolCall, ToolChoice
from .native import NativeTool
from .tools import Tool, as_tool
from .usage import RunLimits

if TYPE_CHECKING:
    # Types only: a run reaches tool search and toolsets through the objects it is given
    # (`ToolSearcher`, `Toolset.for_run`), so a run without them never loads their modules.
    from .models.wrappers import RetryPolicy
    from .tool_search import ToolSearch
    from .toolsets import Toolset, ToolsetLike

__all__ = [
    "ApprovalPolicy",
    "LoopConfig",
    "RunConfig",
    "RunOptions",
    "RunTracer",
    "SearchSession",
    "ToolSearcher",
    "build_tools",
    "default_search",
    "is_toolset",
    "native_specs",
]

ApprovalPolicy: TypeAlias = Literal["marked", "destructive"]
"""Which calls pause a run for approval (see `RunConfig.approval_policy`)."""

_APPROVAL_POLICIES = ("marked", "destructive")


class RunOptions(TypedDict, total=False):
    """The options of a run as keyword arguments, each documented on `RunConfig`.

    `Agent(model, **options)` and `run_loop(model, input, **options)` take exactly these.
    """

    name: str
    instructions: str | None
    tools: Sequence[ToolsetLike]
    max_iterations: int
    max_tokens: int | None
    max_cost: Decimal | float | None
    max_seconds: float | None
    raise_on_limit: bool
    max_concurrency: int
    tool_choice: ToolChoice
    settings: ModelSettings | Mapping[str, Any] | None
    hooks: Hooks | None
    on_tool_call: Callable[[ToolCall], Any] | None
    on_tool_result: Callable[[ToolCall, ToolResultMessage], Any] | None
    subscribers: Sequence[Subscriber]
    approval_policy: ApprovalPolicy
    deps: Any
    retry: RetryPolicy | None
    output_type: Any
    output_mode: OutputMode | Literal["auto"]
    output_retries: int
    output_budget: OutputBudget | int | None
    tool_search: ToolSearch | None
    handoffs: Sequence[HandoffLike]


@record(frozen=True, kw_only=True, init=False, slots=False)
class RunConfig:
    """Everything a run is configured with, besides its model and its input.

    Build one to share between agents (`Agent(model, config=config)`), or pass the same options
    as keywords (`Agent(model, max_iterations=4)`); keywords given with a config override it.

    Attributes:
        name: A label for traces and logs.
        instructions: The system prompt, added when the history has none.
        tools: Tools, typed functions, definition dicts and toolsets (a `Toolset`, a
            `ToolRegistry`, an `McpClient`, ...); with a toolset among them the run asks it
            for its tools at every step (see `toolwire.toolsets`).
        max_iterations: Model requests per run, at most.
        max_tokens: Tokens per run, at most.
        max_cost: US dollars per run, at most (needs known prices).
        max_seconds: Wall-clock seconds per run, at most.
        raise_on_limit: Raise `UsageLimitExceeded` when a limit ends a run.
        max_concurrency: Calls of one turn running at once, at most.
        tool_choice: `"auto"`, `"none"`, `"required"` or a tool name (a forced choice applies to
            the first request of a run, then falls back to `"auto"` so the run can end).
        settings: Model settings for every request (a `ModelSettings` or a plain mapping).
        hooks: Hooks around every tool call.
        on_tool_call: Called with each `ToolCall` before it runs; raising turns the exception
            into the call's result.
        on_tool_result: Called with each call and its `ToolResultMessage`; raising turns the
            exception into the call's result.
        subscribers: Receive every run event; a failing one never breaks the run.
        approval_policy: `"marked"` pauses for tools with `requires_approval`; `"destructive"`
            also for tools whose annotations say `destructive_hint`.
        deps: Passed to tools as `ToolContext.deps`.
        retry: The retry policy for model calls: the model is wrapped in a `RetryModel` with it
            (its SDK's own retries must be off, as adapters build them by default); `None`
            leaves the model as it is.
        output_type: The type of the run's answer (a Pydantic model, dataclass, TypedDict,
            primitive, list, union or raw JSON Schema); `RunResult.output` holds it validated.
            `None`: the answer is text.
        output_mode: How the typed answer is asked for: `"native"`, `"tool"`, `"prompted"`, or
            `"auto"` (native where the model has it, else tool); see docs/output.md.
        output_retries: Corrections sent back to the model for an invalid answer before the run
            fails with `OutputValidationError`.
        output_budget: Holds each tool result to a number of tokens (an `OutputBudget`, or
            tokens); a longer result reaches the model cut, with a `read_result` tool to read
            the rest (see docs/context.md). `None`: results are sent whole.
        tool_search: Which tools are deferred and how the model finds them (see
            docs/context.md); `None` defers only the tools marked with `deferred(...)`.
        handoffs: Agents this one may hand the conversation to (agents, or `handoff(agent,
            ...)`); each is offered to the model as a `transfer_to_<name>` tool. See
            docs/agents.md.
    """

    name: str = "agent"
    instructions: str | None = None
    tools: Sequence[ToolsetLike] = ()
    max_iterations: int = 8
    max_tokens: int | None = None
    max_cost: Decimal | float | None = None
    max_seconds: float | None = None
    raise_on_limit: bool = False
    max_concurrency: int = 10
    tool_choice: ToolChoice = "auto"
    settings: ModelSettings | Mapping[str, Any] | None = None
    hooks: Hooks | None = None
    on_tool_call: Callable[[ToolCall], Any] | None = None
    on_tool_result: Callable[[ToolCall, ToolResultMessage], Any] | None = None
    subscribers: Sequence[Subscriber] = ()
    approval_policy: ApprovalPolicy = "marked"
    deps: Any = None
    retry: RetryPolicy | None = None
    output_type: Any = None
    output_mode: OutputMode | Literal["auto"] = "auto"
    output_retries: int = 1
    output_budget: OutputBudget | int | None = None
    tool_search: ToolSearch | None = None
    handoffs: Sequence[HandoffLike] = ()

    def __init__(self, **options: Unpack[RunOptions]) -> None:
        # Only the options given are stored; the others read as the class's defaults. An agent
        # is often built per run, and a frozen dataclass's own `__init__` sets all 24 fields
        # through `object.__setattr__` (most of an agent's construction then); the class
        # still refuses assignment.
        given = _checked(options) if options else {}
        if "settings" not in given:
            given["settings"] = ModelSettings()  # each config has settings of its own, as before
        self._store(given)

    def _store(self, given: dict[str, Any]) -> None:
        values = self.__dict__
        values.update(given)
        if not _LIMIT_NAMES.isdisjoint(given):
            # Built once (RunLimits checks the budgets); no limit given: the shared default.
            # Positional, in the fields' order: keywords would go through a dict.
            values["_limits"] = RunLimits(
                self.max_iterations,
                self.max_tokens,
                self.max_cost,
                self.max_seconds,
                self.raise_on_limit,
            )

    @property
    def limits(self) -> RunLimits:
        """The run's budgets."""
        return self.__dict__.get("_limits", _DEFAULT_LIMITS)

    def replace(self, **options: Unpack[RunOptions]) -> RunConfig:
        """A copy with the given options changed.

        Raises:
            TypeError: an option that does not exist (the message suggests the closest).
        """
        return self.merge(self, options)

    @classmethod
    def merge(cls, config: RunConfig | None, options: Mapping[str, Any]) -> RunConfig:
        """`config` (or the defaults) with `options` laid over it; unknown names are refused."""
        if config is None:
            return cls(**cast(RunOptions, options))
        if not options:
            return config
        merged = object.__new__(cls)
        # The config's options were checked when it was built: only the new ones are.
        merged.__dict__.update(config.__dict__)
        merged._store(_checked(options))
        return merged


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(RunConfig))
_LIMIT_NAMES = frozenset(f.name for f in dataclasses.fields(RunLimits))
_DEFAULT_LIMITS = RunLimits()
# Copied, so a caller's list changed later does not change a configured run.
_COPIED = frozenset(("tools", "subscribers", "handoffs"))


def _checked(options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` checked and normalised (each default is valid, so only given ones are)."""
    if not _OPTION_NAMES.issuperset(options):  # no comprehension built for the usual call
        unknown = [key for key in options if key not in _OPTION_NAMES]
        raise TypeError(_unknown_message(unknown))
    out = dict(options)
    if "max_concurrency" in out and out["max_concurrency"] < 1:
        raise ValueError("max_concurrency must be at least 1")
    if "approval_policy" in out and out["approval_policy"] not in _APPROVAL_POLICIES:
        raise ValueError(
            f"approval_policy must be 'marked' or 'destructive', got {out['approval_policy']!r}"
        )
    for name in _COPIED.intersection(out):
        out[name] = tuple(out[name])
    if "settings" in out:
        out["settings"] = ModelSettings.coerce(out["settings"])
    if "output_budget" in out:
        out["output_budget"] = OutputBudget.coerce(out["output_budget"])
    return out


def _unknown_message(unknown: Sequence[str]) -> str:
    parts: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(key, sorted(_OPTION_NAMES), n=1)
        parts.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return "unknown run option " + ", ".join(parts) + "; the options are the fields of RunConfig"


class RunTracer(Protocol):
    """Wraps whole runs in tracing (`toolwire.telemetry` provides one once instrumented)."""

    async def run(
        self, config: LoopConfig, body: Callable[[LoopConfig], Awaitable[RunResult]]
    ) -> RunResult:
        """Run `body` (the loop) traced, handing it the configuration to run with."""
        ...


class SearchSession(Protocol):
    """One run's tool search, as the loop asks it (`toolwire.tool_search.SearchRun`)."""

    tools: dict[str, Tool]
    """The run's tools, the search tool among them."""

    def select(
        self, tools: list[Tool], natives: list[Any], messages: Sequence[Any]
    ) -> tuple[list[Tool], list[Any]]:
        """The tools and provider-side tools the next request carries."""
        ...

    def offer(self, tools: Mapping[str, Tool]) -> dict[str, Tool]:
        """A toolset step's tools as calls may reach them (the search tool among them)."""
        ...

    def gate(self, name: str, found: Tool | None, messages: Sequence[Any]) -> Tool | None:
        """The tool a call named `name` runs (a deferred one not found yet answers an error)."""
        ...


class ToolSearcher(Protocol):
    """Starts a run's tool search (`toolwire.ToolSearch`)."""

    def start(
        self, model: Any, tools: Mapping[str, Tool], *, toolset: bool = False
    ) -> SearchSession | None:
        """The run's search, or `None` when nothing is deferred."""
        ...


@record
class LoopConfig:
    """A run's `RunConfig` resolved for the loop (`Agent.loop_config` builds one per run).

    Attributes:
        model: The model asked.
        options: The run's configuration, as the caller gave it.
        tools: The tools by name, each wrapped with the configured hooks (the plain tools
            only, when `toolset` is set).
        settings: `options.settings` as `ModelSettings`.
        limits: `options.limits`.
        deps: This run's deps (the configured ones unless the run overrides them).
        subscribers: The configured subscribers and this run's own.
        stream_sink: Where a streamed run's events go; `None` when the run does not stream.
        native_tools: The provider-side tools sent with every request.
        backend: Runs the model and tool steps (durably); `None` runs them in process.
        trace_tool: Runs each tool call (hooks included, an unknown tool's too) inside its
            tracing span; set by the tracer for traced runs.
        tracer: Wraps the run in tracing; `None` when tracing is off.
        delegates: The run can hand over to or call other agents (handoffs, agent tools).
        toolset: Asked for the tools of every step (plain tools included, hooks applied);
            `None` when the tools are fixed (`tools` then holds them all).
        search: Starts the run's tool search: the configured `tool_search`, else the one a
            deferred tool or the toolset brings (`default_search`); `None`: nothing is deferred.
    """

    model: Model
    options: RunConfig
    tools: dict[str, Tool]
    settings: ModelSettings
    limits: RunLimits
    deps: Any = None
    subscribers: Sequence[Subscriber] = ()
    stream_sink: StreamSink | None = None
    native_tools: Sequence[NativeTool] = ()
    backend: StepBackend | None = None
    trace_tool: ToolTracer | None = None
    tracer: RunTracer | None = None
    delegates: bool = False
    toolset: Toolset | None = None
    search: ToolSearcher | None = None


def native_specs(tools: Sequence[ToolsetLike]) -> list[NativeTool]:
    """The provider-side tools among a run's tools (sent with every request, never run here)."""
    found: list[NativeTool] = []
    for tool in tools:  # a loop: a comprehension builds a function (an agent is often per run)
        if isinstance(tool, NativeTool):
            found.append(tool)
    return found


def is_toolset(item: object) -> TypeIs[Toolset]:
    """Whether `item` is a `Toolset` (asked per step), told without importing the toolsets: only
    a toolset has `for_run`, the door a run goes through to them."""
    return getattr(type(item), "for_run", None) is not None


def default_search(tools: Iterable[Tool], toolset: Toolset | None) -> ToolSearcher | None:
    """The tool search of a run with no `tool_search` configured: the one its toolset or a
    deferred tool (through any wrappers) brings, else `None` (nothing is deferred)."""
    if toolset is not None:
        return toolset.default_search()
    for item in tools:
        while isinstance(item, ToolWrapper):
            make: Callable[[], ToolSearcher] | None = getattr(item, "default_search", None)
            if make is not None:
                return make()
            item = item.wrapped
    return None


def build_tools(tools: Sequence[ToolsetLike], hooks: Hooks | None) -> dict[str, Tool]:
    """Tools by name, each wrapped with the run's hooks; duplicate names are refused."""
    out: dict[str, Tool] = {}
    for item in tools:
        if isinstance(item, NativeTool) or is_toolset(item):
            # Natives are run by the provider (`native_specs` keeps them for every request);
            # toolsets are asked each step (`LoopConfig.toolset`).
            continue
        resolved = as_tool(item)
        if resolved.name in out:
            raise ValueError(f"two tools are named {resolved.name!r}")
        out[resolved.name] = with_hooks(resolved, hooks) if hooks is not None else resolved
    return out
