"""`toolwire tools URL --cost`: what each of a server's tools costs in tokens, per dialect.

The figures are `toolwire.tokens`'s: OpenAI's tokenizer where `tiktoken` is installed, else a
stated estimate; the table's caption says which.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .errors import SchemaError, UnsupportedError
from .tokens import tool_cost
from .tools import Tool, as_tool

__all__ = ["COST_DIALECTS", "cost_report", "print_costs"]

COST_DIALECTS = ("openai", "anthropic", "gemini")
"""The dialects the command counts for (OpenAI's covers every server copying its API)."""


def cost_report(specs: Sequence[Any]) -> dict[str, Any]:
    """Tokens per tool and dialect (`None` where the dialect cannot express the tool), the
    totals, and how each dialect was counted."""
    tools: list[Tool] = [
        as_tool(
            {
                "name": spec.name,
                "description": spec.description or "",
                "parameters": spec.input_schema,
            }
        )
        for spec in specs
    ]
    rows: list[dict[str, Any]] = [{"name": t.name} for t in tools]
    totals: dict[str, int] = {}
    methods: dict[str, str] = {}
    for dialect in COST_DIALECTS:
        totals[dialect] = 0
        for row, item in zip(rows, tools, strict=True):
            try:
                [cost] = tool_cost([item], dialect)
            except (UnsupportedError, SchemaError):
                row[dialect] = None
                continue
            row[dialect] = cost.tokens
            totals[dialect] += cost.tokens
            methods[dialect] = cost.method
    return {"tools": rows, "total": totals, "methods": methods}


def print_costs(specs: Sequence[Any], out: Console, *, as_json: bool) -> None:
    """Print `cost_report` as JSON or as a table."""
    report = cost_report(specs)
    if as_json:
        out.print_json(json.dumps(report))
        return
    methods = sorted(set(report["methods"].values()))
    table = Table(
        title=f"{len(specs)} tools: tokens per request that carries them",
        caption="counted by " + "; ".join(methods) if methods else None,
    )
    table.add_column("name", style="bold")
    for dialect in COST_DIALECTS:
        table.add_column(dialect, justify="right")
    for row in report["tools"]:
        cells = ["n/a" if row[d] is None else str(row[d]) for d in COST_DIALECTS]
        table.add_row(Text(row["name"]), *cells)
    table.add_row(Text("total", style="bold"), *(str(report["total"][d]) for d in COST_DIALECTS))
    out.print(table)
