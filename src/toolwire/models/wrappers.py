"""Models that wrap models: `FallbackModel`, `RetryModel` (with `RetryPolicy`) and `CachedModel`.

A wrapper is a `ModelBase` whose `send` hands the request value to the model it wraps; the wrapped
model prepares the request for its own dialect and request guard, so wrappers stack in any order:
`CachedModel(FallbackModel(RetryModel(a), b))`. Every model asked for an answer is listed, in
order, in `Completion.attempts`; when every attempt failed, the last error is raised unchanged in
type, with the attempts on its `attempts` attribute and in a note of its traceback.

A wrapper overrides only `send` and `send_stream`: it passes the request value on as it came and
never prepares it, so any model implementing the `Model` protocol can be wrapped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import time
import typing
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, Self, TypeAlias, runtime_checkable

import anyio

from .._logctx import log_extra, log_prefix
from .._util import backoff_delay
from ..errors import ModelConnectionError, RetryableError, RetryableModelError
from ..messages import AssistantMessage, dump_history, load_history
from ..tools import DefinitionDialect
from ..usage import Usage
from .base import (
    Attempt,
    Completion,
    CompletionDone,
    FinishReason,
    Model,
    ModelBase,
    ModelRequest,
    PreparedRequest,
    StreamEvent,
    aclose_events,
    completion_events,
)
from .profiles import ModelProfile, common_profile, profile_of

__all__ = [
    "TRANSIENT_ERRORS",
    "CachedModel",
    "CompletionStore",
    "ErrorFilter",
    "FallbackModel",
    "MemoryStore",
    "RetryModel",
    "RetryPolicy",
    "WrapperModel",
]

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    ModelConnectionError,
    RetryableModelError,
    TimeoutError,
)
"""What fallback and retry step in for by default: no connection or no answer in time, a 429 and
any 5xx. Never a 4xx other than 429, a broken answer, or a forbidden request."""

ErrorFilter: TypeAlias = (
    "type[BaseException] | Sequence[type[BaseException]] | Callable[[BaseException], bool]"
)
"""Which failures a wrapper acts on: exception types, or a predicate over the exception."""

_NOTE = "toolwire attempts:"

logger = logging.getLogger("toolwire.models")


def _matcher(spec: ErrorFilter) -> Callable[[BaseException], bool]:
    if isinstance(spec, type):
        types: tuple[type[BaseException], ...] = (typing.cast(type[BaseException], spec),)
    elif callable(spec):
        return spec
    else:
        types = tuple(spec)
    return lambda error: isinstance(error, types)


# --- asking a wrapped model ---------------------------------------------------------------------


def _answered(model: Model, completion: Completion) -> Completion:
    # A model that implements the protocol without ModelBase may leave the attempts empty.
    if not completion.attempts:
        completion.attempts = [Attempt(model.provider, model.model_name)]
    return completion


async def send_to(model: Model, request: ModelRequest) -> Completion:
    """Ask `model` for the answer to `request`, its attempt recorded."""
    return _answered(model, await model.send(request))


async def stream_to(model: Model, request: ModelRequest) -> AsyncIterator[StreamEvent]:
    """`send_to` as events; the last one is `CompletionDone`."""
    events = model.send_stream(request)
    try:
        async for event in events:
            if isinstance(event, CompletionDone):
                event = CompletionDone(_answered(model, event.completion))
            yield event
    finally:
        await aclose_events(events)


def attempts_of(model: Model, error: BaseException) -> list[Attempt]:
    """The attempts behind a failure: those a nested wrapper attached, else the one failure."""
    # Only a wrapper's attempts are read: a wrapper always attaches fresh ones before raising,
    # while an exception object a model raised before (and raises again) may carry stale ones.
    nested: Sequence[Attempt] = getattr(error, "attempts", ())
    if isinstance(model, WrapperModel) and nested:
        return list(nested)
    return [Attempt(model.provider, model.model_name, error=error)]


def attach_attempts(error: BaseException, attempts: Sequence[Attempt]) -> None:
    """Put the attempts on the error (`attempts`, and one note for the traceback)."""
    # Not every exception declares `attempts`; one with __slots__ keeps the note alone.
    with contextlib.suppress(AttributeError, TypeError):
        setattr(error, "attempts", tuple(attempts))  # noqa: B010
    lines = [_NOTE]
    for n, attempt in enumerate(attempts, 1):
        outcome = "answered" if attempt.ok else f"{type(attempt.error).__name__}: {attempt.error}"
        lines.append(f"  {n}. {attempt.provider}:{attempt.model}: {outcome}")
    notes: list[str] = getattr(error, "__notes__", [])
    # One note, rewritten by each wrapper the failure passes through, not one per wrapper.
    notes[:] = [n for n in notes if not n.startswith(_NOTE)]
    if not hasattr(error, "__notes__"):
        error.__notes__ = notes
    notes.append("\n".join(lines))


def _label(model: Model) -> str:
    return f"{model.provider}:{model.model_name}"


def _log_retry(
    model: Model, attempt: int, attempts: int, error: BaseException, delay: float
) -> None:
    logger.warning(
        "%s%s failed (attempt %d of %d: %s: %s); retrying in %.2fs",
        log_prefix(),
        _label(model),
        attempt,
        attempts,
        type(error).__name__,
        error,
        delay,
        extra=log_extra(),
    )


def _log_fallback(model: Model, following: Model, error: BaseException) -> None:
    logger.warning(
        "%s%s failed (%s: %s); falling back to %s",
        log_prefix(),
        _label(model),
        type(error).__name__,
        error,
        _label(following),
        extra=log_extra(),
    )


def _after(failed: Sequence[Attempt], completion: Completion) -> Completion:
    if failed:
        completion.attempts = [*failed, *completion.attempts]
    return completion


# --- the base -----------------------------------------------------------------------------------


class WrapperModel(ModelBase):
    """A model around a model: it answers as the wrapped model does, plus what it adds.

    `provider`, `model_name` and `api` are the wrapped model's. `send` and `send_stream` ask the
    wrapped model, which prepares the request for its own dialect and checks the request guard;
    a subclass overrides them to add its behaviour. `aclose()` closes the wrapped models.

    Args:
        model: The model wrapped.
    """

    guarded = False  # the wrapped model checks the guard for itself

    def __init__(self, model: Model) -> None:
        self.wrapped = model

    @property
    def models(self) -> tuple[Model, ...]:
        """Every model this wrapper asks (one, except for `FallbackModel`)."""
        return (self.wrapped,)

    @property
    def provider(self) -> str:
        return self.wrapped.provider

    @property
    def model_name(self) -> str:
        return self.wrapped.model_name

    @property
    def api(self) -> str:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The wrapped model's wire API."""
        return getattr(self.wrapped, "api", "custom")

    @property
    def dialect(self) -> DefinitionDialect:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The wrapped model's tool dialect (it compiles the definitions itself)."""
        return getattr(self.wrapped, "dialect", "openai")

    @property
    def profile(self) -> ModelProfile:  # pyright: ignore[reportIncompatibleVariableOverride]
        """The wrapped model's profile; over several models that may answer (a fallback), its
        structured output is what every one of them takes."""
        return common_profile([profile_of(m) for m in self._answering()])

    def _answering(self) -> tuple[Model, ...]:
        """The models that may answer a request (more than one for a fallback)."""
        return (self.wrapped,)

    def owns(self, message: AssistantMessage) -> bool:
        if isinstance(self.wrapped, ModelBase):
            return self.wrapped.owns(message)
        return message.provider == self.wrapped.provider

    async def send(self, request: ModelRequest) -> Completion:
        return await send_to(self.wrapped, request)

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        events = stream_to(self.wrapped, request)
        try:
            async for event in events:
                yield event
        finally:
            await aclose_events(events)

    async def complete_request(self, request: PreparedRequest) -> Completion:
        """Never called: a wrapper passes request values on through `send` and prepares none."""
        raise TypeError(f"{type(self).__name__} prepares no request; call send()")

    async def aclose(self) -> None:
        """Close every wrapped model that can be closed (adapters own HTTP clients)."""
        for model in self.models:
            aclose: Callable[[], Awaitable[Any]] | None = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.wrapped!r})"


# --- fallback -----------------------------------------------------------------------------------


class FallbackModel(WrapperModel):
    """Ask each model in turn until one answers.

    A failure `fallback_on` accepts sends the request to the next model; any other failure is
    raised at once. `Completion.attempts` lists every model asked, what failed, and which
    answered; when all fail, the last model's error is raised with every attempt on its
    `attempts`. A stream falls back only before its first event: once text has reached the
    caller, a failure is raised as it is.

    `provider`, `model_name` and `api` are the first model's; the answering model's are on the
    completion's message (`message.provider`, `message.api`) and in `completion.model`.

    Args:
        models: The models, in order of preference.
        fallback_on: The failures worth the next model (default `TRANSIENT_ERRORS`: connection
            errors, timeouts, 429 and 5xx), as exception types or a predicate.

    Raises:
        ValueError: no model given.
    """

    def __init__(self, *models: Model, fallback_on: ErrorFilter = TRANSIENT_ERRORS) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        super().__init__(models[0])
        self._models = tuple(models)
        self.fallback_on = fallback_on
        self._should_fall_back = _matcher(fallback_on)

    @property
    def models(self) -> tuple[Model, ...]:
        return self._models

    def _answering(self) -> tuple[Model, ...]:
        return self._models

    async def send(self, request: ModelRequest) -> Completion:
        failed: list[Attempt] = []
        last = len(self._models) - 1
        for index, model in enumerate(self._models):
            try:
                completion = await send_to(model, request)
            except Exception as error:
                failed += attempts_of(model, error)
                if index == last or not self._should_fall_back(error):
                    attach_attempts(error, failed)
                    raise
                _log_fallback(model, self._models[index + 1], error)
                continue
            return _after(failed, completion)
        raise AssertionError("unreachable: the last model either answers or raises")

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failed: list[Attempt] = []
        last = len(self._models) - 1
        for index, model in enumerate(self._models):
            events = stream_to(model, request)
            started = False
            try:
                async for event in events:
                    started = True
                    if isinstance(event, CompletionDone):
                        event = CompletionDone(_after(failed, event.completion))
                    yield event
                return
            except Exception as error:
                failed += attempts_of(model, error)
                if started or index == last or not self._should_fall_back(error):
                    attach_attempts(error, failed)
                    raise
                _log_fallback(model, self._models[index + 1], error)
            finally:
                await aclose_events(events)

    def __repr__(self) -> str:
        return f"FallbackModel({', '.join(repr(m) for m in self._models)})"


# --- retry --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class RetryPolicy:
    """When and how long to wait before asking a model again.

    Delays grow exponentially from `initial_delay` by `multiplier`, capped at `max_delay`; with
    `jitter` each is drawn between half and all of it, so clients that failed together do not
    retry together. A failure that says how long to wait (`retry_after`, from the provider's
    `Retry-After` header) waits at least that long; one that asks for longer than `max_delay`
    ends the retries with that failure.

    Attributes:
        attempts: Total attempts, the first included (1 never retries).
        initial_delay: Seconds before the second attempt.
        max_delay: Cap on any single delay, in seconds.
        multiplier: Growth of the delay per attempt.
        jitter: Randomise each delay between half and all of it.
        retry_on: The failures worth another attempt (default `TRANSIENT_ERRORS`).

    Raises:
        ValueError: a setting out of range.
    """

    attempts: int = 3
    initial_delay: float = 0.5
    max_delay: float = 30.0
    multiplier: float = 2.0
    jitter: bool = True
    retry_on: ErrorFilter = TRANSIENT_ERRORS

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, not {self.attempts}")
        if not (0 <= self.initial_delay <= self.max_delay):
            raise ValueError(
                "RetryPolicy needs 0 <= initial_delay <= max_delay, not "
                f"initial_delay={self.initial_delay}, max_delay={self.max_delay}"
            )
        if self.multiplier < 1:
            raise ValueError(f"RetryPolicy.multiplier must be at least 1, not {self.multiplier}")

    def delay(self, attempt: int, error: BaseException) -> float | None:
        """Seconds to wait after failed attempt `attempt` (1-based), or `None` to give up."""
        if attempt >= self.attempts or not _matcher(self.retry_on)(error):
            return None
        delay = backoff_delay(
            attempt,
            initial=self.initial_delay,
            maximum=self.max_delay,
            multiplier=self.multiplier,
            jitter=self.jitter,
        )
        retry_after = error.retry_after if isinstance(error, RetryableError) else None
        if retry_after is not None:
            if retry_after > self.max_delay:
                return None  # the provider wants longer than the caller is willing to wait
            delay = max(delay, retry_after)
        return delay


def sdk_retries(model: Model) -> int:
    """How many times the model's SDK client retries a failed request by itself."""
    if isinstance(model, WrapperModel):
        return max((sdk_retries(m) for m in model.models), default=0)
    own = getattr(model, "max_retries", None)
    if isinstance(own, int):
        return own
    client = getattr(model, "client", None)
    retries = getattr(client, "max_retries", None)
    return retries if isinstance(retries, int) else 0


class RetryModel(WrapperModel):
    """Ask the wrapped model again after a transient failure, as `policy` says.

    Every attempt is listed in `Completion.attempts`; when the retries are spent (or a failure is
    not worth one) the last error is raised with every attempt on its `attempts`. A stream is
    retried only before its first event. The wrapped model's SDK must not retry by itself,
    or one request would be retried twice over: build adapters with `max_retries=0` (their
    default).

    Args:
        model: The model to ask.
        policy: When and how long to wait (`RetryPolicy()` by default: 3 attempts).
        sleep: The coroutine used to wait (tests pass a recorder).

    Raises:
        ValueError: the model's SDK client retries by itself.
    """

    def __init__(
        self,
        model: Model,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
    ) -> None:
        retries = sdk_retries(model)
        if retries:
            raise ValueError(
                f"{model!r} has SDK retries on (max_retries={retries}): a RetryModel around it "
                "would retry each request twice over. Build the model with max_retries=0 and "
                "let the RetryPolicy decide."
            )
        super().__init__(model)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep

    async def send(self, request: ModelRequest) -> Completion:
        failed: list[Attempt] = []
        attempt = 1
        while True:
            try:
                completion = await send_to(self.wrapped, request)
            except Exception as error:
                failed += attempts_of(self.wrapped, error)
                delay = self.policy.delay(attempt, error)
                if delay is None:
                    attach_attempts(error, failed)
                    raise
                _log_retry(self.wrapped, attempt, self.policy.attempts, error, delay)
            else:
                return _after(failed, completion)
            await self._sleep(delay)
            attempt += 1

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        failed: list[Attempt] = []
        attempt = 1
        while True:
            events = stream_to(self.wrapped, request)
            started = False
            try:
                async for event in events:
                    started = True
                    if isinstance(event, CompletionDone):
                        event = CompletionDone(_after(failed, event.completion))
                    yield event
                return
            except Exception as error:
                failed += attempts_of(self.wrapped, error)
                delay = None if started else self.policy.delay(attempt, error)
                if delay is None:
                    attach_attempts(error, failed)
                    raise
                _log_retry(self.wrapped, attempt, self.policy.attempts, error, delay)
            finally:
                await aclose_events(events)
            await self._sleep(delay)
            attempt += 1

    def __repr__(self) -> str:
        return f"RetryModel({self.wrapped!r}, {self.policy!r})"


# --- cache --------------------------------------------------------------------------------------


@runtime_checkable
class CompletionStore(Protocol):
    """Where `CachedModel` keeps answers: text values by key (a dict, a database, Redis...)."""

    async def get(self, key: str) -> str | None:
        """The value stored under `key`, or `None`."""
        ...

    async def set(self, key: str, value: str) -> None:
        """Store `value` under `key`."""
        ...


class MemoryStore:
    """An in-process `CompletionStore`: least recently used entries go first when full.

    Args:
        max_entries: How many answers to keep.
        ttl: Seconds an answer stays valid; `None` keeps it until it is pushed out.
        clock: Monotonic seconds (tests pass their own).

    Raises:
        ValueError: `max_entries` below 1 or `ttl` not positive.
    """

    def __init__(
        self,
        max_entries: int = 1024,
        ttl: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive, not {ttl}")
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float | None, str]] = OrderedDict()

    async def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires is not None and self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    async def set(self, key: str, value: str) -> None:
        expires = None if self.ttl is None else self._clock() + self.ttl
        self._entries[key] = (expires, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every answer."""
        self._entries.clear()


_FORMAT = 1  # in every key: a change of the stored format misses instead of misreading


def _settings_key(request: ModelRequest) -> dict[str, Any]:
    settings = dataclasses.asdict(request.settings)
    settings.pop("timeout", None)  # how long to wait does not change the answer
    return settings


class CachedModel(WrapperModel):
    """Answer identical requests from a store instead of asking the model again.

    Only requests without tools (function or native) are cached: a model that may call tools
    acts in the world, and its answer is not a value to reuse. The key covers everything that
    changes the answer: the provider, model and API, the messages, tool choice, settings (the
    timeout aside) and output spec. A request whose settings cannot be written as JSON is not
    cached. Failed requests and answers that ended in an error are never stored.

    A hit is a fresh copy of the stored answer (text, parts and provider state; not the
    provider's `raw` response) with zero usage, since no tokens were spent, and one attempt marked
    `cached=True`; streamed, it is replayed as events. A stored value the cache cannot read is a
    miss. Two identical requests in flight at once both reach the model.

    Args:
        model: The model to ask on a miss.
        store: Where answers are kept; a `MemoryStore()` by default.
    """

    def __init__(self, model: Model, store: CompletionStore | None = None) -> None:
        super().__init__(model)
        self.store: CompletionStore = store if store is not None else MemoryStore()

    def cache_key(self, request: ModelRequest) -> str | None:
        """The store key of a request, or `None` when it must not be cached."""
        if request.tools or request.native_tools or request.settings.extra.get("tools"):
            return None
        try:
            output = None if request.output is None else dataclasses.asdict(request.output)
            text = json.dumps(
                {
                    "format": _FORMAT,
                    "provider": self.provider,
                    "model": self.model_name,
                    "api": self.api,
                    "messages": dump_history(request.messages),
                    "tool_choice": request.tool_choice,
                    "settings": _settings_key(request),
                    "output": output,
                },
                sort_keys=True,
                separators=(",", ":"),
                allow_nan=False,
            )
        except (TypeError, ValueError):
            return None  # settings holding something JSON cannot write: no stable key
        return hashlib.sha256(text.encode()).hexdigest()

    async def _lookup(self, key: str | None) -> Completion | None:
        if key is None:
            return None
        value = await self.store.get(key)
        return None if value is None else _decode(value)

    async def _keep(self, key: str | None, completion: Completion) -> None:
        if key is not None and completion.finish_reason != "error":
            await self.store.set(key, _encode(completion))

    async def send(self, request: ModelRequest) -> Completion:
        key = self.cache_key(request)
        hit = await self._lookup(key)
        if hit is not None:
            return hit
        completion = await send_to(self.wrapped, request)
        await self._keep(key, completion)
        return completion

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        key = self.cache_key(request)
        hit = await self._lookup(key)
        if hit is not None:
            for event in completion_events(hit):
                yield event
            return
        events = stream_to(self.wrapped, request)
        try:
            async for event in events:
                if isinstance(event, CompletionDone):
                    await self._keep(key, event.completion)
                yield event
        finally:
            await aclose_events(events)


def _encode(completion: Completion) -> str:
    answered = completion.attempts[-1] if completion.attempts else None
    return json.dumps(
        {
            "message": dump_history([completion.message]),
            "finish_reason": completion.finish_reason,
            "raw_finish_reason": completion.raw_finish_reason,
            "model": completion.model,
            "provider": answered.provider if answered else completion.message.provider,
            "answered_by": answered.model if answered else completion.model,
        }
    )


def _decode(value: str) -> Completion | None:
    """The completion a stored value holds; `None` (a miss) for a value it cannot read."""
    try:
        data = json.loads(value)
        (message,) = load_history(data["message"])
        finish: FinishReason = data["finish_reason"]
        provider = str(data["provider"] or "")
        answered_by = str(data["answered_by"] or "")
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(message, AssistantMessage) or finish not in typing.get_args(FinishReason):
        return None
    return Completion(
        message=message,
        usage=Usage(),
        finish_reason=finish,
        raw_finish_reason=data.get("raw_finish_reason"),
        model=data.get("model"),
        attempts=[Attempt(provider, answered_by, cached=True)],
    )
