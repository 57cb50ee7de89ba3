"""Compare the working tree with any git ref, side by side, so a slowdown shows up in review.

`REF` is checked out into a temporary `git worktree` under /tmp (removed afterwards). Each
measurement of `_compare_cases.py` runs on both trees, `PYTHONPATH` set to one tree's `src`, in
`--alternations` processes per tree and case, the trees taking turns (which goes first
alternates):

- a warm case (the loop per round at 200 and 1,600 rounds after a warm-up, 1,000 and 5,000
  concurrent runs, one tool dispatch) runs in a worker per tree, both alive together, pinned to
  one CPU and asked for `--repeats` repetitions in turns, so the two trees are timed through the
  same moments of the machine's load; a worker's figure is its best repetition;
- the first import and the first run after it run in a fresh interpreter per measurement.

Several processes per tree, because a process keeps a speed of its own for its life (where its
memory landed, what runs beside its core): on the shared machine one worker per tree showed the
warm loop at 1.1x 7abde50 in one run and 0.7x in the next. Printed: each tree's median over its
processes, the ratio HEAD/REF of the medians and the median of the ratios of the processes run
together (below 1 is better for every figure); then each tree's loop growth (1,600 rounds
against 200) and first import against `import pydantic, httpx, anyio`.

"HEAD" is this checkout's working tree, uncommitted changes included. Both trees' byte code is
written once to a temporary cache before measuring, as an installed package has it.

Run: `python benchmarks/compare.py REF [--alternations N] [--repeats N] [--only TEXT]` (e.g.
`7abde50` or `main`).
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


def paired(trees: dict[str, Path], args: list[str], repeats: int) -> dict[str, Figures]:
    """A fresh worker per tree, asked for `repeats` repetitions in turns (first one tree, then
    the other); each worker's best figures (its least disturbed repetition; its peak RSS)."""
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
    return {
        name: {
            key: (max if key == "peak_rss_mb" else min)(f[key] for f in found) for key in found[0]
        }
        for name, found in figures.items()
    }


def compare(
    ref: str, ref_tree: Path, alternations: int, repeats: int, measures: list[Measure]
) -> None:
    trees = {"HEAD": ROOT / "src", ref: ref_tree / "src"}
    # One process (or pair of workers) per distinct case; several figures may come from one.
    runs = sorted({tuple(args) for _, args, _, _ in measures})
    for src in trees.values():
        measure(src, ["cold", "3"])  # writes the byte code every later process reads
    # Per case and tree, one figure per process: a process keeps a speed of its own for its
    # life (where its memory landed, the core beside it), so several are asked, in turns.
    figures: dict[tuple[str, ...], dict[str, list[Figures]]] = {
        args: {name: [] for name in trees} for args in runs
    }
    for n in range(alternations):
        order = list(trees) if n % 2 == 0 else list(reversed(trees))
        for args in runs:
            if args[0] in WARM:
                found = paired(
                    {name: trees[name] for name in order},
                    list(args),
                    max(2, repeats // SLOW.get(args, 1)),
                )
                for name in trees:
                    figures[args][name].append(found[name])
            else:
                for name in order:
                    figures[args][name].append(measure(trees[name], list(args)))
        print(f"alternation {n + 1}/{alternations} done", file=sys.stderr)

    def middle(name: str, args: list[str], key: str) -> float:
        return statistics.median(f[key] for f in figures[tuple(args)][name])

    def pairs(args: list[str], key: str) -> float:
        found = figures[tuple(args)]
        return statistics.median(
            h[key] / r[key] for h, r in zip(found["HEAD"], found[ref], strict=True)
        )

    print(
        f"HEAD (working tree) against {ref}: medians of {alternations} processes per tree"
        f" taking turns; a warm figure is a process's best of {repeats} repetitions, the two"
        " trees' processes alive together and asked in turns; paired: the median of the"
        " ratios of the processes run together"
    )
    print(f"{'':42} {'HEAD':>10} {ref[:10]:>10} {'HEAD/REF':>9} {'paired':>8}")
    values: dict[tuple[str, str], float] = {}
    for label, args, key, unit in measures:
        head, old = middle("HEAD", args, key), middle(ref, args, key)
        values[("HEAD", label)], values[(ref, label)] = head, old
        print(
            f"{label:42} {head:10.1f} {old:10.1f} {head / old:8.2f}x {pairs(args, key):7.2f}x"
            f"  {unit}"
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
    parser.add_argument("--alternations", type=int, default=5, help="processes per tree and case")
    parser.add_argument(
        "--repeats", type=int, default=5, help="repetitions per worker process (warm cases)"
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
