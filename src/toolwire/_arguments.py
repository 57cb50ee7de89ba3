"""How a call's validated arguments reach a tool's implementation, and strict mode's nulls.

A binding validates raw arguments (JSON text or a mapping) and calls the implementation: a typed
function with keyword arguments (`_FunctionBinding`), or an `execute` callable with one validated
value, a Pydantic model instance or a dict (`_ExecuteBinding`). Sync callables run in a worker
thread. `ToolContext` lives here because bindings inject it.
"""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
import pydantic

from ._record import empty_dict, record
from ._schema import ArgumentValidator, is_async_callable
from ._schema_refs import SchemaIndex
from ._validate import SchemaValidator
from .errors import ArgumentProblem, SchemaError, ToolArgumentsError, ToolError
from .messages import AssistantMessage, UserMessage

if TYPE_CHECKING:
    from ._tool_client import Elicited, LogLevel, Sampled, ToolClient

__all__ = [
    "AuthInfo",
    "Binding",
    "ExecuteBinding",
    "FunctionBinding",
    "NullDropper",
    "ToolContext",
    "load_json_object",
    "model_binding",
    "schema_binding",
]


@record(frozen=True)
class AuthInfo:
    """Who called a tool through an MCP server protected by OAuth: the validated access token.

    Attributes:
        subject: The token's `sub`: the resource owner (or the client itself, for client
            credentials); unique only per issuer.
        client_id: The OAuth client the token was issued to.
        scopes: The scopes the token grants.
        issuer: The authorization server that issued the token.
        expires_at: When the token expires (seconds since the epoch), when known.
        claims: Every claim of the token (or of the introspection answer), as received.
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    issuer: str | None
    expires_at: int | None = None
    claims: Mapping[str, Any] = field(default_factory=empty_dict)


@record
class ToolContext:
    """Given to a tool parameter annotated `ToolContext`; never part of the schema.

    Attributes:
        tool_name: The name the tool was called by.
        call_id: The provider's id for this call, when there is one.
        deps: Whatever the caller passed as run dependencies.
        metadata: Free-form values for middleware and hooks to share.
        idempotency_key: In a durable run, the run id and the call id: the same on every retry
            of this call after a crash, so a tool with side effects can do them exactly once.
            `None` in a run that is not durable.
        auth: The caller's validated access token, when the tool is served over MCP behind
            OAuth (`create_app(..., oauth=ProtectedResource(...))`); `None` otherwise.
        client: The MCP client that called the tool, when it is served over MCP: the methods
            below go through it. `None` otherwise.
    """

    tool_name: str
    call_id: str | None = None
    deps: Any = None
    metadata: dict[str, Any] = field(default_factory=empty_dict)
    idempotency_key: str | None = None
    auth: AuthInfo | None = None
    client: ToolClient | None = None

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress to the MCP client, if it asked for it; a no-op elsewhere."""
        if self.client is not None:
            await self.client.report_progress(progress, total, message)

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> None:
        """Send a log line to the MCP client (at or above its chosen level); a no-op elsewhere."""
        if self.client is not None:
            await self.client.log(level, data, logger)

    async def sample(
        self,
        messages: str | Sequence[UserMessage | AssistantMessage],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_hints: Sequence[str] = (),
    ) -> Sampled:
        """Ask the MCP client's model for a completion (MCP sampling).

        Raises:
            ToolError: not served over MCP, the client offers no sampling, refused, or did not
                answer within the server's `ask_timeout` (wrap the call in `anyio.fail_after`
                to wait less).
        """
        if self.client is None:
            raise ToolError("Sampling needs an MCP client: this tool is not served over MCP")
        return await self.client.sample(
            messages,
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
            stop_sequences=stop_sequences,
            model_hints=model_hints,
        )

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the MCP client's user to fill in a form described by a flat JSON Schema object.

        Raises:
            ToolError: not served over MCP, the client offers no elicitation, its answer breaks
                the schema, or it did not answer within the server's `ask_timeout`.
        """
        if self.client is None:
            raise ToolError("Elicitation needs an MCP client: this tool is not served over MCP")
        return await self.client.elicit(message, schema)


class Binding(Protocol):
    def validate_json(self, raw: str | bytes) -> Any: ...
    def validate_python(self, raw: Mapping[str, Any]) -> Any: ...
    def call(self, args: Any, ctx: ToolContext | None, name: str) -> Awaitable[Any]: ...


def _runner(fn: Callable[..., Any], is_async: bool) -> Callable[..., Awaitable[Any]]:
    if is_async:
        return fn

    async def in_thread(*args: Any, **kwargs: Any) -> Any:
        # A sync tool must not block the event loop; when the call is cancelled (a timeout), the
        # thread is abandoned since Python cannot interrupt it.
        value = await anyio.to_thread.run_sync(
            functools.partial(fn, *args, **kwargs), abandon_on_cancel=True
        )
        # A plain `def` wrapping an async function (a decorator) hands back its coroutine.
        return await value if inspect.isawaitable(value) else value

    return in_thread


class FunctionBinding:
    __slots__ = ("_context_param", "_defaults", "_json", "_positional", "_python", "_run")

    def __init__(
        self,
        fn: Callable[..., Any],
        validator: ArgumentValidator,
        context_param: str | None,
        positional: tuple[str, ...],
        is_async: bool,
    ) -> None:
        # The core validator's own methods, bound once: no Python wrapper between a call's
        # arguments and pydantic-core.
        self._json: Callable[[str | bytes], Any] = validator.validate_json
        self._python: Callable[[Mapping[str, Any]], Any] = validator.validate_python
        self._context_param = context_param
        self._positional = positional
        self._defaults: dict[str, Any] = {}
        if positional:
            # A positional-only parameter left out before one that is given must be passed its
            # default explicitly, or every later argument would shift one place to the left.
            params = inspect.signature(fn).parameters
            self._defaults = {
                n: params[n].default for n in positional if params[n].default is not params[n].empty
            }
        self._run = _runner(fn, is_async)

    def validate_json(self, raw: str | bytes) -> Any:
        return self._json(raw)

    def validate_python(self, raw: Mapping[str, Any]) -> Any:
        return self._python(raw)

    def call(self, args: dict[str, Any], ctx: ToolContext | None, name: str) -> Awaitable[Any]:
        # Hands back the function's own awaitable: no coroutine of its own per call.
        if self._context_param is not None:
            args = {**args, self._context_param: ctx or ToolContext(tool_name=name)}
        if self._positional:
            kwargs = dict(args)
            given = [n for n in self._positional if n in kwargs]
            names = self._positional[: self._positional.index(given[-1]) + 1] if given else ()
            positional = [kwargs.pop(n) if n in kwargs else self._defaults[n] for n in names]
            return self._run(*positional, **kwargs)
        return self._run(**args)


def _context_param_of(fn: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        return None
    for name, hint in hints.items():
        if hint is ToolContext and name != "return":
            return name
    return None


class ExecuteBinding:
    """An `execute` callable receiving one validated value (a model instance or a dict)."""

    __slots__ = ("_context_param", "_run", "_validate_json", "_validate_python")

    def __init__(
        self,
        execute: Callable[..., Any] | None,
        validate_json: Callable[[str | bytes], Any],
        validate_python: Callable[[Mapping[str, Any]], Any],
    ) -> None:
        self._validate_json = validate_json
        self._validate_python = validate_python
        self._context_param = _context_param_of(execute) if execute else None
        self._run = _runner(execute, is_async_callable(execute)) if execute else None

    def validate_json(self, raw: str | bytes) -> Any:
        return self._validate_json(raw)

    def validate_python(self, raw: Mapping[str, Any]) -> Any:
        return self._validate_python(raw)

    async def call(self, args: Any, ctx: ToolContext | None, name: str) -> Any:
        if self._run is None:
            raise ToolError(
                f"Tool {name!r} has no implementation; its calls are answered by the caller."
            )
        if self._context_param is not None:
            context = ctx or ToolContext(tool_name=name)
            return await self._run(args, **{self._context_param: context})
        return await self._run(args)


def model_binding(
    model: type[pydantic.BaseModel], execute: Callable[..., Any] | None
) -> ExecuteBinding:
    return ExecuteBinding(execute, model.model_validate_json, model.model_validate)


def schema_binding(
    schema: Mapping[str, Any], execute: Callable[..., Any] | None, name: str
) -> ExecuteBinding:
    validator = SchemaValidator(schema)

    def validate_python(raw: Mapping[str, Any]) -> Any:
        problems = validator.problems(raw)
        if problems:
            raise ToolArgumentsError(name, problems)
        return raw

    def validate_json(raw: str | bytes) -> Any:
        if not raw.strip():  # no arguments at all, as some providers send for empty schemas
            return validate_python({})
        return validate_python(load_json_object(raw, name))

    return ExecuteBinding(execute, validate_json, validate_python)


def load_json_object(raw: str | bytes, name: str) -> Any:
    """Decode argument JSON; any failure (absurd nesting included) is a `ToolArgumentsError`."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ToolArgumentsError(
            name, [ArgumentProblem((), "the arguments are nested too deeply")]
        ) from None
    except ValueError as exc:
        raise ToolArgumentsError(
            name, [ArgumentProblem((), f"the arguments are not valid JSON: {exc}")]
        ) from None


class NullDropper:
    """Removes the nulls a model sent for optional properties that do not accept null.

    Strict mode makes every optional property required-but-nullable; a null for one whose own
    schema refuses null means "not given". What the walk needs (references resolved by the one
    resolver, whether a subschema accepts null, the object view per set of keys) is computed once
    and kept, so a strict call that carries nulls costs little more than one without.
    Descends wherever the schema leads: `$ref`, `allOf`, the object branch of an `anyOf`/`oneOf`,
    array `items`/`prefixItems` and `additionalProperties`.
    """

    __slots__ = ("_arrays", "_index", "_nullable", "_resolved", "_schema", "_views", "needed")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema
        try:
            self._index: SchemaIndex | None = SchemaIndex(schema)
        except SchemaError:
            self._index = None
        self._resolved: dict[int, Mapping[str, Any] | None] = {}
        self._nullable: dict[int, bool] = {}
        self._views: dict[tuple[int, frozenset[str]], _ObjectView] = {}
        self._arrays: dict[int, tuple[list[Any], Any]] = {}
        # Whether some optional property anywhere in the schema refuses null.
        self.needed = self._any_droppable()

    def _any_droppable(self) -> bool:
        todo: list[Any] = [self._schema]
        seen: set[int] = set()
        while todo:
            node = todo.pop()
            if isinstance(node, list):
                todo += typing.cast(list[Any], node)
                continue
            if not isinstance(node, Mapping):
                continue
            mapping = typing.cast(Mapping[str, Any], node)
            if id(mapping) in seen:
                continue
            seen.add(id(mapping))
            props = mapping.get("properties")
            if isinstance(props, Mapping):
                required = mapping.get("required")
                names: set[Any] = set()
                if isinstance(required, list):
                    names.update(typing.cast(list[Any], required))
                for name, sub in typing.cast(Mapping[str, Any], props).items():
                    if name not in names and not self._accepts_null(sub):
                        return True
            todo += mapping.values()
        return False

    def __call__(self, value: dict[str, Any]) -> dict[str, Any]:
        return typing.cast(dict[str, Any], self._walk(self._schema, value, 0))

    def _resolve(self, node: Any) -> Mapping[str, Any] | None:
        key = id(node)
        if key in self._resolved:
            return self._resolved[key]
        out: Mapping[str, Any] | None = None
        current = node
        for _ in range(32):
            if not isinstance(current, Mapping):
                break
            mapping = typing.cast(Mapping[str, Any], current)
            ref = mapping.get("$ref")
            if not isinstance(ref, str):
                out = mapping
                break
            index = self._index
            if index is None:
                break
            try:
                current = index.resolve(ref, index.where_of(mapping, index.root_where)).schema
            except SchemaError:
                break
        self._resolved[key] = out
        return out

    def _accepts_null(self, schema: Any, depth: int = 0) -> bool:
        key = id(schema)
        found = self._nullable.get(key)
        if found is None:
            found = self._nullable[key] = self._check_null(schema, depth)
        return found

    def _check_null(self, schema: Any, depth: int) -> bool:
        if not isinstance(schema, Mapping) or depth > 32:
            return True
        schema = typing.cast(Mapping[str, Any], schema)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self._resolve(schema)
            if target is not None and self._accepts_null(target, depth + 1):
                return True
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and not all(
            self._accepts_null(part, depth + 1) for part in typing.cast(list[Any], all_of)
        ):
            return False
        kind = schema.get("type")
        if (
            kind == "null"
            or (isinstance(kind, list) and "null" in kind)
            or schema.get("nullable") is True
        ):
            return True
        if "const" in schema and schema["const"] is None:
            return True
        if None in schema.get("enum", ()):
            return True
        branches = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
        if any(self._accepts_null(b, depth + 1) for b in branches):
            return True
        return (
            kind is None
            and not branches
            and ref is None
            and "enum" not in schema
            and "const" not in schema
        )

    def _object_view(
        self, node: Mapping[str, Any], keys: frozenset[str], depth: int
    ) -> _ObjectView:
        key = (id(node), keys)
        found = self._views.get(key)
        if found is None:
            if len(self._views) >= 512:  # key sets come from the model: keep the cache bounded
                self._views.clear()
            found = self._views[key] = self._make_view(node, keys, depth)
        return found

    def _make_view(self, node: Mapping[str, Any], keys: frozenset[str], depth: int) -> _ObjectView:
        """The properties, required names and extra-property schema that apply to an object."""
        props: dict[str, Any] = dict(typing.cast(Mapping[str, Any], node.get("properties") or {}))
        required = set(typing.cast(list[str], node.get("required") or []))
        extra: Any = node.get("additionalProperties")
        if depth > 32:
            return props, required, extra
        for part in typing.cast(list[Any], node.get("allOf") or []):
            resolved = self._resolve(part)
            if resolved is not None:
                more, more_required, more_extra = self._object_view(resolved, keys, depth + 1)
                props = {**more, **props}
                required |= more_required
                extra = extra if extra is not None else more_extra
        best: _ObjectView | None = None
        best_score = -1
        for branch_key in ("anyOf", "oneOf"):
            for branch in typing.cast(list[Any], node.get(branch_key) or []):
                resolved = self._resolve(branch)
                if resolved is None:
                    continue
                view = self._object_view(resolved, keys, depth + 1)
                if not view[0] and view[2] is None:
                    continue
                score = len(set(view[0]) & keys)
                if score > best_score:
                    best, best_score = view, score
        if best is not None:
            props = {**best[0], **props}
            required |= best[1]
            extra = extra if extra is not None else best[2]
        return props, required, extra

    def _array_view(self, node: Mapping[str, Any], depth: int) -> tuple[list[Any], Any]:
        found = self._arrays.get(id(node))
        if found is None:
            found = self._arrays[id(node)] = self._make_array_view(node, depth)
        return found

    def _make_array_view(self, node: Mapping[str, Any], depth: int) -> tuple[list[Any], Any]:
        prefix: Any = node.get("prefixItems")
        items: Any = node.get("items")
        if isinstance(items, list):  # the draft-07 tuple form
            prefix, items = typing.cast(list[Any], items), node.get("additionalItems")
        if prefix is not None or items is not None or depth > 32:
            return typing.cast(list[Any], prefix or []), items
        for key in ("allOf", "anyOf", "oneOf"):
            for part in typing.cast(list[Any], node.get(key) or []):
                resolved = self._resolve(part)
                if resolved is not None:
                    found = self._array_view(resolved, depth + 1)
                    if found[0] or found[1] is not None:
                        return found
        return [], None

    def _walk(self, node: Any, data: Any, depth: int) -> Any:
        resolved = self._resolve(node)
        if depth > 64 or resolved is None:
            return data
        if isinstance(data, dict):
            obj = typing.cast(dict[str, Any], data)
            props, required, extra = self._object_view(resolved, frozenset(obj), 0)
            if not props and not isinstance(extra, Mapping):
                return obj
            out: dict[str, Any] = {}
            for key, item in obj.items():
                sub = props.get(key)
                if sub is None:
                    out[key] = (
                        self._walk(extra, item, depth + 1) if isinstance(extra, Mapping) else item
                    )
                elif item is None and key not in required and not self._accepts_null(sub):
                    continue
                elif isinstance(item, (dict, list)):
                    out[key] = self._walk(sub, item, depth + 1)
                else:
                    out[key] = item
            return out
        if isinstance(data, list):
            prefix, items = self._array_view(resolved, 0)
            seq = typing.cast(list[Any], data)
            return [
                self._walk(prefix[i] if i < len(prefix) else items, item, depth + 1)
                if isinstance(item, (dict, list))
                else item
                for i, item in enumerate(seq)
            ]
        return data


_ObjectView: typing.TypeAlias = "tuple[dict[str, Any], set[str], Any]"
