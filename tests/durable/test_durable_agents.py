"""A durable run whose agent calls another agent as a tool: the sub-run's model requests and
tool calls are steps of the caller's workflow, so a worker killed inside the sub-run goes on
from the sub-run's last checkpoint (no side effect twice, no scripted reply given twice)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire import Agent, ScriptedModel, tool
from toolwire.durable._client import _check_decision  # pyright: ignore[reportPrivateUsage]

from .processes import Worker

SCRIPT = Path(__file__).with_name("agents_worker.py")


def test_a_sub_agent_killed_mid_run_goes_on_from_its_checkpoints(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    log = tmp_path / "worker.log"
    first = Worker(database, "boss-1", str(tmp_path), "tool:b:before", log=log, script=SCRIPT)
    try:
        first.wait_for("at tool:b:before")
    finally:
        first.kill()
    assert (tmp_path / "effects").read_text().split()[0::2] == ["a"]

    second = Worker(database, "boss-1", str(tmp_path), log=log, script=SCRIPT)
    out = second.wait_for('"text"')
    assert second.finish() == 0, log.read_text()
    outcome = json.loads(out.strip().splitlines()[-1])
    assert outcome["text"] == "All charged."
    assert outcome["tool_result"] == "Charged a and b."
    assert outcome["children"] == ["charge", "charge"]
    assert outcome["requests"] == {"boss": 2, "worker": 3}
    effects = (tmp_path / "effects").read_text().split()
    # `a` ran once (its step was a checkpoint), `b` once, with the keys of the caller's run.
    assert effects[0::2] == ["a", "b"]
    assert effects[1].startswith("boss-1:1:") and effects[3].startswith("boss-1:2:")


def test_a_decision_for_a_call_a_sub_agent_paused_on_is_accepted() -> None:
    @tool(requires_approval=True)
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        return "wiped"

    admin = Agent(ScriptedModel([("wipe", {"disk": "d1"})]), name="admin", tools=[wipe])
    boss = Agent(ScriptedModel([("admin", {"input": "wipe d1"})]), tools=[admin.as_tool()])
    paused = boss.run_sync("Go.")
    nested = paused.pending[0].call.id
    assert nested == "call_1/call_1"
    _check_decision(paused, {nested: True}, {})  # what RunClient.decide checks first
    with pytest.raises(ValueError, match="undecided calls: call_1/call_1"):
        _check_decision(paused, {}, {})
    with pytest.raises(ValueError, match="no call with id 'call_1/call_9'"):
        _check_decision(paused, {"call_1/call_9": True}, {})
