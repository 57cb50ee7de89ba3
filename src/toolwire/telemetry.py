"""OpenTelemetry spans and metrics for toolwire runs, following the GenAI semantic conventions.

`instrument()` turns it on for the process: each run is an `invoke_agent {name}` span, each model
request a `chat {model}` span under it, each tool call an `execute_tool {tool}` span that the tool's
own code runs inside. The conventions' `gen_ai.client.token.usage` and
`gen_ai.client.operation.duration` histograms are recorded per model request. Every MCP request
sent or served is a span too, its context carried in the request's `_meta`. Message content
(prompts, answers, tool arguments and results) is recorded only when asked for, on spans or as
the conventions' events.

This module imports nothing from OpenTelemetry: the loop reads one module attribute per run, so a
process that never calls `instrument()` pays nothing, and `opentelemetry-api` is an extra
(`pip install 'toolwire[otel]'`). With the API installed and no SDK configured, spans are the
API's no-op spans.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ._extras import require_extra

if TYPE_CHECKING:
    from ._otel import Instrumentation

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "ContentMode",
    "instrument",
    "is_instrumented",
    "uninstrument",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' switch for message content, read when `instrument()` is not told."""

ContentMode: TypeAlias = Literal["no_content", "span_only", "event_only", "span_and_event"]
"""Where message content goes when captured (the values the conventions' tooling uses)."""

_MODES = ("no_content", "span_only", "event_only", "span_and_event")
_ENV_WORDS = {"true": "span_and_event", "1": "span_and_event", "yes": "span_and_event"}

_active: Instrumentation | None = None


def instrument(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    logger_provider: Any = None,
    capture_content: bool | ContentMode | None = None,
) -> None:
    """Trace every toolwire run in this process from now on (calling it again reconfigures).

    Args:
        tracer_provider: The OpenTelemetry `TracerProvider` to use (default: the global one).
        meter_provider: The `MeterProvider` for the metrics (default: the global one).
        logger_provider: The `LoggerProvider` the content events go to (default: the global
            one).
        capture_content: Record prompts, answers, tool arguments and results: `"span_only"` as
            span attributes, `"event_only"` as the conventions'
            `gen_ai.client.inference.operation.details` event per model request,
            `"span_and_event"` (or `True`) both; `False` or `"no_content"` neither. `None` reads
            `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` (the same words, or `true`);
            off by default, since content may hold personal data.

    Raises:
        MissingDependencyError: `opentelemetry-api` is not installed.
        ValueError: `capture_content` is none of the above.
    """
    global _active
    require_extra("otel", "opentelemetry", needed_by="toolwire.telemetry")
    from ._otel import Instrumentation

    if capture_content is None:
        word = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower()
        mode: str = _ENV_WORDS.get(word, word if word in _MODES else "no_content")
    elif isinstance(capture_content, bool):
        mode = "span_and_event" if capture_content else "no_content"
    elif capture_content in _MODES:
        mode = capture_content
    else:
        raise ValueError(
            f"capture_content must be a bool or one of {', '.join(_MODES)}; got {capture_content!r}"
        )
    _active = Instrumentation(
        tracer_provider,
        meter_provider,
        capture_content=mode in ("span_only", "span_and_event"),
        content_events=mode in ("event_only", "span_and_event"),
        logger_provider=logger_provider,
    )


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
