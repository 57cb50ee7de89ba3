"""A small mutation check: deliberate bugs in the security-relevant code, each of which a named
test must catch.

    python tests/mutations.py            every mutant
    python tests/mutations.py NAME ...   only these (see --list)

Each mutant is a text patch applied to a temporary copy of src/ (the working tree is never
touched); the named tests then run with PYTHONPATH pointing at that copy (subprocesses the tests
start inherit it). A mutant is *caught* when those tests fail, *missed* when they pass; a patch
whose text is no longer in the source is reported as *stale*. The exit status is non-zero on any
missed or stale mutant, or on a test run that ended in an error rather than a failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TIMEOUT = 900  # seconds for one mutant's tests


@dataclass(frozen=True)
class Mutant:
    name: str
    why: str  # the bug, in words
    file: str  # relative to src/toolwire
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids or files that must fail


MUTANTS = (
    Mutant(
        "approval-gate",
        "resume_turn lets a call that needs approval run undecided",
        "_loop.py",
        "            elif tool is not None and self.needs_approval(tool) and verdict is None:\n"
        '                undecided.append(f"{call.id} ({call.name}: needs approval)")\n',
        "",
        ("tests/test_approval_gate.py",),
    ),
    Mutant(
        "egress-private",
        "the egress guard lets private IPv4 addresses through",
        "prebuilt/_egress.py",
        '            reason = "not a globally routable address"\n        return reason\n'
        "    if ip.scope_id:",
        '            reason = "not a globally routable address"\n'
        "        return None if ip.is_private else reason\n"
        "    if ip.scope_id:",
        ("tests/prebuilt/test_egress.py",),
    ),
    Mutant(
        "arithmetic-depth",
        "the calculator's nesting limit is 1000 times too high",
        "prebuilt/arithmetic.py",
        "        if self.depth > MAX_DEPTH:\n",
        "        if self.depth > MAX_DEPTH * 1000:\n",
        ("tests/prebuilt/test_calculator.py",),
    ),
    Mutant(
        "arithmetic-factorial",
        "the calculator's factorial limit is 100 times too high",
        "prebuilt/arithmetic.py",
        "    if n > MAX_FACTORIAL:\n",
        "    if n > MAX_FACTORIAL * 100:\n",
        ("tests/prebuilt/test_calculator.py",),
    ),
    Mutant(
        "validate-required",
        "argument validation forgets missing required properties",
        "_validate_checks.py",
        "            if name not in inst:\n"
        '                ctx.fail(path, "required property is missing", key=name)\n',
        "            if name not in inst and False:\n"
        '                ctx.fail(path, "required property is missing", key=name)\n',
        ("tests/test_validate.py", "tests/test_arguments.py"),
    ),
    Mutant(
        "validate-bounds",
        "argument validation ignores minimum and maximum",
        "_validate_checks.py",
        "        if not compare(inst, limit):\n",
        "        if False:\n",
        ("tests/test_validate.py", "tests/test_arguments.py"),
    ),
    Mutant(
        "mcp-bearer",
        "the MCP server accepts any token sent with the Bearer scheme",
        "mcp/server.py",
        'valid = scheme.lower() == b"bearer" and hmac.compare_digest(',
        'valid = scheme.lower() == b"bearer" or hmac.compare_digest(',
        ("tests/mcp/test_mcp_server.py::test_bearer_token_is_required",),
    ),
    Mutant(
        "token-audience",
        "the resource server accepts a token issued for any audience",
        "mcp/_token_check.py",
        "    return any(isinstance(v, str) and v in accepted for v in values)\n",
        "    return True\n",
        ("tests/mcp/test_mcp_resource_auth_hostile.py::test_one_audience_rule_for_both_modes",),
    ),
    Mutant(
        "call-ids",
        "two calls of one turn may share an id",
        "models/_completion.py",
        "        if not call.id or call.id in seen:\n",
        "        if not call.id:\n",
        ("tests/test_loop_call_ids.py",),
    ),
    Mutant(
        "tool-cancellation",
        "Tool.invoke turns cancellation into an error result",
        "tools.py",
        "            return to_result(value)\n        except Exception as exc:\n",
        "            return to_result(value)\n        except BaseException as exc:\n",
        ("tests/test_tools.py::test_cancellation_propagates",),
    ),
)


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The mutant copy first; the working tree's src/ is dropped so it cannot shadow the copy.
    kept = [
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and Path(p).resolve() != SRC.resolve() and p != "src"
    ]
    env["PYTHONPATH"] = os.pathsep.join([str(src), *kept])
    return env


def _check(mutant: Mutant, work: Path) -> tuple[str, str]:
    """Apply one mutant to a fresh copy of src/ and run its tests: (outcome, detail)."""
    copy = work / mutant.name
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    target = copy / "toolwire" / mutant.file
    text = target.read_text()
    if text.count(mutant.old) != 1:
        return "stale", f"the patch text is found {text.count(mutant.old)} times in {mutant.file}"
    target.write_text(text.replace(mutant.old, mutant.new))
    env = _env(copy)
    where = subprocess.run(
        [sys.executable, "-c", "import toolwire; print(toolwire.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        return "error", f"toolwire imported from {where}, not from the mutant copy"
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *mutant.tests]
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT
        )
    except subprocess.TimeoutExpired:
        return "error", f"the tests took more than {TIMEOUT}s"
    last = (done.stdout.strip().splitlines() or [""])[-1]
    if done.returncode == 1:
        return "caught", last
    if done.returncode == 0:
        return "missed", last
    return "error", f"pytest exited {done.returncode}: {last}\n{done.stdout[-2000:]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args()
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:22} {m.why}  [{', '.join(m.tests)}]")
        return 0
    known = {m.name for m in MUTANTS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"unknown mutants: {', '.join(unknown)} (see --list)")
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="toolwire-mutants-") as tmp:
        for mutant in chosen:
            start = time.monotonic()
            outcome, detail = _check(mutant, Path(tmp))
            bad += outcome != "caught"
            took = time.monotonic() - start
            print(f"{outcome.upper():7} {mutant.name:22} {took:6.1f}s  {mutant.why}", flush=True)
            if outcome != "caught":
                print(f"        tests: {' '.join(mutant.tests)}\n        {detail}", flush=True)
    print(f"{len(chosen) - bad} of {len(chosen)} mutants caught")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
