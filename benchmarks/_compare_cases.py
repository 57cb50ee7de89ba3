"""The measurements `compare.py` takes, one per process, on whichever toolwire `PYTHONPATH` names.

Each case prints one JSON object of figures on its last line. Only APIs that every version since
the end of the first round has are used (`Agent`, `tool`, `Tool.invoke`, `FunctionModel` from
`toolwire.models.testing`, `RunResult.stop_reason` and `.trace`), so the same script measures an
old checkout and the working tree alike. CPU time (`time.process_time`) is used wherever the
figure is the library's own work, so other processes on the machine move it less; the concurrent
runs are timed on the wall clock, since they wait on sleeps.

The warm cases (`loop`, `concurrent`, `dispatch`) also run as a worker (`serve CASE ARGS...`):
set up and warmed once, then one repetition per line read on stdin, its figures printed as one
JSON line. `compare.py` keeps one worker per tree and asks them in turns, so both trees are timed
through the same moments of the machine's load.

Run through `compare.py`; by hand: `PYTHONPATH=src python benchmarks/_compare_cases.py loop 200`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

ARGS = json.dumps({"city": "Recife", "days": 3, "metric": True})


async def bump(n: int) -> int:
    """Add one."""
    return n + 1


async def forecast(city: str, days: int, metric: bool = True) -> str:
    """Forecast the weather.

    Args:
        city: City name.
        days: Days ahead.
        metric: Metric units.
    """
    return f"{city}:{days}:{metric}"


def _check_source() -> None:
    # The figures are worthless if another toolwire (an installed one) was imported.
    expected = os.environ.get("TOOLWIRE_COMPARE_SRC")
    import toolwire

    where = os.path.realpath(toolwire.__file__ or "")
    if expected and not where.startswith(os.path.realpath(expected) + os.sep):
        raise SystemExit(f"imported toolwire from {where}, not from {expected}")


def _runner(
    rounds: int, *, delay: float = 0.0, keep_log: bool = False
) -> Callable[[], Awaitable[Any]]:
    from toolwire import Agent, tool
    from toolwire.models.testing import FunctionModel

    t = tool(bump)

    async def run() -> Any:
        count = 0

        async def reply(messages: Any, request: Any) -> Any:
            nonlocal count
            count += 1
            if not keep_log:
                # The offline models keep every request they answer, each with its own copy of
                # the history (O(N^2) memory, which the garbage collector walks), for tests to
                # read; a real provider's adapter keeps nothing. Dropped, so the figure is the
                # loop's own; the "log" variant keeps it.
                model.requests.clear()
            if delay:
                await asyncio.sleep(delay)
            if count > rounds:
                return "done"
            return [("bump", {"n": count})]

        model = FunctionModel(reply)
        agent = Agent(model, tools=[t], max_iterations=rounds + 1)
        result = await agent.run("go")
        assert result.stop_reason == "completed" and len(result.trace) == rounds, result.stop_reason
        return result

    return run


def loop_worker(rounds: int, log: str = "") -> Callable[[], dict[str, float]]:
    """One repetition of `loop`, after a warm-up run (made here)."""
    _check_source()
    run = _runner(rounds, keep_log=log == "log")
    asyncio.run(run())  # warm-up: first-use costs (lazy imports, caches) are left out

    def repetition() -> dict[str, float]:
        gc.collect()
        started = time.process_time()
        asyncio.run(run())
        return {"us_per_round": (time.process_time() - started) / rounds * 1e6}

    return repetition


def loop(rounds: int, log: str = "", repeats: int = 3) -> dict[str, float]:
    """Per-round CPU time of a run of `rounds` rounds, after a warm-up run (best of `repeats`);
    `log="log"` lets the offline model keep its log of requests."""
    repetition = loop_worker(rounds, log)
    return min((repetition() for _ in range(repeats)), key=lambda f: f["us_per_round"])


def cold(rounds: int) -> dict[str, float]:
    """The first run after the import, as a user's script sees it: per round, and with the import."""
    started = time.process_time()
    from toolwire import Agent, tool  # noqa: F401  (what a user's first line imports)
    from toolwire.models.testing import FunctionModel  # noqa: F401

    imported = time.process_time()
    _check_source()
    asyncio.run(_runner(rounds)())
    done = time.process_time()
    return {
        "us_per_round": (done - imported) / rounds * 1e6,
        "import_and_run_ms": (done - started) * 1e3,
    }


def concurrent_worker(
    runs: int, rounds: int = 3, delay: float = 0.02
) -> Callable[[], dict[str, float]]:
    """One repetition of `concurrent` (each in an event loop of its own, after a warm-up run)."""
    _check_source()
    run = _runner(rounds, delay=delay)

    async def main() -> tuple[float, float]:
        await run()  # warm-up
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(run() for _ in range(runs)))
        return time.perf_counter() - started, time.process_time() - cpu

    def repetition() -> dict[str, float]:
        wall, cpu = asyncio.run(main())
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
        return {"wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3, "peak_rss_mb": peak_kb / 1024}

    return repetition


def concurrent(runs: int, rounds: int = 3, delay: float = 0.02) -> dict[str, float]:
    """`runs` runs at once in one event loop, each `rounds` tool rounds against a model that
    answers after an async sleep of `delay`: wall time, CPU time and the process's peak RSS."""
    return concurrent_worker(runs, rounds, delay)()


def imports(which: str) -> dict[str, float]:
    """CPU time of a user's first import line, or of toolwire's three core dependencies alone."""
    started = time.process_time()
    if which == "toolwire":
        from toolwire import Agent, model, tool  # noqa: F401
    else:
        import anyio  # noqa: F401
        import httpx  # noqa: F401
        import pydantic  # noqa: F401
    elapsed = time.process_time() - started
    if which == "toolwire":
        _check_source()
    return {"ms": elapsed * 1e3}


def dispatch_worker(n: int = 20_000) -> Callable[[], dict[str, float]]:
    """One repetition of `dispatch`, after 200 calls (made here)."""
    _check_source()
    from toolwire import tool

    t = tool(forecast)

    async def calls(count: int) -> float:
        started = time.process_time()
        for _ in range(count):
            await t.invoke(ARGS)
        return time.process_time() - started

    asyncio.run(calls(200))

    def repetition() -> dict[str, float]:
        return {"us_per_call": asyncio.run(calls(n)) / n * 1e6}

    return repetition


def dispatch(n: int = 20_000, repeats: int = 3) -> dict[str, float]:
    """Per-call CPU time of `Tool.invoke` (parse, validate, run, wrap the result)."""
    repetition = dispatch_worker(n)
    return min((repetition() for _ in range(repeats)), key=lambda f: f["us_per_call"])


WORKERS: dict[str, Callable[..., Callable[[], dict[str, float]]]] = {
    "loop": loop_worker,
    "concurrent": concurrent_worker,
    "dispatch": dispatch_worker,
}


def serve(case: str, *args: Any) -> None:
    """Set `case` up once, then answer each line read on stdin with one repetition's figures."""
    repetition = WORKERS[case](*args)
    print("ready", flush=True)
    for _ in sys.stdin:
        print(json.dumps(repetition()), flush=True)


CASES: dict[str, Callable[..., dict[str, float]]] = {
    "loop": loop,
    "cold": cold,
    "concurrent": concurrent,
    "import": imports,
    "dispatch": dispatch,
}

if __name__ == "__main__":
    case, *rest = sys.argv[1:]
    parsed = [int(a) if a.isdigit() else a for a in rest]
    if case == "serve":
        serve(*parsed)
    else:
        print(json.dumps(CASES[case](*parsed)))
