"""The one wording for a provider that cannot be reached: `cannot reach <provider> at <url>: <reason>`.

Every adapter's error mapping says it this way, so a user sees the same sentence whichever
provider failed, with the address it tried (a wrong `--base-url` shows at once).
"""

from __future__ import annotations

__all__ = ["cannot_reach"]


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
