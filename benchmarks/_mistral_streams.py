"""Time to turn a Mistral chat stream into one answer: toolwire vs the SDK's own stream.

Mistral has no recorded stream, so each stream is built from a recorded non-streamed answer
(`tests/recordings/mistral_streams.py`: the text in deltas, each call whole in its own chunk, the
usage last), the shape Mistral streams in. Both sides use the same `mistralai` client over the same
in-memory transport. The SDK has no helper that folds a stream into one answer, so its side is the
least any caller must do: iterate `chat.stream_async(...)` (the SDK decodes and validates each
chunk) and join the text and the tool calls. toolwire's side is `MistralModel.stream_complete`
(deltas and the final `Completion`).

`MISTRAL_CASES` lists (label, cassette, toolwire_fn, sdk_fn, streams_fn).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

Parse = Callable[[bytes], Awaitable[object]]


class _Body:
    """What the in-memory transport answers with; set before each parse."""

    data = b""


def _client(body: type[_Body]) -> Any:
    import httpx2
    from mistralai.client import Mistral

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body.data
        )

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(reply))
    return Mistral(api_key="bench", server_url="http://bench.invalid", async_client=http)


def toolwire_mistral() -> Parse:
    """Parse a chat stream with toolwire's adapter."""
    from toolwire.models.base import CompletionDone
    from toolwire.models.mistral import MistralModel

    body = type("Body", (_Body,), {})
    model = MistralModel("bench-model", client=_client(body))

    async def parse(data: bytes) -> object:
        body.data = data
        completion = None
        async for event in model.stream_complete("hi"):
            if isinstance(event, CompletionDone):
                completion = event.completion
        return completion

    return parse


def sdk_mistral() -> Parse:
    """Iterate the SDK's stream and join its text and tool calls."""
    body = type("Body", (_Body,), {})
    client = _client(body)

    async def parse(data: bytes) -> object:
        body.data = data
        text: list[str] = []
        calls: list[Any] = []
        finish = usage = None
        stream = await client.chat.stream_async(
            model="bench-model", messages=[{"role": "user", "content": "hi"}]
        )
        async for event in stream:
            chunk = event.data
            usage = chunk.usage or usage
            for choice in chunk.choices:
                delta = choice.delta
                if isinstance(delta.content, str):
                    text.append(delta.content)
                calls.extend(delta.tool_calls or ())
                finish = choice.finish_reason or finish
        return "".join(text), calls, finish, usage

    return parse


def streams(cassette: str) -> Callable[[], list[bytes]]:
    """The streams made from a cassette's recorded answers."""

    def make() -> list[bytes]:
        from recordings.mistral_streams import stream_of
        from recordings.replay import load_cassette

        return [stream_of(json.loads(i.body)).encode() for i in load_cassette(cassette)]

    return make


_RECORDINGS = [
    "mistral/test_tool_choice_matrix[auto-mistral].yaml",
    "mistral/TestToolsPlusOutput.test_tools_plus_output_multiple_function_tools.yaml",
]

MISTRAL_CASES: list[tuple[str, str, Parse, Parse, Callable[[], list[bytes]]]] = [
    ("mistral (stream built from answer)", c, toolwire_mistral(), sdk_mistral(), streams(c))
    for c in _RECORDINGS
]
