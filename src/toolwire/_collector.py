"""Fewer cyclic garbage collections while many runs are in flight in the process.

The loop makes no reference cycles of its own, yet CPython's cyclic collector walks every object a
run keeps alive (its coroutines, history, requests) each time 700 more objects have been created
than freed. With a thousand runs in flight that is most of the runs' CPU for nothing collected:
measured on 1,000 concurrent three-round runs, 125 ms of collections against 195 ms of work, and
at 5,000 runs more than half the CPU (`benchmarks/compare.py`).

So while at least `MANY` runs are in flight, the first two thresholds are raised to `RAISED`
(collections are delayed, never turned off: young cycles are still found every ten thousand
objects, and the middle generation, which re-walked every run's surviving objects, is collected
ten times less often); when fewer than `MANY // 2` remain, they go back to what they were, unless
the application changed them in the meantime (its setting then stands). A threshold of 0
(collection disabled) is left alone. One run, or a few, never touch the collector.
"""

from __future__ import annotations

import gc
import threading
from types import TracebackType

__all__ = ["MANY", "RAISED", "RunsInFlight", "runs_in_flight"]

MANY = 64
"""Runs in flight from which the collector's first threshold is raised."""

RAISED = (10_000, 100)
"""The first two thresholds while many runs are in flight (Python's defaults: 700 and 10)."""


class RunsInFlight:
    """Counts the runs in flight (a context manager entered once per run, from any thread)."""

    __slots__ = ("_count", "_lock", "_saved")

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()
        self._saved: tuple[int, int] | None = None  # the thresholds replaced, while raised

    @property
    def count(self) -> int:
        return self._count

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1
            if self._count == MANY and self._saved is None:
                first, second, third = gc.get_threshold()
                if 0 < first < RAISED[0]:
                    self._saved = (first, second)
                    gc.set_threshold(RAISED[0], max(second, RAISED[1]), third)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with self._lock:
            self._count -= 1
            if self._saved is not None and self._count < MANY // 2:
                first, second, third = gc.get_threshold()
                if (first, second) == (RAISED[0], max(self._saved[1], RAISED[1])):
                    gc.set_threshold(*self._saved, third)  # else the application's own stands
                self._saved = None


runs_in_flight = RunsInFlight()
"""The process's one count of runs in flight (the collector is the process's too)."""
