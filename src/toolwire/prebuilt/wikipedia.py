"""Wikipedia tools (no key): full-text search and an article's summary, in any language edition."""

from __future__ import annotations

import dataclasses
import re
import urllib.parse
from typing import Annotated, Any

from pydantic import Field

from ..errors import ToolError
from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy
from ._html import strip_tags
from ._http import expect_dict, expect_list, loose_dict, request_json, text_of, tool_policy

__all__ = [
    "WIKIPEDIA_BASE_URL",
    "wikipedia_search",
    "wikipedia_search_tool",
    "wikipedia_summary",
    "wikipedia_summary_tool",
]

WIKIPEDIA_BASE_URL = "https://{language}.wikipedia.org"
"""The root of a language edition; `{language}` is replaced by the language code."""

_LANGUAGE = re.compile(r"^[a-z][a-z0-9-]{1,19}$")
_SERVICE = "Wikipedia"
_ANNOTATIONS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def _root(base_url: str, language: str) -> str:
    code = language.strip().lower()
    if not _LANGUAGE.fullmatch(code):
        raise ToolError(
            f"{language!r} is not a Wikipedia language code; use codes such as 'en', 'pt', 'de' "
            "or 'simple'."
        )
    return base_url.replace("{language}", code).rstrip("/")


def _page_url(root: str, title: str) -> str:
    return f"{root}/wiki/{urllib.parse.quote(title.replace(' ', '_'), safe='')}"


def wikipedia_search_tool(
    *,
    base_url: str = WIKIPEDIA_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
    name: str = "wikipedia_search",
) -> FunctionTool:
    """Build a Wikipedia search tool (MediaWiki Action API, `list=search`).

    Args:
        base_url: A language edition's root with a `{language}` placeholder (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def wikipedia_search(
        query: str,
        language: str = "en",
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
    ) -> dict[str, Any]:
        """Search Wikipedia articles by full text and return matching titles with snippets.

        Use it to find the exact article title, then get the article with wikipedia_summary.

        Args:
            query: Words to search for.
            language: The Wikipedia language edition, e.g. "en", "pt", "de", "ja".
            limit: How many results to return (1 to 20).
        """
        root = _root(base_url, language)
        data = await request_json(
            _SERVICE,
            "GET",
            f"{root}/w/api.php",
            policy=policy,
            params={
                "action": "query",
                "list": "search",
                "srsearch": query,
                "srlimit": limit,
                "format": "json",
                "formatversion": "2",
                "utf8": "1",
            },
        )
        body = expect_dict(data, _SERVICE, "the response")
        if "error" in body:
            error = expect_dict(body["error"], _SERVICE, "error")
            raise ToolError(
                f"Wikipedia refused the search: {text_of(error.get('info')) or text_of(error.get('code'))}."
            )
        found = expect_dict(body.get("query", {}), _SERVICE, "query")
        results: list[dict[str, Any]] = []
        for raw in expect_list(found.get("search", []), _SERVICE, "query.search"):
            item = expect_dict(raw, _SERVICE, "a search result")
            title = text_of(item.get("title"))
            results.append(
                {
                    "title": title,
                    "snippet": strip_tags(text_of(item.get("snippet"))),
                    "url": _page_url(root, title),
                    "words": item.get("wordcount")
                    if isinstance(item.get("wordcount"), int)
                    else None,
                }
            )
        total = loose_dict(found.get("searchinfo")).get("totalhits")
        out: dict[str, Any] = {"query": query, "language": language, "results": results}
        if isinstance(total, int):
            out["total_hits"] = total
        return out

    return tool(wikipedia_search, name=name, annotations=_with_title("Search Wikipedia"))


def wikipedia_summary_tool(
    *,
    base_url: str = WIKIPEDIA_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
    name: str = "wikipedia_summary",
) -> FunctionTool:
    """Build a Wikipedia article summary tool (Wikimedia REST API, `page/summary`).

    Args:
        base_url: A language edition's root with a `{language}` placeholder (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def wikipedia_summary(title: str, language: str = "en") -> dict[str, Any]:
        """Get the summary (lead section) of a Wikipedia article by its title.

        Follows redirects, says when the title is a disambiguation page, and gives the article's
        URL. If the exact title is unknown, find it first with wikipedia_search.

        Args:
            title: The article title, e.g. "Alan Turing".
            language: The Wikipedia language edition, e.g. "en", "pt", "de", "ja".
        """
        root = _root(base_url, language)
        if not title.strip():
            raise ToolError("The title is empty.")
        path = urllib.parse.quote(title.strip().replace(" ", "_"), safe="")
        data = await request_json(
            _SERVICE,
            "GET",
            f"{root}/api/rest_v1/page/summary/{path}",
            policy=policy,
            params={"redirect": "true"},
            not_found=(
                f"Wikipedia ({language}) has no article titled {title!r}; "
                "search for the right title with wikipedia_search"
            ),
        )
        body = expect_dict(data, _SERVICE, "the response")
        page_title = text_of(body.get("title")) or title
        url = loose_dict(loose_dict(body.get("content_urls")).get("desktop")).get("page")
        out: dict[str, Any] = {
            "title": page_title,
            "description": text_of(body.get("description")),
            "extract": text_of(body.get("extract")),
            "url": url if isinstance(url, str) else _page_url(root, page_title),
        }
        if body.get("type") == "disambiguation":
            out["note"] = (
                "This is a disambiguation page listing several meanings; search for a more "
                "specific title."
            )
        return out

    return tool(wikipedia_summary, name=name, annotations=_with_title("Wikipedia summary"))


def _with_title(title: str) -> ToolAnnotations:
    return dataclasses.replace(_ANNOTATIONS, title=title)


wikipedia_search: FunctionTool = wikipedia_search_tool()
"""Search Wikipedia (no key needed)."""

wikipedia_summary: FunctionTool = wikipedia_summary_tool()
"""Summarise a Wikipedia article (no key needed)."""
