"""Structured output: a Python type (or a raw JSON Schema) the model's answer must satisfy.

`OutputType(T)` turns `T` into the schema sent to the model and the validator the answer goes
through. An object type (a Pydantic model, a dataclass, a TypedDict) is sent as it is; any other
type (a primitive, a list, a union) is wrapped in an object with one property, `result`, because
providers want an object at the root. A union of object types is a choice: in tool mode each branch
becomes a final-answer tool of its own, elsewhere an `anyOf` under `result`.

Three modes carry the schema to the model (`OutputMode`):
- `native`: the provider's own structured output (OpenAI's `json_schema`, Anthropic's
  `output_config`, Gemini's response schema...), compiled through the model's dialect;
- `tool`: a final-answer tool the model is made to call; its arguments are the answer;
- `prompted`: the schema in the instructions, the answer read from the text.
`auto` picks native where the model has it, else tool.

`parse()` asks once, validates, and on failure sends every problem with its path back to the model,
up to `retries` times; then it raises `OutputValidationError` carrying the last output. A refusal is
its own outcome (`ParseResult.refusal`), not a validation error.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import field
from typing import Any, Generic, Literal, TypeVar, cast, get_args, get_origin

import pydantic
import pydantic_core

from ._arguments import NullDropper
from ._record import record
from ._schema import problems_from_validation_error, value_adapter, value_schema
from ._validate import SchemaValidator
from .computer import answerable_calls
from .errors import ArgumentProblem, ModelResponseError, OutputValidationError, UnsupportedError
from .messages import (
    Message,
    SystemMessage,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)
from .models._completion import Completion, CompletionDone, StreamEvent, TextDelta, ToolCallDelta
from .models._request import (
    Model,
    ModelRequest,
    ModelSettings,
    OutputMode,
    OutputSpec,
    request_messages,
)
from .models.profiles import profile_of
from .native import NativeTool
from .results import TextPart
from .tools import Tool, tool
from .usage import Usage

__all__ = ["OutputType", "ParseResult", "PartialOutput", "parse", "stream_parse"]

T = TypeVar("T")

_WRAP = "result"
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)


@record(frozen=True)
class _Branch:
    """One accepted output shape: its tool name, schema and validator."""

    name: str
    description: str | None
    schema: dict[str, Any]
    wrapped: bool
    adapter: pydantic.TypeAdapter[Any] | None
    validator: SchemaValidator | None


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (typing.Union, types.UnionType)


def _name_of(hint: Any) -> str:
    name = getattr(hint, "__name__", None)
    if not isinstance(name, str) or not name:
        name = re.sub(r"[^A-Za-z0-9_]+", "_", str(hint)).strip("_") or "value"
    return name[:48]


def _doc(hint: Any) -> str | None:
    doc = getattr(hint, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    # dataclasses and TypedDicts get a generated docstring naming their fields: not a description.
    first = doc.strip().split("\n\n")[0].strip()
    return None if first.startswith(f"{_name_of(hint)}(") else first


class OutputType(Generic[T]):
    """The type a model's answer must have.

    Args:
        output_type: A Pydantic model, a dataclass, a TypedDict, a primitive, a list, a union, or a
            raw JSON Schema (a mapping; the value is then returned as decoded JSON).
        name: The name shown to the model (the final-answer tool's, the schema's); defaults to
            `final_result` or the type's name.
        description: What the answer is, for the model.
        strict: Ask for strict mode where the provider has it; `None` uses it when the schema
            allows.
    """

    def __init__(
        self,
        output_type: type[T] | Any,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        self.output_type = output_type
        self.strict = strict
        if isinstance(output_type, Mapping):
            schema = dict(cast(Mapping[str, Any], output_type))
            wrapped = schema.get("type") != "object"
            sent = {"type": "object", "properties": {_WRAP: schema}, "required": [_WRAP]}
            branch = _Branch(
                name or str(schema.get("title") or "final_result"),
                description or schema.get("description"),
                sent if wrapped else schema,
                wrapped,
                None,
                SchemaValidator(schema),
            )
            self.branches = (branch,)
        else:
            members = get_args(output_type) if _is_union(output_type) else ()
            objects = [m for m in members if m is not type(None)]
            if len(objects) > 1 and all(_is_object(m) for m in objects):
                self.branches = tuple(self._branch(m, None, None) for m in objects)
            else:
                self.branches = (self._branch(output_type, name, description),)
        self.name = name or (self.branches[0].name if len(self.branches) == 1 else "final_result")
        self.description = description
        self._tools: list[Tool] | None = None
        self._union_schema: dict[str, Any] | None = None
        self._droppers: dict[int, NullDropper] = {}

    @staticmethod
    def _branch(hint: Any, name: str | None, description: str | None) -> _Branch:
        adapter = value_adapter(hint)
        schema = value_schema(hint)
        wrapped = not _is_object(hint)
        if wrapped:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {_WRAP: schema}, "required": [_WRAP]}
            if defs:
                schema["$defs"] = defs
        title = name or (_name_of(hint) if not wrapped else "final_result")
        return _Branch(title, description or _doc(hint), schema, wrapped, adapter, None)

    # -- what goes to the model

    def specs(self, mode: OutputMode) -> list[OutputSpec]:
        """One spec per choice the model has (one, except for unions in tool mode)."""
        if len(self.branches) == 1 or mode != "tool":
            schema = self.branches[0].schema if len(self.branches) == 1 else self._any_of()
            return [OutputSpec(self.name, schema, self._description(), self.strict, mode)]
        return [
            OutputSpec(f"final_result_{b.name}", b.schema, b.description, self.strict, mode)
            for b in self.branches
        ]

    def _any_of(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {_WRAP: {"anyOf": [b.schema for b in self.branches]}},
            "required": [_WRAP],
        }

    def _description(self) -> str | None:
        return self.description or (
            self.branches[0].description if len(self.branches) == 1 else None
        )

    def tools(self) -> list[Tool]:
        """The final-answer tools of tool mode (schema-only; built once)."""
        if self._tools is None:
            self._tools = [
                tool(
                    parameters=dict(s.schema),
                    name=s.name,
                    description=s.description or "Give the final answer with this tool.",
                    strict=s.strict,
                )
                for s in self.specs("tool")
            ]
        return list(self._tools)

    # -- what comes back

    def validate(self, data: str | bytes | Mapping[str, Any], spec_name: str | None = None) -> T:
        """The answer as `T`.

        Args:
            data: The answer's JSON text, or its decoded object.
            spec_name: The final-answer tool the model called (tool mode with a union).

        Raises:
            OutputValidationError: the answer is not JSON, or does not satisfy the type; every
                problem carries its path.
        """
        text = data if isinstance(data, str | bytes) else None
        try:
            value: Any = json.loads(_unfenced(data)) if isinstance(data, str | bytes) else data
        except ValueError as exc:
            problem = ArgumentProblem((), f"the answer is not valid JSON: {exc}")
            raise OutputValidationError([problem], text) from None
        branches = self._candidates(spec_name)
        problems: list[ArgumentProblem] = []
        for branch in branches:
            try:
                return self._validate_branch(branch, value, len(self.branches) > 1)
            except OutputValidationError as exc:
                problems.extend(exc.problems)
        raise OutputValidationError(problems, text if text is not None else value)

    def _candidates(self, spec_name: str | None) -> Sequence[_Branch]:
        if spec_name is not None and len(self.branches) > 1:
            chosen = [b for b in self.branches if f"final_result_{b.name}" == spec_name]
            if chosen:
                return chosen
        return self.branches

    def _validate_branch(self, branch: _Branch, data: Any, union: bool) -> T:
        value: Any = data
        unwrap = branch.wrapped or (union and not self._called_per_branch(value))
        mapping = _as_dict(value)
        if mapping is not None:
            # A strict schema makes optional properties nullable: null means "not given".
            dropper = self._dropper(self._sent_schema(branch, union))
            if dropper.needed:
                value = mapping = dropper(mapping)
        if unwrap:
            if mapping is None or _WRAP not in mapping:
                problem = ArgumentProblem((), f"expected an object with the property {_WRAP!r}")
                raise OutputValidationError([problem], data)
            value = mapping[_WRAP]
        if branch.validator is not None:
            found = branch.validator.problems(value)
            if found:
                raise OutputValidationError(found, data)
            return cast(T, value)
        assert branch.adapter is not None
        try:
            return branch.adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            raise OutputValidationError(problems_from_validation_error(exc, value), data) from None

    def _called_per_branch(self, value: Any) -> bool:
        return not (isinstance(value, dict) and set(cast(dict[str, Any], value)) == {_WRAP})

    def _sent_schema(self, branch: _Branch, union: bool) -> Mapping[str, Any]:
        if union and not branch.wrapped:
            if self._union_schema is None:
                self._union_schema = self._any_of()
            return self._union_schema
        return branch.schema

    def _dropper(self, schema: Mapping[str, Any]) -> NullDropper:
        # Built once per schema sent: what the walk needs is computed on first use and kept.
        dropper = self._droppers.get(id(schema))
        if dropper is None:
            dropper = self._droppers[id(schema)] = NullDropper(schema)
        return dropper

    def validate_partial(self, text: str) -> T | None:
        """What can be read of an answer that is still arriving (`None` when nothing yet)."""
        text = _unfenced(text, partial=True)
        if not text.strip():
            return None
        try:
            value: Any = pydantic_core.from_json(text, allow_partial=True)
        except ValueError:
            return None
        branch = self.branches[0]
        if branch.wrapped:
            if not isinstance(value, dict) or _WRAP not in value:
                return None
            value = cast(dict[str, Any], value)[_WRAP]
        if branch.adapter is None or len(self.branches) > 1:
            return cast(T, value)
        try:
            return branch.adapter.validate_python(value, experimental_allow_partial=True)
        except pydantic.ValidationError:
            return None


def _as_dict(value: object) -> dict[str, Any] | None:
    return cast(dict[str, Any], value) if isinstance(value, dict) else None


def _is_object(hint: object) -> bool:
    if get_origin(hint) is typing.Annotated:
        hint = cast(object, get_args(hint)[0])
    if isinstance(hint, type) and issubclass(hint, pydantic.BaseModel):
        return True
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return True
    return typing.is_typeddict(cast(Any, hint))


def _unfenced(data: str | bytes, *, partial: bool = False) -> str:
    text = data.decode() if isinstance(data, bytes) else data
    match = _FENCE.match(text)
    if match:
        return match.group(1)
    if partial and text.lstrip().startswith("```"):
        # An opening fence whose end has not arrived yet.
        return text.lstrip()[3:].removeprefix("json").lstrip("\n")
    return text


# --- the request -----------------------------------------------------------------------------


def resolve_mode(model: Model, mode: OutputMode | Literal["auto"]) -> OutputMode:
    """`auto` as native where the model has native structured output, else tool."""
    if mode != "auto":
        return mode
    return "native" if profile_of(model).native_output else "tool"


def prompt_instructions(spec: OutputSpec) -> str:
    """The instructions prompted mode adds: answer with JSON that satisfies the schema."""
    schema = json.dumps(dict(spec.schema), separators=(",", ":"))
    about = f" ({spec.description})" if spec.description else ""
    return (
        f"Answer with one JSON value{about} that satisfies this JSON Schema, and nothing else: "
        f"no prose, no code fences.\n{schema}"
    )


def answer_of(
    completion: Completion, specs: Sequence[OutputSpec]
) -> tuple[str | None, str | None, str | None]:
    """The raw answer: (JSON text, the final-answer tool called, the call's id); text when none."""
    names = {s.name for s in specs}
    if specs and specs[0].mode == "tool":
        for call in completion.message.tool_calls:
            if call.name in names:
                return call.arguments, call.name, call.id
        return None, None, None
    text = completion.message.text
    return (text if text.strip() else None), None, None


def refusal_of(completion: Completion) -> str | None:
    """The refusal text when the model declined to answer (providers mark it)."""
    refused = [
        p.text
        for p in completion.message.parts
        if isinstance(p, TextBlock) and p.provider_state and p.provider_state.get("refusal")
    ]
    if refused:
        return "".join(refused)
    if completion.finish_reason == "content_filter" and not completion.message.tool_calls:
        return completion.message.text or "the provider's content filter stopped the answer"
    return None


# --- parse -----------------------------------------------------------------------------------


@record
class ParseResult(Generic[T]):
    """The outcome of `parse`.

    Attributes:
        output: The validated answer; `None` when the model refused.
        refusal: Why the model declined to answer, when it did.
        completion: The last completion (text, citations, raw response...).
        messages: The conversation, every attempt and correction included.
        usage: Summed over every request.
        attempts: Requests made (1 plus the corrections).
    """

    output: T | None
    completion: Completion
    messages: list[Message]
    usage: Usage
    refusal: str | None = None
    attempts: int = 1

    @property
    def text(self) -> str:
        return self.completion.text


@record
class PartialOutput(Generic[T]):
    """A streamed piece of a structured answer: the value read so far (lenient), or the final one.

    Attributes:
        value: The answer as far as it has arrived (`None` before anything can be read).
        final: `True` on the last event: `value` is then validated strictly.
        result: The whole `ParseResult`, on the last event.
    """

    value: T | None
    final: bool = False
    result: ParseResult[T] | None = field(default=None, repr=False)


def _as_output(output_type: Any) -> OutputType[Any]:
    if isinstance(output_type, OutputType):
        return cast(OutputType[Any], output_type)
    return OutputType(output_type)


def _build(
    model: Model,
    output: OutputType[Any],
    mode: OutputMode | Literal["auto"],
    prompt: str | None,
    history: Sequence[Message],
    native_tools: Sequence[Any],
    tools: Sequence[Any],
    settings: ModelSettings | Mapping[str, Any] | None,
) -> tuple[ModelRequest, list[OutputSpec]]:
    # Native specs are as welcome in `tools=` as in `native_tools=`; function tools are not.
    functions = [t for t in tools if not isinstance(t, NativeTool)]
    if functions:
        raise TypeError(
            "parse() takes no function tools: an Agent runs tools and returns a typed output "
            "(Agent(..., output_type=T)); native tool specs (web_search(), ...) are welcome"
        )
    native_tools = [*native_tools, *(t for t in tools if isinstance(t, NativeTool))]
    resolved = resolve_mode(model, mode)
    if native_tools and not profile_of(model).output_with_native_tools:
        raise UnsupportedError(
            f"{getattr(model, 'provider', 'this provider')} cannot combine native tools with "
            "structured output in parse() (Gemini and Vertex can)"
        )
    specs = output.specs(resolved)
    messages = request_messages(prompt, history)
    request = ModelRequest(
        messages=messages, settings=ModelSettings.coerce(settings), native_tools=list(native_tools)
    )
    if resolved == "tool":
        request.tools = output.tools()
        request.tool_choice = specs[0].name if len(specs) == 1 else "required"
    elif resolved == "native":
        request.output = specs[0]
    else:
        messages.insert(_after_system(messages), SystemMessage(prompt_instructions(specs[0])))
    return request, specs


def _after_system(messages: Sequence[Message]) -> int:
    index = 0
    while index < len(messages) and isinstance(messages[index], SystemMessage):
        index += 1
    return index


def _correction(error: OutputValidationError, call_id: str | None, name: str | None) -> Message:
    text = error.feedback()
    if call_id is not None and name is not None:
        return ToolResultMessage(
            call_id=call_id, name=name, content=[TextPart(text)], is_error=True
        )
    return UserMessage.of(text)


def _answered_calls(completion: Completion, call_id: str | None) -> list[Message]:
    # Every other call of the turn still needs a result for the history to stay valid.
    return [
        ToolResultMessage(
            call_id=c.id,
            name=c.name,
            content=[TextPart("Error: only the final answer is expected here.")],
            is_error=True,
        )
        for c in completion.message.tool_calls
        if c.id != call_id
    ]


async def parse(
    model: Model,
    prompt: str | None,
    output_type: type[T] | OutputType[T] | Mapping[str, Any],
    *,
    history: Sequence[Message] = (),
    mode: OutputMode | Literal["auto"] = "auto",
    retries: int = 1,
    settings: ModelSettings | Mapping[str, Any] | None = None,
    native_tools: Sequence[Any] = (),
    tools: Sequence[Any] = (),
) -> ParseResult[T]:
    """Ask `model` for an answer of type `output_type` and validate it.

    Args:
        native_tools: Provider-side tools for the request: native specs (`web_search()`, ...),
            which `tools=` takes too, or raw provider tool payloads, which only this takes.
        tools: Native tool specs; a function tool raises `TypeError`.

    Raises:
        TypeError: function tools were given (use an Agent).
        UnsupportedError: the mode or the native tools are not available on this model.
        OutputValidationError: still invalid after `retries` corrections; carries the last output.
    """
    output = _as_output(output_type)
    request, specs = _build(model, output, mode, prompt, history, native_tools, tools, settings)
    usage = Usage()
    attempts = 0
    while True:
        attempts += 1
        completion = await model.send(request)
        usage = usage + completion.usage
        messages = [*request.messages, completion.message]
        refusal = refusal_of(completion)
        if refusal is not None:
            return ParseResult(None, completion, messages, usage, refusal, attempts)
        raw, called, call_id = answer_of(completion, specs)
        try:
            if raw is None:
                what = "call the final-answer tool" if specs[0].mode == "tool" else "answer"
                raise OutputValidationError(
                    [ArgumentProblem((), f"no answer came: {what} with the structured answer")],
                    completion.message.text or None,
                )
            value = output.validate(raw, called)
        except OutputValidationError as exc:
            if attempts > retries:
                exc.completion = completion
                raise
            extra = _answered_calls(completion, call_id)
            request = dataclasses.replace(
                request, messages=[*messages, *extra, _correction(exc, call_id, called)]
            )
            continue
        if call_id is not None:
            messages.extend(_answered_calls(completion, call_id))
            messages.append(
                ToolResultMessage(call_id=call_id, name=called or "", content=[TextPart("ok")])
            )
        return ParseResult(value, completion, messages, usage, None, attempts)


async def stream_parse(
    model: Model,
    prompt: str | None,
    output_type: type[T] | OutputType[T] | Mapping[str, Any],
    *,
    history: Sequence[Message] = (),
    mode: OutputMode | Literal["auto"] = "auto",
    settings: ModelSettings | Mapping[str, Any] | None = None,
    native_tools: Sequence[Any] = (),
    tools: Sequence[Any] = (),
) -> AsyncIterator[PartialOutput[T]]:
    """`parse` as a stream of partial values; the last event is final and strictly validated.

    A streamed answer is not corrected: an invalid final answer raises `OutputValidationError`.
    """
    output = _as_output(output_type)
    request, specs = _build(model, output, mode, prompt, history, native_tools, tools, settings)
    pieces: list[str] = []
    last: Any = None
    completion: Completion | None = None
    events: AsyncIterator[StreamEvent] = model.send_stream(request)
    async for event in events:
        if isinstance(event, CompletionDone):
            completion = event.completion
            break
        piece = _piece(event, specs[0].mode)
        if piece:
            pieces.append(piece)
            value = output.validate_partial("".join(pieces))
            if value is not None and value != last:
                last = value
                yield PartialOutput(value)
    if completion is None:
        raise ModelResponseError("the model's stream ended without a completion")
    messages = [*request.messages, completion.message]
    refusal = refusal_of(completion)
    if refusal is not None:
        result = ParseResult[T](None, completion, messages, completion.usage, refusal)
        yield PartialOutput(None, True, result)
        return
    raw, called, _ = answer_of(completion, specs)
    if raw is None:
        problem = ArgumentProblem((), "no answer came")
        raise OutputValidationError([problem], completion.message.text or None, completion)
    try:
        value = output.validate(raw, called)
    except OutputValidationError as exc:
        exc.completion = completion
        raise
    result = ParseResult(value, completion, messages, completion.usage)
    yield PartialOutput(value, True, result)


def _piece(event: StreamEvent, mode: OutputMode) -> str:
    if mode == "tool":
        return event.arguments if isinstance(event, ToolCallDelta) else ""
    return event.text if isinstance(event, TextDelta) else ""


# --- a run's structured answer ---------------------------------------------------------------


_NOT_RUN = "Not run: the final answer was given in the same turn."


class RunOutput:
    """What an agent run needs for a typed answer: what each request adds, and how a turn is read.

    The loop asks `tools()`, `tool_choice()`, `native_spec()` and `instructions()` when it builds a
    request, and hands each turn to `read()`, which says whether it was the final answer.
    """

    def __init__(
        self, output_type: Any, mode: OutputMode | Literal["auto"], retries: int, model: Model
    ) -> None:
        self.output = _as_output(output_type)
        self.mode = resolve_mode(model, mode)
        if self.mode == "native" and not profile_of(model).native_output:
            raise UnsupportedError(
                f"{getattr(model, 'provider', type(model).__name__)} has no native structured "
                "output here; use output_mode='tool' or 'prompted'"
            )
        self.specs = self.output.specs(self.mode)
        self.names = {s.name for s in self.specs}
        self.retries_left = retries
        self.value: Any = None
        self.refusal: str | None = None
        self.pending: list[Message] = []
        """Results owed to the calls of a turn whose invalid answer ended the run."""

    def tools(self) -> list[Tool]:
        return self.output.tools() if self.mode == "tool" else []

    def tool_choice(self, choice: Any) -> Any:
        # Tool mode: the run ends only through the final-answer tool, so some tool must be called.
        return "required" if self.mode == "tool" and choice == "auto" else choice

    def native_spec(self) -> OutputSpec | None:
        return self.specs[0] if self.mode == "native" else None

    def instructions(self) -> SystemMessage | None:
        return (
            SystemMessage(prompt_instructions(self.specs[0])) if self.mode == "prompted" else None
        )

    def read(
        self, completion: Completion
    ) -> tuple[Literal["done", "retry", "refused"], list[Message]] | None:
        """Read one turn: `None` when it is not an answer yet (tool calls to run).

        Returns what to append to the history: the final call's result when done, the corrections
        when the answer was invalid (and retries remain).

        Raises:
            OutputValidationError: invalid, and no correction left (the history is whole: the
                messages it carries in `messages` must be appended first, see `pending`).
        """
        refusal = refusal_of(completion)
        if refusal is not None:
            self.refusal = refusal
            return "refused", []
        calls = answerable_calls(completion.message)
        if self.mode == "tool":
            final = next((c for c in calls if c.name in self.names), None)
            if final is None:
                if calls:
                    return None  # ordinary tool calls: the loop runs them
                raw, called, call_id = None, None, None
            else:
                raw, called, call_id = final.arguments, final.name, final.id
        else:
            if calls:
                return None
            raw, called, call_id = answer_of(completion, self.specs)
        others = [
            ToolResultMessage(
                call_id=c.id, name=c.name, content=[TextPart(_NOT_RUN)], is_error=True
            )
            for c in calls
            if c.id != call_id
        ]
        try:
            if raw is None:
                what = f"call the {self.specs[0].name!r} tool" if self.mode == "tool" else "answer"
                raise OutputValidationError(
                    [
                        ArgumentProblem(
                            (), f"no final answer came: {what} with the structured answer"
                        )
                    ],
                    completion.message.text or None,
                )
            self.value = self.output.validate(raw, called)
        except OutputValidationError as exc:
            correction = _correction(exc, call_id, called)
            if self.retries_left <= 0:
                exc.completion = completion
                self.pending = [*others, *([correction] if call_id is not None else [])]
                raise
            self.retries_left -= 1
            return "retry", [*others, correction]
        done: list[Message] = list(others)
        if call_id is not None:
            done.append(
                ToolResultMessage(
                    call_id=call_id, name=called or "", content=[TextPart("Final answer received.")]
                )
            )
        return "done", done
