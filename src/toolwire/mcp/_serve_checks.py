"""Checks on how a server is about to be exposed, run by `create_app` (and so by every way of
serving: `serve`, `toolwire serve`, each of its workers)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

__all__ = ["MIN_TOKEN_CHARS", "check_serving"]

logger = logging.getLogger("toolwire.mcp")

MIN_TOKEN_CHARS = 16
"""The shortest `auth_token` accepted. A shared bearer token is the only thing between the
network and the tools; 16 random characters are out of reach of guessing over HTTP, and anything
shorter is most likely a placeholder (`"t"`, `"secret"`) that was never replaced."""


def check_serving(
    *,
    auth_token: str | None,
    has_oauth: bool,
    allowed_hosts: Sequence[str] | None,
    dns_rebinding_protection: bool,
) -> None:
    """Refuse a token too short to protect anything; warn when the Host check is off with no
    authentication at all.

    Raises:
        ValueError: `auth_token` is empty or shorter than `MIN_TOKEN_CHARS`.
    """
    if auth_token is not None:
        if not auth_token.strip():
            raise ValueError(
                "auth_token is empty: give a real token, or None for no authentication"
            )
        if len(auth_token) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"auth_token has {len(auth_token)} characters; at least {MIN_TOKEN_CHARS} are "
                "needed (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
            )
    any_host = not dns_rebinding_protection or "*" in (allowed_hosts or ())
    if any_host and auth_token is None and not has_oauth:
        # With the Host check off, a web page the user opens can reach a loopback server
        # through DNS rebinding; without a token nothing else stands in the way.
        logger.warning(
            "serving with any Host accepted and no token: a web page opened on this machine "
            "can call these tools through DNS rebinding; give a token (or oauth), or list the "
            "host names instead of '*'"
        )
