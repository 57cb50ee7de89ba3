from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from _postgres import running_postgres


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Postgres server started for this test session (never skipped when missing)."""
    with running_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url


@pytest.fixture
def fresh_postgres(postgres_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new, empty database on the session's server, for one test, dropped after it."""
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[-50:]
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
