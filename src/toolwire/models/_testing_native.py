"""Native (provider-side) tools in the offline models: scripted server tool uses, and what
`TestModel` reports for the native specs it is given.

A scripted answer may say the provider ran its own tools (`NativeReply`, `ServerCall`): it becomes
the parts a real adapter produces (`ServerToolCallBlock`, its `ServerToolResultBlock`, text with
`Citation`s) and the uses are counted in `Usage.server_tool_requests`, so per-use fees apply when
the model stands in for a priced provider.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, cast

from .._record import record
from ..errors import UnsupportedError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Citation,
    Message,
    ServerToolCallBlock,
    ServerToolResultBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from ..native import NativeTool
    from .base import ToolCall

__all__ = ["NativeReply", "ServerCall"]


@record
class ServerCall:
    """One use of a provider-side tool in a scripted answer: the call, and what the provider
    reported back.

    Attributes:
        name: The tool's kind: `"web_search"`, `"web_fetch"`, `"code_execution"`, ...
        arguments: What the model asked the tool (e.g. `{"query": "..."}`).
        result: What the tool returned (e.g. a list of search results).
        is_error: The provider reported the use as failed.
        id: The call's id; one is made up when `None`.
    """

    name: str
    arguments: Any = None
    result: Any = None
    is_error: bool = False
    id: str | None = None


@record
class NativeReply:
    """A scripted answer in which the provider ran its own tools, shaped as adapters return one.

    Attributes:
        text: The answer's text (may be empty when the turn only calls function tools).
        server_calls: The provider-side tool uses, in order, before the text.
        citations: The sources the text cites.
        tool_calls: Function calls in the same turn, as `(name, args)` pairs or `ToolCall`s.
    """

    text: str = ""
    server_calls: Sequence[ServerCall] = ()
    citations: Sequence[Citation] = ()
    tool_calls: Sequence[ToolCall | tuple[str, Any]] = field(
        default_factory=list["ToolCall | tuple[str, Any]"]
    )


def server_parts(calls: Sequence[ServerCall], first_id: int) -> list[AssistantPart]:
    """Each use as a call block followed by its result block, ids made up where missing."""
    parts: list[AssistantPart] = []
    for n, call in enumerate(calls, start=first_id):
        call_id = call.id or f"srvtool_{n}"
        parts.append(ServerToolCallBlock(id=call_id, name=call.name, arguments=call.arguments))
        parts.append(
            ServerToolResultBlock(
                call_id=call_id, name=call.name, content=call.result, is_error=call.is_error
            )
        )
    return parts


def count_server_calls(message: AssistantMessage) -> dict[str, int]:
    """Uses per tool kind, as `Usage.server_tool_requests` counts them."""
    counts: dict[str, int] = {}
    for part in message.parts:
        if isinstance(part, ServerToolCallBlock):
            counts[part.name] = counts.get(part.name, 0) + 1
    return counts


# --- TestModel: one example use of each native tool it is given -------------------------------

EXAMPLE_URL = "https://example.com/"
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


def example_calls(specs: Sequence[NativeTool], messages: Sequence[Message]) -> list[ServerCall]:
    """One use of each native tool, with arguments drawn from the last user turn.

    Raises:
        UnsupportedError: `computer_use()`, which the caller (not the provider) acts on.
    """
    prompt = _last_prompt(messages)
    calls: list[ServerCall] = []
    for spec in specs:
        if spec.kind == "web_search":
            query = prompt or "example"
            found = [{"url": EXAMPLE_URL, "title": "Example Domain", "snippet": query}]
            calls.append(ServerCall("web_search", {"query": query}, found))
        elif spec.kind == "web_fetch":
            urls = _URL.findall(prompt)
            url = urls[0] if urls else EXAMPLE_URL
            page = {"url": url, "title": "Example Domain", "content": "Example page text."}
            calls.append(ServerCall("web_fetch", {"url": url}, page))
        elif spec.kind == "code_execution":
            ran = {"stdout": "example\n", "stderr": "", "return_code": 0}
            calls.append(ServerCall("code_execution", {"code": "print('example')"}, ran))
        else:
            raise UnsupportedError(
                f"TestModel cannot answer {spec.kind}(): the caller acts on it, not the "
                "provider; script the exchange with ScriptedModel"
            )
    return calls


def example_citations(
    messages: Sequence[Message], current: Sequence[AssistantPart], text: str
) -> list[Citation]:
    """A citation over `text` of each page searched or fetched since the last user turn
    (`current`: the parts of the turn being written)."""
    results: list[ServerToolResultBlock] = []
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage):
            found = [p for p in message.parts if isinstance(p, ServerToolResultBlock)]
            results[:0] = found
    results.extend(p for p in current if isinstance(p, ServerToolResultBlock))
    cited: list[Citation] = []
    seen: set[str] = set()
    for block in results:
        if block.is_error:
            continue
        for url, title, passage in _sources(block):
            if url not in seen:
                seen.add(url)
                cited.append(Citation(url, title, passage, 0, len(text)))
    return cited


def _sources(block: ServerToolResultBlock) -> list[tuple[str, str | None, str | None]]:
    """(url, title, passage) of each page in a search or fetch result."""
    content: Any = block.content
    items: list[Any] = content if isinstance(content, list) else [content]  # pyright: ignore[reportUnknownVariableType]
    out: list[tuple[str, str | None, str | None]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        page = cast(dict[str, Any], item)
        url, title = page.get("url"), page.get("title")
        passage = page.get("snippet", page.get("content"))
        if isinstance(url, str):
            out.append(
                (
                    url,
                    title if isinstance(title, str) else None,
                    passage if isinstance(passage, str) else None,
                )
            )
    return out


def _last_prompt(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.text
    return ""
