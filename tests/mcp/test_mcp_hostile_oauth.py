"""`McpClient` signing in (OAuth) to a hostile MCP server and authorization server.

Both are written here: one ASGI app on 127.0.0.1 that answers 401, then serves protected-resource
metadata, authorization server metadata and a token endpoint, each of which the test can make
endless, huge, silent, or point somewhere it must not (a cloud metadata address, plain HTTP off
this machine). Every request the client makes is recorded, so the test can say where the client
secret went.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from mcp_fixtures import serve_app

from toolwire.errors import EgressBlocked
from toolwire.mcp import McpAuthError, McpClient
from toolwire.mcp.auth import ClientCredentials, CrossAppAccess, OAuth, SignInPolicy

pytestmark = pytest.mark.anyio

SECRET = "csecret-csecret-csecret"


@dataclass
class Hostile:
    """The MCP server and its authorization server in one app; `answers` overrides a path."""

    base: str = ""
    answers: dict[str, Any] = field(default_factory=dict[str, Any])
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    seen: list[tuple[str, str, str | None]] = field(
        default_factory=list[tuple[str, str, str | None]]
    )

    def default(self, path: str) -> tuple[int, bytes] | None:
        if path.startswith("/.well-known/oauth-protected-resource") or path == "/moved":
            document = {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]}
            return 200, json.dumps(document).encode()
        if path == "/.well-known/oauth-authorization-server":
            document = {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["client_credentials", "authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
            } | self.metadata
            return 200, json.dumps(document).encode()
        if path == "/register":
            return 201, json.dumps(
                {"client_id": "registered", "redirect_uris": ["http://127.0.0.1:33418/callback"]}
            ).encode()
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        headers = dict(scope["headers"])
        auth = headers.get(b"authorization")
        self.seen.append((scope["method"], path, auth.decode() if auth else None))
        answer = self.answers.get(path)
        if answer == "endless":
            await _endless(receive, send)
            return
        if answer == "silent":  # reads the request, never answers, until the client hangs up
            while (await receive())["type"] != "http.disconnect":
                pass
            return
        if isinstance(answer, tuple) and answer[0] == "redirect":
            location = answer[2].replace("{base}", self.base).encode()
            await _send(send, answer[1], b"", [(b"location", location)])
            return
        if isinstance(answer, tuple):
            status, body = answer
        elif path == "/mcp":
            challenge = (
                f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            )
            await _send(send, 401, b"{}", [(b"www-authenticate", challenge.encode())])
            return
        else:
            status, body = self.default(path) or (404, b"{}")
        await _send(send, status, body)


async def _send(send: Any, status: int, body: bytes, extra: list[Any] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _endless(receive: Any, send: Any) -> None:
    """A JSON answer that never ends, until the reader hangs up."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    chunk = b'{"pad": "' + b"x" * 65536

    async def until_hung_up() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        flood.cancel_scope.cancel()

    async with anyio.create_task_group() as flood:
        flood.start_soon(until_hung_up)
        while True:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await anyio.lowlevel.checkpoint()


@asynccontextmanager
async def hostile() -> AsyncIterator[Hostile]:
    app = Hostile()
    async with serve_app(app, path="") as base:
        app.base = base
        yield app


async def _sign_in(server: Hostile, auth: Any) -> McpAuthError:
    with anyio.fail_after(60), pytest.raises(McpAuthError) as caught:
        async with McpClient(f"{server.base}/mcp", auth=auth, timeout=60) as client:
            await client.list_tools()
    return caught.value


def _credentials(**options: Any) -> ClientCredentials:
    return ClientCredentials("cid", SECRET, **options)


def _secret_sent_to(server: Hostile) -> list[str]:
    return [path for _, path, auth in server.seen if auth and auth.startswith("Basic ")]


# --- answers read with caps -------------------------------------------------------------------


async def test_an_endless_resource_metadata_answer_is_cut_at_the_cap() -> None:
    async with hostile() as server:
        server.answers["/.well-known/oauth-protected-resource/mcp"] = "endless"
        error = await _sign_in(server, _credentials())
    assert "resource metadata" in str(error)
    assert "more than 1000000 bytes" in str(error)


async def test_an_endless_token_answer_is_cut_at_the_cap() -> None:
    async with hostile() as server:
        server.answers["/token"] = "endless"
        error = await _sign_in(server, _credentials())
    assert "token endpoint" in str(error)
    assert "more than 1000000 bytes" in str(error)


async def test_a_huge_authorization_server_metadata_is_refused() -> None:
    async with hostile() as server:
        huge = b'{"issuer": "x", "pad": "' + b"x" * 10_000_000 + b'"}'
        server.answers["/.well-known/oauth-authorization-server"] = (200, huge)
        error = await _sign_in(server, _credentials())
    assert "authorization server metadata" in str(error)
    assert "more than" in str(error)


async def test_a_huge_error_body_is_cut_short_in_the_message() -> None:
    async with hostile() as server:
        server.answers["/token"] = (400, b'{"error": "invalid_client", "x": "' + b"y" * 900_000)
        error = await _sign_in(server, _credentials())
    message = str(error)
    assert len(message) < 2_000, len(message)
    assert "token endpoint" in message
    assert "invalid_client" in message


async def test_a_silent_token_endpoint_times_out_naming_it() -> None:
    async with hostile() as server:
        server.answers["/token"] = "silent"
        error = await _sign_in(server, _credentials(policy=SignInPolicy(timeout=1)))
    assert "token endpoint" in str(error)
    assert "did not answer within 1 s" in str(error)


# --- where credentials may go -----------------------------------------------------------------


async def test_resource_metadata_naming_the_cloud_metadata_address_is_refused() -> None:
    async with hostile() as server:
        document = {
            "resource": f"{server.base}/mcp",
            "authorization_servers": ["http://169.254.169.254"],
        }
        server.answers["/.well-known/oauth-protected-resource/mcp"] = (
            200,
            json.dumps(document).encode(),
        )
        error = await _sign_in(server, _credentials())
    assert "refused to contact the authorization server metadata at http://169.254.169.254" in str(
        error
    )
    assert _secret_sent_to(server) == []


async def test_a_token_endpoint_on_the_metadata_address_never_gets_the_secret() -> None:
    async with hostile() as server:
        server.metadata["token_endpoint"] = "http://169.254.169.254/latest/token"
        error = await _sign_in(server, _credentials())
    assert "refused to contact the token endpoint http://169.254.169.254" in str(error)
    assert "link-local" in str(error)
    assert _secret_sent_to(server) == []


async def test_a_token_endpoint_over_plain_http_off_loopback_is_refused() -> None:
    """The name resolves to a public address (injected resolver): HTTPS is required there."""

    def resolver(host: str, port: int) -> list[str]:
        return ["93.184.216.34"] if host == "as.example.test" else ["127.0.0.1"]

    async with hostile() as server:
        server.metadata["token_endpoint"] = "http://as.example.test/token"
        error = await _sign_in(server, _credentials(policy=SignInPolicy(resolver=resolver)))
    assert "plain HTTP" in str(error)
    assert "token endpoint http://as.example.test/token" in str(error)
    assert _secret_sent_to(server) == []


async def test_a_name_resolving_to_loopback_is_reached_pinned_for_a_loopback_server() -> None:
    """A private or loopback authorization server is fine when the MCP server is on one too:
    the guard resolves the name (injected resolver), checks it, and connects to that address."""

    def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    async with hostile() as server:
        port = server.base.rsplit(":", 1)[1]
        server.metadata["token_endpoint"] = f"http://as.internal.test:{port}/token"
        server.answers["/token"] = (400, b'{"error": "invalid_client"}')
        error = await _sign_in(server, _credentials(policy=SignInPolicy(resolver=resolver)))
    # The request reached the token endpoint (through the guard) and its refusal is named.
    assert "Signing in failed at the token endpoint http://as.internal.test" in str(error)
    assert _secret_sent_to(server) == ["/token"]


async def test_the_authorization_endpoint_must_be_https_off_loopback() -> None:
    asked: list[str] = []

    async def authorize(url: str) -> str:
        asked.append(url)
        return "http://127.0.0.1:33418/callback?code=x&state=y"

    async with hostile() as server:
        server.metadata["authorization_endpoint"] = "http://as.example.test/authorize"
        server.metadata["grant_types_supported"] = ["authorization_code"]
        error = await _sign_in(server, OAuth(authorize=authorize))
    assert "not served over HTTPS" in str(error)
    assert asked == []  # the person was never sent there


async def test_the_sign_in_rule_for_private_addresses() -> None:
    """The real guard with the sign-in rule: a public MCP server's sign-in never reaches a
    private address unless the caller lists it; a private MCP server's may; link-local never."""

    def resolver(host: str, port: int) -> list[str]:
        return {"mcp.example.com": ["93.184.216.34"], "mcp.corp.test": ["10.0.0.5"]}.get(
            host, ["10.0.0.7"]
        )

    policy = SignInPolicy(resolver=resolver)
    public = await policy.egress_for("https://mcp.example.com/mcp")
    with pytest.raises(EgressBlocked, match="private address"):
        await public.check_url("https://as.corp.test/token")
    with pytest.raises(EgressBlocked, match="loopback"):
        await public.check_url("https://127.0.0.1/token")
    private = await policy.egress_for("https://mcp.corp.test/mcp")
    assert [str(a) for a in await private.check_url("https://as.corp.test/token")] == ["10.0.0.7"]
    allowed = await SignInPolicy(resolver=resolver, allow=["10.0.0.0/8"]).egress_for(
        "https://mcp.example.com/mcp"
    )
    assert await allowed.check_url("https://as.corp.test/token")
    for rule in (public, private, allowed):
        with pytest.raises(EgressBlocked):
            await rule.check_url("http://169.254.169.254/latest/meta-data")
    everything = await SignInPolicy(allow=["169.254.0.0/16"]).egress_for("http://127.0.0.1/mcp")
    with pytest.raises(EgressBlocked, match="denies"):
        await everything.check_url("http://169.254.169.254/latest/meta-data")


async def test_an_endless_identity_provider_answer_is_cut_at_the_cap() -> None:
    async with hostile() as server:
        server.answers["/idp/token"] = "endless"
        access = CrossAppAccess(
            "cid",
            SECRET,
            issuer=server.base,
            idp_token_endpoint=f"{server.base}/idp/token",
            id_token="id-token",
        )
        with anyio.fail_after(30), pytest.raises(McpAuthError, match="more than 1000000 bytes"):
            await access.exchange(server.base, f"{server.base}/mcp")


async def test_the_identity_provider_never_gets_a_secret_on_the_metadata_address() -> None:
    access = CrossAppAccess(
        "cid",
        SECRET,
        issuer="https://as.example",
        idp_token_endpoint="http://169.254.169.254/token",
        id_token="id-token",
        idp_client_secret="idp-secret",
    )
    with anyio.fail_after(30), pytest.raises(McpAuthError, match="denies"):
        await access.exchange("https://as.example", "https://mcp.example/mcp")


async def test_a_redirect_within_the_origin_is_followed_through_the_guard() -> None:
    async with hostile() as server:
        server.answers["/.well-known/oauth-protected-resource/mcp"] = ("redirect", 307, "/moved")
        server.answers["/token"] = (400, b'{"error": "invalid_client"}')
        error = await _sign_in(server, _credentials())
    assert "Signing in failed at the token endpoint" in str(error)
    assert ("GET", "/moved", None) in server.seen


async def test_a_redirect_out_of_the_origin_is_not_followed() -> None:
    async with hostile() as server:
        server.answers["/.well-known/oauth-authorization-server"] = (
            "redirect",
            302,
            "http://169.254.169.254/latest/meta-data",
        )
        error = await _sign_in(server, _credentials())
    # Not followed: with no metadata, the SDK falls back to the MCP server's own origin (the
    # one the caller named), so the secret goes there and nowhere else.
    assert f"the token endpoint {server.base}/token" in str(error)
    assert _secret_sent_to(server) == ["/token"]
