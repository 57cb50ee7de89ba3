"""OpenTelemetry spans and metrics for toolwire runs, following the GenAI semantic conventions.

`instrument()` turns it on for the process: each run is an `invoke_agent {name}` span, each model
request a `chat {model}` span under it, each tool call an `execute_tool {tool}` span that the tool's
own code runs inside. The conventions' `gen_ai.client.token.usage` and
`gen_ai.client.operation.duration` histograms are recorded per model request. Message content
(prompts, answers, tool arguments and results) is recorded only when asked for.

This module imports nothing from OpenTelemetry: the loop reads one module attribute per run, so a
process that never calls `instrument()` pays nothing, and `opentelemetry-api` is an extra
(`pip install 'toolwire[otel]'`). With the API installed and no SDK configured, spans are the
API's no-op spans.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ._extras import require_extra

if TYPE_CHECKING:
    from ._otel import Instrumentation

__all__ = ["CAPTURE_CONTENT_ENV", "instrument", "is_instrumented", "uninstrument"]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' switch for message content, read when `instrument()` is not told."""

_active: Instrumentation | None = None


def instrument(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    capture_content: bool | None = None,
) -> None:
    """Trace every toolwire run in this process from now on (calling it again reconfigures).

    Args:
        tracer_provider: The OpenTelemetry `TracerProvider` to use (default: the global one).
        meter_provider: The `MeterProvider` for the metrics (default: the global one).
        capture_content: Record prompts, answers, tool arguments and results as span
            attributes. `None` reads `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
            (`true` turns it on); off by default, since content may hold personal data.

    Raises:
        MissingDependencyError: `opentelemetry-api` is not installed.
    """
    global _active
    require_extra("otel", "opentelemetry", needed_by="toolwire.telemetry")
    from ._otel import Instrumentation

    if capture_content is None:
        capture_content = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in (
            "1",
            "true",
            "yes",
        )
    _active = Instrumentation(tracer_provider, meter_provider, capture_content=capture_content)


def uninstrument() -> None:
    """Stop tracing runs (runs already started finish their spans)."""
    global _active
    _active = None


def is_instrumented() -> bool:
    """Whether `instrument()` is in effect."""
    return _active is not None


def active() -> Instrumentation | None:
    """The instrumentation in effect, for the loop; `None` when off."""
    return _active
