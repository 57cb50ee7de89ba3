"""Values an offline model reads from the prompt, the one rule for every offline model.

`TestModel` (what `Agent("test")` and `model("test")` build) and the offline model behind
`toolwire run --model test` fill a tool's arguments the same way: a value found in the prompt goes
to the parameter that takes it (an arithmetic expression to `expression`, an IANA time zone to
`timezone` or `tz`, a CPF or a CNPJ to `cpf` or `cnpj`, the prompt itself to a required free-text
parameter such as `text` or `query`, and the prompt's numbers, in order, to the required numeric
parameters); every other argument is made from the schema.
"""

from __future__ import annotations

import re
import typing
import zoneinfo
from collections.abc import Mapping
from typing import Any

__all__ = ["find_values", "prompt_arguments"]

_NUMBER = r"\d+(?:[.,]\d+)*"
_OPERATOR = r"(?:\s[-−]\s|\s*(?:\*\*|//|[+*/^×÷]|\bof\b)\s*)"
_ARITHMETIC = re.compile(
    rf"[(\s]*{_NUMBER}\s*%?[)\s]*(?:{_OPERATOR}[(\s]*{_NUMBER}\s*%?[)\s]*)+", re.IGNORECASE
)
_CPF = re.compile(r"(?<![\w./-])(?:\d{3}\.\d{3}\.\d{3}-\d{2}|\d{11})(?![\w./-])")
_CNPJ = re.compile(
    r"(?<![\w./-])(?:[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}/[0-9A-Z]{4}-\d{2}|[0-9A-Z]{12}\d{2})"
    r"(?![\w./-])"
)
_ZONE = re.compile(r"\b(?:UTC|[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_+\-0-9]+)+)\b")

# Parameter names (lower case) -> the kind of value found in the prompt that they take.
_KINDS: dict[str, str] = {
    "expression": "arithmetic",
    "expr": "arithmetic",
    "formula": "arithmetic",
    "timezone": "timezone",
    "time_zone": "timezone",
    "tz": "timezone",
    "cpf": "cpf",
    "cnpj": "cnpj",
}
_FREE_TEXT = frozenset({"text", "message", "query", "q", "prompt", "input", "question"})


def find_values(prompt: str) -> dict[str, str]:
    """The values in `prompt` a tool could take, by kind (`arithmetic`, `timezone`, `cpf`...)."""
    found: dict[str, str] = {}
    rest = prompt
    # Documents and zones first, and out of the text: `529.982.247-25` is no subtraction.
    for kind, pattern in (("cnpj", _CNPJ), ("cpf", _CPF)):
        match = pattern.search(rest)
        if match is not None:
            found[kind] = match.group()
            rest = rest.replace(match.group(), " ")
    for match in _ZONE.finditer(rest):
        if _is_zone(match.group()):
            found["timezone"] = match.group()
            rest = rest.replace(match.group(), " ")
            break
    for match in _ARITHMETIC.finditer(rest):
        expression = match.group().strip(" ,.")
        expression = expression.replace("×", "*").replace("÷", "/").replace("−", "-")
        if expression.count("(") == expression.count(")"):
            found["arithmetic"] = expression
            break
    return found


def _is_zone(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _takes_text(prop: Any) -> bool:
    if not isinstance(prop, Mapping):
        return False
    kind = typing.cast(Mapping[str, Any], prop).get("type")
    return kind is None or kind == "string" or (isinstance(kind, list) and "string" in kind)


_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")


def _numeric(prop: Any) -> str | None:
    if not isinstance(prop, Mapping):
        return None
    kind = typing.cast(Mapping[str, Any], prop).get("type")
    return kind if kind in ("integer", "number") else None


def prompt_arguments(schema: Mapping[str, Any], prompt: str) -> tuple[dict[str, Any], bool]:
    """The arguments of a tool with `schema` that `prompt` gives, and whether a value found by
    kind (expression, zone, CPF, CNPJ) is among them. The rest is left to the caller."""
    found = find_values(prompt)
    properties = typing.cast(dict[str, Any], schema.get("properties") or {})
    required = set(typing.cast(list[str], schema.get("required") or []))
    args: dict[str, Any] = {}
    matched = False
    for name, prop in properties.items():
        kind = _KINDS.get(name.lower())
        if kind is not None and kind in found and _takes_text(prop):
            args[name] = found[kind]
            matched = True
        elif name.lower() in _FREE_TEXT and name in required and _takes_text(prop):
            args[name] = prompt
    numeric = [
        (name, kind)
        for name, prop in properties.items()
        if name in required and name not in args and (kind := _numeric(prop)) is not None
    ]
    rest = prompt
    for value in found.values():  # documents and expressions are not loose numbers
        rest = rest.replace(value, " ")
    numbers = _NUMBER_IN_TEXT.findall(prompt if "arithmetic" in found else rest)
    if numeric and len(numbers) >= len(numeric):
        for (name, kind), text in zip(numeric, numbers, strict=False):
            number = float(text)
            if kind == "integer" and not number.is_integer():
                break
            args[name] = int(number) if kind == "integer" else number
    return args, matched
