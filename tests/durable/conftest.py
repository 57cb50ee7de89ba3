from __future__ import annotations

from collections.abc import Iterator

import pytest

from _postgres import running_postgres


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Postgres server started for this test session (never skipped when missing)."""
    with running_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url
