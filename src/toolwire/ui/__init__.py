"""UI event streams: an agent run as an ASGI endpoint that frontends speak to.

`agent.to_ag_ui()` (the AG-UI protocol; needs the `ui` extra, `ag-ui-protocol`) and
`agent.to_vercel_ai()` (the Vercel AI SDK's UI message stream) build them; see docs/web.md.
"""

from __future__ import annotations

__all__: list[str] = []
