"""Tools: the `Tool` protocol, `FunctionTool`, and the `tool` decorator and factory."""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar, Literal, Protocol, TypeAlias, overload, runtime_checkable

import anyio
import pydantic

from ._arguments import (
    AuthInfo,
    Binding,
    FunctionBinding,
    NullDropper,
    ToolContext,
    load_json_object,
    model_binding,
    schema_binding,
)
from ._dialects import DIALECTS, CompiledSchema, Dialect, compile_dialect, strict_problem
from ._record import record
from ._schema import (
    inspect_function,
    no_field_titles,
    problems_from_validation_error,
)
from ._schema_check import check_schema, name_problem
from ._validate import describe_received
from .errors import (
    ArgumentProblem,
    SchemaError,
    ToolArgumentsError,
    ToolNameError,
    ToolTimeoutError,
    UnsupportedError,
)
from .native import NativeTool
from .results import TextPart, ToolResult, error_result, to_result

__all__ = [
    "MAX_ARGUMENT_CHARS",
    "AuthInfo",
    "DefinitionDialect",
    "FunctionTool",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolDefinition",
    "ToolLike",
    "as_tool",
    "compile_schema",
    "tool",
]

MAX_ARGUMENT_CHARS = 1_000_000
"""Arguments longer than this are refused before parsing: no real tool call needs a megabyte."""

DefinitionDialect: TypeAlias = Literal[
    "openai", "openai-strict", "anthropic", "anthropic-strict", "gemini", "mcp"
]


@record(frozen=True)
class ToolAnnotations:
    """Hints about a tool's behaviour, as MCP defines them. `None` means "not said"."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@record(frozen=True)
class ToolDefinition:
    """A tool as a provider wants it: the schema compiled for the provider's dialect.

    Attributes:
        changes: What the compiler changed or dropped to fit the dialect.
        defer_loading: Sent for the provider's own tool search to load on demand (set by
            `toolwire.tool_search` for Anthropic's and OpenAI Responses' native search only).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    strict: bool
    changes: tuple[str, ...] = ()
    defer_loading: bool = False


@runtime_checkable
class Tool(Protocol):
    """What toolwire needs from a tool. `FunctionTool` is the implementation `tool()` builds."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...
    @property
    def strict(self) -> bool: ...
    @property
    def annotations(self) -> ToolAnnotations: ...
    @property
    def output_schema(self) -> dict[str, Any] | None: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def sequential(self) -> bool: ...
    @property
    def requires_approval(self) -> bool: ...
    @property
    def executable(self) -> bool: ...

    def parse_args(self, raw: str | bytes | Mapping[str, Any] | None) -> Any:
        """Validate raw arguments (a JSON string or a mapping); raise `ToolArgumentsError`."""
        ...

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Validate and run. Failures come back as error results; only cancellation raises."""
        ...

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        """The provider-ready definition for a dialect."""
        ...


ToolLike: TypeAlias = "Tool | Callable[..., Any] | Mapping[str, Any] | NativeTool"


# --- the tool ------------------------------------------------------------------------------------


class FunctionTool:
    """A tool backed by a Python callable, or a schema-only tool when there is none.

    Build it with `tool()`; calling the object itself calls the original function.
    """

    _toolwire_tool: ClassVar[bool] = True
    """Marks toolwire's own tool classes, so `as_tool` knows them without the protocol check."""

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        binding: Binding,
        executable: bool,
        strict: bool | None = None,
        annotations: ToolAnnotations | None = None,
        output_schema: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        sequential: bool = False,
        requires_approval: bool = False,
        function: Callable[..., Any] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError("a tool needs a non-empty name")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"tool {name!r}: timeout must be positive, got {timeout}")
        refused = [d for d in DIALECTS if d != "openai-strict" and name_problem(name, d)]
        if len(refused) == len(DIALECTS) - 1:  # no provider would take it: refuse it now
            bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "_-"))})
            why = (
                f"contains {', '.join(map(repr, bad))}"
                if bad
                else f"is {len(name)} characters long"
            )
            raise ToolNameError(
                f"tool {name!r}: every dialect ({', '.join(refused)}) refuses this name: it "
                f"{why}; use letters, digits, '_' and '-'"
            )
        try:
            check_schema(parameters)
        except SchemaError as exc:
            raise SchemaError(f"tool {name!r}: parameters {exc}") from None
        self._name = name
        self._description = description
        self._parameters = _object_schema(parameters)
        self._binding = binding
        self._executable = executable
        self._annotations = annotations or ToolAnnotations()
        self._output_schema = dict(output_schema) if output_schema is not None else None
        self._timeout = timeout
        self._sequential = sequential
        self._requires_approval = requires_approval
        self._function = function
        self._compiled: dict[Dialect, CompiledSchema] = {}
        self._definitions: dict[DefinitionDialect, ToolDefinition] = {}
        self._strict = self._resolve_strict(strict)
        # Strict mode makes optional properties required-but-nullable; a null the model sends for
        # one that refuses null means "not given", so it is removed before validation. When every
        # optional property accepts null (`x: int | None = None`), there is nothing to remove.
        dropper = NullDropper(self._parameters) if self._strict else None
        self._drop_nulls = dropper if dropper is not None and dropper.needed else None
        self._null_optional = self._drop_nulls is not None

    def _resolve_strict(self, strict: bool | None) -> bool:
        if strict is False:
            return False
        problem = strict_problem(self._parameters)
        if problem is None:
            return True
        if strict:
            raise UnsupportedError(
                f"Tool {self._name!r} asks for strict=True, but strict mode cannot express its "
                f"schema: {problem}"
            )
        return False

    # The protocol's attributes are read-only: a tool is immutable once built, so its compiled
    # schemas stay valid.
    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    @property
    def strict(self) -> bool:
        return self._strict

    @property
    def annotations(self) -> ToolAnnotations:
        return self._annotations

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._output_schema

    @property
    def timeout(self) -> float | None:
        return self._timeout

    @property
    def sequential(self) -> bool:
        return self._sequential

    @property
    def requires_approval(self) -> bool:
        return self._requires_approval

    @property
    def executable(self) -> bool:
        return self._executable

    @property
    def function(self) -> Callable[..., Any] | None:
        """The original function, when the tool was built from one."""
        return self._function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            raise TypeError(f"tool {self._name!r} was not built from a function")
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FunctionTool(name={self._name!r}, strict={self._strict})"

    def parse_args(self, raw: str | bytes | Mapping[str, Any] | None) -> Any:
        """Validate a call's arguments.

        Args:
            raw: A JSON object as text, an already-decoded mapping, or `None`/`""` for no arguments.

        Raises:
            ToolArgumentsError: listing every problem, with its path, what was expected and what came.
        """
        binding = self._binding
        # Fast path: well-formed JSON text goes straight to the compiled validator; anything
        # unusual (blank, oversized, nulls to drop, invalid) takes the careful path below, which
        # also builds the precise error message.
        if (
            type(raw) is str
            and len(raw) <= MAX_ARGUMENT_CHARS
            and not (self._null_optional and "null" in raw)
        ):
            try:
                return binding.validate_json(raw)
            except pydantic.ValidationError:
                pass
        try:
            if raw is None:
                return binding.validate_python({})
            if isinstance(raw, str | bytes):
                if len(raw) > MAX_ARGUMENT_CHARS:
                    raise ToolArgumentsError(
                        self._name,
                        [
                            ArgumentProblem(
                                (), f"the arguments are longer than {MAX_ARGUMENT_CHARS} characters"
                            )
                        ],
                    )
                if not raw.strip():
                    return binding.validate_python({})
                # Text without a null cannot hold one: skip the decode-and-walk (the common case).
                if self._null_optional and (
                    b"null" in raw if isinstance(raw, bytes) else "null" in raw
                ):
                    decoded: Any = load_json_object(raw, self._name)
                    if type(decoded) is dict and self._drop_nulls is not None:
                        decoded = self._drop_nulls(typing.cast(dict[str, Any], decoded))
                    return binding.validate_python(typing.cast(Mapping[str, Any], decoded))
                return binding.validate_json(raw)
            if isinstance(raw, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
                if self._drop_nulls is not None:
                    raw = self._drop_nulls(dict(raw))
                return binding.validate_python(raw)
            raise ToolArgumentsError(
                self._name,
                [
                    ArgumentProblem(
                        (), "expected a JSON object of arguments", describe_received(raw)
                    )
                ],
            )
        except pydantic.ValidationError as exc:
            readable, data = _decoded(raw)
            problems = (
                problems_from_validation_error(exc, data)
                if readable
                else problems_from_validation_error(exc)
            )
            raise ToolArgumentsError(self._name, problems) from None
        except RecursionError:
            raise ToolArgumentsError(
                self._name, [ArgumentProblem((), "the arguments are nested too deeply")]
            ) from None

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Validate the arguments and run the tool.

        Never raises for a failure of the tool: invalid arguments, a `ToolError`, any other exception
        and a timeout all come back as error results (the exception kept on `result.error`).
        Cancellation propagates.
        """
        try:
            if (
                type(args) is str
                and len(args) <= MAX_ARGUMENT_CHARS
                and not (self._null_optional and "null" in args)
            ):
                try:
                    parsed = self._binding.validate_json(args)
                except pydantic.ValidationError:
                    parsed = self.parse_args(args)  # raises, with the precise message
            else:
                parsed = self.parse_args(args)
            if self._timeout is None:
                value = await self._binding.call(parsed, ctx, self._name)
            else:
                # A scope of our own, so a TimeoutError the tool itself raises is not mistaken
                # for this limit.
                value: Any = None
                with anyio.move_on_after(self._timeout) as scope:
                    value = await self._binding.call(parsed, ctx, self._name)
                if scope.cancelled_caught:
                    return error_result(ToolTimeoutError(self._name, self._timeout))
            if type(value) is str:
                return ToolResult([TextPart(value)])  # positional: no keyword dict
            return to_result(value)
        except Exception as exc:
            return error_result(exc)

    def compiled(self, dialect: Dialect) -> CompiledSchema:
        """This tool's schema compiled for a dialect; compiled once, then cached."""
        found = self._compiled.get(dialect)
        if found is None:
            found = compile_dialect(self._parameters, dialect)
            self._compiled[dialect] = found
        return found

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        """The provider-ready definition: for `"openai"`, a strict tool compiles to `openai-strict`.

        Built once per dialect and kept (the definition is frozen), so a request pays nothing
        for a tool it has sent before."""
        found = self._definitions.get(dialect)
        if found is None:
            found = self._definitions[dialect] = _definition(self, dialect, self.compiled)
        return found


def _decoded(raw: str | bytes | Mapping[str, Any] | None) -> tuple[bool, Any]:
    """The arguments as data, to locate validation problems in them (`False` when unreadable)."""
    if raw is None:
        return True, {}
    if isinstance(raw, str | bytes):
        if not raw.strip():
            return True, {}
        try:
            return True, json.loads(raw)
        except (ValueError, RecursionError):
            return False, None
    return True, raw


def _definition(
    tool: Tool, dialect: DefinitionDialect, compile_: Callable[[Dialect], CompiledSchema]
) -> ToolDefinition:
    strict = tool.strict
    if dialect == "openai":
        target: Dialect = "openai-strict" if strict else "openai"
    elif dialect == "openai-strict":
        target, strict = "openai-strict", True
    elif dialect == "anthropic-strict":
        # Anthropic's strict tool use, for a strict tool whose schema it can express; any other
        # goes out as a plain Anthropic tool, the reason in the report.
        target = "anthropic-strict" if strict else "anthropic"
        if strict:
            try:
                compile_("anthropic-strict")
            except UnsupportedError as exc:
                plain = _definition(tool, "anthropic", compile_)
                why = f"(root): not sent strict: {exc}"
                return replace(plain, changes=(*plain.changes, why))
    else:
        target, strict = dialect, False
    problem = name_problem(tool.name, target)
    if problem is not None:
        raise UnsupportedError(f"tool {tool.name!r}: {problem}")
    try:
        compiled = compile_(target)
    except (SchemaError, UnsupportedError) as exc:
        if str(exc).startswith(f"tool {tool.name!r}"):
            raise
        raise type(exc)(f"tool {tool.name!r}, {target} dialect: {exc}") from None
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        parameters=compiled.schema,
        strict=strict,
        changes=compiled.changes,
    )


def compile_schema(tool_or_schema: Tool | Mapping[str, Any], dialect: Dialect) -> CompiledSchema:
    """Compile a tool's (or a raw) JSON Schema for a provider dialect.

    Returns the compiled schema and the list of what was changed or dropped. Tools built by toolwire
    cache the result per dialect.

    Raises:
        UnsupportedError: the dialect cannot express the schema; the message names the path.
        SchemaError: the schema is broken (e.g. a `$ref` that points nowhere).
    """
    if isinstance(tool_or_schema, FunctionTool):
        return tool_or_schema.compiled(dialect)
    if isinstance(tool_or_schema, Mapping):
        return compile_dialect(_object_schema(tool_or_schema), dialect)  # pyright: ignore[reportUnknownArgumentType]
    cached = getattr(tool_or_schema, "compiled", None)
    if callable(cached):
        result = cached(dialect)
        if isinstance(result, CompiledSchema):
            return result
    return compile_dialect(tool_or_schema.parameters, dialect)


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(schema)
    if "type" not in out and "properties" in out:
        out["type"] = "object"
    if out.get("type") == "object" and "properties" not in out:
        out["properties"] = {}
    return out


# --- building tools ------------------------------------------------------------------------------


def _from_function(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    strict: bool | None,
    annotations: ToolAnnotations | None,
    timeout: float | None,
    sequential: bool,
    requires_approval: bool,
) -> FunctionTool:
    if not callable(fn):
        raise TypeError(f"tool() expects a function, got {type(fn).__name__}")
    signature = inspect_function(fn, ToolContext)
    binding = FunctionBinding(
        fn, signature.validator, signature.context_param, signature.positional, signature.is_async
    )
    tool_name = name or getattr(fn, "__name__", None)
    if not tool_name or tool_name == "<lambda>":
        raise TypeError("tool(): a lambda or unnamed callable needs name=...")
    return FunctionTool(
        name=tool_name,
        description=description if description is not None else signature.description,
        parameters=signature.parameters,
        binding=binding,
        executable=True,
        strict=strict,
        annotations=annotations,
        output_schema=signature.output_schema,
        timeout=timeout,
        sequential=sequential,
        requires_approval=requires_approval,
        function=fn,
    )


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _from_parameters(
    parameters: type[pydantic.BaseModel] | Mapping[str, Any],
    execute: Callable[..., Any] | None,
    *,
    name: str | None,
    description: str | None,
    strict: bool | None,
    annotations: ToolAnnotations | None,
    timeout: float | None,
    sequential: bool,
    requires_approval: bool,
) -> FunctionTool:
    if isinstance(parameters, type) and issubclass(parameters, pydantic.BaseModel):  # pyright: ignore[reportUnnecessaryIsInstance]
        schema = parameters.model_json_schema(schema_generator=no_field_titles())
        schema_description = schema.pop("description", None)
        schema.pop("title", None)
        binding: Binding = model_binding(parameters, execute)
        tool_name = name or _snake(parameters.__name__)
    elif isinstance(parameters, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        schema = dict(parameters)
        schema_description = schema.get("description")
        if not name:
            raise TypeError("tool(parameters=<JSON Schema>) needs name=...")
        tool_name = name
        try:
            binding = schema_binding(schema, execute, tool_name)
        except SchemaError as exc:
            raise SchemaError(f"tool {tool_name!r}: {exc}") from exc
    else:
        raise TypeError(
            "tool(parameters=...) takes a Pydantic model class or a JSON Schema dict, "
            f"got {type(parameters).__name__}"
        )
    if execute is not None and not callable(execute):
        raise TypeError(f"tool(execute=...) must be callable, got {type(execute).__name__}")
    doc = description
    if doc is None and execute is not None:
        doc = inspect.getdoc(execute) or None
    if doc is None:
        doc = schema_description if isinstance(schema_description, str) else ""
    return FunctionTool(
        name=tool_name,
        description=doc,
        parameters=schema,
        binding=binding,
        executable=execute is not None,
        strict=strict,
        annotations=annotations,
        timeout=timeout,
        sequential=sequential,
        requires_approval=requires_approval,
    )


_F = typing.TypeVar("_F", bound=Callable[..., Any])


@overload
def tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    annotations: ToolAnnotations | None = None,
    timeout: float | None = None,
    sequential: bool = False,
    requires_approval: bool = False,
) -> FunctionTool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    parameters: type[pydantic.BaseModel] | Mapping[str, Any],
    execute: Callable[..., Any] | None = None,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    annotations: ToolAnnotations | None = None,
    timeout: float | None = None,
    sequential: bool = False,
    requires_approval: bool = False,
) -> FunctionTool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    annotations: ToolAnnotations | None = None,
    timeout: float | None = None,
    sequential: bool = False,
    requires_approval: bool = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    parameters: type[pydantic.BaseModel] | Mapping[str, Any] | None = None,
    execute: Callable[..., Any] | None = None,
    name: str | None = None,
    description: str | None = None,
    strict: bool | None = None,
    annotations: ToolAnnotations | None = None,
    timeout: float | None = None,
    sequential: bool = False,
    requires_approval: bool = False,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a typed function, a Pydantic model or a JSON Schema.

    Use it as `@tool`, as `@tool(name=..., strict=..., timeout=...)`, or as a factory:
    `tool(fn)` or `tool(name=..., description=..., parameters=Model | schema, execute=fn | None)`.

    With `parameters`, `execute` receives the validated value (a model instance or a dict) as its one
    argument; without `execute` the tool only describes its shape (its calls go back to the caller).

    Args:
        fn: A typed function, sync or async. Its hints make the schema, its docstring the
            description and per-parameter descriptions (Google, NumPy or Sphinx style).
        parameters: A Pydantic model class or a JSON Schema object, instead of a function.
        execute: What runs the tool built from `parameters`.
        name: Defaults to the function's name (or the model's, in snake case).
        description: Defaults to the docstring, else the schema's own `description`.
        strict: `None` picks strict mode whenever the schema allows it; `True` raises
            `UnsupportedError` when it does not; `False` never uses it.
        annotations: MCP behaviour hints.
        timeout: Seconds after which a call is cancelled and answered with `ToolTimeoutError`.
        sequential: Never run this tool concurrently with other calls of the same turn.
        requires_approval: Pause the run for approval before each call.

    Raises:
        TypeError: a parameter without a type hint (named with its function), or bad arguments.
        UnsupportedError: `strict=True` on a schema strict mode cannot express.
    """
    options: dict[str, Any] = {
        "name": name,
        "description": description,
        "strict": strict,
        "annotations": annotations,
        "timeout": timeout,
        "sequential": sequential,
        "requires_approval": requires_approval,
    }
    if fn is not None:
        if parameters is not None or execute is not None:
            raise TypeError("tool(fn) takes no parameters= or execute=")
        return _from_function(fn, **options)
    if parameters is not None:
        return _from_parameters(parameters, execute, **options)
    if execute is not None:
        return _from_function(execute, **options)

    def decorate(func: Callable[..., Any]) -> FunctionTool:
        return _from_function(func, **options)

    return decorate


def as_tool(obj: ToolLike) -> Tool:
    """Accept anything usable as a tool: a `Tool`, a typed function, or a definition dict.

    A dict with `name`, `description` and `parameters` (or OpenAI's `{"type": "function",
    "function": {...}}`) becomes a schema-only tool.

    Raises:
        TypeError: a native tool spec (`web_search()`...): the provider runs it, not toolwire.
    """
    if getattr(type(obj), "_toolwire_tool", False):
        # FunctionTool and every ToolWrapper: known by class, before the runtime protocol check,
        # which costs tens of microseconds per object on Python 3.11 (tools resolve per request).
        return typing.cast(Tool, obj)
    if isinstance(obj, NativeTool):
        raise TypeError(
            f"{obj.kind}() is run by the model's provider, not by toolwire: pass it in tools= of "
            "a model call or an Agent"
        )
    if isinstance(obj, Mapping):
        spec = typing.cast(Mapping[str, Any], obj)
        if spec.get("type") == "function" and isinstance(spec.get("function"), Mapping):
            spec = typing.cast(Mapping[str, Any], spec["function"])
        if not isinstance(spec.get("name"), str):
            raise TypeError("a tool dict needs a 'name' string")
        params: Any = spec.get("parameters", spec.get("input_schema", spec.get("inputSchema")))
        if params is None:
            params = {"type": "object", "properties": {}}
        strict = spec.get("strict")
        return _from_parameters(
            typing.cast(Mapping[str, Any], params),
            None,
            name=spec["name"],
            description=spec.get("description"),
            strict=strict if isinstance(strict, bool) else None,
            annotations=None,
            timeout=None,
            sequential=False,
            requires_approval=False,
        )
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return _from_function(
            obj,
            name=None,
            description=None,
            strict=None,
            annotations=None,
            timeout=None,
            sequential=False,
            requires_approval=False,
        )
    raise TypeError(f"cannot use {type(obj).__name__} as a tool")
