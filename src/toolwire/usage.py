"""What a run cost: token usage (see `models.base.Usage`), money (`Cost`) and run limits."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import anyio.to_thread

from .models.base import Usage

__all__ = ["Cost", "RunLimits", "estimate_cost", "load_prices", "preload_prices"]

_OFFLINE_PROVIDERS = frozenset({"test"})


@dataclass(frozen=True, slots=True)
class Cost:
    """The price of a run in US dollars, or why it is unknown.

    Attributes:
        total: The sum over every model request, or `None` when any request's price is unknown.
        reason: Why `total` is `None`.
    """

    total: Decimal | None
    reason: str | None = None
    currency: str = "USD"

    def __bool__(self) -> bool:
        return self.total is not None


@dataclass(frozen=True, slots=True)
class RunLimits:
    """Budgets for one run; reaching one ends it with a matching `stop_reason`.

    Attributes:
        max_iterations: Model requests, at most.
        max_tokens: Input plus output tokens over the run, at most.
        max_cost: US dollars over the run, at most (needs known prices).
        max_seconds: Wall-clock time of the run, at most.
        raise_on_limit: Raise `UsageLimitExceeded` instead of returning the partial result.
    """

    max_iterations: int = 8
    max_tokens: int | None = None
    max_cost: Decimal | float | None = None
    max_seconds: float | None = None
    raise_on_limit: bool = False

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        for name in ("max_tokens", "max_cost", "max_seconds"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")


_loader_lock = threading.Lock()
_loader: threading.Thread | None = None


def _load_price_tables() -> None:
    try:
        from genai_prices import data_snapshot

        data_snapshot.get_snapshot()
    except Exception:  # not installed, or broken: `estimate_cost` says why when asked
        return


def preload_prices() -> threading.Thread:
    """Start loading the price tables in a background thread (once per process); returns it.

    Importing `genai-prices` takes a few tenths of a second. Done when a priced model is built,
    the first run's cost no longer blocks the event loop for that long at its end.
    """
    global _loader
    with _loader_lock:
        if _loader is None:
            _loader = threading.Thread(
                target=_load_price_tables, name="toolwire-price-tables", daemon=True
            )
            _loader.start()
        return _loader


async def load_prices() -> None:
    """Load the price tables in a worker thread and wait for them, without blocking the loop."""
    loader = preload_prices()
    await anyio.to_thread.run_sync(loader.join)


def _price_usage(usage: Usage) -> Any:
    from genai_prices import Usage as PriceUsage

    values: dict[str, int] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }
    if usage.cache_read_tokens:
        values["cache_read_tokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        values["cache_write_tokens"] = usage.cache_write_tokens
    searches = usage.server_tool_requests.get("web_search", 0)
    if searches:
        values["web_searches"] = searches
    executions = usage.server_tool_requests.get("code_execution", 0)
    if executions:
        values["code_executions"] = executions
    return PriceUsage(**values)


def estimate_cost(requests: Iterable[tuple[str, str | None, Usage]]) -> Cost:
    """Price each `(provider, model, usage)` request with `genai-prices` and sum.

    The price is unknown (`total=None` with a reason) when `genai-prices` is not installed, when a
    model is not in its tables, or for the offline test models.
    """
    total = Decimal(0)
    for provider, model, usage in requests:
        if provider in _OFFLINE_PROVIDERS:
            return Cost(None, f"the offline {provider!r} model has no price")
        if not model:
            return Cost(None, f"{provider} did not say which model answered")
        try:
            from genai_prices import calc_price
        except ImportError:
            return Cost(None, "genai-prices is not installed (pip install genai-prices)")
        try:
            price = calc_price(_price_usage(usage), model, provider_id=provider)
        except LookupError as exc:
            return Cost(None, f"no known price for {provider}:{model} ({exc})")
        except ValueError as exc:
            # Usage the tables refuse (e.g. more cached than input tokens, from a server that
            # miscounts): the price is unknown, and the run's result must not be lost over it.
            return Cost(None, f"cannot price {provider}:{model}: {exc}")
        total += price.total_price
    return Cost(total)
