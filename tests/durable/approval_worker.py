"""A worker process for the approval gate of a durable run (tests/test_approval_gate.py).

    python approval_worker.py DB DIR

Pauses a run on two calls that need approval, then starts a second durable run from the paused
history with only one of them approved. Prints one JSON line: the first run's stop reason, what
the second run raised (or its stop reason, if it wrongly went on), and the calls that really ran
(from DIR/effects).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from worker_launch import launch

from toolwire import Agent, ScriptedModel, tool
from toolwire.durable import DurableAgent, shutdown

EFFECTS: list[Path] = []  # the file the calls that really ran are written to


@tool(requires_approval=True)
def refund(order: str) -> str:
    """Refund an order (needs approval)."""
    with EFFECTS[0].open("a") as f:
        f.write(order + "\n")
    return f"refunded {order}"


async def main() -> None:
    db, folder = sys.argv[1:3]
    effects = Path(folder) / "effects"
    EFFECTS.append(effects)
    model = ScriptedModel([[("refund", {"order": "a"}), ("refund", {"order": "b"})], "done"])
    durable = DurableAgent(Agent(model, tools=[refund]), name="gate", approval_wait=0)
    launch(db)
    paused = await durable.run("refund a and b", run_id="gate-1")
    first = paused.pending[0].call.id
    report: dict[str, object] = {"paused": paused.stop_reason, "pending": len(paused.pending)}
    try:
        later = await durable.run(run_id="gate-2", history=paused.messages, approvals={first: True})
    except Exception as exc:  # what the refused resume raised, for the test to read
        report["error"] = f"{type(exc).__name__}: {exc}"
    else:
        report["stop_reason"] = later.stop_reason
    report["ran"] = effects.read_text().split() if effects.exists() else []
    print(json.dumps(report), flush=True)
    shutdown()


if __name__ == "__main__":
    anyio.run(main)
