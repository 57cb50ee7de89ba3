"""Compare the working tree with any git ref, side by side, so a slowdown shows up in review.

`REF` is checked out into a temporary `git worktree` under /tmp (removed afterwards). Every
measurement of `_compare_cases.py` (the loop per round at 200 and 1,600 rounds after a warm-up,
the first run after the import, 1,000 concurrent runs, the first import, one tool dispatch) runs in
a fresh interpreter with `PYTHONPATH` set to one tree's `src`, the two trees taking turns (which
goes first alternates), and the median of the alternations is kept. Printed: each tree's figure
and the ratio HEAD/REF (below 1 is better for every figure), then each tree's loop growth
(1,600 rounds against 200) and first import against `import pydantic, httpx, anyio`.

"HEAD" is this checkout's working tree, uncommitted changes included. Both trees' byte code is
written once to a temporary cache before measuring, as an installed package has it.

Run: `python benchmarks/compare.py REF [--alternations N]` (e.g. `7abde50` or `main`).
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
MEASURES: list[tuple[str, list[str], str, str]] = [
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
    (IMPORT, ["import", "toolwire"], "ms", "ms CPU"),
    (DEPS, ["import", "deps"], "ms", "ms CPU"),
    ("dispatch: Tool.invoke", ["dispatch"], "us_per_call", "us/call"),
]


PYCACHE = Path(tempfile.mkdtemp(prefix="toolwire-compare-pyc-"))
"""Byte code for both trees, written once (a warm-up import) and read by every measurement: an
installed package has its `.pyc` files, so a first import that compiles every module (as under
`PYTHONDONTWRITEBYTECODE`) is not what a user sees."""


def measure(src: Path, args: list[str]) -> dict[str, float]:
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "TOOLWIRE_COMPARE_SRC": str(src),
        "PYTHONPYCACHEPREFIX": str(PYCACHE),
    }
    env.pop("PYTHONDEVMODE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, str(CASES), *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed on {src}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(ref: str, ref_tree: Path, alternations: int) -> None:
    trees = {"HEAD": ROOT / "src", ref: ref_tree / "src"}
    # One process per distinct case; several figures may come from the same one.
    runs = {tuple(args) for _, args, _, _ in MEASURES}
    for src in trees.values():
        measure(src, ["cold", "3"])  # writes the byte code every later process reads
    figures: dict[tuple[str, tuple[str, ...]], list[dict[str, float]]] = {}
    for n in range(alternations):
        order = list(trees) if n % 2 == 0 else list(reversed(trees))
        for args in sorted(runs):
            for name in order:
                figures.setdefault((name, args), []).append(measure(trees[name], list(args)))
        print(f"alternation {n + 1}/{alternations} done", file=sys.stderr)

    def median(name: str, args: list[str], key: str) -> float:
        return statistics.median(f[key] for f in figures[(name, tuple(args))])

    print(f"HEAD (working tree) against {ref}: medians of {alternations} alternations")
    print(f"{'':42} {'HEAD':>10} {ref[:10]:>10} {'HEAD/REF':>9}")
    values: dict[tuple[str, str], float] = {}
    for label, args, key, unit in MEASURES:
        head, old = median("HEAD", args, key), median(ref, args, key)
        values[("HEAD", label)], values[(ref, label)] = head, old
        print(f"{label:42} {head:10.1f} {old:10.1f} {head / old:8.2f}x  {unit}")
    for name in trees:
        growth = values[(name, LOOP_LONG)] / values[(name, LOOP_SHORT)]
        imported = values[(name, IMPORT)] / values[(name, DEPS)]
        print(
            f"{name}: loop per round at 1,600 / at 200 rounds {growth:.2f}x;"
            f" first import / core dependencies {imported:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", help="a git ref to compare the working tree with")
    parser.add_argument("--alternations", type=int, default=5)
    options = parser.parse_args()
    ref_tree = Path(tempfile.mkdtemp(prefix="toolwire-compare-"))
    git = ["git", "-C", str(ROOT)]
    subprocess.run(
        [*git, "worktree", "add", "--detach", "--quiet", str(ref_tree), options.ref], check=True
    )
    try:
        compare(options.ref, ref_tree, options.alternations)
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(ref_tree)], check=False)
        shutil.rmtree(PYCACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
