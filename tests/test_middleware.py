from __future__ import annotations

import time
from email.utils import formatdate
from typing import Any

import anyio
import httpx
import pytest

from toolwire import (
    Agent,
    Hooks,
    RetryableError,
    ScriptedModel,
    ToolArgumentsError,
    ToolError,
    ToolInvocation,
    ToolResult,
    ToolResultMessage,
    ToolTimeoutError,
    apply_middleware,
    compose_hooks,
    text_result,
    tool,
    with_hooks,
    with_retry,
    with_timeout,
)
from toolwire.middleware import is_retryable, retry_after_seconds

pytestmark = pytest.mark.anyio


class Flaky:
    """A tool body that fails with the queued exceptions, then succeeds."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self, x: int) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return f"ok {x}"


def flaky_tool(body: Flaky):  # type: ignore[no-untyped-def]
    async def run(x: int) -> str:
        """Do it."""
        return await body(x)

    return tool(run)


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


# --- ordering -------------------------------------------------------------------------------


async def test_first_middleware_is_outermost() -> None:
    order: list[str] = []

    def named(label: str):  # type: ignore[no-untyped-def]
        def middleware(inner):  # type: ignore[no-untyped-def]
            from toolwire import ToolWrapper

            class W(ToolWrapper):
                async def invoke(self, args: Any, ctx: Any = None) -> ToolResult:
                    order.append(f"{label}>")
                    result = await self.wrapped.invoke(args, ctx)
                    order.append(f"<{label}")
                    return result

            return W(inner)

        return middleware

    @tool
    def f() -> str:
        """F."""
        order.append("tool")
        return "x"

    wrapped = apply_middleware(f, named("a"), named("b"))
    assert wrapped.name == "f" and wrapped.parameters == f.parameters
    await wrapped.invoke({})
    assert order == ["a>", "b>", "tool", "<b", "<a"]


# --- timeout --------------------------------------------------------------------------------


async def test_with_timeout_cancels() -> None:
    cancelled = anyio.Event()

    @tool
    async def hang() -> str:
        """Hang."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return ""

    t = apply_middleware(hang, with_timeout(0.05))
    with anyio.fail_after(5):
        result = await t.invoke({})
    assert isinstance(result.error, ToolTimeoutError)
    assert cancelled.is_set()


async def test_with_timeout_passes_fast_results() -> None:
    @tool
    async def quick() -> str:
        """Quick."""
        return "done"

    result = await apply_middleware(quick, with_timeout(5)).invoke({})
    assert result.text == "done"


def test_with_timeout_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="positive"):
        with_timeout(0)


# --- retry ----------------------------------------------------------------------------------


async def test_retry_retries_retryable_then_succeeds() -> None:
    body = Flaky(RetryableError("busy"), httpx.ConnectError("refused"))
    sleeps = Sleeps()
    t = apply_middleware(
        flaky_tool(body), with_retry(3, initial_delay=1, jitter=False, sleep=sleeps)
    )
    result = await t.invoke({"x": 1})
    assert result.text == "ok 1"
    assert body.calls == 3
    assert sleeps.delays == [1, 2]


async def test_retry_gives_up_after_max_attempts() -> None:
    body = Flaky(*(RetryableError(f"busy {i}") for i in range(5)))
    sleeps = Sleeps()
    t = apply_middleware(flaky_tool(body), with_retry(3, initial_delay=0.1, sleep=sleeps))
    result = await t.invoke({"x": 1})
    assert result.is_error and "busy 2" in result.text
    assert body.calls == 3
    assert len(sleeps.delays) == 2
    assert 0.05 <= sleeps.delays[0] <= 0.1 and 0.1 <= sleeps.delays[1] <= 0.2  # jittered


async def test_retry_never_retries_validation_or_plain_tool_errors() -> None:
    body = Flaky(ToolError("no such order"))
    t = apply_middleware(flaky_tool(body), with_retry(5, sleep=Sleeps()))
    result = await t.invoke({"x": 1})
    assert result.text == "no such order" and body.calls == 1

    body2 = Flaky()
    t2 = apply_middleware(flaky_tool(body2), with_retry(5, sleep=Sleeps()))
    result2 = await t2.invoke({"x": "not a number"})
    assert isinstance(result2.error, ToolArgumentsError)
    assert body2.calls == 0


def _status_error(status: int, headers: dict[str, str] | None = None) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "https://api.example.com/x")
    response = httpx.Response(status, headers=headers, request=request)
    return httpx.HTTPStatusError(f"{status}", request=request, response=response)


async def test_retry_honours_retry_after() -> None:
    body = Flaky(_status_error(429, {"Retry-After": "7"}), _status_error(503))
    sleeps = Sleeps()
    t = apply_middleware(
        flaky_tool(body), with_retry(3, initial_delay=1, jitter=False, sleep=sleeps)
    )
    assert (await t.invoke({"x": 2})).text == "ok 2"
    assert sleeps.delays == [7, 2]


async def test_retry_after_beyond_max_delay_stops() -> None:
    body = Flaky(RetryableError("slow down", retry_after=3600))
    sleeps = Sleeps()
    t = apply_middleware(flaky_tool(body), with_retry(3, max_delay=30, sleep=sleeps))
    result = await t.invoke({"x": 1})
    assert result.is_error and body.calls == 1 and sleeps.delays == []


async def test_timeout_inside_retry_is_retried() -> None:
    attempts = 0
    gate = anyio.Event()

    @tool
    async def sometimes_hangs() -> str:
        """Hang the first time."""
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await gate.wait()
        return "second try"

    t = apply_middleware(sometimes_hangs, with_retry(2, sleep=Sleeps()), with_timeout(0.05))
    with anyio.fail_after(5):
        result = await t.invoke({})
    assert result.text == "second try" and attempts == 2


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RetryableError("x", retry_after=2), (True, 2)),
        (ToolTimeoutError("t", 1), (True, None)),
        (httpx.ReadTimeout("slow"), (True, None)),
        (ConnectionResetError(), (True, None)),
        (_status_error(500), (True, None)),
        (_status_error(429, {"retry-after": "3"}), (True, 3.0)),
        (_status_error(404), (False, None)),
        (_status_error(400), (False, None)),
        (ValueError("x"), (False, None)),
        (ToolError("x"), (False, None)),
    ],
)
def test_is_retryable(error: BaseException, expected: tuple[bool, float | None]) -> None:
    assert is_retryable(error) == expected


def test_is_retryable_reads_sdk_style_status_code() -> None:
    class SdkError(Exception):
        status_code = 529

    assert is_retryable(SdkError())[0] is True


def test_retry_after_parsing() -> None:
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds(None) is None
    assert retry_after_seconds("soon") is None
    future = formatdate(time.time() + 60, usegmt=True)
    parsed = retry_after_seconds(future)
    assert parsed is not None and 50 < parsed <= 60
    assert retry_after_seconds(formatdate(time.time() - 60, usegmt=True)) == 0


def test_with_retry_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        with_retry(0)


# --- hooks ----------------------------------------------------------------------------------


@tool
def divide(a: float, b: float) -> float:
    """Divide."""
    return a / b


async def test_hooks_see_calls_results_and_errors() -> None:
    seen: list[Any] = []

    def before(inv: ToolInvocation) -> None:
        seen.append(("before", inv.tool.name, inv.arguments))

    async def after(inv: ToolInvocation, result: ToolResult, error: BaseException | None) -> None:
        seen.append(("after", result.text, type(error).__name__ if error else None))

    t = with_hooks(divide, Hooks(before_execute=before, after_execute=after))
    assert (await t.invoke({"a": 6, "b": 3})).text == "2.0"
    failed = await t.invoke({"a": 1, "b": 0})
    assert failed.is_error
    assert seen == [
        ("before", "divide", {"a": 6, "b": 3}),
        ("after", "2.0", None),
        ("before", "divide", {"a": 1, "b": 0}),
        ("after", "ZeroDivisionError: float division by zero", "ZeroDivisionError"),
    ]


async def test_before_execute_raising_aborts_the_call() -> None:
    ran: list[int] = []

    @tool
    def guarded(x: int) -> int:
        """Guarded."""
        ran.append(x)
        return x

    def deny(inv: ToolInvocation) -> None:
        raise ToolError("not allowed today")

    result = await with_hooks(guarded, Hooks(before_execute=deny)).invoke({"x": 1})
    assert result.is_error and result.text == "not allowed today"
    assert ran == []


async def test_on_error_none_leaves_the_failure_as_it_is() -> None:
    seen: list[BaseException] = []

    def log(inv: ToolInvocation, err: BaseException) -> None:
        seen.append(err)

    result = await with_hooks(divide, Hooks(on_error=log)).invoke({"a": 1, "b": 0})
    assert result.is_error and result.text == "ZeroDivisionError: float division by zero"
    assert isinstance(result.error, ZeroDivisionError) and seen == [result.error]


async def test_on_error_suppresses_only_by_returning_a_result() -> None:
    t = with_hooks(divide, Hooks(on_error=lambda inv, err: ToolResult(content=[])))
    result = await t.invoke({"a": 1, "b": 0})
    assert not result.is_error and result.content == [] and result.error is None


async def test_on_error_returning_anything_else_is_a_clear_mistake() -> None:
    t = with_hooks(divide, Hooks(on_error=lambda inv, err: "infinity"))
    result = await t.invoke({"a": 1, "b": 0})
    assert result.is_error and isinstance(result.error, TypeError)
    assert "on_error hook returned a str" in result.text
    assert isinstance(result.error.__context__, ZeroDivisionError)


async def test_on_error_returning_or_raising_keeps_an_error() -> None:
    t = with_hooks(divide, Hooks(on_error=lambda inv, err: ToolError("cannot divide by zero")))
    result = await t.invoke({"a": 1, "b": 0})
    assert result.is_error and result.text == "cannot divide by zero"

    def reraise(inv: ToolInvocation, err: BaseException) -> None:
        raise RuntimeError("translated") from err

    result2 = await with_hooks(divide, Hooks(on_error=reraise)).invoke({"a": 1, "b": 0})
    assert result2.is_error and result2.text == "RuntimeError: translated"

    same = await with_hooks(divide, Hooks(on_error=lambda inv, err: err)).invoke({"a": 1, "b": 0})
    assert isinstance(same.error, ZeroDivisionError)


async def test_on_error_returning_a_result_replaces_it() -> None:
    t = with_hooks(divide, Hooks(on_error=lambda inv, err: text_result("infinity")))
    result = await t.invoke({"a": 1, "b": 0})
    assert not result.is_error and result.text == "infinity"


async def test_after_execute_raising_turns_the_result_into_an_error() -> None:
    def explode(inv: ToolInvocation, result: ToolResult, err: BaseException | None) -> None:
        raise ValueError("audit log unavailable")

    result = await with_hooks(divide, Hooks(after_execute=explode)).invoke({"a": 4, "b": 2})
    assert result.is_error and "audit log unavailable" in result.text


async def test_compose_hooks_runs_in_order_and_chains_on_error() -> None:
    order: list[str] = []

    def mark(label: str):  # type: ignore[no-untyped-def]
        async def hook(*args: Any) -> None:
            order.append(label)

        return hook

    def wrap_error(inv: ToolInvocation, err: BaseException) -> BaseException:
        order.append("err1")
        return ToolError(f"wrapped: {err}")

    def see_error(inv: ToolInvocation, err: BaseException) -> BaseException:
        order.append(f"err2:{err}")
        return err

    hooks = compose_hooks(
        Hooks(before_execute=mark("b1"), after_execute=mark("a1"), on_error=wrap_error),
        Hooks(before_execute=mark("b2"), after_execute=mark("a2"), on_error=see_error),
        Hooks(),
    )
    result = await with_hooks(divide, hooks).invoke({"a": 1, "b": 0})
    assert result.text == "wrapped: float division by zero"
    assert order == ["b1", "b2", "err1", "err2:wrapped: float division by zero", "a1", "a2"]


async def test_compose_hooks_stops_error_chain_once_a_result_replaces_it() -> None:
    calls: list[str] = []

    def replace(inv: ToolInvocation, err: BaseException) -> ToolResult:
        calls.append("replace")
        return text_result("infinity")

    def never(inv: ToolInvocation, err: BaseException) -> BaseException:
        calls.append("never")
        return err

    hooks = compose_hooks(Hooks(on_error=replace), Hooks(on_error=never))
    result = await with_hooks(divide, hooks).invoke({"a": 1, "b": 0})
    assert not result.is_error and result.text == "infinity" and calls == ["replace"]


async def test_compose_hooks_observers_pass_the_error_on_unchanged() -> None:
    seen: list[str] = []

    def observe(label: str):  # type: ignore[no-untyped-def]
        def hook(inv: ToolInvocation, err: BaseException) -> None:
            seen.append(f"{label}:{type(err).__name__}")

        return hook

    def translate(inv: ToolInvocation, err: BaseException) -> BaseException:
        return ToolError("b must not be zero")

    hooks = compose_hooks(
        Hooks(on_error=observe("first")),
        Hooks(on_error=translate),
        Hooks(on_error=observe("last")),
    )
    result = await with_hooks(divide, hooks).invoke({"a": 1, "b": 0})
    assert result.is_error and result.text == "b must not be zero"
    assert seen == ["first:ZeroDivisionError", "last:ToolError"]

    only_observers = compose_hooks(Hooks(on_error=observe("a")), Hooks(on_error=observe("b")))
    kept = await with_hooks(divide, only_observers).invoke({"a": 1, "b": 0})
    assert kept.is_error and isinstance(kept.error, ZeroDivisionError)


async def test_a_logging_on_error_hook_does_not_tell_the_model_the_call_worked() -> None:
    # Regression: a hook that logs and returns None used to turn the failure into an empty
    # success, so the model was told the tool had worked.
    logged: list[str] = []

    def log(inv: ToolInvocation, err: BaseException) -> None:
        logged.append(f"{inv.tool.name}: {err}")

    model = ScriptedModel([("divide", {"a": 1, "b": 0}), "Division by zero is undefined."])
    result = await Agent(model, tools=[divide], hooks=Hooks(on_error=log)).run("1/0?")
    sent = model.requests[1].messages[-1]
    assert isinstance(sent, ToolResultMessage)
    assert sent.is_error and sent.text == "ZeroDivisionError: float division by zero"
    assert result.trace[0].is_error and isinstance(result.trace[0].error, ZeroDivisionError)
    assert logged == ["divide: float division by zero"]
