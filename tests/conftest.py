from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from _postgres import RunningPostgres, server_account


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The tests that must share one xdist worker: {nodeid: group}, written by each worker at collection
# into the run's shared temp dir and read by the controller's scheduler. xdist's own
# `--dist loadgroup` marks nodeids through `item._nodeid`, which pytest 9 no longer reads, so
# its groups silently fall apart; this does the same job without that.
GROUPS = "xdist-groups.json"


def _group(item: pytest.Item) -> str | None:
    for mark in item.iter_markers("xdist_group"):
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    # A module- or class-scoped fixture is expensive by design (a server, a venv, a whole
    # conformance run); spread over workers it would be built once per worker instead of once.
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope in ("module", "class", "package"):
            return item.nodeid.split("::")[0]
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Record which tests must run on one worker (tests/README.md)."""
    if not hasattr(config, "workerinput"):
        return
    groups = {item.nodeid: group for item in items if (group := _group(item)) is not None}
    shared = Path(config._tmp_path_factory.getbasetemp()).parent
    draft = shared / f"{GROUPS}.{config.workerinput['workerid']}"
    draft.write_text(json.dumps(groups))
    os.replace(draft, shared / GROUPS)  # every worker collects the same tests: any copy will do


# Tests that start browsers, servers or worker processes take seconds each, most others
# milliseconds. Handed out first, they are spread over the workers while the quick tests fill the
# gaps, instead of ending the run with one worker busy on them and the others idle.
_SLOW_FIRST = (
    "tests/ui/",
    "tests/durable/",
    "tests/mcp/test_serve",
    "tests/mcp/test_conformance",
    "tests/mcp/test_mcp_conformance.py",
    "tests/test_cli",
    "tests/test_extras.py",
    "tests/test_tool_cost.py",
)


def _quick(nodeid: str) -> bool:
    return not nodeid.startswith(_SLOW_FIRST)


class _GroupScheduling(LoadScopeScheduling):
    """xdist's load-scope scheduling whose scopes are the recorded groups (else single tests).

    xdist hands out the groups with the most tests first, then single tests in collection order;
    here the slow single tests (`_SLOW_FIRST`) come before the quick ones.
    """

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def schedule(self) -> None:
        first = self.collection is None
        super().schedule()
        if first and self.workqueue:
            # Reordered in the queue of units still to hand out, never in the collections: xdist
            # sends a worker positions in that worker's own collection, so a sorted copy there
            # made every worker run other tests than the ones scheduled (groups torn apart, their
            # module fixtures built again and again).
            units = sorted(
                self.workqueue.items(), key=lambda unit: len(unit[1]) == 1 and _quick(unit[0])
            )
            self.workqueue.clear()
            self.workqueue.update(units)

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            path = Path(self.config._tmp_path_factory.getbasetemp()) / GROUPS
            self._groups = json.loads(path.read_text()) if path.exists() else {}
        return self._groups.get(nodeid, nodeid)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` (what `make test` asks for) schedules by the recorded groups."""
    if config.getvalue("dist") == "loadgroup":
        return _GroupScheduling(config, log)
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On the xdist controller: stop the Postgres cluster the workers shared, if one started.

    tests/durable/conftest.py starts it in the first worker that needs it and records it in the
    run's shared temp dir; workers end at different times, so only the controller knows when
    none of them needs it any more.
    """
    config = session.config
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("dsession"):
        return
    shared = Path(config._tmp_path_factory.getbasetemp())  # the workers' basetemp's parent
    state = shared / "postgres.json"
    if not state.exists():
        return
    found = json.loads(state.read_text())
    RunningPostgres(
        found["url"],
        shared / "postgres",
        Path(found["root"]),
        Path(found["data"]),
        Path(found["log"]),
        Path(found["bindir"]),
        # The account it runs as is looked up again, by the rule it started with.
        server_account(),
    ).stop()
    state.unlink()
