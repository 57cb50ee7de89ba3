"""The current date and time in any IANA time zone."""

from __future__ import annotations

import datetime as dt
import difflib
import functools
import zoneinfo
from collections.abc import Callable
from typing import Any

from ..errors import ToolError
from ..tools import FunctionTool, ToolAnnotations, tool

__all__ = ["current_datetime", "current_datetime_tool", "resolve_timezone"]

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EXAMPLES = "'UTC', 'America/Sao_Paulo', 'Europe/Berlin', 'Asia/Tokyo'"


@functools.cache
def _zone_names() -> dict[str, str]:
    names = zoneinfo.available_timezones() | {"UTC"}
    return {name.lower(): name for name in names}


def resolve_timezone(name: str) -> dt.tzinfo:
    """The time zone for an IANA name (case-insensitive; `UTC`, `Z` and `GMT` mean UTC).

    Raises:
        ToolError: the name is not a known zone; the message says how to name one.
    """
    key = name.strip()
    if key.upper() in ("UTC", "Z", "GMT", "ETC/UTC", "ZULU", ""):
        return dt.UTC
    canonical = _zone_names().get(key.lower().replace(" ", "_"), key)
    try:
        return zoneinfo.ZoneInfo(canonical)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        pass
    guesses = difflib.get_close_matches(
        key.lower().replace(" ", "_"), _zone_names(), n=3, cutoff=0.6
    )
    hint = ""
    if guesses:
        hint = " Did you mean " + ", ".join(repr(_zone_names()[g]) for g in guesses) + "?"
    raise ToolError(
        f"Unknown time zone {name!r}. Use an IANA time zone name of the form Area/City, "
        f"such as {_EXAMPLES}.{hint}"
    )


def current_datetime_tool(*, clock: Callable[[], dt.datetime] | None = None) -> FunctionTool:
    """Build a `current_datetime` tool.

    Args:
        clock: Returns the current instant as an aware datetime; tests pass a fixed one.
    """
    now = clock or (lambda: dt.datetime.now(dt.UTC))

    def current_datetime(timezone: str = "UTC") -> dict[str, Any]:
        """Get the current date and time in a time zone.

        Returns the ISO 8601 timestamp with its UTC offset, the weekday, the date, the time, the
        offset and the zone's abbreviation. Use this whenever the answer depends on today's date
        or the time of day.

        Args:
            timezone: An IANA time zone name such as "America/Sao_Paulo", "Europe/Berlin" or "UTC".
        """
        zone = resolve_timezone(timezone)
        instant = now()
        if instant.tzinfo is None:
            instant = instant.replace(tzinfo=dt.UTC)
        local = instant.astimezone(zone)
        offset = local.utcoffset() or dt.timedelta(0)
        minutes = int(offset.total_seconds() // 60)
        sign = "+" if minutes >= 0 else "-"
        return {
            "timezone": "UTC" if zone is dt.UTC else str(zone),
            "iso": local.isoformat(timespec="seconds"),
            "weekday": _WEEKDAYS[local.weekday()],
            "date": local.date().isoformat(),
            "time": local.strftime("%H:%M:%S"),
            "utc_offset": f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}",
            "abbreviation": local.tzname() or "",
            "unix": int(instant.timestamp()),
        }

    return tool(
        current_datetime,
        annotations=ToolAnnotations(
            title="Current date and time",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )


current_datetime: FunctionTool = current_datetime_tool()
"""The `current_datetime` tool using the system clock."""
