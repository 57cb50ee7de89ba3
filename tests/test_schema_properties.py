"""Property tests: any signature built from supported hints becomes a tool whose schema compiles
for every dialect (or is refused with UnsupportedError) and whose generated arguments validate."""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any, Literal, Optional

import pydantic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire import ToolArgumentsError, UnsupportedError, tool
from toolwire._dialects import DIALECTS
from toolwire._validate import SchemaValidator
from toolwire.models.testing import example_arguments


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(pydantic.BaseModel):
    x: int
    y: float = 0.0
    label: str | None = None


HINTS: dict[str, Any] = {
    "int": int,
    "str": str,
    "float": float,
    "bool": bool,
    "list[int]": list[int],
    "list[str]": list[str],
    "Optional[str]": Optional[str],  # noqa: UP045
    "int | None": int | None,
    "Literal['a', 'b']": Literal["a", "b"],
    "dict[str, int]": dict[str, int],
    "Color": Color,
    "Point": Point,
    "list[Point]": list[Point],
    "dt.date": dt.date,
    "dt.datetime": dt.datetime,
}

params = st.lists(st.tuples(st.sampled_from(sorted(HINTS)), st.booleans()), min_size=0, max_size=6)


def build(spec: list[tuple[str, bool]]) -> Any:
    """A function whose parameters have the given hints (with a default when the flag says so)."""
    parts = []
    for i, (hint, has_default) in enumerate(spec):
        default = " = None" if has_default else ""
        annotation = f"{hint} | None" if has_default and "None" not in hint else hint
        parts.append(f"p{i}: {annotation}{default}")
    ordered = [p for p in parts if "=" not in p] + [p for p in parts if "=" in p]
    source = f"def generated({', '.join(ordered)}) -> str:\n    '''Generated.'''\n    return 'ok'\n"
    namespace: dict[str, Any] = {
        "Optional": Optional,
        "Literal": Literal,
        "Color": Color,
        "Point": Point,
        "dt": dt,
    }
    exec(source, namespace)
    return namespace["generated"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params)
def test_generated_tools_compile_and_accept_their_own_examples(
    spec: list[tuple[str, bool]],
) -> None:
    t = tool(build(spec))
    schema = t.parameters
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {f"p{i}" for i in range(len(spec))}
    required = {f"p{i}" for i, (_, has_default) in enumerate(spec) if not has_default}
    assert set(schema.get("required", [])) == required
    args = example_arguments(schema)
    parsed = t.parse_args(args)
    assert set(parsed) >= required
    assert SchemaValidator(schema).problems(args) == []
    json.dumps(args)
    for dialect in DIALECTS:
        try:
            compiled = t.compiled(dialect)
        except UnsupportedError:
            assert dialect in ("openai-strict", "anthropic-strict", "gemini")
            continue
        assert compiled.schema["type"] == "object"
    if t.strict:
        # What a strict model sends: every property, null wherever null is allowed (the optional
        # ones, nested models included); toolwire must read those nulls as "not given".
        strict_schema = t.compiled("openai-strict").schema
        strict_args = nulls_where_allowed(strict_schema, strict_schema)
        assert SchemaValidator(strict_schema).problems(strict_args) == []
        assert set(t.parse_args(strict_args)) >= required


def nulls_where_allowed(node: Any, root: dict[str, Any]) -> Any:
    if "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    kinds = node.get("type")
    branches = node.get("anyOf", [])
    if (isinstance(kinds, list) and "null" in kinds) or {"type": "null"} in branches:
        return None
    if kinds == "object":
        return {k: nulls_where_allowed(v, root) for k, v in node.get("properties", {}).items()}
    return example_arguments(
        {
            "type": "object",
            "properties": {"v": node},
            "required": ["v"],
            "$defs": root.get("$defs", {}),
        }
    )["v"]


@settings(max_examples=150, deadline=None)
@given(
    params,
    st.dictionaries(
        st.text(max_size=8),
        st.from_type(type(None)) | st.integers() | st.text(max_size=5),
        max_size=5,
    ),
)
def test_any_mapping_either_validates_or_explains_itself(
    spec: list[tuple[str, bool]], junk: dict[str, Any]
) -> None:
    t = tool(build(spec))
    outcome: Any
    try:
        outcome = t.parse_args(junk)
    except ToolArgumentsError as exc:  # anything else escaping fails the test
        outcome = exc
    if isinstance(outcome, ToolArgumentsError):
        assert outcome.problems
        assert "Invalid arguments" in str(outcome)
    else:
        assert set(outcome) <= set(t.parameters["properties"])
