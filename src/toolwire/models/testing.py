"""Offline models for tests: `ScriptedModel`, `FunctionModel` and `TestModel`.

They build on the same `ModelBase` as the provider adapters, make no network request, and record
every request they receive, as prepared for them (`model.requests`, each a `PreparedRequest`) so
tests can assert on what the loop sent.

Native tool specs are accepted and kept as given in `request.native_tools`; built with
`provider="anthropic"` (say), a model stands in for that provider: its profile
(`profiles.stand_in_profile`) checks the specs, forced tool choices and structured output (refusing
what the real adapter refuses), and its prices (tokens and per-use tool fees) cost the run. Scripts answer with provider-side tool uses through
`NativeReply` / `ServerCall` (`_testing_native.py`).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import math
import re
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, TypeAlias

from .._record import record
from ..errors import ModelResponseError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ServerToolResultBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..native import NativeTool
from ._prompt_values import prompt_arguments
from ._testing_native import (
    NativeReply,
    ServerCall,
    count_server_calls,
    example_calls,
    example_citations,
    server_parts,
)
from .base import (
    CallIds,
    Completion,
    FinishReason,
    ModelBase,
    ModelRequest,
    PreparedRequest,
    ToolCall,
    Usage,
)
from .profiles import stand_in_profile

__all__ = [
    "FunctionModel",
    "ModelRequest",
    "NativeReply",
    "PreparedRequest",
    "Reply",
    "ScriptedModel",
    "ServerCall",
    "TestModel",
    "example_arguments",
]

Reply: TypeAlias = (
    str
    | Completion
    | AssistantMessage
    | NativeReply
    | ToolCall
    | tuple[str, Any]
    | Sequence[ToolCall | tuple[str, Any]]
)
"""What a scripted or function model answers: text, tool calls (as `ToolCall`s or `(name, args)`
pairs, `args` a dict or JSON text), a turn in which the provider ran its own tools
(`NativeReply`), a whole `AssistantMessage`, or a `Completion`."""


_SEQUENCES = (list, Sequence)


class _TokenCounter:
    """Counts a prompt's words, re-counting only what was appended since the last request.

    Histories grow by appending, so a run of N rounds costs O(N) in all, not O(N^2).
    """

    def __init__(self) -> None:
        self._length = 0
        self._last: Message | None = None
        self._total = 0

    def count(self, messages: Sequence[Message]) -> int:
        n = self._length
        if n and len(messages) >= n and messages[n - 1] is self._last:
            total, new = self._total, messages[n:]
        else:
            total, new = 0, messages
        for message in new:  # a loop, not a generator: this runs on every request
            total += len(message.text.split())
        self._length, self._total = len(messages), total
        self._last = messages[-1] if messages else None
        return max(total, 1)


class _OfflineModel(ModelBase):
    """Shared plumbing: request recording and reply normalisation; streaming comes from the base
    (text in word-sized pieces, arguments in 8-character pieces, then the whole)."""

    api = "test"
    guarded = False  # makes no request, so the request guard never stops it

    def __init__(self, model_name: str, provider: str = "test") -> None:
        # `request.output` is there for the script or function to read, where the stood-in
        # provider has structured output of its own. A `model()` prefix names its provider
        # ("openai-responses" is "openai"), whose prices cost the run.
        profile = stand_in_profile(provider)
        super().__init__(model_name, provider=profile.provider)
        self.profile = profile
        self.requests: list[PreparedRequest] = []
        # Ids handed out so far (ints rather than `itertools.count`s: one object fewer each, and
        # a model is often built per run).
        self._call_count = 0
        self._server_call_count = 0
        self._tokens = _TokenCounter()

    def resolve_native_tools(self, request: ModelRequest) -> ModelRequest:
        """Keep the native specs as given, for the script to read; a stand-in for a provider
        first checks them (and a forced tool choice) through its profile, as that provider's
        adapter does.

        Raises:
            UnsupportedError: a spec or forced choice the stood-in provider refuses, or a
                provider whose web tools toolwire itself would run over the network (Ollama).
        """
        if self._provider != "test":  # the offline model itself keeps any spec as given
            super().resolve_native_tools(request)
        return request

    async def _reply(self, request: PreparedRequest) -> Reply:
        raise NotImplementedError

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Answer from the script or function, recording the request."""
        self.requests.append(request)
        return self._completion(await self._reply(request), request)

    def _completion(self, reply: Reply, request: PreparedRequest) -> Completion:
        if isinstance(reply, Completion):
            return reply
        if isinstance(reply, AssistantMessage):
            message = _with_unique_ids(reply)
        elif isinstance(reply, NativeReply):
            message = AssistantMessage(parts=self._native_parts(reply), provider=self._provider)
        else:
            message = AssistantMessage(self._parts(reply), self._provider)
        message.model = message.model or self._model_name
        finish: FinishReason = "stop"
        for part in message.parts:
            if isinstance(part, ToolCallBlock):
                finish = "tool_calls"
                break
        # Positional, as the fields are ordered (a class called with keywords packs them into a
        # dict and unpacks it again, on every request): input, output, cache read and write,
        # reasoning tokens, requests, server tool uses.
        usage = Usage(
            self._tokens.count(request.messages),
            max(len(message.text.split()), 1),
            0,
            0,
            0,
            1,
            count_server_calls(message),
        )
        return Completion(message, usage, finish, None, self._model_name)

    def _native_parts(self, reply: NativeReply) -> list[AssistantPart]:
        self._server_call_count += 1
        parts = server_parts(reply.server_calls, self._server_call_count)
        # Ids stay unique across the model's turns.
        self._server_call_count += max(len(reply.server_calls) - 1, 0)
        if reply.text or reply.citations:
            parts.append(TextBlock(reply.text, list(reply.citations)))
        if reply.tool_calls:
            parts.extend(self._parts(list(reply.tool_calls)))
        return parts

    def _parts(self, reply: Reply) -> list[AssistantPart]:
        if isinstance(reply, str):
            return [TextBlock(reply)]
        ids = CallIds()
        if isinstance(reply, ToolCall) or (
            isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[0], str)
        ):
            # The casts' types as text: written out, they would be built on every reply.
            return [self._call_block(typing.cast("ToolCall | tuple[str, Any]", reply), ids, 0)]
        if isinstance(reply, _SEQUENCES):  # a list is found before the ABC check
            items = typing.cast("Sequence[ToolCall | tuple[str, Any]]", reply)
            parts: list[AssistantPart] = []
            for i, item in enumerate(items):  # a loop: a comprehension builds a function each time
                parts.append(self._call_block(item, ids, i))
            return parts
        raise TypeError(f"a test model cannot answer with {type(reply).__name__}")

    def _call_block(self, item: ToolCall | tuple[str, Any], ids: CallIds, i: int) -> ToolCallBlock:
        if isinstance(item, ToolCall):
            # Scripted ids are kept; an empty or repeated one is made unique, as adapters do.
            call_id = ids.take(item.id, self.model_name, i)
            return ToolCallBlock(id=call_id, name=item.name, arguments=item.arguments)
        name, args = item
        arguments = args if isinstance(args, str) else json.dumps(args)
        self._call_count += 1
        call_id = ids.take(f"call_{self._call_count}", None, i)
        return ToolCallBlock(call_id, name, arguments)


def _with_unique_ids(message: AssistantMessage) -> AssistantMessage:
    """A copy of a scripted turn (the script's own object is never changed), its call ids made
    unique the way adapters make them."""
    ids = CallIds()
    parts: list[AssistantPart] = []
    for position, part in enumerate(message.parts):
        if isinstance(part, ToolCallBlock):
            part = dataclasses.replace(part, id=ids.take(part.id, message.id, position))
        parts.append(part)
    return dataclasses.replace(message, parts=parts)


class ScriptedModel(_OfflineModel):
    """Answers with queued replies, in order.

    ```python
    model = ScriptedModel([("get_weather", {"city": "Recife"}), "Sunny, 31 degrees."])
    ```

    `provider="anthropic"` (with a real `model_name`) makes it stand in for that provider: native
    specs, forced choices and structured output follow its profile, and its prices cost the run.
    Raises `ModelResponseError` when asked more times than it has replies.
    """

    def __init__(
        self, replies: Sequence[Reply] = (), *, model_name: str = "scripted", provider: str = "test"
    ) -> None:
        super().__init__(model_name, provider)
        self._queue: list[Reply] = list(replies)

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def _reply(self, request: PreparedRequest) -> Reply:
        if not self._queue:
            raise ModelResponseError(
                f"ScriptedModel has no reply left for request {len(self.requests)}"
            )
        return self._queue.pop(0)


ReplyFunction: TypeAlias = Callable[[list[Message], PreparedRequest], Reply | Awaitable[Reply]]


class FunctionModel(_OfflineModel):
    """Answers with whatever `fn(messages, request)` returns (sync or async).

    `request` holds the tools, tool choice and settings of the call.
    """

    def __init__(
        self, fn: ReplyFunction, *, model_name: str = "function", provider: str = "test"
    ) -> None:
        super().__init__(model_name, provider)
        self._fn = fn

    async def _reply(self, request: PreparedRequest) -> Reply:
        reply = self._fn(request.messages, request)
        if inspect.isawaitable(reply):
            return await reply
        return reply

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Answer with the function's reply, recording the request."""
        # `_reply` inlined: one coroutine fewer alive per request while the function awaits
        # (with thousands of runs in flight, each is one more object for the garbage collector).
        self.requests.append(request)
        reply = self._fn(request.messages, request)
        if inspect.isawaitable(reply):
            reply = await reply
        return self._completion(reply, request)


class TestModel(_OfflineModel):
    """Calls every tool once, then sums up the results.

    Arguments come from the prompt where it gives them, by the rule the CLI's `--model test`
    follows too: an arithmetic expression to `expression`, a time zone to `timezone`/`tz`, a CPF
    or CNPJ to `cpf`/`cnpj`, the prompt to a required free-text parameter (`text`, `query`...),
    the prompt's numbers in order to the required numeric parameters; the rest is made to
    satisfy the schema (`"example"`, `1`...).

    Native tools given (`web_search()`, `web_fetch()`, `code_execution()`) are reported run once
    by the provider in the turn answering the prompt (`ServerCall` with example arguments and
    results, counted in `usage.server_tool_requests`); the answer cites the pages found.
    `computer_use()` raises `UnsupportedError`: script it with `ScriptedModel`.

    Args:
        call_tools: `"all"`, or the names of the tools to call.
        final_text: The answer after the tool results; by default a JSON summary of them
            (`{"tool_name": "result text", ...}`).
        provider: `"test"`, or a provider to stand in for (see `ScriptedModel`).
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        *,
        call_tools: str | Sequence[str] = "all",
        final_text: str | None = None,
        model_name: str = "test",
        provider: str = "test",
    ) -> None:
        super().__init__(model_name, provider)
        self.call_tools = call_tools
        self.final_text = final_text

    async def _reply(self, request: PreparedRequest) -> Reply:
        server = self._server_calls(request)
        reply = self._plain_reply(request, server)
        if not server and not _searched(request.messages):
            return reply
        if isinstance(reply, str):
            current = server_parts(server, 0)
            cited = [] if request.output else example_citations(request.messages, current, reply)
            return NativeReply(reply, server, cited)
        return NativeReply(server_calls=server, tool_calls=typing.cast(Any, reply))

    def _server_calls(self, request: PreparedRequest) -> list[ServerCall]:
        specs = [t for t in request.native_tools if isinstance(t, NativeTool)]
        choice = request.tool_choice
        if not specs or choice == "none" or not _first_turn(request.messages):
            return []
        if any(t.name == choice for t in request.tools):
            return []  # a forced function: the model calls it, nothing else
        forced = [s for s in specs if s.kind == choice]
        return example_calls(forced or specs, request.messages)

    def _plain_reply(self, request: PreparedRequest, server: list[ServerCall]) -> Reply:
        answered = _latest_results(request.messages)
        choice = request.tool_choice
        output = request.output
        if output is not None and (answered is not None or not request.tools or choice == "none"):
            # A structured answer asked natively: data that satisfies its schema.
            return json.dumps(example_arguments(output.schema))
        natives = [getattr(t, "kind", None) for t in request.native_tools]
        forced_native = isinstance(choice, str) and choice in natives
        if answered is None and request.tools and choice != "none" and not forced_native:
            names = [self.call_tools] if isinstance(self.call_tools, str) else self.call_tools
            chosen = [t for t in request.tools if self.call_tools == "all" or t.name in names]
            if isinstance(choice, str) and choice not in ("auto", "required"):
                # A forced tool choice names the one tool the model must call.
                chosen = [t for t in request.tools if t.name == choice]
            if chosen:
                prompt = _prompt(request.messages)
                return [(t.name, _arguments(t.parameters, prompt)) for t in chosen]
        if self.final_text is not None:
            return self.final_text
        if answered:
            return json.dumps({r.name: r.text for r in answered}, ensure_ascii=False)
        if server:
            return json.dumps({c.name: c.result for c in server}, ensure_ascii=False)
        return "success (no tool calls)"


def _prompt(messages: Sequence[Message]) -> str:
    return next((m.text for m in reversed(messages) if isinstance(m, UserMessage)), "")


def _arguments(schema: Mapping[str, Any], prompt: str) -> dict[str, Any]:
    """Values the prompt gives (`_prompt_values`, the rule `--model test` follows too), the
    rest made from the schema."""
    given, _ = prompt_arguments(schema, prompt)
    return {**example_arguments(schema), **given}


def _first_turn(messages: Sequence[Message]) -> bool:
    """No assistant turn yet since the last user turn."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return True
        if isinstance(message, AssistantMessage):
            return False
    return True


def _searched(messages: Sequence[Message]) -> bool:
    """A provider-side tool ran since the last user turn (its pages are cited in the answer)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return False
        if isinstance(message, AssistantMessage) and any(
            isinstance(p, ServerToolResultBlock) for p in message.parts
        ):
            return True
    return False


def _latest_results(messages: Sequence[Message]) -> list[ToolResultMessage] | None:
    """The tool results after the last assistant turn that called tools, if any were called."""
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if isinstance(message, ToolResultMessage):
            results.append(message)
        elif isinstance(message, AssistantMessage):
            return list(reversed(results)) if message.tool_calls else None
        elif isinstance(message, UserMessage):
            return None
    return None


# --- schema-driven example arguments ----------------------------------------------------------

_FORMATS: dict[str, str] = {
    "date-time": "2026-01-01T12:00:00Z",
    "date": "2026-01-01",
    "time": "12:00:00",
    "email": "person@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "duration": "P1D",
}


_SHALLOW = 6
"""Below this depth, arrays without `minItems` get one item; deeper, none (recursive schemas end)."""


@record
class _Gen:
    defs: dict[str, Any] = field(default_factory=dict[str, Any])

    def value(self, schema: Any, depth: int = 0, variant: int = 0) -> Any:
        if not isinstance(schema, Mapping) or depth > 12:
            return None
        node: Mapping[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self.defs.get(ref.rsplit("/", 1)[-1])
            merged = {**(target or {}), **{k: v for k, v in node.items() if k != "$ref"}}
            return self.value(merged, depth + 1, variant)
        if "const" in node:
            return node["const"]
        # `x: int = None` has a null default its own type refuses: make a real value instead.
        if "default" in node and not variant and (node["default"] is not None or _nullable(node)):
            return node["default"]
        enum = node.get("enum")
        if isinstance(enum, list) and enum:
            values = [e for e in typing.cast(list[Any], enum) if e is not None] or [None]
            return values[variant % len(values)]
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and branches:
                options = typing.cast(list[Any], branches)
                usable: list[Any] = [b for b in options if not _is_null(b)]
                return self.value((usable or options)[0], depth + 1, variant)
        all_of = node.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
            for part in all_of:  # pyright: ignore[reportUnknownVariableType]
                if isinstance(part, Mapping):
                    merged.update(part)  # pyright: ignore[reportUnknownArgumentType]
            return self.value(merged, depth + 1, variant)
        kind: Any = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in typing.cast(list[Any], kind) if k != "null"]
            kind = kinds[0] if kinds else "null"
        if kind is None and "properties" in node:
            kind = "object"
        if kind is None and ("items" in node or "prefixItems" in node):
            kind = "array"
        return self._typed(str(kind), node, depth, variant)

    def _typed(self, kind: str, node: Mapping[str, Any], depth: int, variant: int) -> Any:
        if kind == "object":
            return self._object(node, depth, variant)
        if kind == "array":
            return self._array(node, depth)
        if kind == "string":
            return _string(node, variant)
        if kind in ("integer", "number"):
            return _number(node, integer=kind == "integer", variant=variant)
        if kind == "boolean":
            return variant % 2 == 0
        if kind == "null":
            return None
        return "example" if not variant else f"example{variant}"

    def _object(self, node: Mapping[str, Any], depth: int, variant: int) -> dict[str, Any]:
        props: Mapping[str, Any] = node.get("properties") or {}
        required = node.get("required") or list(props)
        extra = node.get("additionalProperties")
        # A required name the properties do not describe follows `additionalProperties`.
        other: Any = typing.cast(Mapping[str, Any], extra) if isinstance(extra, Mapping) else {}
        out = {
            k: self.value(props.get(k, other), depth + 1, variant)
            for k in required
            if isinstance(k, str) and (k in props or extra is not False)
        }
        wanted = node.get("minProperties")
        if isinstance(wanted, int) and len(out) < wanted:
            spare = [k for k in props if k not in out]
            for key in spare[: wanted - len(out)]:
                out[key] = self.value(props[key], depth + 1, variant)
            schema: Any = {}
            if isinstance(extra, Mapping):
                schema = typing.cast(Mapping[str, Any], extra)
            n = 1
            while len(out) < wanted and extra is not False:
                out.setdefault(f"key{n}", self.value(schema, depth + 1, variant))
                n += 1
        return out

    def _array(self, node: Mapping[str, Any], depth: int) -> list[Any]:
        prefix: Any = node.get("prefixItems")
        items: Any = node.get("items", {})
        if isinstance(items, list):  # draft-04 tuples
            prefix, items = typing.cast(list[Any], items), node.get("additionalItems", {})
        head = typing.cast(list[Any], prefix) if isinstance(prefix, list) else []
        low = node.get("minItems")
        count = int(low) if isinstance(low, int | float) else (1 if depth < _SHALLOW else 0)
        count = max(count, len(head))
        high = node.get("maxItems")
        if isinstance(high, int | float):
            count = min(count, int(high))
        unique = node.get("uniqueItems") is True
        out: list[Any] = []
        for i in range(count):
            schema = head[i] if i < len(head) else items
            value = self.value(schema, depth + 1)
            if unique:
                # Vary the value until it differs from the ones before (bounded attempts).
                for v in range(1, 16):
                    if value not in out:
                        break
                    value = self.value(schema, depth + 1, variant=i + v)
            out.append(value)
        return out


def _nullable(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return (
        kind == "null"
        or (isinstance(kind, list) and "null" in kind)
        or node.get("nullable") is True
    )


def _is_null(branch: Any) -> bool:
    return (
        isinstance(branch, Mapping) and typing.cast(Mapping[str, Any], branch).get("type") == "null"
    )


def _string(node: Mapping[str, Any], variant: int) -> str:
    low = node.get("minLength")
    high = node.get("maxLength")
    min_length = max(int(low), 0) if isinstance(low, int | float) else 0
    max_length = int(high) if isinstance(high, int | float) else None
    pattern = node.get("pattern")
    fmt = node.get("format")
    candidates: list[str] = []
    if isinstance(fmt, str) and fmt in _FORMATS:
        candidates.append(_FORMATS[fmt])
    if isinstance(pattern, str):
        candidates.extend(_pattern_examples(pattern, min_length))
    length = max(min_length, 1)
    text = ("example" * (length // 7 + 1))[: max(length, 7)]
    if variant:
        text = f"{text}{variant}"
    candidates.append(text[:max_length] if max_length is not None else text)
    for candidate in candidates:
        if len(candidate) < min_length or (max_length is not None and len(candidate) > max_length):
            continue
        if isinstance(pattern, str) and not _matches(pattern, candidate):
            continue
        return candidate
    return candidates[0]


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True  # not a Python regex (JSON Schema uses ECMA-262's): nothing to check against


def _pattern_examples(pattern: str, min_length: int) -> list[str]:
    """Strings a regex matches, built from its parsed form (empty when it cannot be read)."""
    if _REGEX_PARSER is None:
        return []
    try:
        parsed = _REGEX_PARSER.parse(pattern)
    except Exception:  # re.error, or a parser that changed between Python versions
        return []
    out: list[str] = []
    for repeat in (1, 0, 2, max(min_length, 3)):
        try:
            text = _RegexExample(repeat).emit(parsed)
        except Exception:
            continue
        if text not in out:
            out.append(text)
    return out


def _load_regex_parser() -> Any:
    try:
        return importlib.import_module("re._parser")  # CPython's own, private to `re`
    except ImportError:
        return None


_REGEX_PARSER: Any = _load_regex_parser()


class _RegexExample:
    """Writes one string a parsed regex matches; `repeat` is the preferred count of repetitions."""

    def __init__(self, repeat: int) -> None:
        self.repeat = repeat
        self.groups: dict[int, str] = {}

    def emit(self, items: Any) -> str:
        return "".join(self.one(getattr(op, "name", str(op)), av) for op, av in items)

    def one(self, op: str, av: Any) -> str:
        if op == "LITERAL":
            return chr(av)
        if op == "NOT_LITERAL":
            return "a" if chr(av) != "a" else "b"
        if op == "ANY":
            return "a"
        if op == "IN":
            return _char_in(av)
        if op == "CATEGORY":
            return _char_in([(op, av)])
        if op == "BRANCH":
            return self.emit(av[1][0])
        if op in ("SUBPATTERN", "ATOMIC_GROUP"):
            inner = av[-1] if op == "SUBPATTERN" else av
            text = self.emit(inner)
            if op == "SUBPATTERN" and av[0] is not None:
                self.groups[av[0]] = text
            return text
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, inner = av
            count = max(low, self.repeat)
            if high < 100_000:  # MAXREPEAT means unbounded
                count = min(count, high)
            return "".join(self.emit(inner) for _ in range(count))
        if op == "GROUPREF":
            return self.groups.get(av, "")
        if op == "GROUPREF_EXISTS":
            group, yes, no = av
            return self.emit(yes) if group in self.groups else (self.emit(no) if no else "")
        return ""  # anchors and lookarounds take no characters


_CHAR_POOL = "a0bA_xZ9-. zé"


def _char_in(items: Any) -> str:
    entries = [(getattr(op, "name", str(op)), av) for op, av in items]
    negate = any(op == "NEGATE" for op, _ in entries)

    def member(ch: str) -> bool:
        for op, av in entries:
            if op == "LITERAL" and ch == chr(av):
                return True
            if op == "RANGE" and av[0] <= ord(ch) <= av[1]:
                return True
            if op == "CATEGORY":
                name = getattr(av, "name", str(av))
                word = ch.isalnum() or ch == "_"
                tests = {
                    "CATEGORY_DIGIT": ch.isdigit(),
                    "CATEGORY_NOT_DIGIT": not ch.isdigit(),
                    "CATEGORY_SPACE": ch.isspace(),
                    "CATEGORY_NOT_SPACE": not ch.isspace(),
                    "CATEGORY_WORD": word,
                    "CATEGORY_NOT_WORD": not word,
                }
                if tests.get(name, False):
                    return True
        return False

    if not negate:
        for op, av in entries:
            if op == "LITERAL":
                return chr(av)
            if op == "RANGE":
                return chr(av[0])
    return next((ch for ch in _CHAR_POOL if member(ch) != negate), "a")


def _bound(node: Mapping[str, Any], plain: str, exclusive: str) -> tuple[float | None, bool]:
    value = node.get(plain)
    ex = node.get(exclusive)
    if isinstance(ex, bool):  # draft-04 spelling: a flag on `minimum` / `maximum`
        return (float(value), ex) if isinstance(value, int | float) else (None, False)
    candidates: list[tuple[float, bool]] = []
    if isinstance(value, int | float) and not isinstance(value, bool):
        candidates.append((float(value), False))
    if isinstance(ex, int | float):
        candidates.append((float(ex), True))
    if not candidates:
        return None, False
    return max(candidates) if plain == "minimum" else min(candidates, key=lambda c: (c[0], -c[1]))


def _number(node: Mapping[str, Any], *, integer: bool, variant: int = 0) -> int | float:
    lo, lo_ex = _bound(node, "minimum", "exclusiveMinimum")
    hi, hi_ex = _bound(node, "maximum", "exclusiveMaximum")
    step_value = node.get("multipleOf")
    step = float(step_value) if isinstance(step_value, int | float) and step_value > 0 else None

    def fits(v: float) -> bool:
        if lo is not None and (v < lo or (lo_ex and v == lo)):
            return False
        if hi is not None and (v > hi or (hi_ex and v == hi)):
            return False
        if step is not None:
            quotient = v / step
            if abs(quotient - round(quotient)) > 1e-9:
                return False
        return not integer or float(v).is_integer()

    if lo is not None and hi is not None:
        value = (lo + hi) / 2
    elif lo is not None:
        value = lo + 1 if lo_ex else lo
    elif hi is not None:
        value = min(1.0, hi - 1 if hi_ex else hi)
    else:
        value = 1.0
    value += variant
    candidates = [value, math.ceil(value), math.floor(value)]
    if step is not None:
        candidates[:0] = [round(math.ceil(value / step) * step, 12)]
        for bound in (lo, hi):
            if bound is not None:
                k = bound / step
                candidates += [round(n * step, 12) for n in (math.ceil(k), math.floor(k))]
                candidates += [round(n * step, 12) for n in (math.ceil(k) + 1, math.floor(k) - 1)]
    for bound in (lo, hi):
        if bound is not None:
            candidates += [bound, math.floor(bound) + 1, math.ceil(bound) - 1]
            candidates += [bound + 0.5 * abs(bound or 1), bound - 0.5 * abs(bound or 1)]
    if lo is not None and hi is not None:
        candidates += [lo + (hi - lo) / 4, lo + (hi - lo) * 3 / 4]
    candidates += [0, 1]
    chosen = next((c for c in candidates if fits(c)), value)
    return math.ceil(chosen) if integer else chosen


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a tool's JSON Schema (required properties, formats, enums, bounds)."""
    defs: dict[str, Any] = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    value = _Gen(defs).value(schema)
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]
