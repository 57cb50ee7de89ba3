"""Fixtures for the prebuilt tools: real HTTP servers on 127.0.0.1 and a resolver the test controls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prebuilt_fakes import FakeDNS, FakeServer

from toolwire.prebuilt import EgressPolicy


@pytest.fixture
def server() -> Iterator[FakeServer]:
    fake = FakeServer()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def dns() -> FakeDNS:
    return FakeDNS()


@pytest.fixture
def local_policy(dns: FakeDNS) -> EgressPolicy:
    """A policy that opens 127.0.0.1 only, with the test's resolver."""
    return EgressPolicy(allow=["127.0.0.1"], resolver=dns, timeout=10.0)
