"""Prebuilt tools, and the egress guard every one of their outbound requests goes through.

Ready-made instances need no configuration (`calculator`, `current_datetime`, `fetch_url`, ...);
the `*_tool(...)` factories take an API key, a `base_url`, a `timeout` and an `egress` policy.
Keys are read from the environment at call time, so a missing key is an error result that names
the variable. `available()` lists the tools usable with the current environment.

Each name loads its module on first use: building a tool (its schema, its dialect checks) costs
time at import, and the MCP client's OAuth guard or a `toolwire` command that serves other
tools imports `_egress` alone without paying for every prebuilt tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from ._catalog import available
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

_HOMES: dict[str, str] = {
    "CalculatorError": ".arithmetic",
    "DocumentCheck": ".brazil",
    "EgressBlocked": "._egress",
    "EgressPolicy": "._egress",
    "EgressResponse": "._egress",
    "EgressTimeout": "._egress",
    "EgressTransport": "._egress",
    "IPAddress": "._egress",
    "Resolver": "._egress",
    "UpstreamError": "._http",
    "UpstreamUnavailable": "._http",
    "address_block_reason": "._egress",
    "br_bank_lookup": ".brazil",
    "br_cep_lookup": ".brazil",
    "br_cnpj_lookup": ".brazil",
    "br_ddd_lookup": ".brazil",
    "br_holidays": ".brazil",
    "br_interest_rates": ".brazil",
    "br_tools": ".brazil",
    "br_validate_cnpj": ".brazil",
    "br_validate_cpf": ".brazil",
    "brasilapi_tools": ".brazil",
    "brave_search": ".search",
    "brave_search_tool": ".search",
    "brazil_tools": ".brazil",
    "calculator": ".arithmetic",
    "check_cnpj": ".brazil",
    "check_cpf": ".brazil",
    "current_datetime": ".clock",
    "current_datetime_tool": ".clock",
    "evaluate": ".arithmetic",
    "fetch_url": ".web",
    "fetch_url_tool": ".web",
    "guarded_request": "._egress",
    "http_request": ".web",
    "http_request_tool": ".web",
    "openweather_current": ".weather",
    "openweather_current_tool": ".weather",
    "openweather_forecast": ".weather",
    "openweather_forecast_tool": ".weather",
    "system_resolver": "._egress",
    "tavily_search": ".search",
    "tavily_search_tool": ".search",
    "wikipedia_search": ".wikipedia",
    "wikipedia_search_tool": ".wikipedia",
    "wikipedia_summary": ".wikipedia",
    "wikipedia_summary_tool": ".wikipedia",
    "available": "._catalog",
}
"""Each public name -> the module that defines it."""


__getattr__, __dir__ = _lazy.lazy_names(globals(), _HOMES)
