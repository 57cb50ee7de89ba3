"""current_datetime with a fixed clock."""

from __future__ import annotations

import datetime as dt

import anyio
import pytest

from toolwire.errors import ToolError
from toolwire.prebuilt import current_datetime, current_datetime_tool
from toolwire.prebuilt.clock import resolve_timezone

FIXED = dt.datetime(2026, 3, 8, 12, 30, 15, tzinfo=dt.UTC)  # a Sunday


def run(timezone: str | None = None) -> dict[str, object]:
    clock_tool = current_datetime_tool(clock=lambda: FIXED)
    args = {} if timezone is None else {"timezone": timezone}
    result = anyio.run(clock_tool.invoke, args)
    assert not result.is_error, result.text
    return result.structured


def test_default_is_utc() -> None:
    assert run() == {
        "timezone": "UTC",
        "iso": "2026-03-08T12:30:15+00:00",
        "weekday": "Sunday",
        "date": "2026-03-08",
        "time": "12:30:15",
        "utc_offset": "+00:00",
        "abbreviation": "UTC",
        "unix": 1772973015,
    }


def test_named_zones() -> None:
    sao_paulo = run("America/Sao_Paulo")
    assert sao_paulo["iso"] == "2026-03-08T09:30:15-03:00"
    assert sao_paulo["utc_offset"] == "-03:00"
    kolkata = run("Asia/Kolkata")
    assert kolkata["iso"] == "2026-03-08T18:00:15+05:30"
    tokyo = run("Asia/Tokyo")
    assert tokyo["weekday"] == "Sunday"
    assert tokyo["time"] == "21:30:15"
    # DST in the US started on 2026-03-08 at 02:00 local time.
    assert run("America/New_York")["utc_offset"] == "-04:00"


@pytest.mark.parametrize("name", ["utc", "Z", "GMT", "america/sao_paulo", "Europe/berlin"])
def test_lenient_spellings(name: str) -> None:
    assert resolve_timezone(name) is not None


@pytest.mark.parametrize("name", ["Mars/Olympus", "Europe/Berln", "../../etc/passwd", "+03:00"])
def test_unknown_zone_is_a_clear_error(name: str) -> None:
    with pytest.raises(ToolError) as info:
        resolve_timezone(name)
    message = str(info.value)
    assert f"Unknown time zone {name!r}" in message
    assert "America/Sao_Paulo" in message


def test_suggestion_for_a_typo() -> None:
    with pytest.raises(ToolError, match="Did you mean 'Europe/Berlin'"):
        resolve_timezone("Europe/Berln")


def test_tool_reports_errors_and_uses_the_real_clock() -> None:
    bad = anyio.run(current_datetime.invoke, {"timezone": "Nowhere/City"})
    assert bad.is_error
    assert "IANA" in bad.text
    now = anyio.run(current_datetime.invoke, {})
    year = now.structured["date"][:4]
    assert int(year) >= 2025
