"""Gemini over the Gemini API (`google:<model>`, alias `gemini:`) and Vertex AI (`vertex:<model>`),
built on the official `google-genai` SDK.

The SDK carries the requests (credentials, URLs, API versions, HTTP errors) and reads the answers
into its typed responses; `_google_parse` turns those into toolwire's turn, the same way for a
whole answer and a stream.

Mapping:
- System messages become `system_instruction`; user turns carry text, images, audio and files
  (`inline_data` by value, `file_data` by URL); tool results are `functionResponse` parts
  (`{"output": ...}`, or `{"error": ...}` for a failed call; structured results as they are),
  all results of one turn in one user content.
- Tool definitions come from `tool.definition("gemini")` as `functionDeclarations`; raw tool
  entries (`request.native_tools`, `settings.extra["tools"]`, e.g. `{"google_search": {}}` or
  `{"code_execution": {}}`) are added beside them as given. When both kinds are sent to the Gemini
  API, `include_server_side_tool_invocations` is set (Gemini 3 needs it to mix them; Vertex
  refuses it).
- Computer use: with `computer_use` among the tools, calls of its predefined functions
  (`click_at`, `type_text_at`, ...) become computer-use requests (`toolwire.computer`) unless a
  function of that name is declared; the caller's answer goes back as that function's
  `functionResponse` with the screenshot as a part.
- `tool_choice`: `"auto"` (the default, not sent), `"none"` -> `NONE`, `"required"` -> `ANY`, a
  tool's name -> `ANY` with that name allowed; a mapping is the `function_calling_config` itself
  (e.g. `{"mode": "ANY", "allowed_function_names": ["a", "b"]}`).
- Settings: `max_tokens` -> `max_output_tokens`, `temperature`, `top_p`, `stop` ->
  `stop_sequences`, `seed`, `timeout`; `parallel_tool_calls=False` raises `UnsupportedError`
  (Gemini has no such switch). `settings.extra` and the model's `provider_options` are fields of
  the SDK's `GenerateContentConfig`, e.g. `thinking_config={"thinking_budget": 1024,
  "include_thoughts": True}` or `safety_settings=[...]`.

Replay (the documented rule; `ModelBase.owns` decides whose turn it is): for a turn this API of
this provider wrote, thought signatures go back on the part they came on, thought parts go back as
thoughts, and server-side parts (`executableCode`, `codeExecutionResult`, `toolCall`,
`toolResponse`, and parts toolwire does not model) go back whole. Another provider's turn keeps
its text and tool calls only; its first call of the turn carries Gemini's documented placeholder
signature, since Gemini 3 refuses a function call without one in the current turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from .._reach import cannot_reach, request_url
from ..computer import (
    GEMINI_COMPUTER_FUNCTIONS,
    ComputerCall,
    computer_block,
    gemini_action,
    is_computer_call,
    lift_calls,
)
from ..errors import (
    MissingApiKeyError,
    ModelConnectionError,
    ModelError,
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
from ..results import AudioPart, ImagePart, ResourceLinkPart, ResourcePart, TextPart
from ..tools import ToolDefinition
from ._client import LoopBoundClient, OwnsClient, http_error
from ._google_parse import ResponseAssembler, decode_signature
from .base import (
    CallIds,
    Completion,
    CompletionDone,
    ModelBase,
    PreparedRequest,
    StreamEvent,
    ToolChoice,
)
from .profiles import profile_for

if TYPE_CHECKING:
    from google import genai

__all__ = ["SKIP_SIGNATURE", "GeminiModel", "gemini", "vertex"]

SKIP_SIGNATURE = b"skip_thought_signature_validator"
"""The placeholder signature Google documents for function calls Gemini did not write."""

_ROLE_USER = "user"
_ROLE_MODEL = "model"


_OPENED: ContextVar[list[Any] | None] = ContextVar("toolwire_google_opened", default=None)
"""Where the stream being read keeps the HTTP responses the SDK opens for it."""


async def _note_response(response: Any) -> None:
    """The HTTP client's response hook: note a response a stream opened, to close it with the
    stream (a plain call reads its response whole and leaves none open)."""
    opened = _OPENED.get()
    if opened is not None:
        opened.append(response)


async def _close_all(responses: list[Any]) -> None:
    for response in responses:
        await response.aclose()  # a no-op for a response already read or closed


def _with_response_hook(options: dict[str, Any]) -> dict[str, Any]:
    """`genai.Client` options whose async HTTP client calls `_note_response` (added to any
    hooks given). An HTTP client passed in ready (`httpx_async_client`) is left as it is."""
    from google.genai import types

    given: Any = options.get("http_options")
    http = types.HttpOptions.model_validate(given or {})
    args = dict(http.async_client_args or {})
    hooks = dict(cast(Mapping[str, Any], args.get("event_hooks") or {}))
    hooks["response"] = [*cast(Sequence[Any], hooks.get("response") or ()), _note_response]
    args["event_hooks"] = hooks
    options["http_options"] = http.model_copy(update={"async_client_args": args})
    return options


class _Client:
    """A `genai.Client` as `LoopBoundClient` holds it (its async side closes, then is rebuilt)."""

    def __init__(self, client: genai.Client, owned: bool) -> None:
        self.sdk = client
        self._closed = False
        self._owned = owned

    def is_closed(self) -> bool:
        return self._closed

    async def close(self) -> None:
        if self._owned and not self._closed:
            self._closed = True
            await self.sdk.aio.aclose()


class GeminiModel(OwnsClient, ModelBase):
    """A Gemini model over the Gemini API or Vertex AI (`generateContent`).

    Build it with `gemini(...)` / `vertex(...)` (or `toolwire.model("google:...")`), or directly.

    Args:
        model_name: The model, e.g. `"gemini-2.5-flash"`.
        provider: `"google"` (Gemini API) or `"vertex"`, as stored on the turns it writes.
        client: A ready `google.genai.Client` (used as it is, never closed here).
        client_options: Arguments for `google.genai.Client` when `client` is not given (a
            response hook is added to its `http_options.async_client_args`, so that a stream
            stopped early closes its HTTP response at once).
        **provider_options: `GenerateContentConfig` defaults, e.g. `thinking_config={...}`;
            `settings.extra` overrides them.
    """

    api = "generate-content"
    dialect = "gemini"

    def __init__(
        self,
        model_name: str,
        *,
        provider: str = "google",
        client: genai.Client | None = None,
        client_options: Mapping[str, Any] | None = None,
        **provider_options: Any,
    ) -> None:
        if client is None:
            try:
                from google import genai
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ImportError(
                    "The Gemini adapter needs the `google-genai` package: "
                    "pip install 'toolwire[google]'"
                ) from exc
            options = _with_response_hook(dict(client_options or {}))

            def build() -> _Client:
                return _Client(genai.Client(**options), owned=True)

            self._clients = LoopBoundClient(build(), build)
        else:
            self._clients = LoopBoundClient(_Client(client, owned=False), None)
        super().__init__(model_name, provider=provider)
        self.profile = profile_for(provider, self.api)
        self.provider_options: dict[str, Any] = provider_options

    @property
    def client(self) -> genai.Client:
        """The SDK client in use."""
        return self._clients.current.sdk

    @property
    def vertexai(self) -> bool:
        return self._provider == "vertex"

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Ask the model once.

        Raises:
            RetryableModelError: HTTP 429 or 5xx.
            ModelHTTPError: another HTTP error.
            ModelConnectionError: no answer (connection refused, timeout).
            ModelError: no usable credentials (Vertex AI without application default credentials).
            ModelStreamError: a blocked prompt or answer (the code names the reason and the
                message the categories), or `MALFORMED_FUNCTION_CALL`.
            ModelResponseError: an answer toolwire cannot use.
            UnsupportedError: a setting Gemini cannot take.
        """
        contents, config = self.wire_request(request)
        assembler = ResponseAssembler(
            CallIds(self.profile.call_id_prefix), self._provider, streamed=False
        )
        client = self._clients.get().sdk
        try:
            response = await client.aio.models.generate_content(
                model=self._model_name, contents=contents, config=config
            )
        except Exception as exc:
            raise self.map_error(exc) from exc
        assembler.feed(response)
        completion = assembler.completion()
        _lift_computer_calls(completion.message, request)
        return completion

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        """Text, reasoning and tool-call deltas, then `CompletionDone`."""
        contents, config = self.wire_request(request)
        assembler = ResponseAssembler(
            CallIds(self.profile.call_id_prefix), self._provider, streamed=True
        )
        client = self._clients.get().sdk
        # The HTTP responses this stream opens (noted by `_note_response`): closing the SDK's
        # generator leaves its inner ones, and the response, open until they are collected.
        opened: list[Any] = []
        token = _OPENED.set(opened)
        try:
            stream = await client.aio.models.generate_content_stream(
                model=self._model_name, contents=contents, config=config
            )
        except Exception as exc:
            await _close_all(opened)
            raise self.map_error(exc) from exc
        finally:
            _OPENED.reset(token)
        received = False
        try:
            while True:
                # Set only around the SDK's own step, which runs in this task and context: the
                # consumer's context is never left changed between two events.
                token = _OPENED.set(opened)
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    # The SDK connects on the first read: a failure before any chunk came is an
                    # unreachable provider, as for a plain call, not a cut answer.
                    raise self.map_error(exc, streaming=received) from exc
                finally:
                    _OPENED.reset(token)
                received = True
                for event in assembler.feed(chunk):
                    yield event
        finally:
            try:
                await stream.aclose()
            finally:
                await _close_all(opened)
        completion = assembler.completion()
        _lift_computer_calls(completion.message, request)
        yield CompletionDone(completion)

    # --- requests ---------------------------------------------------------------------------

    def wire_request(self, request: PreparedRequest) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The `contents` and the `GenerateContentConfig` (as the SDK's dict form) this model
        sends for a request."""

        system, contents = wire_contents(request.messages, self.owns)
        options = request.settings
        fields: dict[str, Any] = dict(self.provider_options)
        if options.max_tokens is not None:
            fields["max_output_tokens"] = options.max_tokens
        if options.temperature is not None:
            fields["temperature"] = options.temperature
        if options.top_p is not None:
            fields["top_p"] = options.top_p
        if options.stop:
            fields["stop_sequences"] = list(options.stop)
        if options.seed is not None:
            fields["seed"] = options.seed
        if options.parallel_tool_calls is False:
            raise UnsupportedError(
                "Gemini cannot be told to make one call at a time; leave `parallel_tool_calls` unset"
            )
        extra = dict(options.extra)
        raw_tools: list[Any] = list(cast(Sequence[Any], extra.pop("tools", None) or ()))
        raw_tools.extend(request.native_tools)
        fields.update(extra)
        tools: list[Any] = list(raw_tools)
        if request.definitions:
            tools.append({"function_declarations": [_declaration(d) for d in request.definitions]})
        if tools:
            fields["tools"] = tools
            tool_config = _tool_config(fields.get("tool_config"), request, bool(raw_tools))
            if raw_tools and request.definitions and not self.vertexai:
                tool_config["include_server_side_tool_invocations"] = True
            if tool_config:
                fields["tool_config"] = tool_config
        definition = request.output_definition
        if definition is not None:
            fields["response_mime_type"] = "application/json"
            fields["response_json_schema"] = definition.parameters
        if system:
            fields["system_instruction"] = {"role": _ROLE_USER, "parts": [{"text": system}]}
        if options.timeout is not None:
            fields["http_options"] = {"timeout": int(options.timeout * 1000)}
        # Calls go back to the caller: the SDK must never run them itself.
        fields["automatic_function_calling"] = {"disable": True}
        # A dict: the SDK validates the config itself, and a second validation here would cost
        # as much as reading a short answer.
        return contents, fields

    # --- errors -------------------------------------------------------------------------------

    def map_error(self, error: Exception, *, streaming: bool = False) -> Exception:
        """The toolwire error for a `google-genai` SDK (or HTTP, or credentials) failure;
        `error` itself for any other."""
        exc = error
        import httpx
        import httpx2
        import pydantic
        from google.auth import exceptions as auth_errors
        from google.genai import errors

        if isinstance(exc, ModelError):
            return exc
        if isinstance(exc, pydantic.ValidationError) and not exc.title.endswith("Response"):
            # The SDK refused the request before sending it (a setting it does not know).
            return UnsupportedError(f"Gemini cannot take this request's settings: {exc}")
        who = "Vertex AI" if self.vertexai else "Gemini"
        if isinstance(exc, errors.APIError):
            response: Any = getattr(exc, "response", None)
            headers: Mapping[str, str] = getattr(response, "headers", None) or {}
            message = exc.message or exc.status or str(exc)
            details: object = cast(object, exc.details)  # pyright: ignore[reportUnknownMemberType]
            return http_error(
                exc.code or 0, str(message), provider=self._provider, body=details, headers=headers
            )
        if isinstance(exc, auth_errors.TransportError):
            return ModelConnectionError(
                f"Could not reach Google to get credentials: {exc}", provider=self._provider
            )
        if isinstance(exc, auth_errors.GoogleAuthError):
            return ModelError(f"{who} credentials are missing or refused: {exc}")
        if isinstance(exc, (httpx2.TimeoutException, httpx.TimeoutException)):
            return ModelConnectionError(
                f"{who} did not answer in time: {exc!r}", provider=self._provider
            )
        if isinstance(exc, (httpx2.TransportError, httpx.TransportError)):
            if streaming:
                # The status line came, then the connection broke: the answer is cut, not missing.
                return ModelResponseError(f"The {who} stream was cut: {exc!r}")
            return ModelConnectionError(
                cannot_reach(self._provider, request_url(exc), exc), provider=self._provider
            )
        if isinstance(exc, ValueError):  # bad JSON, or JSON the SDK's types refuse
            return ModelResponseError(f"{who} sent an answer toolwire cannot read: {exc}")
        return exc


# --- the conversation on the wire -----------------------------------------------------------------


def _declaration(definition: ToolDefinition) -> dict[str, Any]:
    # The gemini dialect's schema is the OpenAPI subset the SDK's `Schema` reads.
    return {
        "name": definition.name,
        "description": definition.description,
        "parameters": definition.parameters,
    }


def _tool_config(given: object, request: PreparedRequest, has_raw_tools: bool) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if isinstance(given, Mapping):
        config.update(cast(Mapping[str, Any], given))
    elif given is not None:
        from google.genai import types

        if isinstance(given, types.ToolConfig):
            config.update(given.model_dump(exclude_none=True))
    given_calling = config.get("function_calling_config", config.get("functionCallingConfig"))
    if given_calling is not None:
        _check_calling(given_calling)
        return config
    calling = _calling_config(request.tool_choice, [d.name for d in request.definitions])
    if calling is not None:
        _check_calling(calling)
        if not request.definitions and has_raw_tools and calling.get("mode") != "NONE":
            raise UnsupportedError(
                "Gemini cannot be made to use a built-in tool; no function tool was given"
            )
        config["function_calling_config"] = calling
    return config


def _check_calling(config: object) -> None:
    streamed = False
    if isinstance(config, Mapping):
        fields = cast(Mapping[str, Any], config)
        streamed = bool(
            fields.get("stream_function_call_arguments")
            or fields.get("streamFunctionCallArguments")
        )
    if streamed:
        raise UnsupportedError(
            "toolwire reads Gemini's function calls whole; leave stream_function_call_arguments unset"
        )


def _calling_config(choice: ToolChoice, names: list[str]) -> dict[str, Any] | None:
    if isinstance(choice, Mapping):
        return dict(choice)
    if choice == "auto":
        return None
    if choice == "none":
        return {"mode": "NONE"}
    if choice == "required":
        return {"mode": "ANY"}
    if choice not in names:
        raise UnsupportedError(f"tool_choice names {choice!r}, which is not among the tools sent")
    return {"mode": "ANY", "allowed_function_names": [choice]}


def wire_contents(
    messages: Sequence[Message], owns: Callable[[AssistantMessage], bool]
) -> tuple[str, list[dict[str, Any]]]:
    """The system instruction and the `contents` (the SDK's dict forms, which it reads faster
    than its own objects); consecutive same-role turns are merged.

    `owns` tells the turns whose provider state may go back (`ModelBase.owns`).
    """
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    computer: dict[str, ComputerCall | None] = {}  # requests by call id; None: not sent back

    def push(role: str, parts: list[Any]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages:
        if isinstance(message, SystemMessage):
            if message.text.strip():
                system.append(message.text)
        elif isinstance(message, UserMessage):
            push(_ROLE_USER, [_user_part(p) for p in message.content])
        elif isinstance(message, AssistantMessage):
            own = owns(message)
            for part in message.parts:
                if isinstance(part, ServerToolCallBlock) and is_computer_call(part):
                    computer[part.id] = ComputerCall.from_block(part) if own else None
            push(_ROLE_MODEL, _model_parts(message, own))
        elif message.call_id in computer:
            call = computer[message.call_id]
            if call is not None:
                push(_ROLE_USER, [_computer_response(message, call)])
        else:
            push(_ROLE_USER, [_function_response(message)])
    return "\n\n".join(system), contents


def _signed(part: dict[str, Any], signature: bytes | None) -> dict[str, Any]:
    if signature is not None:
        part["thought_signature"] = signature
    return part


def _model_parts(message: AssistantMessage, same: bool) -> list[Any]:
    out: list[Any] = []
    first_call = True
    for part in message.parts:
        state = part.provider_state if same else None
        signature = decode_signature(state.get("thought_signature")) if state else None
        if isinstance(part, TextBlock):
            if part.text or signature is not None:
                out.append(_signed({"text": part.text}, signature))
        elif isinstance(part, ToolCallBlock):
            if not same and first_call:
                signature = SKIP_SIGNATURE
            first_call = False
            call = {"id": part.id, "name": part.name, "args": _args(part.arguments)}
            out.append(_signed({"function_call": call}, signature))
        elif not same:
            continue  # reasoning and server-side parts stay with the provider that wrote them
        elif isinstance(part, ServerToolCallBlock) and is_computer_call(part):
            raw = cast(Mapping[str, Any], ComputerCall.from_block(part).raw or {})
            wire_call: dict[str, Any] = {
                "id": part.id,
                "name": raw.get("name"),
                "args": raw.get("args") or {},
            }
            out.append(_signed({"function_call": wire_call}, signature))
        elif isinstance(part, ReasoningBlock):
            if part.text or signature is not None:
                out.append(_signed({"text": part.text, "thought": True}, signature))
        elif state is not None and isinstance(state.get("part"), Mapping):
            from google.genai import types

            # The SDK's own JSON form of the part, read back by the SDK (bytes from base64).
            out.append(types.Part.model_validate_json(json.dumps(state["part"])))
    return out


def _args(arguments: str) -> dict[str, Any]:
    # Arguments that are not a JSON object (the model wrote broken JSON) go back empty; the
    # call's error result tells the model what was wrong.
    try:
        value: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _blob_part(data: bytes | None, url: str | None, mime_type: str) -> dict[str, Any]:
    if url is not None:
        return {"file_data": {"file_uri": url, "mime_type": mime_type}}
    return {"inline_data": {"data": data or b"", "mime_type": mime_type}}


def _user_part(part: TextPart | ImagePart | AudioPart | FilePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, ImagePart):
        return _blob_part(part.data, part.url, part.mime_type)
    if isinstance(part, AudioPart):
        return _blob_part(part.data, None, part.mime_type)
    return _blob_part(part.data, part.url, part.mime_type)


def _function_response(message: ToolResultMessage) -> dict[str, Any]:
    media: list[dict[str, Any]] = []
    texts: list[str] = []
    for item in message.content:
        if isinstance(item, TextPart):
            texts.append(item.text)
        elif isinstance(item, ImagePart) and item.data is not None:
            media.append({"inline_data": {"data": item.data, "mime_type": item.mime_type}})
        elif isinstance(item, ImagePart):
            texts.append(f"[image {item.url}]")
        elif isinstance(item, ResourcePart):
            texts.append(item.text if item.text is not None else f"[resource {item.uri}]")
        elif isinstance(item, ResourceLinkPart):
            texts.append(f"[resource link {item.uri}]")
        else:
            texts.append(f"[audio {item.mime_type}]")
    value: Any
    if message.structured is not None and not message.is_error:
        value = message.structured
    else:
        value = "\n".join(texts)
    if message.is_error:
        response: dict[str, Any] = {"error": value or "The tool failed without a message."}
    elif isinstance(value, dict):
        response = cast(dict[str, Any], value)
    else:
        response = {"output": value}
    wire: dict[str, Any] = {"id": message.call_id, "name": message.name, "response": response}
    if media:
        wire["parts"] = media
    return {"function_response": wire}


def _lift_computer_calls(message: AssistantMessage, request: PreparedRequest) -> None:
    """The turn's calls of Gemini's predefined computer functions, as computer-use requests
    (only with `computer_use` among the tools, and not where the caller declared a function of
    that name or excluded it)."""
    names: set[str] = set()
    for tool in cast(list[object], request.native_tools):
        if not isinstance(tool, Mapping):
            continue
        fields = cast(Mapping[str, Any], tool)
        entry: object = fields.get("computer_use", fields.get("computerUse"))
        if isinstance(entry, Mapping):
            excluded = cast(Mapping[str, Any], entry).get("excluded_predefined_functions") or ()
            names |= set(GEMINI_COMPUTER_FUNCTIONS) - set(cast(Sequence[str], excluded))
    names -= {d.name for d in request.definitions}
    if not names:
        return

    def build(call: ToolCallBlock) -> ServerToolCallBlock:
        args = _args(call.arguments)
        checks: list[dict[str, Any]] = []
        decision = args.get("safety_decision")
        if isinstance(decision, Mapping):
            checks.append(dict(cast(Mapping[str, Any], decision)))
        raw = {"name": call.name, "args": args}
        action = gemini_action(call.name, args)
        return computer_block(call.id, "gemini", raw, [action], call.provider_state, checks)

    lift_calls(message, lambda call: call.name in names, build)


def _computer_response(message: ToolResultMessage, call: ComputerCall) -> dict[str, Any]:
    """The caller's answer to a computer function call: its `functionResponse`, under the
    function's own name, with the screenshot as a part and the page's URL when given."""
    raw = cast(Mapping[str, Any], call.raw or {})
    response: dict[str, Any] = {}
    structured: object = message.structured
    if isinstance(structured, Mapping):
        response.update(cast(Mapping[str, Any], structured))
    text = "\n".join(p.text for p in message.content if isinstance(p, TextPart))
    if message.is_error:
        response["error"] = text or "The action failed without a message."
    elif text:
        response["output"] = text
    if call.safety_checks:
        # Answering the request is the caller's confirmation of the action it asked about.
        response["safety_acknowledgement"] = "true"
    wire: dict[str, Any] = {"id": call.id, "name": raw.get("name"), "response": response}
    media = [
        {"inline_data": {"data": p.data, "mime_type": p.mime_type}}
        for p in message.content
        if isinstance(p, ImagePart) and p.data is not None
    ]
    if media:
        wire["parts"] = media
    return {"function_response": wire}


# --- providers ------------------------------------------------------------------------------------


def gemini(
    model_name: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    api_version: str = "v1beta",
    timeout: float | None = 600.0,
    client: genai.Client | None = None,
    **provider_options: Any,
) -> GeminiModel:
    """A Gemini API model (`google:` and `gemini:`); the key from `GEMINI_API_KEY` or
    `GOOGLE_API_KEY` when not given.

    Args:
        model_name: The model, e.g. `"gemini-2.5-flash"`.
        api_key: The API key.
        base_url: Another endpoint (a proxy, a local replay server).
        api_version: The API version (`v1beta` has every feature the adapter uses).
        timeout: Seconds per request (`None`: wait for ever); `settings.timeout` overrides it.
        client: A ready `google.genai.Client` (the arguments above are then ignored).
        **provider_options: `GenerateContentConfig` defaults (e.g. `thinking_config`).

    Raises:
        ValueError: no API key.
    """
    if client is not None:
        return GeminiModel(model_name, provider="google", client=client, **provider_options)
    key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    if not key:
        raise MissingApiKeyError("google", "GEMINI_API_KEY")
    options = {"api_key": key, "http_options": _http_options(base_url, api_version, timeout)}
    return GeminiModel(model_name, provider="google", client_options=options, **provider_options)


def vertex(
    model_name: str,
    *,
    project: str | None = None,
    location: str | None = None,
    credentials: Any = None,
    base_url: str | None = None,
    api_version: str = "v1beta1",
    timeout: float | None = 600.0,
    client: genai.Client | None = None,
    **provider_options: Any,
) -> GeminiModel:
    """A Gemini model on Vertex AI (`vertex:`), with application default credentials unless
    `credentials` (a `google.auth` credentials object) is given.

    Args:
        model_name: The model, e.g. `"gemini-2.5-flash"`.
        project: The Google Cloud project; `GOOGLE_CLOUD_PROJECT` when not given.
        location: The region; `GOOGLE_CLOUD_LOCATION` when not given, else `"global"`.
        credentials: Credentials to use instead of the application defaults.
        base_url: Another endpoint (a private endpoint, a local replay server).
        api_version: The API version.
        timeout: Seconds per request (`None`: wait for ever); `settings.timeout` overrides it.
        client: A ready `google.genai.Client` made with `vertexai=True`.
        **provider_options: `GenerateContentConfig` defaults.

    Raises:
        ValueError: no project.
    """
    if client is not None:
        return GeminiModel(model_name, provider="vertex", client=client, **provider_options)
    project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
    if not project:
        raise ValueError("Vertex AI needs a project: pass project=... or set GOOGLE_CLOUD_PROJECT")
    location = location or os.environ.get("GOOGLE_CLOUD_LOCATION") or "global"
    options = {
        "vertexai": True,
        "project": project,
        "location": location,
        "credentials": credentials,
        "http_options": _http_options(base_url, api_version, timeout),
    }
    return GeminiModel(model_name, provider="vertex", client_options=options, **provider_options)


def _http_options(base_url: str | None, api_version: str, timeout: float | None) -> Any:
    from google.genai import types

    return types.HttpOptions(
        base_url=base_url,
        api_version=api_version,
        timeout=None if timeout is None else int(timeout * 1000),
    )
