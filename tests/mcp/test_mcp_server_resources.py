"""Resources, resource templates, subscriptions, prompts and completion, served by toolwire."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_fixtures import serve_app

from mcp import Client
from toolwire import ToolContext, ToolError
from toolwire.mcp import ResourceUpdates, create_app, prompt, resource
from toolwire.messages import AssistantMessage, TextBlock, UserMessage
from toolwire.results import ImagePart, ResourcePart, TextPart

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "2026-07-28"]


def declared() -> tuple[list[Any], list[Any]]:
    @resource("config://app", mime_type="application/json", title="App settings")
    def app_config() -> dict[str, Any]:
        """The application's settings."""
        return {"theme": "dark", "size": 3}

    @resource("file://logo.png", mime_type="image/png")
    def logo() -> bytes:
        """The logo."""
        return b"\x89PNG\r\n"

    @resource("notes://today")
    async def notes() -> list[Any]:
        """Two notes."""
        return [TextPart("first"), ResourcePart(uri="notes://today#2", text="second")]

    @resource("users://{user_id}/profile", complete={"user_id": ["7", "42", "420"]})
    def profile(user_id: int, ctx: ToolContext) -> str:
        """A user's profile.

        Args:
            user_id: The user's number.
        """
        return f"user {user_id + 1} read as {ctx.tool_name}"

    async def paths(typed: str) -> list[str]:
        return [p for p in ("docs/a.md", "docs/b.md", "src/x.py") if p.startswith(typed)]

    @resource("repo://{+path}", complete={"path": paths})
    def source(path: str) -> str:
        """A file of the repository."""
        return f"contents of {path}"

    @prompt(complete={"language": ["python", "perl", "rust"]})
    def review(code: str, language: str = "python", strict: bool = False) -> str:
        """Ask for a code review.

        Args:
            code: The code to review.
            language: Its language.
            strict: Whether to be picky.
        """
        return f"Review this {language} code{' strictly' if strict else ''}:\n{code}"

    @prompt(name="dialogue", title="A short dialogue")
    def talk(topic: str) -> list[Any]:
        """A user and assistant turn, then an image."""
        return [
            UserMessage.of(f"Tell me about {topic}."),
            AssistantMessage([TextBlock("Gladly.")]),
            ImagePart(data=b"\x89PNG", mime_type="image/png"),
        ]

    @resource("broken://now")
    def broken() -> str:
        """Always fails."""
        raise ToolError("the disk is gone")

    @prompt
    def failing() -> str:
        """Always fails."""
        return str(1 // 0)

    return [app_config, logo, notes, profile, source, broken], [review, talk, failing]


def app(updates: ResourceUpdates | None = None) -> Any:
    resources, prompts = declared()
    return create_app(resources=resources, prompts=prompts, updates=updates)


@pytest.mark.parametrize("era", ERAS)
async def test_resources_are_listed_and_read(era: str) -> None:
    async with serve_app(app()) as url, Client(url, mode=era) as client:
        listed = await client.list_resources()
        by_uri = {str(r.uri): r for r in listed.resources}
        assert list(by_uri) == [
            "config://app",
            "file://logo.png",
            "notes://today",
            "broken://now",
        ]
        config = by_uri["config://app"]
        assert (config.name, config.title, config.mime_type) == (
            "app_config",
            "App settings",
            "application/json",
        )
        assert config.description == "The application's settings."
        templates = await client.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == [
            "users://{user_id}/profile",
            "repo://{+path}",
        ]

        (text,) = (await client.read_resource("config://app")).contents
        assert isinstance(text, mcp_types.TextResourceContents)
        assert json.loads(text.text) == {"theme": "dark", "size": 3}
        assert text.mime_type == "application/json"

        (blob,) = (await client.read_resource("file://logo.png")).contents
        assert isinstance(blob, mcp_types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"\x89PNG\r\n"
        assert blob.mime_type == "image/png"

        first, second = (await client.read_resource("notes://today")).contents
        assert (str(first.uri), getattr(first, "text", None)) == ("notes://today", "first")
        assert (str(second.uri), getattr(second, "text", None)) == ("notes://today#2", "second")

        (profile,) = (await client.read_resource("users://41/profile")).contents
        # The variable is checked and converted by the function's hints; the context is given.
        assert getattr(profile, "text", None) == "user 42 read as profile"
        (nested,) = (await client.read_resource("repo://docs/a.md")).contents
        assert getattr(nested, "text", None) == "contents of docs/a.md"


@pytest.mark.parametrize("era", ERAS)
async def test_reading_what_is_not_there_is_an_error(era: str) -> None:
    async with serve_app(app()) as url, Client(url, mode=era) as client:
        with pytest.raises(MCPError) as missing:
            await client.read_resource("config://other")
        assert missing.value.error.code == -32002
        assert missing.value.error.message == "Resource not found: config://other"
        with pytest.raises(MCPError) as wrong:
            await client.read_resource("users://ada/profile")
        assert wrong.value.error.code == mcp_types.INVALID_PARAMS
        assert "user_id" in wrong.value.error.message
        with pytest.raises(MCPError) as broken:
            await client.read_resource("broken://now")
        assert broken.value.error.code == mcp_types.INTERNAL_ERROR
        assert (
            broken.value.error.message
            == "Resource broken://now could not be read: the disk is gone"
        )
        with pytest.raises(MCPError) as failing:
            await client.get_prompt("failing", {})
        assert failing.value.error.message == (
            "Prompt 'failing' failed: ZeroDivisionError: integer division or modulo by zero"
        )


async def test_subscribers_hear_of_updates_until_they_unsubscribe() -> None:
    updates = ResourceUpdates()
    heard: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            heard.append(str(message.params.uri))
            arrived.set()

    async with (
        serve_app(app(updates)) as url,
        Client(url, mode="legacy", message_handler=on_message) as client,
    ):
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("config://app")
        assert updates.subscribers("config://app") == 1
        assert await updates.updated("config://app") == 1
        assert await updates.updated("file://logo.png") == 0  # nobody listens there
        with anyio.fail_after(10):
            await arrived.wait()
        assert heard == ["config://app"]
        with pytest.warns(MCPDeprecationWarning):
            await client.unsubscribe_resource("config://app")
        assert updates.subscribers("config://app") == 0
        assert await updates.updated("config://app") == 0


async def test_a_stateless_server_offers_no_subscriptions() -> None:
    stateless = create_app(resources=declared()[0], stateless=True)
    async with serve_app(stateless) as url, Client(url, mode="legacy") as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None
        assert capabilities.resources is not None
        assert not capabilities.resources.subscribe
        with pytest.warns(MCPDeprecationWarning), pytest.raises(MCPError):
            await client.subscribe_resource("config://app")


@pytest.mark.parametrize("era", ERAS)
async def test_prompts_are_listed_and_filled(era: str) -> None:
    async with serve_app(app()) as url, Client(url, mode=era) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        assert list(listed) == ["review", "dialogue", "failing"]
        review = listed["review"]
        assert review.description == "Ask for a code review."
        assert [(a.name, a.required, a.description) for a in review.arguments or []] == [
            ("code", True, "The code to review."),
            ("language", False, "Its language."),
            ("strict", False, "Whether to be picky."),
        ]
        assert listed["dialogue"].title == "A short dialogue"

        got = await client.get_prompt("review", {"code": "x = 1", "strict": "true"})
        assert got.description == "Ask for a code review."
        (message,) = got.messages
        assert message.role == "user"
        assert getattr(message.content, "text", None) == "Review this python code strictly:\nx = 1"

        dialogue = await client.get_prompt("dialogue", {"topic": "owls"})
        assert [(m.role, m.content.type) for m in dialogue.messages] == [
            ("user", "text"),
            ("assistant", "text"),
            ("user", "image"),
        ]

        with pytest.raises(MCPError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.error.code == mcp_types.INVALID_PARAMS
        assert "code" in missing.value.error.message
        with pytest.raises(MCPError, match="Unknown prompt: nope"):
            await client.get_prompt("nope", {})


@pytest.mark.parametrize("era", ERAS)
async def test_completion_suggests_prompt_and_template_arguments(era: str) -> None:
    async with serve_app(app()) as url, Client(url, mode=era) as client:
        prompt_ref = mcp_types.PromptReference(type="ref/prompt", name="review")
        found = await client.complete(prompt_ref, {"name": "language", "value": "P"})
        assert found.completion.values == ["python", "perl"]
        assert found.completion.total == 2
        assert found.completion.has_more is False
        # An argument without suggestions has none, which is not an error.
        nothing = await client.complete(prompt_ref, {"name": "code", "value": ""})
        assert nothing.completion.values == []

        template = mcp_types.ResourceTemplateReference(
            type="ref/resource", uri="users://{user_id}/profile"
        )
        ids = await client.complete(template, {"name": "user_id", "value": "4"})
        assert ids.completion.values == ["42", "420"]
        repo = mcp_types.ResourceTemplateReference(type="ref/resource", uri="repo://{+path}")
        paths = await client.complete(repo, {"name": "path", "value": "docs/"})
        assert paths.completion.values == ["docs/a.md", "docs/b.md"]

        with pytest.raises(MCPError, match="Unknown resource template"):
            await client.complete(
                mcp_types.ResourceTemplateReference(type="ref/resource", uri="x://{y}"),
                {"name": "y", "value": ""},
            )


def test_declarations_are_checked_when_built() -> None:
    def by_id(user_id: str) -> str:
        return user_id

    with pytest.raises(TypeError, match="must be the template's variables"):
        resource("users://{name}", by_id)
    with pytest.raises(TypeError, match="must be the template's variables"):
        resource("users://all", by_id)
    with pytest.raises(ValueError, match="complete names no variable"):
        resource("users://{user_id}", by_id, complete={"other": ["x"]})
    with pytest.raises(ValueError, match="complete names no argument"):
        prompt(by_id, complete={"nope": ["x"]})
    twice = resource("a://b", lambda: "x")
    with pytest.raises(ValueError, match="two resources named 'a://b'"):
        create_app(resources=[twice, twice])
    greeting = prompt(lambda: "hi", name="greeting")
    with pytest.raises(ValueError, match="two prompts named 'greeting'"):
        create_app(prompts=[greeting, greeting])


async def test_subscriptions_are_bounded_oldest_out() -> None:
    updates = ResourceUpdates(max_subscriptions=2)
    told: list[str] = []

    def listener(name: str) -> Any:
        async def notify(uri: str) -> None:
            told.append(f"{name}:{uri}")

        return notify

    updates.subscribe("a://1", "s1", listener("s1"))
    updates.subscribe("a://1", "s2", listener("s2"))
    updates.subscribe("a://2", "s3", listener("s3"))  # past the cap: s1's goes
    assert updates.subscribers("a://1") == 1
    assert await updates.updated("a://1") == 1
    assert await updates.updated("a://2") == 1
    assert told == ["s2:a://1", "s3:a://2"]
    with pytest.raises(ValueError, match="max_subscriptions must be positive"):
        ResourceUpdates(max_subscriptions=0)
