"""What a tool gives back: a `ToolResult` of multimodal content parts."""

from __future__ import annotations

import json
import typing
from collections.abc import Sequence
from dataclasses import field
from typing import Any, Literal, TypeAlias

import pydantic_core

from ._record import empty_list, record
from .errors import ToolError

__all__ = [
    "AudioPart",
    "ContentPart",
    "ImagePart",
    "ResourceLinkPart",
    "ResourcePart",
    "TextPart",
    "ToolResult",
    "content_text",
    "error_result",
    "json_representation",
    "sniff_image_mime",
    "text_result",
    "to_result",
]


@record
class TextPart:
    """Plain text."""

    text: str
    kind: Literal["text"] = "text"


@record
class ImagePart:
    """An image, as raw bytes or as a URL."""

    data: bytes | None = None
    url: str | None = None
    mime_type: str = "image/png"
    kind: Literal["image"] = "image"

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("ImagePart needs exactly one of `data` or `url`")


@record
class AudioPart:
    """Audio as raw bytes."""

    data: bytes
    mime_type: str = "audio/wav"
    kind: Literal["audio"] = "audio"


@record
class ResourcePart:
    """An embedded resource: a URI with its contents, as text or as a binary blob."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None
    kind: Literal["resource"] = "resource"

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("ResourcePart needs exactly one of `text` or `blob`")


@record
class ResourceLinkPart:
    """A link to a resource the caller may fetch; its contents are not included."""

    uri: str
    name: str | None = None
    description: str | None = None
    mime_type: str | None = None
    kind: Literal["resource_link"] = "resource_link"


ContentPart: TypeAlias = TextPart | ImagePart | AudioPart | ResourcePart | ResourceLinkPart


@record
class ToolResult:
    """The outcome of one tool call.

    Attributes:
        content: What the model sees, in order.
        is_error: Whether the call failed; the content then explains why.
        structured: The JSON-compatible value behind the content, when the tool returned data.
        error: The exception behind an error result, kept for hooks and traces (never serialized).
    """

    content: list[ContentPart] = field(default_factory=empty_list)
    is_error: bool = False
    structured: Any = None
    error: BaseException | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text parts joined by newlines; other parts are described in brackets."""
        return content_text(self.content)


def content_text(content: Sequence[ContentPart]) -> str:
    """Content parts as text: text parts joined by newlines, other parts described in brackets."""
    if len(content) == 1 and isinstance(first := content[0], TextPart):
        return first.text  # the usual result, read once per call for its trace
    out: list[str] = []
    for part in content:
        if isinstance(part, TextPart):
            out.append(part.text)
        elif isinstance(part, ImagePart):
            out.append(f"[image {part.url or part.mime_type}]")
        elif isinstance(part, AudioPart):
            out.append(f"[audio {part.mime_type}]")
        elif isinstance(part, ResourcePart):
            out.append(part.text if part.text is not None else f"[resource {part.uri}]")
        else:
            out.append(f"[resource link {part.uri}]")
    return "\n".join(out)


def text_result(*texts: str, structured: Any = None) -> ToolResult:
    """A successful result made of text parts."""
    return ToolResult(content=[TextPart(t) for t in texts], structured=structured)


def error_result(error: BaseException | str) -> ToolResult:
    """An error result the model can read.

    A `ToolError` gives exactly its message. Any other exception gives its type and message, and is
    kept on the result (`result.error`) for hooks and traces.
    """
    if isinstance(error, str):
        return ToolResult(content=[TextPart(error)], is_error=True)
    if isinstance(error, ToolError):
        message = error.message
    else:
        detail = str(error)
        message = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return ToolResult(content=[TextPart(message)], is_error=True, error=error)


_IMAGE_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff_image_mime(data: bytes) -> str | None:
    """The MIME type of PNG, JPEG, GIF or WebP bytes, from their magic numbers; else `None`."""
    for magic, mime in _IMAGE_SIGNATURES:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


_PARTS = (TextPart, ImagePart, AudioPart, ResourcePart, ResourceLinkPart)
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` without building an encoder
per call."""


def to_result(value: Any) -> ToolResult:
    """Turn whatever a tool returned into a `ToolResult`.

    `str` becomes text; `bytes` become an image part (or an embedded binary resource when they are
    not a known image format); content parts are wrapped; a `ToolResult` passes through. Anything
    else becomes JSON text plus `structured`, by `json_representation`.
    """
    if isinstance(value, ToolResult):
        return value
    # The usual results built positionally (content, is_error, structured): a class called with
    # keywords packs them into a dict and unpacks it again.
    if isinstance(value, str):
        return ToolResult([TextPart(value)])
    if type(value) is int:
        # What the general path below gives an integer (its JSON text, the value itself as
        # `structured`), without the serializer and an encoder.
        return ToolResult([TextPart(int.__repr__(value))], False, value)
    if value is None:
        return ToolResult(content=[TextPart("null")], structured=None)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(typing.cast(bytes, value))
        mime = sniff_image_mime(data)
        if mime is not None:
            return ToolResult(content=[ImagePart(data=data, mime_type=mime)])
        part = ResourcePart(uri="data:", mime_type="application/octet-stream", blob=data)
        return ToolResult(content=[part])
    if isinstance(value, _PARTS):
        return ToolResult(content=[value])
    if (
        isinstance(value, list) and value and all(isinstance(p, _PARTS) for p in value)  # pyright: ignore[reportUnknownVariableType]
    ):
        return ToolResult(content=list(value))  # pyright: ignore[reportUnknownArgumentType]
    structured = _jsonable(value)
    return ToolResult([TextPart(_COMPACT_JSON.encode(structured))], False, structured)


def _jsonable(value: Any) -> Any:
    return json_representation(value)


def _as_text(value: Any) -> str:
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__} object>"


def _fallback(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)  # NumPy arrays and scalars, array.array, tensors
    if callable(tolist):
        try:
            return tolist()
        except Exception:
            pass
    return _as_text(value)


def json_representation(value: Any) -> Any:
    """The JSON-compatible form of what a tool returned, for `structured` and the text the model reads.

    Pydantic's serializer first: models, dataclasses, dicts, lists, tuples and sets (as lists),
    `Decimal` (a string, so no digit is lost), `datetime`/`date`/`time` (ISO 8601), `UUID`, enums,
    paths; `bytes` as base64; NaN and infinities as null. Array-likes with a `tolist()` method
    (NumPy arrays and scalars) become lists or plain numbers. Any other object, where it sits,
    becomes its `str()`, as does a whole value the serializer cannot walk (a cycle).
    """
    try:
        return pydantic_core.to_jsonable_python(
            value, inf_nan_mode="null", bytes_mode="base64", fallback=_fallback
        )
    except (pydantic_core.PydanticSerializationError, ValueError, RecursionError):
        return _as_text(value)
