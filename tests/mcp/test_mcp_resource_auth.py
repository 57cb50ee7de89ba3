"""`create_app(oauth=...)`: toolwire's MCP server as an OAuth protected resource.

The authorization servers are real: panva's oidc-provider (tests/mcp/oauth_server.mjs), issuing
access tokens by client credentials with RFC 8707 resource indicators. Hostile tokens start from
a token it issued and change one thing; where a signature is needed the test signs with the
authorization server's own key (the test generated it), so the one change is all that is wrong.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm
from mcp_fixtures import HERE, NODE_BIN, node_env, require_node_tool, serve_app

from _ports import free_port, listening_socket
from toolwire import AuthInfo, ToolContext, tool
from toolwire.errors import InvalidTokenError
from toolwire.mcp import McpClient, ProtectedResource, TokenIntrospection, create_app
from toolwire.mcp.auth import ClientCredentials

pytestmark = pytest.mark.anyio

SCOPES = "tools:read tools:call tools:admin"
AGENT = ("agent", "agent-secret-agent-secret-agent-secret")
READER = ("reader", "reader-secret-reader-secret-reader-sec")
RS = ("toolwire-rs", "rs-secret-rs-secret-rs-secret-rs-secret")
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


def _ec_key(kid: str) -> tuple[ec.EllipticCurvePrivateKey, dict[str, Any]]:
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = json.loads(ECAlgorithm.to_jwk(key)) | {"kid": kid, "use": "sig", "alg": "ES256"}
    return key, jwk


def _client(pair: tuple[str, str], grants: list[str], scope: str = SCOPES) -> dict[str, Any]:
    return {
        "client_id": pair[0],
        "client_secret": pair[1],
        "grant_types": grants,
        "redirect_uris": [],
        "response_types": [],
        "scope": scope,
        "id_token_signed_response_alg": "ES256",
    }


@dataclass
class AuthServers:
    """Three issuers in one oidc-provider process, and the resource they issue tokens for."""

    resource: str
    other_resource: str
    jwt_issuer: str  # JWTs for `resource`, signed with `key`
    other_issuer: str  # another authorization server, also issuing JWTs for `resource`
    opaque_issuer: str  # opaque tokens for `resource`, checked by introspection
    key: ec.EllipticCurvePrivateKey
    kid: str
    listener: socket.socket  # where the protected toolwire server listens, held all along

    @property
    def port(self) -> int:
        return int(self.resource.rsplit(":", 1)[1].split("/", 1)[0])

    @contextlib.contextmanager
    def port_released(self) -> Iterator[None]:
        """Let another process (`toolwire serve`) listen on the port, then hold it again."""
        port = self.port
        self.listener.close()
        try:
            yield
        finally:
            self.listener = _listen_again(port)

    def token(
        self,
        issuer: str | None = None,
        *,
        client: tuple[str, str] = AGENT,
        scope: str = "tools:read tools:call",
        resource: str | None = None,
    ) -> str:
        response = httpx.post(
            f"{issuer or self.jwt_issuer}/token",
            data={
                "grant_type": "client_credentials",
                "scope": scope,
                "resource": resource or self.resource,
            },
            auth=client,
        )
        assert response.status_code == 200, response.text
        return str(response.json()["access_token"])

    def resign(self, token: str, **changes: Any) -> str:
        """The token with claims changed (None removes one), signed again with the AS's key."""
        claims = jwt.decode(token, options={"verify_signature": False})
        for name, value in changes.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        header = jwt.get_unverified_header(token)
        return jwt.encode(claims, self.key, algorithm="ES256", headers=header)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServers]:
    listener = listening_socket()
    port = int(listener.getsockname()[1])
    resource = f"http://127.0.0.1:{port}/mcp"
    other_resource = f"http://127.0.0.1:{port}/other"
    key, jwk = _ec_key("as-main")
    _, other_jwk = _ec_key("as-other")
    _, opaque_jwk = _ec_key("as-opaque")
    issuers = [f"http://127.0.0.1:{free_port()}" for _ in range(3)]
    clients = [
        _client(AGENT, ["client_credentials"]),
        _client(READER, ["client_credentials"], "tools:read"),
        _client(RS, []),
    ]
    resources = {resource: {"scope": SCOPES}, other_resource: {"scope": SCOPES}}
    config = {
        "servers": [
            {
                "issuer": issuers[0],
                "port": int(issuers[0].rsplit(":", 1)[1]),
                "jwks": {"keys": [jwk]},
                "clients": clients,
                "resources": resources,
            },
            {
                "issuer": issuers[1],
                "port": int(issuers[1].rsplit(":", 1)[1]),
                "jwks": {"keys": [other_jwk]},
                "clients": clients,
                "resources": resources,
            },
            {
                "issuer": issuers[2],
                "port": int(issuers[2].rsplit(":", 1)[1]),
                "jwks": {"keys": [opaque_jwk]},
                "clients": clients,
                "resources": {
                    name: {**value, "format": "opaque"} for name, value in resources.items()
                },
            },
        ]
    }
    with _authorization_servers(tmp_path_factory.mktemp("oauth"), config["servers"]):
        held = AuthServers(
            resource, other_resource, *issuers, key=key, kid="as-main", listener=listener
        )
        try:
            yield held
        finally:
            held.listener.close()


def _listen_again(port: int) -> socket.socket:
    """Listen on `port` again once the process that had it is gone (bounded)."""
    deadline = time.monotonic() + 30
    while True:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # the server process is still exiting: poll, bounded
            continue
        sock.listen(128)
        return sock


@contextlib.contextmanager
def _authorization_servers(folder: Path, entries: list[dict[str, Any]]) -> Iterator[None]:
    """oauth_server.mjs serving `entries` until the block ends."""
    node = require_node_tool("node")
    path = folder / "servers.json"
    path.write_text(json.dumps({"servers": entries}))
    log = path.with_suffix(".log").open("wb")
    proc = subprocess.Popen(
        [node, str(HERE / "oauth_server.mjs"), str(path), str(NODE_BIN.parent)],
        stdout=subprocess.PIPE,
        stderr=log,
        env=node_env(),
    )
    try:
        _wait_ready(proc, len(entries), path.with_suffix(".log"))
        yield
    finally:
        proc.kill()
        proc.wait(timeout=10)
        log.close()
        assert proc.stdout is not None
        proc.stdout.close()


def _wait_ready(proc: subprocess.Popen[bytes], count: int, log: Path) -> None:
    """Wait for a `ready` line per server, bounded: the script prints them once listening."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + 90  # node starts slowly on a loaded machine
    out = b""
    # Read the pipe itself (os.read), never through the buffered file: two lines that come in
    # one read would leave the second in Python's buffer, where select() cannot see it.
    while sum(line.startswith(b"ready ") for line in out.split(b"\n")[:-1]) < count:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(left, 0))
        if not ready:
            pytest.fail(f"the authorization servers did not start: {log.read_text()}")
        chunk = os.read(fd, 65536)
        if not chunk:
            pytest.fail(f"the authorization servers exited: {log.read_text()}")
        out += chunk


@tool
def whoami(ctx: ToolContext) -> dict[str, Any]:
    """Say who called."""
    auth = ctx.auth
    assert auth is not None
    return {
        "subject": auth.subject,
        "client_id": auth.client_id,
        "scopes": sorted(auth.scopes),
        "issuer": auth.issuer,
        "audience": auth.claims.get("aud"),
    }


@tool
def purge() -> str:
    """An administrative tool."""
    return "purged"


def _oauth(servers: AuthServers, **options: Any) -> ProtectedResource:
    options.setdefault("scopes", ["tools:read"])
    return ProtectedResource(
        resource=servers.resource, authorization_server=servers.jwt_issuer, **options
    )


def _app(servers: AuthServers, **options: Any) -> Any:
    return create_app([whoami, purge], oauth=_oauth(servers, **options))


async def _post(url: str, token: str | None = None, **kwargs: Any) -> httpx.Response:
    headers = {"accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    headers |= kwargs.pop("headers", {})
    async with httpx.AsyncClient(timeout=20) as client:
        return await client.post(
            url, json=kwargs.pop("body", INITIALIZE), headers=headers, **kwargs
        )


def _challenge(response: httpx.Response) -> str:
    return response.headers.get("www-authenticate", "")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# --- metadata and challenges ------------------------------------------------------------------


async def test_metadata_is_published_at_both_well_known_paths(servers: AuthServers) -> None:
    async with serve_app(_app(servers), listener=servers.listener) as url:
        base = url.removesuffix("/mcp")
        async with httpx.AsyncClient() as client:
            for path in (
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource",
            ):
                response = await client.get(base + path)
                assert response.status_code == 200
                assert response.headers["access-control-allow-origin"] == "*"
                assert response.json() == {
                    "resource": servers.resource,
                    "authorization_servers": [servers.jwt_issuer],
                    "bearer_methods_supported": ["header"],
                    "scopes_supported": ["tools:read"],
                }
            preflight = await client.options(base + "/.well-known/oauth-protected-resource/mcp")
            assert preflight.status_code == 204
            refused = await client.post(base + "/.well-known/oauth-protected-resource/mcp")
            assert refused.status_code == 405


async def test_no_token_gets_the_challenge_without_an_error_code(servers: AuthServers) -> None:
    async with serve_app(_app(servers), listener=servers.listener) as url:
        response = await _post(url)
    assert response.status_code == 401
    metadata = f"http://127.0.0.1:{servers.port}/.well-known/oauth-protected-resource/mcp"
    assert _challenge(response) == f'Bearer resource_metadata="{metadata}", scope="tools:read"'


@pytest.mark.parametrize("stateless", [False, True])
async def test_a_valid_token_reaches_the_tool_with_its_subject_and_scopes(
    servers: AuthServers, stateless: bool
) -> None:
    token = servers.token()
    app = create_app([whoami, purge], oauth=_oauth(servers), stateless=stateless)
    async with (
        serve_app(app, listener=servers.listener) as url,
        McpClient(url, auth_token=token) as client,
    ):
        result = await client.call_tool("whoami", {})
    assert not result.is_error, result
    assert result.structured == {
        "subject": "agent",
        "client_id": "agent",
        "scopes": ["tools:call", "tools:read"],
        "issuer": servers.jwt_issuer,
        "audience": servers.resource,
    }


async def test_toolwire_client_credentials_end_to_end(servers: AuthServers) -> None:
    """toolwire's own OAuth client discovers the AS from the metadata and gets its own token."""
    async with serve_app(_app(servers), listener=servers.listener) as url:
        auth = ClientCredentials(*AGENT, scope="tools:read tools:call")
        async with McpClient(url, auth=auth) as client:
            names = [spec.name for spec in await client.list_tools()]
            result = await client.call_tool("whoami", {})
    assert names == ["whoami", "purge"]
    assert not result.is_error, result
    assert result.structured is not None
    assert result.structured["client_id"] == "agent"
    assert result.structured["audience"] == servers.resource


# --- hostile JWTs -------------------------------------------------------------------------------


def _tampered_payload(servers: AuthServers) -> str:
    header, payload, signature = servers.token().split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["scope"] = SCOPES
    return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"


def _tampered_signature(servers: AuthServers) -> str:
    header, payload, signature = servers.token().split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=="))
    raw[5] ^= 0x01
    return f"{header}.{payload}.{_b64(bytes(raw))}"


def _alg_none(servers: AuthServers) -> str:
    _, payload, _ = servers.token().split(".")
    return f"{_b64(json.dumps({'alg': 'none', 'typ': 'at+jwt'}).encode())}.{payload}."


def _hmac_with_public_key(servers: AuthServers) -> str:
    """HS256 keyed with the AS's public key, which anyone can fetch from its JWKS."""
    _, payload, _ = servers.token().split(".")
    header = _b64(json.dumps({"alg": "HS256", "typ": "at+jwt", "kid": servers.kid}).encode())
    public = servers.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signature = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


def _unknown_kid(servers: AuthServers) -> str:
    claims = jwt.decode(servers.token(), options={"verify_signature": False})
    stranger = ec.generate_private_key(ec.SECP256R1())
    return jwt.encode(
        claims, stranger, algorithm="ES256", headers={"kid": "nobody", "typ": "at+jwt"}
    )


def _other_key_same_kid(servers: AuthServers) -> str:
    claims = jwt.decode(servers.token(), options={"verify_signature": False})
    stranger = ec.generate_private_key(ec.SECP256R1())
    return jwt.encode(claims, stranger, algorithm="ES256", headers={"kid": servers.kid})


def _rsa_with_ec_kid(servers: AuthServers) -> str:
    claims = jwt.decode(servers.token(), options={"verify_signature": False})
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode(claims, stranger, algorithm="RS256", headers={"kid": servers.kid})


def _now() -> int:
    return int(time.time())


HOSTILE_JWTS: dict[str, tuple[Any, str]] = {
    "expired": (lambda s: s.resign(s.token(), exp=_now() - 3600, iat=_now() - 7200), "expired"),
    "not yet valid": (lambda s: s.resign(s.token(), nbf=_now() + 3600), "not valid yet"),
    "issued in the future": (lambda s: s.resign(s.token(), iat=_now() + 3600), "not valid yet"),
    "no expiry": (lambda s: s.resign(s.token(), exp=None), "no 'exp' claim"),
    "wrong audience": (
        lambda s: s.token(resource=s.other_resource),
        "not issued for this resource",
    ),
    "wrong issuer": (
        lambda s: s.resign(s.token(), iss=s.jwt_issuer + "/evil"),
        "another issuer",
    ),
    "token from another AS": (
        lambda s: s.token(s.other_issuer),
        "a key the authorization server does not publish",
    ),
    "another key under the AS's kid": (_other_key_same_kid, "signature does not verify"),
    "tampered payload": (_tampered_payload, "signature does not verify"),
    "tampered signature": (_tampered_signature, "signature does not verify"),
    "alg none": (_alg_none, "algorithm 'none' is not accepted"),
    "HS256 keyed with the public key": (_hmac_with_public_key, "'HS256' is not accepted"),
    "RS256 under an EC key's kid": (_rsa_with_ec_kid, "does not match its key"),
    "unknown kid": (_unknown_kid, "a key the authorization server does not publish"),
    "not an access token (typ)": (
        lambda s: jwt.encode(
            jwt.decode(s.token(), options={"verify_signature": False}),
            s.key,
            algorithm="ES256",
            headers={"kid": s.kid, "typ": "dpop+jwt"},
        ),
        "not an access token",
    ),
    "sender-constrained (cnf)": (
        lambda s: s.resign(s.token(), cnf={"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}),
        "bound to a key",
    ),
    "not a JWT": (lambda s: "not-a-jwt", "not a JWT"),
}


@pytest.mark.parametrize("case", list(HOSTILE_JWTS))
async def test_hostile_jwt_is_refused(servers: AuthServers, case: str) -> None:
    make, reason = HOSTILE_JWTS[case]
    token = make(servers)
    async with serve_app(_app(servers), listener=servers.listener) as url:
        response = await _post(url, token)
    assert response.status_code == 401, response.text
    challenge = _challenge(response)
    assert challenge.startswith('Bearer error="invalid_token", error_description="')
    assert reason in challenge
    assert 'scope="tools:read"' in challenge
    assert response.json()["error"] == "invalid_token"
    assert reason in response.json()["error_description"]


async def test_unknown_kids_refresh_the_keys_at_most_once_per_interval(
    servers: AuthServers,
) -> None:
    app = _app(servers)
    tokens = [_unknown_kid(servers) for _ in range(5)]
    good = servers.token()
    async with serve_app(app, listener=servers.listener) as url:
        assert (await _post(url, good)).status_code == 200
        for token in tokens:
            assert (await _post(url, token)).status_code == 401
    # One fetch for the good token; the unknown kids right after it fetch nothing more.
    assert app.verifier.keys.fetches == 1


async def test_a_rotated_key_is_fetched_when_its_kid_first_shows_up(
    servers: AuthServers, tmp_path: Path
) -> None:
    """The AS restarts with a new signing key: the first token under it makes the server
    fetch the JWKS again, and tokens under the retired key stop working."""
    issuer = f"http://127.0.0.1:{free_port()}"
    entry = {
        "issuer": issuer,
        "port": int(issuer.rsplit(":", 1)[1]),
        "clients": [_client(AGENT, ["client_credentials"])],
        "resources": {servers.resource: {"scope": SCOPES}},
    }
    oauth = ProtectedResource(
        resource=servers.resource, authorization_server=issuer, jwks_refresh_interval=0
    )
    app = create_app([whoami], oauth=oauth)
    async with serve_app(app, listener=servers.listener) as url:
        (tmp_path / "v1").mkdir()
        with _authorization_servers(
            tmp_path / "v1", [{**entry, "jwks": {"keys": [_ec_key("v1")[1]]}}]
        ):
            old = servers.token(issuer)
            assert (await _post(url, old)).status_code == 200
        (tmp_path / "v2").mkdir()
        with _authorization_servers(
            tmp_path / "v2", [{**entry, "jwks": {"keys": [_ec_key("v2")[1]]}}]
        ):
            new = servers.token(issuer)
            assert jwt.get_unverified_header(new)["kid"] == "v2"
            assert (await _post(url, new)).status_code == 200
            retired = await _post(url, old)
    assert retired.status_code == 401
    assert "does not publish" in _challenge(retired)
    assert app.verifier.keys.fetches == 3  # v1; v2 on its first token; v1 looked for again


# --- scopes -------------------------------------------------------------------------------------


async def test_a_token_without_the_servers_scope_gets_403(servers: AuthServers) -> None:
    token = servers.token(scope="tools:call")
    async with serve_app(_app(servers), listener=servers.listener) as url:
        response = await _post(url, token)
    assert response.status_code == 403
    challenge = _challenge(response)
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert 'scope="tools:read"' in challenge
    assert "resource_metadata=" in challenge


async def test_a_tools_own_scope_is_checked_on_call(servers: AuthServers) -> None:
    app = _app(servers, tool_scopes={"purge": ["tools:admin"]})
    reader = servers.token(scope="tools:read")
    admin = servers.token(scope="tools:read tools:admin")
    async with serve_app(app, listener=servers.listener) as url:
        async with McpClient(url, auth_token=reader) as client:
            # Listed to everyone (so a client can step up), refused to call without the scope.
            assert [s.name for s in await client.list_tools()] == ["whoami", "purge"]
            assert not (await client.call_tool("whoami", {})).is_error
            refused_call = await client.call_tool("purge", {})
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "purge", "arguments": {}},
        }
        refused = await _post(
            url, reader, body=call, headers={"mcp-protocol-version": "2025-11-25"}
        )
        assert refused.status_code == 403
        assert 'error="insufficient_scope"' in _challenge(refused)
        assert 'scope="tools:read tools:admin"' in _challenge(refused)
        async with McpClient(url, auth_token=admin) as client:
            result = await client.call_tool("purge", {})
    assert refused_call.is_error and "insufficient_scope" in refused_call.text
    assert not result.is_error and result.text == "purged"


async def test_step_up_with_toolwires_client(servers: AuthServers) -> None:
    """A client holding too few scopes asks the AS again for those the 403 names."""
    app = _app(servers, tool_scopes={"purge": ["tools:admin"]})
    async with serve_app(app, listener=servers.listener) as url:
        auth = ClientCredentials(*AGENT, scope="tools:read")
        async with McpClient(url, auth=auth) as client:
            result = await client.call_tool("purge", {})
    assert not result.is_error and result.text == "purged"


# --- how the token is presented -----------------------------------------------------------------


async def _raw_post(port: int, headers: list[bytes]) -> tuple[int, str, bytes]:
    """POST an initialize with headers as given, byte for byte (HTTP clients refuse bad ones)."""
    body = json.dumps(INITIALIZE).encode()
    request = b"\r\n".join(
        [
            b"POST /mcp HTTP/1.1",
            f"host: 127.0.0.1:{port}".encode(),
            b"content-type: application/json",
            b"accept: application/json, text/event-stream",
            f"content-length: {len(body)}".encode(),
            b"connection: close",
            *headers,
            b"",
            body,
        ]
    )
    with anyio.fail_after(20):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(request)
            answer = b""
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    answer += await stream.receive()
    head, _, rest = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    challenge = next(
        (
            v.strip()
            for k, _, v in (x.partition(":") for x in lines)
            if k.lower() == "www-authenticate"
        ),
        "",
    )
    return int(lines[0].split()[1]), challenge, rest


@pytest.mark.parametrize(
    ("header", "status", "error"),
    [
        (b"Bearer", 401, None),  # no credentials at all
        (b"Bearer    ", 401, None),
        (b"Bearer two words", 400, "invalid_request"),
        ("Bearer tok\u00e9n".encode(), 400, "invalid_request"),
        (b'Bearer a"b', 400, "invalid_request"),
        (b"Bearer " + b"a" * 20_000, 400, "invalid_request"),
        (b"Basic YWdlbnQ6c2VjcmV0", 401, None),
        (b"bearer", 401, None),
    ],
)
async def test_malformed_authorization_headers(
    servers: AuthServers, header: bytes, status: int, error: str | None
) -> None:
    async with serve_app(_app(servers), listener=servers.listener):
        got, challenge, _ = await _raw_post(servers.port, [b"authorization: " + header])
    assert got == status
    assert challenge.startswith("Bearer ")
    if error is None:
        assert "error=" not in challenge
    else:
        assert f'error="{error}"' in challenge


async def test_two_authorization_headers_are_refused(servers: AuthServers) -> None:
    token = servers.token().encode()
    async with serve_app(_app(servers), listener=servers.listener):
        got, challenge, _ = await _raw_post(
            servers.port, [b"authorization: Bearer " + token, b"authorization: Bearer x"]
        )
    assert got == 400
    assert 'error="invalid_request"' in challenge


async def test_a_token_in_the_query_string_is_never_accepted(servers: AuthServers) -> None:
    token = servers.token()
    async with serve_app(_app(servers), listener=servers.listener) as url:
        alone = await _post(url, params={"access_token": token})
        beside = await _post(url, token, params={"access_token": token})
    for response in (alone, beside):
        assert response.status_code == 400
        assert "Authorization header only" in response.json()["error_description"]


# --- introspection ---------------------------------------------------------------------------------


def _introspecting(servers: AuthServers, **options: Any) -> Any:
    setup = TokenIntrospection(*RS, **options)
    oauth = ProtectedResource(
        resource=servers.resource,
        authorization_server=servers.opaque_issuer,
        scopes=["tools:read"],
        introspection=setup,
    )
    return create_app([whoami, purge], oauth=oauth)


async def test_introspection_accepts_an_active_token(servers: AuthServers) -> None:
    token = servers.token(servers.opaque_issuer)
    assert token.count(".") == 0  # opaque: only introspection can say what it is
    app = _introspecting(servers)
    async with (
        serve_app(app, listener=servers.listener) as url,
        McpClient(url, auth_token=token) as client,
    ):
        first = await client.call_tool("whoami", {})
        second = await client.call_tool("whoami", {})
    assert first.structured == second.structured
    assert first.structured is not None
    assert first.structured["client_id"] == "agent"
    assert first.structured["issuer"] == servers.opaque_issuer
    assert first.structured["scopes"] == ["tools:call", "tools:read"]
    # Every request of the session carried the token; the short cache asked the AS once.
    assert app.verifier.requests == 1


async def test_introspection_with_client_secret_post(servers: AuthServers) -> None:
    token = servers.token(servers.opaque_issuer)
    app = _introspecting(servers, auth_method="client_secret_post")
    async with serve_app(app, listener=servers.listener) as url:
        assert (await _post(url, token)).status_code == 200


@pytest.mark.parametrize("case", ["unknown token", "revoked", "wrong audience", "a JWT"])
async def test_introspection_refuses(servers: AuthServers, case: str) -> None:
    if case == "unknown token":
        token, reason = "made-up-token", "not active"
    elif case == "revoked":
        token, reason = servers.token(servers.opaque_issuer), "not active"
        async with httpx.AsyncClient() as client:
            revoked = await client.post(
                f"{servers.opaque_issuer}/token/revocation", data={"token": token}, auth=AGENT
            )
        assert revoked.status_code == 200
    elif case == "wrong audience":
        token = servers.token(servers.opaque_issuer, resource=servers.other_resource)
        reason = "not issued for this resource"
    else:
        token, reason = servers.token(), "cannot introspect this token"
    async with serve_app(_introspecting(servers), listener=servers.listener) as url:
        response = await _post(url, token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in _challenge(response)
    assert reason in response.json()["error_description"]


async def test_introspection_with_a_wrong_secret_is_a_503_not_a_401(
    servers: AuthServers,
) -> None:
    """The AS refusing *us* says nothing about the client's token: it must not re-authorize."""
    token = servers.token(servers.opaque_issuer)
    setup = TokenIntrospection(RS[0], "wrong-secret")
    oauth = ProtectedResource(
        resource=servers.resource,
        authorization_server=servers.opaque_issuer,
        introspection=setup,
    )
    async with serve_app(create_app([whoami], oauth=oauth), listener=servers.listener) as url:
        response = await _post(url, token)
    assert response.status_code == 503
    assert response.json()["error"] == "temporarily_unavailable"


async def test_an_unreachable_authorization_server_is_a_503(
    servers: AuthServers, caplog: pytest.LogCaptureFixture
) -> None:
    oauth = ProtectedResource(
        resource=servers.resource, authorization_server=f"http://127.0.0.1:{free_port()}"
    )
    async with serve_app(create_app([whoami], oauth=oauth), listener=servers.listener) as url:
        response = await _post(url, servers.token())
        again = await _post(url, servers.token())
    assert response.status_code == again.status_code == 503
    assert response.headers["retry-after"] == "5"
    # A server found down is not asked again at once: the next request is answered without.
    assert "not asked again yet" in caplog.text
    # The operator is told why, in the log; the client only that it may try again.
    assert "no authorization server metadata" in caplog.text
    assert "metadata" not in response.text


# --- sessions and configuration ------------------------------------------------------------------


async def test_a_session_belongs_to_the_principal_that_opened_it(servers: AuthServers) -> None:
    mine = servers.token()
    theirs = servers.token(client=READER, scope="tools:read")
    async with serve_app(_app(servers), listener=servers.listener) as url:
        opened = await _post(url, mine)
        session = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        hijack = await _post(url, theirs, body=listing, headers=headers)
        own = await _post(url, mine, body=listing, headers=headers)
    assert own.status_code == 200
    assert hijack.status_code == 404, hijack.text  # as if the session did not exist


def test_configuration_mistakes_are_refused_early() -> None:
    good = {"resource": "https://tools.example/mcp", "authorization_server": "https://as.example"}
    with pytest.raises(ValueError, match="not both"):
        create_app([whoami], auth_token="t" * 16, oauth=ProtectedResource(**good))
    with pytest.raises(ValueError, match="not served: nope"):
        create_app([whoami], oauth=ProtectedResource(**good, tool_scopes={"nope": ["a"]}))
    with pytest.raises(ValueError, match="https"):
        ProtectedResource(
            resource="https://tools.example/mcp", authorization_server="http://as.example"
        )
    with pytest.raises(ValueError, match="refused: HS256"):
        ProtectedResource(**good, algorithms=["ES256", "HS256"])
    with pytest.raises(ValueError, match="refused: none"):
        ProtectedResource(**good, algorithms=["none"])
    with pytest.raises(ValueError, match="not a string"):
        ProtectedResource(**good, scopes="tools:read")
    with pytest.raises(ValueError, match="valid OAuth scope"):
        ProtectedResource(**good, scopes=['bad"scope'])
    with pytest.raises(ValueError, match="not both"):
        ProtectedResource(**good, introspection=TokenIntrospection("a", "b"), verifier=_Verifier())
    assert "hunter2" not in repr(TokenIntrospection("rs", "hunter2"))


class _Verifier:
    async def verify(self, token: str) -> AuthInfo:
        if token != "letmein-letmein-letmein":
            raise InvalidTokenError("unknown to this verifier")
        return AuthInfo(subject="u1", client_id="c1", scopes=frozenset({"x"}), issuer="me")


async def test_a_verifier_of_ones_own(servers: AuthServers) -> None:
    oauth = _oauth(servers, scopes=["x"], verifier=_Verifier())
    async with serve_app(create_app([whoami], oauth=oauth), listener=servers.listener) as url:
        refused = await _post(url, "letmeout")
        async with McpClient(url, auth_token="letmein-letmein-letmein") as client:
            result = await client.call_tool("whoami", {})
    assert refused.status_code == 401
    assert "unknown to this verifier" in _challenge(refused)
    assert result.structured is not None and result.structured["subject"] == "u1"


# --- toolwire serve ------------------------------------------------------------------------------

TOOLWIRE_SERVE = [sys.executable, "-m", "toolwire.cli", "serve", "--prebuilt"]
_WORKERS = ["--stateless", "--workers", "2"]


@contextlib.contextmanager
def _serve_cli(
    servers: AuthServers, *args: str, env: dict[str, str] | None = None
) -> Iterator[None]:
    """`toolwire serve` on the resource's port until the block ends; the port is held again after."""
    with servers.port_released():
        proc = subprocess.Popen(
            [*TOOLWIRE_SERVE, "--port", str(servers.port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()  # printed once the socket listens
            if url != servers.resource:
                proc.kill()
                pytest.fail(f"toolwire serve did not start: {proc.communicate(timeout=30)[1]}")
            yield
        finally:
            proc.terminate()
            proc.communicate(timeout=30)


# One process, and two workers that each get the OAuth settings from the supervisor.
_SCALES = [pytest.param([], id="one-process"), pytest.param(_WORKERS, id="two-workers")]


@pytest.mark.parametrize("scale", _SCALES)
async def test_serve_cli_with_jwt_validation_and_a_tool_scope(
    servers: AuthServers, scale: list[str]
) -> None:
    with _serve_cli(
        servers,
        *scale,
        "--auth-issuer",
        servers.jwt_issuer,
        "--auth-scope",
        "tools:read",
        "--auth-tool-scope",
        "calculator=tools:admin",
    ):
        anonymous = await _post(servers.resource)
        async with httpx.AsyncClient() as http:
            where = f"http://127.0.0.1:{servers.port}/.well-known/oauth-protected-resource/mcp"
            metadata = (await http.get(where)).json()
        async with McpClient(servers.resource, auth_token=servers.token()) as client:
            listed = {spec.name for spec in await client.list_tools()}
            allowed = await client.call_tool("current_datetime", {})
            refused = await client.call_tool("calculator", {"expression": "2+2"})
        admin = servers.token(scope="tools:read tools:admin")
        async with McpClient(servers.resource, auth_token=admin) as client:
            computed = await client.call_tool("calculator", {"expression": "2+2"})
    assert anonymous.status_code == 401
    assert 'scope="tools:read"' in _challenge(anonymous)
    assert metadata["authorization_servers"] == [servers.jwt_issuer]
    assert metadata["scopes_supported"] == ["tools:read", "tools:admin"]
    assert "calculator" in listed
    assert not allowed.is_error
    assert refused.is_error and "insufficient_scope" in refused.text
    assert not computed.is_error and "4" in computed.text


@pytest.mark.parametrize("scale", _SCALES)
async def test_serve_cli_with_introspection(servers: AuthServers, scale: list[str]) -> None:
    with _serve_cli(
        servers,
        *scale,
        "--auth-issuer",
        servers.opaque_issuer,
        "--auth-introspection-client",
        RS[0],
        env={"TOOLWIRE_INTROSPECTION_SECRET": RS[1]},
    ):
        good = await _post(servers.resource, servers.token(servers.opaque_issuer))
        bad = await _post(servers.resource, "made-up")
    assert good.status_code == 200
    assert bad.status_code == 401 and "not active" in _challenge(bad)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--auth-scope", "a"], "need --auth-issuer"),
        (["--auth-issuer", "https://as.example", "--token", "t"], "give one or the other"),
        (["--auth-issuer", "http://as.example"], "must use https"),
        (["--auth-issuer", "https://as.example", "--auth-tool-scope", "calculator"], "TOOL=SCOPE"),
        (["--auth-issuer", "https://as.example", "--auth-tool-scope", "nope=a"], "not served"),
        (["--auth-issuer", "https://as.example", "--auth-introspection-client", "rs"], "SECRET"),
    ],
)
def test_serve_cli_refuses_bad_auth_options(args: list[str], message: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLWIRE_")}
    done = subprocess.run(
        [*TOOLWIRE_SERVE, "--port", "0", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_cli_beyond_loopback_with_oauth_needs_no_token() -> None:
    """OAuth protects the tools, so serving on every interface is allowed without a token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLWIRE_")}
    done = subprocess.run(
        [
            *TOOLWIRE_SERVE,
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--auth-issuer",
            "http://127.0.0.1:1",
            "--auth-scope",
            'bad"scope',
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    # It gets past the "no token beyond loopback" refusal, to the check of the scope itself.
    assert done.returncode == 1
    assert "refusing to serve" not in done.stderr
    assert "not a valid OAuth scope" in done.stderr
