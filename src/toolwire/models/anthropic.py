"""The Anthropic Messages API adapter (`anthropic:<model>`), built on the official `anthropic` SDK.

The SDK carries the requests (credentials, base URL, headers, timeouts, HTTP errors); toolwire
reads the response bodies itself so that provider blocks are kept exactly as Anthropic sent them.

Mapping:
- System messages become `system` (joined by blank lines); user turns carry text, images and
  documents (PDF, plain text); tool results are `tool_result` blocks (text and images; other
  parts, and images of a type Anthropic cannot read, become a bracketed text description) with
  `is_error` when the call failed. Blank text blocks are left out (Anthropic refuses them), an
  error result without content says the tool failed, and call ids Anthropic would refuse (other
  providers') are rewritten the same way in the call and its result.
- Thinking blocks keep their `signature`, `redacted_thinking` its `data`, server tool blocks
  (`server_tool_use`, `web_search_tool_result`, ...) their whole raw block; all of it is sent back
  verbatim in the next request. Text citations become `Citation`s spanning their text block.
- Computer use: a request with a `computer_*` tool goes through the SDK's beta client with the
  tool version's beta header (`computer_20250124` -> `computer-use-2025-01-24`; more betas in
  `settings.extra["betas"]`); the computer tool's `tool_use` blocks become computer-use requests
  (`toolwire.computer`) and go back verbatim; the caller's answer is an ordinary `tool_result`.
- `stop_reason: "pause_turn"` is continued automatically (at most `max_continuations` times) by
  sending the paused content back as the last assistant turn; the `Completion` holds everything
  the model produced, with usage summed over the requests.
- Tool definitions come from `tool.definition("anthropic")`; on models with strict tool use
  (`profile.strict_for`: Claude Opus/Sonnet 4.5 and later, Haiku 4.5) from
  `tool.definition("anthropic-strict")`, a strict tool sent with `strict: true` and its schema as
  strict mode takes it (the definition's `changes` say what that required), unless the request's
  strict tools together pass Anthropic's caps (`_dialect_anthropic.STRICT_LIMITS`). Raw tool definitions (server tools
  such as `{"type": "web_search_20250305", "name": "web_search"}`) go in `settings.extra["tools"]`
  and are appended to them. Other keys of `settings.extra` (and the model's `provider_options`,
  e.g. `thinking`) go straight into the request body.
- Prompt caching: `settings.cache` places `cache_control` breakpoints on the tools, the system
  prompt and the last message (see `toolwire.models._cache` for the policy).

History from elsewhere (the documented rule; "elsewhere" is another provider, or another API
of Anthropic's, as `ModelBase.owns` decides): reasoning blocks are omitted (Anthropic
cannot verify another provider's reasoning, and it is not the conversation's content), server tool
call and result blocks are omitted, citations are dropped while their text stays, and tool calls
and results are kept without any provider state. Anthropic's own citations are not sent back
either: the text is enough for the model, and the recorded conversations do the same.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .._dialect_anthropic import strict_over_limits
from .._reach import cannot_reach, request_url
from ..computer import anthropic_action, computer_block, is_computer_call, lift_calls
from ..errors import (
    ModelConnectionError,
    ModelResponseError,
    UnsupportedError,
)
from ..messages import (
    AssistantMessage,
    FilePart,
    Message,
    ReasoningBlock,
    ServerToolCallBlock,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from ..results import (
    AudioPart,
    ContentPart,
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
)
from ..tools import DefinitionDialect, ToolDefinition
from ._anthropic_stream import PROVIDER, StreamAssembler, iter_sse, parse_message
from ._cache import CachePolicy, anthropic_breakpoints
from ._client import LoopBoundClient, OwnsClient, http_error
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    ModelBase,
    ModelRequest,
    OutputSpec,
    PreparedRequest,
    StreamEvent,
    ToolChoice,
)
from .profiles import ANTHROPIC

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["DEFAULT_MAX_TOKENS", "MAX_CONTINUATIONS", "AnthropicModel"]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` when neither the settings nor the model give one (Anthropic requires it)."""

MAX_CONTINUATIONS = 5
"""How many times a paused turn (`stop_reason: "pause_turn"`) is continued by default."""

_FORCED = ("any", "tool")


class AnthropicModel(OwnsClient, ModelBase):
    """A Claude model over the Anthropic Messages API.

    Args:
        model_name: The model, e.g. `"claude-sonnet-4-5"`.
        api_key: The API key; `ANTHROPIC_API_KEY` when not given.
        base_url: Another endpoint (a proxy, a gateway, a local replay server).
        timeout: Seconds per request; `settings.timeout` overrides it per request.
        max_retries: The SDK's own retries (0: the caller decides, e.g. with `with_retry`).
        client: A ready `anthropic.AsyncAnthropic` (the arguments above are then ignored).
        max_tokens: The default `max_tokens`.
        max_continuations: How many times a paused turn is continued.
        **provider_options: Request body defaults, e.g. `thinking={"type": "enabled",
            "budget_tokens": 2048}`; `settings.extra` overrides them.
    """

    api = "messages"
    dialect = "anthropic"
    profile = ANTHROPIC

    def __init__(
        self,
        model_name: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 0,
        client: AsyncAnthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_continuations: int = MAX_CONTINUATIONS,
        **provider_options: Any,
    ) -> None:
        if client is None:
            try:
                import anthropic
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError(
                    "The Anthropic adapter needs the `anthropic` package: "
                    "pip install 'toolwire[anthropic]'"
                ) from exc
            key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
            options: dict[str, Any] = {
                "api_key": key,
                "base_url": base_url,
                "timeout": timeout,
                "max_retries": max_retries,
            }
            self._clients = LoopBoundClient(
                anthropic.AsyncAnthropic(**options), lambda: anthropic.AsyncAnthropic(**options)
            )
        else:
            self._clients = LoopBoundClient(client, None)
        super().__init__(model_name, provider=PROVIDER)
        self.max_retries = max_retries if client is None else client.max_retries
        self.max_tokens = max_tokens
        self.max_continuations = max_continuations
        self.provider_options: dict[str, Any] = provider_options

    @property
    def client(self) -> AsyncAnthropic:
        """The SDK client in use."""
        return self._clients.current

    def _client(self) -> AsyncAnthropic:
        return self._clients.get()

    def definition_dialect(self) -> DefinitionDialect:
        """`anthropic-strict` on models with strict tool use (the profile's `strict_models`):
        a strict tool goes out with `strict: true`, its schema as strict mode takes it."""
        return "anthropic-strict" if self.profile.strict_for(self._model_name) else "anthropic"

    def body_options(self, request: ModelRequest) -> Mapping[str, Any]:
        """`settings.extra` over this model's `provider_options` (as the body merges them)."""
        return {**self.provider_options, **request.settings.extra}

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Ask the model; a paused turn is continued until it ends (or the limit is reached).

        `Completion.raw` is the response body, or the list of bodies when a turn was continued.

        Raises:
            RetryableModelError: HTTP 429 or 5xx.
            ModelHTTPError: another HTTP error.
            ModelConnectionError: no answer (connection refused, timeout).
            ModelResponseError: a response toolwire cannot use.
            UnsupportedError: a request Anthropic cannot take (e.g. forced tool use with thinking).
        """
        wire = self.wire_request(request)
        ids = CallIds(self.profile.call_id_prefix)
        total = await self._send(wire, ids)
        raws: list[Any] = [total.raw]
        for _ in range(self.max_continuations):
            if total.raw_finish_reason != "pause_turn":
                break
            part = await self._send(wire.continued(total.message), ids)
            raws.append(part.raw)
            total = _merge(total, part)
        total.raw = raws[0] if len(raws) == 1 else raws
        _lift_computer_calls(total.message, wire.computer)
        return total

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas, then `CompletionDone`.

        Tool-call deltas carry the content block's index, shifted past the earlier blocks when a
        paused turn is continued, so parallel calls never mix.
        """
        first = wire = self.wire_request(request)
        ids = CallIds(self.profile.call_id_prefix)
        total: Completion | None = None
        raws: list[Any] = []
        offset = 0
        for attempt in range(self.max_continuations + 1):
            assembler = StreamAssembler(ids, offset)
            # Closed as soon as the consumer stops, so the connection does not wait for the GC.
            async with aclosing(self._stream(wire, assembler)) as events:
                async for event in events:
                    yield event
            part = assembler.completion()
            raws.append(part.raw)
            total = part if total is None else _merge(total, part)
            if part.raw_finish_reason != "pause_turn" or attempt == self.max_continuations:
                break
            offset += assembler.block_count
            # Everything produced so far goes back as one assistant turn after the original
            # messages (as `complete` does), never appended to the previous continuation.
            wire = first.continued(total.message)
        assert total is not None
        total.raw = raws[0] if len(raws) == 1 else raws
        _lift_computer_calls(total.message, first.computer)
        yield CompletionDone(total)

    # --- requests ---------------------------------------------------------------------------

    def compile_output(self, output: OutputSpec) -> ToolDefinition:
        """The answer's schema for `output_config.format`: closed objects, every property listed
        (as OpenAI's strict mode writes it) where the schema allows, else the Anthropic dialect."""
        try:
            return output.definition("openai-strict")
        except UnsupportedError:
            return output.definition("anthropic")

    def wire_request(self, request: PreparedRequest) -> _Request:
        """The Messages API request: the model, messages, body, timeout and beta headers."""
        options = request.settings
        system, messages = _wire_messages(request.messages, self.owns)
        body: dict[str, Any] = {"max_tokens": options.max_tokens or self.max_tokens}
        if system:
            body["system"] = system
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.top_p is not None:
            body["top_p"] = options.top_p
        if options.stop:
            body["stop_sequences"] = list(options.stop)
        if options.seed is not None:
            raise UnsupportedError("Anthropic's Messages API takes no seed; leave `seed` unset")
        body.update(self.provider_options)
        extra = dict(options.extra)
        definitions = _tool_definitions(request.definitions)
        raw_tools = extra.pop("tools", None)
        if raw_tools:
            definitions.extend(cast(Sequence[dict[str, Any]], raw_tools))
        definitions.extend(request.native_tools)
        body.update(extra)
        if request.output_definition is not None:
            config = dict(cast(Mapping[str, Any], body.get("output_config") or {}))
            schema = request.output_definition.parameters
            config["format"] = {"type": "json_schema", "schema": schema}
            body["output_config"] = config
        if definitions:
            body["tools"] = definitions
            if "tool_choice" not in extra:
                choice = _tool_choice(request.tool_choice, options.parallel_tool_calls)
                if choice is not None:
                    body["tool_choice"] = choice
        elif "tools" not in body and (used := _tools_in_history(messages)):
            # The Messages API refuses tool_use/tool_result blocks in a request that defines no
            # tools (a handoff to an agent without tools, a step whose toolset offers none):
            # the tools the history used are declared, and none may be called.
            body["tools"] = [_retired_tool(name) for name in used]
            body["tool_choice"] = {"type": "none"}
        _check_thinking(body)
        anthropic_breakpoints(body, messages, CachePolicy.coerce(options.cache), self._model_name)
        from anthropic import NOT_GIVEN

        timeout = NOT_GIVEN if options.timeout is None else options.timeout
        betas = _betas(body.pop("betas", None), definitions)
        computer = next(
            (
                str(t.get("name", "computer"))
                for t in definitions
                if _COMPUTER_TYPE.match(str(t.get("type", "")))
            ),
            None,
        )
        return _Request(self._model_name, messages, body, timeout, betas, computer)

    async def _send(self, request: _Request, ids: CallIds) -> Completion:
        try:
            client = self._client()
            if request.betas:
                # The SDK's beta namespace sends the `anthropic-beta` header (and `?beta=true`).
                response = await client.beta.messages.with_raw_response.create(
                    model=request.model,
                    max_tokens=request.max_tokens,
                    messages=cast(Any, request.messages),
                    stream=False,
                    betas=cast(Any, request.betas),
                    extra_body=request.extra_body,
                    timeout=request.timeout,
                )
            else:
                response = await client.messages.with_raw_response.create(
                    model=request.model,
                    max_tokens=request.max_tokens,
                    messages=cast(Any, request.messages),
                    stream=False,
                    extra_body=request.extra_body,
                    timeout=request.timeout,
                )
            payload: bytes = await response.read()
        except Exception as exc:
            raise self.map_error(exc) from exc
        try:
            data = json.loads(payload)
        except ValueError:
            raise ModelResponseError(
                f"Anthropic answered with a body that is not JSON: {payload!r:.200}"
            ) from None
        return parse_message(data, ids)

    async def _stream(
        self, request: _Request, assembler: StreamAssembler
    ) -> AsyncGenerator[StreamEvent]:
        client = self._client()
        create: Callable[..., Any] = (
            client.beta.messages.with_streaming_response.create
            if request.betas
            else client.messages.with_streaming_response.create
        )
        betas: dict[str, Any] = {"betas": request.betas} if request.betas else {}
        try:
            async with create(
                model=request.model,
                max_tokens=request.max_tokens,
                messages=cast(Any, request.messages),
                stream=True,
                extra_body=request.extra_body,
                timeout=request.timeout,
                **betas,
            ) as response:
                async for data in iter_sse(response.iter_bytes()):
                    event = assembler.feed(data)
                    if event is not None:
                        yield event
        except Exception as exc:
            raise self.map_error(exc, streaming=True) from exc

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for an `anthropic` SDK (or HTTP) failure; `error` itself for any
        other."""
        import httpx2
        from anthropic import APIConnectionError, APIStatusError, APITimeoutError

        if isinstance(error, APIStatusError):
            message = error.api_message or error.message
            headers = error.response.headers
            return http_error(
                error.status_code, message, provider=PROVIDER, body=error.body, headers=headers
            )
        if isinstance(error, APITimeoutError | httpx2.TimeoutException):
            return ModelConnectionError(
                f"Anthropic did not answer in time: {error}", provider=PROVIDER
            )
        if isinstance(error, APIConnectionError):
            return ModelConnectionError(
                cannot_reach(PROVIDER, request_url(error), error), provider=PROVIDER
            )
        if isinstance(error, httpx2.TransportError):
            # The status line came, then the connection broke: the answer is cut, not missing.
            what = "stream" if streaming else "answer"
            return ModelResponseError(f"The Anthropic {what} was cut: {error!r}")
        return error


@dataclass(slots=True)
class _Request:
    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    timeout: Any  # seconds, or the SDK's "not given"
    betas: list[str] = field(default_factory=list[str])
    computer: str | None = None  # the computer tool's name, when the request has one

    @property
    def max_tokens(self) -> int:
        return self.body["max_tokens"]

    @property
    def extra_body(self) -> dict[str, Any]:
        # The SDK's typed parameters change between releases (sampling parameters are not all
        # among them), so everything but the required three travels as `extra_body`.
        return {k: v for k, v in self.body.items() if k != "max_tokens"}

    def continued(self, paused: AssistantMessage) -> _Request:
        """The same request with the paused turn sent back as the last assistant turn."""
        content = _assistant_content(paused, same_provider=True)
        return _Request(
            self.model,
            [*self.messages, {"role": "assistant", "content": content}],
            self.body,
            self.timeout,
            self.betas,
            self.computer,
        )


_COMPUTER_TYPE = re.compile(r"^computer_(\d{4})(\d{2})(\d{2})$")


def _betas(given: object, tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The beta features a request needs: the caller's (`betas` in the settings) and each
    computer tool version's header (`computer_20250124` -> `computer-use-2025-01-24`)."""
    betas: list[str] = []
    if isinstance(given, str):
        betas.append(given)
    elif isinstance(given, Sequence):
        betas.extend(str(b) for b in cast(Sequence[object], given))
    for tool in tools:
        match = _COMPUTER_TYPE.match(str(tool.get("type", "")))
        if match is not None:
            beta = "computer-use-{}-{}-{}".format(*match.groups())
            if beta not in betas:
                betas.append(beta)
    return betas


def _lift_computer_calls(message: AssistantMessage, name: str | None) -> None:
    """The turn's calls of the computer tool, as computer-use requests for the caller."""
    if name is None:
        return

    def build(call: ToolCallBlock) -> ServerToolCallBlock:
        data = _input(call.arguments)
        raw: dict[str, Any] = {"type": "tool_use", "id": call.id, "name": call.name, "input": data}
        if call.provider_state and "caller" in call.provider_state:
            raw["caller"] = call.provider_state["caller"]
        return computer_block(call.id, "anthropic", data, [anthropic_action(data)], {"raw": raw})

    lift_calls(message, lambda call: call.name == name, build)


def _merge(first: Completion, then: Completion) -> Completion:
    message = AssistantMessage(
        parts=[*first.message.parts, *then.message.parts],
        provider=PROVIDER,
        model=then.message.model or first.message.model,
        id=then.message.id or first.message.id,
    )
    return Completion(
        message=message,
        usage=first.usage + then.usage,
        finish_reason=then.finish_reason,
        raw_finish_reason=then.raw_finish_reason,
        model=then.model or first.model,
    )


def _check_thinking(body: Mapping[str, Any]) -> None:
    """The profile's thinking rule, on the body's own tool choice (a raw one in `extra` too)."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and cast(Mapping[str, Any], choice).get("type") in _FORCED:
        ANTHROPIC.thinking.check_forced(body, ANTHROPIC.name)


# --- errors ---------------------------------------------------------------------------------------


# --- the conversation on the wire -----------------------------------------------------------------


def _tool_definition(definition: ToolDefinition, strict: bool = True) -> dict[str, Any]:
    """A tool as Anthropic's `tools` entry (`strict: true` when compiled for strict mode)."""
    entry: dict[str, Any] = {
        "name": definition.name,
        "description": definition.description,
        "input_schema": definition.parameters,
    }
    if strict and definition.strict:
        entry["strict"] = True
    if definition.defer_loading:
        entry["defer_loading"] = True  # loaded when the tool search tool finds it
    return entry


def _tool_definitions(definitions: Sequence[ToolDefinition]) -> list[dict[str, Any]]:
    """The `tools` entries; strict ones without `strict` when together they pass Anthropic's
    per-request caps (strict tools, optional and union parameters): the request then still
    goes, its arguments checked by toolwire alone."""
    schemas = [d.parameters for d in definitions if d.strict]
    strict = not schemas or strict_over_limits(schemas) is None
    return [_tool_definition(d, strict) for d in definitions]


def _tools_in_history(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The names of the tools the history's `tool_use` blocks called, in order, once each."""
    names: dict[str, None] = {}
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for block in cast(list[Any], content):
                if isinstance(block, dict):
                    block = cast(dict[str, Any], block)
                    if block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                        names[block["name"]] = None
    return list(names)


def _retired_tool(name: str) -> dict[str, Any]:
    """A definition for a tool the history called but this request does not offer."""
    return {
        "name": name,
        "description": "Called earlier in this conversation; not available now.",
        "input_schema": {"type": "object"},
    }


def _tool_choice(choice: ToolChoice, parallel: bool | None) -> dict[str, Any] | None:
    """toolwire's tool choice as Anthropic's; `None` when it is the API's default (auto)."""
    wire: dict[str, Any]
    if isinstance(choice, Mapping):
        wire = dict(choice)
    elif choice == "auto":
        wire = {"type": "auto"}
    elif choice == "none":
        wire = {"type": "none"}
    elif choice == "required":
        wire = {"type": "any"}
    else:
        wire = {"type": "tool", "name": choice}
    if parallel is False and wire.get("type") in ("auto", "any", "tool"):
        wire.setdefault("disable_parallel_tool_use", True)
    return None if wire == {"type": "auto"} else wire


def _wire_messages(
    messages: Sequence[Message], owns: Callable[[AssistantMessage], bool]
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the `messages` list; consecutive same-role turns are merged.

    `owns` tells the turns whose provider state may go back (`ModelBase.owns`).
    """
    system: list[str] = []
    wire: list[dict[str, Any]] = []
    dropped: set[str] = set()  # computer requests of other providers' turns, and their answers

    def push(role: str, content: list[dict[str, Any]]) -> None:
        if not content:
            return
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(content)
        else:
            wire.append({"role": role, "content": content})

    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.text)
        elif isinstance(message, UserMessage):
            push("user", _non_empty([_user_part(p) for p in message.content]))
        elif isinstance(message, AssistantMessage):
            own = owns(message)
            if not own:
                dropped.update(
                    p.id
                    for p in message.parts
                    if isinstance(p, ServerToolCallBlock) and is_computer_call(p)
                )
            push("assistant", _assistant_content(message, own))
        elif message.call_id not in dropped:
            push("user", [_tool_result(message)])
    # Anthropic refuses a blank system prompt; a system message in the middle of the history joins
    # the others, since the API has one system prompt.
    return "\n\n".join(s for s in system if s.strip()), wire


def _assistant_content(message: AssistantMessage, same_provider: bool) -> list[dict[str, Any]]:
    """An assistant turn's blocks; provider state is replayed only to the provider it came from."""
    out: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextBlock):
            if part.text.strip():  # Anthropic refuses empty and whitespace-only text blocks
                out.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallBlock):
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": _wire_id(part.id),
                "name": part.name,
                "input": _input(part.arguments),
            }
            if same_provider and part.provider_state and "caller" in part.provider_state:
                block["caller"] = part.provider_state["caller"]
            out.append(block)
        elif not same_provider or not part.provider_state:
            continue
        elif isinstance(part, ReasoningBlock):
            state = part.provider_state
            if part.redacted and "data" in state:
                out.append({"type": "redacted_thinking", "data": state["data"]})
            elif state.get("signature"):
                out.append(
                    {"type": "thinking", "thinking": part.text, "signature": state["signature"]}
                )
        else:
            raw = part.provider_state.get("raw")
            if isinstance(raw, Mapping):
                block = dict(cast(Mapping[str, Any], raw))
                # A direct caller is the API's default; the block is otherwise sent as it came.
                if block.get("caller") == {"type": "direct"}:
                    del block["caller"]
                out.append(block)
    return out


_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")


def _wire_id(call_id: str) -> str:
    """A call id Anthropic accepts (`^[a-zA-Z0-9_-]+$`), the same for a call and its result.

    Other providers write ids Anthropic refuses (Kimi's `functions.get_weather:0`); those are
    rewritten, with a hash of the original so that two ids never become one.
    """
    if call_id and not _UNSAFE_ID.search(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode()).hexdigest()[:8]
    return f"{_UNSAFE_ID.sub('_', call_id)}_{digest}"


def _input(arguments: str) -> dict[str, Any]:
    # A call whose arguments are not a JSON object (the model wrote broken JSON) goes back with
    # no input; its error result tells the model what was wrong.
    try:
        value: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _source(data: bytes | None, url: str | None, mime_type: str) -> dict[str, Any]:
    if url is not None:
        return {"type": "url", "url": url}
    assert data is not None
    return {"type": "base64", "media_type": mime_type, "data": base64.b64encode(data).decode()}


def _user_part(part: TextPart | ImagePart | AudioPart | FilePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image", "source": _source(part.data, part.url, part.mime_type)}
    if isinstance(part, AudioPart):
        raise UnsupportedError("Anthropic's Messages API takes no audio input")
    return _document(part)


def _document(part: FilePart) -> dict[str, Any]:
    mime = part.mime_type
    if mime.startswith("image/"):
        return {"type": "image", "source": _source(part.data, part.url, mime)}
    if mime == "application/pdf":
        block: dict[str, Any] = {"type": "document", "source": _source(part.data, part.url, mime)}
    elif mime.startswith("text/") and part.data is not None:
        text = part.data.decode("utf-8", errors="replace")
        block = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": text},
        }
    else:
        raise UnsupportedError(
            f"Anthropic takes PDF and plain-text documents (text by value), not {mime!r}"
            + (" by URL" if part.url else "")
        )
    if part.filename:
        block["title"] = part.filename
    return block


_EMPTY_ERROR = "The tool failed without a message."


def _non_empty(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Anthropic refuses text blocks that are empty or only whitespace.
    return [b for b in blocks if b.get("type") != "text" or str(b.get("text", "")).strip()]


def _tool_result(message: ToolResultMessage) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": _wire_id(message.call_id)}
    content = _non_empty([_result_part(p) for p in message.content])
    if not content and message.is_error:
        # Anthropic refuses an error result without content.
        content = [{"type": "text", "text": _EMPTY_ERROR}]
    if len(content) == 1 and content[0]["type"] == "text":
        block["content"] = content[0]["text"]
    elif content:
        block["content"] = content
    if message.is_error:
        block["is_error"] = True
    return block


_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The image types Anthropic reads; a tool's image of another type is described instead, since
one unreadable block would make every later request of the conversation fail."""


def _result_part(part: ContentPart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        if part.data is not None and part.mime_type not in _IMAGE_TYPES:
            return {"type": "text", "text": f"[image {part.mime_type}]"}
        return {"type": "image", "source": _source(part.data, part.url, part.mime_type)}
    if isinstance(part, ResourcePart):
        if part.text is not None:
            return {"type": "text", "text": part.text}
        mime = part.mime_type or "application/octet-stream"
        if mime in _IMAGE_TYPES or mime == "application/pdf":
            kind = "image" if mime in _IMAGE_TYPES else "document"
            return {"type": kind, "source": _source(part.blob, None, mime)}
        return {"type": "text", "text": f"[resource {part.uri} ({mime})]"}
    if isinstance(part, ResourceLinkPart):
        return {"type": "text", "text": f"[resource link {part.uri}]"}
    # Tool results cannot carry audio on Anthropic: the model is told what was there.
    return {"type": "text", "text": f"[audio {part.mime_type}]"}
