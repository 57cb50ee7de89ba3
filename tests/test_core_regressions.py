"""Regressions found in review of the core: tools, arguments, the loop, middleware, test models."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import anyio
import httpx
import jsonschema
import pydantic
import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    Completion,
    Message,
    RunCompleted,
    RunEvent,
    ScriptedModel,
    TestModel,
    TextBlock,
    ToolArgumentsError,
    ToolContext,
    ToolNameError,
    ToolResult,
    ToolResultMessage,
    Usage,
    text_result,
    tool,
)
from toolwire.middleware import is_retryable, retry_after_seconds
from toolwire.models.base import CompletionDone, ModelRequest, StreamEvent, TextDelta, ToolCall
from toolwire.models.testing import example_arguments

pytestmark = pytest.mark.anyio


def results_of(messages: Sequence[Message]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


# --- arguments -----------------------------------------------------------------------------------


async def test_json_schema_tool_treats_blank_arguments_as_no_arguments() -> None:
    seen: list[Any] = []
    t = tool(
        name="ping",
        parameters={"type": "object", "properties": {}},
        execute=lambda args: seen.append(args) or "pong",
    )
    assert t.parse_args("") == {}
    assert t.parse_args("   ") == {}
    result = await t.invoke("")
    assert not result.is_error, result.text
    assert seen == [{}]


class Inner(pydantic.BaseModel):
    a: int
    b: int = 0


class Middle(pydantic.BaseModel):
    inner: Inner
    maybe: Inner | None = None
    many: list[Inner] = []


def nested(
    x: Inner | None = None, items: list[Inner] | None = None, m: Middle | None = None
) -> str:
    """Nested optional models."""
    return repr((x, items, m))


def test_strict_nulls_are_dropped_inside_optional_nested_models_and_lists() -> None:
    t = tool(nested)
    assert t.strict
    parsed = t.parse_args(
        '{"x": {"a": 1, "b": null}, "items": [{"a": 2, "b": null}],'
        ' "m": {"inner": {"a": 3, "b": null}, "maybe": {"a": 4, "b": null},'
        ' "many": [{"a": 5, "b": null}]}}'
    )
    assert parsed["x"] == Inner(a=1)
    assert parsed["items"] == [Inner(a=2)]
    assert parsed["m"] == Middle(inner=Inner(a=3), maybe=Inner(a=4), many=[Inner(a=5)])
    # The same through a mapping, and a null for a whole optional model still means "not given".
    # `x: Inner | None` itself accepts null, so that null stays; `many: list[Inner] = []` does not.
    raw = {"x": None, "m": {"inner": {"a": 1, "b": None}, "maybe": None, "many": None}}
    assert t.parse_args(raw) == {"x": None, "m": Middle(inner=Inner(a=1))}


def test_strict_nulls_are_dropped_through_json_schema_refs_and_all_of() -> None:
    schema = {
        "type": "object",
        "properties": {
            "p": {"allOf": [{"$ref": "#/$defs/P"}]},
            "q": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
        },
        "required": ["p", "q"],
        "additionalProperties": False,
        "$defs": {
            "P": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                "required": ["name"],
                "additionalProperties": False,
            }
        },
    }
    t = tool(name="people", parameters=schema, execute=lambda args: args, strict=True)
    parsed = t.parse_args('{"p": {"name": "a", "age": null}, "q": {"name": "b", "age": null}}')
    assert parsed == {"p": {"name": "a"}, "q": {"name": "b"}}


def union_args(v: int | list[int], choice: Literal["a", "b"] | Inner, inner: Inner) -> str:
    """Unions."""
    return ""


def test_argument_problem_paths_are_json_paths_without_union_member_names() -> None:
    t = tool(union_args)
    with pytest.raises(ToolArgumentsError) as caught:
        t.parse_args('{"v": "x", "choice": {"a": "z"}, "inner": {"a": "q"}}')
    paths = {p.path for p in caught.value.problems}
    assert paths == {("v",), ("choice",), ("choice", "a"), ("inner", "a")}
    message = str(caught.value)
    assert "list[int]" not in message and "literal[" not in message.lower()
    assert "choice.Inner" not in message


def test_argument_problem_paths_keep_real_keys_named_like_types() -> None:
    def keyed(data: dict[str, int]) -> str:
        """A dict whose key looks like a type name."""
        return ""

    t = tool(keyed)
    with pytest.raises(ToolArgumentsError) as caught:
        t.parse_args({"data": {"int": "x"}})
    assert [p.path for p in caught.value.problems] == [("data", "int")]


# --- resuming --------------------------------------------------------------------------------


@tool(requires_approval=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def look(path: str) -> str:
    """Look at a file."""
    return f"looked at {path}"


ASK_USER = {
    "name": "ask_user",
    "description": "Ask the user.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}


def paused_turn_model() -> ScriptedModel:
    calls = [("delete", {"path": "a"}), ("ask_user", {"q": "?"}), ("look", {"path": "b"})]
    return ScriptedModel([calls, "done"])


async def test_resume_refuses_decisions_for_calls_that_are_not_in_the_paused_turn() -> None:
    agent = Agent(paused_turn_model(), tools=[delete, ASK_USER, look])
    paused = await agent.run("go")
    assert paused.stop_reason == "approval_required"
    ids = {p.call.name: p.call.id for p in paused.pending}
    with pytest.raises(ValueError, match="bogus"):
        await agent.resume(
            paused, approvals={ids["delete"]: True, "bogus": True}, results={ids["ask_user"]: 1}
        )
    with pytest.raises(ValueError, match="nope"):
        await agent.resume(
            paused, approvals={ids["delete"]: True}, results={ids["ask_user"]: 1, "nope": 2}
        )


async def test_resume_honours_a_refusal_of_any_call_of_the_paused_turn() -> None:
    agent = Agent(paused_turn_model(), tools=[delete, ASK_USER, look])
    paused = await agent.run("go")
    ids = {p.call.name: p.call.id for p in paused.pending}
    last = paused.messages[-1]
    assert isinstance(last, AssistantMessage)
    look_id = next(c.id for c in last.tool_calls if c.name == "look")
    done = await agent.resume(
        paused,
        approvals={ids["delete"]: True, look_id: "not now"},
        results={ids["ask_user"]: "yes"},
    )
    texts = [r.text for r in results_of(done.messages)]
    assert texts == ["deleted a", "yes", "Error: not approved: not now"]
    assert done.stop_reason == "completed"


# --- streaming -----------------------------------------------------------------------------------


async def test_a_cancelled_streaming_request_is_closed_before_the_run_ends() -> None:
    state: list[str] = []

    class Streamer:
        provider = "test"
        model_name = "streamer"

        async def send(self, request: ModelRequest) -> Completion:
            return Completion(message=AssistantMessage(parts=[TextBlock("x")]))

        async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            try:
                for i in range(10_000):
                    yield TextDelta(f"w{i} ")
                yield CompletionDone(await self.send(request))
            finally:
                state.append("closed")

    closed_at_end: list[list[str]] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, RunCompleted):
            closed_at_end.append(list(state))

    agent = Agent(Streamer(), subscribers=[on_event])  # type: ignore[arg-type]
    with anyio.fail_after(5):
        async with agent.run_stream("go") as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
    assert stream.result.stop_reason == "cancelled"
    assert closed_at_end == [["closed"]]


# --- retry ---------------------------------------------------------------------------------------


class _Response:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class _SdkError(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("rate limited")
        self.status_code = 429
        self.response = _Response(headers)


def test_retry_after_is_read_from_any_header_spelling() -> None:
    assert is_retryable(_SdkError({"Retry-After": "7"})) == (True, 7.0)
    request = httpx.Request("GET", "https://example.com/")
    response = httpx.Response(503, headers={"retry-after-ms": "1500"}, request=request)
    error = httpx.HTTPStatusError("busy", request=request, response=response)
    assert is_retryable(error) == (True, 1.5)


def test_retry_after_rejects_values_that_are_not_a_delay() -> None:
    assert retry_after_seconds("nan") is None
    # An HTTP date without a zone is GMT (RFC 9110), not the machine's local time.
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 -0000") == 0.0


# --- ToolCall.result -----------------------------------------------------------------------------


def test_tool_call_result_does_not_mutate_the_given_result() -> None:
    given = text_result("fine")
    message = ToolCall("c1", "f", "{}").result(given, is_error=True)
    assert message.is_error
    assert given.is_error is False
    assert isinstance(given, ToolResult)


# --- TestModel -----------------------------------------------------------------------------------


def assert_valid(schema: dict[str, Any]) -> dict[str, Any]:
    args = example_arguments(schema)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    errors = [e.message for e in validator.iter_errors(args)]
    assert not errors, (args, errors)
    return args


def obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
        {"type": "string", "pattern": r"^\d+$"},
        {"type": "string", "pattern": "^(yes|no)$"},
        {"type": "string", "pattern": r"[a-z]+@[a-z]+\.com"},
        {"type": "string", "pattern": r"^[^\s]{2,}\.txt$", "maxLength": 10},
        {"type": "string", "pattern": "^(ab)+\\1?$"},
        {"type": "integer", "minimum": 1, "exclusiveMaximum": 2},
        {"type": "integer", "exclusiveMinimum": 4, "maximum": 5},
        {"type": "integer", "minimum": 1, "maximum": 10, "multipleOf": 4},
        {"type": "number", "exclusiveMinimum": 0, "maximum": 0.01},
        {"type": "array", "items": {"type": "string"}, "maxItems": 0},
        {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
        {"type": "array", "items": {"type": "integer"}, "minItems": 3, "uniqueItems": True},
        {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True},
        {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2},
        {"type": "integer", "default": None},
        {"type": "object", "required": ["id"], "additionalProperties": {"type": "integer"}},
        {"type": "object", "required": ["id"]},
    ],
)
def test_example_arguments_satisfy_tricky_schemas(prop: dict[str, Any]) -> None:
    assert_valid(obj({"v": prop}))


def test_example_arguments_for_draft_07_tuples() -> None:
    schema = obj({"v": {"type": "array", "items": [{"type": "integer"}, {"type": "boolean"}]}})
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    assert assert_valid(schema) == {"v": [1, True]}


def test_example_arguments_for_python_types_validate() -> None:
    def f(
        t: tuple[int, str],
        s: pydantic.constr(pattern=r"^[a-z]{2}\d$"),  # type: ignore[valid-type]
        n: int | None = None,
    ) -> str:
        """Tuples, patterns and optional ints."""
        return ""

    t = tool(f)
    t.parse_args(example_arguments(t.parameters))


class Node(pydantic.BaseModel):
    name: str
    children: list[Node]


def test_example_arguments_terminate_recursive_schemas_validly() -> None:
    def tree(root: Node) -> str:
        """A recursive model."""
        return ""

    t = tool(tree)
    t.parse_args(example_arguments(t.parameters))


async def test_test_model_call_tools_takes_a_single_name() -> None:
    @tool
    def a() -> str:
        """A."""
        return "a"

    @tool
    def ab() -> str:
        """AB."""
        return "ab"

    model = TestModel(call_tools="ab")
    result = await Agent(model, tools=[a, ab]).run("go")
    assert [r.name for r in results_of(result.messages)] == ["ab"]


async def test_test_model_follows_a_forced_tool_choice() -> None:
    @tool
    def a() -> str:
        """A."""
        return "a"

    @tool
    def b() -> str:
        """B."""
        return "b"

    result = await Agent(TestModel(), tools=[a, b], tool_choice="b").run("go")
    assert [r.name for r in results_of(result.messages)] == ["b"]


def test_pattern_examples_match() -> None:
    # The generator is checked against Python's own regex engine.
    schema = obj({"v": {"type": "string", "pattern": r"^\w{3}_[0-9a-f]{8}(-v\d)?$"}})
    args = assert_valid(schema)
    assert re.search(r"^\w{3}_[0-9a-f]{8}(-v\d)?$", args["v"])


# --- positional-only parameters -------------------------------------------------------------------


async def test_positional_only_parameters_keep_their_places_when_one_is_left_out() -> None:
    def f(a: int = 1, b: int = 2, /) -> str:
        """Two positional-only parameters with defaults."""
        return f"a={a} b={b}"

    assert (await tool(f).invoke('{"b": 5}')).text == "a=1 b=5"
    assert (await tool(f).invoke('{"a": 7}')).text == "a=7 b=2"


async def test_a_positional_only_context_parameter_is_injected() -> None:
    def g(ctx: ToolContext, /, x: int) -> str:
        """Context first, positional-only."""
        return f"{ctx.tool_name} {x}"

    result = await tool(g).invoke('{"x": 5}')
    assert not result.is_error, result.text
    assert result.text == "g 5"


# --- registry ------------------------------------------------------------------------------------


def test_a_tool_name_ending_in_a_newline_is_rejected() -> None:
    # Refused when the tool is built, before any registry sees it.
    with pytest.raises(ToolNameError, match=r"contains '\\n'"):

        @tool(name="search\n")
        def search() -> str:
            """Search."""
            return ""


async def test_resume_does_not_force_the_tool_choice_again() -> None:
    model = ScriptedModel([("delete", {"path": "a"}), "done"])
    agent = Agent(model, tools=[delete], tool_choice="required")
    paused = await agent.run("go")
    assert model.requests[0].tool_choice == "required"
    done = await agent.resume(paused, approvals={paused.pending[0].call.id: True})
    assert done.text == "done"
    # The forced choice was obeyed by the paused turn; the follow-up may answer in text.
    assert model.requests[1].tool_choice == "auto"


async def test_a_sync_wrapper_returning_a_coroutine_is_awaited() -> None:
    async def fetch(x: int) -> str:
        return f"fetched {x}"

    @functools.wraps(fetch)
    def logged(x: int) -> Any:  # a plain decorator around an async function
        return fetch(x)

    result = await tool(logged).invoke('{"x": 2}')
    assert not result.is_error, result.text
    assert result.text == "fetched 2"


@pytest.mark.parametrize("raw", [None, "", "  ", "{}", {}])
def test_missing_arguments_keep_their_names_whatever_the_empty_input(raw: Any) -> None:
    t = tool(union_args)
    with pytest.raises(ToolArgumentsError) as caught:
        t.parse_args(raw)
    assert {p.path for p in caught.value.problems} == {("v",), ("choice",), ("inner",)}


# --- cost ------------------------------------------------------------------------------------------


async def test_usage_the_price_tables_refuse_gives_an_unknown_cost_not_a_crash() -> None:
    # A server that reports more cached tokens than input tokens (genai-prices refuses that).
    usage = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=50, requests=1)
    message = AssistantMessage(parts=[TextBlock("hi")], provider="openai", model="gpt-4o")

    class Odd:
        provider = "openai"
        model_name = "gpt-4o"

        async def send(self, request: ModelRequest) -> Completion:
            return Completion(message=message, usage=usage, model="gpt-4o")

        async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            yield CompletionDone(await self.send(request))

    result = await Agent(Odd(), max_cost=1.0).run("hi")  # type: ignore[arg-type]
    assert result.text == "hi"
    assert result.cost.total is None
    assert result.cost.reason is not None and "gpt-4o" in result.cost.reason
