"""Web search tools: Brave Search (`BRAVE_API_KEY`) and Tavily (`TAVILY_API_KEY`)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from pydantic import Field

from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy
from ._html import strip_tags
from ._http import (
    expect_dict,
    expect_list,
    join_url,
    loose_list,
    request_json,
    require_api_key,
    text_of,
    tool_policy,
)

__all__ = [
    "BRAVE_BASE_URL",
    "TAVILY_BASE_URL",
    "brave_search",
    "brave_search_tool",
    "tavily_search",
    "tavily_search_tool",
]

BRAVE_BASE_URL = "https://api.search.brave.com/res/v1"
TAVILY_BASE_URL = "https://api.tavily.com"

_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}

_SEARCH_ANNOTATIONS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def brave_search_tool(
    api_key: str | None = None,
    *,
    base_url: str = BRAVE_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
    name: str = "brave_search",
) -> FunctionTool:
    """Build a web search tool backed by the Brave Search API.

    Args:
        api_key: The subscription token; read from `BRAVE_API_KEY` at call time when `None`.
        base_url: The API root (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)
    service = "Brave Search"

    async def brave_search(
        query: str,
        count: Annotated[int, Field(ge=1, le=20)] = 5,
        country: str | None = None,
        freshness: Literal["day", "week", "month", "year"] | None = None,
        offset: Annotated[int, Field(ge=0, le=9)] = 0,
    ) -> dict[str, Any]:
        """Search the web with Brave Search and return the top results.

        Each result has a title, URL, description, and when known its age and extra snippets.
        Use it for current events and facts you are not sure of; open a result with a page
        fetching tool when you need its full text.

        Args:
            query: What to search for, as you would type it in a search box.
            count: How many results to return (1 to 20).
            country: Two-letter country code to favour results from, e.g. "US" or "BR".
            freshness: Only results from the last day, week, month or year.
            offset: Page of results to return, starting at 0.
        """
        key = require_api_key(api_key, "BRAVE_API_KEY", service, "brave_search_tool")
        params: dict[str, Any] = {
            "q": query,
            "count": count,
            "offset": offset,
            "country": country.upper() if country else None,
            "freshness": _FRESHNESS[freshness] if freshness else None,
            "text_decorations": "false",
        }
        data = await request_json(
            service,
            "GET",
            join_url(base_url, "web/search"),
            policy=policy,
            params=params,
            headers={"X-Subscription-Token": key},
        )
        body = expect_dict(data, service, "the response")
        # No "web" section at all simply means no web results (e.g. a query with only news).
        web = expect_dict(body.get("web", {}), service, "web")
        items = expect_list(web.get("results", []), service, "web.results")
        results: list[dict[str, Any]] = []
        for raw in items:
            item = expect_dict(raw, service, "a result")
            result: dict[str, Any] = {
                "title": strip_tags(text_of(item.get("title"))),
                "url": text_of(item.get("url")),
                "description": strip_tags(text_of(item.get("description"))),
            }
            if text_of(item.get("age")):
                result["age"] = text_of(item.get("age"))
            extra = [strip_tags(text_of(s)) for s in loose_list(item.get("extra_snippets"))[:5]]
            if extra:
                result["extra_snippets"] = extra
            results.append(result)
        original = expect_dict(body.get("query", {}), service, "query").get("original")
        return {"query": text_of(original) or query, "results": results}

    return tool(
        brave_search,
        name=name,
        annotations=dataclasses.replace(_SEARCH_ANNOTATIONS, title="Brave web search"),
    )


def tavily_search_tool(
    api_key: str | None = None,
    *,
    base_url: str = TAVILY_BASE_URL,
    timeout: float = 20.0,
    egress: EgressPolicy | None = None,
    name: str = "tavily_search",
) -> FunctionTool:
    """Build a web search tool backed by the Tavily search API.

    Args:
        api_key: The Tavily key; read from `TAVILY_API_KEY` at call time when `None`.
        base_url: The API root (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)
    service = "Tavily"

    async def tavily_search(
        query: str,
        max_results: Annotated[int, Field(ge=1, le=20)] = 5,
        topic: Literal["general", "news", "finance"] = "general",
        search_depth: Literal["basic", "advanced"] = "basic",
        time_range: Literal["day", "week", "month", "year"] | None = None,
        include_answer: bool = True,
        include_domains: list[str] | None = None,
        exclude_domains: list[str] | None = None,
    ) -> dict[str, Any]:
        """Search the web with Tavily, built for AI agents: relevant extracts and a short answer.

        Returns a brief answer (when asked for) and results with title, URL, the most relevant
        content of the page and a relevance score.

        Args:
            query: The search query, in plain words.
            max_results: How many results to return (1 to 20).
            topic: "general", "news" for recent reporting, or "finance".
            search_depth: "basic" is fast; "advanced" digs deeper and costs more.
            time_range: Only results from the last day, week, month or year.
            include_answer: Also return a short answer written from the results.
            include_domains: Only search these domains, e.g. ["python.org"].
            exclude_domains: Never return results from these domains.
        """
        key = require_api_key(api_key, "TAVILY_API_KEY", service, "tavily_search_tool")
        payload: dict[str, Any] = {
            "query": query,
            "max_results": max_results,
            "topic": topic,
            "search_depth": search_depth,
            "include_answer": include_answer,
        }
        if time_range:
            payload["time_range"] = time_range
        if include_domains:
            payload["include_domains"] = include_domains
        if exclude_domains:
            payload["exclude_domains"] = exclude_domains
        data = await request_json(
            service,
            "POST",
            join_url(base_url, "search"),
            policy=policy,
            headers={"Authorization": f"Bearer {key}"},
            json_body=payload,
        )
        body = expect_dict(data, service, "the response")
        results: list[dict[str, Any]] = []
        for raw in expect_list(body.get("results", []), service, "results"):
            item = expect_dict(raw, service, "a result")
            result: dict[str, Any] = {
                "title": text_of(item.get("title")),
                "url": text_of(item.get("url")),
                "content": text_of(item.get("content")),
            }
            score = item.get("score")
            if isinstance(score, int | float) and not isinstance(score, bool):
                result["score"] = round(float(score), 4)
            results.append(result)
        out: dict[str, Any] = {"query": text_of(body.get("query")) or query, "results": results}
        answer = text_of(body.get("answer"))
        if answer:
            out["answer"] = answer
        return out

    return tool(
        tavily_search,
        name=name,
        annotations=dataclasses.replace(_SEARCH_ANNOTATIONS, title="Tavily web search"),
    )


brave_search: FunctionTool = brave_search_tool()
"""Brave Search with the key from `BRAVE_API_KEY` (read at call time)."""

tavily_search: FunctionTool = tavily_search_tool()
"""Tavily search with the key from `TAVILY_API_KEY` (read at call time)."""
