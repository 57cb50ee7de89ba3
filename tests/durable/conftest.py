from __future__ import annotations

import fcntl
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from _postgres import running_postgres, start_postgres

# Under xdist every worker shares one Postgres cluster, started by the first worker that needs it
# (under a file lock in the run's shared temp dir) and stopped by the controller at the end of the
# session (tests/conftest.py, `pytest_sessionfinish`), which reads this file to find it.
SHARED_STATE = "postgres.json"


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Iterator[str]:
    """A real Postgres server for this test session (never skipped when missing)."""
    if worker_id == "master":
        with running_postgres(tmp_path_factory.mktemp("postgres")) as url:
            yield url
        return
    shared = tmp_path_factory.getbasetemp().parent
    with (shared / "postgres.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = shared / SHARED_STATE
        if not state.exists():
            server = start_postgres(shared / "postgres")
            state.write_text(
                json.dumps(
                    {"url": server.url, "root": str(server.root), "data": str(server.data)}
                    | {"log": str(server.log), "bindir": str(server.bindir)}
                )
            )
        url = json.loads(state.read_text())["url"]
    yield url


@pytest.fixture
def fresh_postgres(postgres_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new, empty database on the session's server, for one test, dropped after it."""
    # Named after the test (readable in the server log) and unique across the whole run: tests of
    # other modules and other xdist workers share the server.
    digest = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:10]
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[-40:] + "_" + digest
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield postgres_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A runs database URL: an SQLite file, or a fresh database on the test Postgres server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return request.getfixturevalue("fresh_postgres")
