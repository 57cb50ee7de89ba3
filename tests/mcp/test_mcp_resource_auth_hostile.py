"""`create_app(oauth=...)` against a hostile authorization server and hostile clients.

The authorization server here is written in the test (a small ASGI app on 127.0.0.1), so that it
can answer what no real one would: an `exp` of `1e400`, `NaN` or a string, an endless JWKS, an
introspection endpoint that keeps failing. Tokens are signed with a key the test generated and
the server publishes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import jwt
import pytest
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm
from mcp_fixtures import eventually, free_port, serve_app

from toolwire import ToolContext
from toolwire.mcp import ProtectedResource, TokenIntrospection, create_app

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def whoami(ctx: ToolContext) -> str:
    """Say who called."""
    assert ctx.auth is not None
    return ctx.auth.subject or ""


def purge() -> str:
    """An administrative tool."""
    return "purged"


@dataclass
class HostileAS:
    """An authorization server whose answers the test writes (raw bytes, so JSON may lie)."""

    issuer: str = ""
    introspection: bytes | Callable[[], bytes] = b'{"active": false}'
    introspection_status: int = 200
    jwks: bytes | None = None
    endless_jwks: bool = False
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    hits: dict[str, int] = field(default_factory=dict[str, int])

    def public_jwks(self) -> bytes:
        jwk = json.loads(ECAlgorithm.to_jwk(self.key.public_key()))
        return json.dumps({"keys": [jwk | {"kid": "k1", "use": "sig", "alg": "ES256"}]}).encode()

    def sign(self, **claims: Any) -> str:
        base = {"iss": self.issuer, "sub": "alice", "exp": time.time() + 600}
        return jwt.encode(
            {**base, **claims}, self.key, algorithm="ES256", headers={"kid": "k1", "typ": "at+jwt"}
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.hits[path] = self.hits.get(path, 0) + 1
        status, body = 404, b"{}"
        if path == "/.well-known/oauth-authorization-server":
            status, body = (
                200,
                json.dumps(
                    {
                        "issuer": self.issuer,
                        "jwks_uri": f"{self.issuer}/jwks",
                        "introspection_endpoint": f"{self.issuer}/introspect",
                        "token_endpoint": f"{self.issuer}/token",
                    }
                ).encode(),
            )
        elif path == "/jwks" and self.endless_jwks:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            chunk = b'{"keys": [' + b" " * 65536

            async def until_hung_up() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                flood.cancel_scope.cancel()

            async with anyio.create_task_group() as flood:
                flood.start_soon(until_hung_up)
                while True:  # ends when the reader hangs up
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    await anyio.lowlevel.checkpoint()
            return
        elif path == "/jwks":
            status, body = 200, self.jwks or self.public_jwks()
        elif path == "/introspect":
            status = self.introspection_status
            found = self.introspection
            body = found() if callable(found) else found
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@asynccontextmanager
async def hostile_as() -> AsyncIterator[HostileAS]:
    server = HostileAS()
    async with serve_app(server, path="") as url:
        server.issuer = url
        yield server


def _resource(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp"


def _protected(server: HostileAS, port: int, **options: Any) -> ProtectedResource:
    return ProtectedResource(
        resource=_resource(port), authorization_server=server.issuer, **options
    )


async def _post(url: str, token: str, body: bytes | None = None) -> httpx.Response:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "authorization": f"Bearer {token}",
    }
    async with httpx.AsyncClient(timeout=20) as client:
        content = json.dumps(INITIALIZE).encode() if body is None else body
        return await client.post(url, content=content, headers=headers)


def _introspecting(server: HostileAS, port: int) -> Any:
    oauth = _protected(server, port, introspection=TokenIntrospection("rs", "rs-secret"))
    return create_app([whoami], oauth=oauth)


# --- numeric claims: one rule, JWT and introspection ----------------------------------------------

BAD_TIMES: dict[str, bytes] = {
    "1e400": b"1e400",
    "NaN": b"NaN",
    "a string": b'"1"',
    "a future string": b'"99999999999"',
    "true": b"true",
}


@pytest.mark.parametrize("case", list(BAD_TIMES))
async def test_introspection_with_an_unusable_exp_is_a_401_not_a_500(case: str) -> None:
    port = free_port()
    async with hostile_as() as server:
        resource = _resource(port).encode()
        server.introspection = (
            b'{"active": true, "sub": "alice", "aud": "'
            + resource
            + b'", "exp": '
            + BAD_TIMES[case]
            + b"}"
        )
        async with serve_app(_introspecting(server, port), port=port) as url:
            response = await _post(url, "opaque-token")
    assert response.status_code == 401, response.text
    assert "'exp' claim" in response.json()["error_description"]


@pytest.mark.parametrize("case", ["a future string", "1e400", "NaN", "true"])
async def test_a_jwt_with_an_unusable_exp_is_a_401_not_a_500(case: str) -> None:
    port = free_port()
    async with hostile_as() as server:
        token = server.sign(aud=_resource(port))
        # Rewrite the payload's exp as raw JSON and sign again: PyJWT would not write NaN.
        header, payload, _ = token.split(".")
        claims = jwt.decode(token, options={"verify_signature": False})
        claims["exp"] = "__EXP__"
        raw = json.dumps(claims).replace('"__EXP__"', BAD_TIMES[case].decode()).encode()
        signing_input = header + "." + jwt.utils.base64url_encode(raw).decode()
        signature = jwt.algorithms.ECAlgorithm(jwt.algorithms.ECAlgorithm.SHA256).sign(
            signing_input.encode(), server.key
        )
        hostile = signing_input + "." + jwt.utils.base64url_encode(signature).decode()
        del payload
        oauth = _protected(server, port)
        async with serve_app(create_app([whoami], oauth=oauth), port=port) as url:
            response = await _post(url, hostile)
    assert response.status_code == 401, response.text
    assert "'exp' claim" in response.json()["error_description"]


@pytest.mark.parametrize("mode", ["jwt", "introspection"])
async def test_one_audience_rule_for_both_modes(mode: str) -> None:
    """`aud` = resource + "/" names another resource in JWT mode and in introspection alike."""
    port = free_port()
    async with hostile_as() as server:
        slashed = _resource(port) + "/"
        if mode == "jwt":
            app, token = (
                create_app([whoami], oauth=_protected(server, port)),
                server.sign(aud=slashed),
            )
        else:
            server.introspection = json.dumps(
                {"active": True, "sub": "alice", "aud": slashed, "exp": time.time() + 600}
            ).encode()
            app, token = _introspecting(server, port), "opaque-token"
        async with serve_app(app, port=port) as url:
            response = await _post(url, token)
    assert response.status_code == 401, response.text
    assert "not issued for this resource" in response.json()["error_description"]


# --- fetches from the authorization server: back-off, caps, timeouts -----------------------------


async def test_introspection_failures_are_backed_off(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    async with hostile_as() as server:
        server.introspection_status = 500
        async with serve_app(_introspecting(server, port), port=port) as url:
            answers = [(await _post(url, f"token-{n}")).status_code for n in range(10)]
    assert answers == [503] * 10
    # One POST, then the next nine are answered from the back-off (5 s), not the endpoint.
    assert server.hits["/introspect"] == 1
    assert "not asked again yet" in caplog.text


async def test_an_endless_jwks_is_cut_at_the_cap() -> None:
    port = free_port()
    async with hostile_as() as server:
        server.endless_jwks = True
        oauth = _protected(server, port)
        async with serve_app(create_app([whoami], oauth=oauth), port=port) as url:
            with anyio.fail_after(20):
                response = await _post(url, server.sign(aud=_resource(port)))
    assert response.status_code == 503


async def test_an_oversized_introspection_answer_is_refused() -> None:
    port = free_port()
    async with hostile_as() as server:
        server.introspection = b'{"active": true, "pad": "' + b"x" * 5_000_000 + b'"}'
        async with serve_app(_introspecting(server, port), port=port) as url:
            response = await _post(url, "opaque-token")
    assert response.status_code == 503


# --- hostile requests ----------------------------------------------------------------------------


async def test_a_deeply_nested_body_with_a_valid_token_is_a_4xx() -> None:
    port = free_port()
    async with hostile_as() as server:
        oauth = _protected(server, port, tool_scopes={"purge": ["admin"]})
        app = create_app([whoami, purge], oauth=oauth)
        async with serve_app(app, port=port) as url:
            response = await _post(url, server.sign(aud=_resource(port)), b"[" * 3000)
    assert 400 <= response.status_code < 500, response.text


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.mark.parametrize("mode", ["oauth", "auth_token", "open"])
async def test_a_token_in_the_query_string_never_reaches_the_access_log(mode: str) -> None:
    """uvicorn's access log (in process, at info level) records the URL after the app ran."""
    port = free_port()
    secret = "sEcReT-tOkEn-in-the-url"
    access = logging.getLogger("uvicorn.access")
    collect = _Collect()
    async with hostile_as() as server:
        if mode == "oauth":
            app = create_app([whoami], oauth=_protected(server, port))
        elif mode == "auth_token":
            app = create_app([whoami], auth_token="a-long-enough-shared-token")
        else:
            app = create_app([whoami])
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="info")
        served = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(served.serve)
            await eventually(lambda: served.started)
            access.addHandler(collect)
            try:
                async with httpx.AsyncClient(timeout=20) as client:
                    response = await client.post(
                        _resource(port), params={"access_token": secret, "x": "1"}, json=INITIALIZE
                    )
            finally:
                access.removeHandler(collect)
                served.should_exit = True
    assert response.status_code == {"oauth": 400, "auth_token": 401, "open": 200}[mode]
    assert any("access_token=[redacted]&x=1" in line for line in collect.lines), collect.lines
    assert not any(secret in line for line in collect.lines)
