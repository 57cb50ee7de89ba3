"""How every durable test worker starts DBOS: `launch`, looking for news every twentieth of a second.

With SQLite, DBOS looks for decisions and events, and workers for queued runs, once a second by
default (`launch(poll_interval=1.0)`); a test that waits for a decision or a hand-over would
wait that second each time. The workers import `launch` from here, so the interval is chosen once.
"""

from __future__ import annotations

from typing import Any

from toolwire.durable import launch as launch_dbos

__all__ = ["POLL_INTERVAL", "launch"]

POLL_INTERVAL = 0.05


def launch(database_url: str, **options: Any) -> None:
    """`toolwire.durable.launch` with the tests' `poll_interval`."""
    launch_dbos(database_url, poll_interval=POLL_INTERVAL, **options)
