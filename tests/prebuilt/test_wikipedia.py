"""Wikipedia tools against a local fake of the Action API and the REST summary endpoint."""

from __future__ import annotations

import pytest
from prebuilt_fakes import FakeDNS, FakeServer, Reply

from toolwire.prebuilt import EgressPolicy, wikipedia_search_tool, wikipedia_summary_tool

pytestmark = pytest.mark.anyio

SEARCH = {
    "batchcomplete": True,
    "continue": {"sroffset": 2, "continue": "-||"},
    "query": {
        "searchinfo": {"totalhits": 8123},
        "search": [
            {
                "ns": 0,
                "title": "Alan Turing",
                "pageid": 1208,
                "size": 160000,
                "wordcount": 16000,
                "snippet": '<span class="searchmatch">Alan</span> Mathison <span class="searchmatch">Turing</span> (23 June 1912 – 7 June 1954) was an English mathematician',
                "timestamp": "2025-11-20T10:00:00Z",
            },
            {
                "ns": 0,
                "title": "Turing machine",
                "pageid": 30403,
                "size": 70000,
                "wordcount": 9000,
                "snippet": "A <span class=\"searchmatch\">Turing</span> machine is a mathematical model &amp; more",
                "timestamp": "2025-11-01T08:00:00Z",
            },
        ],
    },
}  # fmt: skip

SUMMARY = {
    "type": "standard",
    "title": "Alan Turing",
    "displaytitle": '<span class="mw-page-title-main">Alan Turing</span>',
    "namespace": {"id": 0, "text": ""},
    "wikibase_item": "Q7251",
    "pageid": 1208,
    "lang": "en",
    "dir": "ltr",
    "description": "English computer scientist (1912–1954)",
    "description_source": "local",
    "content_urls": {
        "desktop": {"page": "https://en.wikipedia.org/wiki/Alan_Turing"},
        "mobile": {"page": "https://en.m.wikipedia.org/wiki/Alan_Turing"},
    },
    "extract": "Alan Mathison Turing was an English mathematician and computer scientist.",
    "extract_html": "<p><b>Alan Mathison Turing</b> was an English mathematician.</p>",
}

NOT_FOUND = {
    "type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found",
    "title": "Not found.",
    "method": "get",
    "detail": "Page or revision not found.",
    "uri": "/en.wikipedia.org/v1/page/summary/Nonexistent_page",
}


@pytest.fixture
def wiki_policy() -> EgressPolicy:
    dns = FakeDNS({"en.wiki.test": ["127.0.0.1"], "pt.wiki.test": ["127.0.0.1"]})
    return EgressPolicy(allow=["*.wiki.test"], resolver=dns)


async def test_search(server: FakeServer, wiki_policy: EgressPolicy) -> None:
    server.reply("/w/api.php", Reply(200, SEARCH))
    base = f"http://{{language}}.wiki.test:{server.port}"
    search = wikipedia_search_tool(base_url=base, egress=wiki_policy)
    result = await search.invoke({"query": "alan turing", "limit": 2})
    assert not result.is_error, result.text
    data = result.structured
    assert data["total_hits"] == 8123
    assert data["results"][0] == {
        "title": "Alan Turing",
        "snippet": "Alan Mathison Turing (23 June 1912 – 7 June 1954) was an English mathematician",
        "url": f"http://en.wiki.test:{server.port}/wiki/Alan_Turing",
        "words": 16000,
    }
    assert data["results"][1]["snippet"] == "A Turing machine is a mathematical model & more"
    seen = server.seen[-1]
    assert seen.headers["host"] == f"en.wiki.test:{server.port}"
    assert seen.query["list"] == ["search"]
    assert seen.query["srsearch"] == ["alan turing"]
    assert seen.query["srlimit"] == ["2"]


async def test_search_language_picks_the_edition(
    server: FakeServer, wiki_policy: EgressPolicy
) -> None:
    server.reply("/w/api.php", Reply(200, SEARCH))
    base = f"http://{{language}}.wiki.test:{server.port}"
    search = wikipedia_search_tool(base_url=base, egress=wiki_policy)
    await search.invoke({"query": "turing", "language": "pt"})
    assert server.seen[-1].headers["host"] == f"pt.wiki.test:{server.port}"
    bad = await search.invoke({"query": "turing", "language": "evil.com/x"})
    assert bad.is_error
    assert "not a Wikipedia language code" in bad.text


async def test_search_api_error(server: FakeServer, wiki_policy: EgressPolicy) -> None:
    error = {"error": {"code": "missingparam", "info": 'The "srsearch" parameter must be set.'}}
    server.reply("/w/api.php", Reply(200, error))
    search = wikipedia_search_tool(
        base_url=f"http://{{language}}.wiki.test:{server.port}", egress=wiki_policy
    )
    result = await search.invoke({"query": " "})
    assert result.is_error
    assert 'The "srsearch" parameter must be set.' in result.text


async def test_summary_follows_redirects(server: FakeServer, wiki_policy: EgressPolicy) -> None:
    server.reply(
        "/api/rest_v1/page/summary/Turing", Reply(302, headers={"Location": "Alan_Turing"})
    )
    server.reply("/api/rest_v1/page/summary/Alan_Turing", Reply(200, SUMMARY))
    summary = wikipedia_summary_tool(
        base_url=f"http://{{language}}.wiki.test:{server.port}", egress=wiki_policy
    )
    result = await summary.invoke({"title": "Turing"})
    assert not result.is_error, result.text
    assert result.structured == {
        "title": "Alan Turing",
        "description": "English computer scientist (1912–1954)",
        "extract": "Alan Mathison Turing was an English mathematician and computer scientist.",
        "url": "https://en.wikipedia.org/wiki/Alan_Turing",
    }


async def test_summary_disambiguation_and_missing(
    server: FakeServer, wiki_policy: EgressPolicy
) -> None:
    server.reply(
        "/api/rest_v1/page/summary/Mercury",
        Reply(200, {**SUMMARY, "type": "disambiguation", "title": "Mercury", "content_urls": None}),
    )
    server.reply("/api/rest_v1/page/summary/Nonexistent_page", Reply(404, NOT_FOUND))
    summary = wikipedia_summary_tool(
        base_url=f"http://{{language}}.wiki.test:{server.port}", egress=wiki_policy
    )
    mercury = await summary.invoke({"title": "Mercury"})
    assert "disambiguation" in mercury.structured["note"]
    assert mercury.structured["url"] == f"http://en.wiki.test:{server.port}/wiki/Mercury"
    missing = await summary.invoke({"title": "Nonexistent page"})
    assert missing.is_error
    assert "has no article titled 'Nonexistent page'" in missing.text
    assert "Page or revision not found." in missing.text


async def test_title_with_slash_stays_one_path_segment(
    server: FakeServer, wiki_policy: EgressPolicy
) -> None:
    server.reply("/api/rest_v1/page/summary/AC%2FDC", Reply(200, {**SUMMARY, "title": "AC/DC"}))
    summary = wikipedia_summary_tool(
        base_url=f"http://{{language}}.wiki.test:{server.port}", egress=wiki_policy
    )
    result = await summary.invoke({"title": "AC/DC"})
    assert not result.is_error, result.text
    assert result.structured["title"] == "AC/DC"
