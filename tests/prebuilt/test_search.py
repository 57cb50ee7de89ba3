"""Brave Search and Tavily tools against local fakes shaped like the real APIs."""

from __future__ import annotations

import pytest
from prebuilt_fakes import FakeServer, Reply, Seen

from toolwire.errors import RetryableError
from toolwire.prebuilt import EgressPolicy, brave_search, brave_search_tool, tavily_search_tool

pytestmark = pytest.mark.anyio

BRAVE_OK = {
    "type": "search",
    "query": {
        "original": "python asyncio",
        "show_strict_warning": False,
        "is_navigational": False,
        "spellcheck_off": True,
        "country": "us",
        "more_results_available": True,
    },
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "title": "asyncio — Asynchronous I/O — Python 3 documentation",
                "url": "https://docs.python.org/3/library/asyncio.html",
                "is_source_local": False,
                "description": "<strong>asyncio</strong> is a library to write concurrent code using the async/await syntax.",
                "page_age": "2025-01-10T00:00:00",
                "profile": {"name": "Python", "long_name": "docs.python.org"},
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "meta_url": {"scheme": "https", "netloc": "docs.python.org", "hostname": "docs.python.org"},
                "age": "January 10, 2025",
                "extra_snippets": ["Hello World!", "asyncio provides a set of high-level APIs"],
            },
            {
                "title": "Real Python: Async IO in Python",
                "url": "https://realpython.com/async-io-python/",
                "description": "A walkthrough of <strong>async</strong> IO.",
                "type": "search_result",
            },
        ],
    },
}  # fmt: skip

BRAVE_BAD_TOKEN = {
    "type": "ErrorResponse",
    "error": {
        "id": "c5e9a5b1-0000-4000-8000-000000000000",
        "status": 422,
        "code": "SUBSCRIPTION_TOKEN_INVALID",
        "detail": "The provided subscription token is invalid.",
        "meta": {"component": "authentication"},
    },
    "time": 1764500000,
}

BRAVE_RATE_LIMITED = {
    "type": "ErrorResponse",
    "error": {
        "id": "d1",
        "status": 429,
        "code": "RATE_LIMITED",
        "detail": "Request rate limit exceeded for plan.",
        "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2, "component": "rate_limiter"},
    },
    "time": 1764500000,
}

TAVILY_OK = {
    "query": "Who is Leo Messi?",
    "follow_up_questions": None,
    "answer": "Lionel Messi, born in 1987, is an Argentine footballer.",
    "images": [],
    "results": [
        {
            "title": "Lionel Messi Facts | Britannica",
            "url": "https://www.britannica.com/facts/Lionel-Messi",
            "content": "Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest.",
            "score": 0.81025416,
            "raw_content": None,
        },
        {
            "title": "Lionel Messi - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
            "content": "Lionel Andrés Messi is an Argentine professional footballer.",
            "score": 0.7,
            "raw_content": None,
        },
    ],
    "response_time": "1.67",
    "request_id": "123e4567-e89b-12d3-a456-426614174111",
}


async def test_brave_search(server: FakeServer, local_policy: EgressPolicy) -> None:
    server.reply("/res/v1/web/search", Reply(200, BRAVE_OK))
    search = brave_search_tool("brave-key", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "python asyncio", "count": 2, "freshness": "week"})
    assert not result.is_error, result.text
    data = result.structured
    assert data["query"] == "python asyncio"
    first, second = data["results"]
    assert first == {
        "title": "asyncio — Asynchronous I/O — Python 3 documentation",
        "url": "https://docs.python.org/3/library/asyncio.html",
        "description": "asyncio is a library to write concurrent code using the async/await syntax.",
        "age": "January 10, 2025",
        "extra_snippets": ["Hello World!", "asyncio provides a set of high-level APIs"],
    }
    assert second["description"] == "A walkthrough of async IO."
    seen: Seen = server.seen[-1]
    assert seen.headers["x-subscription-token"] == "brave-key"
    assert seen.headers["accept"] == "application/json"
    assert seen.query["q"] == ["python asyncio"]
    assert seen.query["count"] == ["2"]
    assert seen.query["freshness"] == ["pw"]
    assert "country" not in seen.query


async def test_brave_without_web_results(server: FakeServer, local_policy: EgressPolicy) -> None:
    server.reply("/res/v1/web/search", Reply(200, {"type": "search", "query": {"original": "zzz"}}))
    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "zzz"})
    assert result.structured == {"query": "zzz", "results": []}


async def test_missing_key_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, server: FakeServer
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    result = await brave_search.invoke({"query": "x"})
    assert result.is_error
    assert "BRAVE_API_KEY" in result.text
    assert server.seen == []


async def test_key_is_read_from_the_environment_at_call_time(
    monkeypatch: pytest.MonkeyPatch, server: FakeServer, local_policy: EgressPolicy
) -> None:
    server.reply("/res/v1/web/search", Reply(200, BRAVE_OK))
    search = brave_search_tool(base_url=f"{server.url}/res/v1", egress=local_policy)
    monkeypatch.setenv("BRAVE_API_KEY", "from-env")
    result = await search.invoke({"query": "python"})
    assert not result.is_error
    assert server.seen[-1].headers["x-subscription-token"] == "from-env"


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(422, BRAVE_BAD_TOKEN), "The provided subscription token is invalid."),
        (Reply(401, {"message": "Unauthorized"}), "Check the API key"),
        (Reply(429, BRAVE_RATE_LIMITED, {"Retry-After": "1"}), "rate limiting"),
        (Reply(503, "upstream overloaded", {"Content-Type": "text/plain"}), "upstream overloaded"),
        (Reply(200, "{not json", {"Content-Type": "application/json"}), "not valid JSON"),
        (Reply(200, {"web": {"results": "nope"}}), "web.results is not a JSON array"),
        (Reply(200, {"web": {"results": ["nope"]}}), "a result is not a JSON object"),
    ],
)
async def test_brave_errors(
    server: FakeServer, local_policy: EgressPolicy, reply: Reply, fragment: str
) -> None:
    server.reply("/res/v1/web/search", reply)
    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "q"})
    assert result.is_error
    assert result.text.startswith("Brave Search")
    assert fragment in result.text, result.text


async def test_brave_rate_limit_is_retryable(
    server: FakeServer, local_policy: EgressPolicy
) -> None:
    server.reply("/res/v1/web/search", Reply(429, BRAVE_RATE_LIMITED, {"Retry-After": "3"}))
    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "q"})
    assert isinstance(result.error, RetryableError)
    assert result.error.retry_after == 3.0


async def test_brave_arguments_are_validated(
    server: FakeServer, local_policy: EgressPolicy
) -> None:
    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "q", "count": 50})
    assert result.is_error
    assert "count" in result.text
    assert server.seen == []


async def test_tavily_search(server: FakeServer, local_policy: EgressPolicy) -> None:
    server.reply("/search", Reply(200, TAVILY_OK), method="POST")
    search = tavily_search_tool("tvly-key", base_url=server.url, egress=local_policy)
    result = await search.invoke(
        {"query": "Who is Leo Messi?", "max_results": 2, "include_domains": ["britannica.com"]}
    )
    assert not result.is_error, result.text
    data = result.structured
    assert data["answer"].startswith("Lionel Messi, born in 1987")
    assert data["results"][0] == {
        "title": "Lionel Messi Facts | Britannica",
        "url": "https://www.britannica.com/facts/Lionel-Messi",
        "content": "Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest.",
        "score": 0.8103,
    }
    seen = server.seen[-1]
    assert seen.headers["authorization"] == "Bearer tvly-key"
    assert seen.json() == {
        "query": "Who is Leo Messi?",
        "max_results": 2,
        "topic": "general",
        "search_depth": "basic",
        "include_answer": True,
        "include_domains": ["britannica.com"],
    }


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}), "missing or invalid API key"),
        (Reply(432, {"detail": {"error": "This request exceeds your plan's set usage limit."}}), "HTTP 432"),
        (Reply(500, {"detail": {"error": "Internal error"}}), "server error"),
        (Reply(200, {"results": {"a": 1}}), "results is not a JSON array"),
    ],
)  # fmt: skip
async def test_tavily_errors(
    server: FakeServer, local_policy: EgressPolicy, reply: Reply, fragment: str
) -> None:
    server.reply("/search", reply, method="POST")
    search = tavily_search_tool("k", base_url=server.url, egress=local_policy)
    result = await search.invoke({"query": "q"})
    assert result.is_error
    assert result.text.startswith("Tavily")
    assert fragment in result.text, result.text


async def test_tavily_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    result = await tavily_search_tool().invoke({"query": "q"})
    assert result.is_error
    assert "TAVILY_API_KEY" in result.text
    assert "tavily_search_tool" in result.text


async def test_with_retry_retries_a_busy_upstream(
    server: FakeServer, local_policy: EgressPolicy
) -> None:
    from toolwire.middleware import apply_middleware, with_retry

    answers = [Reply(503, {"message": "busy"}, {"Retry-After": "0"}), Reply(200, BRAVE_OK)]
    server.route("/res/v1/web/search")(lambda _seen: answers.pop(0))
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    retrying = apply_middleware(search, with_retry(3, sleep=record))
    result = await retrying.invoke({"query": "python asyncio"})
    assert not result.is_error, result.text
    assert len(server.seen) == 2
    assert len(waits) == 1


@pytest.mark.parametrize("retry_after", ["not a date", "Wed, 21 Oct 2015 07:28:00 GMT", ""])
async def test_odd_retry_after_headers(
    server: FakeServer, local_policy: EgressPolicy, retry_after: str
) -> None:
    server.reply("/res/v1/web/search", Reply(429, BRAVE_RATE_LIMITED, {"Retry-After": retry_after}))
    search = brave_search_tool("k", base_url=f"{server.url}/res/v1", egress=local_policy)
    result = await search.invoke({"query": "q"})
    assert isinstance(result.error, RetryableError)
    assert "rate limiting" in result.text
