"""Time to turn a recorded streamed response into one answer: toolwire vs the provider's SDK.

Each recorded SSE stream (`../shared/recordings/`) is served from memory by an in-process HTTP
transport, so no socket or server thread is timed. Both sides use the same SDK client and the same
transport; they differ only in what they do with the chunks: toolwire's adapter
(`stream_complete`, deltas and the final `Completion`) against the SDK's own accumulation helper
(`ChatCompletionStreamState`, then `get_final_completion()`; for the Responses API
`responses.stream()`, then `get_final_response()`). The best of several repeats is kept.

To add a provider, append a `Case` to `CASES`: a label, a cassette, and two functions taking the
stream's bytes, one parsing it through toolwire and one through the SDK's helper. The Anthropic
cases live in `_anthropic_streams.py` (the SDK side there is `messages.stream()` +
`get_final_message()`), the Gemini cases in `_google_streams.py` (the SDK side there is
`generate_content_stream` read to the end: Gemini's SDK has no accumulation helper), the Mistral
ones in `_mistral_streams.py` (streams built from recorded answers, as Mistral has no recorded
stream).

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

REPEATS = 7
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


def toolwire_responses() -> Parse:
    """Parse a Responses stream with toolwire's adapter."""
    from toolwire.errors import ModelResponseError
    from toolwire.models.base import CompletionDone
    from toolwire.models.openai_responses import OpenAIResponsesModel

    body = type("Body", (_Body,), {})
    model = OpenAIResponsesModel("bench-model", client=_openai_client(body))

    async def parse(data: bytes) -> object:
        body.data = data
        completion = None
        try:
            async for event in model.stream_complete("hi"):
                if isinstance(event, CompletionDone):
                    completion = event.completion
        except ModelResponseError as exc:
            return exc
        return completion

    return parse


def sdk_responses() -> Parse:
    """Accumulate a Responses stream with the SDK's helper (`responses.stream()`, then
    `get_final_response()`)."""
    import openai

    body = type("Body", (_Body,), {})
    client = _openai_client(body)

    async def parse(data: bytes) -> object:
        body.data = data
        try:
            async with client.responses.stream(model="bench-model", input="hi") as stream:
                async for _ in stream:
                    pass
                return await stream.get_final_response()
        except openai.APIError as exc:
            return exc

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
    Case(
        "openai_responses",
        "openai_responses/test_openai_responses_stream.yaml",
        toolwire_responses(),
        sdk_responses(),
    ),
    Case(
        "openai_responses",
        "openai_responses/test_openai_include_raw_annotations_streaming.yaml",
        toolwire_responses(),
        sdk_responses(),
    ),
]


def _anthropic_cases() -> list[Case]:
    try:
        from _anthropic_streams import ANTHROPIC_CASES
    except ImportError:  # the anthropic extra is not installed
        return []
    return [Case(*case) for case in ANTHROPIC_CASES]


CASES.extend(_anthropic_cases())


def _google_cases() -> list[Case]:
    try:
        from _google_streams import GOOGLE_CASES
    except ImportError:  # the google extra is not installed
        return []
    return [Case(*case) for case in GOOGLE_CASES]


CASES.extend(_google_cases())


def _mistral_cases() -> list[Case]:
    try:
        from _mistral_streams import MISTRAL_CASES
    except ImportError:  # the mistral extra is not installed
        return []
    return [Case(*case) for case in MISTRAL_CASES]


CASES.extend(_mistral_cases())


async def _timed(parse: Parse, data: bytes, iterations: int) -> float:
    # CPU time of this process, not wall time: on a shared machine the wall clock also counts
    # the time other processes held the cores.
    start = time.process_time()
    for _ in range(iterations):
        await parse(data)
    return (time.process_time() - start) / iterations


async def side_by_side(case: Case, data: bytes, iterations: int) -> tuple[float, float]:
    """Seconds per parse for toolwire and the SDK, best of `REPEATS`, timed in turns.

    Turns, so that a shared machine's changing load falls on both sides alike.
    """
    await case.toolwire(data)  # warm up: imports, first-use caches
    await case.sdk(data)
    ours = theirs = float("inf")
    for _ in range(REPEATS):
        ours = min(ours, await _timed(case.toolwire, data, iterations))
        theirs = min(theirs, await _timed(case.sdk, data, iterations))
    return ours, theirs


async def main(iterations: int) -> None:
    print(
        f"parsing recorded streams: CPU microseconds per stream, best of {REPEATS} x {iterations}"
    )
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
            ours, theirs = await side_by_side(case, data, iterations)
            ratio = ours / theirs
            worst = max(worst, ratio)
            name = f"{case.label}: {Path(case.cassette).stem} #{index}"
            print(f"{name:<80}{chunks:>8}{ours * 1e6:>11.0f}{theirs * 1e6:>11.0f}{ratio:>7.2f}x")
    verdict = "met" if worst <= GOAL else "NOT met"
    print(f"worst toolwire/sdk ratio: {worst:.2f}x (goal {GOAL}x: {verdict})")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
