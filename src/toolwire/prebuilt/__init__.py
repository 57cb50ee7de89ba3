"""Prebuilt tools, and the egress guard every one of their outbound requests goes through.

Ready-made instances need no configuration (`calculator`, `current_datetime`, `fetch_url`, ...);
the `*_tool(...)` factories take an API key, a `base_url`, a `timeout` and an `egress` policy.
Keys are read from the environment at call time, so a missing key is an error result that names
the variable. `available()` lists the tools usable with the current environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..tools import FunctionTool
from ._egress import (
    EgressBlocked,
    EgressPolicy,
    EgressResponse,
    EgressTimeout,
    EgressTransport,
    IPAddress,
    Resolver,
    address_block_reason,
    guarded_request,
    system_resolver,
)
from ._http import UpstreamError, UpstreamUnavailable
from .arithmetic import CalculatorError, calculator, evaluate
from .brazil import (
    DocumentCheck,
    br_bank_lookup,
    br_cep_lookup,
    br_cnpj_lookup,
    br_ddd_lookup,
    br_holidays,
    br_interest_rates,
    br_tools,
    br_validate_cnpj,
    br_validate_cpf,
    brasilapi_tools,
    brazil_tools,
    check_cnpj,
    check_cpf,
)
from .clock import current_datetime, current_datetime_tool
from .search import brave_search, brave_search_tool, tavily_search, tavily_search_tool
from .weather import (
    openweather_current,
    openweather_current_tool,
    openweather_forecast,
    openweather_forecast_tool,
)
from .web import fetch_url, fetch_url_tool, http_request, http_request_tool
from .wikipedia import (
    wikipedia_search,
    wikipedia_search_tool,
    wikipedia_summary,
    wikipedia_summary_tool,
)

__all__ = [
    "CalculatorError",
    "DocumentCheck",
    "EgressBlocked",
    "EgressPolicy",
    "EgressResponse",
    "EgressTimeout",
    "EgressTransport",
    "IPAddress",
    "Resolver",
    "UpstreamError",
    "UpstreamUnavailable",
    "address_block_reason",
    "available",
    "br_bank_lookup",
    "br_cep_lookup",
    "br_cnpj_lookup",
    "br_ddd_lookup",
    "br_holidays",
    "br_interest_rates",
    "br_tools",
    "br_validate_cnpj",
    "br_validate_cpf",
    "brasilapi_tools",
    "brave_search",
    "brave_search_tool",
    "brazil_tools",
    "calculator",
    "check_cnpj",
    "check_cpf",
    "current_datetime",
    "current_datetime_tool",
    "evaluate",
    "fetch_url",
    "fetch_url_tool",
    "guarded_request",
    "http_request",
    "http_request_tool",
    "openweather_current",
    "openweather_current_tool",
    "openweather_forecast",
    "openweather_forecast_tool",
    "system_resolver",
    "tavily_search",
    "tavily_search_tool",
    "wikipedia_search",
    "wikipedia_search_tool",
    "wikipedia_summary",
    "wikipedia_summary_tool",
]

# Tools that need an API key, with the variable it comes from.
_KEYED: tuple[tuple[FunctionTool, str], ...] = (
    (brave_search, "BRAVE_API_KEY"),
    (tavily_search, "TAVILY_API_KEY"),
    (openweather_current, "OPENWEATHER_API_KEY"),
    (openweather_forecast, "OPENWEATHER_API_KEY"),
)

_KEYLESS: tuple[FunctionTool, ...] = (
    calculator,
    current_datetime,
    fetch_url,
    wikipedia_search,
    wikipedia_summary,
    *br_tools,
)


def available(env: Mapping[str, str] | None = None) -> list[FunctionTool]:
    """The default tool instances usable with this environment.

    Keyless tools always; a keyed tool when its variable is set. `http_request` is left out (it
    can change things on other servers): add it yourself when you want it.

    Args:
        env: Where to look for keys; `os.environ` when `None`.
    """
    source = os.environ if env is None else env
    keyed = [t for t, var in _KEYED if source.get(var, "").strip()]
    return [*_KEYLESS, *keyed]
