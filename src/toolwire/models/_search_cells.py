"""The tool-search cells of the profiles: which providers search deferred tools themselves.

A profile's `tool_search` cell says how its provider searches tools the request marks
`defer_loading` (Anthropic's tool search tool, OpenAI Responses' hosted `tool_search`), or why it
cannot; where it cannot, `toolwire.tool_search` offers its own local search tool instead. The
builders take the model's name: OpenAI's hosted search exists on gpt-5.4 and later only.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UnsupportedError
from ._parts import Cell, CellContext, NativePayload, no

__all__ = ["ANTHROPIC_SEARCH", "LOCAL_SEARCH", "RESPONSES_SEARCH"]

ANTHROPIC_SEARCH_TYPE = "tool_search_tool_bm25_20251119"


def _anthropic(c: dict[str, Any], e: dict[str, Any], _: CellContext) -> NativePayload:
    # Generally available (the SDK's non-beta types carry it): no beta header is needed.
    return NativePayload([{"type": ANTHROPIC_SEARCH_TYPE, "name": "tool_search_tool_bm25", **e}])


_GPT = re.compile(r"gpt-(\d+)(?:\.(\d+))?")


def _responses(c: dict[str, Any], e: dict[str, Any], ctx: CellContext) -> NativePayload:
    found = _GPT.search(ctx.model_name)
    major, minor = (int(found.group(1)), int(found.group(2) or 0)) if found else (0, 0)
    if (major, minor) < (5, 4):
        raise UnsupportedError(
            f"OpenAI's hosted tool_search needs gpt-5.4 or later, not {ctx.model_name!r}"
        )
    return NativePayload([{"type": "tool_search", **e}])


LOCAL_SEARCH = no("local: toolwire's search tool (BM25)")
"""The cell of a provider without a tool search of its own."""

ANTHROPIC_SEARCH = Cell(ANTHROPIC_SEARCH_TYPE, (), _anthropic)
RESPONSES_SEARCH = Cell("tool_search (gpt-5.4 and later; local before)", (), _responses)
