"""The app behind `toolwire web`: a page (static files shipped in this package, no build step,
no CDN) and the API it calls, under the Host, Origin and token checks `toolwire serve` uses.

Routes: `GET /` and `GET /static/<file>` (the page; it holds no secret), `GET /api/info` (the
model and tools), `POST /api/agui` (the agent over AG-UI, with `toolwire.trace` events),
`/api/inspector/...` (the MCP server inspector, `inspector.py`), `/api/runs/...` (durable runs
in the database given as `runs_db=`, `runs.py`; 404 without one). Every
request passes the MCP server's Host/Origin check (DNS rebinding, other origins; a POST must be
`application/json`, so a cross-site form cannot send one without a CORS preflight, which is
never answered); the API also needs the bearer token the command printed in the page's URL.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request

from ..mcp._front import BearerAuth
from ..mcp.server import _security  # pyright: ignore[reportPrivateUsage]
from ..ui._asgi import ASGIApp, Receive, Scope, Send, lifespan, send_json
from ..ui._turn import UiAgent
from ..ui.ag_ui import AgUiApp
from .inspector import Inspector

__all__ = ["web_app"]

_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
}
# The page loads nothing from elsewhere and runs no inline script; a `data:` or injected markup
# that slipped through could not load or run anything either.
_CSP = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


def _static(name: str) -> bytes | None:
    files = importlib.resources.files(__package__ or __name__).joinpath("static")
    if "/" in name or name.startswith(".") or not name:
        return None
    target = files.joinpath(name)
    return target.read_bytes() if target.is_file() else None


def web_app(
    agent: UiAgent,
    *,
    token: str,
    allowed_hosts: Sequence[str],
    info: dict[str, Any],
    runs_db: str | None = None,
    allow_stdio: bool = False,
) -> ASGIApp:
    """The page and its API for `agent`.

    Args:
        agent: The agent the chat runs.
        token: The bearer token every API request must carry.
        allowed_hosts: Host names accepted in `Host` and `Origin` (the local ones included).
        info: What `GET /api/info` answers (model, tools).
        runs_db: A runs database (URL or SQLite file) for the durable-runs screen; none hides it.
        allow_stdio: Let the inspector start MCP servers from a command line the page sends
            (anyone holding the token can then run any command as this user).
    """
    from mcp.server.transport_security import TransportSecurityMiddleware  # the mcp extra

    security = TransportSecurityMiddleware(_security(allowed_hosts, True))
    inspector = Inspector(allow_stdio=allow_stdio)
    screen: ASGIApp | None = None
    closers = [inspector.close]
    if runs_db is not None:
        from .runs import RunsScreen  # the durable extra (dbos)

        runs_screen = RunsScreen(runs_db)
        screen = runs_screen
        closers.append(runs_screen.close)
        info = {**info, "runs": runs_screen.shown}
    info = {**info, "stdio": allow_stdio}
    api = BearerAuth(_Api(AgUiApp(agent, trace=True), info, inspector, screen), token)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            try:
                await lifespan(receive, send)
            finally:
                # The inspected server's session and the runs database close with the page.
                for close in closers:
                    await close()
            return
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        refused = await security.validate_request(request, is_post=scope["method"] == "POST")
        if refused is not None:
            await refused(scope, receive, send)
            return
        path: str = scope["path"]
        if path.startswith("/api/"):
            await api(scope, receive, send)
            return
        await _page(path, scope, send)

    return app


async def _page(path: str, scope: Scope, send: Send) -> None:
    if scope["method"] not in ("GET", "HEAD"):
        await send_json(send, 405, {"error": "the page is read with GET"})
        return
    name = "index.html" if path == "/" else path.removeprefix("/static/")
    body = _static(name) if path == "/" or path.startswith("/static/") else None
    if body is None:
        await send_json(send, 404, {"error": f"no page at {path}"})
        return
    kind = _TYPES.get(name[name.rfind(".") :], b"application/octet-stream")
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"content-security-policy", _CSP),
                (b"x-content-type-options", b"nosniff"),
                (b"referrer-policy", b"no-referrer"),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})


class _Api:
    def __init__(
        self, agui: ASGIApp, info: dict[str, Any], inspector: Inspector, runs: ASGIApp | None
    ) -> None:
        self.agui = agui
        self.info = info
        self.inspector = inspector
        self.runs = runs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        if path == "/api/agui":
            await self.agui(scope, receive, send)
        elif path.startswith("/api/inspector/"):
            await self.inspector(scope, receive, send)
        elif path.startswith("/api/runs/"):
            if self.runs is None:
                await send_json(
                    send, 404, {"error": "no runs database: start toolwire web with --runs DB"}
                )
            else:
                await self.runs(scope, receive, send)
        elif path == "/api/info" and scope["method"] == "GET":
            await send_json(send, 200, self.info)
        else:
            await send_json(send, 404, {"error": f"no API at {scope['method']} {path}"})
