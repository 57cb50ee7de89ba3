"""Plumbing shared by the SDK adapters: the client they hold (rebuilt per event loop when the
adapter built it), the mapping of an HTTP error answer to toolwire's errors, and the reading of a
server-sent event stream for adapters that parse the bytes themselves."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any, Generic, Protocol, Self, TypeVar, cast

import anyio.lowlevel

from .._sse import read_sse
from .._util import retry_after_from_headers
from ..errors import MissingApiKeyError, ModelHTTPError, ModelResponseError, RetryableModelError

__all__ = [
    "MAX_EVENT_BYTES",
    "MAX_STREAM_BYTES",
    "LoopBoundClient",
    "OwnsClient",
    "http_error",
    "iter_sse",
    "openai_clients",
]

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The largest event read from a model's stream: far above any delta or server tool result."""

MAX_STREAM_BYTES = 512 * 1024 * 1024
"""The largest stream read from a model: a longest answer with its framing is some tens of MiB."""


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


def openai_clients(
    provider: str,
    *,
    api_key: str | None,
    base_url: str | None,
    timeout: float | None,
    max_retries: int,
    client: Any,
    client_factory: Callable[[], Any] | None,
    client_options: Mapping[str, Any],
) -> LoopBoundClient[Any]:
    """The `openai` SDK client an OpenAI-API adapter holds: one it builds (from a factory, or
    from the key and URL), or the caller's `client`, used as it is.

    Raises:
        MissingApiKeyError: no API key for provider `"openai"` (`OPENAI_API_KEY`).
        ValueError: no API key for another provider (no variable is read for those).
    """
    if client_factory is not None:
        return LoopBoundClient(client_factory(), client_factory)
    if client is not None:
        return LoopBoundClient(client, None)
    from openai import AsyncOpenAI

    if api_key is None and provider == "openai":
        api_key = os.environ.get("OPENAI_API_KEY")
    if not api_key:
        if provider == "openai":
            raise MissingApiKeyError(provider, "OPENAI_API_KEY")
        raise ValueError(f"{provider} needs an API key: pass api_key=...")
    options: dict[str, Any] = {"api_key": api_key, "max_retries": max_retries}
    if base_url is not None:
        options["base_url"] = base_url
    if timeout is not None:
        options["timeout"] = timeout
    options.update(client_options)
    # An HTTP client passed in belongs to the caller: never rebuilt nor closed here.
    owned = "http_client" not in client_options
    return LoopBoundClient(
        AsyncOpenAI(**options), (lambda: AsyncOpenAI(**options)) if owned else None
    )


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
    status: int,
    message: str,
    *,
    provider: str,
    body: object,
    headers: Mapping[str, str],
    request_id: str | None = None,
) -> ModelHTTPError:
    """An HTTP error answer as toolwire's error: 429 and 5xx are retryable, with `retry_after`."""
    if status == 429 or status >= 500:
        return RetryableModelError(
            status,
            message,
            provider=provider,
            body=body,
            retry_after=retry_after_from_headers(headers),
            request_id=request_id,
        )
    return ModelHTTPError(status, message, provider=provider, body=body, request_id=request_id)


async def iter_sse(chunks: AsyncIterable[bytes], who: str) -> AsyncIterator[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream, in order, read from the body's bytes.

    Providers name each event inside its payload (`type`); the `event:` line is used only when a
    payload lacks one. A `data: [DONE]` end marker and events without data are skipped. One
    event may take `MAX_EVENT_BYTES`, the whole stream `MAX_STREAM_BYTES`.

    Raises:
        ModelResponseError: an event that is not a JSON object, or a cap passed (`who` names the
            provider).
    """

    def refuse(problem: str) -> ModelResponseError:
        return ModelResponseError(f"{who} sent a stream toolwire does not read: {problem}")

    async for event in read_sse(
        chunks,
        error=refuse,
        max_event_bytes=MAX_EVENT_BYTES,
        max_stream_bytes=MAX_STREAM_BYTES,
    ):
        text = event.data
        if not text or text == "[DONE]":
            continue
        try:
            payload = json.loads(text)
        except ValueError:
            raise ModelResponseError(
                f"{who} sent an event that is not JSON: {text!r:.200}"
            ) from None
        except RecursionError:
            raise ModelResponseError(f"{who} sent an event nested too deeply to read") from None
        if not isinstance(payload, dict):
            raise ModelResponseError(f"{who} sent an event that is not an object: {text!r:.200}")
        payload = cast(dict[str, Any], payload)
        if "type" not in payload and event.event:
            payload["type"] = event.event
        yield payload
