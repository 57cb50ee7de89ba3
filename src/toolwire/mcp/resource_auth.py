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
from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import parse_qsl, urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import InvalidTokenError
from ..tools import AuthInfo
from ._base import AUTH_SCOPE_KEY, scrub_query_token
from ._oauth_config import (
    DEFAULT_ALGORITHMS,
    ProtectedResource,
    TokenIntrospection,
    TokenVerifier,
)
from ._token_check import AuthServerUnavailable, IntrospectionVerifier, JwtVerifier

logger = logging.getLogger("toolwire.mcp")

__all__ = [
    "DEFAULT_ALGORITHMS",
    "OAuthGuard",
    "ProtectedResource",
    "TokenIntrospection",
    "TokenVerifier",
    "ToolScopeCheck",
    "build_verifier",
]

_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_MAX_TOKEN_CHARS = 16_384
# RFC 6750 section 2.1: b64token.
_B64TOKEN = re.compile(rb"[A-Za-z0-9\-._~+/]+=*")
# RFC 6749 appendix A.4: a scope token, which also keeps a challenge's quoted string intact.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")


def build_verifier(config: ProtectedResource) -> TokenVerifier:
    """The verifier `config` asks for: its own, introspection, or JWTs against the JWKS."""
    if config.verifier is not None:
        return config.verifier
    if config.introspection is not None:
        return IntrospectionVerifier(config, config.introspection)
    return JwtVerifier(config)


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
        self.verifier = build_verifier(config)
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
            # Never read it: a URL ends up in logs and histories (MCP forbids the method). The
            # ASGI server's access log reads the query from this very scope once the answer
            # starts, so the token is cut out of it first (uvicorn's log shows `[redacted]`).
            scope["query_string"] = scrub_query_token(query)
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


class _TooDeep(Exception):
    """A body nested beyond what Python's JSON parser can hold."""


async def _parse_error(send: Send, message: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})


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
        try:
            needed = self._needed(body, info.scopes)
        except _TooDeep:
            await _parse_error(send, "the request body nests too deeply")
            return
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
        except RecursionError:
            raise _TooDeep from None
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
