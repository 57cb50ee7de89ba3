"""`as_tool` knows toolwire's own tool classes by class, before the runtime protocol check: the
same tools come back as before, and structural tools still pass through the protocol."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import tool, web_search
from toolwire.middleware import ToolWrapper, with_timeout
from toolwire.tools import FunctionTool, Tool, as_tool


def bump(n: int) -> int:
    """Add one."""
    return n + 1


def test_toolwire_tools_and_wrappers_come_back_as_they_are() -> None:
    plain = tool(bump)
    timed = with_timeout(5)(plain)
    assert isinstance(timed, ToolWrapper)
    assert as_tool(plain) is plain
    assert as_tool(timed) is timed

    class Renamed(ToolWrapper):
        @property
        def name(self) -> str:
            return "renamed"

    renamed = Renamed(plain)
    assert as_tool(renamed) is renamed and as_tool(renamed).name == "renamed"


def test_a_structural_tool_still_passes_through_the_protocol() -> None:
    class Structural:
        """A tool of the user's own, not built on toolwire's classes."""

        def __init__(self) -> None:
            self.inner = tool(bump)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    made = Structural()
    assert not isinstance(made, FunctionTool | ToolWrapper)
    # Protocol members are looked up on the instance, so __getattr__ satisfies them.
    assert isinstance(made, Tool)
    assert as_tool(made) is made


def test_native_specs_and_functions_keep_their_own_paths() -> None:
    with pytest.raises(TypeError, match="provider"):
        as_tool(web_search())
    made = as_tool(bump)
    assert isinstance(made, FunctionTool) and made.name == "bump"
