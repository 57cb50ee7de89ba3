"""Time to turn a recorded Anthropic stream into one answer: toolwire vs the SDK's own helper.

Each recorded SSE stream (`../shared/recordings/anthropic/`) is served from memory by an
in-process HTTP transport, so no socket or server thread is timed. Both sides use the same
`anthropic.AsyncAnthropic` client over the same transport; they differ only in what they do with
the events: toolwire's adapter (`AnthropicModel.stream_complete`: deltas and the final
`Completion`) against the SDK's accumulation helper (`client.messages.stream(...)` then
`get_final_message()`). Paused turns are not continued (each recorded stream is timed alone). The
best of several repeats is kept.

`CASES` lists (label, cassette, toolwire_fn, sdk_fn); each function takes a stream's bytes.

Run: `.venv/bin/python benchmarks/providers_anthropic.py [N]` (N parses per repeat, default 100).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


REPEATS = 5
GOAL = 1.2
Parse = Callable[[bytes], Awaitable[object]]


class _Body:
    """What the in-memory transport answers with; set before each parse."""

    data = b""


def _client(body: type[_Body]) -> Any:
    import httpx2
    from anthropic import AsyncAnthropic

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.data
        )

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
    return AsyncAnthropic(
        api_key="bench", base_url="http://bench.invalid", http_client=http, max_retries=0
    )


def toolwire_anthropic() -> Parse:
    """Parse a Messages stream with toolwire's adapter."""
    from toolwire.models.anthropic import AnthropicModel
    from toolwire.models.base import CompletionDone

    body = type("Body", (_Body,), {})
    model = AnthropicModel("bench-model", client=_client(body), max_continuations=0)

    async def parse(data: bytes) -> object:
        body.data = data
        completion = None
        async for event in model.stream_complete("hi"):
            if isinstance(event, CompletionDone):
                completion = event.completion
        return completion

    return parse


def sdk_anthropic() -> Parse:
    """Accumulate a Messages stream with the SDK's `messages.stream()` helper."""
    body = type("Body", (_Body,), {})
    client = _client(body)

    async def parse(data: bytes) -> object:
        body.data = data
        async with client.messages.stream(
            model="bench-model",
            max_tokens=1024,
            messages=[{"role": "user", "content": "hi"}],
        ) as stream:
            return await stream.get_final_message()

    return parse


_RECORDINGS = [
    "anthropic/test_anthropic_model_thinking_part_stream.yaml",
    "anthropic/test_anthropic_model_web_search_tool_stream.yaml",
    "anthropic/test_fixed_version_tool_chain_regression.yaml",
    "anthropic/test_fixed_version_tool_chain_with_thinking_display_regression.yaml",
    "anthropic/test_pause_turn_web_search_streaming_vcr.yaml",
]

ANTHROPIC_CASES: list[tuple[str, str, Parse, Parse]] = [
    ("anthropic", cassette, toolwire_anthropic(), sdk_anthropic()) for cassette in _RECORDINGS
]
