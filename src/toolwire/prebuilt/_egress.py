"""The egress guard: every outbound request of the prebuilt tools goes through it.

A URL is allowed only when its scheme is `http` or `https` and every address its host resolves to
is a public unicast address (or is opened by the policy's allowlist). The host is resolved once; the
connection then goes to a checked address, so a second DNS answer cannot swap in an internal one.
Redirects are followed by hand and every hop is checked again. Responses are read as a stream and
cut at a size cap, and the whole exchange runs under one deadline.

Use it for your own tools:

- `guarded_request(...)` for one request with redirects, size cap and deadline;
- `EgressTransport(policy)` as the transport of your own `httpx.AsyncClient`;
- `EgressPolicy.check_url(url)` to vet a URL and get the addresses to connect to.
"""

from __future__ import annotations

import inspect
import ipaddress
import logging
import re
import socket
import urllib.parse
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import field
from typing import Any, TypeAlias

import anyio
import httpx

from .._record import record
from ..errors import EgressBlocked, EgressTimeout, ToolError

__all__ = [
    "EgressBlocked",
    "EgressPolicy",
    "EgressResponse",
    "EgressTimeout",
    "EgressTransport",
    "IPAddress",
    "Resolver",
    "address_block_reason",
    "guarded_request",
    "system_resolver",
]

logger = logging.getLogger("toolwire.egress")

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[str]] | Sequence[str]]
"""Maps `(host, port)` to IP address strings; may be sync (runs inline, must not block) or async."""


def _net(cidr: str) -> IPNetwork:
    return ipaddress.ip_network(cidr)


# Checked in order; the first match names the reason. Facts from the IANA special-purpose registries.
_V4_BLOCKED: tuple[tuple[IPNetwork, str], ...] = (
    (_net("0.0.0.0/8"), "an unspecified ('this network') address"),
    (_net("10.0.0.0/8"), "a private address"),
    (_net("100.64.0.0/10"), "a shared (carrier-grade NAT) address"),
    (_net("127.0.0.0/8"), "a loopback address"),
    (_net("169.254.0.0/16"), "a link-local address, where cloud metadata services live"),
    (_net("172.16.0.0/12"), "a private address"),
    (_net("192.0.0.0/24"), "an IETF protocol assignment address"),
    (_net("192.0.2.0/24"), "a documentation address"),
    (_net("192.31.196.0/24"), "an AS112 service address"),
    (_net("192.52.193.0/24"), "an AMT relay address"),
    (_net("192.88.99.0/24"), "a 6to4 relay anycast address"),
    (_net("192.168.0.0/16"), "a private address"),
    (_net("192.175.48.0/24"), "an AS112 service address"),
    (_net("198.18.0.0/15"), "a benchmarking address"),
    (_net("198.51.100.0/24"), "a documentation address"),
    (_net("203.0.113.0/24"), "a documentation address"),
    (_net("224.0.0.0/4"), "a multicast address"),
    (_net("255.255.255.255/32"), "the broadcast address"),
    (_net("240.0.0.0/4"), "a reserved address"),
)

_V6_BLOCKED: tuple[tuple[IPNetwork, str], ...] = (
    (_net("::/128"), "the unspecified address"),
    (_net("::1/128"), "a loopback address"),
    (_net("::/96"), "a deprecated IPv4-compatible address"),
    (_net("64:ff9b:1::/48"), "a local-use NAT64 address"),
    (_net("100::/64"), "a discard-only address"),
    (_net("2001:2::/48"), "a benchmarking address"),
    (_net("2001:db8::/32"), "a documentation address"),
    (_net("3fff::/20"), "a documentation address"),
    (_net("5f00::/16"), "a segment-routing address"),
    (_net("fc00::/7"), "a unique-local (private) address"),
    (_net("fe80::/10"), "a link-local address"),
    (_net("fec0::/10"), "a deprecated site-local address"),
    (_net("ff00::/8"), "a multicast address"),
)

_NAT64 = _net("64:ff9b::/96")
_TEREDO = _net("2001::/32")
_SIXTOFOUR = _net("2002::/16")


def _table_reason(ip: IPAddress, table: tuple[tuple[IPNetwork, str], ...]) -> str | None:
    for network, label in table:
        if ip in network:
            article, _, rest = label.partition(" ")
            head, comma, tail = rest.partition(",")
            return f"{article} {head} ({network}){comma}{tail}"
    return None


def address_block_reason(address: IPAddress | str) -> str | None:
    """Why the guard refuses this address, or `None` when it is a public unicast address.

    IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by the
    IPv4 address inside them.
    """
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv4Address):
        reason = _table_reason(ip, _V4_BLOCKED)
        if reason is None and not ip.is_global:
            reason = "not a globally routable address"
        return reason
    if ip.scope_id:
        ip = ipaddress.IPv6Address(ip.packed)
    mapped = ip.ipv4_mapped
    if mapped is not None:
        inner = address_block_reason(mapped)
        return f"an IPv4-mapped form of {mapped}, {inner}" if inner else None
    embedded: list[tuple[str, ipaddress.IPv4Address]] = []
    if ip in _NAT64:
        embedded.append(("a NAT64 form of", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
    elif ip in _TEREDO and ip.teredo is not None:
        server, client = ip.teredo
        embedded += [("a Teredo address with server", server), ("a Teredo address for", client)]
    elif ip in _SIXTOFOUR and ip.sixtofour is not None:
        embedded.append(("a 6to4 form of", ip.sixtofour))
    if embedded:
        for label, inner_ip in embedded:
            inner = address_block_reason(inner_ip)
            if inner:
                return f"{label} {inner_ip}, {inner}"
        return None
    reason = _table_reason(ip, _V6_BLOCKED)
    if reason is None and not ip.is_global:
        reason = "not a globally routable address"
    return reason


# Hosts that name the local machine by convention, whatever DNS says (RFC 6761).
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")

# A label that looks numeric makes WHATWG URL parsers and inet_aton treat the host as IPv4.
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")


def _legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Decode inet_aton-style spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if not _NUMERIC_LABEL.fullmatch(part):
            return None
        if part.startswith("0x"):
            values.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            if not part.isdigit() or any(c in "89" for c in part):
                return None
            values.append(int(part, 8))
        else:
            values.append(int(part))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(head):
        number |= value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _numeric_host_reason(host: str) -> str | None:
    """Why a host that looks like an IPv4 address but is not in dotted decimal is refused."""
    if not _NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]):
        return None
    decoded = _legacy_ipv4(host)
    if decoded is None:
        return f"host {host!r} is not a valid IPv4 address"
    inner = address_block_reason(decoded)
    what = f"{decoded}, {inner}" if inner else str(decoded)
    return (
        f"host {host!r} is a non-standard spelling of IPv4 address {what}; "
        "write addresses in dotted decimal"
    )


def _log_refusal(error: EgressBlocked) -> EgressBlocked:
    logger.warning("egress refused: %s", error)
    return error


def _invalid_url(url: str, exc: Exception) -> EgressBlocked:
    try:
        host = (urllib.parse.urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        host = ""
    reason = _numeric_host_reason(host) if host else None
    return EgressBlocked(url, reason or f"the URL is not valid ({exc})")


def _parse_ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[str]:
    """Resolve a host name with the operating system's resolver, without blocking the event loop."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for *_, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in seen:
            seen.append(address)
    return seen


@record(frozen=True, slots=False)
class EgressPolicy:
    """What the egress guard lets through.

    Attributes:
        allow: Host names (`"api.internal"`, `"*.corp.example"`), IP addresses and CIDR blocks
            (`"10.1.2.0/24"`) to let through even though they are not public. A listed name skips
            the address check (it is still resolved once and pinned); a listed address or block
            opens exactly those addresses.
        ports: When set, the only ports allowed.
        max_redirects: Redirects followed before giving up.
        max_response_bytes: Bytes of (decoded) body kept; the rest is not read.
        timeout: Seconds for the whole exchange, redirects and DNS included.
        resolver: Host name resolver; the system resolver when `None`.
        deny: IP addresses and CIDR blocks refused whatever `allow` says, a listed name's
            addresses included (e.g. cloud metadata addresses).
    """

    allow: Collection[str] = ()
    ports: Collection[int] | None = None
    max_redirects: int = 5
    max_response_bytes: int = 2_000_000
    timeout: float = 30.0
    resolver: Resolver | None = field(default=None, compare=False)
    deny: Collection[str] = ()
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())
    _networks: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False, default=())
    _denied: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        # A lone string would be iterated character by character; lists would make the policy
        # unhashable.
        allow = (self.allow,) if isinstance(self.allow, str) else tuple(self.allow)
        object.__setattr__(self, "allow", allow)
        if self.ports is not None:
            object.__setattr__(self, "ports", frozenset(self.ports))
        if self.max_redirects < 0 or self.max_response_bytes < 0 or self.timeout <= 0:
            raise ValueError("max_redirects and max_response_bytes must be >= 0, timeout > 0")
        names: list[str] = []
        networks: list[IPNetwork] = []
        for entry in allow:
            text = entry.strip().lower().rstrip(".")
            try:
                networks.append(ipaddress.ip_network(text.strip("[]"), strict=False))
            except ValueError:
                if not text or "/" in text:
                    raise ValueError(f"Invalid allowlist entry {entry!r}") from None
                names.append(text)
        object.__setattr__(self, "_names", tuple(names))
        object.__setattr__(self, "_networks", tuple(networks))
        deny = (self.deny,) if isinstance(self.deny, str) else tuple(self.deny)
        object.__setattr__(self, "deny", deny)
        try:
            denied = tuple(ipaddress.ip_network(d.strip().strip("[]"), strict=False) for d in deny)
        except ValueError as exc:
            raise ValueError(f"Invalid deny entry: {exc}") from None
        object.__setattr__(self, "_denied", denied)

    def _name_allowed(self, host: str) -> bool:
        for name in self._names:
            if name.startswith("*."):
                if host.endswith(name[1:]):
                    return True
            elif host == name:
                return True
        return False

    def _address_allowed(self, ip: IPAddress) -> bool:
        return any(ip.version == net.version and ip in net for net in self._networks)

    def check_address(self, address: IPAddress | str) -> str | None:
        """Why this policy refuses the address, or `None` when it may be contacted."""
        ip = _parse_ip(address) if isinstance(address, str) else address
        if ip is None:
            return f"{address!r} is not an IP address"
        denied = self._deny_reason(ip)
        if denied:
            return denied
        if self._address_allowed(ip):
            return None
        return address_block_reason(ip)

    def _deny_reason(self, ip: IPAddress) -> str | None:
        for net in self._denied:
            if ip.version == net.version and ip in net:
                return f"an address this policy denies ({net})"
        return None

    async def check_url(self, url: str | httpx.URL) -> list[IPAddress]:
        """Vet a URL and return the checked addresses to connect to, in resolver order.

        A refusal is logged (WARNING, logger `toolwire.egress`) before it is raised.

        Raises:
            EgressBlocked: the URL, its host or one of its addresses is not allowed.
            ToolError: the host name could not be resolved.
        """
        try:
            return await self._check_url(url)
        except EgressBlocked as exc:
            _log_refusal(exc)
            raise

    async def _check_url(self, url: str | httpx.URL) -> list[IPAddress]:
        try:
            parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise _invalid_url(str(url), exc) from None
        shown = str(parsed)
        if parsed.scheme not in ("http", "https"):
            scheme = parsed.scheme or "none"
            raise EgressBlocked(shown, f"scheme {scheme!r} is not allowed, only http and https")
        host = urllib.parse.unquote(parsed.raw_host.decode("ascii")).lower().rstrip(".")
        if not host:
            raise EgressBlocked(shown, "the URL has no host")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        if self.ports is not None and port not in self.ports:
            allowed = ", ".join(str(p) for p in sorted(self.ports))
            raise EgressBlocked(shown, f"port {port} is not allowed (allowed: {allowed})")
        literal = _parse_ip(host.strip("[]"))
        if literal is not None:
            reason = self.check_address(literal)
            if reason:
                raise EgressBlocked(shown, f"host {literal} is {reason}")
            return [literal]
        numeric = _numeric_host_reason(host)
        if numeric:
            raise EgressBlocked(shown, numeric)
        named_ok = self._name_allowed(host)
        if not named_ok and (host in _LOCAL_NAMES or host.endswith(".localhost")):
            raise EgressBlocked(shown, f"host {host!r} names the local machine")
        addresses = await self._resolve(host, port)
        if not addresses:
            raise ToolError(f"Could not resolve host {host!r}: no addresses.")
        for ip in addresses:
            # A listed name skips the public-address check, never the deny list.
            reason = self.check_address(ip) if not named_ok else self._deny_reason(ip)
            if reason:
                raise EgressBlocked(shown, f"host {host!r} resolves to {ip}, {reason}")
        return addresses

    async def _resolve(self, host: str, port: int) -> list[IPAddress]:
        resolver = self.resolver or system_resolver
        try:
            answer = resolver(host, port)
            if inspect.isawaitable(answer):
                answer = await answer
        except (OSError, UnicodeError) as exc:
            raise ToolError(f"Could not resolve host {host!r}: {exc}.") from exc
        addresses: list[IPAddress] = []
        for text in answer:
            ip = _parse_ip(text)
            if ip is None:
                raise ToolError(f"Could not resolve host {host!r}: bad address {text!r}.")
            if ip not in addresses:
                addresses.append(ip)
        return addresses


class EgressTransport(httpx.AsyncBaseTransport):
    """An httpx transport that vets every request (every redirect hop too) with an `EgressPolicy`.

    The request goes to a checked IP address: the URL host is rewritten to it, the `Host` header
    keeps the name, and TLS gets the name through the `sni_hostname` extension so certificates are
    still verified against it. Connections are not kept alive, so a connection opened for one name
    is never reused for another name that shares its address.

    Args:
        policy: What to let through; public addresses only when `None`.
        verify: TLS verification for the default inner transport (`True`, a path or an SSL context).
        transport: The transport that actually sends the pinned request.
    """

    def __init__(
        self,
        policy: EgressPolicy | None = None,
        *,
        verify: Any = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.policy = policy or EgressPolicy()
        self._inner = transport or httpx.AsyncHTTPTransport(
            verify=verify, limits=httpx.Limits(max_keepalive_connections=0)
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        addresses = await self.policy.check_url(request.url)
        host = request.url.raw_host.decode("ascii")  # IDNA-encoded, as TLS wants it
        error: httpx.ConnectError | None = None
        for ip in addresses:
            extensions = dict(request.extensions)
            if request.url.scheme == "https" and _parse_ip(host.strip("[]")) is None:
                extensions["sni_hostname"] = host
            pinned = httpx.Request(
                request.method,
                request.url.copy_with(host=str(ip)),
                headers=request.headers,
                stream=request.stream,
                extensions=extensions,
            )
            try:
                return await self._inner.handle_async_request(pinned)
            except httpx.ConnectError as exc:
                error = exc  # try the next checked address
        assert error is not None  # check_url never returns an empty list
        raise error

    async def aclose(self) -> None:
        await self._inner.aclose()


@record(frozen=True)
class EgressResponse:
    """A response read by `guarded_request`.

    Attributes:
        status_code: The final HTTP status.
        headers: The final response headers.
        url: The final URL, after redirects.
        content: The decoded body, at most the size cap.
        truncated: Whether the body was cut at the size cap.
        redirects: The URLs redirected to, in order.
    """

    status_code: int
    headers: httpx.Headers
    url: str
    content: bytes
    truncated: bool = False
    redirects: tuple[str, ...] = ()

    @property
    def content_type(self) -> str:
        """The media type, lower case, without parameters."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def text(self) -> str:
        """The body decoded with the declared charset (UTF-8 otherwise), bad bytes replaced."""
        charset = "utf-8"
        for param in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip("\"'")
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    @property
    def reason_phrase(self) -> str:
        """The standard phrase for the status code (e.g. `Not Found`)."""
        return httpx.codes.get_reason_phrase(self.status_code)


_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Headers that may follow a redirect to another origin; credentials and API keys never do.
_CROSS_ORIGIN_SAFE = frozenset({"accept", "accept-language", "user-agent", "content-type"})


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


async def guarded_request(
    method: str,
    url: str,
    *,
    policy: EgressPolicy | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | Sequence[tuple[str, str]] | None = None,
    json: Any = None,
    content: str | bytes | None = None,
    follow_redirects: bool = True,
    max_bytes: int | None = None,
    verify: Any = True,
) -> EgressResponse:
    """Send one request through the egress guard and read its capped body.

    Redirects are followed by hand (each hop checked again, up to `policy.max_redirects`); a
    redirect to another origin drops every header but a few harmless ones, so credentials never
    leak. A 303, or a 301/302 answering a POST, turns into a body-less GET.

    Raises:
        EgressBlocked: a URL or address on the way was refused.
        EgressTimeout: the deadline passed.
        ToolError: too many redirects, or the host did not resolve.
        httpx.TransportError: the connection failed.
    """
    policy = policy or EgressPolicy()
    cap = policy.max_response_bytes if max_bytes is None else max_bytes
    try:
        scheme = httpx.URL(url).scheme
    except httpx.InvalidURL as exc:
        raise _log_refusal(_invalid_url(url, exc)) from None
    if scheme not in ("http", "https"):
        # Checked here because httpx treats a URL without a host (file:///x) as relative.
        raise _log_refusal(
            EgressBlocked(url, f"scheme {scheme or 'none'!r} is not allowed, only http and https")
        )
    transport = EgressTransport(policy, verify=verify)
    query: Any = params if params is None or isinstance(params, Mapping) else list(params)
    try:
        with anyio.fail_after(policy.timeout):
            async with httpx.AsyncClient(
                transport=transport, timeout=policy.timeout, trust_env=False
            ) as client:
                request = client.build_request(
                    method, url, headers=headers, params=query, json=json, content=content
                )
                return await _exchange(client, request, policy, cap, follow_redirects)
    except TimeoutError:
        raise EgressTimeout(
            f"Request to {url} did not finish within {policy.timeout:g} seconds."
        ) from None
    except httpx.TimeoutException as exc:
        raise EgressTimeout(f"Request to {url} timed out ({type(exc).__name__}).") from exc


async def _exchange(
    client: httpx.AsyncClient,
    request: httpx.Request,
    policy: EgressPolicy,
    cap: int,
    follow_redirects: bool,
) -> EgressResponse:
    hops: list[str] = []
    while True:
        response = await client.send(request, stream=True)
        try:
            location = response.headers.get("location")
            if follow_redirects and response.status_code in _REDIRECTS and location:
                if len(hops) >= policy.max_redirects:
                    raise ToolError(
                        f"Too many redirects (more than {policy.max_redirects}) starting at "
                        f"{hops[0] if hops else request.url}; last one pointed to {location}."
                    )
                request = _next_request(client, request, response.status_code, location)
                hops.append(str(request.url))
                continue
            body = bytearray()
            truncated = False
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > cap:
                    del body[cap:]
                    truncated = True
                    break
            return EgressResponse(
                status_code=response.status_code,
                headers=response.headers,
                url=str(request.url),
                content=bytes(body),
                truncated=truncated,
                redirects=tuple(hops),
            )
        finally:
            await response.aclose()


def _next_request(
    client: httpx.AsyncClient, previous: httpx.Request, status: int, location: str
) -> httpx.Request:
    try:
        target = previous.url.join(location.strip())
    except httpx.InvalidURL as exc:
        raise _log_refusal(
            EgressBlocked(location, f"the redirect target is not a valid URL ({exc})")
        ) from None
    if target.scheme not in ("http", "https"):
        raise EgressBlocked(
            str(target), f"redirect to scheme {target.scheme!r}, only http and https are allowed"
        )
    method = previous.method
    body: bytes | None = previous.content or None
    if (status == 303 and method != "HEAD") or (status in (301, 302) and method == "POST"):
        method, body = "GET", None
    same_origin = _origin(target) == _origin(previous.url)
    headers = {
        key: value
        for key, value in previous.headers.items()
        if key.lower() not in ("host", "content-length")
        and (same_origin or key.lower() in _CROSS_ORIGIN_SAFE)
        and not (body is None and key.lower() == "content-type")
    }
    return client.build_request(
        method, target.copy_with(fragment=None), headers=headers, content=body
    )
