"""Compare the working tree with any git ref, side by side, so a slowdown shows up in review.

`REF` is checked out into a temporary `git worktree` under /tmp (removed afterwards). Each
measurement of `_compare_cases.py` runs on both trees, `PYTHONPATH` set to one tree's `src`:

- the warm ones (the loop per round at 200 and 1,600 rounds after a warm-up, 1,000 and 5,000
  concurrent runs, one tool dispatch) in one long-lived worker per tree, set up once and asked
  for a repetition in turns (which tree goes first alternates), so both trees are timed through
  the same moments of the machine's load: the two used to run in separate processes seconds
  apart, and on a loaded machine a figure of either tree could move by half between runs;
- the first import and the first run after it in a fresh interpreter per measurement, the trees
  taking turns.

Printed: each tree's best figure (the least disturbed repetition; the peak RSS is a median), the
ratio HEAD/REF of the two (below 1 is better for every figure) and, for the warm ones, the median
of the ratios of each pair of repetitions timed side by side; then each tree's loop growth (1,600
rounds against 200) and first import against `import pydantic, httpx, anyio`.

"HEAD" is this checkout's working tree, uncommitted changes included. Both trees' byte code is
written once to a temporary cache before measuring, as an installed package has it.

Run: `python benchmarks/compare.py REF [--alternations N] [--repeats N]` (e.g. `7abde50` or
`main`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = HERE / "_compare_cases.py"

LOOP_SHORT, LOOP_LONG = "loop, warm, 200 rounds", "loop, warm, 1,600 rounds"
IMPORT, DEPS = "from toolwire import Agent, tool, model", "import pydantic, httpx, anyio"
# (label, case arguments, figure key, unit); the loop's offline model drops its log of requests
# unless the label says it keeps it (see _compare_cases.py).
Measure = tuple[str, list[str], str, str]
MEASURES: list[Measure] = [
    (LOOP_SHORT, ["loop", "200"], "us_per_round", "us/round"),
    (LOOP_LONG, ["loop", "1600"], "us_per_round", "us/round"),
    (
        "loop, 1,600 rounds, model keeps its log",
        ["loop", "1600", "log"],
        "us_per_round",
        "us/round",
    ),
    ("loop, cold (first run), 200 rounds", ["cold", "200"], "us_per_round", "us/round"),
    ("import + first run, 200 rounds", ["cold", "200"], "import_and_run_ms", "ms"),
    ("1,000 concurrent runs x 3 rounds", ["concurrent", "1000"], "wall_ms", "ms wall"),
    ("1,000 concurrent runs: CPU", ["concurrent", "1000"], "cpu_ms", "ms CPU"),
    ("1,000 concurrent runs: peak RSS", ["concurrent", "1000"], "peak_rss_mb", "MB"),
    ("5,000 concurrent runs x 3 rounds", ["concurrent", "5000"], "wall_ms", "ms wall"),
    ("5,000 concurrent runs: CPU", ["concurrent", "5000"], "cpu_ms", "ms CPU"),
    (IMPORT, ["import", "toolwire"], "ms", "ms CPU"),
    (DEPS, ["import", "deps"], "ms", "ms CPU"),
    ("dispatch: Tool.invoke", ["dispatch"], "us_per_call", "us/call"),
]
WARM = {"loop", "concurrent", "dispatch"}
"""Cases measured in a long-lived worker per tree (`_compare_cases.serve`)."""
SLOW = {("concurrent", "5000"): 3}
"""Cases whose repetitions are long: this many times fewer of them."""


PYCACHE = Path(tempfile.mkdtemp(prefix="toolwire-compare-pyc-"))
"""Byte code for both trees, written once (a warm-up import) and read by every measurement: an
installed package has its `.pyc` files, so a first import that compiles every module (as under
`PYTHONDONTWRITEBYTECODE`) is not what a user sees."""

Figures = dict[str, float]


def _env(src: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "TOOLWIRE_COMPARE_SRC": str(src),
        "PYTHONPYCACHEPREFIX": str(PYCACHE),
    }
    env.pop("PYTHONDEVMODE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(src: Path, args: list[str]) -> Figures:
    """One measurement in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, str(CASES), *args],
        env=_env(src),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed on {src}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


CPU = min(os.sched_getaffinity(0))
"""The one CPU both trees' workers run on: a process the scheduler keeps on a core shared with a
busy neighbour is slowed for as long as it lives, and a worker lives for all its repetitions."""


class Worker:
    """A tree's long-lived process for one warm case: one repetition per `next()`."""

    def __init__(self, src: Path, args: list[str]) -> None:
        self.src, self.args = src, args
        self.process = subprocess.Popen(
            [sys.executable, str(CASES), "serve", *args],
            env=_env(src),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.sched_setaffinity(self.process.pid, {CPU})
        self._line()  # "ready": set up and warmed

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            error = self.process.stderr.read() if self.process.stderr is not None else ""
            raise SystemExit(f"{' '.join(self.args)} failed on {self.src}:\n{error}")
        return line

    def next(self) -> Figures:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def paired(trees: dict[str, Path], args: list[str], repeats: int) -> dict[str, list[Figures]]:
    """`repeats` repetitions on each tree, the trees in turns (first one, then the other)."""
    workers = {name: Worker(src, args) for name, src in trees.items()}
    figures: dict[str, list[Figures]] = {name: [] for name in trees}
    try:
        for n in range(repeats):
            order = list(trees) if n % 2 == 0 else list(reversed(trees))
            for name in order:
                figures[name].append(workers[name].next())
    finally:
        for worker in workers.values():
            worker.close()
    return figures


def compare(
    ref: str, ref_tree: Path, alternations: int, repeats: int, measures: list[Measure]
) -> None:
    trees = {"HEAD": ROOT / "src", ref: ref_tree / "src"}
    # One process (or pair of workers) per distinct case; several figures may come from one.
    runs = sorted({tuple(args) for _, args, _, _ in measures})
    for src in trees.values():
        measure(src, ["cold", "3"])  # writes the byte code every later process reads
    figures: dict[tuple[str, ...], dict[str, list[Figures]]] = {}
    for args in (a for a in runs if a[0] in WARM):
        figures[args] = paired(trees, list(args), max(3, repeats // SLOW.get(args, 1)))
        print(f"{' '.join(args)} done", file=sys.stderr)
    for n in range(alternations):
        order = list(trees) if n % 2 == 0 else list(reversed(trees))
        for args in (a for a in runs if a[0] not in WARM):
            for name in order:
                found = figures.setdefault(args, {name: [] for name in trees})
                found[name].append(measure(trees[name], list(args)))
        print(f"alternation {n + 1}/{alternations} done", file=sys.stderr)

    def best(name: str, args: list[str], key: str, unit: str) -> float:
        values = [f[key] for f in figures[tuple(args)][name]]
        return statistics.median(values) if unit == "MB" else min(values)

    def pairs(args: list[str], key: str) -> str:
        if args[0] not in WARM:
            return ""
        found = figures[tuple(args)]
        ratios = [h[key] / r[key] for h, r in zip(found["HEAD"], found[ref], strict=True)]
        return f"{statistics.median(ratios):8.2f}x"

    print(
        f"HEAD (working tree) against {ref}: best of {repeats} paired repetitions in one worker"
        f" per tree (warm cases) or of {alternations} alternating processes (first import and"
        " run); peak RSS: median"
    )
    print(f"{'':42} {'HEAD':>10} {ref[:10]:>10} {'HEAD/REF':>9} {'paired':>9}")
    values: dict[tuple[str, str], float] = {}
    for label, args, key, unit in measures:
        head, old = best("HEAD", args, key, unit), best(ref, args, key, unit)
        values[("HEAD", label)], values[(ref, label)] = head, old
        print(
            f"{label:42} {head:10.1f} {old:10.1f} {head / old:8.2f}x {pairs(args, key):>9}  {unit}"
        )
    for name in trees:
        notes: list[str] = []
        if (name, LOOP_LONG) in values and (name, LOOP_SHORT) in values:
            growth = values[(name, LOOP_LONG)] / values[(name, LOOP_SHORT)]
            notes.append(f"loop per round at 1,600 / at 200 rounds {growth:.2f}x")
        if (name, IMPORT) in values and (name, DEPS) in values:
            imported = values[(name, IMPORT)] / values[(name, DEPS)]
            notes.append(f"first import / core dependencies {imported:.2f}x")
        if notes:
            print(f"{name}: " + "; ".join(notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", help="a git ref to compare the working tree with")
    parser.add_argument(
        "--alternations", type=int, default=5, help="fresh processes per tree (import, cold)"
    )
    parser.add_argument(
        "--repeats", type=int, default=15, help="paired repetitions per tree (warm cases)"
    )
    parser.add_argument(
        "--only", default="", help="only the figures whose label contains this text"
    )
    options = parser.parse_args()
    measures = [m for m in MEASURES if options.only in m[0]]
    if not measures:
        raise SystemExit(f"no figure's label contains {options.only!r}")
    ref_tree = Path(tempfile.mkdtemp(prefix="toolwire-compare-"))
    git = ["git", "-C", str(ROOT)]
    subprocess.run(
        [*git, "worktree", "add", "--detach", "--quiet", str(ref_tree), options.ref], check=True
    )
    try:
        compare(options.ref, ref_tree, options.alternations, options.repeats, measures)
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(ref_tree)], check=False)
        shutil.rmtree(PYCACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
