"""UI event streams: an agent run as an ASGI endpoint that frontends speak to.

`agent.to_ag_ui()` (the AG-UI protocol; needs the `ui` extra, `ag-ui-protocol`) and
`agent.to_vercel_ai()` (the Vercel AI SDK's UI message stream) build them; see docs/web.md.

The apps load on first use (`toolwire.ui.VercelAiApp`): an agent that never serves a frontend
pays nothing for them at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from .vercel_ai import VercelAiApp

__all__ = ["VercelAiApp"]

_HOMES = {"VercelAiApp": ".vercel_ai"}


__getattr__, __dir__ = _lazy.lazy_names(globals(), _HOMES)
