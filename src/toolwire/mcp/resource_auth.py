"""toolwire's MCP server as an OAuth 2.1 protected resource (MCP authorization, 2025-11-25).

`create_app(tools, oauth=ProtectedResource(...))` puts `OAuthGuard` in front of the MCP endpoint:

- RFC 9728 protected-resource metadata at `/.well-known/oauth-protected-resource` followed by
  the endpoint's path, and at the bare well-known path, for clients that try that one.
- Bearer tokens from the `Authorization` header only (RFC 6750 section 2.1); one in the query
  string is refused with 400, never read.
- Each token validated as a JWT (RFC 9068 profile) against the authorization server's JWKS, or
  by RFC 7662 introspection, or by a caller's own `TokenVerifier`.
- The challenges the MCP specification describes: 401 with
  `WWW-Authenticate: Bearer resource_metadata="...", scope="..."` (plus `error="invalid_token"`
  when a token was given), 403 `insufficient_scope` naming the scopes needed, per tool too.

The JWS and JWK work is PyJWT's (a dependency of the `mcp` SDK already). What is toolwire's own,
and why: the SDK's `RequireAuthMiddleware` answers every refusal alike, with no `scope` in its
challenge and an error code even when no token was sent (RFC 6750 section 3.1 wants none then),
and its verifier protocol returns `None` for a refused token, which loses the reason the client
should read. The SDK's `AuthenticatedUser` is still put in the ASGI scope, so its session manager
binds each session to the principal that created it and refuses the session to anyone else.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast
from urllib.parse import parse_qsl, urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import InvalidTokenError
from ..tools import AuthInfo
from ._token_check import (
    DEFAULT_ALGORITHMS,
    AuthServerUnavailable,
    IntrospectionVerifier,
    JwtVerifier,
    check_url,
)
from .server import AUTH_SCOPE_KEY

logger = logging.getLogger("toolwire.mcp")

__all__ = [
    "DEFAULT_ALGORITHMS",
    "OAuthGuard",
    "ProtectedResource",
    "TokenIntrospection",
    "TokenVerifier",
    "ToolScopeCheck",
]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_MAX_TOKEN_CHARS = 16_384
# RFC 6750 section 2.1: b64token.
_B64TOKEN = re.compile(rb"[A-Za-z0-9\-._~+/]+=*")
# RFC 6749 appendix A.4: a scope token, which also keeps a challenge's quoted string intact.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")


class TokenVerifier(Protocol):
    """Checks a bearer token; the seam for token formats toolwire does not validate itself."""

    async def verify(self, token: str) -> AuthInfo:
        """The validated token, or `InvalidTokenError` saying why it is refused."""
        ...


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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

    def build_verifier(self) -> TokenVerifier:
        """The verifier this configuration asks for."""
        if self.verifier is not None:
            return self.verifier
        if self.introspection is not None:
            return IntrospectionVerifier(self, self.introspection)
        return JwtVerifier(self)


# --- the ASGI layers ----------------------------------------------------------------------------


def _quoted(value: str) -> str:
    # A challenge parameter is a quoted string: no quotes, backslashes or control characters.
    return "".join(c for c in value if c.isprintable() and c not in '"\\')


class _Answers:
    """The JSON bodies and `WWW-Authenticate` challenges the guard and the scope check send."""

    def __init__(self, config: ProtectedResource) -> None:
        self.metadata_url = config.metadata_url
        self.scopes = list(config.scopes)

    def challenge(
        self, error: str | None = None, description: str | None = None, scopes: Sequence[str] = ()
    ) -> str:
        parts: list[str] = []
        if error is not None:
            parts.append(f'error="{error}"')
            if description:
                parts.append(f'error_description="{_quoted(description)}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        if scopes:
            parts.append(f'scope="{" ".join(scopes)}"')
        return "Bearer " + ", ".join(parts)

    async def send(
        self,
        send: Send,
        status: int,
        error: str | None,
        description: str,
        scopes: Sequence[str] = (),
    ) -> None:
        fields = {"error": error} if error else {}
        body = json.dumps({**fields, "error_description": description}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        if status in (401, 403) or error == "invalid_request":
            challenge = self.challenge(error, description, scopes)
            headers.append((b"www-authenticate", challenge.encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class OAuthGuard:
    """Serve the resource metadata; let through only requests with a valid bearer token."""

    def __init__(self, app: ASGIApp, config: ProtectedResource) -> None:
        self.app = app
        self.config = config
        self.verifier = config.build_verifier()
        self.answers = _Answers(config)
        self.required = frozenset(config.scopes)
        path = urlsplit(config.resource).path.rstrip("/")
        self.metadata_paths = {f"{_WELL_KNOWN}{path}", _WELL_KNOWN}
        self.metadata_body = json.dumps(config.metadata()).encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] in self.metadata_paths:
            await self._metadata(scope, send)
            return
        answers = self.answers
        query = scope.get("query_string", b"")
        if query and any(k == "access_token" for k, _ in parse_qsl(query.decode("latin-1"))):
            # Never read it: a URL ends up in logs and histories (MCP forbids the method).
            await answers.send(
                send,
                400,
                "invalid_request",
                "access tokens are accepted in the Authorization header only",
            )
            return
        given = [v for k, v in scope["headers"] if k == b"authorization"]
        if len(given) > 1:
            await answers.send(send, 400, "invalid_request", "several Authorization headers")
            return
        scheme, _, credentials = given[0].partition(b" ") if given else (b"", b"", b"")
        token = credentials.strip(b" ")
        if scheme.lower() != b"bearer" or not token:
            await answers.send(
                send, 401, None, "a bearer access token is required", self.config.scopes
            )
            return
        if len(token) > _MAX_TOKEN_CHARS or not _B64TOKEN.fullmatch(token):
            await answers.send(send, 400, "invalid_request", "the bearer token is malformed")
            return
        try:
            info = await self.verifier.verify(token.decode("ascii"))
        except InvalidTokenError as exc:
            await answers.send(send, 401, "invalid_token", exc.description, self.config.scopes)
            return
        except AuthServerUnavailable as exc:
            # The operator's problem, not the client's: say it where the operator looks.
            logger.warning("cannot check an access token: %s", exc)
            await _unavailable(send)
            return
        if not self.required <= info.scopes:
            await answers.send(
                send,
                403,
                "insufficient_scope",
                f"this server needs the scopes {' '.join(self.config.scopes)}",
                self.config.scopes,
            )
            return
        scope[AUTH_SCOPE_KEY] = info
        # The SDK's shape, so its session manager ties each session to this principal.
        scope["user"] = AuthenticatedUser(
            AccessToken(
                token=token.decode("ascii"),
                client_id=info.client_id or "",
                scopes=sorted(info.scopes),
                expires_at=info.expires_at,
                resource=self.config.resource,
                subject=info.subject,
                claims={"iss": info.issuer} if info.issuer else None,
            )
        )
        scope["auth"] = AuthCredentials(sorted(info.scopes))
        await self.app(scope, receive, send)

    async def _metadata(self, scope: Scope, send: Send) -> None:
        method = scope["method"]
        cors = [
            (b"access-control-allow-origin", b"*"),
            (b"access-control-allow-methods", b"GET, OPTIONS"),
        ]
        if method == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": cors})
            await send({"type": "http.response.body", "body": b""})
            return
        if method not in ("GET", "HEAD"):
            headers = [(b"allow", b"GET, HEAD, OPTIONS"), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 405, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        body = self.metadata_body
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"public, max-age=3600"),
            *cors,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})


async def _unavailable(send: Send) -> None:
    body = json.dumps(
        {
            "error": "temporarily_unavailable",
            "error_description": "the authorization server cannot be reached to check the token",
        }
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"5"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ToolScopeCheck:
    """Answer 403 `insufficient_scope` to a `tools/call` of a tool whose scopes the token lacks.

    Sits behind the body cap, which hands the whole body on as one message. The step-up
    challenge names the server's scopes and the tool's, so a client that replaces its token
    with one for exactly those scopes keeps access to the rest.
    """

    def __init__(self, app: ASGIApp, config: ProtectedResource) -> None:
        self.app = app
        self.answers = _Answers(config)
        self.base = list(config.scopes)
        self.tool_scopes = {name: list(scopes) for name, scopes in config.tool_scopes.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        info = scope.get(AUTH_SCOPE_KEY)
        if scope["type"] != "http" or scope["method"] != "POST" or not isinstance(info, AuthInfo):
            await self.app(scope, receive, send)
            return
        first = await receive()
        body: bytes = first.get("body", b"")
        needed = self._needed(body, info.scopes)
        if needed:
            names = " ".join(needed)
            await self.answers.send(
                send, 403, "insufficient_scope", f"this tool needs the scopes {names}", needed
            )
            return
        replayed = [first]

        async def replay() -> Any:
            return replayed.pop() if replayed else await receive()

        await self.app(scope, replay, send)

    def _needed(self, body: bytes, granted: frozenset[str]) -> list[str]:
        """The scopes to ask for, or nothing when every call in the body is allowed."""
        try:
            message: Any = json.loads(body)
        except ValueError:
            return []  # the MCP layer answers a parse error
        messages = cast(list[Any], message) if isinstance(message, list) else [message]
        for item in messages:
            if not isinstance(item, dict):
                continue
            request = cast(dict[str, Any], item)
            params = request.get("params")
            if request.get("method") != "tools/call" or not isinstance(params, dict):
                continue
            name = cast(dict[str, Any], params).get("name")
            wanted = self.tool_scopes.get(name) if isinstance(name, str) else None
            if wanted and not granted.issuperset(wanted):
                return list(dict.fromkeys([*self.base, *wanted]))
        return []
