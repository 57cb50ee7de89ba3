from __future__ import annotations

import json
from pathlib import Path

import pytest

from _postgres import RunningPostgres, server_account


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (`--dist loadgroup`)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep the tests that share a module- or class-scoped fixture on one xdist worker.

    Such a fixture is expensive by design (a server, a venv, a whole conformance run); spread over
    workers it would be built once per worker instead of once. Tests of one module that use any
    of them form one group (tests/README.md).
    """
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for name in info.names_closure:
            defs = info.name2fixturedefs.get(name)
            if defs and defs[-1].scope in ("module", "class", "package"):
                item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
                break


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
