"""An official-SDK server whose tools ask the client's model for completions (sampling).

Built in-process by the tests (`build()`), or run over stdio as `python sampling_server.py`.
Each tool reports what came back, as JSON text, so tests can assert on the client's answer.
"""

from __future__ import annotations

import base64
import json
import warnings
from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00"

WEATHER = types.Tool(
    name="get_weather",
    description="The weather in a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _report(result: types.CreateMessageResult | types.CreateMessageResultWithTools) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))


async def _sample(ctx: Context, messages: list[types.SamplingMessage], **options: Any) -> str:
    # Sampling is deprecated by the 2026-07-28 revision; this server speaks 2025-11-25.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        try:
            result = await ctx.session.create_message(messages, **options)
        except MCPError as exc:
            return json.dumps({"error": {"code": exc.code, "message": exc.error.message}})
    return _report(result)


def build() -> MCPServer:
    server = MCPServer("sampler")

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:
        """Ask the client's model for a summary, with every sampling option set."""
        declared = ctx.session.client_capabilities
        sampling = declared.sampling if declared is not None else None
        if sampling is None and text == "check":
            return json.dumps({"declared": False})
        return await _sample(
            ctx,
            [types.SamplingMessage(role="user", content=_text(f"Summarize: {text}"))],
            max_tokens=200,
            system_prompt="You are terse.",
            temperature=0.25,
            stop_sequences=["END"],
            include_context="thisServer",
            metadata={"trace": "abc"},
            model_preferences=types.ModelPreferences(
                hints=[types.ModelHint(name="small")], speed_priority=0.8
            ),
            # On the call's own answer stream; the other tools ask on the session's GET stream.
            related_request_id=ctx.request_context.request_id,
        )

    @server.tool()
    async def describe(ctx: Context) -> str:
        """Ask about an image and a sound, in a conversation with an earlier answer."""
        messages = [
            types.SamplingMessage(role="user", content=_text("Hello")),
            types.SamplingMessage(role="assistant", content=_text("Hi, what is it?")),
            types.SamplingMessage(
                role="user",
                content=[
                    _text("What are these?"),
                    types.ImageContent(
                        type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"
                    ),
                    types.AudioContent(
                        type="audio", data=base64.b64encode(WAV).decode(), mime_type="audio/wav"
                    ),
                ],
            ),
        ]
        return await _sample(ctx, messages, max_tokens=50)

    @server.tool()
    async def forecast(city: str, ctx: Context) -> str:
        """Let the client's model call get_weather (run here), then answer."""
        messages = [types.SamplingMessage(role="user", content=_text(f"Weather in {city}?"))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            try:
                first = await ctx.session.create_message(
                    messages,
                    max_tokens=100,
                    tools=[WEATHER],
                    tool_choice=types.ToolChoice(mode="required"),
                )
            except MCPError as exc:
                return json.dumps({"error": {"code": exc.code, "message": exc.error.message}})
            uses = [c for c in first.content_as_list if isinstance(c, types.ToolUseContent)]
            if first.stop_reason != "toolUse" or not uses:
                return json.dumps({"first": json.loads(_report(first))})
            results: list[types.SamplingMessageContentBlock] = [
                types.ToolResultContent(
                    type="tool_result",
                    tool_use_id=use.id,
                    content=[_text(f"{use.input['city']}: 31 C, sunny")],
                )
                for use in uses
            ]
            messages += [
                types.SamplingMessage(role="assistant", content=list(first.content_as_list)),
                types.SamplingMessage(role="user", content=results),
            ]
            final = await ctx.session.create_message(messages, max_tokens=100, tools=[WEATHER])
        return json.dumps(
            {"first": json.loads(_report(first)), "final": json.loads(_report(final))}
        )

    return server


if __name__ == "__main__":
    build().run("stdio")
