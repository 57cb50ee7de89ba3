"""Time to turn a recorded streamed response into one answer: toolwire vs the provider's SDK.

Each recorded SSE stream (`../shared/recordings/`) is served from memory by an in-process HTTP
transport, so no socket or server thread is timed. Both sides use the same SDK client and the same
transport; they differ only in what they do with the chunks: toolwire's adapter
(`stream_complete`, deltas and the final `Completion`) against the SDK's own accumulation helper
(`ChatCompletionStreamState`, then `get_final_completion()`). The best of several repeats is kept.

To add a provider, append a `Case` to `CASES`: a label, a cassette, and two functions taking the
stream's bytes, one parsing it through toolwire and one through the SDK's helper. The Anthropic
cases live in `_anthropic_streams.py` (the SDK side there is `messages.stream()` +
`get_final_message()`), the Mistral ones in `_mistral_streams.py` (streams built from recorded
answers, as Mistral has no recorded stream).

Run: `.venv/bin/python benchmarks/providers.py [N]` (N iterations per repeat, default 200).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from recordings.replay import load_cassette

REPEATS = 5
GOAL = 1.2
Parse = Callable[[bytes], Awaitable[object]]


@dataclass(frozen=True, slots=True)
class Case:
    """One kind of recorded stream: how toolwire parses it, and how the SDK does."""

    label: str
    cassette: str
    toolwire: Parse
    sdk: Parse
    streams: Callable[[], list[bytes]] | None = None  # made-up streams when none was recorded


class _Body:
    """The response the in-memory transport gives; set before each parse."""

    data = b""


def _openai_client(body: type[_Body]) -> Any:
    import httpx2
    from openai import AsyncOpenAI

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.data
        )

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
    return AsyncOpenAI(api_key="bench", base_url="http://bench.invalid/v1", http_client=http)


def toolwire_chat(provider: str) -> Parse:
    """Parse a Chat Completions stream with toolwire's adapter for `provider`."""
    from toolwire.errors import ModelResponseError
    from toolwire.models.base import CompletionDone
    from toolwire.models.providers import chat_model

    body = type("Body", (_Body,), {})
    model = chat_model(provider, "bench-model", client=_openai_client(body))

    async def parse(data: bytes) -> object:
        body.data = data
        completion = None
        try:
            async for event in model.stream_complete("hi"):
                if isinstance(event, CompletionDone):
                    completion = event.completion
        except ModelResponseError as exc:  # a recorded in-stream error, parsed up to it
            return exc
        return completion

    return parse


def sdk_chat() -> Parse:
    """Accumulate a Chat Completions stream with the SDK's `ChatCompletionStreamState`."""
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    body = type("Body", (_Body,), {})
    client = _openai_client(body)

    async def parse(data: bytes) -> object:
        body.data = data
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        stream = await client.chat.completions.create(
            model="bench-model", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        try:
            async for chunk in stream:
                state.handle_chunk(chunk)
        except openai.APIError as exc:
            return exc
        return state.get_final_completion()

    return parse


CASES: list[Case] = [
    Case(
        "openai_chat",
        "openai_chat/test_complex_agent_run.yaml",
        toolwire_chat("openai"),
        sdk_chat(),
    ),
    Case(
        "openai_chat",
        "openai_chat/test_run_stream_sync_streams_real_model.yaml",
        toolwire_chat("openai"),
        sdk_chat(),
    ),
    Case(
        "groq", "groq/test_tool_use_failed_error_streaming.yaml", toolwire_chat("groq"), sdk_chat()
    ),
]


def _anthropic_cases() -> list[Case]:
    try:
        from _anthropic_streams import ANTHROPIC_CASES
    except ImportError:  # the anthropic extra is not installed
        return []
    return [Case(*case) for case in ANTHROPIC_CASES]


CASES.extend(_anthropic_cases())


def _mistral_cases() -> list[Case]:
    try:
        from _mistral_streams import MISTRAL_CASES
    except ImportError:  # the mistral extra is not installed
        return []
    return [Case(*case) for case in MISTRAL_CASES]


CASES.extend(_mistral_cases())


async def best_of(parse: Parse, data: bytes, iterations: int) -> float:
    """Seconds per parse, best of `REPEATS`."""
    await parse(data)  # warm up: imports, first-use caches
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(iterations):
            await parse(data)
        best = min(best, (time.perf_counter() - start) / iterations)
    return best


async def main(iterations: int) -> None:
    print(f"parsing recorded streams: microseconds per stream, best of {REPEATS} x {iterations}")
    print(f"{'stream':<80}{'events':>8}{'toolwire':>11}{'sdk':>11}{'ratio':>8}")
    worst = 0.0
    for case in CASES:
        if case.streams is not None:
            bodies = list(enumerate(case.streams()))
        else:
            bodies = [
                (index, interaction.body)
                for index, interaction in enumerate(load_cassette(case.cassette))
                if interaction.headers.get("content-type", "").startswith("text/event-stream")
            ]
        for index, data in bodies:
            chunks = data.count(b"\ndata: ") + data.startswith(b"data: ")
            ours = await best_of(case.toolwire, data, iterations)
            theirs = await best_of(case.sdk, data, iterations)
            ratio = ours / theirs
            worst = max(worst, ratio)
            name = f"{case.label}: {Path(case.cassette).stem} #{index}"
            print(f"{name:<80}{chunks:>8}{ours * 1e6:>11.0f}{theirs * 1e6:>11.0f}{ratio:>7.2f}x")
    verdict = "met" if worst <= GOAL else "NOT met"
    print(f"worst toolwire/sdk ratio: {worst:.2f}x (goal {GOAL}x: {verdict})")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
