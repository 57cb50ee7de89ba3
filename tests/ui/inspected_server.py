"""Servers for the inspector tests. A hostile MCP server: resources and prompts whose contents
are markup and script, a PNG, an SVG that carries script, a URI template; used in process
(`create_app`) and, run as a script, as a stdio server (`python inspected_server.py`). And an
OAuth authorization server with an MCP server behind it (`serve_signed_in`; as a script:
`python inspected_server.py oauth AS_PORT MCP_PORT`)."""

from __future__ import annotations

import base64
import hashlib
import sys
from typing import Any
from urllib.parse import urlencode

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from toolwire import AuthInfo, tool
from toolwire.errors import InvalidTokenError
from toolwire.mcp import ProtectedResource, create_app, prompt, resource, serve
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


CLIENT = ("inspector", "the-client-secret-0123456789")
ISSUED = "an-access-token-issued-by-the-test-server"


def authorization_server(base: str, grants: list[dict[str, str]]) -> Starlette:
    """An OAuth authorization server that grants `ISSUED` by client credentials (one known
    client, Basic authentication) or by the authorization code flow with PKCE (clients register
    themselves; the person always consents at once). Each grant's form is kept in `grants`."""
    registered: dict[str, list[str]] = {}
    challenges: dict[str, str] = {}

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "registration_endpoint": f"{base}/register",
                "grant_types_supported": ["client_credentials", "authorization_code"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            }
        )

    async def register(request: Request) -> JSONResponse:
        asked = await request.json()
        client_id = f"registered-{len(registered) + 1}"
        registered[client_id] = list(asked["redirect_uris"])
        answer = {**asked, "client_id": client_id, "token_endpoint_auth_method": "none"}
        return JSONResponse(answer, status_code=201)

    async def authorize(request: Request) -> Response:
        query = request.query_params
        redirect = query["redirect_uri"]
        if redirect not in registered.get(query["client_id"], []):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = f"code-{len(challenges) + 1}"
        challenges[code] = query["code_challenge"]
        target = f"{redirect}?{urlencode({'code': code, 'state': query['state']})}"
        return RedirectResponse(target, status_code=302)

    async def token(request: Request) -> JSONResponse:
        form = {k: str(v) for k, v in (await request.form()).items()}
        grants.append(form)
        if form.get("grant_type") == "authorization_code":
            verifier = form.get("code_verifier", "").encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
            if challenges.pop(form.get("code", ""), None) != digest.decode():
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
        else:
            basic = base64.b64encode(":".join(CLIENT).encode()).decode()
            if request.headers.get("authorization") != f"Basic {basic}":
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            if form.get("grant_type") != "client_credentials":
                return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        answer = {"access_token": ISSUED, "token_type": "Bearer", "expires_in": 3600}
        return JSONResponse(answer)

    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/register", register, methods=["POST"]),
            Route("/authorize", authorize),
            Route("/token", token, methods=["POST"]),
        ]
    )


class IssuedTokens:
    async def verify(self, token: str) -> AuthInfo:
        if token != ISSUED:
            raise InvalidTokenError("not a token this server issued")
        return AuthInfo(
            subject="inspector", client_id=CLIENT[0], scopes=frozenset({"mcp"}), issuer="test"
        )


def serve_signed_in(
    as_port: int, mcp_port: int, grants: list[dict[str, str]]
) -> tuple[Starlette, Any]:
    """The authorization server (keeping the grants' forms in `grants`) and an MCP server
    taking only its tokens (`TOOLS`, named "signed"), for these ports on 127.0.0.1."""
    issuer = f"http://127.0.0.1:{as_port}"
    url = f"http://127.0.0.1:{mcp_port}/mcp"
    oauth = ProtectedResource(
        resource=url, authorization_server=issuer, scopes=["mcp"], verifier=IssuedTokens()
    )
    return authorization_server(issuer, grants), create_app(TOOLS, name="signed", oauth=oauth)


async def _serve_signed_in(as_port: int, mcp_port: int) -> None:
    """Both servers until killed; prints the MCP URL once both listen."""
    apps = serve_signed_in(as_port, mcp_port, [])
    servers = [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        for app, port in zip(apps, (as_port, mcp_port), strict=True)
    ]
    async with anyio.create_task_group() as group:
        for server in servers:
            group.start_soon(server.serve)
        with anyio.fail_after(30):
            # uvicorn offers no event for "listening"; its flag is polled, bounded above.
            while not all(s.started for s in servers):  # noqa: ASYNC110
                await anyio.sleep(0.01)
        print(f"http://127.0.0.1:{mcp_port}/mcp", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["oauth"]:
        anyio.run(_serve_signed_in, int(sys.argv[2]), int(sys.argv[3]))
    else:
        anyio.run(
            lambda: serve(TOOLS, resources=RESOURCES, prompts=PROMPTS, stdio=True, name="stdio")
        )
