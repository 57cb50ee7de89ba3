"""Shared plumbing of the HTTP-backed tools: API keys, the egress policy, and upstream errors."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any

import httpx

from .._util import retry_after_seconds
from ..errors import RetryableError, ToolError
from ._egress import EgressPolicy, EgressResponse, guarded_request

__all__ = [
    "USER_AGENT",
    "UpstreamError",
    "UpstreamUnavailable",
    "expect_dict",
    "expect_list",
    "join_url",
    "loose_dict",
    "loose_list",
    "raise_for_status",
    "request_json",
    "require_api_key",
    "text_of",
    "tool_policy",
]

USER_AGENT = "toolwire/0.1 (+https://github.com/toolwire/toolwire)"


class UpstreamError(ToolError):
    """The service behind a tool answered with an error, or with something unreadable.

    Attributes:
        service: The service's name, as the message shows it.
        status: The HTTP status, when there was a response.
    """

    def __init__(self, service: str, message: str, *, status: int | None = None) -> None:
        self.service = service
        self.status = status
        super().__init__(message)


class UpstreamUnavailable(UpstreamError, RetryableError):
    """A transient upstream failure (429, 5xx, connection trouble): worth retrying later.

    It is a `ToolError` (the model reads the message) and a `RetryableError` (`with_retry` retries
    it, honouring `retry_after`).
    """

    def __init__(
        self,
        service: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(service, message, status=status)
        self.retry_after = retry_after


def require_api_key(explicit: str | None, env_var: str, service: str, factory: str) -> str:
    """The key passed to the factory, else the environment variable's value.

    Raises:
        ToolError: neither is set; the message names the variable.
    """
    key = explicit if explicit is not None else os.environ.get(env_var, "")
    if not key.strip():
        raise ToolError(
            f"{service} needs an API key: set the {env_var} environment variable "
            f"or pass api_key= to {factory}()."
        )
    return key.strip()


def tool_policy(egress: EgressPolicy | None, timeout: float) -> EgressPolicy:
    """The egress policy a tool uses: the caller's (public addresses only by default) with the
    tool's timeout."""
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    return dataclasses.replace(egress or EgressPolicy(), timeout=timeout)


def join_url(base_url: str, path: str) -> str:
    """`base_url` plus a path, with exactly one slash between them."""
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def _shorten(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _detail(response: EgressResponse) -> str:
    """The error message inside an error body, whatever the service calls it."""
    try:
        body: Any = json.loads(response.content)
    except ValueError:
        if response.content_type.startswith("text/plain"):
            return _shorten(response.text)
        return ""
    for _ in range(3):
        if isinstance(body, Mapping):
            fields: Mapping[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
            for key in ("message", "detail", "info", "error", "title", "msg"):
                value = fields.get(key)
                if isinstance(value, str) and value.strip():
                    return _shorten(value)
                if isinstance(value, Mapping):
                    body = value  # pyright: ignore[reportUnknownVariableType]
                    break
            else:
                return ""
        else:
            return ""
    return ""


def raise_for_status(service: str, response: EgressResponse, *, not_found: str | None) -> None:
    """Turn an error status into `UpstreamError` (or `UpstreamUnavailable` for 429 and 5xx)."""
    status = response.status_code
    if status < 400:
        return
    detail = _detail(response)
    said = f": {detail}" if detail else ""
    code = f"HTTP {status} {response.reason_phrase}".rstrip()
    if status in (401, 403):
        raise UpstreamError(
            service,
            f"{service} refused the request ({code}){said}. Check the API key.",
            status=status,
        )
    if status == 404:
        message = not_found or f"{service} found nothing at that address ({code})"
        raise UpstreamError(service, f"{message}{said}.", status=status)
    if status == 429:
        wait = retry_after_seconds(response.headers.get("retry-after"))
        later = f" Try again in {wait:.0f} seconds." if wait is not None else " Try again later."
        raise UpstreamUnavailable(
            service,
            f"{service} is rate limiting requests ({code}){said}.{later}",
            status=status,
            retry_after=wait,
        )
    if status >= 500:
        raise UpstreamUnavailable(
            service,
            f"{service} had a server error ({code}){said}. Try again later.",
            status=status,
            retry_after=retry_after_seconds(response.headers.get("retry-after")),
        )
    raise UpstreamError(service, f"{service} rejected the request ({code}){said}.", status=status)


async def request_json(
    service: str,
    method: str,
    url: str,
    *,
    policy: EgressPolicy,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    json_body: Any = None,
    not_found: str | None = None,
) -> Any:
    """Call a JSON API through the egress guard and decode the answer.

    Raises:
        UpstreamError: an error status, an oversized answer, or a body that is not JSON.
        UpstreamUnavailable: 429, 5xx, or the service could not be reached.
        EgressBlocked: the policy refused the URL.
    """
    sent = {"Accept": "application/json", "User-Agent": USER_AGENT, **(headers or {})}
    clean = {k: v for k, v in (params or {}).items() if v is not None}
    try:
        response = await guarded_request(
            method, url, policy=policy, headers=sent, params=clean, json=json_body
        )
    except httpx.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        raise UpstreamUnavailable(service, f"Could not reach {service}: {reason}.") from exc
    raise_for_status(service, response, not_found=not_found)
    if response.truncated:
        raise UpstreamError(
            service,
            f"{service} sent more than {policy.max_response_bytes} bytes; the answer was dropped.",
            status=response.status_code,
        )
    try:
        return json.loads(response.content)
    except ValueError:
        kind = response.content_type or "no content type"
        preview = _shorten(response.text, 120)
        raise UpstreamError(
            service,
            f"{service} returned a response that is not valid JSON ({kind}): {preview!r}.",
            status=response.status_code,
        ) from None


def expect_dict(value: Any, service: str, what: str) -> dict[str, Any]:
    """`value` when it is a JSON object, else an `UpstreamError` naming what was malformed."""
    if isinstance(value, dict):
        return value  # pyright: ignore[reportUnknownVariableType]
    raise UpstreamError(
        service, f"{service} returned an unexpected answer: {what} is not a JSON object."
    )


def expect_list(value: Any, service: str, what: str) -> list[Any]:
    """`value` when it is a JSON array, else an `UpstreamError` naming what was malformed."""
    if isinstance(value, list):
        return value  # pyright: ignore[reportUnknownVariableType]
    raise UpstreamError(
        service, f"{service} returned an unexpected answer: {what} is not a JSON array."
    )


def text_of(value: Any) -> str:
    """A JSON value as display text: strings as they are, numbers formatted, anything else empty."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int | float):
        return str(value)
    return ""


def loose_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one: for optional parts of an answer."""
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def loose_list(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one: for optional parts of an answer."""
    return value if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]
