"""The agent loop as small async functions: ask the model, run the calls, repeat.

Invariant (checked before every model request): every tool call in the history has exactly one
result. The loop keeps it by construction (results of a turn are appended together, in call order,
even when the turn is cancelled or a limit cuts it short) and repairs a history a caller hands in.
Per-round work is proportional to the round, never to the length of the history.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Coroutine, Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import Any, cast

import anyio

from . import _delegation
from ._collector import runs_in_flight
from ._config import LoopConfig
from ._events import (
    FunctionCallCompleted,
    FunctionCallStarted,
    ModelRequestEvent,
    ModelResponseEvent,
    RunCompleted,
    RunEvent,
)
from ._logctx import CALL_ID, in_run
from ._pause import decided_calls, pending_calls
from ._repair import missing_result, prepare_history
from ._run_log import log_answer, log_call
from ._run_result import PendingCall, RunResult, StopReason, TraceEntry
from ._steps import Turnstile
from ._util import each_at_once, maybe_await
from .budgets import OutputBudget
from .computer import answerable_calls
from .errors import ModelResponseError, UsageLimitExceeded
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from .models.base import (
    Completion,
    CompletionDone,
    Model,
    ModelRequest,
    OutputSpec,
    StreamEvent,
    ToolCall,
    ToolChoice,
    Usage,
    aclose_events,
    check_call_ids,
)
from .output import RunOutput
from .results import TextPart, error_result
from .tokens import RequestSizer
from .tools import Tool, ToolContext
from .usage import estimate_cost, estimate_later, sum_usages

__all__ = ["run"]

logger = logging.getLogger("toolwire")

_CLOSE_TIMEOUT = 5.0
"""Seconds a cancelled run waits for the model's stream to close."""

_NONE_DECIDED: Mapping[str, ToolResultMessage] = MappingProxyType({})
_NO_USAGE = Usage()
"""What a run that has made no request has spent (never handed out: `result` makes its own)."""
"""A turn with no call decided before it runs (the usual case): one read-only empty mapping."""


def _ids_look_unique(calls: Sequence[ToolCallBlock]) -> bool:
    """The common cases of the call-id check without building anything (it runs every round)."""
    if len(calls) == 1:
        return bool(calls[0].id)
    ids = {call.id for call in calls}
    return len(ids) == len(calls) and "" not in ids


class _Run:
    """The mutable state of one run."""

    def __init__(self, config: LoopConfig, messages: list[Message], start: int) -> None:
        self.config = config
        self.messages = messages
        self.start = start  # index of the first message this run added
        # Each model request's (provider, model, usage), sub-runs' included; `usage` sums them
        # when read (summing per request was a good share of a request's bookkeeping).
        self.priced: list[tuple[str, str | None, Usage]] = []
        self._usage = _NO_USAGE
        self._summed = 0
        self.trace: list[TraceEntry] = []
        self.iterations = 0
        self.pending: list[PendingCall] = []
        self.stop_reason: StopReason = "completed"
        self.tool_choice = config.options.tool_choice
        self.deadline: float | None = None
        self.open_calls: Sequence[ToolCallBlock] = ()  # a turn's calls until each has a result
        self.output: RunOutput | None = None
        options = config.options
        if options.output_type is not None:
            self.output = RunOutput(
                options.output_type, options.output_mode, options.output_retries, config.model
            )
        # Ties this run's log records together: 16 random hex digits, as a uuid4's first 16
        # were (one system call, without the UUID object).
        self.run_id = os.urandom(8).hex()
        self.use_tools(config)
        self.sizer = RequestSizer()  # the definitions-vs-messages estimate on each usage
        # An unobserved run builds no events at all (most runs: no subscriber, not streamed).
        self.observed = bool(config.subscribers) or config.stream_sink is not None
        self.node: _delegation.RunNode | None = None  # set when the run delegates to agents

    # -- events

    async def emit(self, event: RunEvent) -> None:
        for subscriber in self.config.subscribers:
            try:
                await maybe_await(subscriber(event))
            except Exception:
                # A failing subscriber must never break the run; it is logged for its author.
                logger.exception(
                    "toolwire: event subscriber %r failed on %s", subscriber, event.type
                )
        if self.config.stream_sink is not None:
            await self.config.stream_sink(event)

    @property
    def usage(self) -> Usage:
        """Summed over the run's model requests (sub-runs' included), as far as they went."""
        priced = self.priced
        if self._summed < len(priced):
            usages = [self._usage] if self._summed else []
            for entry in priced[self._summed :]:  # a loop: a comprehension builds a function
                usages.append(entry[2])
            self._usage = sum_usages(usages)
            self._summed = len(priced)
        return self._usage

    @property
    def model_label(self) -> str:
        """The model as an error message names it."""
        model = self.config.model
        return f"{model.provider} ({type(model).__name__})"

    # -- the result

    def result(self) -> RunResult:
        text = ""
        if self.stop_reason == "completed":
            last = self.messages[-1] if self.messages else None
            if isinstance(last, AssistantMessage):
                text = last.text
        cost = estimate_cost(self.priced)
        self.sizer.freeze()  # the caller gets the history list: the estimates keep what was sent
        name = self.config.options.name
        usage = self.usage if self.priced else Usage()
        result = RunResult(
            text=text,
            messages=self.messages,
            new_messages=self.messages[self.start :],
            usage=usage,
            cost=cost,
            trace=self.trace,
            stop_reason=self.stop_reason,
            pending=self.pending,
            iterations=self.iterations,
            output=self.output.value if self.output is not None else None,
            refusal=self.output.refusal if self.output is not None else None,
            agent=name,
            agent_path=[name],
            usage_by_agent={name: usage},
            cost_by_agent={name: cost},
        )
        return result if self.node is None else self.node.finish(result)

    def timed_out(self) -> bool:
        return self.deadline is not None and anyio.current_time() >= self.deadline

    # -- the rounds

    def limit_reached(self) -> StopReason | None:
        limits = self.config.limits
        if self.iterations >= limits.max_iterations:
            return "max_iterations"
        if limits.max_tokens is not None and self.usage.total_tokens >= limits.max_tokens:
            return "token_limit"
        if limits.max_cost is not None:
            cost = estimate_cost(self.priced)
            if cost.total is not None and cost.total >= Decimal(str(limits.max_cost)):
                return "cost_limit"
        return None

    async def ask(self) -> Completion:
        config = self.config
        if self.open_calls:
            # Unreachable through the loop itself; kept as the invariant's last line of defence.
            for call in self.open_calls:
                self.messages.append(missing_result(call, "no result was recorded for this call"))
            self.open_calls = ()
        self.iterations += 1
        if config.toolset is not None:
            await self.step_tools()
        if self.observed:
            await self.emit(ModelRequestEvent(self.iterations, len(self.messages)))
        choice = self.tool_choice
        native = None
        if self.output is not None:
            choice = self.output.tool_choice(choice)
            native = self.output.native_spec()
        tools, natives = self.request_tools, self.request_natives
        if self.search is not None:
            tools, natives = self.search.select(tools, natives, self.messages)
        # No closure here: a lambda would turn these locals into cells in every round's frame.
        if config.backend is not None:
            completion = await config.backend.model_step(
                functools.partial(self._request, choice, native, tools, natives)
            )
        else:
            completion = await self._request(choice, native, tools, natives)
        # Recorded once answered (the history and tools are as they were sent: only the loop
        # changes them), so the estimate is not kept alive while the model answers.
        estimate = self.sizer.request(tools, self.messages)  # worked out only if read
        completion.usage = estimate_later(completion.usage, estimate)
        # Priced by the provider that answered: a fallback model may have answered through
        # another provider than the one it is named after.
        provider = completion.message.provider or config.model.provider
        self.priced.append((provider, completion.model, completion.usage))
        if logger.isEnabledFor(logging.DEBUG):
            log_answer(self.run_id, self.iterations, provider, completion)
        if self.observed:
            await self.emit(ModelResponseEvent(self.iterations, completion))
        return completion

    def use_tools(self, config: LoopConfig) -> None:
        """The run's tools from `config` (at the start, and after a handoff): fixed ones, built
        once and shared by every request, or a toolset asked each step (`step_tools`); the
        deferred ones searched for (`tool_search`), each result held to its budget."""
        options = config.options
        # Deferred tools and the search for them (None: nothing is deferred, nothing changes).
        search = config.search
        self.search = (
            search.start(config.model, config.tools, toolset=config.toolset is not None)
            if search is not None
            else None
        )
        # The search tool is reached by calls; `select` adds it to the requests that need it.
        self.request_tools: list[Tool] = list(config.tools.values())
        if self.search is not None:
            config = dataclasses.replace(config, tools=self.search.tools)
        self.config = config
        self.tools: Mapping[str, Tool] = config.tools
        self.toolset = config.toolset.step_tools() if config.toolset is not None else None
        if self.output is not None:
            self.request_tools += self.output.tools()
        self.request_natives: list[Any] = list(config.native_tools)
        # Cuts each tool result to its budget before it enters the history (see budgets.py).
        self.budget = OutputBudget.coerce(options.output_budget)

    async def step_tools(self) -> None:
        """The step's tools: the one place a run with a toolset decides which tools the next
        request offers (and which a call of this step may reach); deferral filters that list
        in `ask`."""
        toolset = self.toolset
        assert toolset is not None
        if await toolset.refresh_step(
            self.iterations, self.messages, self.config.deps, self.run_id
        ):  # unchanged: the last step's lists stand as they are
            tools = toolset.by_name
            self.tools = tools if self.search is None else self.search.offer(tools)
            self.request_tools = list(tools.values())
            if self.output is not None:
                self.request_tools += self.output.tools()

    def _request(
        self,
        choice: ToolChoice,
        native: OutputSpec | None,
        tools: list[Tool],
        natives: list[Any],
    ) -> Awaitable[Completion]:
        # Hands back the model's own awaitable: no coroutine of its own stays alive (one object
        # fewer per run in flight, for the garbage collector to walk) while the model answers.
        # What `ModelRequest.build` would make, with the run's tool lists built once: only the
        # history is copied, so each request keeps the conversation as it was sent.
        # Positional: a class called with keywords packs them into a dict and unpacks it again.
        config = self.config
        request = ModelRequest(list(self.messages), tools, choice, config.settings, natives, native)
        if config.stream_sink is not None:
            return self._ask_streaming(config.model.send_stream(request))
        return config.model.send(request)

    async def _ask_streaming(self, events: AsyncIterator[StreamEvent]) -> Completion:
        config = self.config
        sink = config.stream_sink
        assert sink is not None
        completion: Completion | None = None
        try:
            async for event in events:
                if isinstance(event, CompletionDone):
                    completion = event.completion
                else:
                    await sink(event)
        finally:
            # Close the model's stream (and its connection) here, in this task, when the run is
            # cancelled mid-stream, rather than whenever the garbage collector gets to it.
            with anyio.move_on_after(_CLOSE_TIMEOUT, shield=True):
                await aclose_events(events)
        if completion is None:
            raise ModelResponseError("the model's stream ended without a completion")
        return completion

    async def begin(
        self,
        prompt: str | None,
        approvals: Mapping[str, bool | str] | None,
        results: Mapping[str, Any] | None,
        resuming: bool,
    ) -> None:
        """What comes before the rounds: a paused turn's calls answered, the prompt added."""
        if resuming:
            if self.config.toolset is not None:
                await self.step_tools()  # the paused turn's calls reach today's tools
            await self.resume_turn(approvals, results)
        if prompt is not None:
            self.messages.append(UserMessage.of(prompt))

    async def rounds(self) -> None:
        while True:
            # After a turn: a sub-agent waiting for a decision stops the run, a handoff switches
            # agents.
            if self.node is not None and await self.node.turn_done():
                return
            reason = self.limit_reached() if self.iterations else None
            if reason is not None:
                self.stop_reason = reason
                return
            completion = await self.ask()
            message = completion.message
            calls = answerable_calls(message)
            # The adapter owns the ids (see `CallIds`); the loop only checks them, and a turn that
            # breaks the contract ends the run before it enters the history.
            if calls and not _ids_look_unique(calls):
                check_call_ids(message, self.model_label)
            self.messages.append(message)
            if self.output is not None:
                try:
                    verdict = self.output.read(completion)
                except BaseException:
                    self.messages.extend(self.output.pending)  # every call keeps one result
                    raise
                if verdict is not None:
                    outcome, extra = verdict
                    self.messages.extend(extra)
                    if outcome == "retry":
                        continue
                    self.stop_reason = "refused" if outcome == "refused" else "completed"
                    return
            if not calls:
                self.stop_reason = "completed"
                return
            self.open_calls = calls
            policy = self.config.options.approval_policy
            pending = pending_calls(calls, message, self.tools, policy)
            if pending:
                self.pending = pending
                self.stop_reason = (
                    "approval_required"
                    if any(p.reason == "approval" for p in pending)
                    else "external_calls"
                )
                return
            if len(calls) == 1:
                await self._execute_one(calls[0])  # the usual turn, one coroutine fewer
            else:
                await self.execute(calls, _NONE_DECIDED)
            if self.tool_choice not in ("auto", "none"):
                # A forced tool choice would force a call every round and the run would never end.
                self.tool_choice = "auto"

    # -- executing a turn

    async def execute(
        self, calls: Sequence[ToolCallBlock], decided: Mapping[str, ToolResultMessage]
    ) -> None:
        """Run a turn's calls and append one result per call, in call order, whatever happens."""
        if len(calls) == 1 and not decided:
            await self._execute_one(calls[0])
            return
        slots: list[ToolResultMessage | None] = [decided.get(c.id) for c in calls]
        traces: list[TraceEntry | None] = [None] * len(calls)
        try:
            todo = [i for i, slot in enumerate(slots) if slot is None]
            if len(todo) == 1:
                slots[todo[0]], traces[todo[0]] = await self.run_call(calls[todo[0]])
            elif todo:
                await self._run_many(calls, slots, traces, todo)
        finally:
            why = self._unfinished()
            for i, call in enumerate(calls):
                result = slots[i]
                if result is None:
                    result = missing_result(call, why)
                trace = traces[i]
                if trace is None and call.id not in decided:
                    trace = TraceEntry(
                        call.id, call.name, call.arguments, result.text, True, 0.0, self.iterations
                    )
                if trace is not None:
                    self.trace.append(trace)
                self.messages.append(result)
            self.open_calls = ()

    async def _execute_one(self, call: ToolCallBlock) -> None:
        # `execute` for the usual turn, one call and nothing decided, without its lists.
        result: ToolResultMessage | None = None
        trace: TraceEntry | None = None
        try:
            result, trace = await self.run_call(call)
        finally:
            if result is None or trace is None:
                result = missing_result(call, self._unfinished())
                trace = TraceEntry(
                    call.id, call.name, call.arguments, result.text, True, 0.0, self.iterations
                )
            self.trace.append(trace)
            self.messages.append(result)
            self.open_calls = ()

    def _unfinished(self) -> str:
        """Why a call has no result."""
        if self.timed_out():
            return "the run's time limit was reached before this call finished"
        return "the run was cancelled before this call finished"

    async def _run_many(
        self,
        calls: Sequence[ToolCallBlock],
        slots: list[ToolResultMessage | None],
        traces: list[TraceEntry | None],
        todo: list[int],
    ) -> None:
        limiter = anyio.CapacityLimiter(max(1, self.config.options.max_concurrency))
        gates: dict[int, tuple[Turnstile, int]] = {}
        if self.config.backend is not None:
            # Only calls of known tools reach the backend; the gate orders exactly those.
            known = [i for i in todo if calls[i].name in self.tools]
            gate = Turnstile(len(known))
            gates = {i: (gate, position) for position, i in enumerate(known)}

        async def one(i: int) -> None:
            async with limiter:
                slots[i], traces[i] = await self.run_call(calls[i], gates.get(i))

        # Consecutive calls run together; a sequential tool runs alone, in its turn.
        batch: list[int] = []
        for i in todo:
            tool = self.tools.get(calls[i].name)
            if tool is not None and tool.sequential:
                await each_at_once(one, batch)
                batch = []
                await one(i)
            else:
                batch.append(i)
        await each_at_once(one, batch)

    async def run_call(
        self, call: ToolCallBlock, gate: tuple[Turnstile, int] | None = None
    ) -> tuple[ToolResultMessage, TraceEntry]:
        config = self.config
        iteration = self.iterations
        started = time.perf_counter()
        if self.observed:
            await self.emit(FunctionCallStarted(call.id, call.name, call.arguments, iteration))
        tool = self.tools.get(call.name)
        if self.search is not None:  # a deferred tool not found yet answers with an error
            tool = self.search.gate(call.name, tool, self.messages)
        error: BaseException | None = None
        # Chosen here rather than tested inside: an untraced call pays no extra frame.
        call_tool = self._run_tool if config.trace_tool is None else self._traced_call
        if tool is None:
            names = ", ".join(sorted(self.tools)) or "none"
            message = ToolResultMessage(
                call_id=call.id,
                name=call.name,
                content=[TextPart(f'Error: unknown tool "{call.name}". Available tools: {names}.')],
                is_error=True,
            )
            if config.trace_tool is not None:
                answer = (message, None)
                message = (await config.trace_tool(call, None, lambda: _ready(answer)))[0]
        elif config.backend is None:
            message, error = await call_tool(tool, call, None)
        elif self.node is not None and _delegation.runs_agent(tool):
            message = await _delegation.inline_step(
                gate, functools.partial(call_tool, tool, call, None)
            )
        else:
            backend = config.backend

            async def step(key: str) -> ToolResultMessage:
                return (await call_tool(tool, call, key))[0]

            if gate is None:
                message = await backend.tool_step(call, step)
            else:
                await gate[0].wait(gate[1])
                try:
                    pending = backend.tool_step(call, step)
                finally:
                    gate[0].advance()
                message = await pending
        if self.budget is not None:  # after the step: a replay cuts the checkpoint the same way
            message = await self.budget.hold(message, *_model_names(config.model))
        duration = time.perf_counter() - started
        # Positional, `children` included: a keyword call and a default factory cost more.
        trace = TraceEntry(
            call.id,
            call.name,
            call.arguments,
            message.text,
            message.is_error,
            duration,
            iteration,
            error,
            [],
        )
        log_call(self.run_id, trace)
        if self.observed:
            await self.emit(
                FunctionCallCompleted(
                    call.id,
                    call.name,
                    call.arguments,
                    message,
                    message.is_error,
                    duration,
                    iteration,
                )
            )
        return message, trace

    async def _traced_call(
        self, tool: Tool, call: ToolCallBlock, key: str | None
    ) -> tuple[ToolResultMessage, BaseException | None]:
        trace_tool = self.config.trace_tool
        assert trace_tool is not None
        # Inside the step, so a durable run's replayed calls (not run again) get no span.
        return await trace_tool(call, tool, lambda: self._run_tool(tool, call, key))

    async def _run_tool(
        self, tool: Tool, call: ToolCallBlock, key: str | None
    ) -> tuple[ToolResultMessage, BaseException | None]:
        # The call's id for the log records of what it runs; a token rather than a context
        # manager, since this runs per call.
        token = CALL_ID.set(call.id)
        try:
            config = self.config
            options = config.options
            # What the hooks are handed (the same object to both), made only for them.
            tool_call: ToolCall | None = None
            if options.on_tool_call is not None or options.on_tool_result is not None:
                tool_call = ToolCall(call.id, call.name, call.arguments)
            try:
                if options.on_tool_call is not None:
                    assert tool_call is not None
                    await maybe_await(options.on_tool_call(tool_call))
                # Positional (see `_request`): name, call id, deps, metadata, idempotency key.
                ctx = ToolContext(call.name, call.id, config.deps, {}, key)
                result = await tool.invoke(call.arguments, ctx)
            except Exception as exc:  # a hook raised: the call gets the error as its result
                result = error_result(exc)
            error = result.error
            message = ToolResultMessage.from_result(call.id, call.name, result)
            if options.on_tool_result is not None:
                assert tool_call is not None
                try:
                    await maybe_await(options.on_tool_result(tool_call, message))
                except Exception as exc:
                    error = exc
                    message = ToolResultMessage.from_result(call.id, call.name, error_result(exc))
            return message, error
        finally:
            CALL_ID.reset(token)

    # -- resuming a paused turn

    async def resume_turn(
        self,
        approvals: Mapping[str, bool | str] | None,
        results: Mapping[str, Any] | None,
    ) -> None:
        """Answer the last turn's open calls with the caller's decisions, then run the rest."""
        if approvals is None and results is None:
            return
        if self.node is not None:  # decisions for sub-runs this turn paused inside
            approvals, results = self.node.resume_plan(approvals, results)
        last = self.messages[-1] if self.messages else None
        calls = answerable_calls(last) if isinstance(last, AssistantMessage) else []
        if not calls:
            if approvals is not None or results is not None:
                raise ValueError(
                    "there is no paused turn to resume: the history's last turn has no tool calls"
                )
            return
        decided = await decided_calls(
            cast(AssistantMessage, last),
            calls,
            self.tools,
            approvals or {},
            results or {},
            policy=self.config.options.approval_policy,
            budget=self.budget,
            model=self.config.model,
        )
        self.open_calls = calls
        await self.execute(calls, decided)


def _model_names(model: Model) -> tuple[str, str]:
    """The provider and model a budget's share of the context window is looked up by."""
    return model.provider, model.model_name


async def _ready(
    answer: tuple[ToolResultMessage, BaseException | None],
) -> tuple[ToolResultMessage, BaseException | None]:
    return answer


def run(
    config: LoopConfig,
    prompt: str | None,
    history: Sequence[Message] | None,
    *,
    approvals: Mapping[str, bool | str] | None = None,
    results: Mapping[str, Any] | None = None,
) -> Awaitable[RunResult]:
    """One run of the loop; see `Agent.run` for the semantics.

    A plain function handing back the run's coroutine: with thousands of runs in flight, every
    coroutine (and every closure cell) a run keeps alive is one more object for the garbage
    collector to walk.
    """
    tracing = config.tracer
    if tracing is not None:
        body = functools.partial(
            _run, prompt=prompt, history=history, approvals=approvals, results=results
        )
        return tracing.run(config, body)
    return _run(config, prompt, history, approvals, results)


def _run(
    config: LoopConfig,
    prompt: str | None,
    history: Sequence[Message] | None,
    approvals: Mapping[str, bool | str] | None,
    results: Mapping[str, Any] | None,
) -> Coroutine[Any, Any, RunResult]:
    # A plain function: the run keeps one coroutine alive, `_run_state`'s.
    resuming = approvals is not None or results is not None
    messages, repairs = prepare_history(history, config.options.instructions, resuming=resuming)
    for repair in repairs:
        logger.warning("toolwire: repaired the history handed in: %s", repair)
    state = _Run(config, messages, len(messages))
    if state.output is not None:
        note = state.output.instructions()
        if note is not None and not _has_system(messages, note.text):
            at = 0
            while at < len(messages) and isinstance(messages[at], SystemMessage):
                at += 1
            messages.insert(at, note)
    return _run_state(state, prompt, approvals, results, resuming=resuming)


def _has_system(messages: Sequence[Message], text: str) -> bool:
    # A function of its own: a generator expression in `_run_state` would make its locals cells.
    return any(isinstance(m, SystemMessage) and m.text == text for m in messages)


async def _run_state(
    state: _Run,
    prompt: str | None,
    approvals: Mapping[str, bool | str] | None,
    results: Mapping[str, Any] | None,
    *,
    resuming: bool,
) -> RunResult:
    config = state.config
    # The log records of everything the run does carry its id; a run that delegates to agents
    # is its tools' current run; each run is counted among the runs in flight. Entered by hand:
    # a `with` keeps each context's bound `__exit__` alive as long as the run (one more object
    # per run in flight for the garbage collector to walk), and these never swallow an error.
    logged = in_run(state.run_id)
    logged.__enter__()
    try:
        delegation = _delegation.entered(state)
        delegation.__enter__()
    except BaseException:
        logged.__exit__(None, None, None)
        raise
    runs_in_flight.__enter__()
    try:
        if resuming and state.tool_choice not in ("auto", "none"):
            # The paused turn already obeyed the forced choice; forcing it again on the follow-up
            # would make the model call a tool where it should answer.
            state.tool_choice = "auto"
        limits = config.limits
        try:
            if limits.max_seconds is None:
                # No cancel scope without a time limit (one is several objects, each kept
                # alive for as long as the run, for the garbage collector to walk).
                await state.begin(prompt, approvals, results, resuming)
                await state.rounds()
            else:
                state.deadline = anyio.current_time() + limits.max_seconds
                with anyio.CancelScope(deadline=state.deadline) as scope:
                    await state.begin(prompt, approvals, results, resuming)
                    await state.rounds()
                if scope.cancelled_caught:
                    state.stop_reason = "time_limit"
        except BaseException as exc:
            cancelled = isinstance(exc, anyio.get_cancelled_exc_class() | KeyboardInterrupt)
            state.stop_reason = "cancelled" if cancelled else "error"
            if state.observed:
                with anyio.CancelScope(shield=True):
                    await state.emit(RunCompleted(state.result()))
            raise
        result = state.result()
        if state.observed:
            await state.emit(RunCompleted(result))
        if limits.raise_on_limit and result.stop_reason in (
            "max_iterations",
            "token_limit",
            "cost_limit",
            "time_limit",
        ):
            raise UsageLimitExceeded(
                result.stop_reason,
                f"the run stopped: {result.stop_reason.replace('_', ' ')}",
                result,
            )
        return result
    finally:
        runs_in_flight.__exit__(None, None, None)
        delegation.__exit__(None, None, None)
        logged.__exit__(None, None, None)
