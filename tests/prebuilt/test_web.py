"""fetch_url and http_request against a local server, through the egress guard."""

from __future__ import annotations

import json
import socket

import pytest
from prebuilt_fakes import FakeServer, Reply, Seen

from toolwire.prebuilt import EgressPolicy, fetch_url, fetch_url_tool, http_request_tool
from toolwire.prebuilt._html import html_to_markdown, html_to_text, strip_tags

pytestmark = pytest.mark.anyio

PAGE = """<!doctype html>
<html><head><title>  The Example   Page </title>
<style>body { color: red }</style><script>alert("x")</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Welcome to <em>Example</em></h1>
<p>This page has <b>bold</b> text, a <a href="/docs/intro?x=1">relative link</a>
and an <a href="https://other.example/">absolute one</a>.</p>
<h2>List</h2>
<ul><li>first</li><li>second <code>x = 1</code></li></ul>
<ol><li>one</li><li>two</li></ol>
<pre>def f():
    return 42</pre>
<blockquote>A quote.</blockquote>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<p>Caf&eacute; &amp; cr&egrave;me<br>second line</p>
<img src="cat.png" alt="A cat">
<footer>Footer text</footer>
</body></html>"""


def test_html_to_markdown() -> None:
    title, markdown = html_to_markdown(PAGE, "https://example.test/start/page.html")
    assert title == "The Example Page"
    assert "# Welcome to *Example*" in markdown
    assert "[relative link](https://example.test/docs/intro?x=1)" in markdown
    assert "[absolute one](https://other.example/)" in markdown
    assert "- first\n- second `x = 1`" in markdown
    assert "1. one\n2. two" in markdown
    assert "```\ndef f():\n    return 42\n```" in markdown
    assert "> A quote." in markdown
    assert "| Name | Value |\n| --- | --- |\n| a | 1 |" in markdown
    assert "Café & crème\nsecond line" in markdown
    assert "[image: A cat]" in markdown
    for dropped in ("alert", "color: red", "Footer text", "Home"):
        assert dropped not in markdown


def test_html_to_text_and_strip_tags() -> None:
    _title, text = html_to_text(PAGE)
    assert "Welcome to Example" in text
    assert "relative link" in text and "](" not in text
    assert "**" not in text
    assert strip_tags('x <span class="searchmatch">y</span> &lt;z&gt;') == "x y <z>"


@pytest.fixture
def site(server: FakeServer) -> tuple[FakeServer, EgressPolicy]:
    from prebuilt_fakes import FakeDNS

    dns = FakeDNS({"site.test": ["127.0.0.1"]})
    return server, EgressPolicy(allow=["site.test"], resolver=dns)


async def test_fetch_url_markdown_after_redirect(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    server.reply("/old", Reply(301, headers={"Location": "/page"}))
    server.reply("/page", Reply(200, PAGE, {"Content-Type": "text/html; charset=utf-8"}))
    fetch = fetch_url_tool(egress=policy)
    result = await fetch.invoke({"url": f"http://site.test:{server.port}/old"})
    assert not result.is_error, result.text
    data = result.structured
    assert data["url"] == f"http://site.test:{server.port}/page"
    assert data["status"] == 200
    assert data["title"] == "The Example Page"
    assert data["content"].startswith("# Welcome to *Example*")
    assert f"(http://site.test:{server.port}/docs/intro?x=1)" in data["content"]
    assert data["next_offset"] is None


async def test_fetch_url_pages_through_long_content(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    server.reply("/long", Reply(200, "abcdefghij" * 10, {"Content-Type": "text/plain"}))
    fetch = fetch_url_tool(egress=policy)
    url = f"http://site.test:{server.port}/long"
    first = await fetch.invoke({"url": url, "max_chars": 30})
    assert first.structured["content"] == "abcdefghij" * 3
    assert first.structured["next_offset"] == 30
    assert first.structured["total_chars"] == 100
    last = await fetch.invoke({"url": url, "max_chars": 80, "offset": 30})
    assert last.structured["content"] == "abcdefghij" * 7
    assert last.structured["next_offset"] is None


async def test_fetch_url_text_raw_and_charset(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    latin = "<html><body><p>Ol\xe1, s\xe3o</p></body></html>".encode("latin-1")
    server.reply("/latin", Reply(200, latin, {"Content-Type": "text/html; charset=ISO-8859-1"}))
    fetch = fetch_url_tool(egress=policy)
    url = f"http://site.test:{server.port}/latin"
    text = await fetch.invoke({"url": url, "format": "text"})
    assert text.structured["content"] == "Olá, são"
    raw = await fetch.invoke({"url": url, "format": "raw"})
    assert raw.structured["content"].startswith("<html><body><p>Olá")


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(404, "<h1>nope</h1>", {"Content-Type": "text/html"}), "HTTP 404 Not Found"),
        (Reply(500, "boom", {"Content-Type": "text/plain"}), "HTTP 500"),
        (Reply(200, b"\x89PNG\r\n\x1a\n\x00\x00", {"Content-Type": "image/png"}), "not a text document (image/png"),
    ],
)  # fmt: skip
async def test_fetch_url_failures(
    site: tuple[FakeServer, EgressPolicy], reply: Reply, fragment: str
) -> None:
    server, policy = site
    server.reply("/x", reply)
    result = await fetch_url_tool(egress=policy).invoke(
        {"url": f"http://site.test:{server.port}/x"}
    )
    assert result.is_error
    assert fragment in result.text, result.text


async def test_fetch_url_caps_the_download(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    server.reply(
        "/huge", Reply(200, stream_bytes=20_000_000, headers={"Content-Type": "text/plain"})
    )
    fetch = fetch_url_tool(egress=policy, max_bytes=50_000)
    result = await fetch.invoke({"url": f"http://site.test:{server.port}/huge", "max_chars": 10})
    assert not result.is_error, result.text
    assert result.structured["total_chars"] == 50_000
    assert "only the start was read" in result.structured["note"]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://2130706433/",
        "file:///etc/passwd",
        "http://localhost:8080/",
    ],
)
async def test_default_fetch_url_refuses_internal_targets(url: str) -> None:
    result = await fetch_url.invoke({"url": url})
    assert result.is_error
    assert result.text.startswith("Blocked request to")


async def test_fetch_url_connection_failure_is_clear() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = EgressPolicy(allow=["127.0.0.1"])
    result = await fetch_url_tool(egress=policy).invoke({"url": f"http://127.0.0.1:{port}/"})
    assert result.is_error
    assert f"Could not connect to http://127.0.0.1:{port}/" in result.text


async def test_http_request_post_json(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site

    def echo(seen: Seen) -> Reply:
        return Reply(
            201,
            {"received": seen.json(), "query": seen.query, "token": seen.headers.get("x-token")},
            {"X-Request-Id": "abc", "Set-Cookie": "session=secret"},
        )

    server.route("/items", method="POST")(echo)
    request = http_request_tool(egress=policy)
    result = await request.invoke(
        {
            "url": f"http://site.test:{server.port}/items",
            "method": "post",
            "headers": [{"name": "X-Token", "value": "t"}],
            "query": [
                {"name": "dry_run", "value": "1"},
                {"name": "tag", "value": "a"},
                {"name": "tag", "value": "b"},
            ],
            "json_body": {"name": "widget", "qty": 2},
        }
    )
    assert not result.is_error, result.text
    data = result.structured
    assert data["status"] == 201
    assert data["reason"] == "Created"
    assert data["json"] == {
        "received": {"name": "widget", "qty": 2},
        "query": {"dry_run": ["1"], "tag": ["a", "b"]},
        "token": "t",
    }
    assert data["headers"]["x-request-id"] == "abc"
    assert "set-cookie" not in data["headers"]
    assert data["body_truncated"] is False


async def test_http_request_error_status_is_a_normal_result(
    site: tuple[FakeServer, EgressPolicy],
) -> None:
    server, policy = site
    server.reply(
        "/gone", Reply(410, "gone for good", {"Content-Type": "text/plain"}), method="DELETE"
    )
    result = await http_request_tool(egress=policy).invoke(
        {"url": f"http://site.test:{server.port}/gone", "method": "DELETE"}
    )
    assert not result.is_error
    assert result.structured["status"] == 410
    assert result.structured["body"] == "gone for good"


async def test_http_request_text_body_and_truncation(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    server.route("/echo", method="PUT")(
        lambda seen: Reply(200, seen.body.decode() * 10, {"Content-Type": "text/plain"})
    )
    result = await http_request_tool(egress=policy).invoke(
        {
            "url": f"http://site.test:{server.port}/echo",
            "method": "PUT",
            "text_body": "hello ",
            "max_chars": 12,
        }
    )
    assert result.structured["body"] == "hello hello "
    assert result.structured["body_truncated"] is True
    assert server.seen[-1].body == b"hello "


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"method": "TRACE"}, "Method 'TRACE' is not allowed"),
        ({"headers": [{"name": "Host", "value": "evil"}]}, "The Host header cannot be set"),
        ({"headers": [{"name": "Transfer-Encoding", "value": "chunked"}]}, "cannot be set"),
        ({"json_body": {"a": 1}, "text_body": "x"}, "not both"),
    ],
)
async def test_http_request_refusals(
    site: tuple[FakeServer, EgressPolicy], args: dict[str, object], fragment: str
) -> None:
    server, policy = site
    result = await http_request_tool(egress=policy).invoke(
        {"url": f"http://site.test:{server.port}/x", **args}
    )
    assert result.is_error
    assert fragment in result.text
    assert server.seen == []


async def test_http_request_method_allowlist(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    read_only = http_request_tool(egress=policy, methods=("GET", "HEAD"))
    result = await read_only.invoke({"url": f"http://site.test:{server.port}/x", "method": "POST"})
    assert result.is_error
    assert "use one of GET, HEAD" in result.text


def test_http_request_annotations() -> None:
    tool = http_request_tool(requires_approval=True)
    assert tool.requires_approval
    assert tool.annotations.destructive_hint is True
    assert tool.annotations.read_only_hint is False
    assert fetch_url.annotations.read_only_hint is True
    assert json.dumps(fetch_url.parameters)


async def test_fetch_url_argument_bounds(site: tuple[FakeServer, EgressPolicy]) -> None:
    server, policy = site
    result = await fetch_url_tool(egress=policy).invoke(
        {"url": f"http://site.test:{server.port}/", "max_chars": 0, "offset": -1}
    )
    assert result.is_error
    assert "max_chars" in result.text and "offset" in result.text
    assert server.seen == []
