"""What a user's first import line costs, against importing toolwire's three dependencies alone.

Each import runs in a fresh interpreter (nothing cached in `sys.modules`), timed inside it around
the import statement only (CPU time, `time.process_time`), so interpreter start-up is left out. The
contenders alternate, the median of N runs each is kept, and each ratio to
`import pydantic, httpx, anyio` is printed; the goal for `from toolwire import Agent, tool, model`
is at most 1.3.

On a shared machine CPU time still moves with the load (caches, frequency). `--instructions`
counts the instructions each import executes instead, under valgrind's callgrind (one run each,
deterministic, ~50x slower; needs `valgrind`): the count of `python -c pass` is subtracted, so the
figure is the import's own work, comparable between checkouts whatever the load.

Run: `make bench` or `.venv/bin/python benchmarks/import_time.py [N] [--instructions]`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

GOAL = 1.3
BASELINE = "pydantic, httpx, anyio"
FIRST_LINE = "from toolwire import Agent, tool, model"
CONTENDERS = {
    "import toolwire": "import toolwire",
    # What a user's first line imports: the loop, tools, schemas, the model factory.
    FIRST_LINE: FIRST_LINE,
    BASELINE: "import pydantic, httpx, anyio",
}

CALLGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]

PYCACHE = tempfile.mkdtemp(prefix="toolwire-import-pyc-")
"""Byte code written once and read by every run, as an installed package has it."""


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPYCACHEPREFIX": PYCACHE}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def once(statement: str) -> float:
    code = (
        "import time\n"
        "started = time.process_time()\n"
        f"{statement}\n"
        "print(time.process_time() - started)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env()
    )
    return float(done.stdout)


def instructions(statement: str) -> int:
    """Instructions `python -c statement` executes, counted by callgrind."""
    done = subprocess.run(
        [*CALLGRIND, sys.executable, "-c", statement],
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def report(figures: dict[str, float], unit: str, how: str) -> float:
    for name, value in figures.items():
        print(f"{name:<40} {value:10.1f} {unit} ({how})")
    for name in CONTENDERS:
        if name != BASELINE:
            ratio = figures[name] / figures[BASELINE]
            print(f"ratio {name:<40} {ratio:.2f} (goal <= {GOAL} for the first line)")
    return figures[FIRST_LINE] / figures[BASELINE]


def main(runs: int, count: bool) -> float:
    for statement in CONTENDERS.values():  # writes the byte code every later run reads
        once(statement)
    if count:
        if shutil.which("valgrind") is None:
            raise SystemExit("--instructions needs valgrind")
        empty = instructions("pass")
        figures = {name: (instructions(s) - empty) / 1e6 for name, s in CONTENDERS.items()}
        return report(figures, "M instructions", "callgrind, `python -c pass` subtracted")
    times: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for n in range(runs):
        order = list(CONTENDERS.items())
        for name, statement in order if n % 2 == 0 else reversed(order):
            times[name].append(once(statement) * 1000)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"load average {os.getloadavg()[0]:.2f}")
    return report(medians, "ms CPU", f"median of {runs}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="?", type=int, default=21)
    parser.add_argument("--instructions", action="store_true", help="count instructions instead")
    options = parser.parse_args()
    try:
        main(options.runs, options.instructions)
    finally:
        shutil.rmtree(PYCACHE, ignore_errors=True)
