"""Content-filter verdicts in a response or error body (Azure OpenAI writes them), read by both
OpenAI adapters when `content_filter_error` is on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["filtered_categories"]


def filtered_categories(found: object) -> list[str]:
    """The content-filter categories Azure marked as filtered anywhere in a response or error body.

    Azure reports them under `content_filter_results` (per choice, per prompt) or
    `content_filter_result` (in a refused request's `innererror`), as `{category: {"filtered":
    bool, "severity": ...}}`; each filtered one is named with its severity or what matched.
    """
    names: list[str] = []
    _walk(found, names, 0)
    return list(dict.fromkeys(names))


def _walk(node: object, names: list[str], depth: int) -> None:
    if depth > 8:
        return
    if isinstance(node, Mapping):
        for key, value in cast(Mapping[str, Any], node).items():
            if key in ("content_filter_results", "content_filter_result") and isinstance(
                value, Mapping
            ):
                _collect(cast(Mapping[str, Any], value), names)
            else:
                _walk(value, names, depth + 1)
    elif isinstance(node, list):
        for value in cast(list[Any], node):
            _walk(value, names, depth + 1)
    else:
        to_dict = getattr(node, "model_dump", None)
        if callable(to_dict):
            _walk(to_dict(), names, depth + 1)


def _collect(results: Mapping[str, Any], names: list[str]) -> None:
    for category, found in results.items():
        if not isinstance(found, Mapping):
            continue
        verdict = cast(Mapping[str, Any], found)
        if verdict.get("filtered") is not True:
            continue
        detail: Any = verdict.get("severity")
        if detail is None:
            matched: Any = verdict.get("details")
            if isinstance(matched, list):
                ids = [
                    str(cast(Mapping[str, Any], d).get("id"))
                    for d in cast(list[Any], matched)
                    if isinstance(d, Mapping) and cast(Mapping[str, Any], d).get("id")
                ]
                detail = ", ".join(ids) or None
            elif verdict.get("detected") is True:
                detail = "detected"
        names.append(f"{category} ({detail})" if detail else category)
