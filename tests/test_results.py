from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import pydantic
import pytest

from toolwire import (
    AudioPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolError,
    ToolResult,
    error_result,
    text_result,
)
from toolwire.results import sniff_image_mime, to_result

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


class Point(pydantic.BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Span:
    start: dt.date
    end: dt.date


def test_string_becomes_text() -> None:
    result = to_result("hello")
    assert result.content == [TextPart("hello")]
    assert result.structured is None and not result.is_error


@pytest.mark.parametrize(
    ("value", "structured"),
    [
        ({"a": 1}, {"a": 1}),
        ([1, "two"], [1, "two"]),
        (Point(x=1, y=2), {"x": 1, "y": 2}),
        (
            Span(dt.date(2026, 1, 1), dt.date(2026, 1, 2)),
            {"start": "2026-01-01", "end": "2026-01-02"},
        ),
        (42, 42),
        (1.5, 1.5),
        (True, True),
        ({"inf": float("inf")}, {"inf": None}),
    ],
)
def test_data_becomes_json_text_plus_structured(value: Any, structured: Any) -> None:
    result = to_result(value)
    assert result.structured == structured
    assert json.loads(result.text) == structured


@pytest.mark.parametrize("value", [0, -7, 42, 10**30, True, False])
def test_integers_and_flags_read_as_json_writes_them(value: int) -> None:
    # Integers take a short path; its text must stay what the general path writes.
    result = to_result(value)
    assert result.text == json.dumps(value) and result.structured is value
    assert not result.is_error and result.content == [TextPart(json.dumps(value))]


def test_none_is_json_null() -> None:
    assert to_result(None).text == "null"


def test_image_bytes_become_an_image_part() -> None:
    result = to_result(PNG)
    assert result.content == [ImagePart(data=PNG, mime_type="image/png")]


def test_unknown_bytes_become_a_binary_resource() -> None:
    result = to_result(b"\x00\x01")
    part = result.content[0]
    assert isinstance(part, ResourcePart)
    assert part.blob == b"\x00\x01" and part.mime_type == "application/octet-stream"


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a...", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"%PDF-1.7", None),
    ],
)
def test_sniff_image_mime(data: bytes, mime: str | None) -> None:
    assert sniff_image_mime(data) == mime


def test_parts_and_results_pass_through() -> None:
    part = AudioPart(data=b"RIFF", mime_type="audio/wav")
    assert to_result(part).content == [part]
    parts = [TextPart("a"), ResourceLinkPart(uri="file:///x", name="x")]
    assert to_result(parts).content == parts
    existing = ToolResult(content=[TextPart("z")], is_error=True)
    assert to_result(existing) is existing


class Opaque:
    def __str__(self) -> str:
        return "opaque#7"


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_values_json_cannot_hold_get_a_documented_representation() -> None:
    import array
    import datetime
    import decimal
    import uuid

    import mpmath
    import numpy

    cycle: list[Any] = []
    cycle.append(cycle)
    cases: list[tuple[Any, Any]] = [
        (decimal.Decimal("1.10"), "1.10"),
        (datetime.datetime(2026, 1, 2, 3, 4, 5), "2026-01-02T03:04:05"),
        (datetime.date(2026, 1, 2), "2026-01-02"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        ({"tags": {"a"}}, {"tags": ["a"]}),
        (mpmath.mpf("1.5"), "1.5"),
        (numpy.int64(5), 5),
        (numpy.float32(1.5), 1.5),
        (numpy.bool_(True), True),
        (numpy.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]]),
        ({"nan": numpy.float64("nan")}, {"nan": None}),
        (array.array("i", [1, 2]), [1, 2]),
        ({"x": Opaque()}, {"x": "opaque#7"}),
        ({"x": Unprintable()}, {"x": "<Unprintable object>"}),
        (cycle, "[[...]]"),
    ]
    for value, structured in cases:
        result = to_result(value)
        assert not result.is_error
        assert result.structured == structured, value
        assert json.loads(result.text) == structured


def test_text_and_error_results() -> None:
    assert text_result("a", "b").text == "a\nb"
    assert error_result("nope").is_error
    err = error_result(ValueError("bad value"))
    assert err.text == "ValueError: bad value"
    assert isinstance(err.error, ValueError)
    assert error_result(ToolError("plain message")).text == "plain message"
    assert error_result(RuntimeError()).text == "RuntimeError"


def test_part_invariants() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ImagePart()
    with pytest.raises(ValueError, match="exactly one"):
        ImagePart(data=PNG, url="https://x/y.png")
    with pytest.raises(ValueError, match="exactly one"):
        ResourcePart(uri="x://y")


def test_text_view_describes_non_text_parts() -> None:
    result = ToolResult(
        content=[
            TextPart("a"),
            ImagePart(url="https://example.com/i.png"),
            AudioPart(data=b"x", mime_type="audio/mpeg"),
            ResourcePart(uri="mem://r", text="inline"),
            ResourcePart(uri="mem://b", blob=b"1"),
            ResourceLinkPart(uri="mem://l"),
        ]
    )
    assert result.text.splitlines() == [
        "a",
        "[image https://example.com/i.png]",
        "[audio audio/mpeg]",
        "inline",
        "[resource mem://b]",
        "[resource link mem://l]",
    ]
