"""Shared fixtures of the model tests: a local HTTP server answering what a test scripts
(`serve`, see model_servers.HostileServer), a silent one, a refused port, and one place that closes
the models a test opened (`model_servers.closing`, closed by the autouse `_close_models`)."""

from __future__ import annotations

import inspect
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack

import pytest
from model_servers import Action, HostileServer, close_all, free_port


@pytest.fixture
def serve() -> Iterator[Callable[..., HostileServer]]:
    """Start a `HostileServer` answering the given actions in order; closed after the test."""
    with ExitStack() as stack:

        def start(*script: Action) -> HostileServer:
            return stack.enter_context(HostileServer(list(script)))

        yield start


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The root URL of a socket that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


@pytest.fixture
def refused_url() -> str:
    """The root URL of a loopback port nobody listens on."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(autouse=True)
def _close_models(request: pytest.FixtureRequest) -> None:
    # Only an async test has an event loop to close models on; a synchronous one (run_sync
    # starts its own loops) must not get anyio's runner started around it.
    if "anyio_backend" in request.fixturenames and inspect.iscoroutinefunction(request.function):
        request.getfixturevalue("_closing_models")


@pytest.fixture
async def _closing_models() -> AsyncIterator[None]:
    yield
    await close_all()
