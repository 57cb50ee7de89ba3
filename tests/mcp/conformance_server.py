"""The server the conformance suite's server scenarios test, written with toolwire's own API.

Every fixture the scenarios name (tools, resources, prompts) is an ordinary toolwire
declaration; `RAN` records what ran, so a test can tell a scenario that passed because the
server did the work from one whose checks only looked at the shape of an answer.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp_servers import PNG, WAV

from toolwire import ToolContext, ToolError, tool
from toolwire.mcp import ResourceUpdates, create_app, prompt, release_stream, resource
from toolwire.mcp.prompts import Prompt
from toolwire.mcp.resources import Resource
from toolwire.messages import UserMessage
from toolwire.results import AudioPart, ImagePart, ResourcePart, TextPart

RAN: list[str] = []
"""The names of the tools, resources and prompts that ran, in order."""

STEP = 0.05
"""The pause between a talking tool's messages, as the scenarios ask (about 50 ms)."""


def conformance_tools() -> list[Any]:
    """The tools the server scenarios call."""

    @tool
    def test_simple_text() -> str:
        """Simple text."""
        RAN.append("test_simple_text")
        return "This is a simple text response for testing."

    @tool
    def test_image_content() -> ImagePart:
        """An image."""
        RAN.append("test_image_content")
        return ImagePart(data=PNG, mime_type="image/png")

    @tool
    def test_audio_content() -> AudioPart:
        """Audio."""
        RAN.append("test_audio_content")
        return AudioPart(data=WAV, mime_type="audio/wav")

    @tool
    def test_embedded_resource() -> ResourcePart:
        """An embedded resource."""
        RAN.append("test_embedded_resource")
        return ResourcePart(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )

    @tool
    def test_multiple_content_types() -> list[Any]:
        """Text, image and resource."""
        RAN.append("test_multiple_content_types")
        return [
            TextPart("Multiple content types test:"),
            ImagePart(data=PNG, mime_type="image/png"),
            ResourcePart(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            ),
        ]

    @tool
    def test_error_handling() -> str:
        """Always fails."""
        RAN.append("test_error_handling")
        raise ToolError("This tool intentionally returns an error for testing")

    @tool
    async def test_tool_with_logging(ctx: ToolContext) -> str:
        """Logs three lines while it runs."""
        RAN.append("test_tool_with_logging")
        await ctx.log("info", "Tool execution started")
        await anyio.sleep(STEP)
        await ctx.log("info", "Tool processing data")
        await anyio.sleep(STEP)
        await ctx.log("info", "Tool execution completed")
        return "Logging test completed"

    @tool
    async def test_tool_with_progress(ctx: ToolContext) -> str:
        """Reports progress 0, 50 and 100 of 100."""
        RAN.append("test_tool_with_progress")
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100)
            if done < 100:
                await anyio.sleep(STEP)
        return "Progress test completed"

    @tool
    async def test_sampling(prompt: str, ctx: ToolContext) -> str:
        """Asks the client's model.

        Args:
            prompt: The prompt to send to the LLM.
        """
        RAN.append("test_sampling")
        answer = await ctx.sample(prompt, max_tokens=100)
        return f"LLM response: {answer.text}"

    @tool
    async def test_elicitation(message: str, ctx: ToolContext) -> str:
        """Asks the user.

        Args:
            message: The message to show the user.
        """
        RAN.append("test_elicitation")
        answer = await ctx.elicit(
            message,
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        return f"User response: action={answer.action}, content={json.dumps(answer.content)}"

    @tool
    async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
        """Asks for a form whose every field has a default."""
        RAN.append("test_elicitation_sep1034_defaults")
        answer = await ctx.elicit(
            "Please review the defaults",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {
                        "type": "string",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "default": True},
                },
            },
        )
        return (
            f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"
        )

    @tool
    async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
        """Asks for a form with every kind of enum."""
        RAN.append("test_elicitation_sep1330_enums")
        titled = [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"},
        ]
        answer = await ctx.elicit(
            "Please pick options",
            {
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": titled},
                    "legacyEnum": {
                        "type": "string",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ]
                        },
                    },
                },
            },
        )
        return (
            f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"
        )

    @tool
    async def test_reconnection(ctx: ToolContext) -> str:
        """Lets go of its answer stream: the client reconnects and polls for the answer."""
        RAN.append("test_reconnection")
        # Not for a client that calls itself 2025-03-26 (the scenario does): it could not read
        # the priming event it would need to reconnect, so the answer stays on this stream.
        released = await release_stream(ctx)
        return f"Reconnection test completed successfully (stream released: {released})"

    @tool
    async def test_missing_capability(ctx: ToolContext) -> str:
        """Needs sampling; for the 0.2 suite's server-stateless scenario (error -32021)."""
        RAN.append("test_missing_capability")
        answer = await ctx.sample("Say hi", max_tokens=10)
        return answer.text

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    }
    json_schema_tool = tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        parameters=schema,
        execute=lambda args: "ok",
    )
    return [
        test_simple_text,
        test_image_content,
        test_audio_content,
        test_embedded_resource,
        test_multiple_content_types,
        test_error_handling,
        test_tool_with_logging,
        test_tool_with_progress,
        test_sampling,
        test_elicitation,
        test_elicitation_sep1034_defaults,
        test_elicitation_sep1330_enums,
        test_reconnection,
        test_missing_capability,
        json_schema_tool,
    ]


def conformance_resources() -> list[Resource]:
    """The resources the scenarios read and subscribe to."""

    @resource("test://static-text", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource."""
        RAN.append("static_text")
        return "This is the content of the static text resource."

    @resource("test://static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource (a PNG)."""
        RAN.append("static_binary")
        return PNG

    @resource("test://watched-resource", mime_type="text/plain")
    def watched() -> str:
        """A resource clients may subscribe to."""
        return "watched"

    @resource("test://template/{id}/data", mime_type="application/json", complete={"id": ["123"]})
    def template(id: str) -> dict[str, Any]:
        """Data for an ID.

        Args:
            id: The record's ID.
        """
        RAN.append("template")
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    return [static_text, static_binary, watched, template]


def conformance_prompts() -> list[Prompt]:
    """The prompts the scenarios list and get."""

    @prompt
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        RAN.append("test_simple_prompt")
        return "This is a simple prompt for testing."

    @prompt(complete={"arg1": ["paris", "park", "party", "test", "testing"]})
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """A prompt with arguments.

        Args:
            arg1: First test argument.
            arg2: Second test argument.
        """
        RAN.append("test_prompt_with_arguments")
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @prompt
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
        """A prompt embedding a resource.

        Args:
            resourceUri: URI of the resource to embed.
        """
        RAN.append("test_prompt_with_embedded_resource")
        return [
            ResourcePart(
                uri=resourceUri,
                mime_type="text/plain",
                text="Embedded resource content for testing.",
            ),
            "Please process the embedded resource above.",
        ]

    @prompt
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image."""
        RAN.append("test_prompt_with_image")
        return [
            UserMessage([ImagePart(data=PNG, mime_type="image/png")]),
            "Please analyze the image above.",
        ]

    return [
        test_simple_prompt,
        test_prompt_with_arguments,
        test_prompt_with_embedded_resource,
        test_prompt_with_image,
    ]


def conformance_app(updates: ResourceUpdates | None = None, **options: Any) -> Any:
    """The whole fixture as one ASGI app (options go to `create_app`); resumable streams, so
    `test_reconnection` can let go of its stream."""
    return create_app(
        conformance_tools(),
        resources=conformance_resources(),
        prompts=conformance_prompts(),
        updates=updates,
        name="toolwire-conformance",
        **{"resumable": True, **options},
    )


if __name__ == "__main__":
    # `python conformance_server.py` serves the fixture over stdio.
    from toolwire.mcp import serve

    anyio.run(
        lambda: serve(
            conformance_tools(),
            resources=conformance_resources(),
            prompts=conformance_prompts(),
            stdio=True,
            name="toolwire-conformance",
        )
    )
