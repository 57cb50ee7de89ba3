"""Mistral streams made from recorded answers: no recording of a streamed Mistral answer exists.

`stream_of` turns a recorded non-streamed `chat.completion` into the SSE stream Mistral sends for
it: a first chunk with the role, the text in a few deltas, each tool call whole in its own chunk at
index 0 (as Mistral streams calls), the finish reason with the usage in the last chunk, then
`[DONE]`. The adapter tests check that streaming it gives the same completion as the recorded
answer; the benchmark times parsing it.
"""

from __future__ import annotations

from typing import Any

from .replay import sse

__all__ = ["stream_of"]


def stream_of(answer: dict[str, Any], pieces: int = 3) -> str:
    """The SSE body of `answer` streamed, its text cut into about `pieces` deltas."""
    message = answer["choices"][0]["message"]
    top = {"id": answer["id"], "object": "chat.completion.chunk", "model": answer["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**top, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    step = max(1, -(-len(text) // pieces))
    chunks.extend(chunk({"content": text[i : i + step]}) for i in range(0, len(text), step))
    for call in message.get("tool_calls") or []:
        chunks.append(chunk({"tool_calls": [{**call, "index": 0}]}))
    last = chunk({"content": ""}, answer["choices"][0]["finish_reason"])
    last["usage"] = answer["usage"]
    chunks.append(last)
    return sse([*chunks, "[DONE]"])
