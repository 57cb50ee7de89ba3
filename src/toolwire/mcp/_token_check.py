"""Access-token checks for `resource_auth`: the authorization server's metadata and keys, JWTs
(RFC 9068 profile, PyJWT) and RFC 7662 introspection."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote_plus, urlsplit

import anyio
import httpx

from ..errors import InvalidTokenError
from ..tools import AuthInfo
from ._oauth_config import DEFAULT_ALGORITHMS, ProtectedResource, TokenIntrospection, check_url

if TYPE_CHECKING:
    import jwt

__all__ = [
    "AuthServerUnavailable",
    "IntrospectionVerifier",
    "JwtVerifier",
]

# RFC 9068 wants `at+jwt`; many servers still send `JWT`. Other types (an ID token's
# `logout+jwt`, a DPoP proof's `dpop+jwt`) are different tokens and must never pass as access.
_ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt", "jwt"})
_HTTP_TIMEOUT = 10.0


class AuthServerUnavailable(Exception):
    """The authorization server could not be asked (answered 503: the token may be fine)."""


# --- the authorization server's metadata and keys ---------------------------------------------


_RETRY_AFTER_FAILURE = 5.0
"""Seconds during which a failed fetch from the authorization server is not tried again, so a
server that is down is not hammered (nor each request held up by its timeouts)."""


def _back_off(failed: tuple[float, str] | None) -> None:
    if failed is not None and time.monotonic() - failed[0] < _RETRY_AFTER_FAILURE:
        raise AuthServerUnavailable(f"{failed[1]} (failed moments ago; not asked again yet)")


class _AuthServer:
    """The authorization server's metadata, fetched once on first use (RFC 8414 / OIDC)."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self._metadata: dict[str, Any] | None = None
        self._failed: tuple[float, str] | None = None
        self._lock = anyio.Lock()

    async def metadata(self) -> dict[str, Any]:
        async with self._lock:
            if self._metadata is None:
                _back_off(self._failed)
                try:
                    self._metadata = await self._discover()
                except AuthServerUnavailable as exc:
                    self._failed = (time.monotonic(), str(exc))
                    raise
            return self._metadata

    async def _discover(self) -> dict[str, Any]:
        parts = urlsplit(self.issuer)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        # RFC 8414 inserts the well-known segment before the issuer's path; OpenID Connect
        # Discovery appends it. The first document found must name this very issuer.
        candidates = [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
        problems: list[str] = []
        for url in dict.fromkeys(candidates):
            try:
                document = await _get_json(url)
            except AuthServerUnavailable as exc:
                problems.append(str(exc))
                continue
            if document.get("issuer") != self.issuer:
                raise AuthServerUnavailable(
                    f"{url} names the issuer {document.get('issuer')!r}, not {self.issuer!r}"
                )
            return document
        raise AuthServerUnavailable(
            "no authorization server metadata for "
            f"{self.issuer}: {'; '.join(problems) or 'nothing found'}"
        )

    async def endpoint(self, name: str) -> str:
        metadata = await self.metadata()
        url = metadata.get(name)
        if not isinstance(url, str):
            raise AuthServerUnavailable(f"the metadata of {self.issuer} names no {name}")
        try:
            check_url(name, url)
        except ValueError as exc:
            raise AuthServerUnavailable(str(exc)) from None
        return url


MAX_ANSWER_BYTES = 1_000_000
"""The most of an authorization server's answer (metadata, JWKS, introspection) read; a larger
one is refused as unavailable rather than held in memory."""


async def _fetch(method: str, url: str, **options: Any) -> tuple[int, bytes]:
    """One exchange with the authorization server: its status and body, capped and timed."""
    try:
        with anyio.fail_after(_HTTP_TIMEOUT):
            async with (
                httpx.AsyncClient(timeout=_HTTP_TIMEOUT, follow_redirects=False) as client,
                client.stream(method, url, **options) as response,
            ):
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise AuthServerUnavailable(
                            f"{url} answered more than {MAX_ANSWER_BYTES} bytes"
                        )
                return response.status_code, bytes(body)
    except TimeoutError:
        raise AuthServerUnavailable(
            f"{url} did not answer within {_HTTP_TIMEOUT:g} seconds"
        ) from None
    except httpx.HTTPError as exc:
        raise AuthServerUnavailable(f"{url}: {exc!r}") from None


async def _get_json(url: str) -> dict[str, Any]:
    status, body = await _fetch("GET", url, headers={"accept": "application/json"})
    return _json_object(url, status, body)


def _json_object(url: str, status: int, body: bytes) -> dict[str, Any]:
    if status != 200:
        raise AuthServerUnavailable(f"{url} answered HTTP {status}")
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise AuthServerUnavailable(f"{url} answered something other than JSON") from None
    if not isinstance(document, dict):
        raise AuthServerUnavailable(f"{url} answered JSON that is not an object")
    return cast(dict[str, Any], document)


def _error_code(body: bytes) -> str | None:
    try:
        document: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return cast(Any, document).get("error") if isinstance(document, dict) else None


class _KeySet:
    """The authorization server's signing keys by key id, refreshed when a new id shows up.

    A token naming an unknown key id triggers a fetch (the server may have rotated its keys),
    but at most one per `refresh_interval`, and concurrent requests share that one fetch.
    """

    def __init__(self, server: _AuthServer, jwks_uri: str | None, refresh_interval: float):
        self.server = server
        self.jwks_uri = jwks_uri
        self.refresh_interval = refresh_interval
        self.keys: dict[str | None, jwt.PyJWK] = {}
        self.fetched_at: float | None = None
        self.failed: tuple[float, str] | None = None
        self.fetches = 0
        self._lock = anyio.Lock()

    async def key(self, kid: str | None, alg: str) -> jwt.PyJWK:
        found = self.keys.get(kid)
        if found is None:
            async with self._lock:
                found = self.keys.get(kid)
                fresh = self.fetched_at is not None and (
                    time.monotonic() - self.fetched_at < self.refresh_interval
                )
                if found is None and not fresh:
                    _back_off(self.failed)
                    try:
                        await self._fetch()
                    except AuthServerUnavailable as exc:
                        self.failed = (time.monotonic(), str(exc))
                        raise
                    found = self.keys.get(kid)
        if found is None:
            raise InvalidTokenError(
                "the token is signed with a key the authorization server does not publish"
            )
        if found.algorithm_name != alg:
            raise InvalidTokenError(f"the token's algorithm {alg} does not match its key")
        return found

    async def _fetch(self) -> None:
        import jwt  # the mcp extra's PyJWT, loaded once a token is checked: `serve` starts without it

        uri = self.jwks_uri or await self.server.endpoint("jwks_uri")
        self.fetches += 1
        document = await _get_json(uri)
        keys: dict[str | None, jwt.PyJWK] = {}
        raw_keys = document.get("keys")
        for raw in cast(list[Any], raw_keys) if isinstance(raw_keys, list) else []:
            if not isinstance(raw, dict):
                continue
            entry = cast(dict[str, Any], raw)
            if entry.get("use", "sig") != "sig" or entry.get("alg") not in (
                None,
                *DEFAULT_ALGORITHMS,
            ):
                continue  # encryption keys and symmetric ones never verify a token
            if entry.get("kty") not in ("RSA", "EC", "OKP"):
                continue
            try:
                key = jwt.PyJWK(entry)
            except (jwt.PyJWTError, ValueError, TypeError, KeyError):
                continue  # a key PyJWT cannot use (an unknown curve, bad base64) is skipped
            keys[entry.get("kid") if isinstance(entry.get("kid"), str) else None] = key
        self.keys = keys
        self.fetched_at = time.monotonic()


# --- verifiers ------------------------------------------------------------------------------------


def _scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    # `scope` is RFC 9068's (a space-separated string); `scp` is what several vendors send.
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in cast(list[Any], value) if isinstance(s, str))
    return frozenset()


_TIME_CLAIMS = ("exp", "nbf", "iat")


def _check_times(claims: Mapping[str, Any], leeway: float, now: float) -> None:
    """The one rule for time claims, JWT and introspection alike.

    RFC 7519 makes them NumericDates: a JSON number. A string, a boolean, `NaN` or a number too
    large for a float (`1e400` parses as infinity) is a malformed token, refused like one, rather
    than coerced (a numeric string) or left to crash the check.
    """
    for name in _TIME_CLAIMS:
        value = claims.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidTokenError(f"the token's {name!r} claim is not a number")
        if not math.isfinite(value) or abs(value) > _LATEST_TIME:
            raise InvalidTokenError(f"the token's {name!r} claim is not a usable time")
    exp = claims.get("exp")
    if exp is not None and exp + leeway < now:
        raise InvalidTokenError("the token has expired")
    nbf = claims.get("nbf")
    if nbf is not None and nbf - leeway > now:
        raise InvalidTokenError("the token is not valid yet")
    iat = claims.get("iat")
    if iat is not None and iat - leeway > now:
        raise InvalidTokenError("the token is not valid yet (issued in the future)")


_LATEST_TIME = 253_402_300_799
"""9999-12-31T23:59:59Z: a time claim beyond it cannot be a real date (and would overflow)."""


def _auth_info(claims: Mapping[str, Any]) -> AuthInfo:
    def text(name: str) -> str | None:
        value = claims.get(name)
        return value if isinstance(value, str) else None

    exp = claims.get("exp")  # checked by _check_times: a finite number or absent
    return AuthInfo(
        subject=text("sub"),
        client_id=text("client_id") or text("azp"),
        scopes=_scopes_of(claims),
        issuer=text("iss"),
        expires_at=int(exp) if isinstance(exp, int | float) else None,
        claims=dict(claims),
    )


def _audience_matches(given: Any, accepted: Sequence[str]) -> bool:
    """The one audience rule: `aud` (a string or a list) holds one accepted value exactly.

    RFC 8707 resource identifiers are compared as strings, as PyJWT compares them; a trailing
    slash makes another resource.
    """
    values: list[Any] = (
        [given]
        if isinstance(given, str)
        else cast(list[Any], given)
        if isinstance(given, list)
        else []
    )
    return any(isinstance(v, str) and v in accepted for v in values)


class JwtVerifier:
    """Checks JWT access tokens (RFC 9068) against the authorization server's published keys."""

    def __init__(self, config: ProtectedResource) -> None:
        self.config = config
        self.keys = _KeySet(
            _AuthServer(config.authorization_server),
            config.jwks_uri,
            config.jwks_refresh_interval,
        )

    async def verify(self, token: str) -> AuthInfo:
        """The token's `AuthInfo`, or `InvalidTokenError` saying why it is refused."""
        import jwt  # the mcp extra's PyJWT, loaded once a token is checked: `serve` starts without it

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidTokenError("the token is not a JWT") from None
        alg = header.get("alg")
        if alg not in self.config.algorithms:
            raise InvalidTokenError(f"the token's algorithm {alg!r} is not accepted")
        typ = header.get("typ")
        if typ is not None and (not isinstance(typ, str) or typ.lower() not in _ACCESS_TOKEN_TYPES):
            raise InvalidTokenError(f"the token's type {typ!r} is not an access token")
        if header.get("crit") is not None:
            raise InvalidTokenError("the token has critical header parameters toolwire ignores")
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None, str(alg))
        try:
            # PyJWT checks the signature and the issuer; the times and the audience follow
            # toolwire's own rules below, shared with introspection.
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[str(alg)],
                issuer=self.config.authorization_server,
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "verify_aud": False,
                },
            )
        except jwt.InvalidIssuerError:
            raise InvalidTokenError("the token comes from another issuer") from None
        except jwt.InvalidSignatureError:
            raise InvalidTokenError("the token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidTokenError(f"the token has no {exc.claim!r} claim") from None
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(f"the token is invalid: {exc}") from None
        except (ValueError, RecursionError):
            raise InvalidTokenError("the token's claims are not a JSON object") from None
        _check_times(claims, self.config.leeway, time.time())
        if not _audience_matches(claims.get("aud"), self.config.audiences):
            raise InvalidTokenError("the token was not issued for this resource")
        if "cnf" in claims:
            # A sender-constrained token (DPoP, mTLS) presented as a plain bearer token: the
            # binding cannot be checked here, so accepting it would undo what it protects.
            raise InvalidTokenError("the token is bound to a key (cnf); toolwire takes bearer only")
        return _auth_info(claims)


class IntrospectionVerifier:
    """RFC 7662 introspection, with a short cache of active answers keyed by the token's hash.

    A failed exchange with the endpoint (unreachable, refused our credentials, answered
    nonsense) is not repeated for `_RETRY_AFTER_FAILURE` seconds, as for metadata and keys, so a
    stream of tokens cannot turn the server into a flood against a struggling endpoint.
    """

    _MAX_CACHED = 10_000

    def __init__(self, config: ProtectedResource, introspection: TokenIntrospection) -> None:
        self.config = config
        self.introspection = introspection
        self.server = _AuthServer(config.authorization_server)
        self.cache: OrderedDict[bytes, tuple[float, AuthInfo]] = OrderedDict()
        self.requests = 0
        self.failed: tuple[float, str] | None = None

    async def verify(self, token: str) -> AuthInfo:
        """The token's `AuthInfo`, or `InvalidTokenError` saying why it is refused."""
        digest = hashlib.sha256(token.encode()).digest()
        now = time.time()
        cached = self.cache.get(digest)
        if cached is not None:
            until, info = cached
            if now < until:
                return info
            del self.cache[digest]
        _back_off(self.failed)
        try:
            answer = await self._ask(token)
        except AuthServerUnavailable as exc:
            self.failed = (time.monotonic(), str(exc))
            raise
        info = self._check(answer, now)
        until = now + self.introspection.cache_seconds
        if info.expires_at is not None:
            until = min(until, info.expires_at)
        if until > now:
            self.cache[digest] = (until, info)
            while len(self.cache) > self._MAX_CACHED:
                self.cache.popitem(last=False)
        return info

    async def _ask(self, token: str) -> dict[str, Any]:
        setup = self.introspection
        endpoint = setup.endpoint or await self.server.endpoint("introspection_endpoint")
        form = {"token": token, "token_type_hint": "access_token"}
        headers = {"accept": "application/json"}
        if setup.auth_method == "client_secret_basic":
            # RFC 6749 section 2.3.1: each part form-encoded before joining.
            pair = f"{quote_plus(setup.client_id)}:{quote_plus(setup.client_secret)}"
            headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        else:
            form |= {"client_id": setup.client_id, "client_secret": setup.client_secret}
        self.requests += 1
        status, body = await _fetch("POST", endpoint, data=form, headers=headers)
        if status == 400 and _error_code(body) == "unsupported_token_type":
            # The token's fault (some servers refuse to introspect JWTs): the client's to fix.
            raise InvalidTokenError("the authorization server cannot introspect this token")
        # Anything else (our own credentials refused, a server error) says nothing about the
        # client's token, so it must not send the client off to authorize again.
        return _json_object(endpoint, status, body)

    def _check(self, answer: Mapping[str, Any], now: float) -> AuthInfo:
        if answer.get("active") is not True:
            raise InvalidTokenError("the token is not active")
        config = self.config
        issuer = answer.get("iss")
        if issuer is not None and issuer != config.authorization_server:
            raise InvalidTokenError("the token comes from another issuer")
        if not _audience_matches(answer.get("aud"), config.audiences):
            raise InvalidTokenError("the token was not issued for this resource")
        token_type = answer.get("token_type")
        if isinstance(token_type, str) and token_type.lower() not in ("bearer", "access_token"):
            raise InvalidTokenError(f"the token's type {token_type!r} is not a bearer token")
        if "cnf" in answer:
            raise InvalidTokenError("the token is bound to a key (cnf); toolwire takes bearer only")
        _check_times(answer, config.leeway, now)
        return _auth_info(answer)
