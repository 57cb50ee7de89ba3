"""Many agent runs at once in one process: toolwire against pydantic-ai.

Each run makes `rounds` tool rounds (one call of an async `bump` tool each) against an in-process
function model that answers after an async sleep of `delay` seconds, as a provider's network
round trip would; `runs` of them are gathered in one event loop after a warm-up run. Each
framework runs in its own fresh interpreter (so peak RSS is its own), the two taking turns;
printed: wall time, CPU time, calls/s (tool calls per wall second), peak RSS, and the ratios that
issue 28 sets targets for (toolwire's calls/s at least 60x pydantic-ai's, its peak RSS at most
0.35x).

Run: `.venv/bin/python benchmarks/concurrency.py [--runs 1000] [--rounds 3] [--passes 2]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from loop import bump, pydantic_ai_run

FRAMEWORKS = ("toolwire", "pydantic-ai")


def toolwire_run(rounds: int, delay: float) -> Callable[[], Awaitable[Any]]:
    from toolwire import Agent, FunctionModel, tool
    from toolwire.messages import Message
    from toolwire.models.testing import PreparedRequest

    t = tool(bump)

    async def run() -> Any:
        count = 0

        async def reply(messages: list[Message], request: PreparedRequest) -> Any:
            nonlocal count
            count += 1
            # The offline model keeps every request it answers for tests to read; a provider's
            # adapter keeps none, so the log is dropped (as in _compare_cases.py).
            model.requests.clear()
            await asyncio.sleep(delay)
            if count > rounds:
                return "done"
            return [("bump", {"n": count})]

        model = FunctionModel(reply)
        result = await Agent(model, tools=[t], max_iterations=rounds + 1).run("go")
        assert result.stop_reason == "completed" and len(result.trace) == rounds
        return result

    return run


def measure(framework: str, runs: int, rounds: int, delay: float) -> dict[str, float]:
    """One framework's figures, in this process."""
    run = toolwire_run(rounds, delay) if framework == "toolwire" else pydantic_ai_run(rounds, delay)
    assert run is not None, "pydantic-ai is not installed"

    async def main() -> tuple[float, float]:
        await run()  # warm-up: first-use costs are left out
        gc.collect()
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(run() for _ in range(runs)))
        return time.perf_counter() - started, time.process_time() - cpu

    wall, cpu = asyncio.run(main())
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "calls_per_s": runs * rounds / wall,
        "peak_rss_mb": peak_kb / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Many agent runs at once: toolwire against pydantic-ai."
    )
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.02)
    parser.add_argument("--passes", type=int, default=2, help="turns each framework takes")
    parser.add_argument("--one", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.runs, args.rounds, args.delay)))
        return
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in FRAMEWORKS}
    for turn in range(args.passes):
        order = FRAMEWORKS if turn % 2 == 0 else FRAMEWORKS[::-1]
        for name in order:
            command = [sys.executable, str(Path(__file__).resolve()), "--one", name]
            command += ["--runs", str(args.runs), "--rounds", str(args.rounds)]
            command += ["--delay", str(args.delay)]
            done = subprocess.run(
                command, capture_output=True, text=True, check=True, env=dict(os.environ)
            )
            figures[name].append(json.loads(str(done.stdout).strip().splitlines()[-1]))
    medians = {
        name: {key: statistics.median(f[key] for f in found) for key in found[0]}
        for name, found in figures.items()
    }
    print(
        f"{args.runs:,} concurrent runs x {args.rounds} tool rounds, model answering after "
        f"{args.delay * 1000:.0f} ms (median of {args.passes} turns each)"
    )
    print(f"{'':14}{'wall s':>9}{'CPU s':>9}{'calls/s':>11}{'peak RSS MB':>13}")
    for name, m in medians.items():
        print(
            f"{name:14}{m['wall_s']:9.2f}{m['cpu_s']:9.2f}{m['calls_per_s']:11,.0f}"
            f"{m['peak_rss_mb']:13.1f}"
        )
    tw, pa = medians["toolwire"], medians["pydantic-ai"]
    print(
        f"toolwire / pydantic-ai: calls/s {tw['calls_per_s'] / pa['calls_per_s']:.1f}x "
        f"(target >= 60x), CPU {tw['cpu_s'] / pa['cpu_s']:.3f}x, "
        f"peak RSS {tw['peak_rss_mb'] / pa['peak_rss_mb']:.2f}x (target <= 0.35x)"
    )


if __name__ == "__main__":
    main()
