"""The test suite's own Postgres server: it starts, takes connections, and goes away."""

from __future__ import annotations

from pathlib import Path

import psycopg

from _postgres import running_postgres


def test_postgres_url_takes_connections_and_writes(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql://toolwire:")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS probe (n int)")
        conn.execute("INSERT INTO probe VALUES (1)")
        row = conn.execute("SELECT current_database(), count(*) FROM probe").fetchone()
        conn.execute("DROP TABLE probe")
    assert row is not None
    assert row[0] == "toolwire"
    assert row[1] == 1


def test_the_server_stops_and_its_files_go_on_exit(tmp_path: Path) -> None:
    with running_postgres(tmp_path) as url:
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        cluster = [p.resolve() for p in tmp_path.iterdir()]
        assert cluster
        assert all(p.is_dir() for p in cluster)
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.OperationalError:
        pass
    else:
        raise AssertionError("the server still accepts connections after the block")
    leftover = [p for p in tmp_path.iterdir() if not p.name.endswith(".log")]
    assert leftover == []
    assert [p for p in cluster if p.exists()] == []
