"""Ollama's cloud web API as function tools (`OLLAMA_API_KEY`): what `web_search()` and
`web_fetch()` become on Ollama, whose models call them like any tool while toolwire runs them
through the egress guard."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import Field

from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy
from ._http import (
    expect_dict,
    expect_list,
    join_url,
    request_json,
    require_api_key,
    text_of,
    tool_policy,
)

__all__ = ["OLLAMA_WEB_BASE_URL", "ollama_web_fetch_tool", "ollama_web_search_tool"]

OLLAMA_WEB_BASE_URL = "https://ollama.com/api"

_ANNOTATIONS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
_SERVICE = "Ollama web API"


def ollama_web_search_tool(
    api_key: str | None = None,
    *,
    base_url: str = OLLAMA_WEB_BASE_URL,
    timeout: float = 20.0,
    egress: EgressPolicy | None = None,
    name: str = "web_search",
) -> FunctionTool:
    """A web search tool backed by Ollama's `web_search` API.

    Args:
        api_key: The ollama.com key; read from `OLLAMA_API_KEY` at call time when `None`.
        base_url: The API root (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def web_search(
        query: str, max_results: Annotated[int, Field(ge=1, le=10)] = 5
    ) -> dict[str, Any]:
        """Search the web and return the top results with their content.

        Args:
            query: The search query, in plain words.
            max_results: How many results to return (1 to 10).
        """
        key = require_api_key(api_key, "OLLAMA_API_KEY", _SERVICE, "ollama_web_search_tool")
        data = await request_json(
            _SERVICE,
            "POST",
            join_url(base_url, "web_search"),
            policy=policy,
            headers={"Authorization": f"Bearer {key}"},
            json_body={"query": query, "max_results": max_results},
        )
        body = expect_dict(data, _SERVICE, "the response")
        results: list[dict[str, str]] = []
        for raw in expect_list(body.get("results", []), _SERVICE, "results"):
            item = expect_dict(raw, _SERVICE, "a result")
            results.append(
                {
                    "title": text_of(item.get("title")),
                    "url": text_of(item.get("url")),
                    "content": text_of(item.get("content")),
                }
            )
        return {"query": query, "results": results}

    return tool(
        web_search,
        name=name,
        annotations=dataclasses.replace(_ANNOTATIONS, title="Ollama web search"),
    )


def ollama_web_fetch_tool(
    api_key: str | None = None,
    *,
    base_url: str = OLLAMA_WEB_BASE_URL,
    timeout: float = 20.0,
    egress: EgressPolicy | None = None,
    name: str = "web_fetch",
) -> FunctionTool:
    """A page fetching tool backed by Ollama's `web_fetch` API.

    Args:
        api_key: The ollama.com key; read from `OLLAMA_API_KEY` at call time when `None`.
        base_url: The API root (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
        name: The tool's name.
    """
    policy = tool_policy(egress, timeout)

    async def web_fetch(url: str) -> dict[str, Any]:
        """Fetch a web page and return its title, text content and links.

        Args:
            url: The page's address.
        """
        key = require_api_key(api_key, "OLLAMA_API_KEY", _SERVICE, "ollama_web_fetch_tool")
        data = await request_json(
            _SERVICE,
            "POST",
            join_url(base_url, "web_fetch"),
            policy=policy,
            headers={"Authorization": f"Bearer {key}"},
            json_body={"url": url},
        )
        body = expect_dict(data, _SERVICE, "the response")
        links = [text_of(x) for x in expect_list(body.get("links", []), _SERVICE, "links")]
        return {
            "url": url,
            "title": text_of(body.get("title")),
            "content": text_of(body.get("content")),
            "links": links,
        }

    return tool(
        web_fetch,
        name=name,
        annotations=dataclasses.replace(_ANNOTATIONS, title="Ollama web fetch"),
    )
