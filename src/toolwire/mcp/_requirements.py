"""Imported first by `toolwire.mcp`: without the `mcp` extra, the import fails with one line that
names the `pip install`, instead of a `ModuleNotFoundError` from deep inside the client."""

from __future__ import annotations

from .._extras import require_extra

require_extra("mcp", "mcp", "httpx2", needed_by="toolwire.mcp")
