"""Access-token checks for `resource_auth`: the authorization server's metadata and keys, JWTs
(RFC 9068 profile, PyJWT) and RFC 7662 introspection."""

from __future__ import annotations

import base64
import hashlib
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote_plus, urlsplit

import anyio
import httpx
import jwt

from ..errors import InvalidTokenError
from ..tools import AuthInfo
from ._oauth_config import DEFAULT_ALGORITHMS, ProtectedResource, TokenIntrospection, check_url

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


async def _get_json(url: str) -> dict[str, Any]:
    try:
        async with httpx.AsyncClient(timeout=_HTTP_TIMEOUT, follow_redirects=False) as client:
            response = await client.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise AuthServerUnavailable(f"{url}: {exc!r}") from None
    return _json_object(url, response)


def _json_object(url: str, response: httpx.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise AuthServerUnavailable(f"{url} answered HTTP {response.status_code}")
    try:
        document = response.json()
    except ValueError:
        raise AuthServerUnavailable(f"{url} answered something other than JSON") from None
    if not isinstance(document, dict):
        raise AuthServerUnavailable(f"{url} answered JSON that is not an object")
    return cast(dict[str, Any], document)


def _error_code(response: httpx.Response) -> str | None:
    try:
        document: Any = response.json()
    except ValueError:
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


def _auth_info(claims: Mapping[str, Any]) -> AuthInfo:
    def text(name: str) -> str | None:
        value = claims.get(name)
        return value if isinstance(value, str) else None

    exp = claims.get("exp")
    return AuthInfo(
        subject=text("sub"),
        client_id=text("client_id") or text("azp"),
        scopes=_scopes_of(claims),
        issuer=text("iss"),
        expires_at=int(exp) if isinstance(exp, int | float) else None,
        claims=dict(claims),
    )


def _audience_matches(given: Any, accepted: Sequence[str]) -> bool:
    values: list[Any] = (
        [given]
        if isinstance(given, str)
        else cast(list[Any], given)
        if isinstance(given, list)
        else []
    )
    wanted = {a.rstrip("/") for a in accepted}
    return any(isinstance(v, str) and v.rstrip("/") in wanted for v in values)


class JwtVerifier:
    def __init__(self, config: ProtectedResource) -> None:
        self.config = config
        self.keys = _KeySet(
            _AuthServer(config.authorization_server),
            config.jwks_uri,
            config.jwks_refresh_interval,
        )

    async def verify(self, token: str) -> AuthInfo:
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
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=[str(alg)],
                audience=list(self.config.audiences),
                issuer=self.config.authorization_server,
                leeway=self.config.leeway,
                options={"require": ["exp", "iss", "aud"], "verify_iat": True},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidTokenError("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidTokenError("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise InvalidTokenError("the token was not issued for this resource") from None
        except jwt.InvalidIssuerError:
            raise InvalidTokenError("the token comes from another issuer") from None
        except jwt.InvalidSignatureError:
            raise InvalidTokenError("the token's signature does not verify") from None
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidTokenError(f"the token has no {exc.claim!r} claim") from None
        except jwt.PyJWTError as exc:
            raise InvalidTokenError(f"the token is invalid: {exc}") from None
        if "cnf" in claims:
            # A sender-constrained token (DPoP, mTLS) presented as a plain bearer token: the
            # binding cannot be checked here, so accepting it would undo what it protects.
            raise InvalidTokenError("the token is bound to a key (cnf); toolwire takes bearer only")
        return _auth_info(claims)


class IntrospectionVerifier:
    """RFC 7662 introspection, with a short cache of active answers keyed by the token's hash."""

    _MAX_CACHED = 10_000

    def __init__(self, config: ProtectedResource, introspection: TokenIntrospection) -> None:
        self.config = config
        self.introspection = introspection
        self.server = _AuthServer(config.authorization_server)
        self.cache: OrderedDict[bytes, tuple[float, AuthInfo]] = OrderedDict()
        self.requests = 0

    async def verify(self, token: str) -> AuthInfo:
        digest = hashlib.sha256(token.encode()).digest()
        now = time.time()
        cached = self.cache.get(digest)
        if cached is not None:
            until, info = cached
            if now < until:
                return info
            del self.cache[digest]
        answer = await self._ask(token)
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
        try:
            async with httpx.AsyncClient(timeout=_HTTP_TIMEOUT, follow_redirects=False) as client:
                response = await client.post(endpoint, data=form, headers=headers)
        except httpx.HTTPError as exc:
            raise AuthServerUnavailable(f"{endpoint}: {exc!r}") from None
        if response.status_code == 400 and _error_code(response) == "unsupported_token_type":
            # The token's fault (some servers refuse to introspect JWTs): the client's to fix.
            raise InvalidTokenError("the authorization server cannot introspect this token")
        # Anything else (our own credentials refused, a server error) says nothing about the
        # client's token, so it must not send the client off to authorize again.
        return _json_object(endpoint, response)

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
        exp = answer.get("exp")
        if isinstance(exp, int | float) and exp + config.leeway < now:
            raise InvalidTokenError("the token has expired")
        nbf = answer.get("nbf")
        if isinstance(nbf, int | float) and nbf - config.leeway > now:
            raise InvalidTokenError("the token is not valid yet")
        return _auth_info(answer)
