"""Durable runs: a run survives the death of its process and resumes where it was.

The loop asks a `StepBackend` to run each model request and each tool call; the DBOS backend
(`DurableAgent`, on the `dbos` package: `pip install 'toolwire[durable]'`) makes one run one DBOS
workflow and each step a checkpoint in its system database (a SQLite file, or Postgres for many
workers). `RunClient` sees and steers runs from any process. Importing this package does not
import `dbos`; its DBOS names do, when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy
from .._steps import StepBackend, idempotency_key

if TYPE_CHECKING:
    from ._client import RunClient, RunInfo
    from ._dbos import DurableAgent, launch, shutdown

__all__ = [
    "DurableAgent",
    "RunClient",
    "RunInfo",
    "StepBackend",
    "idempotency_key",
    "launch",
    "shutdown",
]

_HOMES = {
    "DurableAgent": "._dbos",
    "launch": "._dbos",
    "shutdown": "._dbos",
    "RunClient": "._client",
    "RunInfo": "._client",
}

__getattr__, __dir__ = _lazy.lazy_names(globals(), _HOMES)
