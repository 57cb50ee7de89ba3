"""Small facts the MCP server and its OAuth layers share, kept on the lowest floor of `mcp`.

`server` builds the app and `resource_auth` guards it; both need to know what a loopback host is
and where the guard leaves the caller's identity, so those live here rather than in either.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote_to_bytes

__all__ = ["AUTH_SCOPE_KEY", "is_loopback", "scrub_query_token"]

AUTH_SCOPE_KEY = "toolwire.auth"
"""Where the OAuth guard leaves the caller's `AuthInfo` in the ASGI scope."""


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name, IPv6 in brackets or not) only accepts local clients."""
    bare = host.strip().removeprefix("[").removesuffix("]")
    if bare.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def scrub_query_token(query: bytes) -> bytes:
    """The query string with every `access_token` value replaced by `[redacted]`.

    An ASGI server's access log reads the query from the request's scope once the answer starts;
    writing this back into the scope keeps a token sent in the URL out of that log.
    """
    parts = query.split(b"&")
    for index, part in enumerate(parts):
        key, equals, _ = part.partition(b"=")
        if unquote_to_bytes(key.replace(b"+", b" ")) == b"access_token" and equals:
            parts[index] = key + b"=[redacted]"
    return b"&".join(parts)
