"""Time to turn a recorded Gemini stream into one answer: toolwire vs the SDK's own reading.

Each recorded SSE stream (`tests/recordings/cassettes/google/`) is served from memory by an
in-process transport (`httpx2.MockTransport`, given to the SDK through `async_client_args`), so no
socket or server thread is timed. Both sides use the same `google.genai.Client` over the same
transport. The SDK has no accumulation helper for Gemini streams: its side is what every caller
writes, `generate_content_stream` read to the end with the text joined and the last chunk's usage
kept; toolwire's side is `GeminiModel.stream_complete` (deltas and the final `Completion`).

`GOOGLE_CASES` lists (label, cassette, toolwire_fn, sdk_fn); each function takes a stream's bytes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Parse = Callable[[bytes], Awaitable[object]]


class _Body:
    """What the in-memory transport answers with; set before each parse."""

    data = b""


def _client(body: type[_Body]) -> Any:
    import httpx2
    from google import genai
    from google.genai import types

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.data
        )

    options = types.HttpOptions(
        base_url="http://bench.invalid",
        async_client_args={"transport": httpx2.MockTransport(reply)},
    )
    return genai.Client(api_key="bench", http_options=options)


def toolwire_gemini() -> Parse:
    """Parse a Gemini stream with toolwire's adapter."""
    from toolwire.models.base import CompletionDone
    from toolwire.models.google import GeminiModel

    body = type("Body", (_Body,), {})
    model = GeminiModel("bench-model", client=_client(body))

    async def parse(data: bytes) -> object:
        body.data = data
        completion = None
        async for event in model.stream_complete("hi"):
            if isinstance(event, CompletionDone):
                completion = event.completion
        return completion

    return parse


def sdk_gemini() -> Parse:
    """Read a Gemini stream with the SDK alone: text joined, last usage kept."""
    from google.genai import types

    body = type("Body", (_Body,), {})
    client = _client(body)
    config = types.GenerateContentConfig(
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
    )

    async def parse(data: bytes) -> object:
        body.data = data
        texts: list[str] = []
        usage = None
        stream = await client.aio.models.generate_content_stream(
            model="bench-model", contents="hi", config=config
        )
        async for chunk in stream:
            # The parts themselves: `chunk.text` would log a warning for every chunk with a call.
            for candidate in chunk.candidates or ():
                for part in (candidate.content.parts if candidate.content else None) or ():
                    if part.text:
                        texts.append(part.text)
            usage = chunk.usage_metadata or usage
        return "".join(texts), usage

    return parse


_RECORDINGS = [
    "google/test_google_streaming_tool_call_thought_signature.yaml",
    "google/test_code_execution_stream.yaml",
    "google/test_google_model_web_search_tool_stream.yaml",
]

GOOGLE_CASES: list[tuple[str, str, Parse, Parse]] = [
    ("google", cassette, toolwire_gemini(), sdk_gemini()) for cassette in _RECORDINGS
]
