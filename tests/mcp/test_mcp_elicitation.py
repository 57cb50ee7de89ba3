"""Elicitation: the official SDK's server asks toolwire's client for input during a call."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp_fixtures import serve_app
from pydantic import BaseModel
from starlette.applications import Starlette

from toolwire.mcp import McpClient
from toolwire.mcp.elicitation import Elicitation, ElicitationAnswer

pytestmark = pytest.mark.anyio


class Profile(BaseModel):
    name: str = "John Doe"
    age: int = 30
    admin: bool


def elicit_app() -> Starlette:
    server = MCPServer("elicit")

    @server.tool()
    async def who(ctx: Context) -> str:
        """Ask who is calling."""
        answer = await ctx.elicit("Who are you?", Profile)
        if answer.action == "accept":
            return f"{answer.data.name}, {answer.data.age}, admin={answer.data.admin}"
        return f"no answer: {answer.action}"

    return server.streamable_http_app()


async def test_a_form_is_answered_with_defaults_filled_in() -> None:
    asked: list[Elicitation] = []

    async def person(request: Elicitation) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"admin": True})  # name and age left to defaults

    async with serve_app(elicit_app()) as url, McpClient(url, elicitation=person) as client:
        result = await client.call_tool("who")
    assert not result.is_error, result.text
    assert result.text == "John Doe, 30, admin=True"
    (request,) = asked
    assert request.message == "Who are you?"
    assert request.mode == "form"
    assert request.schema is not None
    assert request.schema["properties"]["age"]["default"] == 30


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_refusal_reaches_the_tool(action: Any) -> None:
    async def person(request: Elicitation) -> ElicitationAnswer:
        return ElicitationAnswer(action)

    async with serve_app(elicit_app()) as url, McpClient(url, elicitation=person) as client:
        result = await client.call_tool("who")
    assert result.text == f"no answer: {action}"


async def test_without_a_handler_the_request_is_declined() -> None:
    async with serve_app(elicit_app()) as url, McpClient(url, protocol="legacy") as client:
        result = await client.call_tool("who")
    assert result.text == "no answer: decline"


async def test_an_answer_that_breaks_the_form_is_an_error_for_the_server() -> None:
    async def careless(request: Elicitation) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"admin": "yes", "age": "old"})

    async def broken(request: Elicitation) -> ElicitationAnswer:
        raise RuntimeError("the terminal went away")

    async with serve_app(elicit_app()) as url:
        async with McpClient(url, elicitation=careless) as client:
            result = await client.call_tool("who")
        assert result.is_error
        assert "does not match the requested schema" in result.text
        async with McpClient(url, elicitation=broken) as client:
            result = await client.call_tool("who")
        assert result.is_error
        assert "the terminal went away" in result.text


async def test_toolwire_call_asks_on_the_terminal() -> None:
    # Answer "yes", then: name left empty (its default), a wrong age then 41, admin "yes".
    typed = b"y\n\nold\n41\nyes\n"
    async with serve_app(elicit_app()) as url:
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [sys.executable, "-m", "toolwire.cli", "call", url, "who"],
                input=typed,
                check=False,
            )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err
    assert "John Doe, 41, admin=True" in out
    assert "The server asks: Who are you?" in err
    assert "'old' is not a whole number" in err  # asked again
