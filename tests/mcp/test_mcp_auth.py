"""OAuth for `McpClient`: token stores, redirects, and what a client without OAuth is told.

The flows themselves (discovery, registration, PKCE, scopes, refresh, resource indicators) run
against the conformance suite's authorization servers, in test_mcp_conformance.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp_fixtures import serve_app
from mcp_servers import sdk_app

from toolwire.mcp import McpAuthError, McpClient, create_app, from_mcp
from toolwire.mcp.auth import (
    ClientCredentials,
    FileTokenStore,
    MemoryTokenStore,
    OAuth,
    parse_redirect,
)

pytestmark = pytest.mark.anyio


async def test_file_store_keeps_tokens_for_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "tokens" / "server.json"
    old = os.umask(0o022)  # a umask that would leave a plain file readable by everyone
    try:
        store = FileTokenStore(path)
        assert await store.get_tokens() is None
        assert await store.get_client_info() is None
        await store.set_tokens(OAuthToken(access_token="a1", refresh_token="r1", expires_in=60))
        await store.set_client_info(OAuthClientInformationFull(client_id="c1", client_secret="s"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = FileTokenStore(path)  # as a later process would read it
    tokens = await again.get_tokens()
    client = await again.get_client_info()
    assert tokens is not None and (tokens.access_token, tokens.refresh_token) == ("a1", "r1")
    assert client is not None and (client.client_id, client.client_secret) == ("c1", "s")
    assert [p.name for p in path.parent.iterdir()] == ["server.json"]  # no temporary left


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b'{"tokens": {"no": "token"}}'])
async def test_file_store_refuses_a_damaged_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "tokens.json"
    path.write_bytes(content)
    store = FileTokenStore(path)
    with pytest.raises(McpAuthError, match="token file"):
        await store.get_tokens()
    if content.startswith(b'{"tokens"'):
        # A malformed record in a readable file is replaced by the next good one.
        await store.set_tokens(OAuthToken(access_token="a"))
        fixed = await store.get_tokens()
        assert fixed is not None and fixed.access_token == "a"
        return
    with pytest.raises(McpAuthError, match="token file"):
        await store.set_tokens(OAuthToken(access_token="a"))
    assert path.read_bytes() == content  # left for the person to look at, not overwritten


async def test_memory_store() -> None:
    store = MemoryTokenStore()
    await store.set_tokens(OAuthToken(access_token="a"))
    found = await store.get_tokens()
    assert found is not None and found.access_token == "a"


def test_redirect_parsing() -> None:
    found = parse_redirect("http://127.0.0.1:9/callback?code=abc&state=xyz&iss=https%3A%2F%2Fas")
    assert (found.code, found.state, found.iss) == ("abc", "xyz", "https://as")
    with pytest.raises(McpAuthError, match="access_denied \\(no thanks\\)"):
        parse_redirect(
            "http://127.0.0.1:9/callback?error=access_denied&error_description=no+thanks"
        )
    with pytest.raises(McpAuthError, match="no authorization code"):
        parse_redirect("http://127.0.0.1:9/callback?state=xyz")


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="client_id"):
        OAuth(client_secret="s")
    with pytest.raises(ValueError, match="https URL with a path"):
        OAuth(client_metadata_url="http://example.com/client.json")
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials("id")
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials("id", "secret", private_key="-----BEGIN PRIVATE KEY-----")
    with pytest.raises(ValueError, match="not both"):
        McpClient("http://127.0.0.1:9/mcp", auth_token="t", auth=OAuth())


async def test_a_refusal_without_oauth_says_what_to_pass() -> None:
    app = create_app([], name="locked", auth_token="secret-secret-secret")
    async with serve_app(app) as url:
        with pytest.raises(McpAuthError, match=r"\(401\).*auth=OAuth"):
            await McpClient(url).connect()


@pytest.mark.parametrize(
    "auth", [OAuth(), ClientCredentials("id", "secret")], ids=["oauth", "client-credentials"]
)
async def test_a_server_without_oauth_metadata_fails_clearly(
    auth: OAuth | ClientCredentials,
) -> None:
    # toolwire's server with a fixed token publishes no OAuth metadata: discovery finds none,
    # and the client stops with a typed error naming where it failed, instead of retrying or
    # hanging (the legacy fallback tries registration at the server's own origin).
    app = create_app([], name="locked", auth_token="secret-secret-secret")
    async with serve_app(app) as url:
        with pytest.raises(
            McpAuthError, match=r"Signing in failed at the (authorization server|token endpoint)"
        ):
            await McpClient(url, auth=auth).connect()


async def test_oauth_is_only_used_when_the_server_asks(tmp_path: Path) -> None:
    # The SDK's own server needs no authorization, so the flow never starts and nothing is asked.
    store = FileTokenStore(tmp_path / "t.json")
    async with serve_app(sdk_app()) as url, McpClient(url, auth=OAuth(store=store)) as client:
        assert "echo" in {s.name for s in await client.list_tools()}
    assert not (tmp_path / "t.json").exists()


async def test_from_mcp_takes_auth() -> None:
    app = create_app([], name="locked", auth_token="secret-secret-secret")
    async with serve_app(app) as url:
        with pytest.raises(
            McpAuthError, match=r"Signing in failed at the (authorization server|token endpoint)"
        ):
            await from_mcp(url, auth=ClientCredentials("id", "secret"))
