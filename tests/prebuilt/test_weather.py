"""OpenWeather tools against a local fake shaped like the current-weather and 5-day forecast APIs."""

from __future__ import annotations

import pytest
from prebuilt_fakes import FakeServer, Reply

from toolwire.prebuilt import EgressPolicy, openweather_current_tool, openweather_forecast_tool

pytestmark = pytest.mark.anyio

CURRENT = {
    "coord": {"lon": -0.1257, "lat": 51.5085},
    "weather": [{"id": 803, "main": "Clouds", "description": "broken clouds", "icon": "04d"}],
    "base": "stations",
    "main": {
        "temp": 12.3,
        "feels_like": 11.5,
        "temp_min": 11.1,
        "temp_max": 13.4,
        "pressure": 1012,
        "humidity": 76,
        "sea_level": 1012,
        "grnd_level": 1008,
    },
    "visibility": 10000,
    "wind": {"speed": 4.63, "deg": 250, "gust": 8.2},
    "clouds": {"all": 75},
    "rain": {"1h": 0.2},
    "dt": 1764504000,
    "sys": {"type": 2, "id": 2075535, "country": "GB", "sunrise": 1764488000, "sunset": 1764517000},
    "timezone": 0,
    "id": 2643743,
    "name": "London",
    "cod": 200,
}


def _step(dt: int, temp: float, pop: float, text: str) -> dict[str, object]:
    return {
        "dt": dt,
        "main": {"temp": temp, "feels_like": temp - 1, "temp_min": temp, "temp_max": temp,
                 "pressure": 1015, "sea_level": 1015, "grnd_level": 925, "humidity": 60,
                 "temp_kf": 0},
        "weather": [{"id": 500, "main": "Rain", "description": text, "icon": "10d"}],
        "clouds": {"all": 40},
        "wind": {"speed": 2.1, "deg": 140, "gust": 3.0},
        "visibility": 10000,
        "pop": pop,
        "rain": {"3h": 0.41},
        "sys": {"pod": "d"},
        "dt_txt": "2025-11-30 12:00:00",
    }  # fmt: skip


FORECAST = {
    "cod": "200",
    "message": 0,
    "cnt": 2,
    "list": [
        _step(1764504000, 24.5, 0.32, "light rain"),
        _step(1764514800, 22.0, 0.0, "scattered clouds"),
    ],
    "city": {
        "id": 3448439,
        "name": "São Paulo",
        "coord": {"lat": -23.5475, "lon": -46.6361},
        "country": "BR",
        "population": 10021295,
        "timezone": -10800,
        "sunrise": 1764490000,
        "sunset": 1764538000,
    },
}


async def test_current_weather(server: FakeServer, local_policy: EgressPolicy) -> None:
    server.reply("/data/2.5/weather", Reply(200, CURRENT))
    weather = openweather_current_tool(
        "ow-key", base_url=f"{server.url}/data/2.5", egress=local_policy
    )
    result = await weather.invoke({"location": "London,GB"})
    assert not result.is_error, result.text
    assert result.structured == {
        "location": "London, GB",
        "observed_at": "2025-11-30T12:00+00:00",
        "units": {"temperature": "°C", "wind_speed": "m/s"},
        "conditions": "broken clouds",
        "temperature": 12.3,
        "feels_like": 11.5,
        "humidity_percent": 76,
        "pressure_hpa": 1012,
        "wind_speed": 4.63,
        "wind_direction_deg": 250,
        "cloud_cover_percent": 75,
        "rain_1h_mm": 0.2,
        "coordinates": {"lat": 51.5085, "lon": -0.1257},
    }
    seen = server.seen[-1]
    assert seen.query == {
        "q": ["London,GB"],
        "units": ["metric"],
        "lang": ["en"],
        "appid": ["ow-key"],
    }


async def test_current_weather_by_coordinates(
    server: FakeServer, local_policy: EgressPolicy
) -> None:
    server.reply("/data/2.5/weather", Reply(200, CURRENT))
    weather = openweather_current_tool("k", base_url=f"{server.url}/data/2.5", egress=local_policy)
    result = await weather.invoke({"latitude": 51.5, "longitude": -0.12, "units": "imperial"})
    assert result.structured["units"] == {"temperature": "°F", "wind_speed": "mph"}
    assert server.seen[-1].query["lat"] == ["51.5"]
    assert server.seen[-1].query["units"] == ["imperial"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({}, "Give a location"),
        ({"latitude": 10.0}, "both latitude and longitude"),
        ({"latitude": 100.0, "longitude": 0.0}, "within -90..90"),
    ],
)
async def test_place_is_required(
    server: FakeServer, local_policy: EgressPolicy, args: dict[str, float], fragment: str
) -> None:
    weather = openweather_current_tool("k", base_url=f"{server.url}/data/2.5", egress=local_policy)
    result = await weather.invoke(args)
    assert result.is_error
    assert fragment in result.text
    assert server.seen == []


async def test_forecast(server: FakeServer, local_policy: EgressPolicy) -> None:
    server.reply("/data/2.5/forecast", Reply(200, FORECAST))
    forecast = openweather_forecast_tool(
        "k", base_url=f"{server.url}/data/2.5", egress=local_policy
    )
    result = await forecast.invoke({"location": "São Paulo,BR", "days": 1, "language": "pt_br"})
    assert not result.is_error, result.text
    data = result.structured
    assert data["location"] == "São Paulo, BR"
    first, second = data["steps"]
    assert first["time"] == "2025-11-30T09:00-03:00"  # local time of the city
    assert first["precipitation_chance_percent"] == 32
    assert first["conditions"] == "light rain"
    assert first["rain_3h_mm"] == 0.41
    assert second["precipitation_chance_percent"] == 0
    assert server.seen[-1].query["cnt"] == ["8"]
    assert server.seen[-1].query["lang"] == ["pt_br"]


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (
            Reply(401, {"cod": 401, "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."}),
            "Invalid API key",
        ),
        (Reply(404, {"cod": "404", "message": "city not found"}), "does not know the place 'Atlantis'"),
        (Reply(429, {"cod": 429, "message": "Your account is temporary blocked"}), "rate limiting"),
        (Reply(200, {"cod": "200", "list": {"oops": 1}}), "list is not a JSON array"),
        (Reply(200, b"\x00\x01binary", {"Content-Type": "application/octet-stream"}), "not valid JSON"),
    ],
)  # fmt: skip
async def test_forecast_errors(
    server: FakeServer, local_policy: EgressPolicy, reply: Reply, fragment: str
) -> None:
    server.reply("/data/2.5/forecast", reply)
    forecast = openweather_forecast_tool(
        "k", base_url=f"{server.url}/data/2.5", egress=local_policy
    )
    result = await forecast.invoke({"location": "Atlantis"})
    assert result.is_error
    assert result.text.startswith("OpenWeather")
    assert fragment in result.text, result.text


async def test_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENWEATHER_API_KEY", raising=False)
    result = await openweather_current_tool().invoke({"location": "Lisbon"})
    assert result.is_error
    assert "OPENWEATHER_API_KEY" in result.text


async def test_upstream_that_hangs_times_out(server: FakeServer) -> None:
    server.reply("/data/2.5/weather", Reply(200, hold=server.release))
    policy = EgressPolicy(allow=["127.0.0.1"])
    weather = openweather_current_tool(
        "k", base_url=f"{server.url}/data/2.5", egress=policy, timeout=0.3
    )
    result = await weather.invoke({"location": "Lisbon"})
    assert result.is_error
    assert "0.3 seconds" in result.text or "timed out" in result.text
