"""`traced_stdio_server.py SPANS_FILE [PORT]`: toolwire tools over stdio (or over Streamable HTTP
on PORT), instrumented, each finished span written to SPANS_FILE as one JSON line (name, kind,
trace and parent ids, attributes)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
from mcp_servers import toolwire_tools
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from toolwire import telemetry
from toolwire.mcp import serve


class LineExporter(SpanExporter):
    def __init__(self, path: Path) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self.path.open("a", encoding="utf-8") as out:
            for span in spans:
                parent = span.parent
                line = {
                    "name": span.name,
                    "kind": span.kind.name,
                    "trace_id": span.context.trace_id,
                    "parent_id": parent.span_id if parent is not None else None,
                    "parent_remote": parent.is_remote if parent is not None else None,
                    "attributes": dict(span.attributes or {}),
                }
                out.write(json.dumps(line) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(LineExporter(Path(sys.argv[1]))))
    telemetry.instrument(tracer_provider=provider)
    if len(sys.argv) > 2:
        port = int(sys.argv[2])
        anyio.run(lambda: serve(toolwire_tools(), port=port, name="traced-http"))
    else:
        anyio.run(lambda: serve(toolwire_tools(), stdio=True, name="traced-stdio"))


if __name__ == "__main__":
    main()
