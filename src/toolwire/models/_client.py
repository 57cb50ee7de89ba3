"""Plumbing shared by the SDK adapters: the client they hold (rebuilt per event loop when the
adapter built it) and the mapping of an HTTP error answer to toolwire's errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, Self, TypeVar

import anyio.lowlevel

from .._util import retry_after_from_headers
from ..errors import ModelHTTPError, RetryableModelError

__all__ = ["LoopBoundClient", "OwnsClient", "http_error"]


class _SdkClient(Protocol):
    def is_closed(self) -> bool: ...
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_SdkClient)


class LoopBoundClient(Generic[ClientT]):
    """An SDK client whose pooled connections belong to the event loop that opened them.

    A client the adapter built (`factory` given) is rebuilt for a new event loop (each
    `run_sync` starts one, and closes the model at its end) or after it was closed. A client
    passed in by the caller is used as it is and never closed: it is the caller's to manage.
    """

    def __init__(self, client: ClientT, factory: Callable[[], ClientT] | None) -> None:
        self.current = client
        self._factory = factory
        self._loop: object = None

    def get(self) -> ClientT:
        """The client to use in the running event loop."""
        if self._factory is None:
            return self.current
        loop = anyio.lowlevel.current_token().native_token
        if loop != self._loop or self.current.is_closed():
            if self._loop is not None or self.current.is_closed():
                self.current = self._factory()
            self._loop = loop
        return self.current

    async def aclose(self) -> None:
        """Close the client if the adapter built it."""
        if self._factory is not None:
            await self.current.close()


class OwnsClient:
    """`aclose()` and `async with` for adapters holding a `LoopBoundClient`."""

    _clients: LoopBoundClient[Any]

    async def aclose(self) -> None:
        """Close the HTTP client this model built; a client passed in is left to its owner."""
        await self._clients.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def http_error(
    status: int, message: str, *, provider: str, body: object, headers: Mapping[str, str]
) -> ModelHTTPError:
    """An HTTP error answer as toolwire's error: 429 and 5xx are retryable, with `retry_after`."""
    if status == 429 or status >= 500:
        return RetryableModelError(
            status,
            message,
            provider=provider,
            body=body,
            retry_after=retry_after_from_headers(headers),
        )
    return ModelHTTPError(status, message, provider=provider, body=body)
