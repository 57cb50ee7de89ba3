"""How a toolwire MCP server accepts OAuth access tokens: the configuration values.

They sit below both the verifiers (`_token_check`) and the ASGI layers (`resource_auth`), which
read them; `resource_auth` re-exports them as the public names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from .._record import record
from ..tools import AuthInfo
from ._base import is_loopback

__all__ = [
    "DEFAULT_ALGORITHMS",
    "ProtectedResource",
    "TokenIntrospection",
    "TokenVerifier",
    "check_url",
]

DEFAULT_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The asymmetric JWS algorithms accepted; `none` and HMAC never are (an HMAC key would be the
authorization server's public key, which anyone can fetch)."""

_WELL_KNOWN = "/.well-known/oauth-protected-resource"
# RFC 6749 appendix A.4: a scope token, which also keeps a challenge's quoted string intact.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")


def check_url(what: str, url: str) -> None:
    """Refuse anything but an absolute http(s) URL, and plain http off this machine."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} must be an absolute http(s) URL, got {url!r}")
    # OAuth 2.1 wants TLS; plain HTTP is allowed only on this machine (development, tests).
    if parts.scheme == "http" and not is_loopback(parts.hostname):
        raise ValueError(f"{what} must use https (plain http only on loopback), got {url!r}")


class TokenVerifier(Protocol):
    """Checks a bearer token; the seam for token formats toolwire does not validate itself."""

    async def verify(self, token: str) -> AuthInfo:
        """The validated token, or `InvalidTokenError` saying why it is refused."""
        ...


@record(frozen=True)
class TokenIntrospection:
    """Validate tokens by RFC 7662 introspection instead of as JWTs.

    Attributes:
        client_id: This resource server's client at the authorization server.
        client_secret: Its secret (never logged or shown in `repr`).
        endpoint: The introspection endpoint; by default the one the authorization server's
            metadata names.
        auth_method: How the client authenticates to the endpoint.
        cache_seconds: How long an active answer is reused (never past the token's `exp`); a
            revoked token keeps working that long.
    """

    client_id: str
    client_secret: str = field(repr=False)
    endpoint: str | None = None
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    cache_seconds: float = 30.0


@record(frozen=True)
class ProtectedResource:
    """How a toolwire MCP server accepts OAuth access tokens (`create_app(..., oauth=...)`).

    Attributes:
        resource: This server's MCP URL as clients reach it (its RFC 8707 resource identifier);
            tokens must name it in `aud`.
        authorization_server: The issuer of the tokens accepted, spelled exactly as in their
            `iss` and its metadata (a trailing slash counts), which names the JWKS and the
            introspection endpoint.
        scopes: Scopes every request needs.
        tool_scopes: Scopes needed, beyond `scopes`, to call a given tool; a call without them
            is answered 403 `insufficient_scope` (the tool stays listed, so that clients can
            step up).
        audience: The `aud` values accepted, when the authorization server does not use the
            resource URL (for example an API identifier); default `resource`.
        introspection: Validate tokens by introspection instead of as JWTs.
        verifier: A token verifier of one's own (exclusive with `introspection`).
        jwks_uri: The authorization server's JWKS, when its metadata cannot be fetched.
        algorithms: JWS algorithms accepted, a subset of `DEFAULT_ALGORITHMS`.
        leeway: Seconds of clock skew allowed on `exp`, `nbf` and `iat`.
        jwks_refresh_interval: Fewest seconds between two JWKS fetches caused by an unknown
            key id, so that tokens with made-up key ids cannot flood the authorization server.
        scopes_supported: Scopes published in the metadata; default `scopes` and every tool's.
        resource_name: A name for people, published in the metadata.
        resource_documentation: A documentation URL, published in the metadata.
    """

    resource: str
    authorization_server: str
    scopes: Sequence[str] = ()
    tool_scopes: Mapping[str, Sequence[str]] = field(default_factory=dict[str, Sequence[str]])
    audience: str | Sequence[str] | None = None
    introspection: TokenIntrospection | None = None
    verifier: TokenVerifier | None = None
    jwks_uri: str | None = None
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS
    leeway: float = 30.0
    jwks_refresh_interval: float = 60.0
    scopes_supported: Sequence[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None

    def __post_init__(self) -> None:
        check_url("resource", self.resource)
        check_url("authorization_server", self.authorization_server)
        if urlsplit(self.resource).fragment or "#" in self.resource:
            raise ValueError("resource must not have a fragment (RFC 8707)")
        if self.jwks_uri is not None:
            check_url("jwks_uri", self.jwks_uri)
        if self.introspection is not None and self.introspection.endpoint is not None:
            check_url("introspection endpoint", self.introspection.endpoint)
        if isinstance(self.scopes, str):
            raise ValueError("scopes must be a list of scopes, not a string")
        for scope in [*self.scopes, *(s for v in self.tool_scopes.values() for s in v)]:
            if not _SCOPE_TOKEN.fullmatch(scope):
                raise ValueError(f"{scope!r} is not a valid OAuth scope")
        for tool, needed in self.tool_scopes.items():
            if isinstance(needed, str):
                raise ValueError(f"tool_scopes[{tool!r}] must be a list of scopes, not a string")
        bad = [a for a in self.algorithms if a not in DEFAULT_ALGORITHMS]
        if bad or not self.algorithms:
            raise ValueError(
                f"algorithms must be a non-empty subset of {', '.join(DEFAULT_ALGORITHMS)}"
                + (f"; refused: {', '.join(bad)}" if bad else "")
            )
        if self.introspection is not None and self.verifier is not None:
            raise ValueError("give introspection or verifier, not both")
        if self.leeway < 0 or self.jwks_refresh_interval < 0:
            raise ValueError("leeway and jwks_refresh_interval must not be negative")

    @property
    def audiences(self) -> tuple[str, ...]:
        """The `aud` values a token may carry."""
        if self.audience is None:
            return (self.resource,)
        return (self.audience,) if isinstance(self.audience, str) else tuple(self.audience)

    @property
    def metadata_url(self) -> str:
        """Where this resource's RFC 9728 metadata is (the challenge's `resource_metadata`)."""
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{_WELL_KNOWN}{parts.path.rstrip('/')}"

    def metadata(self) -> dict[str, Any]:
        """The RFC 9728 metadata document."""
        supported = self.scopes_supported
        if supported is None:
            supported = list(
                dict.fromkeys([*self.scopes, *(s for v in self.tool_scopes.values() for s in v)])
            )
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": [self.authorization_server],
            "bearer_methods_supported": ["header"],
        }
        if supported:
            document["scopes_supported"] = list(supported)
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            document["resource_documentation"] = self.resource_documentation
        return document
