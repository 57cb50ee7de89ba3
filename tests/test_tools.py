from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import re
import threading
from typing import Annotated, Any, Literal, Optional, TypedDict

import anyio
import pydantic
import pytest
from pydantic import Field

from toolwire import (
    FunctionTool,
    ImagePart,
    SchemaError,
    TextPart,
    Tool,
    ToolAnnotations,
    ToolArgumentsError,
    ToolContext,
    ToolError,
    ToolNameError,
    ToolResult,
    ToolTimeoutError,
    UnsupportedError,
    as_tool,
    tool,
)

pytestmark = pytest.mark.anyio


class Unit(enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


class Location(pydantic.BaseModel):
    city: str
    country: str = "BR"


@dataclasses.dataclass
class Window:
    start: int
    end: int


class Filters(TypedDict):
    tag: str
    limit: int


def weather(
    location: Location,
    unit: Unit,
    when: dt.datetime,
    days: int = 1,
    detail: Literal["short", "long"] = "short",
    note: Optional[str] = None,  # noqa: UP045 - Optional is part of what we support
    tags: list[str] | None = None,
    extra: dict[str, int] | None = None,
    window: Window | None = None,
    filters: Filters | None = None,
    label: Annotated[str, Field(description="Shown to the user.")] = "",
) -> dict[str, Any]:
    """Get the weather forecast.

    Looks it up somewhere.

    Args:
        location: Where to look.
        unit: Temperature unit.
        when: The moment of interest.
        days: How many days ahead.
    """
    return {
        "location": location,
        "unit": unit,
        "when": when,
        "days": days,
        "detail": detail,
        "note": note,
        "tags": tags,
        "extra": extra,
        "window": window,
        "filters": filters,
        "label": label,
    }


# --- schema generation ---------------------------------------------------------------------


def test_schema_from_type_hints() -> None:
    t = tool(weather)
    schema = t.parameters
    assert t.name == "weather"
    assert t.description == "Get the weather forecast.\n\nLooks it up somewhere."
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["location", "unit", "when"]
    props = schema["properties"]
    assert props["location"]["$ref"] == "#/$defs/Location"
    assert props["location"]["description"] == "Where to look."
    assert schema["$defs"]["Unit"]["enum"] == ["c", "f"]
    assert props["when"]["format"] == "date-time"
    assert props["days"] == {"type": "integer", "default": 1, "description": "How many days ahead."}
    assert props["detail"]["enum"] == ["short", "long"]
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert {"type": "array", "items": {"type": "string"}} in props["tags"]["anyOf"]
    assert {"type": "object", "additionalProperties": {"type": "integer"}} in props["extra"][
        "anyOf"
    ]
    assert set(schema["$defs"]) >= {"Location", "Unit", "Window", "Filters"}
    assert props["label"]["description"] == "Shown to the user."
    assert "title" not in schema
    assert all("title" not in p for p in props.values())


def test_function_receives_validated_coerced_values() -> None:
    t = tool(weather)

    async def main() -> Any:
        return await t.invoke(
            json.dumps(
                {
                    "location": {"city": "Recife"},
                    "unit": "f",
                    "when": "2026-01-02T03:04:05Z",
                    "days": "3",
                    "window": {"start": 1, "end": 2},
                    "filters": {"tag": "x", "limit": 5},
                }
            )
        )

    result = anyio.run(main)
    assert not result.is_error, result.text
    data = result.structured
    assert data["location"] == {"city": "Recife", "country": "BR"}
    assert data["unit"] == "f"
    assert data["days"] == 3
    assert data["detail"] == "short"


async def test_function_sees_python_objects() -> None:
    seen: dict[str, Any] = {}

    @tool
    def capture(location: Location, unit: Unit, when: dt.datetime, window: Window) -> str:
        """Capture arguments."""
        seen.update(location=location, unit=unit, when=when, window=window)
        return "ok"

    result = await capture.invoke(
        {
            "location": {"city": "Natal"},
            "unit": "c",
            "when": "2026-05-01T10:00:00+02:00",
            "window": {"start": 1, "end": 9},
        }
    )
    assert result.text == "ok"
    assert isinstance(seen["location"], Location)
    assert seen["unit"] is Unit.CELSIUS
    assert seen["when"] == dt.datetime(2026, 5, 1, 8, 0, tzinfo=dt.UTC)
    assert seen["window"] == Window(1, 9)


@pytest.mark.parametrize(
    "doc",
    [
        # Google
        """Add numbers.

        Args:
            a: The first number.
            b (int): The second
                number.
        """,
        # NumPy
        """Add numbers.

        Parameters
        ----------
        a : int
            The first number.
        b : int
            The second number.
        """,
        # Sphinx
        """Add numbers.

        :param a: The first number.
        :param b: The second number.
        """,
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_parameter_descriptions_from_each_docstring_style(doc: str) -> None:
    def add(a: int, b: int) -> int:
        return a + b

    add.__doc__ = doc
    t = tool(add)
    assert t.description == "Add numbers."
    assert t.parameters["properties"]["a"]["description"] == "The first number."
    assert t.parameters["properties"]["b"]["description"] == "The second number."


def test_field_description_wins_over_docstring() -> None:
    def f(x: Annotated[int, Field(description="from Field")]) -> int:
        """Do it.

        Args:
            x: from docstring
        """
        return x

    assert tool(f).parameters["properties"]["x"]["description"] == "from Field"


def test_missing_type_hint_names_function_and_parameter() -> None:
    def untyped(a: int, b):  # type: ignore[no-untyped-def]
        return a

    with pytest.raises(TypeError, match=r"untyped.*'b' has no type hint"):
        tool(untyped)


def test_var_args_are_refused() -> None:
    def f(*values: int) -> int:
        return sum(values)

    with pytest.raises(TypeError, match=r"'values' is \*args"):
        tool(f)


def test_unresolvable_hint_is_a_clear_type_error() -> None:
    def f(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(TypeError, match="Cannot resolve the type hints"):
        tool(f)


def test_context_parameter_is_injected_not_in_schema() -> None:
    @tool
    async def whoami(ctx: ToolContext, greeting: str) -> str:
        """Say who is calling."""
        return f"{greeting} {ctx.tool_name} {ctx.call_id} {ctx.deps['user']}"

    assert set(whoami.parameters["properties"]) == {"greeting"}

    async def main() -> str:
        result = await whoami.invoke(
            '{"greeting": "hi"}',
            ToolContext(tool_name="whoami", call_id="c1", deps={"user": "ana"}),
        )
        return result.text

    assert anyio.run(main) == "hi whoami c1 ana"


async def test_sync_function_runs_in_a_worker_thread() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> int:
        """Report the thread."""
        return threading.get_ident()

    result = await where.invoke({})
    assert result.structured != loop_thread


async def test_async_function_runs_on_the_loop() -> None:
    loop_thread = threading.get_ident()

    @tool
    async def where() -> int:
        """Report the thread."""
        return threading.get_ident()

    result = await where.invoke(None)
    assert result.structured == loop_thread


def test_decorator_with_options() -> None:
    @tool(
        name="search_docs",
        description="Search the docs.",
        strict=False,
        annotations=ToolAnnotations(title="Search", read_only_hint=True),
        timeout=5,
        sequential=True,
        requires_approval=True,
    )
    def search(query: str) -> list[str]:
        """Ignored docstring."""
        return [query]

    assert isinstance(search, FunctionTool)
    assert search.name == "search_docs"
    assert search.description == "Search the docs."
    assert search.strict is False
    assert search.annotations.read_only_hint is True
    assert search.annotations.title == "Search"
    assert search.timeout == 5
    assert search.sequential and search.requires_approval
    assert search("x") == ["x"]  # the original function stays callable
    assert isinstance(search, Tool)


def test_lambda_needs_a_name() -> None:
    with pytest.raises(TypeError, match="needs name"):
        tool(lambda: 1)


# --- Pydantic model and JSON Schema factories -------------------------------------------------


class SearchArgs(pydantic.BaseModel):
    """Search the catalogue."""

    query: str = Field(description="What to look for.")
    limit: int = Field(default=10, ge=1, le=50)


async def test_factory_with_pydantic_model() -> None:
    received: list[SearchArgs] = []

    async def run(args: SearchArgs) -> str:
        received.append(args)
        return f"{args.query}:{args.limit}"

    t = tool(parameters=SearchArgs, execute=run)
    assert t.name == "search_args"
    assert t.description == "Search the catalogue."
    assert t.parameters["properties"]["query"]["description"] == "What to look for."
    result = await t.invoke('{"query": "lamp"}')
    assert result.text == "lamp:10"
    assert isinstance(received[0], SearchArgs)
    bad = await t.invoke('{"query": "lamp", "limit": 99}')
    assert bad.is_error
    assert "limit" in bad.text and "less than or equal to 50" in bad.text


async def test_factory_with_json_schema_and_context() -> None:
    schema = {
        "type": "object",
        "description": "Echo a word.",
        "properties": {"word": {"type": "string", "minLength": 2}},
        "required": ["word"],
    }

    def run(args: dict[str, Any], ctx: ToolContext) -> str:
        return f"{ctx.tool_name}:{args['word']}"

    t = tool(name="echo", parameters=schema, execute=run)
    assert t.description == "Echo a word."
    assert (await t.invoke({"word": "hey"})).text == "echo:hey"
    bad = await t.invoke({"word": "h"})
    assert bad.is_error and isinstance(bad.error, ToolArgumentsError)
    assert "word" in bad.text


def test_json_schema_tool_needs_a_name() -> None:
    with pytest.raises(TypeError, match="needs name"):
        tool(parameters={"type": "object", "properties": {}})


async def test_schema_only_tool() -> None:
    t = tool(
        name="lookup",
        description="Look up.",
        parameters={"type": "object", "properties": {"id": {"type": "integer"}}},
    )
    assert t.executable is False
    assert t.parse_args('{"id": 3}') == {"id": 3}
    result = await t.invoke('{"id": 3}')
    assert result.is_error
    assert "no implementation" in result.text


def test_as_tool_accepts_functions_dicts_and_tools() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    t = as_tool(add)
    assert t.name == "add" and t.executable
    assert as_tool(t) is t
    d = as_tool(
        {"name": "get", "description": "Get.", "parameters": {"type": "object", "properties": {}}}
    )
    assert d.name == "get" and not d.executable
    o = as_tool(
        {
            "type": "function",
            "function": {
                "name": "x",
                "parameters": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        }
    )
    assert o.name == "x" and o.parameters["properties"]["a"] == {"type": "string"}
    with pytest.raises(TypeError):
        as_tool({"description": "no name"})
    with pytest.raises(TypeError):
        as_tool(42)  # type: ignore[arg-type]


# --- argument parsing ------------------------------------------------------------------------


@tool
def book(city: str, nights: int, guests: list[str], breakfast: bool = False) -> str:
    """Book a stay."""
    return f"{city} {nights} {guests} {breakfast}"


def test_parse_args_json_and_mapping() -> None:
    assert book.parse_args('{"city": "Rio", "nights": 2, "guests": ["a"]}') == {
        "city": "Rio",
        "nights": 2,
        "guests": ["a"],
    }
    assert book.parse_args({"city": "Rio", "nights": "2", "guests": []})["nights"] == 2


def test_parse_args_reports_every_problem_with_path_expected_and_received() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        book.parse_args('{"nights": "two", "guests": ["a", 5], "pets": 1}')
    err = info.value
    paths = {p.path for p in err.problems}
    assert paths == {("city",), ("nights",), ("guests", 1), ("pets",)}
    text = str(err)
    assert "Invalid arguments for tool 'book'" in text
    assert "city: required property is missing" in text
    assert "nights: input should be a valid integer" in text and '"two" (string)' in text
    assert "guests[1]: input should be a valid string" in text and "5 (integer)" in text
    assert "pets: unexpected property" in text


@pytest.mark.parametrize(
    "raw",
    ['{"city": "Rio", ', "not json", "[1, 2]", '"string"', "null", "{'city': 'Rio'}"],
)
def test_malformed_arguments(raw: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        book.parse_args(raw)
    assert info.value.problems


def test_empty_arguments_mean_no_arguments() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert ping.parse_args("") == {}
    assert ping.parse_args("  ") == {}
    assert ping.parse_args(None) == {}
    with pytest.raises(ToolArgumentsError):
        book.parse_args("")


def test_huge_and_deep_payloads_are_refused_cleanly() -> None:
    with pytest.raises(ToolArgumentsError, match="longer than"):
        book.parse_args('{"city": "' + "x" * 1_100_000 + '"}')
    with pytest.raises(ToolArgumentsError, match=r"JSON|nested"):
        book.parse_args('{"city": ' + "[" * 100_000 + "]" * 100_000 + "}")
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ToolArgumentsError):
        book.parse_args({"city": "a", "nights": 1, "guests": deep})


def test_non_mapping_arguments_are_refused() -> None:
    with pytest.raises(ToolArgumentsError, match="expected a JSON object"):
        book.parse_args(42)  # type: ignore[arg-type]


# --- results and failures -------------------------------------------------------------------


async def test_tool_error_message_reaches_the_model() -> None:
    @tool
    def fails() -> str:
        """Fail."""
        raise ToolError("the warehouse is closed")

    result = await fails.invoke({})
    assert result.is_error
    assert result.text == "the warehouse is closed"


async def test_other_exceptions_give_type_and_message_and_are_kept() -> None:
    @tool
    async def boom() -> str:
        """Explode."""
        raise KeyError("missing")

    result = await boom.invoke({})
    assert result.is_error
    assert result.text == "KeyError: 'missing'"
    assert isinstance(result.error, KeyError)


async def test_invalid_arguments_become_an_error_result() -> None:
    result = await book.invoke('{"city": 1}')
    assert result.is_error
    assert isinstance(result.error, ToolArgumentsError)
    assert "nights: required property is missing" in result.text


async def test_a_return_value_json_cannot_hold_reaches_the_model_as_text() -> None:
    @tool
    def weird() -> object:
        """Return junk."""
        return {"when": dt.date(2026, 1, 2), "what": object()}

    result = await weird.invoke({})
    assert not result.is_error
    assert result.structured["when"] == "2026-01-02"
    assert result.structured["what"].startswith("<object object at 0x")
    assert result.text.startswith('{"when":"2026-01-02","what":"<object object at 0x')


async def test_timeout_option_cancels_the_call() -> None:
    started = anyio.Event()

    @tool(timeout=0.05)
    async def slow() -> str:
        """Never finish."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    with anyio.fail_after(5):
        result = await slow.invoke({})
    assert started.is_set()
    assert result.is_error and isinstance(result.error, ToolTimeoutError)
    assert "timed out after 0.05 seconds" in result.text


async def test_timeout_on_a_sync_tool_returns_without_waiting_for_the_thread() -> None:
    release = threading.Event()

    @tool(timeout=0.05)
    def blocking() -> str:
        """Block."""
        release.wait(10)
        return "late"

    try:
        with anyio.fail_after(5):
            result = await blocking.invoke({})
        assert isinstance(result.error, ToolTimeoutError)
    finally:
        release.set()


@pytest.mark.parametrize("limit", [None, 30.0])
async def test_cancellation_propagates(limit: float | None) -> None:
    # Cancelling the caller must reach it as cancellation, not come back as an error result
    # (nor, with a timeout, as the tool's own timeout), and nothing after `invoke` may run.
    started = anyio.Event()
    outcome: list[str] = []

    async def wait() -> str:
        """Wait."""
        started.set()
        await anyio.sleep_forever()
        return ""

    waiting = tool(timeout=limit)(wait) if limit is not None else tool(wait)

    async def call() -> None:
        try:
            result = await waiting.invoke({})
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise
        outcome.append(f"returned {result.text!r}")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await started.wait()
            tg.cancel_scope.cancel()
    assert outcome == ["cancelled"]


def test_invalid_timeout() -> None:
    with pytest.raises(ValueError, match="timeout"):
        tool(timeout=0)(book.function)  # type: ignore[arg-type]


# --- strict mode --------------------------------------------------------------------------


def test_strict_is_chosen_when_possible() -> None:
    @tool
    def simple(a: int, b: str = "x") -> str:
        """Simple."""
        return b * a

    assert simple.strict is True

    @tool
    def freeform(data: dict[str, int]) -> int:
        """Free-form."""
        return len(data)

    assert freeform.strict is False


def test_explicit_strict_on_inexpressible_schema_raises_naming_path() -> None:
    def freeform(data: dict[str, int]) -> int:
        """Free-form."""
        return len(data)

    with pytest.raises(UnsupportedError, match=r"freeform.*strict.*data"):
        tool(strict=True)(freeform)


def test_strict_tool_accepts_null_for_optional_parameters() -> None:
    @tool
    def greet(name: str, greeting: str = "Hello", loc: Location | None = None) -> str:
        """Greet."""
        return f"{greeting} {name}"

    assert greet.strict
    definition = greet.definition("openai")
    assert definition.strict is True
    assert sorted(definition.parameters["required"]) == ["greeting", "loc", "name"]
    assert greet.parse_args('{"name": "Ana", "greeting": null, "loc": null}') == {
        "name": "Ana",
        "loc": None,
    }
    assert greet.parse_args({"name": "Ana", "greeting": None}) == {"name": "Ana"}


def test_definition_per_dialect_is_cached() -> None:
    t = tool(weather)
    assert t.compiled("mcp") is t.compiled("mcp")
    mcp = t.definition("mcp")
    assert mcp.name == "weather"
    assert mcp.strict is False
    assert mcp.parameters["type"] == "object"
    assert "$defs" in mcp.parameters


def test_gemini_definition_inlines_refs() -> None:
    @tool
    def plan(location: Location, unit: Unit, tags: list[str] | None = None) -> str:
        """Plan."""
        return ""

    definition = plan.definition("gemini")
    text = json.dumps(definition.parameters)
    assert "$ref" not in text and "$defs" not in text
    assert definition.parameters["properties"]["location"]["properties"]["city"]["type"] == "string"
    assert definition.changes


def test_gemini_refuses_free_form_dicts_instead_of_dropping_them() -> None:
    with pytest.raises(UnsupportedError, match=r"properties\.extra"):
        tool(weather).definition("gemini")


async def test_a_tools_own_timeout_error_is_not_its_time_limit() -> None:
    @tool(timeout=30)
    async def upstream() -> str:
        """Call something that times out by itself."""
        raise TimeoutError("upstream did not answer")

    result = await upstream.invoke({})
    assert result.is_error
    assert not isinstance(result.error, ToolTimeoutError)
    assert result.text == "TimeoutError: upstream did not answer"


async def test_fast_and_careful_paths_agree() -> None:
    @tool
    def f(a: int, b: str = "x") -> str:
        """F."""
        return f"{a}{b}"

    for raw in ['{"a": 1}', '{"a": "2", "b": null}', " ", '{"a": 1, "zz": 2}', '{"a": ']:
        fast = await f.invoke(raw)
        try:
            careful: Any = f.parse_args(raw)
        except ToolArgumentsError as exc:
            careful = exc
        if isinstance(careful, ToolArgumentsError):
            assert fast.is_error and fast.text == str(careful)
        else:
            assert not fast.is_error


class Shape(TypedDict):  # typing.TypedDict, which pydantic refuses on 3.11 unless upgraded
    kind: str
    sides: int


def test_output_schema_only_for_structured_returns() -> None:
    def shape() -> Shape:
        """Shape."""
        return {"kind": "square", "sides": 4}

    def image() -> ImagePart:
        """Image."""
        return ImagePart(url="https://example.com/x.png")

    def parts() -> list[TextPart]:
        """Parts."""
        return [TextPart("a")]

    def result() -> ToolResult:
        """Result."""
        return ToolResult()

    assert tool(shape).output_schema is not None
    assert tool(shape).output_schema["required"] == ["kind", "sides"]  # type: ignore[index]
    assert tool(image).output_schema is None
    assert tool(parts).output_schema is None
    assert tool(result).output_schema is None
    assert tool(weather).output_schema is None  # dict[str, Any]: free-form, nothing to declare


# --- malformed tools are refused when built, naming the tool and the place (issue 29, item 4)


@pytest.mark.parametrize(
    ("parameters", "place"),
    [
        ({"type": "object", "properties": {"a": {"type": "strng"}}}, "properties.a.type"),
        ({"type": "object", "properties": []}, "properties: must be an object"),
        ({"type": "object", "properties": {"a": {}}, "required": "a"}, "required: must be a list"),
        ({"type": "object", "properties": {"a": {"anyOf": []}}}, "properties.a.anyOf"),
        (
            {"type": "object", "properties": {"a": {"type": "string", "maxLength": -1}}},
            "properties.a.maxLength",
        ),
        ({"type": "object", "properties": {"a": {"items": 3}}}, "properties.a.items"),
    ],
)
def test_a_malformed_schema_is_refused_when_the_tool_is_built(
    parameters: dict[str, Any], place: str
) -> None:
    with pytest.raises(SchemaError, match=re.escape(f"tool 'broken': parameters {place}")):
        tool(name="broken", parameters=parameters, execute=lambda **_: None)
    # The same schema given as a tool dict is refused the same way.
    with pytest.raises(SchemaError, match="tool 'broken'"):
        as_tool({"name": "broken", "description": "", "parameters": parameters})


def test_a_name_no_dialect_accepts_is_refused_when_the_tool_is_built() -> None:
    with pytest.raises(
        ToolNameError, match=r"tool 'has space!': every dialect .*contains ' ', '!'"
    ):
        tool(name="has space!", parameters={"type": "object"}, execute=lambda: None)


def test_a_name_some_dialects_refuse_is_refused_when_compiled_for_them() -> None:
    dotted = tool(name="weather.get", parameters={"type": "object"}, execute=lambda: None)
    assert dotted.definition("gemini").name == "weather.get"
    assert dotted.definition("mcp").name == "weather.get"
    for dialect in ("openai", "anthropic"):
        with pytest.raises(UnsupportedError, match=f"tool 'weather.get': {dialect}"):
            dotted.definition(dialect)


def test_a_compile_error_names_the_tool_and_the_dialect() -> None:
    recursive = tool(
        name="recursive",
        parameters={
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"c": {"$ref": "#/$defs/node"}}}},
        },
        execute=lambda **_: None,
        strict=False,
    )
    with pytest.raises(UnsupportedError, match=r"tool 'recursive', gemini dialect: properties\.a"):
        recursive.definition("gemini")
