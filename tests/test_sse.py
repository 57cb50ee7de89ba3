"""The one server-sent event reader (`toolwire._sse`) against well-formed and hostile streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import pytest

from toolwire._sse import ServerSentEvent, describe_size, read_sse
from toolwire.errors import McpProtocolError, ModelResponseError
from toolwire.models._client import MAX_EVENT_BYTES, iter_sse

pytestmark = pytest.mark.anyio

KIB = 1024


class Body:
    """A response body arriving in the given chunks; counts what the reader pulled."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self.pulled = 0

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        for chunk in self._chunks:
            self.pulled += len(chunk)
            return chunk
        raise StopAsyncIteration


def endless(chunk: bytes, first: bytes = b"") -> Iterable[bytes]:
    if first:
        yield first
    while True:
        yield chunk


async def events(chunks: Iterable[bytes], max_event_bytes: int = 64 * KIB) -> list[ServerSentEvent]:
    found = read_sse(Body(chunks), error=McpProtocolError, max_event_bytes=max_event_bytes)
    return [event async for event in found]


def split_every(raw: bytes, size: int) -> list[bytes]:
    return [raw[i : i + size] for i in range(0, len(raw), size)]


STREAM = (
    b": a comment opens the stream\n"
    b"event: greeting\n"
    b"id: 7\n"
    b"retry: 2500\n"
    b"data: first line\n"
    b"data:second line, no space\n"
    b"data:  two spaces keep one\n"
    b"\n"
    b'data: {"n": 1}\n'
    b"unknown: ignored\n"
    b"data\n"
    b"\n"
    b"id: only-an-id\n"
    b"\n"
)

EXPECTED = [
    ServerSentEvent(
        "first line\nsecond line, no space\n two spaces keep one", "greeting", "7", 2500
    ),
    ServerSentEvent('{"n": 1}\n'),
    ServerSentEvent("", id="only-an-id"),
]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
async def test_fields_comments_and_every_line_ending(ending: bytes) -> None:
    raw = STREAM.replace(b"\n", ending)
    assert await events([raw]) == EXPECTED


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
async def test_any_chunking_gives_the_same_events(size: int) -> None:
    # Chunks of one byte split every CRLF and every multi-byte character in two.
    raw = STREAM.replace(b"\n", b"\r\n") + "data: héllo ✓ 🎉\r\n\r\n".encode()
    found = await events(split_every(raw, size))
    assert found == [*EXPECTED, ServerSentEvent("héllo ✓ 🎉")]


async def test_a_cr_ending_one_chunk_and_an_lf_opening_the_next_are_one_line_end() -> None:
    found = await events([b"data: a\r", b"\ndata: b\r", b"\r", b"data: c\n\n"])
    assert found == [ServerSentEvent("a\nb"), ServerSentEvent("c")]


async def test_broken_utf8_becomes_replacement_characters() -> None:
    found = await events([b"event: \xff\ndata: ok \xc3\x28 \xf0\x9f\n", b"id: \xfe1\n\n"])
    assert found == [ServerSentEvent("ok \ufffd( \ufffd", "\ufffd", "\ufffd1")]


async def test_a_leading_bom_is_dropped_once() -> None:
    found = await events([b"\xef\xbb", b"\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"])
    # Only the stream's first bytes may be a BOM; later it is part of a (nameless) field.
    assert found == [ServerSentEvent("a")]


async def test_id_with_nul_and_non_numeric_retry_are_ignored() -> None:
    found = await events([b"id: a\0b\nretry: 10s\ndata: x\n\nretry: 30\n\n"])
    assert found == [ServerSentEvent("x"), ServerSentEvent("", retry=30)]


async def test_events_with_nothing_in_them_are_not_handed_over() -> None:
    found = await events([b"\n\n: only a comment\n\nevent: named-but-empty\n\n\r\n"])
    assert found == []


async def test_a_last_event_without_its_blank_line_is_kept() -> None:
    assert await events([b"data: one\n\ndata: two\n"]) == [
        ServerSentEvent("one"),
        ServerSentEvent("two"),
    ]


async def test_a_stream_cut_mid_line_drops_that_event() -> None:
    found = await events([b"data: whole\n\n", b'data: {"cut": tr'])
    assert found == [ServerSentEvent("whole")]
    found = await events([b"data: whole\n\ndata: first part\ndata: sec"])
    assert found == [ServerSentEvent("whole")]


async def test_an_endless_line_is_refused_without_reading_far_past_the_cap() -> None:
    body = Body(endless(b"x" * 4096, first=b"data: "))
    with pytest.raises(McpProtocolError) as caught:
        async for _ in read_sse(
            body, error=McpProtocolError, max_event_bytes=64 * KIB, limit_name="max_answer_bytes"
        ):
            pass
    assert str(caught.value) == (
        "one server-sent event is larger than 64 KiB (max_answer_bytes); it was not read further"
    )
    assert body.pulled <= 64 * KIB + 4096 + 6


async def test_an_endless_line_without_any_line_end_in_one_chunk_is_refused() -> None:
    with pytest.raises(McpProtocolError, match="larger than 1000 bytes"):
        await events([b"data: " + b"x" * 5000], max_event_bytes=1000)


async def test_a_huge_event_of_many_small_lines_is_refused() -> None:
    body = Body(endless(b"data: xxxxxxxx\n" * 256))
    with pytest.raises(McpProtocolError, match="one server-sent event is larger than 64 KiB"):
        async for _ in read_sse(body, error=McpProtocolError, max_event_bytes=64 * KIB):
            pass
    assert body.pulled <= 64 * KIB + 15 * 256


async def test_endless_comments_without_a_blank_line_count_as_one_event() -> None:
    with pytest.raises(McpProtocolError, match="larger than 64 KiB"):
        await events(endless(b": keep-alive\n" * 100))


async def test_events_up_to_the_cap_pass_and_the_count_restarts_after_each() -> None:
    line = b"data: " + b"y" * 993 + b"\n"  # 1000 bytes with its line end
    one = line + b"\n"
    found = await events([one * 50], max_event_bytes=1000)
    assert len(found) == 50
    assert all(len(e.data) == 993 for e in found)
    with pytest.raises(McpProtocolError):
        await events([line + b"data:\n\n"], max_event_bytes=1000)


async def test_the_whole_stream_can_be_capped() -> None:
    body = Body(endless(b"data: small\n\n"))
    seen: list[ServerSentEvent] = []

    async def read() -> None:
        found = read_sse(body, error=ModelResponseError, max_event_bytes=KIB, max_stream_bytes=KIB)
        async for event in found:
            seen.append(event)

    with pytest.raises(ModelResponseError, match=r"the event stream is larger than 1 KiB;"):
        await read()
    assert 70 <= len(seen) <= 80  # 13 bytes an event: the events before the cap were handed over
    assert body.pulled <= KIB + 13


def test_sizes_read_as_people_write_them() -> None:
    assert describe_size(32 * 1024 * 1024) == "32 MiB"
    assert describe_size(64 * KIB) == "64 KiB"
    assert describe_size(1000) == "1000 bytes"
    assert describe_size(1536 * KIB) == "1536 KiB"


# --- the model adapters' view: JSON payloads, provider errors -----------------------------------


async def payloads(chunks: Iterable[bytes]) -> list[dict[str, object]]:
    return [p async for p in iter_sse(Body(chunks), "Anthropic")]


async def test_model_payloads_take_the_event_name_when_they_lack_a_type() -> None:
    raw = (
        b'event: message_start\r\ndata: {"type": "message_start"}\r\n\r\n'
        b"event: ping\r\ndata: {}\r\n\r\n"
        b"event: keepalive\r\n\r\n"
        b"data: [DONE]\r\n\r\n"
    )
    assert await payloads(split_every(raw, 5)) == [{"type": "message_start"}, {"type": "ping"}]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"data: {oops\n\n", "Anthropic sent an event that is not JSON"),
        (b"data: [1, 2]\n\n", "Anthropic sent an event that is not an object"),
        (b"data: " + b"[" * 100_000 + b"\n\n", "nested too deeply"),
    ],
    ids=["not-json", "not-object", "too-deep"],
)
async def test_model_payloads_that_break_json_are_response_errors(raw: bytes, message: str) -> None:
    with pytest.raises(ModelResponseError, match=message):
        await payloads([raw])


async def test_an_endless_line_from_a_model_is_a_response_error() -> None:
    body = Body(endless(b"z" * 65536, first=b"data: "))
    with pytest.raises(ModelResponseError) as caught:
        async for _ in iter_sse(body, "OpenAI"):
            pass
    assert str(caught.value) == (
        "OpenAI sent a stream toolwire does not read: one server-sent event is larger than "
        f"{describe_size(MAX_EVENT_BYTES)}; it was not read further"
    )
    assert body.pulled <= MAX_EVENT_BYTES + 65536 + 6
