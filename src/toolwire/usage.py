"""What a run cost: token usage (`Usage`), money (`Cost`) and run limits.

Token prices come from `genai-prices`; the per-use fees of provider-side tools from the profiles
(`toolwire.models.profiles.TOOL_FEES`, built from each profile's `fees`).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable
from dataclasses import field
from decimal import Decimal
from typing import Any

import anyio.to_thread

from ._record import empty_dict, record
from .models.profiles import TOOL_FEES

__all__ = [
    "Cost",
    "Estimate",
    "RunLimits",
    "Usage",
    "estimate_cost",
    "estimate_later",
    "load_prices",
    "preload_prices",
    "sum_usages",
]

_OFFLINE_PROVIDERS = frozenset({"test"})


class Estimate:
    """Token estimates of what requests carried (tool definitions, messages), worked out the
    first time they are read.

    The loop hangs one on each request's `Usage` in place of `tool_definition_tokens` and
    `message_tokens` (`estimate_later`): a run nobody reads them from pays nothing for them.
    Reading either figure works it out once and keeps the numbers.
    """

    __slots__ = ()

    def figures(self) -> tuple[int, int]:
        """(tool definition tokens, message tokens)."""
        raise NotImplementedError

    def join(self, later: Estimate) -> Estimate:
        """This estimate and a later one summed, still to be worked out (`Usage.__add__`)."""
        return _Summed(self, later)


class _Fixed(Estimate):
    """Figures known already (a usage that carried numbers, added to one that carries an
    estimate)."""

    __slots__ = ("_figures",)

    def __init__(self, definitions: int, messages: int) -> None:
        self._figures = (definitions, messages)

    def figures(self) -> tuple[int, int]:
        return self._figures


class _Summed(Estimate):
    """Two estimates summed; worked out without recursion, since usages summed in a loop (runs of
    a CLI session, sub-runs) make a long chain."""

    __slots__ = ("_figures", "_parts")

    def __init__(self, first: Estimate, later: Estimate) -> None:
        self._parts: tuple[Estimate, ...] = (first, later)
        self._figures: tuple[int, int] | None = None

    def figures(self) -> tuple[int, int]:
        if self._figures is None:
            definitions = messages = 0
            stack: list[Estimate] = [self]
            while stack:
                item = stack.pop()
                if isinstance(item, _Summed) and item._figures is None:
                    stack.extend(item._parts)
                    continue
                d, m = item.figures()
                definitions += d
                messages += m
            self._figures, self._parts = (definitions, messages), ()
        return self._figures


@record
class _Counts:
    """Where a `Usage`'s figures are kept (see `Usage`, which reads two of them through
    properties that work out an `Estimate` left in them)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    server_tool_requests: dict[str, int] = field(default_factory=empty_dict)
    cache_write_1h_tokens: int = 0
    # Estimates, not the provider's counts: left out of comparisons. Each holds an int, or the
    # same `Estimate` in both until one of them is read.
    tool_definition_tokens: int = field(default=0, compare=False)
    message_tokens: int = field(default=0, compare=False)


_DEFINITIONS: Any = _Counts.tool_definition_tokens  # the slots themselves, past the properties
_MESSAGES: Any = _Counts.message_tokens


def _read_definitions(usage: _Counts) -> int:
    value = _DEFINITIONS.__get__(usage)
    return _settle(usage)[0] if isinstance(value, Estimate) else value


def _read_messages(usage: _Counts) -> int:
    value = _MESSAGES.__get__(usage)
    return _settle(usage)[1] if isinstance(value, Estimate) else value


def _settle(usage: _Counts) -> tuple[int, int]:
    """Work out the estimate a usage holds, keeping the figures in the slots that held it (one of
    the two may have been set by hand since)."""
    definitions, messages = _DEFINITIONS.__get__(usage), _MESSAGES.__get__(usage)
    estimate: Estimate = definitions if isinstance(definitions, Estimate) else messages
    figures = estimate.figures()
    if definitions is estimate:
        _DEFINITIONS.__set__(usage, figures[0])
    if messages is estimate:
        _MESSAGES.__set__(usage, figures[1])
    return _DEFINITIONS.__get__(usage), _MESSAGES.__get__(usage)


def _estimate_of(usage: _Counts) -> Estimate | None:
    """What a usage's two estimates hold, unread: an `Estimate`, or `None` for zeros."""
    definitions, messages = _DEFINITIONS.__get__(usage), _MESSAGES.__get__(usage)
    if definitions is messages and isinstance(definitions, Estimate):
        return definitions
    if isinstance(definitions, Estimate) or isinstance(messages, Estimate):
        definitions, messages = _settle(usage)
    return _Fixed(definitions, messages) if definitions or messages else None


class Usage(_Counts):
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

    __slots__ = ()

    # Read through a property that works out an `Estimate` the loop left in the slot; set
    # straight into the slot (the slot's own setter: no Python call for every usage built).
    # Still an int to whoever reads or sets it, hence the ignores.
    tool_definition_tokens = property(_read_definitions, _DEFINITIONS.__set__)  # pyright: ignore[reportIncompatibleVariableOverride, reportAssignmentType]
    message_tokens = property(_read_messages, _MESSAGES.__set__)  # pyright: ignore[reportIncompatibleVariableOverride, reportAssignmentType]

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        servers = dict(self.server_tool_requests)
        for key, value in other.server_tool_requests.items():
            servers[key] = servers.get(key, 0) + value
        summed = Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.requests + other.requests,
            servers,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )
        # The estimates are summed unread: reading them here would work out every request's.
        mine, theirs = _estimate_of(self), _estimate_of(other)
        both = mine if theirs is None else theirs if mine is None else mine.join(theirs)
        if both is not None:
            _DEFINITIONS.__set__(summed, both)
            _MESSAGES.__set__(summed, both)
        return summed


def sum_usages(usages: Iterable[Usage]) -> Usage:
    """The sum of `usages` (a new `Usage`, as `+` chained from `Usage()` would make it), built
    once: the loop sums a run's requests when its usage is read, not once per request."""
    inputs = outputs = cache_reads = cache_writes = reasoning = requests = hour_writes = 0
    servers: dict[str, int] = {}
    both: Estimate | None = None
    for usage in usages:
        inputs += usage.input_tokens
        outputs += usage.output_tokens
        cache_reads += usage.cache_read_tokens
        cache_writes += usage.cache_write_tokens
        reasoning += usage.reasoning_tokens
        requests += usage.requests
        hour_writes += usage.cache_write_1h_tokens
        for key, value in usage.server_tool_requests.items():
            servers[key] = servers.get(key, 0) + value
        # The estimates are summed unread, as `+` does.
        estimate = _estimate_of(usage)
        if estimate is not None:
            both = estimate if both is None else both.join(estimate)
    summed = Usage(
        inputs, outputs, cache_reads, cache_writes, reasoning, requests, servers, hour_writes
    )
    if both is not None:
        _DEFINITIONS.__set__(summed, both)
        _MESSAGES.__set__(summed, both)
    return summed


def estimate_later(usage: Usage, estimate: Estimate) -> Usage:
    """`usage` with `estimate` as its `tool_definition_tokens` and `message_tokens`, worked out
    when first read: the same object, or a copy when it carries figures already (a scripted
    model may hand one usage object back twice)."""
    definitions = _DEFINITIONS.__get__(usage)
    if definitions.__class__ is not int or definitions or _MESSAGES.__get__(usage):
        usage = dataclasses.replace(usage, tool_definition_tokens=0, message_tokens=0)
    _DEFINITIONS.__set__(usage, estimate)
    _MESSAGES.__set__(usage, estimate)
    return usage


@record(frozen=True)
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


_OFFLINE_COSTS = {
    p: Cost(None, f"the offline {p!r} model has no price") for p in _OFFLINE_PROVIDERS
}
"""The price of an offline model's request, made once (a `Cost` is frozen, so one is shared)."""


@record(frozen=True)
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
            return _OFFLINE_COSTS[provider]
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
