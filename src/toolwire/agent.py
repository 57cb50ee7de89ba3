"""`Agent` and `run_loop`: the agent loop's public face (the loop itself lives in `_loop`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from decimal import Decimal
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from . import _loop  # pyright: ignore[reportPrivateUsage]
from ._loop import (
    LoopConfig,
    RunCompleted,
    RunEvent,
    RunResult,
    Subscriber,
    build_tools,
)
from .messages import Message, ToolResultMessage
from .middleware import Hooks
from .models.base import Model, ModelSettings, StreamEvent, ToolCall, ToolChoice
from .tools import ToolLike
from .usage import RunLimits

__all__ = ["Agent", "RunStream", "run_loop"]


def _resolve_model(model: Model | str) -> Model:
    if isinstance(model, str):
        from .models import model as resolve

        return resolve(model)
    return model


class Agent:
    """A model, instructions and tools, run in a loop until the model answers.

    Args:
        model: A `Model`, or a `"provider:model-name"` string.
        name: A label for traces and logs.
        instructions: The system prompt, added when the history has none.
        tools: Tools, typed functions or definition dicts.
        max_iterations: Model requests per run, at most.
        max_tokens: Tokens per run, at most.
        max_cost: US dollars per run, at most.
        max_seconds: Wall-clock seconds per run, at most.
        raise_on_limit: Raise `UsageLimitExceeded` when a limit ends a run.
        max_concurrency: Calls of one turn running at once, at most.
        tool_choice: `"auto"`, `"none"`, `"required"` or a tool name (a forced choice applies to
            the first request of a run, then falls back to `"auto"` so the run can end).
        settings: Model settings for every request.
        hooks: Hooks around every tool call.
        on_tool_call: Called with each `ToolCall` before it runs; raising turns the exception
            into the call's result.
        on_tool_result: Called with each call and its `ToolResultMessage`.
        subscribers: Receive every run event; a failing one never breaks the run.
        approval_policy: `"marked"` pauses for tools with `requires_approval`; `"destructive"`
            also for tools whose annotations say `destructive_hint`.
        deps: Passed to tools as `ToolContext.deps`.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        name: str = "agent",
        instructions: str | None = None,
        tools: Sequence[ToolLike] = (),
        max_iterations: int = 8,
        max_tokens: int | None = None,
        max_cost: Decimal | float | None = None,
        max_seconds: float | None = None,
        raise_on_limit: bool = False,
        max_concurrency: int = 10,
        tool_choice: ToolChoice = "auto",
        settings: ModelSettings | Mapping[str, Any] | None = None,
        hooks: Hooks | None = None,
        on_tool_call: Callable[[ToolCall], Any] | None = None,
        on_tool_result: Callable[[ToolCall, ToolResultMessage], Any] | None = None,
        subscribers: Sequence[Subscriber] = (),
        approval_policy: Literal["marked", "destructive"] = "marked",
        deps: Any = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.model = _resolve_model(model)
        self.name = name
        self.instructions = instructions
        self.tools = build_tools(tools, hooks)
        self.limits = RunLimits(
            max_iterations=max_iterations,
            max_tokens=max_tokens,
            max_cost=max_cost,
            max_seconds=max_seconds,
            raise_on_limit=raise_on_limit,
        )
        self.max_concurrency = max_concurrency
        self.tool_choice = tool_choice
        self.settings = ModelSettings.coerce(settings)
        self.on_tool_call = on_tool_call
        self.on_tool_result = on_tool_result
        self.subscribers: list[Subscriber] = list(subscribers)
        self.approval_policy: Literal["marked", "destructive"] = approval_policy
        self.deps = deps

    def subscribe(self, subscriber: Subscriber) -> Subscriber:
        """Receive every event of every run (usable as a decorator)."""
        self.subscribers.append(subscriber)
        return subscriber

    def _config(
        self,
        deps: Any,
        subscribers: Sequence[Subscriber],
        sink: _loop.StreamSink | None = None,
    ) -> LoopConfig:
        return LoopConfig(
            model=self.model,
            tools=self.tools,
            limits=self.limits,
            tool_choice=self.tool_choice,
            settings=self.settings,
            max_concurrency=self.max_concurrency,
            deps=self.deps if deps is None else deps,
            subscribers=[*self.subscribers, *subscribers],
            on_tool_call=self.on_tool_call,
            on_tool_result=self.on_tool_result,
            approval_policy=self.approval_policy,
            stream_sink=sink,
        )

    async def run(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] | None = None,
        deps: Any = None,
        subscribers: Sequence[Subscriber] = (),
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """Run the loop: ask the model, run the tools it calls, repeat until it answers.

        Args:
            prompt: The user's message; `None` continues from `history` alone.
            history: Earlier messages (not modified; the result holds the new history). A history
                whose calls lack results is repaired with error results before the first request.
            deps: Overrides the agent's `deps` for this run.
            subscribers: Extra event subscribers for this run.
            approvals: For a paused run: call id -> `True` to run it, `False` or a reason to refuse.
            results: For a paused run: call id -> the result of an external call.
        """
        return await _loop.run(
            self._config(deps, subscribers),
            prompt,
            history,
            instructions=self.instructions,
            approvals=approvals,
            results=results,
        )

    async def resume(
        self,
        result: RunResult,
        *,
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
        deps: Any = None,
    ) -> RunResult:
        """Continue a run that stopped for approval or for external calls.

        Approved calls run, refused ones give the model a refusal, external calls take the
        given results, then the loop goes on. Every pending call must be decided; any call of the
        paused turn may be refused; an id the paused turn does not hold raises `ValueError`.
        """
        return await self.run(
            None,
            history=result.messages,
            deps=deps,
            approvals=approvals or {},
            results=results or {},
        )

    def run_sync(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] | None = None,
        deps: Any = None,
        subscribers: Sequence[Subscriber] = (),
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """`run` for synchronous code (starts its own event loop)."""
        try:
            import asyncio

            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                "run_sync() cannot run inside an event loop; await agent.run() instead"
            )

        async def call() -> RunResult:
            try:
                return await self.run(
                    prompt,
                    history=history,
                    deps=deps,
                    subscribers=subscribers,
                    approvals=approvals,
                    results=results,
                )
            finally:
                # This event loop ends with the call; an adapter's connections must not outlive
                # it (the adapter opens new ones on the next loop).
                aclose: Callable[[], Any] | None = getattr(self.model, "aclose", None)
                if aclose is not None:
                    with anyio.CancelScope(shield=True):
                        await aclose()

        return anyio.run(call)

    def run_stream(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] | None = None,
        deps: Any = None,
        subscribers: Sequence[Subscriber] = (),
    ) -> RunStream:
        """Run with streaming: `async with agent.run_stream(p) as s: async for e in s: ...`.

        The events are the model's deltas (text, reasoning, tool-call pieces) and the run events;
        the last is `RunCompleted`. `s.result` holds the `RunResult` afterwards.
        """

        def start(sink: _loop.StreamSink) -> Any:
            return _loop.run(
                self._config(deps, subscribers, sink),
                prompt,
                history,
                instructions=self.instructions,
            )

        return RunStream(start)


class RunStream:
    """The events of a streaming run; see `Agent.run_stream`.

    Leaving the `async with` block before the last event cancels the run; its history stays
    whole (every call answered) and `result` then holds the cancelled run.
    """

    def __init__(self, start: Callable[[_loop.StreamSink], Any]) -> None:
        self._start = start
        self._result: RunResult | None = None
        self._error: BaseException | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._receive: MemoryObjectReceiveStream[StreamEvent | RunEvent] | None = None

    @property
    def result(self) -> RunResult:
        """The run's result, once its `RunCompleted` event has passed."""
        if self._result is None:
            raise RuntimeError("the run has not finished yet")
        return self._result

    async def __aenter__(self) -> RunStream:
        send, receive = anyio.create_memory_object_stream[StreamEvent | RunEvent](64)
        self._receive = receive
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._produce, send)
        return self

    async def _produce(self, send: MemoryObjectSendStream[StreamEvent | RunEvent]) -> None:
        async def sink(event: StreamEvent | RunEvent) -> None:
            if isinstance(event, RunCompleted):
                self._result = event.result
            # When the consumer has left, the run goes on to its (cancelled) end unheard.
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await send.send(event)

        async with send:
            try:
                await self._start(sink)
            except Exception as exc:
                self._error = exc

    def __aiter__(self) -> AsyncIterator[StreamEvent | RunEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[StreamEvent | RunEvent]:
        assert self._receive is not None
        async for event in self._receive:
            yield event
        if self._error is not None:
            raise self._error

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None and self._receive is not None
        finished = self._result is not None and self._result.stop_reason != "cancelled"
        if exc_type is not None or not finished:
            self._group.cancel_scope.cancel()
        self._receive.close()
        # The producer never raises (it keeps its error for the consumer), so the group exits
        # clean and the caller's own exception, if any, propagates unwrapped.
        await self._group.__aexit__(None, None, None)
        return None


async def run_loop(
    model: Model | str,
    input: str | None,
    *,
    tools: Sequence[ToolLike] = (),
    history: Sequence[Message] | None = None,
    instructions: str | None = None,
    max_iterations: int = 8,
    max_tokens: int | None = None,
    max_cost: Decimal | float | None = None,
    max_seconds: float | None = None,
    raise_on_limit: bool = False,
    tool_choice: ToolChoice = "auto",
    settings: ModelSettings | Mapping[str, Any] | None = None,
    hooks: Hooks | None = None,
    max_concurrency: int = 10,
    subscribers: Sequence[Subscriber] = (),
    deps: Any = None,
) -> RunResult:
    """Run the agent loop once without building an `Agent`; see `Agent` for the options."""
    agent = Agent(
        model,
        instructions=instructions,
        tools=tools,
        max_iterations=max_iterations,
        max_tokens=max_tokens,
        max_cost=max_cost,
        max_seconds=max_seconds,
        raise_on_limit=raise_on_limit,
        max_concurrency=max_concurrency,
        tool_choice=tool_choice,
        settings=settings,
        hooks=hooks,
        subscribers=subscribers,
        deps=deps,
    )
    return await agent.run(input, history=history)
