"""The client against a hostile server: endless answers, gzip bombs, deep nesting, bad headers.

Each failure must come back as an error result naming what went wrong (or, for `connect()`, as
one of the documented errors), with memory bounded by `max_answer_bytes`, and the client must
stay usable afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from hostile_server import Hostile
from mcp_fixtures import serve_app

from toolwire.mcp import McpClient, McpError, McpProtocolError

pytestmark = pytest.mark.anyio

CAP = 1024 * 1024


@pytest.fixture
async def hostile() -> AsyncIterator[tuple[Hostile, str]]:
    app = Hostile(bomb_bytes=64 * 1024 * 1024)
    async with serve_app(app) as url:
        yield app, url


async def _still_usable(client: McpClient) -> None:
    result = await client.call_tool("echo_sse")
    assert not result.is_error, result.text
    assert result.text == "ok"


@pytest.mark.parametrize(
    ("tool", "what"),
    [
        ("endless_json", "the answer"),
        ("gzip_bomb", "the answer"),
        ("endless_sse_line", "one server-sent event"),
        ("endless_sse_event", "one server-sent event"),
    ],
)
async def test_an_answer_past_the_cap_is_an_error_result_naming_it(
    hostile: tuple[Hostile, str], tool: str, what: str
) -> None:
    _, url = hostile
    async with McpClient(url, max_answer_bytes=CAP, timeout=30) as client:
        with anyio.fail_after(30):
            result = await client.call_tool(tool)
        assert result.is_error
        assert isinstance(result.error, McpProtocolError)
        assert f"{what} is larger than 1 MiB (max_answer_bytes)" in result.text
        await _still_usable(client)


async def test_the_default_cap_is_32_mib(hostile: tuple[Hostile, str]) -> None:
    _, url = hostile
    async with McpClient(url, timeout=60) as client:
        assert client.max_answer_bytes == 32 * 1024 * 1024
        result = await client.call_tool("endless_json")
        assert "larger than 32 MiB (max_answer_bytes)" in result.text


async def test_a_result_nested_100k_deep_is_an_error_result(hostile: tuple[Hostile, str]) -> None:
    _, url = hostile
    async with McpClient(url) as client:
        result = await client.call_tool("deep")
        assert result.is_error
        assert "nested too deeply" in result.text
        await _still_usable(client)


async def test_deep_structured_content_does_not_escape_as_recursion_error(
    hostile: tuple[Hostile, str],
) -> None:
    _, url = hostile
    async with McpClient(url) as client:
        result = await client.call_tool("deep_structured")
        # Either read (it is valid JSON) or refused as too deep; never a raised RecursionError.
        assert not result.is_error or "nested too deeply" in result.text
        await _still_usable(client)


async def test_a_gzip_header_on_a_plain_body_is_an_error_result(
    hostile: tuple[Hostile, str],
) -> None:
    _, url = hostile
    async with McpClient(url) as client:
        result = await client.call_tool("bad_gzip")
        assert result.is_error
        assert isinstance(result.error, McpProtocolError)
        assert "cannot be decoded" in result.text
        await _still_usable(client)


async def test_a_non_ascii_session_id_fails_connect_with_a_documented_error(
    hostile: tuple[Hostile, str],
) -> None:
    _, url = hostile
    client = McpClient(url.replace("/mcp", "/bad-session"))
    with pytest.raises(McpProtocolError, match="session id"):
        await client.connect()
    assert not client.connected


async def test_retry_after_is_waited_out_then_the_call_runs(hostile: tuple[Hostile, str]) -> None:
    app, url = hostile
    async with McpClient(url) as client:
        # 429 twice, with `Retry-After: 0`: nothing ran, so even a write may be sent again.
        result = await client.call_tool("busy")
        assert not result.is_error, result.text
        assert result.text == "ran after 3 tries"
        assert app.calls["busy"] == 3


async def test_retry_after_as_a_past_http_date_means_at_once(hostile: tuple[Hostile, str]) -> None:
    app, url = hostile
    async with McpClient(url) as client:
        result = await client.call_tool("busy_date")
        assert result.text == "ran after 3 tries"
        assert app.calls["busy_date"] == 3


async def test_a_long_retry_after_is_an_error_at_once(hostile: tuple[Hostile, str]) -> None:
    app, url = hostile
    async with McpClient(url) as client:
        with anyio.fail_after(10):
            result = await client.call_tool("busy_long")
        assert result.is_error
        assert isinstance(result.error, McpError)
        assert "retry after 3600 s" in result.text
        assert app.calls["busy_long"] == 1


async def test_a_400_that_is_not_about_the_session_is_not_repeated(
    hostile: tuple[Hostile, str],
) -> None:
    app, url = hostile
    async with McpClient(url) as client:
        session = client.session_id
        result = await client.call_tool("bad_request")
        assert result.is_error
        assert "arguments are wrong" in result.text
        assert app.calls["bad_request"] == 1
        assert client.session_id == session


async def test_a_long_stream_of_small_events_is_not_an_oversized_answer(
    hostile: tuple[Hostile, str],
) -> None:
    _, url = hostile
    async with McpClient(url, max_answer_bytes=CAP) as client:
        result = await client.call_tool("keepalive_sse")
    assert not result.is_error, result.text
    assert result.text == "kept"
