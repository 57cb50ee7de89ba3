"""Argument validation: toolwire's validator against jsonschema and jsonschema-rs.

Three realistic tool schemas (flat; nested with enums and arrays; `$defs` + `anyOf`), each with a
valid and an invalid call. For every library, two measures per input: the verdict alone
(`is_valid`) and the verdict with every problem explained (toolwire `problems`, jsonschema
`iter_errors`, jsonschema-rs `iter_errors`), which is what a tool call with bad arguments needs.
Also the strict-mode path of `parse_args` when the text holds a null. Best of several repeats.

Run: `.venv/bin/python benchmarks/validation.py [N]` (part of `benchmarks/dispatch.py`).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

REPEATS = 5

FLAT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "metric": {"type": "boolean"},
        "lang": {"type": "string", "pattern": "^[a-z]{2}$"},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
NESTED = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 200},
        "priority": {"enum": ["low", "normal", "high", "urgent"]},
        "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 10},
        "assignees": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "login": {"type": "string"},
                    "role": {"enum": ["owner", "reviewer", "watcher"]},
                },
                "required": ["login", "role"],
                "additionalProperties": False,
            },
        },
        "due": {"type": "object", "properties": {"year": {"type": "integer"}, "month": {"type": "integer", "minimum": 1, "maximum": 12}}},
    },
    "required": ["title", "priority"],
    "additionalProperties": False,
}  # fmt: skip
DEFS = {
    "$defs": {
        "Email": {
            "type": "object",
            "properties": {"kind": {"const": "email"}, "to": {"type": "string"}, "subject": {"type": "string"}},
            "required": ["kind", "to"],
            "additionalProperties": False,
        },
        "Sms": {
            "type": "object",
            "properties": {"kind": {"const": "sms"}, "number": {"type": "string", "pattern": "^\\+[0-9]{8,15}$"}},
            "required": ["kind", "number"],
            "additionalProperties": False,
        },
        "Message": {"type": "object", "properties": {"text": {"type": "string"}, "urgent": {"type": "boolean"}}, "required": ["text"]},
    },
    "type": "object",
    "properties": {
        "channel": {"anyOf": [{"$ref": "#/$defs/Email"}, {"$ref": "#/$defs/Sms"}]},
        "message": {"$ref": "#/$defs/Message"},
        "retries": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
    },
    "required": ["channel", "message"],
}  # fmt: skip
CASES: list[tuple[str, dict[str, Any], Any, Any]] = [
    ("flat", FLAT, {"city": "Recife", "days": 3, "metric": True, "lang": "pt"},
     {"city": "", "days": 30, "metrik": True, "lang": "PT"}),
    ("nested", NESTED,
     {"title": "Fix login", "priority": "high", "labels": ["bug", "auth"],
      "assignees": [{"login": "ana", "role": "owner"}, {"login": "bo", "role": "reviewer"}],
      "due": {"year": 2026, "month": 3}},
     {"title": "Fix login", "priority": "hgh", "labels": ["bug", "bug"],
      "assignees": [{"login": "ana", "role": "boss"}, {"login": 7}], "due": {"month": 13}}),
    ("$defs+anyOf", DEFS,
     {"channel": {"kind": "sms", "number": "+5581999990000"}, "message": {"text": "hi"}, "retries": 2},
     {"channel": {"kind": "sms", "number": "81999"}, "message": {"txt": "hi"}, "retries": -1}),
]  # fmt: skip


def best(fn: Callable[[], Any], n: int) -> float:
    for _ in range(min(n, 200)):
        fn()
    result = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        result = min(result, (time.perf_counter() - start) / n * 1e6)
    return result


def contenders(
    schema: dict[str, Any],
) -> dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]:
    from toolwire._validate import SchemaValidator

    ours = SchemaValidator(schema)
    out = {"toolwire": (ours.is_valid, ours.problems)}
    try:
        import jsonschema

        ref = jsonschema.Draft202012Validator(schema)
        out["jsonschema"] = (ref.is_valid, lambda x: list(ref.iter_errors(x)))
    except ImportError:
        pass
    try:
        import jsonschema_rs

        rs = jsonschema_rs.Draft202012Validator(schema)
        out["jsonschema-rs"] = (rs.is_valid, lambda x: list(rs.iter_errors(x)))
    except ImportError:
        pass
    return out


def validation(n: int) -> None:
    print(f"\nvalidation: us per call, best of {REPEATS} x {n}; 'explain' lists every problem")
    header = f"{'schema':>12} {'input':>8} {'library':>14} {'verdict':>9} {'explain':>9}"
    print(header)
    for name, schema, good, bad in CASES:
        for label, instance in (("valid", good), ("invalid", bad)):
            for lib, (verdict, explain) in contenders(schema).items():
                v = best(lambda verdict=verdict, x=instance: verdict(x), n)
                e = best(lambda explain=explain, x=instance: explain(x), n)
                print(f"{name:>12} {label:>8} {lib:>14} {v:9.2f} {e:9.2f}")


def strict_nulls(n: int) -> None:
    from toolwire import tool

    def search(query: str, limit: int | None = None, lang: str | None = None) -> str:
        """Search.

        Args:
            query: Words.
            limit: Most results.
            lang: Language.
        """
        return query

    t = tool(search)
    assert t.strict
    texts = {
        "no null": json.dumps({"query": "nullable types", "limit": 5, "lang": "en"}),
        "'null' in a value": json.dumps({"query": "null pointer", "limit": 5, "lang": "en"}),
        "null for an optional": json.dumps({"query": "x", "limit": None, "lang": None}),
    }
    print(
        f"\nparse_args on a strict tool with optional parameters, us per call (best of {REPEATS})"
    )
    for label, text in texts.items():
        print(f"{label:>22}: {best(lambda text=text: t.parse_args(text), n):8.2f}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    validation(count)
    strict_nulls(count)
