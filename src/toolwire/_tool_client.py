"""What a tool served over MCP can ask of the client that called it, as `ToolContext.client`.

Core code: no MCP here. `toolwire.mcp`'s server gives each call an object with these methods
(progress, log lines, a completion of the client's model, a question to its user); outside an
MCP server `ToolContext.client` is `None` and `ToolContext`'s helpers say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Literal, Protocol, TypeAlias

from ._record import record
from .messages import AssistantMessage, UserMessage
from .results import AudioPart, ImagePart, TextPart

__all__ = ["Elicited", "LogLevel", "Sampled", "ToolClient"]

LogLevel: TypeAlias = Literal[
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
]
"""The syslog severities MCP logging uses, least severe first."""


@record(frozen=True)
class Sampled:
    """What the client's model answered.

    Attributes:
        content: The answer: text, an image or audio.
        model: The model that answered, as the client names it.
        stop_reason: Why it stopped (`"endTurn"`, `"maxTokens"`, ...), when the client says.
    """

    content: list[TextPart | ImagePart | AudioPart]
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        """The text of the answer (empty for an image or audio)."""
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


@record(frozen=True)
class Elicited:
    """What the user answered.

    Attributes:
        action: `"accept"` (submitted), `"decline"` (said no) or `"cancel"` (dismissed).
        content: The submitted form, checked against the requested schema, with its defaults
            filled in; `None` unless accepted.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = field(default=None)


class ToolClient(Protocol):
    """The MCP client a served tool was called by (toolwire's MCP server builds it)."""

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the client how far the call is; nothing happens unless it asked for progress."""
        ...

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """Send a log line to the client; dropped below the level the client chose."""
        ...

    async def sample(
        self,
        messages: str | Sequence[UserMessage | AssistantMessage],
        *,
        max_tokens: int,
        system_prompt: str | None,
        temperature: float | None,
        stop_sequences: Sequence[str] | None,
        model_hints: Sequence[str],
    ) -> Sampled:
        """Ask the client's model for a completion."""
        ...

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the client's user to fill in a form."""
        ...
