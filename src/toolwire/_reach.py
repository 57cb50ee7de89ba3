"""The one wording for a provider that cannot be reached: `cannot reach <provider> at <url>: <reason>`.

Every adapter's error mapping says it this way, so a user sees the same sentence whichever
provider failed, with the address it tried (a wrong `--base-url` shows at once).
"""

from __future__ import annotations

__all__ = ["cannot_reach", "request_url"]


def cannot_reach(provider: str, url: str | None, reason: BaseException | str) -> str:
    """`cannot reach <provider> at <url>: <reason>`; without a URL, `... <provider>: <reason>`.

    Args:
        provider: The provider as toolwire names it (`openai`, `ollama`, `azure`...).
        url: The API root the request went to (credentials and query removed by the caller).
        reason: What went wrong: the low-level error (its cause when it has one) or its text.
    """
    if isinstance(reason, BaseException):
        cause = reason.__cause__ or reason
        text = str(cause) or type(cause).__name__
    else:
        text = reason
    where = f" at {url.rstrip('/')}" if url else ""
    return f"cannot reach {provider}{where}: {text}"


def request_url(error: BaseException) -> str | None:
    """The URL a failed request went to (from the error or its cause), without credentials or
    query (Gemini's API key travels in it); `None` when the error does not carry the request."""
    for found in (error, error.__cause__):
        if found is None:
            continue
        try:
            request = getattr(found, "request", None)
        except RuntimeError:  # httpx raises when the request was never set
            continue
        url = getattr(request, "url", None)
        if url is None:
            continue
        scheme, host, port = (
            getattr(url, "scheme", ""),
            getattr(url, "host", ""),
            getattr(url, "port", None),
        )
        if not scheme or not host:
            continue
        where = f"[{host}]" if ":" in host else host
        return f"{scheme}://{where}{'' if port is None else f':{port}'}{getattr(url, 'path', '')}"
    return None
