"""MCP wire shapes <-> toolwire values: content blocks, tool results, tool listings, annotations.

Plain dicts on both sides of the wire: parsing a result with the SDK's version-aware models would
cost more than the whole HTTP exchange, and a malformed result has to become a readable error
result rather than a validation traceback.
"""

from __future__ import annotations

import base64
import binascii
import json
import marshal
import typing
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from ..errors import McpAuthError, McpConnectionError, McpError, McpProtocolError
from ..results import (
    AudioPart,
    ContentPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
    ToolResult,
)
from ..tools import ToolAnnotations

__all__ = [
    "APPROVAL_META_KEY",
    "InputSchemas",
    "McpAuthError",
    "McpConnectionError",
    "McpError",
    "McpProtocolError",
    "McpToolSpec",
    "SharedValues",
    "annotations_from_mcp",
    "annotations_to_mcp",
    "lenient_schema",
    "parse_call_result",
    "parse_part",
    "parse_tool_spec",
    "part_to_mcp",
    "result_to_mcp",
]


_V = TypeVar("_V")

APPROVAL_META_KEY = "toolwire/requiresApproval"
"""The `_meta` key of a listed tool that needs a person's approval before each call.

MCP annotations have no word for it, so it travels in the tool's `_meta`; toolwire's client reads
it back into `requires_approval`, so the calling agent's approval policy applies.
"""


_NO_ANNOTATIONS = ToolAnnotations()
"""Shared by every tool listed without annotations (frozen): a listing may hold 100,000."""


class McpToolSpec:
    """A tool as an MCP server lists it (immutable).

    A listing may hold 100,000 tools and a run uses a few, so the schemas are kept in a compact
    serialised form and decoded when read: each read of `input_schema` or `output_schema` gives a
    new dict, which the caller may change freely.

    Attributes:
        name: The server's name for the tool.
        description: What the server says the tool does (may be empty).
        input_schema: The JSON Schema of the arguments.
        output_schema: The JSON Schema of `structuredContent`, when the server declares one.
        annotations: The server's behaviour hints.
        title: A display name, when the server gives one.
        requires_approval: The server says each call needs a person's approval first (toolwire
            servers say so in the tool's `_meta`, under `APPROVAL_META_KEY`).
    """

    # Read-only properties over private slots rather than a frozen dataclass: a listing builds
    # 100,000 of these, and a frozen class's `object.__setattr__` per field costs five times
    # the plain slot stores (measured).
    __slots__ = (
        "_annotations",
        "_approval",
        "_description",
        "_input",
        "_name",
        "_output",
        "_title",
    )
    # Positional patterns (`case McpToolSpec(name, description, schema)`) as on the dataclass.
    __match_args__ = (
        "name",
        "description",
        "input_schema",
        "output_schema",
        "annotations",
        "title",
        "requires_approval",
    )

    def __init__(
        self,
        name: str,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        annotations: ToolAnnotations = _NO_ANNOTATIONS,
        title: str | None = None,
        requires_approval: bool = False,
    ) -> None:
        self._name = name
        self._description = description
        self._input = _pack(input_schema) if input_schema is not None else _EMPTY_INPUT
        self._output = _pack(output_schema) if output_schema is not None else None
        self._annotations = annotations
        self._title = title
        self._approval = requires_approval

    @classmethod
    def _packed(
        cls,
        name: str,
        description: str,
        packed_input: bytes,
        packed_output: bytes | None,
        annotations: ToolAnnotations,
        title: str | None,
        requires_approval: bool,
    ) -> McpToolSpec:
        """A spec whose schemas `_pack` has packed already."""
        spec = cls.__new__(cls)
        spec._name = name
        spec._description = description
        spec._input = packed_input
        spec._output = packed_output
        spec._annotations = annotations
        spec._title = title
        spec._approval = requires_approval
        return spec

    @property
    def name(self) -> str:
        """The server's name for the tool."""
        return self._name

    @property
    def description(self) -> str:
        """What the server says the tool does (may be empty)."""
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments (a new dict at each read)."""
        return marshal.loads(self._input)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of `structuredContent`, or `None` (a new dict at each read)."""
        packed = self._output
        return marshal.loads(packed) if packed is not None else None

    @property
    def annotations(self) -> ToolAnnotations:
        """The server's behaviour hints."""
        return self._annotations

    @property
    def title(self) -> str | None:
        """A display name, when the server gives one."""
        return self._title

    @property
    def requires_approval(self) -> bool:
        """The server says each call needs a person's approval first."""
        return self._approval

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, McpToolSpec):
            return NotImplemented
        return (
            self._name == other._name
            and self._description == other._description
            and self._annotations == other._annotations
            and self._title == other._title
            and self._approval == other._approval
            and _same_schema(self._input, other._input)
            and _same_schema(self._output, other._output)
        )

    __hash__ = None  # type: ignore[assignment]  # as a dataclass holding dicts: by value, unhashable

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            McpToolSpec,
            (
                self._name,
                self._description,
                self.input_schema,
                self.output_schema,
                self._annotations,
                self._title,
                self._approval,
            ),
        )

    def __repr__(self) -> str:
        return (
            f"McpToolSpec(name={self._name!r}, description={self._description!r}, "
            f"input_schema={self.input_schema!r}, output_schema={self.output_schema!r}, "
            f"annotations={self._annotations!r}, title={self._title!r}, "
            f"requires_approval={self._approval!r})"
        )


def _pack(schema: Mapping[str, Any]) -> bytes:
    """A schema in the compact form a spec keeps (see `McpToolSpec`).

    `marshal`: about five times cheaper to write than compact JSON (0.1 s against 0.5 s for the
    schemas of 100,000 tools, measured), smaller, and read only in this process from bytes it
    wrote itself. A mapping it cannot take (a `dict` subclass, say) is copied to plain JSON
    values first.

    Raises:
        TypeError: the schema holds something JSON cannot express.
    """
    try:
        return marshal.dumps(typing.cast(Any, schema))
    except ValueError:
        return marshal.dumps(json.loads(json.dumps(schema)))


class InputSchemas(Mapping[str, dict[str, Any]]):
    """The listed input schemas by tool name, each decoded when asked for (a transport asks for
    those of the tools a run calls, not for every tool of a listing)."""

    __slots__ = ("_specs",)

    def __init__(self, specs: Mapping[str, McpToolSpec]) -> None:
        self._specs = specs

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._specs[name].input_schema

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)


def _same_schema(one: bytes | None, other: bytes | None) -> bool:
    """Whether two packed schemas hold equal values. Equal bytes say so at once; unequal bytes
    may still hold equal values (key order, or which strings `marshal` wrote as references)."""
    if one == other:
        return True
    if one is None or other is None:
        return False
    return marshal.loads(one) == marshal.loads(other)


_EMPTY_INPUT = _pack({"type": "object", "properties": {}})


_HINTS = (
    ("title", "title"),
    ("readOnlyHint", "read_only_hint"),
    ("destructiveHint", "destructive_hint"),
    ("idempotentHint", "idempotent_hint"),
    ("openWorldHint", "open_world_hint"),
)


def annotations_from_mcp(raw: Any) -> ToolAnnotations:
    """Read MCP `annotations`; values of the wrong type count as "not said"."""
    if not isinstance(raw, Mapping):
        return _NO_ANNOTATIONS
    data = typing.cast(Mapping[str, Any], raw)
    title = data.get("title")
    values: dict[str, Any] = {"title": title if isinstance(title, str) else None}
    for wire, attr in _HINTS[1:]:
        value = data.get(wire)
        values[attr] = value if isinstance(value, bool) else None
    return ToolAnnotations(**values)


def annotations_to_mcp(annotations: ToolAnnotations) -> dict[str, Any] | None:
    """MCP `annotations` for a tool, or `None` when it says nothing."""
    out = {
        wire: getattr(annotations, attr)
        for wire, attr in _HINTS
        if getattr(annotations, attr) is not None
    }
    return out or None


class SharedValues:
    """Equal descriptions and packed schemas of one listing, held once.

    Servers made from one API description repeat them. Each value kept costs about 50 bytes of
    table and each repeat found saves a value of a few hundred, so the table is dropped once
    4,000 values have been seen and fewer than one in five repeated: a listing of distinct tools
    pays for a few pages' table, not for one entry per tool.
    """

    __slots__ = ("_hits", "_seen", "_table")

    def __init__(self) -> None:
        self._table: dict[Any, Any] | None = {}
        self._seen = 0
        self._hits = 0

    def take(self, value: _V) -> _V:
        """`value`, or the equal one taken before."""
        table = self._table
        if table is None:
            return value
        kept = table.setdefault(value, value)
        self._seen += 1
        if kept is not value:
            self._hits += 1
        elif self._seen >= 4000 and self._hits * 5 < self._seen:
            self._table = None
        return kept


def parse_tool_spec(raw: Any, shared: SharedValues | None = None) -> McpToolSpec:
    """One entry of a `tools/list` result.

    `shared`, kept across the entries of one listing, holds equal descriptions and schemas once.

    Raises:
        McpProtocolError: the entry has no name or a schema that is not an object.
    """
    # `type(...) is dict` first: what the JSON decoder made, without the slower ABC check.
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise McpProtocolError(f"a listed tool is not an object: {_short(raw)}")
    data = typing.cast(Mapping[str, Any], raw)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise McpProtocolError(f"a listed tool has no name: {_short(raw)}")
    schema: Any = data.get("inputSchema")
    if schema is not None and type(schema) is not dict and not isinstance(schema, Mapping):
        raise McpProtocolError(f"tool {name!r} has an inputSchema that is not an object")
    output: Any = data.get("outputSchema")
    if output is not None and type(output) is not dict and not isinstance(output, Mapping):
        raise McpProtocolError(f"tool {name!r} has an outputSchema that is not an object")
    description = data.get("description")
    title = data.get("title")
    meta: Any = data.get("_meta")
    approval = (
        meta is not None
        and isinstance(meta, Mapping)
        and typing.cast(Mapping[str, Any], meta).get(APPROVAL_META_KEY) is True
    )
    hints = data.get("annotations")
    try:
        packed = (
            _pack(typing.cast(Mapping[str, Any], schema)) if schema is not None else _EMPTY_INPUT
        )
        packed_output = (
            _pack(typing.cast(Mapping[str, Any], output)) if output is not None else None
        )
    except (TypeError, ValueError, RecursionError):
        raise McpProtocolError(f"tool {name!r} has a schema that cannot be read") from None
    description = description if isinstance(description, str) else ""
    if shared is not None:
        description = shared.take(description)
        packed = shared.take(packed)
    return McpToolSpec._packed(  # pyright: ignore[reportPrivateUsage]  (its own module)
        name,
        description,
        packed,
        packed_output,
        annotations_from_mcp(hints) if hints is not None else _NO_ANNOTATIONS,
        title if isinstance(title, str) else None,
        approval,
    )


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _decode(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise McpProtocolError(f"{what} has no base64 `data`")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise McpProtocolError(f"{what} has invalid base64 data: {exc}") from None


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def parse_part(raw: Any, index: int) -> ContentPart:
    """One MCP content block as a toolwire part.

    Raises:
        McpProtocolError: the block does not have the shape MCP prescribes.
    """
    if not isinstance(raw, Mapping):
        raise McpProtocolError(f"content[{index}] is not an object: {_short(raw)}")
    item = typing.cast(Mapping[str, Any], raw)
    kind = item.get("type")
    where = f"content[{index}] ({kind})"
    if kind == "text":
        text = item.get("text")
        if not isinstance(text, str):
            raise McpProtocolError(f"{where} has no `text` string")
        return TextPart(text)
    if kind == "image":
        data = _decode(item.get("data"), where)
        return ImagePart(data=data, mime_type=_opt_str(item, "mimeType") or "image/png")
    if kind == "audio":
        data = _decode(item.get("data"), where)
        return AudioPart(data=data, mime_type=_opt_str(item, "mimeType") or "audio/wav")
    if kind == "resource":
        resource = item.get("resource")
        if not isinstance(resource, Mapping):
            raise McpProtocolError(f"{where} has no `resource` object")
        res = typing.cast(Mapping[str, Any], resource)
        uri = res.get("uri")
        if not isinstance(uri, str):
            raise McpProtocolError(f"{where} has no `uri`")
        mime = _opt_str(res, "mimeType")
        if isinstance(res.get("text"), str):
            return ResourcePart(uri=uri, mime_type=mime, text=res["text"])
        if "blob" in res:
            return ResourcePart(uri=uri, mime_type=mime, blob=_decode(res["blob"], where))
        raise McpProtocolError(f"{where} has neither `text` nor `blob`")
    if kind == "resource_link":
        uri = item.get("uri")
        if not isinstance(uri, str):
            raise McpProtocolError(f"{where} has no `uri`")
        return ResourceLinkPart(
            uri=uri,
            name=_opt_str(item, "name"),
            description=_opt_str(item, "description"),
            mime_type=_opt_str(item, "mimeType"),
        )
    raise McpProtocolError(f"content[{index}] has an unknown type {kind!r}")


def lenient_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` as an object schema: servers often leave `type` out of an empty one."""
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def parse_call_result(raw: Any) -> ToolResult:
    """A `tools/call` result as a `ToolResult`.

    Raises:
        McpProtocolError: the result does not have the shape MCP prescribes.
    """
    if not isinstance(raw, Mapping):
        raise McpProtocolError(f"the tools/call result is not an object: {_short(raw)}")
    data = typing.cast(Mapping[str, Any], raw)
    content = data.get("content", [])
    if not isinstance(content, list):
        raise McpProtocolError("the tools/call result's `content` is not a list")
    parts = [parse_part(item, i) for i, item in enumerate(typing.cast(list[Any], content))]
    is_error = data.get("isError", False)
    if not isinstance(is_error, bool):
        raise McpProtocolError("the tools/call result's `isError` is not a boolean")
    structured = data.get("structuredContent")
    if structured is not None and not isinstance(structured, dict):
        raise McpProtocolError("the tools/call result's `structuredContent` is not an object")
    return ToolResult(content=parts, is_error=is_error, structured=structured)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _part_to_mcp(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.data is None:
            # MCP images carry their bytes; a URL-only image can only travel as a link.
            return {
                "type": "resource_link",
                "uri": part.url,
                "name": part.url,
                "mimeType": part.mime_type,
            }
        return {"type": "image", "data": _b64(part.data), "mimeType": part.mime_type}
    if isinstance(part, AudioPart):
        return {"type": "audio", "data": _b64(part.data), "mimeType": part.mime_type}
    if isinstance(part, ResourcePart):
        resource: dict[str, Any] = {"uri": part.uri}
        if part.mime_type is not None:
            resource["mimeType"] = part.mime_type
        if part.text is not None:
            resource["text"] = part.text
        else:
            resource["blob"] = _b64(part.blob or b"")
        return {"type": "resource", "resource": resource}
    link: dict[str, Any] = {"type": "resource_link", "uri": part.uri, "name": part.name or part.uri}
    if part.description is not None:
        link["description"] = part.description
    if part.mime_type is not None:
        link["mimeType"] = part.mime_type
    return link


def part_to_mcp(part: ContentPart) -> dict[str, Any]:
    """A content part as an MCP content block (a URL-only image becomes a resource link)."""
    return _part_to_mcp(part)


def result_to_mcp(result: ToolResult) -> dict[str, Any]:
    """A `ToolResult` as an MCP `tools/call` result."""
    out: dict[str, Any] = {"content": [_part_to_mcp(p) for p in result.content]}
    if result.is_error:
        out["isError"] = True
    else:
        structured: Any = result.structured
        if isinstance(structured, dict):
            # MCP only allows an object here; other JSON values stay in the text content.
            out["structuredContent"] = structured
    return out
