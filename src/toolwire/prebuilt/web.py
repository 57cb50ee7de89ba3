"""Web tools: `fetch_url` (a page as readable Markdown or text) and `http_request` (any HTTP call).

Both go through the egress guard: public addresses only unless the policy's allowlist opens more.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypedDict

import httpx
from pydantic import Field

from ..errors import ToolError
from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy, EgressResponse, guarded_request
from ._html import html_to_markdown, html_to_text
from ._http import USER_AGENT, UpstreamUnavailable, tool_policy

__all__ = ["NameValue", "fetch_url", "fetch_url_tool", "http_request", "http_request_tool"]

_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml",
               "application/javascript", "application/ld+json", "application/rss+xml",
               "application/atom+xml", "application/x-ndjson", "application/yaml")  # fmt: skip
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Headers the model may not set: they belong to the connection, not to the request.
_FORBIDDEN_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
     "proxy-authorization", "proxy-connection", "trailer"}
)  # fmt: skip


class NameValue(TypedDict):
    """A header or query parameter; a list of pairs works in every provider's schema dialect."""

    name: str
    value: str


def _is_text(response: EgressResponse) -> bool:
    kind = response.content_type
    if not kind:
        return b"\x00" not in response.content[:1024]
    return kind.startswith(_TEXT_TYPES) or kind.endswith(("+json", "+xml"))


def _window(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    chunk = text[offset : offset + max_chars]
    end = offset + len(chunk)
    return chunk, end if end < len(text) else None


async def _send(method: str, url: str, policy: EgressPolicy, **kwargs: Any) -> EgressResponse:
    try:
        return await guarded_request(method, url, policy=policy, **kwargs)
    except httpx.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        raise UpstreamUnavailable(url, f"Could not connect to {url}: {reason}.") from exc


def fetch_url_tool(
    *,
    egress: EgressPolicy | None = None,
    timeout: float = 20.0,
    max_bytes: int = 2_000_000,
    name: str = "fetch_url",
) -> FunctionTool:
    """Build a `fetch_url` tool.

    Args:
        egress: The egress policy (public addresses only when `None`).
        timeout: Seconds for the whole fetch, redirects included.
        max_bytes: Bytes of body read at most; the rest of a larger page is not downloaded.
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def fetch_url(
        url: str,
        format: Literal["markdown", "text", "raw"] = "markdown",
        max_chars: Annotated[int, Field(ge=1, le=100_000)] = 20_000,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> dict[str, Any]:
        """Fetch a web page with GET and return its readable content.

        HTML is converted to Markdown (or plain text); other text types come back as they are.
        Follows redirects and reports the final URL. Only public http(s) addresses can be
        fetched. Long pages are cut at `max_chars`: call again with `offset` set to the returned
        `next_offset` to read on.

        Args:
            url: The absolute http or https URL to fetch.
            format: "markdown" (default) or "text" for HTML pages; "raw" returns the body unchanged.
            max_chars: The most characters of content to return (1 to 100000).
            offset: Character offset to start from, to read a long page in parts.
        """
        response = await _send(
            "GET",
            url,
            policy,
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            },
            max_bytes=max_bytes,
        )
        if response.status_code >= 400:
            raise ToolError(
                f"Fetching {response.url} failed: HTTP {response.status_code} "
                f"{response.reason_phrase}."
            )
        if not _is_text(response):
            kind = response.content_type or "unknown type"
            raise ToolError(
                f"{response.url} is not a text document ({kind}, {len(response.content)} bytes "
                "read); fetch_url only returns text and HTML."
            )
        title = ""
        text = response.text
        if format != "raw" and response.content_type in _HTML_TYPES:
            convert = html_to_markdown if format == "markdown" else html_to_text
            title, text = convert(text, response.url)
        content, next_offset = _window(text, offset, max_chars)
        result: dict[str, Any] = {
            "url": response.url,
            "status": response.status_code,
            "content_type": response.content_type,
            "title": title,
            "content": content,
            "total_chars": len(text),
            "next_offset": next_offset,
        }
        if response.truncated:
            result["note"] = f"The page is larger than {max_bytes} bytes; only the start was read."
        return result

    return tool(
        fetch_url,
        name=name,
        annotations=ToolAnnotations(
            title="Fetch a web page",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=True,
        ),
    )


def http_request_tool(
    *,
    egress: EgressPolicy | None = None,
    timeout: float = 20.0,
    max_bytes: int = 1_000_000,
    methods: tuple[str, ...] = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"),
    requires_approval: bool = False,
    name: str = "http_request",
) -> FunctionTool:
    """Build an `http_request` tool.

    Args:
        egress: The egress policy (public addresses only when `None`).
        timeout: Seconds for the whole exchange, redirects included.
        max_bytes: Bytes of response body read at most.
        methods: The HTTP methods the model may use.
        requires_approval: Pause the run for approval before each call.
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)
    allowed = tuple(m.upper() for m in methods)

    async def http_request(
        url: str,
        method: str = "GET",
        headers: list[NameValue] | None = None,
        query: list[NameValue] | None = None,
        json_body: Any = None,
        text_body: str | None = None,
        max_chars: Annotated[int, Field(ge=1, le=100_000)] = 20_000,
    ) -> dict[str, Any]:
        """Send an HTTP request and return the status, the response headers and the body.

        Any status is a normal result (check `status`); only public http(s) addresses can be
        reached. Send at most one of `json_body` and `text_body`. The body is cut at `max_chars`.

        Args:
            url: The absolute http or https URL.
            method: The HTTP method, e.g. "GET" or "POST".
            headers: Request headers as name/value pairs, e.g.
                [{"name": "Accept", "value": "application/json"}].
            query: Query parameters added to the URL, as name/value pairs.
            json_body: A JSON value sent as the body with Content-Type application/json.
            text_body: Text sent as the body as it is.
            max_chars: The most characters of response body to return (1 to 100000).
        """
        verb = method.strip().upper()
        if verb not in allowed:
            raise ToolError(f"Method {method!r} is not allowed; use one of {', '.join(allowed)}.")
        if json_body is not None and text_body is not None:
            raise ToolError("Send either json_body or text_body, not both.")
        sent: dict[str, str] = {"User-Agent": USER_AGENT}
        for pair in headers or []:
            key = pair["name"].strip()
            if key.lower() in _FORBIDDEN_HEADERS:
                raise ToolError(f"The {key} header cannot be set; it belongs to the connection.")
            sent[key] = pair["value"]
        params = [(pair["name"], pair["value"]) for pair in query or []]
        response = await _send(
            verb,
            url,
            policy,
            headers=sent,
            params=params,
            json=json_body,
            content=text_body,
            max_bytes=max_bytes,
        )
        if _is_text(response):
            body = response.text
        else:
            kind = response.content_type or "unknown type"
            body = f"[binary body: {kind}, {len(response.content)} bytes]"
        result: dict[str, Any] = {
            "status": response.status_code,
            "reason": response.reason_phrase,
            "url": response.url,
            "headers": _headers(response.headers),
            "body": body[:max_chars],
            "body_truncated": response.truncated or len(body) > max_chars,
        }
        if response.content_type == "application/json" and not result["body_truncated"]:
            try:
                result["json"] = json.loads(body)
                del result["body"]
            except ValueError:
                pass
        return result

    return tool(
        http_request,
        name=name,
        annotations=ToolAnnotations(
            title="HTTP request",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=True,
        ),
        requires_approval=requires_approval,
    )


def _headers(headers: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in headers.items():
        if key.lower() in ("set-cookie",):
            continue  # cookies are the client's business, not the model's
        out[key.lower()] = value if len(value) <= 500 else value[:500] + "…"
    return out


fetch_url: FunctionTool = fetch_url_tool()
"""`fetch_url` with the default policy: public addresses only, 20 s, 2 MB."""

http_request: FunctionTool = http_request_tool()
"""`http_request` with the default policy: public addresses only, 20 s, 1 MB."""
