"""Small helpers shared across toolwire: callbacks that may be sync or async, a few awaits at
once, `Retry-After` headers, and backoff delays. Private: the public names are re-exported where
they belong."""

from __future__ import annotations

import datetime
import email.utils
import inspect
import math
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import anyio

__all__ = [
    "backoff_delay",
    "each_at_once",
    "maybe_await",
    "retry_after_from_headers",
    "retry_after_seconds",
]


async def maybe_await(value: Any) -> Any:
    """`value`, awaited first when it is awaitable (for callbacks that may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


def retry_after_seconds(value: str | None) -> float | None:
    """Parse an HTTP `Retry-After` header (seconds or an HTTP date) into seconds from now."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) or seconds > 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" parses naive; HTTP dates are always GMT
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - time.time())


def _header(headers: Any, name: str) -> str | None:
    """A header by name, whatever the spelling of the keys (plain dicts are case-sensitive)."""
    if not hasattr(headers, "get"):
        return None
    found = headers.get(name)
    if found is None and hasattr(headers, "items"):
        found = next((v for k, v in headers.items() if str(k).lower() == name), None)
    return found if isinstance(found, str) else None


def retry_after_from_headers(headers: Any) -> float | None:
    """Seconds to wait from response headers: `retry-after-ms`, else `Retry-After`."""
    # `retry-after-ms` (OpenAI, Anthropic) is the more precise of the two when both are sent.
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        try:
            value = float(millis)
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value / 1000)
    return retry_after_seconds(_header(headers, "retry-after"))


def backoff_delay(
    attempt: int, *, initial: float, maximum: float, multiplier: float, jitter: bool
) -> float:
    """The delay after failed attempt `attempt` (1-based): exponential, capped, maybe jittered."""
    delay = min(maximum, initial * multiplier ** (attempt - 1))
    # "Equal jitter": at least half the delay, so retries stay spread out but never bunch at 0.
    return random.uniform(delay / 2, delay) if jitter else delay


async def each_at_once(
    one: Callable[[int], Coroutine[Any, Any, None]], items: Sequence[int]
) -> None:
    """`await one(i)` for every item, concurrently when there are several (one is awaited in
    place: a task group for it would only cost)."""
    if len(items) == 1:
        await one(items[0])
    elif items:
        async with anyio.create_task_group() as group:
            for i in items:
                group.start_soon(one, i)
