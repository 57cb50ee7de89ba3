"""The default prebuilt tool instances, and which of them this environment can use."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..tools import FunctionTool
from .arithmetic import calculator
from .brazil import br_tools
from .clock import current_datetime
from .search import brave_search, tavily_search
from .weather import openweather_current, openweather_forecast
from .web import fetch_url
from .wikipedia import wikipedia_search, wikipedia_summary

__all__ = ["available"]

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
