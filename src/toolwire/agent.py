"""`Agent` and `run_loop`: the agent loop's public face (the loop itself lives in `_loop`, its
configuration in `_config`, what it returns in `_run_result` and `_events`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Unpack, cast

import anyio

if TYPE_CHECKING:
    # Annotations only: anyio loads these on first use, and a run that does not stream never
    # needs them (they are a noticeable share of `from toolwire import Agent`).
    import anyio.abc
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    from .ui._asgi import ASGIApp

from . import _loop, telemetry, ui  # pyright: ignore[reportPrivateUsage]
from ._agent_tool import AgentTool, agent_tool
from ._config import (
    LoopConfig,
    RunConfig,
    RunOptions,
    build_tools,
    default_search,
    is_toolset,
    native_specs,
)
from ._delegation import runs_agent, transfer_tool
from ._events import RunCompleted, RunEvent, StreamSink, Subscriber
from ._extras import require_extra
from ._handoff import HandoffLike, as_handoff
from ._run_result import RunResult
from .budgets import OutputBudget, with_read_result
from .messages import Message
from .models._matrix import split_client_run
from .models.base import Model, ModelSettings, StreamEvent
from .models.profiles import profile_of

__all__ = ["Agent", "LoopConfig", "RunConfig", "RunOptions", "RunStream", "run_loop"]


def _resolve_model(model: Model | str, api_key: str | None, base_url: str | None) -> Model:
    given = {
        name: value
        for name, value in (("api_key", api_key), ("base_url", base_url))
        if value is not None
    }
    if isinstance(model, str):
        from .models import model as resolve

        return resolve(model, **given)
    if given:
        names = " and ".join(f"{name}=" for name in given)
        raise TypeError(
            f"{names} configure a model named by a string (Agent('openai:gpt-4o', "
            f"api_key=...)); pass {'them' if len(given) > 1 else 'it'} to the "
            f"{type(model).__name__} you built instead"
        )
    return model


class Agent:
    """A model and a run configuration, run in a loop until the model answers.

    Args:
        model: A `Model`, or a `"provider:model-name"` string.
        config: A `RunConfig` to start from (the defaults when `None`).
        api_key: The provider's API key, for a model named by a string (default: the
            provider's environment variable, e.g. `OPENAI_API_KEY`).
        base_url: The provider's endpoint, for a model named by a string.
        **options: Any field of `RunConfig` (instructions, tools, limits, hooks, ...); they
            override `config`. An unknown name raises `TypeError`.

    Other model options (a timeout, Azure's endpoint, ...) go to `toolwire.model(...)`, whose
    result `Agent` takes as well.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        config: RunConfig | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        self._config = config = RunConfig.merge(config, options)
        if isinstance(model, str) or api_key is not None or base_url is not None:
            model = _resolve_model(model, api_key, base_url)
        if config.retry is not None:
            from .models.wrappers import RetryModel

            model = RetryModel(model, config.retry)
        self.model = model
        # Each feature is set up only when configured: an agent is often built per run.
        given: Sequence[Any] = config.tools
        self.native_tools: list[Any] = native_specs(given)
        if self.native_tools:
            self.native_tools, client_run = split_client_run(profile_of(model), self.native_tools)
            given = [*given, *client_run]
        handoffs = [transfer_tool(as_handoff(h)) for h in config.handoffs]
        if handoffs:
            given = [*given, *handoffs]
        built = build_tools(given, config.hooks)
        self.tools = built
        budget = cast("OutputBudget | None", config.output_budget)  # coerced by RunConfig
        if budget is not None:
            self.tools = with_read_result(built, budget, model.provider, model.model_name)
            # `read_result` joins a toolset's steps like the tools given with it.
            given = [*given, *(t for name, t in self.tools.items() if name not in built)]
        # Toolsets (and tool search) are reached through the objects given: a run with neither
        # loads neither.
        source = next((t for t in given if is_toolset(t)), None)
        self.toolset = source.for_run(given, config.hooks) if source is not None else None
        search = config.tool_search
        self._search = (
            search if search is not None else default_search(built.values(), self.toolset)
        )
        self._delegates = bool(handoffs) or any(runs_agent(t) for t in self.tools.values())
        self._settings = ModelSettings.coerce(config.settings)
        self._limits = config.limits

    def add_handoffs(self, *handoffs: HandoffLike) -> None:
        """Add agents this one may hand over to (for handoffs that go both ways: build both
        agents, then add each to the other)."""
        added = build_tools([transfer_tool(as_handoff(h)) for h in handoffs], self._config.hooks)
        clash = sorted(set(added) & set(self.tools))
        if clash:
            raise ValueError(f"two tools are named {clash[0]!r}")
        self._config = self._config.replace(handoffs=(*self._config.handoffs, *handoffs))
        self.tools = {**self.tools, **added}
        self._delegates = True

    @property
    def name(self) -> str:
        """The agent's name (`RunConfig.name`): in traces, handoff tools and per-agent usage."""
        return self._config.name

    @property
    def config(self) -> RunConfig:
        """The agent's run configuration (immutable; `subscribe` replaces it with one more)."""
        return self._config

    def subscribe(self, subscriber: Subscriber) -> Subscriber:
        """Receive every event of every run (usable as a decorator)."""
        subscribers = (*self._config.subscribers, subscriber)
        self._config = self._config.replace(subscribers=subscribers)
        return subscriber

    def loop_config(
        self,
        *,
        deps: Any = None,
        subscribers: Sequence[Subscriber] = (),
        sink: StreamSink | None = None,
    ) -> LoopConfig:
        """This agent's configuration resolved for one run of the loop.

        For backends that run the loop themselves (`toolwire.durable`): they set `backend` on
        it (`dataclasses.replace`) and hand it to the loop.

        Args:
            deps: Overrides the configured `deps`.
            subscribers: Extra event subscribers for the run.
            sink: Where a streamed run's events go (`None`: the run does not stream).
        """
        config = self._config
        # Positional, every field in order (a class called with keywords packs them into a dict
        # and unpacks it again, once per run).
        return LoopConfig(
            self.model,
            config,
            self.tools,
            self._settings,
            self._limits,
            config.deps if deps is None else deps,
            [*config.subscribers, *subscribers] if subscribers else config.subscribers,
            sink,
            self.native_tools,
            None,  # backend: in process
            None,  # trace_tool: set by the tracer
            # Read per run, so `telemetry.instrument()` applies to agents built before it.
            telemetry.active(),
            self._delegates,
            self.toolset,
            self._search,
        )

    def as_tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        input: Any = str,
        requires_approval: bool = False,
    ) -> AgentTool:
        """This agent as a tool another agent calls; each call is a run of this agent.

        The sub-run's usage and cost add to the caller's result (and to its `usage_by_agent`),
        its tool calls nest under the call's `TraceEntry.children` (and its span under the call's
        span), its token and cost budgets are cut to what the caller has left, and a durable
        caller checkpoints its steps. Its answer is the call's result: the text, or the typed
        output as JSON. A sub-run that fails or stops early gives the caller an error result.

        Args:
            name: The tool's name (default: the agent's name).
            description: What the calling model reads about it.
            input: `str` (the model writes a prompt), or a Pydantic model or other type whose
                JSON Schema is an object (the model fills it; the agent gets it as JSON).
            requires_approval: Pause the caller's run before each call.
        """
        return agent_tool(
            self,
            name=name,
            description=description,
            input=input,
            requires_approval=requires_approval,
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

        `run`, `run_sync` and `run_stream` take the same arguments.

        Args:
            prompt: The user's message; `None` continues from `history` alone.
            history: Earlier messages (not modified; the result holds the new history). A history
                whose calls lack results is repaired with error results before the first request.
            deps: Overrides the configured `deps` for this run.
            subscribers: Extra event subscribers for this run.
            approvals: For a paused run: call id -> `True` to run it, `False` or a reason to refuse.
            results: For a paused run: call id -> the result of an external call.
        """
        return await _loop.run(
            self.loop_config(deps=deps, subscribers=subscribers),
            prompt,
            history,
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
        subscribers: Sequence[Subscriber] = (),
    ) -> RunResult:
        """Continue a run that stopped for approval or for external calls.

        Approved calls run, refused ones give the model a refusal, external calls take the
        given results, then the loop goes on. Every pending call must be decided; any call of the
        paused turn may be refused; an id the paused turn does not hold raises `ValueError`.
        The same works streamed: `run_stream(None, history=result.messages, approvals=...)`.
        """
        return await self.run(
            None,
            history=result.messages,
            deps=deps,
            subscribers=subscribers,
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

    def to_ag_ui(self) -> ASGIApp:
        """This agent as an AG-UI endpoint: an ASGI app (needs the `ui` extra); docs/web.md."""
        require_extra("ui", "ag_ui", needed_by="agent.to_ag_ui()")
        from .ui.ag_ui import AgUiApp  # the `ag-ui-protocol` extra

        return AgUiApp(self)

    def to_vercel_ai(self) -> ASGIApp:
        """This agent as a Vercel AI SDK UI message stream endpoint: an ASGI app; docs/web.md."""
        return ui.VercelAiApp(self)  # loaded here, on first use (see toolwire.ui)

    def run_stream(
        self,
        prompt: str | None = None,
        *,
        history: Sequence[Message] | None = None,
        deps: Any = None,
        subscribers: Sequence[Subscriber] = (),
        approvals: Mapping[str, bool | str] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> RunStream:
        """Run with streaming: `async with agent.run_stream(p) as s: async for e in s: ...`.

        The events are the model's deltas (text, reasoning, tool-call pieces) and the run events;
        the last is `RunCompleted`. `s.result` holds the `RunResult` afterwards. The arguments
        are those of `run`: a run paused for approval or external calls (streamed or not) is
        resumed streamed with `history=paused.messages` and `approvals` / `results`.
        """

        def start(sink: StreamSink) -> Any:
            return _loop.run(
                self.loop_config(deps=deps, subscribers=subscribers, sink=sink),
                prompt,
                history,
                approvals=approvals,
                results=results,
            )

        return RunStream(start)


class RunStream:
    """The events of a streaming run; see `Agent.run_stream`.

    Leaving the `async with` block before the last event cancels the run; its history stays
    whole (every call answered) and `result` then holds the cancelled run.
    """

    def __init__(self, start: Callable[[StreamSink], Any]) -> None:
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
    history: Sequence[Message] | None = None,
    approvals: Mapping[str, bool | str] | None = None,
    results: Mapping[str, Any] | None = None,
    config: RunConfig | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    **options: Unpack[RunOptions],
) -> RunResult:
    """Run the agent loop once without keeping an `Agent`.

    Takes the options of `Agent` (the fields of `RunConfig`, `api_key`, `base_url`) and the
    per-run arguments of `Agent.run` that are not options: `history`, and `approvals` /
    `results` to resume a paused run.
    """
    agent = Agent(model, config=config, api_key=api_key, base_url=base_url, **options)
    return await agent.run(input, history=history, approvals=approvals, results=results)
