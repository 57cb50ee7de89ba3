"""What a run cost: token usage (`Usage`), money (`Cost`) and run limits.

Token prices come from `genai-prices`; the per-use fees of provider-side tools from the profiles
(`toolwire.models.profiles.TOOL_FEES`, built from each profile's `fees`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import anyio.to_thread

from .models.profiles import TOOL_FEES

__all__ = [
    "Cost",
    "RunLimits",
    "Usage",
    "estimate_cost",
    "load_prices",
    "preload_prices",
]

_OFFLINE_PROVIDERS = frozenset({"test"})


@dataclass(slots=True)
class Usage:
    """Tokens and requests, summed with `+`.

    Attributes:
        input_tokens: Prompt tokens, cached ones included.
        output_tokens: Completion tokens, reasoning included.
        cache_read_tokens: Input tokens served from the provider's cache.
        cache_write_tokens: Input tokens written to the provider's cache.
        reasoning_tokens: Output tokens spent on reasoning.
        requests: Model requests made.
        server_tool_requests: Provider-side tool uses by type (e.g. `{"web_search": 2}`).
        cache_write_1h_tokens: Of `cache_write_tokens`, those written for an hour (Anthropic's
            `ttl: "1h"`, priced higher than the 5-minute default).
        tool_definition_tokens: Of the input, the tool definitions sent (an estimate made by
            toolwire, summed over requests: see `toolwire.tokens`).
        message_tokens: Of the input, the messages sent (an estimate, summed over requests;
            text only: images and files are not counted).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    server_tool_requests: dict[str, int] = field(default_factory=dict[str, int])
    cache_write_1h_tokens: int = 0
    # Estimates, not the provider's counts: left out of comparisons.
    tool_definition_tokens: int = field(default=0, compare=False)
    message_tokens: int = field(default=0, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        servers = dict(self.server_tool_requests)
        for key, value in other.server_tool_requests.items():
            servers[key] = servers.get(key, 0) + value
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cache_write_1h_tokens=self.cache_write_1h_tokens + other.cache_write_1h_tokens,
            requests=self.requests + other.requests,
            server_tool_requests=servers,
            tool_definition_tokens=self.tool_definition_tokens + other.tool_definition_tokens,
            message_tokens=self.message_tokens + other.message_tokens,
        )


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


def _tool_fees(provider: str, usage: Usage) -> Decimal | str:
    """The per-use fees of a request, or why they are unknown."""
    total = Decimal(0)
    for kind, count in usage.server_tool_requests.items():
        if not count:
            continue
        fee = TOOL_FEES.get((provider, kind))
        if fee is None:
            return (
                f"no known fee for {provider}'s {kind} tool (add one to "
                "toolwire.models.profiles.TOOL_FEES)"
            )
        total += fee.per_use * count
    return total


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
    if usage.cache_write_1h_tokens:
        # A share of `cache_write_tokens` in genai-prices' terms too, at the hour's price.
        values["cache_write_1h_tokens"] = usage.cache_write_1h_tokens
    # Provider-side tool uses are priced from TOOL_FEES, the one table users can extend.
    return PriceUsage(**values)


def estimate_cost(requests: Iterable[tuple[str, str | None, Usage]]) -> Cost:
    """Price each `(provider, model, usage)` request with `genai-prices` and sum.

    Provider-side tool uses (`usage.server_tool_requests`) add their fees from `TOOL_FEES`. The
    price is unknown (`total=None` with a reason) when `genai-prices` is not installed, when a
    model is not in its tables, when a tool use has no known fee, or for the offline test models.
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
        fees = _tool_fees(provider, usage)
        if isinstance(fees, str):
            return Cost(None, fees)
        total += price.total_price + fees
    return Cost(total)
