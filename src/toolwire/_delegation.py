"""Agents that use agents, as the loop sees them: a run's place in a tree of agents.

A run that can delegate (it has agent tools or handoffs) or that an agent tool started gets a
`RunNode`, current (a context variable) while it runs so the tools it calls find it:

- a transfer tool asks its node to hand over; after the turn the loop lets the node switch the run
  to the next agent (its model, instructions, tools, output type), the history filtered as the
  handoff says. The run stays one run: its limits, iterations, events and steps carry on, so a
  cycle of handoffs ends on the run's limits. A run continued from a history (a resumed or a
  follow-up run) follows the handoffs the history records and goes on with the agent that had it.
- an agent tool runs a sub-run as a child node: the child's usage and cost are added to the
  parent's (so the parent's limits count them), per agent too, and its trace hangs under the
  calling tool call. A child that pauses for a decision pauses the parent (see `RunNode._pause`).

The loop calls this module at a handful of points (`entered`, `turn_done`, `finish`,
`inline_step`, `resume_plan`); a run that delegates nothing pays one attribute test per point.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

from ._config import LoopConfig
from ._handoff import Handoff, as_handoff
from ._record import record
from ._run_result import PendingCall, RunResult, StopReason, TraceEntry, dump_result, load_result
from ._steps import Turnstile
from ._util import maybe_await
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    dump_history,
    load_history,
)
from .middleware import ToolWrapper
from .models.base import ToolCall, ToolChoice
from .output import RunOutput
from .results import TextPart, ToolResult, error_result
from .tools import FunctionTool, Tool, ToolContext, tool
from .usage import Usage, estimate_cost

__all__ = [
    "PAUSED_KEY",
    "DelegatingTool",
    "Launch",
    "Resumption",
    "RunNode",
    "current",
    "entered",
    "inline_step",
    "landed",
    "launching",
    "needs_node",
    "runs_agent",
    "transfer_tool",
]

_CURRENT: contextvars.ContextVar[RunNode | None] = contextvars.ContextVar(
    "toolwire_run_node", default=None
)
"""The node of the run whose tools are running (each task sees its own run's)."""

_LAUNCH: contextvars.ContextVar[Launch | None] = contextvars.ContextVar(
    "toolwire_launch", default=None
)
"""Set by an agent tool around the sub-run it starts: the run reads it as its parent."""

_NO_NODE: contextlib.nullcontext[None] = contextlib.nullcontext()

PAUSED_KEY = "toolwire/paused"
"""Where a turn paused inside sub-runs keeps their state and its finished calls' results."""


class _State(Protocol):
    """The loop's run state, as far as this module reads and changes it."""

    config: LoopConfig
    messages: list[Message]
    start: int
    priced: list[tuple[str, str | None, Usage]]
    trace: list[TraceEntry]
    pending: list[PendingCall]
    stop_reason: StopReason
    tool_choice: ToolChoice
    output: RunOutput | None
    request_tools: list[Tool]
    request_natives: list[Any]
    iterations: int
    node: RunNode | None

    @property
    def usage(self) -> Usage:
        """The priced requests' usage, summed."""
        ...

    def use_tools(self, config: LoopConfig) -> None: ...


class DelegatingTool(ToolWrapper):
    """Marks a tool that runs an agent (`Agent.as_tool` builds one): under a durable backend
    its sub-run's own model and tool steps are the checkpoints, not the call as a whole."""


@record
class Resumption:
    """A paused sub-run to go on with: its history and the decisions meant for it."""

    messages: list[Message]
    approvals: dict[str, bool | str]
    results: dict[str, Any]


@record
class Launch:
    """An agent tool's sub-run about to start.

    Attributes:
        parent: The calling run's node.
        call_id: The calling tool call.
        child: The sub-run's node, once it started.
    """

    parent: RunNode
    call_id: str
    child: RunNode | None = None


def current() -> RunNode | None:
    """The node of the run whose tool is running, if that run delegates."""
    return _CURRENT.get()


def launching(launch: Launch) -> contextvars.Token[Launch | None]:
    """Make the next run started in this context `launch.parent`'s child."""
    return _LAUNCH.set(launch)


def landed(token: contextvars.Token[Launch | None]) -> None:
    """Undo `launching` once the sub-run is over."""
    _LAUNCH.reset(token)


def runs_agent(item: Tool) -> bool:
    """Whether `item` runs an agent (through any wrappers)."""
    while isinstance(item, ToolWrapper):
        if isinstance(item, DelegatingTool):
            return True
        item = item.wrapped
    return False


class RunNode:
    """One run in a tree of agents: who holds the conversation and what the sub-runs spent."""

    def __init__(self, state: _State, parent: RunNode | None) -> None:
        self.state = state
        self.parent = parent
        name = state.config.options.name
        self.path: list[str] = [name]
        self.handoffs = _handoffs_of(state.config)
        self.requested: dict[str, Handoff] = {}  # call id -> the handoff it asks for
        # Which agent spent each model request: the agent active from a priced index on, and
        # the requests a sub-run added (by index).
        self.switches: list[tuple[int, str]] = [(0, name)]
        self.absorbed: dict[int, str] = {}
        self.children: dict[str, list[TraceEntry]] = {}
        # Sub-runs of this turn that stopped for a decision, and those a resumed turn goes on.
        self.paused: dict[str, RunResult] = {}
        self.resuming: dict[str, Resumption] = {}

    # -- handoffs

    def request_handoff(self, chosen: Handoff, call_id: str) -> ToolResult | str:
        """A transfer tool's call: remember the handoff for the end of the turn."""
        known = self.handoffs.get(chosen.tool_name)
        if known is None or known.agent is not chosen.agent:
            return error_result(f"{self.path[-1]!r} cannot hand over to {chosen.agent.name!r}")
        self.requested[call_id] = chosen
        return f"Transferred to {chosen.agent.name}; it answers from now on."

    def _first_request(self) -> Handoff | None:
        """The turn's first handoff, in call order (calls may finish in any order); the
        others' results become errors."""
        requested, self.requested = self.requested, {}
        if not requested:
            return None
        state = self.state
        at = max(i for i, m in enumerate(state.messages) if isinstance(m, AssistantMessage))
        turn = state.messages[at]
        assert isinstance(turn, AssistantMessage)
        order = [c.id for c in turn.tool_calls if c.id in requested]
        if not order:
            return None
        first = requested[order[0]]
        refused = set(order[1:])
        if refused:
            why = (
                f"Error: the conversation was handed to {first.agent.name!r}; one handoff per turn"
            )
            for i in range(at + 1, len(state.messages)):
                message = state.messages[i]
                if isinstance(message, ToolResultMessage) and message.call_id in refused:
                    state.messages[i] = dataclasses.replace(
                        message, content=[TextPart(why)], is_error=True
                    )
            for entry in state.trace:
                if entry.call_id in refused:
                    entry.result, entry.is_error = why, True
        return first

    async def turn_done(self) -> bool:
        """After a turn: pause for a sub-run's decisions, or take a requested handoff. True when
        the run must stop here."""
        if self.paused:
            self._pause()
            return True
        chosen = self._first_request()
        if chosen is None:
            return False
        state = self.state
        messages = list(state.messages)
        if chosen.history is not None:
            messages = list(await maybe_await(chosen.history(messages)))
        self._adopt(chosen)
        config = state.config
        # The next agent's own instructions stand where the previous agent's were.
        messages = [m for m in messages if not isinstance(m, SystemMessage)]
        system: list[Message] = []
        if config.options.instructions:
            system.append(SystemMessage(config.options.instructions))
        if state.output is not None:
            note = state.output.instructions()
            if note is not None:
                system.append(note)
        kept = len(state.messages) - state.start  # what this run added, before the filter
        state.messages = [*system, *messages]
        state.start = max(0, len(state.messages) - kept) if chosen.history is None else 0
        return False

    def follow(self, messages: Sequence[Message]) -> None:
        """Go on with the agent the history's handoffs left the conversation with."""
        for message in messages:
            if isinstance(message, ToolResultMessage) and not message.is_error:
                chosen = self.handoffs.get(message.name)
                if chosen is not None:
                    self._adopt(chosen)

    def _adopt(self, chosen: Handoff) -> None:
        state = self.state
        current_config = state.config
        target: LoopConfig = chosen.agent.loop_config(deps=current_config.deps)
        model = target.model
        if current_config.trace_tool is not None:
            from ._otel import TracedModel  # tracing is on: opentelemetry is installed

            tracer: Any = current_config.tracer
            model = TracedModel(model, tracer)
        # The run's own settings carry on: its limits, events, steps and tracing.
        config = dataclasses.replace(
            target,
            model=model,
            deps=current_config.deps,
            subscribers=current_config.subscribers,
            stream_sink=current_config.stream_sink,
            backend=current_config.backend,
            trace_tool=current_config.trace_tool,
            tracer=current_config.tracer,
            limits=current_config.limits,
        )
        options = config.options
        state.tool_choice = options.tool_choice
        state.output = (
            RunOutput(options.output_type, options.output_mode, options.output_retries, model)
            if options.output_type is not None
            else None
        )
        state.use_tools(config)  # its tools, toolset, tool search and output budget
        self.handoffs = _handoffs_of(config)
        self.path.append(options.name)
        self.switches.append((len(state.priced), options.name))

    # -- sub-runs

    def _pause(self) -> None:
        """Stop the run for the decisions its paused sub-runs wait on.

        The turn's calls that finished keep their results, and each paused sub-run its state, on
        the turn itself (under `toolwire/paused` in its `provider_state`, which no adapter
        sends): the turn is the history's last message again, its calls open, so a resume of
        the history (plain, streamed or durable) finds everything there.
        """
        state = self.state
        paused, self.paused = self.paused, {}
        at = max(i for i, m in enumerate(state.messages) if isinstance(m, AssistantMessage))
        turn = state.messages[at]
        assert isinstance(turn, AssistantMessage)
        done = [
            m
            for m in state.messages[at + 1 :]
            if isinstance(m, ToolResultMessage) and m.call_id not in paused
        ]
        stash = {
            "subruns": {call_id: dump_result(sub) for call_id, sub in paused.items()},
            "done": json.loads(dump_history(done)),
        }
        provider_state = {**(turn.provider_state or {}), PAUSED_KEY: stash}
        state.messages[at:] = [dataclasses.replace(turn, provider_state=provider_state)]
        # This turn's entries only: a call id may come back in another turn of a long run.
        turn_calls = {c.id for c in turn.tool_calls}
        state.trace[:] = [
            t
            for t in state.trace
            if not (
                t.call_id in paused and t.call_id in turn_calls and t.iteration == state.iterations
            )
        ]
        for call_id in paused:
            self.children.pop(call_id, None)
        pending: list[PendingCall] = []
        for call_id, sub in paused.items():
            for waiting in sub.pending:
                call = waiting.call
                nested = ToolCall(f"{call_id}/{call.id}", call.name, call.arguments)
                pending.append(PendingCall(nested, waiting.reason, waiting.computer))
        state.pending = pending
        approval = any(p.reason == "approval" for p in pending)
        state.stop_reason = "approval_required" if approval else "external_calls"

    def resume_plan(
        self, approvals: Mapping[str, bool | str] | None, results: Mapping[str, Any] | None
    ) -> tuple[Mapping[str, bool | str] | None, Mapping[str, Any] | None]:
        """Decisions for a turn paused inside sub-runs: the nested ones (`"<call>/<id>"`) go
        to the sub-runs, which the turn's calls resume; the calls that had finished keep their
        results."""
        state = self.state
        last = state.messages[-1] if state.messages else None
        if not isinstance(last, AssistantMessage) or PAUSED_KEY not in (last.provider_state or {}):
            return approvals, results
        assert last.provider_state is not None
        stash: dict[str, Any] = last.provider_state[PAUSED_KEY]
        rest = {k: v for k, v in last.provider_state.items() if k != PAUSED_KEY}
        state.messages[-1] = dataclasses.replace(last, provider_state=rest or None)
        decided = dict(approvals or {})
        answers = dict(results or {})
        undecided: list[str] = []
        raw_subruns: dict[str, Any] = stash["subruns"]
        for call_id, raw in raw_subruns.items():
            sub = load_result(raw)
            prefix = f"{call_id}/"
            mine = {
                k.removeprefix(prefix): decided.pop(k)
                for k in list(decided)
                if k.startswith(prefix)
            }
            given = {
                k.removeprefix(prefix): answers.pop(k)
                for k in list(answers)
                if k.startswith(prefix)
            }
            undecided += [
                f"{prefix}{p.call.id} ({p.call.name}: needs "
                f"{'approval' if p.reason == 'approval' else 'a result'})"
                for p in sub.pending
                if p.call.id not in mine and p.call.id not in given
            ]
            self.resuming[call_id] = Resumption(sub.messages, mine, given)
            decided.setdefault(call_id, True)  # the call ran already: its approval stands
        if undecided:
            raise ValueError("cannot resume; undecided calls: " + ", ".join(undecided))
        for message in load_history(json.dumps(stash["done"])):
            if isinstance(message, ToolResultMessage):
                answers[message.call_id] = ToolResult(
                    content=list(message.content),
                    is_error=message.is_error,
                    structured=message.structured,
                )
        return decided, answers

    def absorb(self, child: RunNode, call_id: str) -> None:
        """Add a finished sub-run's spending (per agent) and trace to this run."""
        state, sub = self.state, child.state
        at = len(state.priced)  # the run's usage sums its priced requests, these included
        for i in range(len(sub.priced)):
            self.absorbed[at + i] = child.agent_at(i)
        state.priced.extend(sub.priced)
        self.children[call_id] = list(sub.trace)

    def agent_at(self, index: int) -> str:
        """The agent that spent model request `index` of this run (or of its sub-runs)."""
        name = self.absorbed.get(index)
        if name is not None:
            return name
        for start, agent in reversed(self.switches):
            if index >= start:
                return agent
        return self.path[0]

    def remaining(self, limits: Any) -> dict[str, Any]:
        """A sub-run's budgets: its own, cut to what this run (and its callers) have left."""
        out: dict[str, Any] = {}
        node: RunNode | None = self
        while node is not None:
            state = node.state
            mine = state.config.limits
            if mine.max_tokens is not None:
                left = max(0, mine.max_tokens - state.usage.total_tokens)
                out["max_tokens"] = min(out.get("max_tokens", left), left)
            if mine.max_cost is not None:
                spent = estimate_cost(state.priced).total or Decimal(0)
                left_cost = max(Decimal(0), Decimal(str(mine.max_cost)) - spent)
                out["max_cost"] = min(out.get("max_cost", left_cost), left_cost)
            node = node.parent
        if limits.max_tokens is not None:
            out["max_tokens"] = min(out.get("max_tokens", limits.max_tokens), limits.max_tokens)
        if limits.max_cost is not None:
            own = Decimal(str(limits.max_cost))
            out["max_cost"] = min(out.get("max_cost", own), own)
        return out

    # -- the result

    def finish(self, result: RunResult) -> RunResult:
        """The run's result with who answered, the path and the spending per agent."""
        state = self.state
        usage: dict[str, Usage] = {}
        priced: dict[str, list[tuple[str, str | None, Usage]]] = {}
        for i, entry in enumerate(state.priced):
            agent = self.agent_at(i)
            usage[agent] = usage.get(agent, Usage()) + entry[2]
            priced.setdefault(agent, []).append(entry)
        for entry in result.trace:
            children = self.children.get(entry.call_id)
            if children is not None:
                entry.children = children
        return dataclasses.replace(
            result,
            agent=state.config.options.name,
            agent_path=list(self.path),
            usage_by_agent=usage,
            cost_by_agent={agent: estimate_cost(items) for agent, items in priced.items()},
        )


def _handoffs_of(config: LoopConfig) -> dict[str, Handoff]:
    out: dict[str, Handoff] = {}
    for item in config.options.handoffs:
        chosen = as_handoff(item)
        out[chosen.tool_name] = chosen
    return out


def needs_node(config: LoopConfig) -> bool:
    """Whether a run of `config` can delegate: it has handoffs or an agent tool."""
    return config.delegates


def entered(state: _State) -> contextlib.AbstractContextManager[RunNode | None]:
    """While the run runs: its node current, when it delegates or a sub-run is starting."""
    launch = _LAUNCH.get()
    if launch is None and not needs_node(state.config):
        return _NO_NODE
    if launch is not None:
        # Consumed: a run the sub-run's own tools start is not this launch's child.
        _LAUNCH.set(None)
    return _Entered(state, launch)


class _Entered(contextlib.AbstractContextManager[RunNode | None]):
    """The run's node made and current; the launch told of it; the history's handoffs followed."""

    def __init__(self, state: _State, launch: Launch | None) -> None:
        self._state = state
        self._launch = launch
        self._token: contextvars.Token[RunNode | None] | None = None

    def __enter__(self) -> RunNode:
        state, launch = self._state, self._launch
        node = RunNode(state, launch.parent if launch is not None else None)
        state.node = node
        self._token = _CURRENT.set(node)
        if launch is not None:
            launch.child = node
        if node.handoffs:
            node.follow(state.messages)
        return node

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)


async def inline_step(
    gate: tuple[Turnstile, int] | None,
    run: Callable[[], Awaitable[tuple[ToolResultMessage, BaseException | None]]],
) -> ToolResultMessage:
    """An agent tool's call under a durable backend: its sub-run's steps are the checkpoints.

    It holds the turn's gate until the sub-run ends, so every step keeps its place on a replay
    (the turn's later calls wait for it).
    """
    if gate is None:
        return (await run())[0]
    await gate[0].wait(gate[1])
    try:
        return (await run())[0]
    finally:
        gate[0].advance()


def transfer_tool(chosen: Handoff) -> FunctionTool:
    """The tool the model calls to hand the conversation over."""

    def transfer(ctx: ToolContext) -> ToolResult | str:
        node = _CURRENT.get()
        if node is None:
            return error_result("a handoff works only inside an agent's run")
        return node.request_handoff(chosen, ctx.call_id or chosen.tool_name)

    return tool(transfer, name=chosen.tool_name, description=chosen.description)
