"""OAuth 2.1 for `McpClient`, as the MCP authorization specification describes it.

The protocol itself is the official `mcp` SDK's `OAuthClientProvider`: discovery from the
`WWW-Authenticate` challenge and protected-resource metadata (with the well-known fallbacks),
authorization-server metadata (RFC 8414, OpenID Connect, and the 2025-03-26 fallbacks), client
ID metadata documents, dynamic registration, PKCE (S256), the scope rules (from the challenge,
from `scopes_supported`, omitted when neither says; step-up on `insufficient_scope`, once per
request), the token endpoint auth methods (basic, post, none), refresh, and resource indicators
(RFC 8707). The SDK writes it as an `httpx2.Auth`, and toolwire's own Streamable HTTP exchange
(`_http`) runs on httpx2, so it plugs in unchanged: every request the exchange sends carries
it, and a 401 or 403 met mid-session is answered by authorizing and repeating that one request.

toolwire's own, and why:

- `OAuth` and `ClientCredentials`: one configuration value each, usable for many servers (a
  provider is built per server URL), instead of the SDK's provider per connection.
- The `authorize` hook is one callable, *authorization URL in, redirect URL out*, rather than the
  SDK's redirect and callback pair: the same shape serves a browser with a loopback listener, a
  person pasting the address they landed on, and a headless test. The redirect's `error`
  (e.g. `access_denied`) becomes a clear `McpAuthError` instead of a missing-code failure.
- A pre-registered client (`client_id`, optional `client_secret`) is handed to the SDK through
  the token store, its documented seam, rather than by setting its internals.
- Token stores: `MemoryTokenStore` (the default) and `FileTokenStore`, which writes its file
  atomically with 0600 permissions, for the CLI and anything that must survive a restart.
- The SDK's OAuth failures surface as `McpAuthError` (see `_http`), toolwire's documented error.
- `CrossAppAccess` (enterprise-managed authorization, SEP-990): the SDK presents the identity
  assertion grant to the MCP server's authorization server, but leaves getting it from the
  identity provider to the deployment; toolwire does that leg, an RFC 8693 token exchange.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import typing
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.to_thread
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import AnyUrl, ValidationError

from ..errors import McpAuthError
from ._oauth_guard import GuardedAuth, SignInPolicy, check_authorization_url, post_to_named

__all__ = [
    "AuthorizeHandler",
    "ClientCredentials",
    "CrossAppAccess",
    "FileTokenStore",
    "MemoryTokenStore",
    "OAuth",
    "SignInPolicy",
    "TokenStore",
]

AuthorizeHandler: TypeAlias = Callable[[str], Awaitable[str]]
"""Given the authorization URL, sends a person (or a test) there and returns the URL the
authorization server redirected back to, query string included."""

TokenEndpointAuthMethod: TypeAlias = Literal["none", "client_secret_basic", "client_secret_post"]

DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"
"""Where the authorization server sends the browser back: a loopback address, as RFC 8252 asks."""


class TokenStore(Protocol):
    """Where a client's tokens and registration live between connections.

    The methods and models are the `mcp` SDK's (`mcp.shared.auth`), so any SDK token storage
    works here too.
    """

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if any."""
        ...

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens (after authorization or a refresh)."""
        ...

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, if any."""
        ...

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a new client registration."""
        ...


class MemoryTokenStore:
    """Tokens kept in memory only: gone when the process ends (the default)."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if any."""
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep new tokens."""
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, if any."""
        return self._client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep a new client registration."""
        self._client_info = client_info


class FileTokenStore:
    """Tokens for one server kept in a JSON file only its owner can read (mode 0600).

    Each write replaces the file atomically, so a crash never leaves half a token behind. A file
    that cannot be read as a token record raises `McpAuthError` rather than being overwritten
    silently.

    Args:
        path: The file; its directory is created (mode 0700) when missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _load(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            found: Any = json.loads(raw)
        except ValueError as exc:
            raise McpAuthError(f"The token file {self.path} is not valid JSON: {exc}") from None
        if not isinstance(found, dict):
            raise McpAuthError(f"The token file {self.path} does not hold a JSON object")
        return typing.cast(dict[str, Any], found)

    def _save(self, key: str, value: dict[str, Any]) -> None:
        record = self._load()
        record[key] = value
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file 0600 whatever the umask, so the token is never readable by others.
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(record, out)
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, if any."""
        found = (await anyio.to_thread.run_sync(self._load)).get("tokens")
        return None if found is None else _parse(OAuthToken, found, self.path)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Write new tokens to the file."""
        record = tokens.model_dump(mode="json", exclude_none=True)
        await anyio.to_thread.run_sync(self._save, "tokens", record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration, if any."""
        found = (await anyio.to_thread.run_sync(self._load)).get("client_info")
        return None if found is None else _parse(OAuthClientInformationFull, found, self.path)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Write a new client registration to the file."""
        record = client_info.model_dump(mode="json", exclude_none=True)
        await anyio.to_thread.run_sync(self._save, "client_info", record)


_Model = typing.TypeVar("_Model", OAuthToken, OAuthClientInformationFull)


def _parse(model: type[_Model], value: Any, path: Path) -> _Model:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise McpAuthError(f"The token file {path} holds a malformed record: {exc}") from None


class _PreRegistered:
    """A store that answers with a pre-registered client until a registration is stored."""

    def __init__(self, store: TokenStore, client: OAuthClientInformationFull) -> None:
        self._store = store
        self._client = client

    async def get_tokens(self) -> OAuthToken | None:
        return await self._store.get_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._store.set_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        found = await self._store.get_client_info()
        return (
            found
            if found is not None and found.client_id == self._client.client_id
            else self._client
        )

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._store.set_client_info(client_info)


def parse_redirect(redirect_url: str) -> AuthorizationCodeResult:
    """The code, state and issuer from the URL the authorization server redirected to.

    Raises:
        McpAuthError: the server answered with an error (e.g. the person declined), or gave no code.
    """
    query = parse_qs(urlsplit(redirect_url).query)

    def first(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    error = first("error")
    if error is not None:
        detail = first("error_description")
        raise McpAuthError(
            f"The authorization server refused: {error}" + (f" ({detail})" if detail else "")
        )
    code = first("code")
    if not code:
        raise McpAuthError(f"The redirect carries no authorization code: {redirect_url[:200]}")
    return AuthorizationCodeResult(code=code, state=first("state"), iss=first("iss"))


class OAuth:
    """OAuth 2.1 authorization (the authorization code flow with PKCE) for people and apps.

    Pass it as `McpClient(url, auth=OAuth(...))`. The first request the server refuses with 401
    starts the flow: discovery, then registration (a client ID metadata document when
    `client_metadata_url` is given and the server supports it; else dynamic registration,
    unless `client_id` names a pre-registered client), then `authorize`, then the token
    exchange. Tokens are refreshed when they expire.

    Args:
        authorize: Sends a person to the authorization URL and returns the redirect URL they
            came back to. Without it a refusal raises `McpAuthError`. `toolwire tools URL
            --login` supplies one that opens a browser and listens on `redirect_uri`.
        redirect_uri: Where the authorization server sends the person back.
        client_name: The name registered for this client.
        scope: Scopes to ask for, space-separated; by default the server's challenge or
            metadata decides, and none are asked for when neither says.
        client_id: A pre-registered client; no registration happens.
        client_secret: The pre-registered client's secret, if it has one.
        token_endpoint_auth_method: How a pre-registered client authenticates at the token
            endpoint; by default `client_secret_basic` with a secret and `none` without.
        client_metadata_url: An HTTPS URL serving this client's metadata document, used as its
            client ID by servers that support client ID metadata documents.
        store: Where tokens and the registration are kept (memory by default).
        policy: Where sign-in requests may go and how much of each answer is read.
    """

    def __init__(
        self,
        *,
        authorize: AuthorizeHandler | None = None,
        redirect_uri: str = DEFAULT_REDIRECT_URI,
        client_name: str = "toolwire",
        scope: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: TokenEndpointAuthMethod | None = None,
        client_metadata_url: str | None = None,
        store: TokenStore | None = None,
        policy: SignInPolicy | None = None,
    ) -> None:
        if client_secret is not None and client_id is None:
            raise ValueError("client_secret needs the client_id it belongs to")
        if client_metadata_url is not None and not _https_with_path(client_metadata_url):
            raise ValueError(
                f"client_metadata_url must be an https URL with a path, got {client_metadata_url!r}"
            )
        self.authorize = authorize
        self.redirect_uri = redirect_uri
        self.client_name = client_name
        self.scope = scope
        self.client_id = client_id
        self.client_secret = client_secret
        self.token_endpoint_auth_method: TokenEndpointAuthMethod | None = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.policy = policy or SignInPolicy()

    def provider(self, server_url: str) -> httpx2.Auth:
        """The `httpx2.Auth` that authorizes requests to `server_url`."""
        method: TokenEndpointAuthMethod = self.token_endpoint_auth_method or (
            "client_secret_basic" if self.client_secret else "none"
        )
        redirect: list[AnyUrl] = [AnyUrl(self.redirect_uri)]
        metadata = OAuthClientMetadata(
            redirect_uris=redirect,
            client_name=self.client_name,
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=self.scope,
            # Dynamic registration asks for a public client unless a method was chosen.
            token_endpoint_auth_method=self.token_endpoint_auth_method or "none",
        )
        store = self.store
        if self.client_id is not None:
            client = OAuthClientInformationFull(
                client_id=self.client_id,
                client_secret=self.client_secret,
                token_endpoint_auth_method=method,
                redirect_uris=redirect,
                grant_types=["authorization_code", "refresh_token"],
                scope=self.scope,
            )
            store = _PreRegistered(store, client)
        pending: list[str] = []

        async def redirect_handler(url: str) -> None:
            check_authorization_url(url, self.policy)
            pending.append(url)

        async def callback_handler() -> AuthorizationCodeResult:
            url = pending.pop()
            if self.authorize is None:
                raise McpAuthError(
                    f"The MCP server at {server_url} needs a person to authorize this client "
                    "(OAuth), and no `authorize` handler was given"
                )
            return parse_redirect(await self.authorize(url))

        inner = OAuthClientProvider(
            server_url,
            metadata,
            store,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            client_metadata_url=self.client_metadata_url,
        )
        return GuardedAuth(inner, server_url, self.policy)


class ClientCredentials:
    """OAuth 2.1 client credentials, for machines: no person, no browser.

    The client proves who it is with a secret, or with a JWT it signs with its private key
    (`private_key_jwt`, RFC 7523), so no secret is ever sent.

    Args:
        client_id: The client's ID at the authorization server.
        client_secret: Its secret; give this or `private_key`.
        issuer: The authorization server that issued them; when given, the credentials are only
            ever used with that server, whichever one the MCP server names.
        scope: Scopes to ask for, space-separated.
        token_endpoint_auth_method: With a secret, `client_secret_basic` (the default) or
            `client_secret_post`.
        private_key: A PEM private key registered for the client, to sign assertions with.
        signing_algorithm: The JWT algorithm for `private_key` (e.g. `RS256`, `ES256`).
        store: Where tokens are kept (memory by default).
        policy: Where sign-in requests may go and how much of each answer is read; the
            secret is only ever sent where it accepts.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str | None = None,
        *,
        issuer: str | None = None,
        scope: str | None = None,
        token_endpoint_auth_method: Literal[
            "client_secret_basic", "client_secret_post"
        ] = "client_secret_basic",
        private_key: str | None = None,
        signing_algorithm: str = "RS256",
        store: TokenStore | None = None,
        policy: SignInPolicy | None = None,
    ) -> None:
        if (client_secret is None) == (private_key is None):
            raise ValueError("give client_secret or private_key (exactly one)")
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.scope = scope
        self.token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = (
            token_endpoint_auth_method
        )
        self.private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.policy = policy or SignInPolicy()

    def __repr__(self) -> str:
        return f"ClientCredentials({self.client_id!r}, issuer={self.issuer!r})"

    def provider(self, server_url: str) -> httpx2.Auth:
        """The `httpx2.Auth` that authorizes requests to `server_url`."""
        with warnings.catch_warnings():
            # Leaving out the issuer is a choice the caller made; the SDK warns about it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            if self.private_key is not None:
                signer = SignedJWTParameters(
                    issuer=self.client_id,
                    subject=self.client_id,
                    signing_key=self.private_key,
                    signing_algorithm=self.signing_algorithm,
                )
                inner: httpx2.Auth = PrivateKeyJWTOAuthProvider(
                    server_url,
                    self.store,
                    self.client_id,
                    signer.create_assertion_provider(),
                    scope=self.scope,
                    issuer=self.issuer,
                )
            else:
                assert self.client_secret is not None
                inner = ClientCredentialsOAuthProvider(
                    server_url,
                    self.store,
                    self.client_id,
                    self.client_secret,
                    token_endpoint_auth_method=self.token_endpoint_auth_method,
                    scope=self.scope,
                    issuer=self.issuer,
                )
        return GuardedAuth(inner, server_url, self.policy)


_TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
_ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
_ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


class CrossAppAccess:
    """Enterprise-managed authorization (SEP-990, cross-app access): a person's sign-in at the
    enterprise identity provider (IdP) becomes access to the MCP server, with no browser.

    Two exchanges: the person's ID token goes to the IdP's token endpoint (RFC 8693 token
    exchange) for an identity assertion authorization grant (ID-JAG) naming the MCP server's
    authorization server and the MCP server; that grant goes, with this client's credentials, to
    the authorization server (RFC 7523 JWT bearer grant) for an access token. Each time a token
    is needed a fresh grant is asked for.

    Args:
        client_id: The client's ID at the MCP server's authorization server.
        client_secret: Its secret there.
        issuer: The MCP server's authorization server. Configuration, not discovery: the MCP
            server is never asked which one to use, so it cannot divert the grant or the secret.
        idp_token_endpoint: The identity provider's token endpoint.
        id_token: The person's ID token from the identity provider, or an async callable that
            returns a current one.
        idp_client_id: This client's ID at the identity provider, sent with the exchange.
        idp_client_secret: Its secret there, when the identity provider wants one.
        scope: Scopes to ask the authorization server for, space-separated.
        token_endpoint_auth_method: How the client authenticates to the authorization server:
            `client_secret_basic` (the default) or `client_secret_post`.
        store: Where tokens are kept (memory by default).
        policy: Where sign-in requests may go and how much of each answer is read (the
            identity provider's token endpoint, named here, is reached whatever its address).
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        issuer: str,
        idp_token_endpoint: str,
        id_token: str | Callable[[], Awaitable[str]],
        idp_client_id: str | None = None,
        idp_client_secret: str | None = None,
        scope: str | None = None,
        token_endpoint_auth_method: Literal[
            "client_secret_basic", "client_secret_post"
        ] = "client_secret_basic",
        store: TokenStore | None = None,
        policy: SignInPolicy | None = None,
    ) -> None:
        if not issuer:
            raise ValueError("issuer names the MCP server's authorization server; it is required")
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.idp_token_endpoint = idp_token_endpoint
        self.id_token = id_token
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret
        self.scope = scope
        self.token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = (
            token_endpoint_auth_method
        )
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.policy = policy or SignInPolicy()

    def __repr__(self) -> str:
        return f"CrossAppAccess({self.client_id!r}, issuer={self.issuer!r})"

    def provider(self, server_url: str) -> httpx2.Auth:
        """The `httpx2.Auth` that authorizes requests to `server_url`."""
        inner = IdentityAssertionOAuthProvider(
            server_url,
            self.store,
            self.client_id,
            self.client_secret,
            self.issuer,
            self.exchange,
            scope=self.scope,
            token_endpoint_auth_method=self.token_endpoint_auth_method,
        )
        return GuardedAuth(inner, server_url, self.policy)

    async def exchange(self, audience: str, resource: str) -> str:
        """The ID-JAG for the authorization server `audience` and the MCP server `resource`.

        Raises:
            McpAuthError: the identity provider could not be reached, refused the exchange, or
                answered with something other than an ID-JAG.
        """
        subject = self.id_token if isinstance(self.id_token, str) else await self.id_token()
        form = {
            "grant_type": _TOKEN_EXCHANGE,
            "requested_token_type": _ID_JAG,
            "audience": audience,
            "resource": resource,
            "subject_token": subject,
            "subject_token_type": _ID_TOKEN,
        }
        if self.scope:
            form["scope"] = self.scope
        if self.idp_client_id is not None:
            form["client_id"] = self.idp_client_id
        if self.idp_client_secret is not None:
            form["client_secret"] = self.idp_client_secret
        where = f"the identity provider at {self.idp_token_endpoint}"
        status, body = await post_to_named(self.idp_token_endpoint, form, self.policy, where)
        try:
            found: Any = json.loads(body)
        except (ValueError, RecursionError):
            found = None
        answer = typing.cast(dict[str, Any], found) if isinstance(found, dict) else {}
        if status != 200:
            reason = (
                answer.get("error_description")
                or answer.get("error")
                or body[:200].decode(errors="replace")
            )
            raise McpAuthError(
                f"{where} refused the token exchange ({status}): {str(reason)[:500]}"
            )
        grant = answer.get("access_token")
        if not isinstance(grant, str) or answer.get("issued_token_type") != _ID_JAG:
            raise McpAuthError(f"{where} did not answer the token exchange with an ID-JAG")
        return grant


def _https_with_path(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and parts.path not in ("", "/")
