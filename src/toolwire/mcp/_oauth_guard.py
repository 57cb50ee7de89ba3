"""Sign-in (OAuth) requests under toolwire's egress guard, with caps, deadlines and blame.

The `mcp` SDK's OAuth flow is an `httpx2.Auth` generator: it yields each request it wants sent
(metadata, registration, token) and reads the answer sent back in. Left alone, httpx2 sends those
through the MCP connection wherever the server's metadata points and reads answers whole.
`GuardedAuth` drives the SDK's flow itself: the request being authorized still goes out through
the MCP connection, but every request the flow makes on its own is sent here instead, through
`toolwire.prebuilt._egress` under the sign-in rule (`SignInPolicy`), and its answer is read up to
a cap within a deadline before the SDK sees it. Failures name the party at fault.
"""

from __future__ import annotations

import inspect
import ipaddress
from collections.abc import AsyncGenerator, Collection, Generator, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import httpx
import httpx2
from mcp.client.auth import OAuthFlowError
from pydantic import ValidationError

from ..errors import EgressBlocked, EgressTimeout, McpAuthError, ToolError
from ..prebuilt._egress import (
    EgressPolicy,
    IPAddress,
    Resolver,
    address_block_reason,
    guarded_request,
    system_resolver,
)

__all__ = [
    "DEFAULT_SIGN_IN_BYTES",
    "GuardedAuth",
    "SignInPolicy",
    "check_authorization_url",
    "post_to_named",
]

DEFAULT_SIGN_IN_BYTES = 1_000_000
"""The most of any one sign-in answer read (metadata, registration, token): far above any real
one, far below what would hurt."""

_NEVER = (
    "169.254.0.0/16",  # IPv4 link-local, where cloud metadata services answer (169.254.169.254)
    "fe80::/10",  # IPv6 link-local
    "fd00:ec2::254/128",  # AWS's IPv6 metadata address
    "100.100.100.200/32",  # Alibaba Cloud's metadata address
)
"""Never contacted for sign-in, whatever the caller allows."""

_LOCAL = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "::1/128",
    "fc00::/7",
    "localhost",
)
"""Private and loopback: allowed when the MCP server itself is on such an address."""

_MAX_ERROR_CHARS = 500
"""How much of an error answer an exception message quotes."""


@dataclass(frozen=True)
class SignInPolicy:
    """Where a client's sign-in (OAuth) requests may go, and how much of their answers is read.

    Every request the sign-in makes on its own (protected-resource metadata, authorization
    server metadata, registration, token, refresh) goes through toolwire's egress guard:

    - link-local addresses (cloud metadata services among them) never;
    - private and loopback addresses only when the MCP server itself is on one, or when listed
      in `allow`;
    - each redirect hop is checked again (the SDK follows redirects only within an origin);
    - authorization server endpoints must use HTTPS unless on loopback (or `allow_http`).

    So a client secret or a Basic authorization header only ever goes where these rules accept.

    Attributes:
        allow: Host names, IP addresses or CIDR blocks accepted even though not public
            (`"10.1.0.0/16"`, `"as.corp.example"`). Link-local addresses stay refused.
        allow_http: Accept plain-HTTP authorization server endpoints off loopback (development
            only: tokens and secrets then cross the network in clear).
        timeout: Seconds for each sign-in exchange, redirects and DNS included.
        max_response_bytes: The most of each answer read; a longer one is refused.
        resolver: Host name resolver (the system's by default); tests inject their own.
    """

    allow: Collection[str] = ()
    allow_http: bool = False
    timeout: float = 30.0
    max_response_bytes: int = DEFAULT_SIGN_IN_BYTES
    resolver: Resolver | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        allow = (self.allow,) if isinstance(self.allow, str) else tuple(self.allow)
        object.__setattr__(self, "allow", allow)
        if self.timeout <= 0 or self.max_response_bytes <= 0:
            raise ValueError("timeout and max_response_bytes must be positive")

    async def egress_for(self, server_url: str) -> EgressPolicy:
        """The egress rule for signing in to the MCP server at `server_url`."""
        allow = list(self.allow)
        if await _is_local(server_url, self.resolver):
            allow += _LOCAL
        return EgressPolicy(
            allow=allow,
            deny=_NEVER,
            max_redirects=0,  # the SDK follows redirects itself, each hop coming back here
            max_response_bytes=self.max_response_bytes,
            timeout=self.timeout,
            resolver=self.resolver,
        )


async def _is_local(url: str, resolver: Resolver | None) -> bool:
    """Whether the host of `url` is on a private or loopback address (every address of it)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        addresses: list[IPAddress] = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            answer = (resolver or system_resolver)(host, 443)
            found: Sequence[str] = await answer if inspect.isawaitable(answer) else answer
            addresses = [ipaddress.ip_address(str(a).split("%", 1)[0]) for a in found]
        except (OSError, ValueError):
            return False
    return bool(addresses) and all(
        address_block_reason(ip) is not None and not _never(ip) for ip in addresses
    )


_NEVER_NETS = tuple(ipaddress.ip_network(n) for n in _NEVER)


def _never(ip: IPAddress) -> bool:
    return any(ip.version == net.version and ip in net for net in _NEVER_NETS)


def _loopback_host(host: str) -> bool:
    bare = host.strip("[]").lower()
    if bare == "localhost" or bare.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def check_authorization_url(url: str, policy: SignInPolicy) -> None:
    """Refuse an authorization endpoint that a person's browser would reach over plain HTTP.

    Raises:
        McpAuthError: the URL is not https (and not loopback, and `allow_http` is off).
    """
    parts = urlsplit(url)
    if parts.scheme == "https" or policy.allow_http:
        return
    if parts.scheme == "http" and _loopback_host(parts.hostname or ""):
        return
    raise McpAuthError(
        f"The authorization server's authorization endpoint {url[:200]} is not served over "
        "HTTPS; refused (SignInPolicy(allow_http=True) accepts it, for development only)"
    )


def _party(request: httpx2.Request, resource_metadata: str | None) -> str:
    """Who answers this sign-in request, for error messages."""
    url = str(request.url)
    path = request.url.path
    if request.method == "GET":
        if "/.well-known/oauth-protected-resource" in path or url == resource_metadata:
            return f"the MCP server's resource metadata at {url}"
        return f"the authorization server metadata at {url}"
    body = request.content
    if b"grant_type=" in body:
        return f"the token endpoint {url}"
    return f"the authorization server's registration endpoint {url}"


def _short(text: str) -> str:
    return text if len(text) <= _MAX_ERROR_CHARS else text[:_MAX_ERROR_CHARS] + "... (cut)"


_DROPPED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
# The body handed on is already decoded, and its length is its own.
_DROPPED_ANSWER_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class GuardedAuth(httpx2.Auth):
    """Runs an SDK OAuth provider's flow, sending its own requests through the egress guard.

    Args:
        inner: The SDK's provider (`OAuthClientProvider` or one of its extensions).
        server_url: The MCP server the provider signs in to.
        policy: The sign-in rule.
    """

    def __init__(self, inner: httpx2.Auth, server_url: str, policy: SignInPolicy) -> None:
        self.inner = inner
        self.server_url = server_url
        self.policy = policy
        parts = urlsplit(server_url)
        self._server_origin = (parts.scheme, parts.hostname, parts.port)
        self._egress: EgressPolicy | None = None

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response]:
        raise RuntimeError("toolwire's OAuth runs on async clients only")

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.inner.async_auth_flow(request)
        party = f"the MCP server at {self.server_url}"
        resource_metadata: str | None = None
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is request:
                    response = yield outgoing
                    party = f"the MCP server at {self.server_url}"
                    resource_metadata = _resource_metadata(response)
                else:
                    party = _party(outgoing, resource_metadata)
                    response = await self._send(outgoing, party)
                try:
                    outgoing = await flow.asend(response)
                except (OAuthFlowError, ValidationError) as exc:
                    # The SDK refused what this party answered: say so, briefly.
                    raise McpAuthError(
                        f"Signing in failed at {party}: {_short(str(exc))}"
                    ) from None
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _send(self, request: httpx2.Request, party: str) -> httpx2.Response:
        """Send one sign-in request, following redirects that stay within its origin.

        The SDK would follow those itself, but only for answers its own client read; each hop
        here goes through the guard again, and one that leaves the origin is handed back as is
        (the SDK then treats it as a failed fetch), so a credential never follows it.
        """
        response = await self._send_once(request, party)
        for _ in range(_MAX_REDIRECTS):
            follow = _same_origin_redirect(request, response)
            if follow is None:
                break
            request = follow
            response = await self._send_once(request, party)
        return response

    async def _send_once(self, request: httpx2.Request, party: str) -> httpx2.Response:
        if self._egress is None:
            self._egress = await self.policy.egress_for(self.server_url)
        egress = self._egress
        url = str(request.url)
        try:
            addresses = await egress.check_url(url)
        except EgressBlocked as exc:
            raise McpAuthError(
                f"Signing in refused to contact {party}: {exc.reason} (sign-in reaches private "
                "or loopback addresses only for an MCP server on one, or when "
                "SignInPolicy(allow=...) lists them; link-local ones never)"
            ) from None
        except ToolError as exc:
            raise McpAuthError(f"Cannot reach {party}: {exc}") from None
        self._check_https(request, party, addresses)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROPPED_HEADERS}
        try:
            answer = await guarded_request(
                request.method,
                url,
                policy=egress,
                headers=headers,
                content=request.content or None,
                follow_redirects=False,
            )
        except EgressBlocked as exc:
            raise McpAuthError(f"Signing in refused to contact {party}: {exc.reason}") from None
        except EgressTimeout:
            raise McpAuthError(
                f"{party[0].upper()}{party[1:]} did not answer within {self.policy.timeout:g} s"
            ) from None
        except (ToolError, httpx.HTTPError) as exc:
            raise McpAuthError(f"Cannot reach {party}: {_short(str(exc))}") from None
        if answer.truncated:
            raise McpAuthError(
                f"{party[0].upper()}{party[1:]} answered more than "
                f"{self.policy.max_response_bytes} bytes; refused"
            )
        content = answer.content
        if answer.status_code >= 400:
            # The SDK quotes an error answer whole in its exception; keep that short.
            content = content[:_MAX_ERROR_CHARS]
        kept = [
            (k, v)
            for k, v in answer.headers.multi_items()
            if k.lower() not in _DROPPED_ANSWER_HEADERS
        ]
        return httpx2.Response(answer.status_code, headers=kept, content=content, request=request)

    def _check_https(self, request: httpx2.Request, party: str, addresses: list[IPAddress]) -> None:
        """OAuth 2.1 and MCP: authorization server endpoints are HTTPS, loopback excepted."""
        url = request.url
        if url.scheme == "https" or self.policy.allow_http:
            return
        if (url.scheme, url.host, url.port) == self._server_origin:
            return  # the MCP server's own origin, which the caller chose to reach as it is
        if addresses and all(ip.is_loopback for ip in addresses):
            return
        raise McpAuthError(
            f"Signing in refused {party}: plain HTTP off this machine (OAuth wants HTTPS; "
            "SignInPolicy(allow_http=True) accepts it, for development only)"
        )


_MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _same_origin_redirect(sent: httpx2.Request, response: httpx2.Response) -> httpx2.Request | None:
    """The next request for a redirect that keeps the method and the origin, else `None`."""
    location = response.headers.get("location")
    if response.status_code not in _REDIRECTS or not location:
        return None
    if sent.method != "GET" and response.status_code not in (307, 308):
        return None  # would turn a POST into a GET and drop the form
    try:
        target = sent.url.join(location.strip())
    except httpx2.InvalidURL:
        return None
    same = (target.scheme, target.host, target.port) == (
        sent.url.scheme,
        sent.url.host,
        sent.url.port,
    )
    upgraded = (
        sent.url.scheme == "http"
        and target.scheme == "https"
        and target.host == sent.url.host
        and sent.url.port is None
        and target.port is None
    )
    if not (same or upgraded) or target.userinfo:
        return None
    headers = {k: v for k, v in sent.headers.items() if k.lower() not in _DROPPED_HEADERS}
    return httpx2.Request(
        sent.method, target.copy_with(fragment=None), headers=headers, content=sent.content
    )


def _resource_metadata(response: httpx2.Response) -> str | None:
    challenge = response.headers.get("www-authenticate", "")
    marker = 'resource_metadata="'
    start = challenge.find(marker)
    if start < 0:
        return None
    start += len(marker)
    end = challenge.find('"', start)
    return challenge[start:end] if end > start else None


async def post_to_named(
    url: str, form: dict[str, str], policy: SignInPolicy, party: str
) -> tuple[int, bytes]:
    """POST a form to an endpoint the caller named itself (so any address but link-local).

    Capped and timed like every sign-in exchange; redirects are not followed, so the form (and
    any secret in it) goes to that endpoint only.

    Raises:
        McpAuthError: refused, unreachable, too slow, or an answer over the cap.
    """
    host = (urlsplit(url).hostname or "").strip("[]")
    egress = EgressPolicy(
        allow=[*policy.allow, host] if host else policy.allow,
        deny=_NEVER,
        max_redirects=0,
        max_response_bytes=policy.max_response_bytes,
        timeout=policy.timeout,
        resolver=policy.resolver,
    )
    content = urlencode(form)
    try:
        answer = await guarded_request(
            "POST",
            url,
            policy=egress,
            headers={"content-type": "application/x-www-form-urlencoded"},
            content=content,
            follow_redirects=False,
        )
    except EgressBlocked as exc:
        raise McpAuthError(f"Refused to contact {party}: {exc.reason}") from None
    except EgressTimeout:
        raise McpAuthError(f"{party} did not answer within {policy.timeout:g} s") from None
    except (ToolError, httpx.HTTPError) as exc:
        raise McpAuthError(f"Cannot reach {party}: {_short(str(exc))}") from None
    if answer.truncated:
        raise McpAuthError(f"{party} answered more than {policy.max_response_bytes} bytes")
    return answer.status_code, answer.content
