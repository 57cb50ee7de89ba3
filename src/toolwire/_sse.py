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

from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

__all__ = ["ServerSentEvent", "describe_size", "read_sse"]

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
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
    # One loop with local state rather than a parser object: model streams are thousands of
    # short events, and a method call per line doubled the cost of reading them.
    partial = b""  # the line still arriving
    head = b""  # the stream's first bytes, until we know whether they open with a BOM
    fresh = True
    after_cr = False  # the last chunk ended in "\r": a "\n" opening the next one belongs to it
    total = 0
    size = 0  # bytes of the event so far, finished lines only
    first = b""  # the event's first data line: most events have one, which needs no copy
    more = bytearray()  # the data lines after the first, each after a "\n"
    count = 0  # data lines in the event
    name = b""
    event_id: str | None = None
    retry: int | None = None
    async for chunk in chunks:
        if not chunk:
            continue
        total += len(chunk)
        if max_stream_bytes is not None and total > max_stream_bytes:
            raise error(_too_large("the event stream", max_stream_bytes, limit_name))
        if fresh:
            head += chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                continue
            chunk, head, fresh = head.removeprefix(_BOM), b"", False
        if after_cr and chunk[0] == 0x0A:
            chunk = chunk[1:]
            if not chunk:
                continue
        lines = chunk.splitlines()  # bytes split at CRLF, LF and CR only
        if partial:
            lines[0] = partial + lines[0]
        last = chunk[-1]
        after_cr = last == 0x0D
        partial = b"" if last in (0x0A, 0x0D) else lines.pop()
        for line in lines:
            if not line:
                if count or event_id is not None or retry is not None:
                    yield ServerSentEvent(
                        _text(first, more, count),
                        name.decode("utf-8", "replace") if name else "",
                        event_id,
                        retry,
                    )
                    if count > 1:
                        more = bytearray()
                    first, count, name, event_id, retry = b"", 0, b"", None, None
                elif name:
                    name = b""
                size = 0
                continue
            size += len(line) + 1
            if size > max_event_bytes:
                raise error(_too_large("one server-sent event", max_event_bytes, limit_name))
            if line.startswith(b"data:"):  # the line nearly every event is made of
                value = line[6:] if line.startswith(b"data: ") else line[5:]
                if count:
                    more += b"\n"
                    more += value
                else:
                    first = value
                count += 1
                continue
            field, colon, value = line.partition(b":")
            if not field and colon:  # ":" opens a comment
                continue
            if value.startswith(b" "):
                value = value[1:]
            if field == b"data":  # "data" without a colon: an empty data line
                if count:
                    more += b"\n"
                else:
                    first = b""
                count += 1
            elif field == b"event":
                name = value
            elif field == b"id":
                if b"\0" not in value:  # the standard ignores an id holding NUL
                    event_id = value.decode("utf-8", "replace")
            elif field == b"retry" and value.isdigit():
                retry = int(value)
        if size + len(partial) > max_event_bytes:
            raise error(_too_large("one server-sent event", max_event_bytes, limit_name))
    if head:  # a stream shorter than a BOM
        partial = head
    # A line the stream cut short is incomplete data: it is dropped, and its event with it.
    if not partial and (count or event_id is not None or retry is not None):
        yield ServerSentEvent(
            _text(first, more, count),
            name.decode("utf-8", "replace") if name else "",
            event_id,
            retry,
        )


def _text(first: bytes, more: bytearray, count: int) -> str:
    """An event's data: its lines joined with newlines, decoded once."""
    if count > 1:
        return (first + more).decode("utf-8", "replace")
    return first.decode("utf-8", "replace")


def _too_large(what: str, limit: int, limit_name: str | None) -> str:
    named = f" ({limit_name})" if limit_name else ""
    return f"{what} is larger than {describe_size(limit)}{named}; it was not read further"
