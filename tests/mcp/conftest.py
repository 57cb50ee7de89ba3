"""Fixtures of the MCP tests; the helpers behind them live in mcp_fixtures.py (importable)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp_fixtures import ServerProcess


@pytest.fixture
async def server_process(tmp_path: Path) -> AsyncIterator[Any]:
    started: list[ServerProcess] = []

    async def start(kind: str) -> ServerProcess:
        proc = ServerProcess(kind, tmp_path / f"{kind}.log")
        started.append(proc)
        await proc.start()
        return proc

    yield start
    for proc in started:
        await proc.kill()
