"""Prints the official suite's figures per draft at the end of the run (see test_official_suite)."""

from __future__ import annotations

import pytest

_LINES = pytest.StashKey[list[str]]()


@pytest.fixture
def suite_report(request: pytest.FixtureRequest) -> list[str]:
    """Lines to print in the terminal summary."""
    return request.config.stash.setdefault(_LINES, [])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(_LINES, [])
    if lines:
        terminalreporter.section("JSON-Schema-Test-Suite (required tests include refRemote)")
        for line in lines:
            terminalreporter.write_line(line)
