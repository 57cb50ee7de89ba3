"""What `import toolwire` costs, against importing its three dependencies alone.

Each import runs in a fresh interpreter (nothing cached in `sys.modules`), timed inside it around
the import statement only, so interpreter start-up is left out. The two contenders alternate, the
median of N runs each is kept, and the ratio toolwire / (pydantic + httpx + anyio) is printed;
the goal is at most 1.3.

Run: `make bench` or `.venv/bin/python benchmarks/import_time.py [N]`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

GOAL = 1.3
BASELINE = "pydantic, httpx, anyio"
CONTENDERS = {
    "toolwire": "import toolwire",
    # What a first run touches: the loop, tools, schemas and the message model.
    "toolwire: Agent, tool": "from toolwire import Agent, tool",
    BASELINE: "import pydantic, httpx, anyio",
}


def once(statement: str) -> float:
    code = (
        "import time\n"
        "started = time.perf_counter()\n"
        f"{statement}\n"
        "print(time.perf_counter() - started)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def main(runs: int) -> float:
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for _ in range(runs):
        for name, statement in CONTENDERS.items():
            times[name].append(once(statement))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name:<24} {value * 1000:7.1f} ms (median of {runs})")
    for name in CONTENDERS:
        if name != BASELINE:
            print(f"ratio {name:<22} {medians[name] / medians[BASELINE]:.2f} (goal <= {GOAL})")
    return medians["toolwire"] / medians[BASELINE]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
