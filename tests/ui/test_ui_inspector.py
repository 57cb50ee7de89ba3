"""The MCP server inspector of `toolwire web`: its API against a real toolwire MCP server on a
free port (listings, every dialect's schema and cost, a call, the raw JSON-RPC exchange)."""

from __future__ import annotations

import base64
import json
import os
import shlex
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import httpx2
import pytest
from inspected_server import (
    CLIENT,
    HOSTILE_HTML,
    ISSUED,
    PNG,
    PROMPTS,
    RESOURCES,
    TOOLS,
    serve_signed_in,
)
from ui_helpers import ROOT, serve

from _ports import free_port
from toolwire import Agent, ScriptedModel
from toolwire._web import web_app
from toolwire._web.inspector import _content  # pyright: ignore[reportPrivateUsage]
from toolwire._web.wire import Exchange, Recording
from toolwire.mcp import create_app

pytestmark = pytest.mark.anyio

TOKEN = "a-test-token-long-enough-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}
SERVER_TOKEN = "the-inspected-server-token-0123456789"
SERVER_SCRIPT = Path(__file__).with_name("inspected_server.py")
HOSTILE = '<img src=x onerror="window.pwned=1">\x1b[31mred'


@pytest.fixture
async def mcp_url() -> AsyncIterator[str]:
    app = create_app(
        TOOLS, resources=RESOURCES, prompts=PROMPTS, name=HOSTILE, auth_token=SERVER_TOKEN
    )
    async with serve(app) as base:
        yield f"{base}/mcp"


@pytest.fixture
async def page() -> AsyncIterator[httpx.AsyncClient]:
    app = web_app(
        Agent(ScriptedModel([])),
        token=TOKEN,
        allowed_hosts=["127.0.0.1"],
        info={"model": "m", "tools": []},
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH, timeout=60
    ) as http:
        try:
            yield http
        finally:
            await http.post("/api/inspector/disconnect", json={})


def sent_methods(exchange: list[dict[str, Any]]) -> list[str]:
    return [
        json.loads(e["body"]).get("method", "")
        for e in exchange
        if e["direction"] == "sent" and e["body"].startswith("{")
    ]


async def test_connect_lists_tools_resources_prompts_and_records_the_exchange(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    answer = await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["server"]["name"] == HOSTILE  # passed on as data; the page shows it as text
    assert [t["name"] for t in found["tools"]] == ["calculator", "shout_loud"]
    assert found["tools"][1]["description"].startswith("<script>")
    assert [r["uri"] for r in found["resources"]] == [
        "config://app",
        "notes://hostile",
        "image://dot",
        "image://vector",
    ]
    assert [t["uriTemplate"] for t in found["resourceTemplates"]] == ["weather://{city}/now"]
    assert [p["name"] for p in found["prompts"]] == ["review"]
    methods = sent_methods(found["exchange"])
    assert "tools/list" in methods and "resources/list" in methods and "prompts/list" in methods
    received = [e for e in found["exchange"] if e["direction"] == "received"]
    assert any('"tools"' in e["body"] and "calculator" in e["body"] for e in received)
    assert all(json.loads(e["body"])["jsonrpc"] == "2.0" for e in received if e["body"])
    assert all(SERVER_TOKEN not in e["body"] for e in found["exchange"])


async def test_a_tool_compiled_for_every_dialect_with_changes_and_cost(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    answer = (await page.post("/api/inspector/tool", json={"name": "shout_loud"})).json()
    by_dialect = {d["dialect"]: d for d in answer["dialects"]}
    assert set(by_dialect) == {
        "openai-strict",
        "openai",
        "anthropic",
        "anthropic-strict",
        "gemini",
        "mcp",
    }
    strict = by_dialect["openai-strict"]
    assert strict["schema"]["additionalProperties"] is False
    assert sorted(strict["schema"]["required"]) == ["loud", "text", "times"]
    assert any("times" in change for change in strict["changes"])  # made nullable, reported
    assert all(d["tokens"] > 0 for d in answer["dialects"])
    assert answer["inputSchema"]["properties"]["times"]["type"] == "integer"


async def test_calling_a_tool_shows_its_result_and_the_call_on_the_wire(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    body = {"name": "calculator", "arguments": {"expression": "6*7"}}
    answer = (await page.post("/api/inspector/call", json=body)).json()
    assert (answer["isError"], answer["text"]) == (False, "42")
    assert sent_methods(answer["exchange"])[-1] == "tools/call"
    assert any(e["direction"] == "received" and "42" in e["body"] for e in answer["exchange"][-3:])
    failed = await page.post(
        "/api/inspector/call", json={"name": "calculator", "arguments": {"expression": "1/"}}
    )
    assert failed.json()["isError"] is True
    log = (await page.get("/api/inspector/exchange")).json()["exchange"]
    assert log == failed.json()["exchange"]


async def test_bad_input_and_refused_connections(mcp_url: str, page: httpx.AsyncClient) -> None:
    no_token = await page.post(
        "/api/inspector/connect", json={"url": mcp_url}, headers={"authorization": ""}
    )
    assert no_token.status_code == 401
    other_site = await page.post(
        "/api/inspector/connect",
        json={"url": mcp_url},
        headers={"origin": "http://evil.example"},
    )
    assert other_site.status_code == 403
    scheme = await page.post("/api/inspector/connect", json={"url": "file:///etc/passwd"})
    assert scheme.status_code == 400
    early = await page.post("/api/inspector/call", json={"name": "calculator", "arguments": {}})
    assert early.status_code == 400 and "connect" in early.json()["error"]
    refused = await page.post("/api/inspector/connect", json={"url": mcp_url})  # no server token
    assert refused.status_code == 502 and "401" in refused.text
    unknown = await page.post("/api/inspector/tool", json={"name": "calculator"})
    assert unknown.status_code == 400  # the refused connection left nothing connected


async def test_sse_answers_are_recorded_event_by_event_as_they_arrive() -> None:
    # Servers of the handshake era answer with SSE streams; the events come in any chunking.
    events = [{"jsonrpc": "2.0", "method": "notifications/progress"}, {"jsonrpc": "2.0", "id": 1}]
    body = "".join(f"event: message\r\ndata: {json.dumps(e)}\r\n\r\n" for e in events).encode()
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    record = Exchange()
    recording = Recording(record, httpx2.MockTransport(answer))
    async with (
        httpx2.AsyncClient(transport=recording) as http,
        http.stream("POST", "http://mcp.test/mcp", json={"id": 1}) as response,
    ):
        got = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert got == body  # passed on untouched
    sent, *received = list(record.entries)
    assert (sent["direction"], json.loads(sent["body"])) == ("sent", {"id": 1})
    assert [json.loads(e["body"]) for e in received] == events
    assert {e["http"] for e in received} == {"200 text/event-stream"}


async def test_reading_resources_gives_text_and_checked_images_never_markup(
    mcp_url: str, page: httpx.AsyncClient
) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})

    async def read(uri: str) -> dict[str, Any]:
        answer = await page.post("/api/inspector/read", json={"uri": uri})
        assert answer.status_code == 200, answer.text
        (content,) = answer.json()["contents"]
        return content

    note = await read("notes://hostile")
    assert note == {
        "type": "text",
        "mimeType": "text/html",
        "text": HOSTILE_HTML,
        "chars": len(HOSTILE_HTML),
        "uri": "notes://hostile",
    }
    image = await read("image://dot")
    assert (image["type"], image["mimeType"], image["bytes"]) == ("image", "image/png", len(PNG))
    assert base64.b64decode(image["data"]) == PNG
    svg = await read("image://vector")  # markup with script: never an image
    assert svg["type"] == "binary" and "data" not in svg and svg["mimeType"] == "image/svg+xml"
    filled = await read("weather://Paris/now")  # a template, filled by the page's form
    assert filled["text"] == "Weather in Paris: sunny <b>Paris</b>"
    methods = sent_methods((await page.get("/api/inspector/exchange")).json()["exchange"])
    assert methods.count("resources/read") == 4

    unknown = await page.post("/api/inspector/read", json={"uri": "nothing://here"})
    assert unknown.status_code == 502 and "the MCP server" in unknown.json()["error"]
    assert (await page.post("/api/inspector/read", json={})).status_code == 400


async def test_getting_a_prompt_with_arguments(mcp_url: str, page: httpx.AsyncClient) -> None:
    await page.post("/api/inspector/connect", json={"url": mcp_url, "token": SERVER_TOKEN})
    body = {"name": "review", "arguments": {"code": "x = 1", "style": "long"}}
    answer = await page.post("/api/inspector/prompt", json=body)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["description"] == "Ask for a review."
    (message,) = found["messages"]
    assert message["role"] == "user"
    assert message["content"][0]["text"] == "Review (long): <script>window.pwned=6</script>x = 1"
    bad = await page.post("/api/inspector/prompt", json={"name": "review", "arguments": {"a": 1}})
    assert bad.status_code == 400 and "strings" in bad.json()["error"]
    missing = await page.post("/api/inspector/prompt", json={"name": "review", "arguments": {}})
    assert missing.status_code == 502  # the server's own refusal: `code` is required


def test_content_checks_refuse_what_is_not_a_plain_image() -> None:
    png = base64.b64encode(PNG).decode()
    assert _content({"type": "image", "mimeType": "image/png", "data": png})["type"] == "image"
    for part in (
        {"type": "image", "mimeType": "image/svg+xml", "data": png},
        {"type": "image", "mimeType": "text/html", "data": png},
        {"type": "image", "mimeType": "image/png;charset=x", "data": png},
        {"type": "resource", "mimeType": "image/png", "blob": png + "<script>"},
    ):
        assert _content(part)["type"] == "binary", part
    odd = _content({"type": "audio", "data": 3})
    assert odd["type"] == "other" and '"audio"' in odd["text"]


async def test_stdio_needs_the_flag(page: httpx.AsyncClient) -> None:
    body = {"transport": "stdio", "command": f"{sys.executable} {SERVER_SCRIPT}"}
    refused = await page.post("/api/inspector/connect", json=body)
    assert refused.status_code == 403 and "--allow-stdio" in refused.json()["error"]


@pytest.fixture
async def stdio_page() -> AsyncIterator[httpx.AsyncClient]:
    app = web_app(
        Agent(ScriptedModel([])),
        token=TOKEN,
        allowed_hosts=["127.0.0.1"],
        info={"model": "m", "tools": []},
        allow_stdio=True,
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH, timeout=60
    ) as http:
        try:
            yield http
        finally:
            await http.post("/api/inspector/disconnect", json={})


async def test_a_stdio_server_from_a_command_line(stdio_page: httpx.AsyncClient) -> None:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVER_SCRIPT))}"
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(SERVER_SCRIPT.parent)])}
    body = {"transport": "stdio", "command": command, "env": env}
    answer = await stdio_page.post("/api/inspector/connect", json=body)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["server"]["name"] == "stdio"
    assert [t["name"] for t in found["tools"]] == ["calculator", "shout_loud"]
    assert "notes://hostile" in [r["uri"] for r in found["resources"]]
    assert [p["name"] for p in found["prompts"]] == ["review"]

    call = {"name": "calculator", "arguments": {"expression": "6*7"}}
    assert (await stdio_page.post("/api/inspector/call", json=call)).json()["text"] == "42"
    read = await stdio_page.post("/api/inspector/read", json={"uri": "notes://hostile"})
    assert read.json()["contents"][0]["text"] == HOSTILE_HTML
    got = await stdio_page.post(
        "/api/inspector/prompt", json={"name": "review", "arguments": {"code": "y"}}
    )
    assert got.json()["messages"][0]["content"][0]["text"].endswith("y")

    exchange = (await stdio_page.get("/api/inspector/exchange")).json()["exchange"]
    assert {e["http"] for e in exchange} == {"stdio"}
    assert sent_methods(exchange) == [
        "initialize",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "tools/call",
        "resources/read",
        "prompts/get",
    ]
    answers = [json.loads(e["body"]) for e in exchange if e["direction"] == "received"]
    assert answers[-1]["id"] == 7 and answers[-1]["result"]["messages"]

    for bad, status in (
        ({"transport": "stdio", "command": "  "}, 400),
        ({"transport": "stdio", "command": "'unclosed"}, 400),
        ({"transport": "stdio", "command": "x", "env": {"A": 1}}, 400),
        ({"transport": "pigeon", "url": "x"}, 400),
        ({"transport": "stdio", "command": "/no/such/toolwire-server"}, 502),
    ):
        refused = await stdio_page.post("/api/inspector/connect", json=bad)
        assert refused.status_code == status, (bad, refused.text)


@pytest.fixture
async def signed_in_url() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """An MCP server that takes only tokens from its authorization server; yields its URL and
    the grants the authorization server saw."""
    grants: list[dict[str, str]] = []
    as_port, mcp_port = free_port(), free_port()
    authorization, mcp = serve_signed_in(as_port, mcp_port, grants)
    async with serve(authorization, as_port), serve(mcp, mcp_port):
        yield f"http://127.0.0.1:{mcp_port}/mcp", grants


async def test_sign_in_with_client_credentials(
    signed_in_url: tuple[str, list[dict[str, str]]], page: httpx.AsyncClient
) -> None:
    url, grants = signed_in_url
    anonymous = await page.post("/api/inspector/connect", json={"url": url})
    assert anonymous.status_code == 502 and "401" in anonymous.json()["error"]

    auth = {"kind": "client_credentials", "clientId": CLIENT[0], "clientSecret": CLIENT[1]}
    answer = await page.post("/api/inspector/connect", json={"url": url, "auth": auth})
    assert answer.status_code == 200, answer.text
    assert answer.json()["server"]["name"] == "signed"
    call = {"name": "calculator", "arguments": {"expression": "2+2"}}
    assert (await page.post("/api/inspector/call", json=call)).json()["text"] == "4"
    assert grants and grants[-1]["grant_type"] == "client_credentials"
    # Neither the secret nor the token it bought reaches the page's exchange.
    exchange = json.dumps((await page.get("/api/inspector/exchange")).json())
    assert CLIENT[1] not in exchange and ISSUED not in exchange

    wrong = {**auth, "clientSecret": "not-the-secret"}
    refused = await page.post("/api/inspector/connect", json={"url": url, "auth": wrong})
    assert refused.status_code == 502 and "Signing in failed" in refused.json()["error"]
    for bad, message in (
        ({"kind": "password"}, "client_credentials or oauth"),
        ({"kind": "oauth", "clientSecret": "s"}, "needs its client id"),
        ({"kind": "client_credentials", "clientId": "x"}, "`clientSecret`"),
        ("token", "`auth` must be a JSON object"),
    ):
        answer = await page.post("/api/inspector/connect", json={"url": url, "auth": bad})
        assert answer.status_code == 400 and message in answer.json()["error"], answer.text
    both = await page.post("/api/inspector/connect", json={"url": url, "token": "t", "auth": auth})
    assert both.status_code == 400 and "not both" in both.json()["error"]


async def test_sign_in_in_a_browser_tab_with_the_authorization_code_flow(
    signed_in_url: tuple[str, list[dict[str, str]]], page: httpx.AsyncClient
) -> None:
    url, grants = signed_in_url
    assert (await page.get("/api/inspector/signin")).json() == {"url": None}
    answers: list[httpx.Response] = []

    async def connect() -> None:
        body = {"url": url, "auth": {"kind": "oauth"}}
        answers.append(await page.post("/api/inspector/connect", json=body))

    async with anyio.create_task_group() as group:
        group.start_soon(connect)
        # The page asks for the address to show while the connect waits for the person.
        with anyio.fail_after(30):
            # Polled, as the page does: the API offers no event to wait on.
            while not (address := (await page.get("/api/inspector/signin")).json()["url"]):  # noqa: ASYNC110
                await anyio.sleep(0.05)
        asked = urlsplit(address)
        assert asked.path == "/authorize" and "code_challenge=" in asked.query
        # The person opens it: the authorization server sends them back to this process.
        async with httpx.AsyncClient(follow_redirects=True, timeout=30) as person:
            back = await person.get(address)
        assert back.status_code == 200 and "Signed in" in back.text
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert answer.json()["server"]["name"] == "signed"
    assert [g["grant_type"] for g in grants] == ["authorization_code"]
    call = {"name": "calculator", "arguments": {"expression": "3*3"}}
    assert (await page.post("/api/inspector/call", json=call)).json()["text"] == "9"
    assert (await page.get("/api/inspector/signin")).json() == {"url": None}
    assert ISSUED not in json.dumps((await page.get("/api/inspector/exchange")).json())


async def test_a_sign_in_nobody_finishes_is_given_up_by_a_disconnect(
    signed_in_url: tuple[str, list[dict[str, str]]], page: httpx.AsyncClient
) -> None:
    url, grants = signed_in_url
    answers: list[httpx.Response] = []

    async def connect() -> None:
        body = {"url": url, "auth": {"kind": "oauth"}}
        answers.append(await page.post("/api/inspector/connect", json=body))

    async with anyio.create_task_group() as group:
        group.start_soon(connect)
        with anyio.fail_after(30):
            # Polled, as the page does: the API offers no event to wait on.
            while not (await page.get("/api/inspector/signin")).json()["url"]:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        with anyio.fail_after(30):  # at once, not after the sign-in's five minutes
            assert (await page.post("/api/inspector/disconnect", json={})).status_code == 200
    (given_up,) = answers
    assert given_up.status_code == 502 and "the sign-in was given up" in given_up.json()["error"]
    assert (await page.get("/api/inspector/signin")).json() == {"url": None}
    assert grants == []  # nobody signed in
    # The page can connect again at once.
    auth = {"kind": "client_credentials", "clientId": CLIENT[0], "clientSecret": CLIENT[1]}
    again = await page.post("/api/inspector/connect", json={"url": url, "auth": auth})
    assert again.status_code == 200, again.text
