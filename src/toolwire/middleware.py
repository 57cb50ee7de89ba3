"""Middleware around tool execution (timeout, retry) and lifecycle hooks.

A middleware is any `Callable[[Tool], Tool]`. `apply_middleware(tool, a, b)` gives `a(b(tool))`:
the first middleware is the outermost and runs first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, TypeAlias

import anyio
import httpx

from ._logctx import log_extra, log_prefix
from ._record import record
from ._util import backoff_delay, maybe_await, retry_after_from_headers, retry_after_seconds
from .errors import RetryableError, ToolArgumentsError, ToolTimeoutError
from .results import ToolResult, error_result
from .tools import DefinitionDialect, Tool, ToolAnnotations, ToolContext, ToolDefinition

__all__ = [
    "Hooks",
    "Middleware",
    "ToolInvocation",
    "ToolWrapper",
    "apply_middleware",
    "compose_hooks",
    "is_retryable",
    "retry_after_from_headers",
    "retry_after_seconds",
    "with_hooks",
    "with_retry",
    "with_timeout",
]

logger = logging.getLogger("toolwire.tools")

Middleware: TypeAlias = Callable[[Tool], Tool]

_Args: TypeAlias = "str | bytes | Mapping[str, Any] | None"


class ToolWrapper:
    """A tool that delegates everything to `wrapped`; subclasses override `invoke`."""

    _toolwire_tool: ClassVar[bool] = True  # `as_tool` takes it without the protocol check

    def __init__(self, wrapped: Tool) -> None:
        self.wrapped = wrapped

    @property
    def name(self) -> str:
        return self.wrapped.name

    @property
    def description(self) -> str:
        return self.wrapped.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.wrapped.parameters

    @property
    def strict(self) -> bool:
        return self.wrapped.strict

    @property
    def annotations(self) -> ToolAnnotations:
        return self.wrapped.annotations

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.wrapped.output_schema

    @property
    def timeout(self) -> float | None:
        return self.wrapped.timeout

    @property
    def sequential(self) -> bool:
        return self.wrapped.sequential

    @property
    def requires_approval(self) -> bool:
        return self.wrapped.requires_approval

    @property
    def executable(self) -> bool:
        return self.wrapped.executable

    def parse_args(self, raw: str | bytes | Mapping[str, Any] | None) -> Any:
        return self.wrapped.parse_args(raw)

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        return await self.wrapped.invoke(args, ctx)

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        return self.wrapped.definition(dialect)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.wrapped!r})"


def apply_middleware(tool: Tool, *middlewares: Middleware) -> Tool:
    """Wrap `tool` so that the first middleware is the outermost and runs first."""
    for middleware in reversed(middlewares):
        tool = middleware(tool)
    return tool


# --- timeout ----------------------------------------------------------------------------------


class _TimeoutTool(ToolWrapper):
    def __init__(self, wrapped: Tool, seconds: float) -> None:
        super().__init__(wrapped)
        self.seconds = seconds

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        with anyio.move_on_after(self.seconds) as scope:
            return await self.wrapped.invoke(args, ctx)
        assert scope.cancelled_caught
        return error_result(ToolTimeoutError(self.name, self.seconds))


def with_timeout(seconds: float) -> Middleware:
    """Cancel a call after `seconds`; its result is then a `ToolTimeoutError` error result."""
    if seconds <= 0:
        raise ValueError(f"timeout must be positive, got {seconds}")

    def middleware(tool: Tool) -> Tool:
        return _TimeoutTool(tool, seconds)

    return middleware


# --- retry ------------------------------------------------------------------------------------


def _status_and_headers(error: BaseException) -> tuple[int | None, Any]:
    response = getattr(error, "response", None)
    status = getattr(error, "status_code", None)
    if status is None and response is not None:
        status = getattr(response, "status_code", None)
    headers = getattr(response, "headers", None) if response is not None else None
    return (status if isinstance(status, int) else None), headers


def is_retryable(error: BaseException) -> tuple[bool, float | None]:
    """Whether a failure is worth retrying, and how long the other side asked us to wait.

    Retryable: `RetryableError`, `ToolTimeoutError`, connection and timeout errors, and HTTP errors
    with status 429 or 5xx (from httpx or any SDK exposing `status_code`). Never argument errors.
    """
    if isinstance(error, ToolArgumentsError):
        return False, None
    if isinstance(error, RetryableError):
        return True, error.retry_after
    if isinstance(error, ToolTimeoutError | httpx.TransportError | ConnectionError | TimeoutError):
        return True, None
    status, headers = _status_and_headers(error)
    if status is not None and (status == 429 or 500 <= status <= 599):
        return True, retry_after_from_headers(headers) if headers is not None else None
    cause = error.__cause__
    if cause is not None and cause is not error:
        return is_retryable(cause)
    return False, None


class _RetryTool(ToolWrapper):
    def __init__(
        self,
        wrapped: Tool,
        max_attempts: int,
        initial_delay: float,
        max_delay: float,
        multiplier: float,
        jitter: bool,
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        super().__init__(wrapped)
        self.max_attempts = max_attempts
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.multiplier = multiplier
        self.jitter = jitter
        self._sleep = sleep

    def _backoff(self, attempt: int) -> float:
        return backoff_delay(
            attempt,
            initial=self.initial_delay,
            maximum=self.max_delay,
            multiplier=self.multiplier,
            jitter=self.jitter,
        )

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        attempt = 1
        while True:
            result = await self.wrapped.invoke(args, ctx)
            if not result.is_error or result.error is None or attempt >= self.max_attempts:
                return result
            retryable, retry_after = is_retryable(result.error)
            if not retryable:
                return result
            delay = self._backoff(attempt)
            if retry_after is not None:
                if retry_after > self.max_delay:
                    return result  # the other side wants longer than we are willing to wait
                delay = max(delay, retry_after)
            logger.warning(
                "%stool %s failed (attempt %d of %d: %s: %s); retrying in %.2fs",
                log_prefix(),
                self.name,
                attempt,
                self.max_attempts,
                type(result.error).__name__,
                result.error,
                delay,
                extra=log_extra(),
            )
            await self._sleep(delay)
            attempt += 1


def with_retry(
    max_attempts: int = 3,
    *,
    initial_delay: float = 0.5,
    max_delay: float = 30.0,
    multiplier: float = 2.0,
    jitter: bool = True,
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
) -> Middleware:
    """Retry retryable failures with jittered exponential backoff, honouring `Retry-After`.

    Only failures `is_retryable` accepts are retried; validation errors and plain `ToolError`s never
    are. A `Retry-After` longer than `max_delay` ends the retries with the last error.

    Args:
        max_attempts: Total attempts, the first included.
        initial_delay: Delay before the second attempt, in seconds.
        max_delay: Cap on any single delay.
        multiplier: Growth of the delay per attempt.
        jitter: Randomise each delay between half and all of it.
        sleep: The coroutine used to wait (tests pass a recorder).
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")

    def middleware(tool: Tool) -> Tool:
        return _RetryTool(tool, max_attempts, initial_delay, max_delay, multiplier, jitter, sleep)

    return middleware


# --- hooks ------------------------------------------------------------------------------------


@record(frozen=True)
class ToolInvocation:
    """What hooks see of a call: the tool, the raw arguments and the context."""

    tool: Tool
    arguments: str | bytes | Mapping[str, Any] | None
    context: ToolContext


BeforeHook: TypeAlias = Callable[[ToolInvocation], Any]
AfterHook: TypeAlias = Callable[[ToolInvocation, ToolResult, "BaseException | None"], Any]
ErrorHook: TypeAlias = Callable[[ToolInvocation, BaseException], Any]


@record(frozen=True)
class Hooks:
    """Callbacks around a tool call; each optional, sync or async.

    Attributes:
        before_execute: Called before the tool runs; raising aborts the call and the exception
            becomes its error result.
        after_execute: Called with the final result and its exception (or `None`); raising turns
            the result into an error result.
        on_error: Called when the call failed with an exception. Returning `None` only observes:
            the failure stays exactly as it was. Returning an exception, or raising one, keeps
            the call failed with that exception. Suppressing or replacing the error is explicit:
            return a `ToolResult` (e.g. `text_result("n/a")`), which becomes the call's result.
            Any other return value is a mistake of the hook's and fails the call with a
            `TypeError` saying so.
    """

    before_execute: BeforeHook | None = None
    after_execute: AfterHook | None = None
    on_error: ErrorHook | None = None


def compose_hooks(*hooks: Hooks) -> Hooks:
    """One `Hooks` running each given one in order.

    `on_error` hooks are chained: each sees the error the previous ones left (a hook returning
    `None` passes it on unchanged), and once one returns a result, the rest are not called.
    """
    befores = [h.before_execute for h in hooks if h.before_execute]
    afters = [h.after_execute for h in hooks if h.after_execute]
    errors = [h.on_error for h in hooks if h.on_error]

    async def before(invocation: ToolInvocation) -> None:
        for hook in befores:
            await maybe_await(hook(invocation))

    async def after(
        invocation: ToolInvocation, result: ToolResult, error: BaseException | None
    ) -> None:
        for hook in afters:
            await maybe_await(hook(invocation, result, error))

    async def on_error(invocation: ToolInvocation, error: BaseException) -> Any:
        current = error
        for hook in errors:
            try:
                outcome = await maybe_await(hook(invocation, current))
            except Exception as raised:
                outcome = raised
            if outcome is None:
                continue
            if not isinstance(outcome, BaseException):
                return outcome  # a result ends the chain (`with_hooks` refuses anything else)
            current = outcome
        return None if current is error else current

    return Hooks(
        before_execute=before if befores else None,
        after_execute=after if afters else None,
        on_error=on_error if errors else None,
    )


class _HookedTool(ToolWrapper):
    def __init__(self, wrapped: Tool, hooks: Hooks) -> None:
        super().__init__(wrapped)
        self.hooks = hooks

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        hooks = self.hooks
        if ctx is None:
            ctx = ToolContext(tool_name=self.name)
        invocation = ToolInvocation(self.wrapped, args, ctx)
        result: ToolResult | None = None
        if hooks.before_execute is not None:
            try:
                await maybe_await(hooks.before_execute(invocation))
            except Exception as exc:
                result = error_result(exc)
        if result is None:
            result = await self.wrapped.invoke(args, ctx)
        error = result.error if result.is_error else None
        if error is not None and hooks.on_error is not None:
            result, error = await _handle_error(hooks.on_error, invocation, result, error)
        if hooks.after_execute is not None:
            try:
                await maybe_await(hooks.after_execute(invocation, result, error))
            except Exception as exc:
                result = error_result(exc)
        return result


async def _handle_error(
    hook: ErrorHook, invocation: ToolInvocation, result: ToolResult, error: BaseException
) -> tuple[ToolResult, BaseException | None]:
    """The result and error after `on_error`: unchanged unless the hook explicitly changed them."""
    try:
        outcome = await maybe_await(hook(invocation, error))
    except Exception as raised:
        outcome = raised
    if outcome is None or outcome is error:
        # An observer (a logger, a metric): the model must still learn that the call failed.
        return result, error
    if isinstance(outcome, ToolResult):
        return outcome, outcome.error
    if isinstance(outcome, BaseException):
        return error_result(outcome), outcome
    mistake = TypeError(
        f"the on_error hook returned a {type(outcome).__name__}; return None to leave the "
        "failure as it is, an exception to change it, or a ToolResult to replace the result"
    )
    mistake.__context__ = error
    return error_result(mistake), mistake


def with_hooks(tool: Tool, hooks: Hooks) -> Tool:
    """`tool` with `hooks` around every call."""
    return _HookedTool(tool, hooks)
