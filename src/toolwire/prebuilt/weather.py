"""Weather tools backed by OpenWeather (`OPENWEATHER_API_KEY`): current conditions and a 5-day forecast."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import ToolError
from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy
from ._http import (
    expect_dict,
    expect_list,
    join_url,
    loose_dict,
    loose_list,
    request_json,
    require_api_key,
    text_of,
    tool_policy,
)

__all__ = [
    "OPENWEATHER_BASE_URL",
    "openweather_current",
    "openweather_current_tool",
    "openweather_forecast",
    "openweather_forecast_tool",
]

OPENWEATHER_BASE_URL = "https://api.openweathermap.org/data/2.5"
_SERVICE = "OpenWeather"
_ENV = "OPENWEATHER_API_KEY"

Units = Literal["metric", "imperial", "standard"]
_UNIT_LABELS: dict[str, dict[str, str]] = {
    "metric": {"temperature": "°C", "wind_speed": "m/s"},
    "imperial": {"temperature": "°F", "wind_speed": "mph"},
    "standard": {"temperature": "K", "wind_speed": "m/s"},
}


def _place(location: str | None, latitude: float | None, longitude: float | None) -> dict[str, Any]:
    if latitude is not None or longitude is not None:
        if latitude is None or longitude is None:
            raise ToolError("Give both latitude and longitude, or a location name instead.")
        if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
            raise ToolError("Latitude must be within -90..90 and longitude within -180..180.")
        return {"lat": latitude, "lon": longitude}
    if location and location.strip():
        return {"q": location.strip()}
    raise ToolError('Give a location such as "Lisbon,PT", or latitude and longitude.')


def _number(value: Any) -> float | int | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def _local_time(timestamp: Any, offset: Any) -> str | None:
    if not isinstance(timestamp, int | float) or isinstance(timestamp, bool):
        return None
    seconds = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
    zone = dt.timezone(dt.timedelta(seconds=seconds))
    return dt.datetime.fromtimestamp(timestamp, zone).isoformat(timespec="minutes")


def _conditions(item: dict[str, Any]) -> str:
    weather = loose_list(item.get("weather"))
    first = loose_dict(weather[0]) if weather else {}
    return text_of(first.get("description")) or text_of(first.get("main"))


def _readings(item: dict[str, Any]) -> dict[str, Any]:
    main = expect_dict(item.get("main", {}), _SERVICE, "main")
    wind_info = loose_dict(item.get("wind"))
    out: dict[str, Any] = {
        "conditions": _conditions(item),
        "temperature": _number(main.get("temp")),
        "feels_like": _number(main.get("feels_like")),
        "humidity_percent": _number(main.get("humidity")),
        "pressure_hpa": _number(main.get("pressure")),
        "wind_speed": _number(wind_info.get("speed")),
        "wind_direction_deg": _number(wind_info.get("deg")),
    }
    out["cloud_cover_percent"] = _number(loose_dict(item.get("clouds")).get("all"))
    for kind in ("rain", "snow"):
        amount = loose_dict(item.get(kind))
        for period in ("1h", "3h"):
            value = _number(amount.get(period))
            if value is not None:
                out[f"{kind}_{period}_mm"] = value
    return {k: v for k, v in out.items() if v is not None and v != ""}


def _place_name(name: Any, country: Any) -> str:
    parts = [text_of(name), text_of(country)]
    return ", ".join(p for p in parts if p)


def openweather_current_tool(
    api_key: str | None = None,
    *,
    base_url: str = OPENWEATHER_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
    name: str = "openweather_current",
) -> FunctionTool:
    """Build a current-weather tool backed by OpenWeather.

    Args:
        api_key: The OpenWeather key; read from `OPENWEATHER_API_KEY` at call time when `None`.
        base_url: The API root, up to `/data/2.5` (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def openweather_current(
        location: str | None = None,
        latitude: float | None = None,
        longitude: float | None = None,
        units: Units = "metric",
        language: str = "en",
    ) -> dict[str, Any]:
        """Get the current weather for a place: conditions, temperature, humidity, wind.

        Name the place (city, optionally with a two-letter country code) or give coordinates.

        Args:
            location: A city name, e.g. "Lisbon" or "Springfield,US".
            latitude: Latitude in degrees, instead of a location name.
            longitude: Longitude in degrees, instead of a location name.
            units: "metric" (°C, m/s), "imperial" (°F, mph) or "standard" (K, m/s).
            language: Language of the condition descriptions, e.g. "en", "pt_br", "de".
        """
        key = require_api_key(api_key, _ENV, _SERVICE, "openweather_current_tool")
        params = {
            **_place(location, latitude, longitude),
            "units": units,
            "lang": language,
            "appid": key,
        }
        data = await request_json(
            _SERVICE,
            "GET",
            join_url(base_url, "weather"),
            policy=policy,
            params=params,
            not_found=f"OpenWeather does not know the place {location!r}" if location else None,
        )
        body = expect_dict(data, _SERVICE, "the response")
        country = loose_dict(body.get("sys")).get("country")
        out: dict[str, Any] = {
            "location": _place_name(body.get("name"), country),
            "observed_at": _local_time(body.get("dt"), body.get("timezone")),
            "units": _UNIT_LABELS[units],
            **_readings(body),
        }
        coord = loose_dict(body.get("coord"))
        if coord:
            out["coordinates"] = {
                "lat": _number(coord.get("lat")),
                "lon": _number(coord.get("lon")),
            }
        return out

    return tool(
        openweather_current,
        name=name,
        annotations=ToolAnnotations(
            title="Current weather",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=True,
        ),
    )


def openweather_forecast_tool(
    api_key: str | None = None,
    *,
    base_url: str = OPENWEATHER_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
    name: str = "openweather_forecast",
) -> FunctionTool:
    """Build a forecast tool backed by OpenWeather's 5-day / 3-hour forecast.

    Args:
        api_key: The OpenWeather key; read from `OPENWEATHER_API_KEY` at call time when `None`.
        base_url: The API root, up to `/data/2.5` (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def openweather_forecast(
        location: str | None = None,
        latitude: float | None = None,
        longitude: float | None = None,
        days: Annotated[int, Field(ge=1, le=5)] = 2,
        units: Units = "metric",
        language: str = "en",
    ) -> dict[str, Any]:
        """Get the weather forecast for a place in 3-hour steps, up to 5 days ahead.

        Each step has its local time, conditions, temperature, chance of precipitation and wind.
        Name the place (city, optionally with a two-letter country code) or give coordinates.

        Args:
            location: A city name, e.g. "Lisbon" or "Springfield,US".
            latitude: Latitude in degrees, instead of a location name.
            longitude: Longitude in degrees, instead of a location name.
            days: How many days ahead (1 to 5).
            units: "metric" (°C, m/s), "imperial" (°F, mph) or "standard" (K, m/s).
            language: Language of the condition descriptions, e.g. "en", "pt_br", "de".
        """
        key = require_api_key(api_key, _ENV, _SERVICE, "openweather_forecast_tool")
        params = {
            **_place(location, latitude, longitude),
            "units": units,
            "lang": language,
            "cnt": days * 8,
            "appid": key,
        }
        data = await request_json(
            _SERVICE,
            "GET",
            join_url(base_url, "forecast"),
            policy=policy,
            params=params,
            not_found=f"OpenWeather does not know the place {location!r}" if location else None,
        )
        body = expect_dict(data, _SERVICE, "the response")
        city = expect_dict(body.get("city", {}), _SERVICE, "city")
        offset = city.get("timezone")
        steps: list[dict[str, Any]] = []
        for raw in expect_list(body.get("list", []), _SERVICE, "list"):
            item = expect_dict(raw, _SERVICE, "a forecast step")
            step: dict[str, Any] = {"time": _local_time(item.get("dt"), offset)}
            pop = _number(item.get("pop"))
            if pop is not None:
                step["precipitation_chance_percent"] = round(pop * 100)
            step.update(_readings(item))
            steps.append(step)
        return {
            "location": _place_name(city.get("name"), city.get("country")),
            "units": _UNIT_LABELS[units],
            "steps": steps,
        }

    return tool(
        openweather_forecast,
        name=name,
        annotations=ToolAnnotations(
            title="Weather forecast",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=True,
        ),
    )


openweather_current: FunctionTool = openweather_current_tool()
"""Current weather with the key from `OPENWEATHER_API_KEY` (read at call time)."""

openweather_forecast: FunctionTool = openweather_forecast_tool()
"""The 5-day forecast with the key from `OPENWEATHER_API_KEY` (read at call time)."""
