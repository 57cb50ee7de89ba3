"""Wrapper models: fallback, retry and cache, alone, stacked and through the loop."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    ModelConnectionError,
    ModelHTTPError,
    ModelRequestsForbidden,
    ModelResponseError,
    ReasoningBlock,
    RetryableModelError,
    ScriptedModel,
    TextBlock,
    UserMessage,
    run_loop,
    tool,
)
from toolwire.models import (
    Attempt,
    CachedModel,
    CompletionStore,
    FallbackModel,
    MemoryStore,
    RetryModel,
    RetryPolicy,
    WrapperModel,
)
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ModelBase,
    ModelRequest,
    OutputSpec,
    PreparedRequest,
    StreamEvent,
    TextDelta,
    forbid_model_requests,
)
from toolwire.models.profiles import ModelProfile
from toolwire.usage import Usage

pytestmark = pytest.mark.anyio


class Partial:
    """An outcome: stream `text`, then fail with `error` (a plain request fails at once)."""

    def __init__(self, text: str, error: Exception) -> None:
        self.text = text
        self.error = error


Outcome = str | Exception | Partial | AssistantMessage


class Stub(ModelBase):
    """A model that fails or answers as queued; it records every prepared request."""

    api = "stub-api"
    dialect = "anthropic"
    # Takes a structured-answer spec (the cache key must cover it).
    profile = ModelProfile(
        name="stub", provider="stub", api="stub-api", structured_output="json_schema"
    )

    def __init__(self, name: str, outcomes: Sequence[Outcome], provider: str = "stub") -> None:
        self._name = name
        self._provider = provider
        self.outcomes = list(outcomes)
        self.requests: list[PreparedRequest] = []

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model_name(self) -> str:
        return self._name

    def _next(self, request: PreparedRequest) -> Outcome:
        self.requests.append(request)
        if not self.outcomes:
            raise AssertionError(f"{self._name} was asked more often than scripted")
        return self.outcomes.pop(0)

    def _completion(self, outcome: str | AssistantMessage) -> Completion:
        message = outcome if isinstance(outcome, AssistantMessage) else None
        if message is None:
            message = AssistantMessage(parts=[TextBlock(str(outcome))], model=self._name)
        usage = Usage(input_tokens=7, output_tokens=3, requests=1)
        return Completion(message=message, usage=usage, model=f"{self._name}-2026")

    async def complete_request(self, request: PreparedRequest) -> Completion:
        outcome = self._next(request)
        if isinstance(outcome, Partial):
            raise outcome.error
        if isinstance(outcome, Exception):
            raise outcome
        return self._completion(outcome)

    async def stream_request(self, request: PreparedRequest) -> AsyncIterator[StreamEvent]:
        outcome = self._next(request)
        if isinstance(outcome, Partial):
            yield TextDelta(outcome.text)
            raise outcome.error
        if isinstance(outcome, Exception):
            raise outcome
        completion = self._completion(outcome)
        yield TextDelta(completion.text)
        yield CompletionDone(completion)


def overloaded(retry_after: float | None = None) -> RetryableModelError:
    return RetryableModelError(503, "overloaded", provider="stub", retry_after=retry_after)


def summary(attempts: Sequence[Attempt]) -> list[tuple[str, str, str | None, bool]]:
    return [
        (a.provider, a.model, None if a.error is None else type(a.error).__name__, a.cached)
        for a in attempts
    ]


class Sleeps:
    """An injectable `sleep` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def collect(events: AsyncIterator[StreamEvent]) -> list[StreamEvent]:
    return [event async for event in events]


# --- the base -----------------------------------------------------------------------------------


async def test_a_wrapper_answers_as_the_wrapped_model_and_lets_it_prepare_the_request() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    inner = Stub("inner", ["hello"], provider="acme")
    model = WrapperModel(inner)
    assert (model.provider, model.model_name, model.api) == ("acme", "inner", "stub-api")
    assert model.dialect == "anthropic"
    completion = await model.complete("hi", tools=[add])
    assert completion.text == "hello"
    assert (completion.message.provider, completion.message.api) == ("acme", "stub-api")
    assert summary(completion.attempts) == [("acme", "inner", None, False)]
    # The definitions were compiled by the wrapped model, for its own dialect.
    (request,) = inner.requests
    assert [d.name for d in request.definitions] == ["add"]
    assert request.definitions[0] == add.definition("anthropic")


async def test_the_wrapped_model_checks_the_request_guard() -> None:
    model = FallbackModel(Stub("a", ["never"]), Stub("b", ["never"]))
    with forbid_model_requests(), pytest.raises(ModelRequestsForbidden) as caught:
        await model.complete("hi")
    # A forbidden request is not a transient failure: nothing falls back.
    assert summary(caught.value.attempts) == [("stub", "a", "ModelRequestsForbidden", False)]


class Plain:
    """A model that implements the `Model` protocol without building on `ModelBase`."""

    provider = "plain"
    model_name = "plain-1"

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list[ModelRequest] = []

    async def send(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        return Completion(AssistantMessage(parts=[TextBlock(self.text)], provider="plain"))

    async def send_stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        completion = await self.send(request)
        yield TextDelta(completion.text)
        yield CompletionDone(completion)


async def test_a_plain_protocol_model_can_be_wrapped() -> None:
    plain = Plain("from the plain model")
    model = FallbackModel(Stub("a", [overloaded()]), plain)
    completion = await model.complete("hi")
    assert completion.text == "from the plain model"
    assert summary(completion.attempts) == [
        ("stub", "a", "RetryableModelError", False),
        ("plain", "plain-1", None, False),
    ]
    assert [[m.text for m in r.messages] for r in plain.requests] == [["hi"]]
    events = await collect(WrapperModel(Plain("one two")).stream_complete("hi"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two"
    done = events[-1]
    assert isinstance(done, CompletionDone)
    assert summary(done.completion.attempts) == [("plain", "plain-1", None, False)]
    # The offline models are models like any other.
    scripted = await FallbackModel(Stub("a", [overloaded()]), ScriptedModel(["s"])).complete("hi")
    assert summary(scripted.attempts)[-1] == ("test", "scripted", None, False)


async def test_a_wrapper_hands_the_request_value_on_untouched() -> None:
    # Native tools and an output spec are fields of the value: a wrapper neither translates nor
    # refuses them, the model that answers decides.
    spec = OutputSpec("answer", {"type": "object"})
    request = ModelRequest(
        [UserMessage.of("hi")], native_tools=[{"type": "web_search"}], output=spec
    )
    plain = Plain("x")
    await RetryModel(CachedModel(plain)).send(request)
    await collect(FallbackModel(plain).send_stream(request))
    assert plain.requests == [request, request]
    assert all(r is request for r in plain.requests)


async def test_closing_a_wrapper_closes_every_wrapped_model() -> None:
    closed: list[str] = []

    class Closable(Stub):
        async def aclose(self) -> None:
            closed.append(self.model_name)

    async with CachedModel(FallbackModel(Closable("a", []), RetryModel(Closable("b", [])))):
        pass
    assert closed == ["a", "b"]


# --- fallback -----------------------------------------------------------------------------------


async def test_fallback_goes_to_the_next_model_on_transient_failures() -> None:
    a = Stub("a", [overloaded()], provider="first")
    b = Stub("b", [ModelConnectionError("refused")], provider="second")
    c = Stub("c", ["answer"], provider="third")
    model = FallbackModel(a, b, c)
    assert (model.provider, model.model_name) == ("first", "a")
    completion = await model.complete("hi")
    assert completion.text == "answer"
    assert summary(completion.attempts) == [
        ("first", "a", "RetryableModelError", False),
        ("second", "b", "ModelConnectionError", False),
        ("third", "c", None, False),
    ]
    # The answering model's provider and API are on the turn, for pricing and replay.
    assert (completion.message.provider, completion.model) == ("third", "c-2026")
    assert [len(m.requests) for m in (a, b, c)] == [1, 1, 1]


async def test_fallback_on_a_timeout() -> None:
    model = FallbackModel(Stub("a", [TimeoutError()]), Stub("b", ["ok"]))
    assert (await model.complete("hi")).text == "ok"


async def test_fallback_does_not_step_in_for_other_failures() -> None:
    b = Stub("b", ["never"])
    model = FallbackModel(Stub("a", [ModelHTTPError(400, "bad request")]), b)
    with pytest.raises(ModelHTTPError) as caught:
        await model.complete("hi")
    assert caught.value.status_code == 400
    assert summary(caught.value.attempts) == [("stub", "a", "ModelHTTPError", False)]
    assert b.requests == []


async def test_when_every_model_fails_the_last_error_is_raised_with_every_attempt() -> None:
    last = ModelConnectionError("no route")
    model = FallbackModel(Stub("a", [overloaded()]), Stub("b", [last]))
    with pytest.raises(ModelConnectionError) as caught:
        await model.complete("hi")
    assert caught.value is last
    assert summary(last.attempts) == [
        ("stub", "a", "RetryableModelError", False),
        ("stub", "b", "ModelConnectionError", False),
    ]
    (note,) = last.__notes__
    assert "1. stub:a: RetryableModelError" in note and "2. stub:b: ModelConnectionError" in note


async def test_fallback_on_the_failures_the_caller_lists() -> None:
    by_type = FallbackModel(
        Stub("a", [ModelResponseError("garbled")]),
        Stub("b", ["ok"]),
        fallback_on=ModelResponseError,
    )
    assert (await by_type.complete("hi")).text == "ok"
    as_list = FallbackModel(
        Stub("a", [ModelResponseError("garbled")]),
        Stub("b", ["ok"]),
        fallback_on=[ModelHTTPError, ModelResponseError],
    )
    assert (await as_list.complete("hi")).text == "ok"
    # A 503 is no longer one of them.
    narrow = FallbackModel(Stub("a", [overloaded()]), Stub("b", []), fallback_on=ModelResponseError)
    with pytest.raises(RetryableModelError):
        await narrow.complete("hi")
    by_predicate = FallbackModel(
        Stub("a", [ModelHTTPError(404, "no such model")]),
        Stub("b", ["ok"]),
        fallback_on=lambda e: isinstance(e, ModelHTTPError) and e.status_code == 404,
    )
    assert (await by_predicate.complete("hi")).text == "ok"


def test_fallback_needs_a_model() -> None:
    with pytest.raises(ValueError, match="at least one model"):
        FallbackModel()


async def test_a_stream_falls_back_only_before_its_first_event() -> None:
    model = FallbackModel(Stub("a", [overloaded()]), Stub("b", ["streamed answer"]))
    events = await collect(model.stream_complete("hi"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["streamed answer"]
    done = events[-1]
    assert isinstance(done, CompletionDone)
    assert summary(done.completion.attempts) == [
        ("stub", "a", "RetryableModelError", False),
        ("stub", "b", None, False),
    ]

    b = Stub("b", ["never"])
    cut = FallbackModel(Stub("a", [Partial("half an ans", overloaded())]), b)
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in cut.stream_complete("hi"):
            seen.append(event)

    with pytest.raises(RetryableModelError) as caught:
        await consume()
    # The caller already has text from `a`: answering again from `b` would garble it.
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["half an ans"]
    assert b.requests == []
    assert summary(caught.value.attempts) == [("stub", "a", "RetryableModelError", False)]


# --- retry --------------------------------------------------------------------------------------


async def test_retry_waits_with_exponential_backoff_then_answers() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [overloaded(), ModelConnectionError("reset"), "finally"])
    policy = RetryPolicy(attempts=3, initial_delay=0.5, multiplier=2, jitter=False)
    completion = await RetryModel(inner, policy, sleep=sleeps).complete("hi")
    assert completion.text == "finally"
    assert sleeps.delays == [0.5, 1.0]
    assert summary(completion.attempts) == [
        ("stub", "a", "RetryableModelError", False),
        ("stub", "a", "ModelConnectionError", False),
        ("stub", "a", None, False),
    ]
    # Every attempt sent the same request.
    assert len({json.dumps([m.text for m in r.messages]) for r in inner.requests}) == 1


async def test_retry_delays_are_capped_and_jittered() -> None:
    sleeps = Sleeps()
    failures: list[Outcome] = [overloaded() for _ in range(5)]
    policy = RetryPolicy(attempts=6, initial_delay=1, max_delay=4, multiplier=3, jitter=True)
    await RetryModel(Stub("a", [*failures, "ok"]), policy, sleep=sleeps).complete("hi")
    ceilings = [1, 3, 4, 4, 4]
    assert len(sleeps.delays) == 5
    for delay, ceiling in zip(sleeps.delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling


async def test_retry_honours_retry_after() -> None:
    sleeps = Sleeps()
    policy = RetryPolicy(initial_delay=0.5, max_delay=10, jitter=False)
    inner = Stub("a", [overloaded(retry_after=7.5), "ok"])
    await RetryModel(inner, policy, sleep=sleeps).complete("hi")
    assert sleeps.delays == [7.5]
    # A shorter Retry-After than the backoff does not shorten the backoff.
    sleeps.delays.clear()
    inner = Stub("a", [overloaded(retry_after=0.1), "ok"])
    await RetryModel(inner, policy, sleep=sleeps).complete("hi")
    assert sleeps.delays == [0.5]


async def test_a_retry_after_beyond_the_max_delay_ends_the_retries() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [overloaded(retry_after=120), "never"])
    with pytest.raises(RetryableModelError) as caught:
        await RetryModel(inner, RetryPolicy(max_delay=30), sleep=sleeps).complete("hi")
    assert caught.value.retry_after == 120
    assert sleeps.delays == [] and len(inner.requests) == 1


async def test_retry_gives_up_after_its_attempts_with_every_attempt_attached() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [overloaded(), overloaded(), overloaded(), "never"])
    with pytest.raises(RetryableModelError) as caught:
        await RetryModel(inner, RetryPolicy(attempts=3), sleep=sleeps).complete("hi")
    assert len(sleeps.delays) == 2
    assert summary(caught.value.attempts) == [("stub", "a", "RetryableModelError", False)] * 3


async def test_retry_never_repeats_a_failure_that_is_not_transient() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [ModelHTTPError(401, "bad key"), "never"])
    with pytest.raises(ModelHTTPError):
        await RetryModel(inner, sleep=sleeps).complete("hi")
    assert sleeps.delays == [] and len(inner.requests) == 1
    custom = RetryPolicy(retry_on=ModelResponseError, jitter=False)
    inner = Stub("a", [ModelResponseError("cut"), "ok"])
    assert (await RetryModel(inner, custom, sleep=sleeps).complete("hi")).text == "ok"


async def test_a_stream_is_retried_only_before_its_first_event() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [ModelConnectionError("reset"), "streamed"])
    events = await collect(RetryModel(inner, sleep=sleeps).stream_complete("hi"))
    done = events[-1]
    assert isinstance(done, CompletionDone) and done.completion.text == "streamed"
    assert len(sleeps.delays) == 1 and len(done.completion.attempts) == 2

    inner = Stub("a", [Partial("par", overloaded()), "never"])
    with pytest.raises(RetryableModelError):
        await collect(RetryModel(inner, sleep=sleeps).stream_complete("hi"))
    assert len(inner.requests) == 1


@pytest.mark.parametrize(
    "settings",
    [
        {"attempts": 0},
        {"initial_delay": -1},
        {"initial_delay": 5, "max_delay": 1},
        {"multiplier": 0.5},
    ],
)
def test_a_policy_out_of_range_is_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="RetryPolicy"):
        RetryPolicy(**settings)


def test_a_model_whose_sdk_retries_is_refused() -> None:
    class SdkRetrying(Stub):
        max_retries = 2

    class Client:
        max_retries = 3

    class WithClient(Stub):
        client = Client()

    with pytest.raises(ValueError, match="max_retries=0"):
        RetryModel(SdkRetrying("a", []))
    with pytest.raises(ValueError, match="max_retries=3"):
        RetryModel(WithClient("a", []))
    # Found inside a stack of wrappers too.
    with pytest.raises(ValueError, match="twice over"):
        RetryModel(FallbackModel(Stub("a", []), CachedModel(SdkRetrying("b", []))))
    RetryModel(Stub("a", []))  # no SDK retries: accepted


# --- cache --------------------------------------------------------------------------------------


async def test_an_identical_request_is_answered_from_the_cache() -> None:
    inner = Stub("a", ["the answer"])
    model = CachedModel(inner)
    first = await model.complete("hi", settings={"temperature": 0})
    second = await model.complete("hi", settings={"temperature": 0})
    assert len(inner.requests) == 1
    assert second.text == "the answer" and second.model == "a-2026"
    assert (second.message.provider, second.message.api) == ("stub", "stub-api")
    assert first.usage.total_tokens == 10
    assert second.usage == Usage()  # nothing spent
    assert summary(second.attempts) == [("stub", "a", None, True)]
    # A copy: changing one answer changes neither the cache nor the first answer.
    assert second.message is not first.message
    second.message.parts.append(TextBlock(" changed"))
    assert (await model.complete("hi", settings={"temperature": 0})).text == "the answer"


async def test_provider_state_survives_the_cache() -> None:
    turn = AssistantMessage(
        parts=[
            ReasoningBlock("thinking", provider_state={"signature": "sig-1"}),
            TextBlock("done"),
        ],
        provider_state={"response_id": "r1"},
    )
    model = CachedModel(Stub("a", [turn]))
    await model.complete("hi")
    hit = (await model.complete("hi")).message
    assert hit.provider_state == {"response_id": "r1"}
    assert isinstance(hit.parts[0], ReasoningBlock)
    assert hit.parts[0].provider_state == {"signature": "sig-1"}


async def test_what_changes_the_answer_changes_the_key() -> None:
    inner = Stub("a", [f"answer {n}" for n in range(6)])
    model = CachedModel(inner)
    await model.complete("hi")
    await model.complete("hello")
    await model.complete("hi", settings={"temperature": 0.5})
    await model.complete("hi", settings={"extra": {"reasoning_effort": "low"}})
    await model.complete("hi", tool_choice="none")
    output = OutputSpec("answer", {"type": "object"})
    await model.send(ModelRequest([UserMessage.of("hi")], output=output))
    assert len(inner.requests) == 6
    # ...and what does not, does not: a timeout is how long to wait, not what to answer.
    assert (await model.complete("hi", settings={"timeout": 3})).text == "answer 0"
    assert len(inner.requests) == 6


async def test_the_key_covers_the_model() -> None:
    store = MemoryStore()
    await CachedModel(Stub("a", ["from a"]), store).complete("hi")
    other = await CachedModel(Stub("b", ["from b"]), store).complete("hi")
    assert other.text == "from b"
    elsewhere = await CachedModel(Stub("a", ["from acme"], provider="acme"), store).complete("hi")
    assert elsewhere.text == "from acme"


async def test_requests_with_tools_are_never_cached() -> None:
    @tool
    def lookup(q: str) -> str:
        """Look up."""
        return q

    inner = Stub("a", ["one", "two", "three", "four"])
    model = CachedModel(inner)
    assert (await model.complete("hi", tools=[lookup])).text == "one"
    assert (await model.complete("hi", tools=[lookup])).text == "two"
    native = ModelRequest([UserMessage.of("hi")], native_tools=[{"type": "web_search"}])
    assert (await model.send(native)).text == "three"
    raw_tools = {"extra": {"tools": [{"type": "openrouter:web_search"}]}}
    assert (await model.complete("hi", settings=raw_tools)).text == "four"
    assert len(model.store) == 0  # pyright: ignore[reportArgumentType]


async def test_unkeyable_settings_and_failures_are_not_cached() -> None:
    inner = Stub("a", ["one", "two", overloaded(), "three", "four"])
    model = CachedModel(inner)
    odd = {"extra": {"handle": object()}}
    assert (await model.complete("hi", settings=odd)).text == "one"
    assert (await model.complete("hi", settings=odd)).text == "two"
    with pytest.raises(RetryableModelError):
        await model.complete("hi")
    assert (await model.complete("hi")).text == "three"
    assert (await model.complete("hi")).text == "three"
    assert len(inner.requests) == 4


async def test_an_answer_that_ended_in_an_error_is_not_stored() -> None:
    class Failing(Stub):
        def _completion(self, outcome: str | AssistantMessage) -> Completion:
            completion = super()._completion(outcome)
            completion.finish_reason = "error"
            return completion

    inner = Failing("a", ["one", "two"])
    model = CachedModel(inner)
    await model.complete("hi")
    assert (await model.complete("hi")).text == "two"


async def test_a_streamed_miss_is_stored_and_a_hit_is_replayed_as_events() -> None:
    inner = Stub("a", ["cached words here"])
    model = CachedModel(inner)
    first = await collect(model.stream_complete("hi"))
    replay = await collect(model.stream_complete("hi"))
    assert len(inner.requests) == 1
    assert "".join(e.text for e in replay if isinstance(e, TextDelta)) == "cached words here"
    assert isinstance(first[-1], CompletionDone) and isinstance(replay[-1], CompletionDone)
    assert replay[-1].completion.attempts[0].cached
    # A plain request after a streamed one hits as well.
    assert (await model.complete("hi")).attempts[0].cached


async def test_memory_store_drops_the_least_recently_used_and_the_expired() -> None:
    now = [0.0]
    store = MemoryStore(max_entries=2, ttl=10, clock=lambda: now[0])
    await store.set("a", "A")
    await store.set("b", "B")
    assert await store.get("a") == "A"  # "b" is now the least recently used
    await store.set("c", "C")
    assert (await store.get("b"), len(store)) == (None, 2)
    now[0] = 9.9
    assert await store.get("a") == "A"
    now[0] = 10.0
    assert await store.get("a") is None and await store.get("c") is None
    store.clear()
    assert len(store) == 0
    with pytest.raises(ValueError, match="max_entries"):
        MemoryStore(max_entries=0)
    with pytest.raises(ValueError, match="ttl"):
        MemoryStore(ttl=0)


async def test_a_store_of_your_own() -> None:
    class DictStore:
        def __init__(self) -> None:
            self.data: dict[str, str] = {}

        async def get(self, key: str) -> str | None:
            return self.data.get(key)

        async def set(self, key: str, value: str) -> None:
            self.data[key] = value

    store = DictStore()
    assert isinstance(store, CompletionStore)
    inner = Stub("a", ["one", "two"])
    model = CachedModel(inner, store)
    await model.complete("hi")
    (key,) = store.data
    assert json.loads(store.data[key])["finish_reason"] == "stop"  # stored as text
    # A value the cache cannot read (another version, a corrupt entry) is a miss, then replaced.
    store.data[key] = "{not json"
    assert (await model.complete("hi")).text == "two"
    assert (await model.complete("hi")).attempts[0].cached
    for broken in ("[]", '{"message": "[]"}', store.data[key].replace('"stop"', '"odd"')):
        store.data[key] = broken
        inner.outcomes.append("again")
        assert (await model.complete("hi")).text == "again"


# --- stacks and the loop ------------------------------------------------------------------------


async def test_a_stack_of_wrappers_composes() -> None:
    sleeps = Sleeps()
    a = Stub("a", [overloaded(), overloaded()], provider="first")
    b = Stub("b", ["from b"], provider="second")
    policy = RetryPolicy(attempts=2, jitter=False)
    model = CachedModel(FallbackModel(RetryModel(a, policy, sleep=sleeps), b))
    assert (model.provider, model.model_name, model.api) == ("first", "a", "stub-api")
    completion = await model.complete("hi")
    assert completion.text == "from b" and completion.message.provider == "second"
    assert summary(completion.attempts) == [
        ("first", "a", "RetryableModelError", False),
        ("first", "a", "RetryableModelError", False),
        ("second", "b", None, False),
    ]
    assert sleeps.delays == [0.5]
    hit = await model.complete("hi")
    assert summary(hit.attempts) == [("second", "b", None, True)]
    assert hit.message.provider == "second"
    assert (len(a.requests), len(b.requests)) == (2, 1)


async def test_retrying_a_fallback_retries_the_whole_chain() -> None:
    sleeps = Sleeps()
    a = Stub("a", [overloaded(), "from a"])
    b = Stub("b", [overloaded()])
    model = RetryModel(FallbackModel(a, b), RetryPolicy(jitter=False), sleep=sleeps)
    completion = await model.complete("hi")
    assert completion.text == "from a"
    assert [a.model for a in completion.attempts] == ["a", "b", "a"]
    assert sleeps.delays == [0.5]


async def test_an_agent_runs_tools_through_a_fallback_model() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    down = Stub("down", [ModelConnectionError("refused")] * 2, provider="primary")
    backup = ScriptedModel([("add", {"a": 2, "b": 3}), "It is 5."])
    responses: list[Completion] = []
    agent = Agent(
        FallbackModel(down, backup),
        tools=[add],
        subscribers=[
            lambda e: responses.append(e.completion) if e.type == "model.response" else None
        ],
    )
    result = await agent.run("2 + 3?")
    assert result.text == "It is 5."
    assert [t.result for t in result.trace] == ["5"]
    assert [[a.model for a in c.attempts] for c in responses] == [
        ["down", "scripted"],
        ["down", "scripted"],
    ]
    # Every request reached the backup with the tools, and the down model saw the same ones.
    assert [t.name for t in backup.requests[0].tools] == ["add"]
    assert [d.name for d in down.requests[0].definitions] == ["add"]


async def test_run_loop_and_run_stream_with_a_cached_model() -> None:
    inner = Stub("a", ["Paris."])
    model = CachedModel(inner)
    first = await run_loop(model, "Capital of France?")
    second = await run_loop(model, "Capital of France?")
    assert first.text == second.text == "Paris."
    assert len(inner.requests) == 1
    assert first.usage.total_tokens == 10 and second.usage.total_tokens == 0
    deltas: list[str] = []
    async with Agent(model).run_stream("Capital of France?") as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                deltas.append(event.text)
    assert "".join(deltas) == "Paris." and stream.result.text == "Paris."
    assert len(inner.requests) == 1


def test_run_sync_with_a_retry_model() -> None:
    sleeps = Sleeps()
    inner = Stub("a", [overloaded(), "recovered"])
    result = Agent(RetryModel(inner, sleep=sleeps)).run_sync("hi")
    assert result.text == "recovered" and len(sleeps.delays) == 1


async def test_an_error_object_raised_twice_does_not_repeat_old_attempts() -> None:
    same = overloaded()
    model = RetryModel(
        FallbackModel(Stub("a", [same, same]), Stub("b", [same, "ok"])),
        RetryPolicy(jitter=False),
        sleep=Sleeps(),
    )
    completion = await model.complete("hi")
    assert [(a.model, a.ok) for a in completion.attempts] == [
        ("a", False),
        ("b", False),
        ("a", False),
        ("b", True),
    ]
