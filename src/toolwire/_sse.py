"""The one server-sent event reader, for model streams and MCP answers alike.

It parses the raw bytes of a response body (WHATWG "event stream" rules: CRLF, LF or CR line
ends, `:` comments, `data`/`event`/`id`/`retry` fields, one leading space dropped, a leading
BOM ignored) instead of the HTTP client's line iterator, because a line iterator buffers a line
however long it is: a server sending one endless line would fill the memory. Here the event
being built, partial line included, is held to `max_event_bytes`, and the whole stream may be
held to `max_stream_bytes`; either refusal raises the caller's own error type (a model adapter's
`ModelResponseError`, the MCP client's `McpProtocolError`), so each layer reports it in its terms.

Two departures from the browser algorithm, both what API clients need: an event is handed over
when it carries an `id` or `retry` without any data (the MCP resume point is such an event), and
an event whose lines all arrived is handed over when the stream ends without its blank line.
A line cut off by the end of the stream is dropped with its event: its data is incomplete.

Field values are decoded as UTF-8 with U+FFFD for broken bytes, once per event, so a character
split across network chunks is decoded whole. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

__all__ = ["ServerSentEvent", "describe_size", "read_sse"]

_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event of a server-sent event stream.

    Attributes:
        data: The `data` lines joined with newlines (`""` when there were none).
        event: The `event` field, or `""` when the event did not name itself.
        id: This event's `id` field, or `None` when it had none (a resume point).
        retry: The `retry` field in milliseconds, or `None` when absent or not a number.
    """

    data: str
    event: str = ""
    id: str | None = None
    retry: int | None = None


def describe_size(count: int) -> str:
    """A byte count as people write limits: `"32 MiB"`, `"64 KiB"`, `"1000 bytes"`."""
    if count >= 1024 * 1024 and not count % (1024 * 1024):
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and not count % 1024:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


async def read_sse(
    chunks: AsyncIterable[bytes],
    *,
    error: Callable[[str], Exception],
    max_event_bytes: int,
    max_stream_bytes: int | None = None,
    limit_name: str | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """The events of a server-sent event stream, read from its (decoded) body bytes.

    Args:
        chunks: The body as it arrives, e.g. `response.aiter_bytes()`.
        error: Builds the exception raised when a cap is passed, from a sentence saying which.
        max_event_bytes: The most bytes one event may take, all its lines counted (so one line
            too); this bounds what the reader holds at any time.
        max_stream_bytes: The most bytes the whole stream may take; `None` for no bound.
        limit_name: The setting that raises the cap, named in the message when given.

    Raises:
        Exception: `error(...)` once an event or the stream passes its cap; nothing more is read.
    """
    reader = _Reader(max_event_bytes)
    total = 0
    after_cr = False  # the last chunk ended in "\r": a "\n" opening the next one belongs to it
    async for chunk in chunks:
        if not chunk:
            continue
        total += len(chunk)
        if max_stream_bytes is not None and total > max_stream_bytes:
            raise error(_too_large("the event stream", max_stream_bytes, limit_name))
        at = 1 if after_cr and chunk[0] == 0x0A else 0
        for end in _LINE_END.finditer(chunk, at):
            done = reader.line(chunk, at, end.start())
            at = end.end()
            if done is not None:
                yield done
            elif reader.size > max_event_bytes:
                raise error(_too_large("one server-sent event", max_event_bytes, limit_name))
        reader.partial += chunk[at:]
        after_cr = chunk[-1] == 0x0D
        if reader.size + len(reader.partial) > max_event_bytes:
            raise error(_too_large("one server-sent event", max_event_bytes, limit_name))
    # A line the stream cut short is incomplete data: it is dropped, and its event with it.
    if not reader.partial:
        done = reader.finish()
        if done is not None:
            yield done


def _too_large(what: str, limit: int, limit_name: str | None) -> str:
    named = f" ({limit_name})" if limit_name else ""
    return f"{what} is larger than {describe_size(limit)}{named}; it was not read further"


class _Reader:
    """The event being built. Its data is kept as bytes, not a list of lines: a million tiny
    lines would cost several times their size in Python objects, past what the cap intends."""

    __slots__ = ("data", "event", "event_id", "fresh", "lines", "partial", "retry", "size")

    def __init__(self, max_event_bytes: int) -> None:
        self.partial = bytearray()  # the line still arriving
        self.fresh = True  # no line finished yet: a BOM may open the first one
        self.size = 0  # bytes of the event so far, finished lines only
        self.data = bytearray()
        self.lines = 0
        self.event = b""
        self.event_id: str | None = None
        self.retry: int | None = None

    def line(self, chunk: bytes, start: int, end: int) -> ServerSentEvent | None:
        """Take the line ending at `chunk[end]`; the finished event when it was a blank line."""
        if self.partial:
            self.partial += chunk[start:end]
            text = bytes(self.partial)
            self.partial.clear()
        else:
            text = chunk[start:end]
        if self.fresh:
            self.fresh = False
            text = text.removeprefix(_BOM)
        if not text:
            return self.finish()
        self.size += len(text) + 1
        if text[0] == 0x3A:  # ":" opens a comment
            return None
        name, _, value = text.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self.data += value
            self.data += b"\n"
            self.lines += 1
        elif name == b"event":
            self.event = value
        elif name == b"id":
            if b"\0" not in value:  # the standard ignores an id holding NUL
                self.event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)
        return None

    def finish(self) -> ServerSentEvent | None:
        """End the event (a blank line, or the end of the stream); `None` when it held nothing."""
        done = None
        if self.lines or self.event_id is not None or self.retry is not None:
            data = self.data[:-1] if self.lines else self.data
            done = ServerSentEvent(
                data.decode("utf-8", "replace"),
                self.event.decode("utf-8", "replace"),
                self.event_id,
                self.retry,
            )
        self.size = 0
        self.lines = 0
        self.data = bytearray()
        self.event = b""
        self.event_id = None
        self.retry = None
        return done
