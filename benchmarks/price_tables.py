"""How long the first run's cost blocks the event loop, with and without the tables preloaded.

A run ends by pricing its requests with `genai-prices`, whose tables take a few tenths of a
second to import. Each case runs in a fresh interpreter: a ticker task records the longest gap
in the event loop while the first cost is computed, either cold or after `preload_prices()` (what
building a provider's model does) had the time a first model request takes (`WAIT` seconds).

Run: `.venv/bin/python benchmarks/price_tables.py`.
"""

from __future__ import annotations

import subprocess
import sys

WAIT = 1.0

CASE = """
import sys, time
import anyio
from toolwire.models.base import Usage
from toolwire.usage import estimate_cost, preload_prices

async def main(preload: bool) -> None:
    if preload:
        preload_prices()
    longest = 0.0
    done = False

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await anyio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        await anyio.sleep({wait})  # the first model request
        longest = 0.0
        cost = estimate_cost([("openai", "gpt-4.1-mini", Usage(input_tokens=100, output_tokens=10))])
        await anyio.sleep(0.01)
        done = True
    assert cost.total is not None, cost.reason
    print(longest)

anyio.run(main, sys.argv[1] == "preload")
"""


def stall(mode: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", CASE.replace("{wait}", str(WAIT)), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout)


if __name__ == "__main__":
    for mode in ("cold", "preload"):
        values = sorted(stall(mode) for _ in range(5))
        print(f"{mode:<8} longest event-loop stall at the first cost: {values[2] * 1000:6.1f} ms")
