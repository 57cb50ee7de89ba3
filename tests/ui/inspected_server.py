"""A hostile MCP server for the inspector tests: resources and prompts whose contents are markup
and script, a PNG, an SVG that carries script, a URI template. Used in process (`create_app`)
and, run as a script, as a stdio server (`python inspected_server.py`)."""

from __future__ import annotations

import base64

import anyio

from toolwire import tool
from toolwire.mcp import prompt, resource, serve
from toolwire.prebuilt import calculator

HOSTILE_HTML = '<img src=x onerror="window.pwned=4"><script>window.pwned=5</script>note'
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.pwned=7"><script>window.pwned=8</script></svg>'


@tool(name="shout_loud")
def shout(text: str, times: int = 1, loud: bool = True) -> str:
    """<script>window.pwned=2</script>Echo it."""
    return text.upper() * times if loud else text


@resource("config://app", mime_type="application/json")
def app_config() -> dict[str, str]:
    """The application's settings."""
    return {"theme": "dark"}


@resource("notes://hostile", mime_type="text/html")
def hostile_note() -> str:
    """A note that is markup."""
    return HOSTILE_HTML


@resource("image://dot", mime_type="image/png")
def dot() -> bytes:
    """A one-pixel PNG."""
    return PNG


@resource("image://vector", mime_type="image/svg+xml")
def vector() -> bytes:
    """An SVG with script in it: shown as binary, never as an image."""
    return SVG


@resource("weather://{city}/now")
def weather(city: str) -> str:
    """The weather in a city."""
    return f"Weather in {city}: sunny <b>{city}</b>"


@prompt
def review(code: str, style: str = "short") -> str:
    """Ask for a review."""
    return f"Review ({style}): <script>window.pwned=6</script>{code}"


TOOLS = [calculator, shout]
RESOURCES = [app_config, hostile_note, dot, vector, weather]
PROMPTS = [review]


if __name__ == "__main__":
    anyio.run(lambda: serve(TOOLS, resources=RESOURCES, prompts=PROMPTS, stdio=True, name="stdio"))
