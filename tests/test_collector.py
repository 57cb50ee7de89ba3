"""The collector's first threshold is raised while many runs are in flight, and given back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import anyio
import pytest

from toolwire import Agent
from toolwire._collector import MANY, RAISED, RunsInFlight  # pyright: ignore[reportPrivateUsage]
from toolwire.models.testing import FunctionModel

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _threshold() -> Iterator[None]:  # pyright: ignore[reportUnusedFunction]
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raised_from_many_runs_and_given_back_below_half() -> None:
    runs = RunsInFlight()
    for _ in range(MANY - 1):
        runs.__enter__()
    assert gc.get_threshold() == (700, 10, 10)  # a few runs never touch it
    runs.__enter__()
    assert gc.get_threshold() == (*RAISED, 10)
    for _ in range(MANY - MANY // 2):
        runs.__exit__(None, None, None)
    assert gc.get_threshold() == (*RAISED, 10)
    runs.__exit__(None, None, None)
    assert gc.get_threshold() == (700, 10, 10)
    assert runs.count == MANY // 2 - 1


def test_the_applications_own_setting_stands() -> None:
    runs = RunsInFlight()
    for _ in range(MANY):
        runs.__enter__()
    gc.set_threshold(5000, 20, 20)
    for _ in range(MANY):
        runs.__exit__(None, None, None)
    assert gc.get_threshold() == (5000, 20, 20)


def test_a_disabled_or_higher_threshold_is_left_alone() -> None:
    for first in (0, RAISED[0] * 2):
        gc.set_threshold(first, 10, 10)
        runs = RunsInFlight()
        for _ in range(MANY):
            runs.__enter__()
        assert gc.get_threshold() == (first, 10, 10)
        for _ in range(MANY):
            runs.__exit__(None, None, None)
        assert gc.get_threshold() == (first, 10, 10)


async def test_many_concurrent_agent_runs_raise_it_until_they_end() -> None:
    release, all_in = anyio.Event(), anyio.Event()
    seen: list[int] = []

    async def reply(messages: object, request: object) -> str:
        seen.append(gc.get_threshold()[0])
        if len(seen) == MANY:
            all_in.set()
        await release.wait()
        return "done"

    agent = Agent(FunctionModel(reply))
    results: list[str] = []

    async def one() -> None:
        results.append((await agent.run("go")).text)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(MANY):
                group.start_soon(one)
            await all_in.wait()
            assert gc.get_threshold()[:2] == RAISED
            release.set()
    assert results == ["done"] * MANY
    assert seen[0] == 700 and seen[-1] == RAISED[0]
    assert gc.get_threshold() == (700, 10, 10)
