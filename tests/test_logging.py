"""The `toolwire` loggers: model requests, tool calls, retries, fallbacks and egress refusals."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from toolwire import (
    Agent,
    FallbackModel,
    FunctionModel,
    ModelConnectionError,
    RetryModel,
    RetryPolicy,
    ScriptedModel,
    apply_middleware,
    tool,
    with_retry,
)
from toolwire.errors import EgressBlocked, RetryableError
from toolwire.prebuilt import EgressPolicy, guarded_request

pytestmark = pytest.mark.anyio


@tool
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"boom: {reason}")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def records(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == name]


async def test_a_run_logs_its_model_requests_and_tool_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolwire")
    model = ScriptedModel(
        [[("add", {"a": 1, "b": 2}), ("explode", {"reason": "x"})], "done"], model_name="m1"
    )
    result = await Agent(model, tools=[add, explode]).run("go")
    assert result.text == "done"

    logged = records(caplog, "toolwire")
    run_ids = {getattr(r, "toolwire_run_id", None) for r in logged}
    assert len(run_ids) == 1 and None not in run_ids
    [run_id] = run_ids
    answers = [r for r in logged if "model request" in r.getMessage()]
    assert [r.levelno for r in answers] == [logging.DEBUG, logging.DEBUG]
    assert answers[0].getMessage().startswith(f"run {run_id}: model request 1 answered by test:m1")
    calls = {
        getattr(r, "toolwire_call_id", None): r for r in logged if "tool call" in r.getMessage()
    }
    add_id, explode_id = (entry.call_id for entry in result.trace)
    assert calls[add_id].levelno == logging.DEBUG
    assert f"tool call {add_id} (add) done in" in calls[add_id].getMessage()
    assert calls[explode_id].levelno == logging.INFO
    assert "(explode) failed: " in calls[explode_id].getMessage()
    assert "boom: x" in calls[explode_id].getMessage()


async def test_nothing_below_warning_is_logged_by_default(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolwire")
    await Agent(ScriptedModel([("add", {"a": 1, "b": 2}), "3"]), tools=[add]).run("go")
    assert records(caplog, "toolwire") == []


def flaky(failures: int) -> FunctionModel:
    count = {"n": 0}

    def reply(messages: Any, request: Any) -> str:
        count["n"] += 1
        if count["n"] <= failures:
            raise ModelConnectionError("connection reset", provider="test")
        return "fine"

    return FunctionModel(reply, model_name="flaky")


async def test_a_retry_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolwire")
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    model = RetryModel(flaky(1), RetryPolicy(attempts=3, jitter=False), sleep=sleep)
    assert (await model.complete("hi")).message.text == "fine"
    [record] = records(caplog, "toolwire.models")
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "test:flaky failed (attempt 1 of 3: ModelConnectionError: connection reset); "
        f"retrying in {waits[0]:.2f}s"
    )


async def test_a_fallback_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolwire")
    model = FallbackModel(flaky(5), ScriptedModel(["from the second"], model_name="second"))
    assert (await model.complete("hi")).message.text == "from the second"
    [record] = records(caplog, "toolwire.models")
    assert record.getMessage() == (
        "test:flaky failed (ModelConnectionError: connection reset); falling back to test:second"
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///etc/passwd", "scheme 'file' is not allowed"),
        ("http://127.0.0.1:8080/admin", "127.0.0.1"),
    ],
)
async def test_an_egress_refusal_is_logged(
    caplog: pytest.LogCaptureFixture, url: str, why: str
) -> None:
    caplog.set_level(logging.WARNING, logger="toolwire")
    with pytest.raises(EgressBlocked):
        await guarded_request("GET", url, policy=EgressPolicy())
    [record] = records(caplog, "toolwire.egress")
    assert record.levelno == logging.WARNING
    assert record.getMessage().startswith(f"egress refused: Blocked request to {url}")
    assert why in record.getMessage()


async def test_retries_and_fallbacks_in_a_run_carry_its_run_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolwire")

    async def sleep(seconds: float) -> None:
        pass

    retried = RetryModel(flaky(1), RetryPolicy(attempts=3, jitter=False), sleep=sleep)
    model = FallbackModel(flaky(5), retried)
    assert (await Agent(model).run("hi")).text == "fine"
    run_ids = {getattr(r, "toolwire_run_id", None) for r in records(caplog, "toolwire")}
    [run_id] = run_ids
    assert run_id is not None
    warned = records(caplog, "toolwire.models")
    assert [r.getMessage().split(": ", 1)[0] for r in warned] == [f"run {run_id}"] * 2
    assert "falling back to" in warned[0].getMessage()
    assert "retrying in" in warned[1].getMessage()
    assert all(getattr(r, "toolwire_run_id", None) == run_id for r in warned)
    assert all(not hasattr(r, "toolwire_call_id") for r in warned)
    # Outside a run nothing is added.
    caplog.clear()
    await RetryModel(flaky(1), RetryPolicy(attempts=2, jitter=False), sleep=sleep).complete("x")
    [alone] = records(caplog, "toolwire.models")
    assert not alone.getMessage().startswith("run ")
    assert not hasattr(alone, "toolwire_run_id")


async def test_the_retry_middleware_logs_each_retry_with_the_run_and_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolwire")
    failures = {"left": 2}

    @tool
    def shaky(x: int) -> int:
        """Fails twice, then answers."""
        if failures["left"]:
            failures["left"] -= 1
            raise RetryableError("busy")
        return x

    async def sleep(seconds: float) -> None:
        pass

    robust = apply_middleware(shaky, with_retry(3, initial_delay=0.25, jitter=False, sleep=sleep))
    model = ScriptedModel([("shaky", {"x": 7}), "7"])
    result = await Agent(model, tools=[robust]).run("go")
    assert result.text == "7" and not result.trace[0].is_error
    call_id = result.trace[0].call_id
    retries = records(caplog, "toolwire.tools")
    assert [r.levelno for r in retries] == [logging.WARNING, logging.WARNING]
    run_id = retries[0].toolwire_run_id
    assert all(r.toolwire_call_id == call_id for r in retries)
    assert retries[0].getMessage() == (
        f"run {run_id}, call {call_id}: tool shaky failed "
        "(attempt 1 of 3: RetryableError: busy); retrying in 0.25s"
    )
    assert "(attempt 2 of 3: RetryableError: busy); retrying in 0.50s" in retries[1].getMessage()
