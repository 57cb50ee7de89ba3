"""`toolwire run --trace`: the run's spans kept in memory and printed as a tree, for a look at a
run without any tracing backend."""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from typing import Any

from . import telemetry
from ._extras import require_extra

__all__ = ["SpanTree", "format_tree"]

_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


class SpanTree:
    """An in-memory tracer provider for one command; `lines()` renders what it recorded."""

    def __init__(self) -> None:
        require_extra("otel", "opentelemetry.sdk", needed_by="--trace")
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self._exporter = InMemorySpanExporter()
        self._provider = TracerProvider()
        self._provider.add_span_processor(SimpleSpanProcessor(self._exporter))

    @contextlib.contextmanager
    def recording(self) -> Generator[None]:
        """Trace every run inside the block into this tree."""
        telemetry.instrument(tracer_provider=self._provider)
        try:
            yield
        finally:
            telemetry.uninstrument()
            self._provider.shutdown()

    def lines(self) -> list[str]:
        return format_tree(self._exporter.get_finished_spans())


def _label(span: Any) -> str:
    attributes = dict(span.attributes or {})
    took = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
    text = f"{span.name}  {took:.1f} ms"
    if all(key in attributes for key in _TOKENS):
        text += f"  tokens {attributes[_TOKENS[0]]} in / {attributes[_TOKENS[1]]} out"
    error = attributes.get("error.type")
    if error is not None:
        text += f"  error: {error}"
    return text


def format_tree(spans: Sequence[Any]) -> list[str]:
    """Finished spans as an indented tree, children in start order, with durations and tokens."""
    ids = {span.context.span_id for span in spans}
    children: dict[int | None, list[Any]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in ids else None, []).append(span)
    for group in children.values():
        group.sort(key=lambda s: s.start_time or 0)
    out: list[str] = []

    def walk(span: Any, prefix: str, last: bool, root: bool) -> None:
        if root:
            out.append(_label(span))
            inner = ""
        else:
            out.append(prefix + ("└── " if last else "├── ") + _label(span))
            inner = prefix + ("    " if last else "│   ")
        kids = children.get(span.context.span_id, [])
        for i, kid in enumerate(kids):
            walk(kid, inner, i == len(kids) - 1, False)

    for root in children.get(None, []):
        walk(root, "", True, True)
    return out
