"""The adapter contract: what every provider adapter does with answers good and bad, written once
and run over every adapter (test_contract_wires.ADAPTERS, and the Chat-compatible providers where
they differ) and both doors, `complete` and `stream_complete`, through the real SDK against a real
local server (conftest.HostileServer). Cases an adapter fails today are listed, with the finding,
in test_contract_wires.GAPS and left out for that adapter only.

- call ids: unique and the same plain or streamed (a missing id made up, a repeated one suffixed);
- usage parsed, zero or absent usage read as zero; finish reasons normalised, the raw one kept;
- errors typed: `ModelHTTPError` with the status and the provider's message, 429/5xx retryable
  with `retry_after`, a refused or silent server a `ModelConnectionError`;
- a broken stream is a typed error and never a half completion; a malformed answer is a
  `ModelResponseError`; a consumer that stops early closes the response.

Adding an adapter: write its `Wire` (how its API writes answers, its factory) and add it to
`ADAPTERS`; every case then runs against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from model_servers import Cut, Hangup, Hold, HostileServer, Silence
from test_contract_wires import ADAPTERS, COMPATIBLE, GAPS, Call, ChatWire, Turn, Wire

from recordings.replay import Reply
from toolwire import Agent, RunResult, tool
from toolwire.errors import (
    ModelConnectionError,
    ModelError,
    ModelHTTPError,
    ModelRequestsForbidden,
    ModelResponseError,
    RetryableModelError,
)
from toolwire.messages import ToolResultMessage
from toolwire.models import forbid_model_requests
from toolwire.models.base import (
    Completion,
    CompletionDone,
    ModelBase,
    ModelSettings,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)

pytestmark = pytest.mark.anyio

Serve = Callable[..., HostileServer]
MODES = [pytest.param(False, id="plain"), pytest.param(True, id="stream")]
EVERY_WIRE = [pytest.param(w, id=w.name) for w in ADAPTERS + COMPATIBLE]
WITH_OPENROUTER = [pytest.param(w, id=w.name) for w in ADAPTERS + COMPATIBLE[1:2]]
"""OpenRouter writes an upstream failure as an error object in a 200 answer."""


@pytest.fixture(params=[pytest.param(w, id=w.name) for w in ADAPTERS])
def wire(request: pytest.FixtureRequest) -> Wire:
    return request.param


@pytest.fixture(params=MODES)
def stream(request: pytest.FixtureRequest) -> bool:
    return request.param


def matrix(case: str) -> list[Any]:
    """Every adapter in both modes, less the pairs listed as gaps for `case` (see `GAPS`)."""
    return [
        pytest.param(w, s, id=f"{w.name}-{m}")
        for w in ADAPTERS
        for s, m in ((False, "plain"), (True, "stream"))
        if f"{case}:{m}" not in w.gaps
    ]


def streamed(case: str) -> list[Any]:
    """Every adapter, streaming, less those listed as gaps for `case`."""
    return [pytest.param(w, id=w.name) for w in ADAPTERS if f"{case}:stream" not in w.gaps]


def gap(wire: Wire, case: str, stream: bool) -> bool:
    return f"{case}:{'stream' if stream else 'plain'}" in wire.gaps


async def ask(model: ModelBase, stream: bool, **kwargs: Any) -> Completion:
    """One request through the plain or the streamed door, bounded in time."""
    with anyio.fail_after(20):
        if not stream:
            return await model.complete("hi", **kwargs)
        events = [e async for e in model.stream_complete("hi", **kwargs)]
    assert isinstance(events[-1], CompletionDone)
    assert not any(isinstance(e, CompletionDone) for e in events[:-1])
    return events[-1].completion


async def consume(model: ModelBase, seen: list[StreamEvent], **kwargs: Any) -> None:
    """Stream into `seen`, so that a test can look at what came before an error."""
    with anyio.fail_after(20):
        async for event in model.stream_complete("hi", **kwargs):
            seen.append(event)


async def run_streamed(agent: Agent, prompt: str) -> RunResult:
    async with agent.run_stream(prompt) as run:
        async for _ in run:
            pass
    return run.result


def joined_pieces(events: list[StreamEvent]) -> dict[int, str]:
    joined: dict[int, str] = {}
    for event in events:
        if isinstance(event, ToolCallDelta):
            joined[event.index] = joined.get(event.index, "") + event.arguments
    return joined


def test_every_case_left_out_is_a_listed_finding() -> None:
    left_out = {g for w in ADAPTERS + COMPATIBLE for g in w.gaps}
    assert left_out <= set(GAPS)
    assert all(g.endswith((":plain", ":stream")) for g in GAPS)


# --- good answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", EVERY_WIRE)
async def test_a_text_answer_with_its_usage_given_zero_or_absent(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    server = serve(
        wire.reply(Turn(text="Hello there"), stream),
        wire.reply(Turn(text="zero", usage=(0, 0)), stream),
        wire.reply(Turn(text="absent", usage=None), stream),
    )
    model = wire.connect(server.base_url)
    completion = await ask(model, stream)
    assert completion.text == "Hello there" and completion.tool_calls == []
    assert completion.finish_reason == "stop"
    usage = completion.usage
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (10, 5, 1)
    assert completion.message.provider == wire.provider
    zero = await ask(model, stream)
    assert (zero.usage.input_tokens, zero.usage.output_tokens, zero.usage.requests) == (0, 0, 1)
    if wire.usage_required[stream]:
        # The SDK's answer type requires usage (the API always sends it): a typed refusal.
        with pytest.raises(ModelResponseError):
            await ask(model, stream)
        return
    absent = await ask(model, stream)
    assert absent.text == "absent"
    assert (absent.usage.input_tokens, absent.usage.output_tokens) == (0, 0)
    assert absent.usage.requests == 1


async def test_finish_reasons_are_normalised_and_the_raw_one_kept(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    if not wire.finishes:
        assert wire.name == "mistral-conversations"  # no finish reason on this API's wire
        return
    server = serve(*(wire.reply(Turn(text="x", finish=raw), stream) for raw, _ in wire.finishes))
    model = wire.connect(server.base_url)
    for raw, normalised in wire.finishes:
        completion = await ask(model, stream)
        assert (completion.finish_reason, completion.raw_finish_reason) == (normalised, raw)
        assert completion.text == "x"


async def test_call_ids_are_unique_and_the_same_plain_or_streamed(wire: Wire, serve: Serve) -> None:
    first_id = "abcdefghi" if wire.ids_required else None  # else made up
    calls = [
        Call(first_id, "a", "{}"),
        Call("dupdupdup", "b", '{"x": 1}'),
        Call("dupdupdup", "c", '{"y": 2}'),
    ]
    turn = Turn(calls=calls)
    server = serve(wire.reply(turn, False), wire.reply(turn, False), wire.reply(turn, True))
    model = wire.connect(server.base_url)
    first = await ask(model, False)
    again = await ask(model, False)
    events: list[StreamEvent] = []
    await consume(model, events)
    done = events[-1]
    assert isinstance(done, CompletionDone)
    streamed = done.completion
    ids = [c.id for c in first.tool_calls]
    assert ids[0] and ids[0] == (first_id or ids[0]) and ids[1:] == ["dupdupdup", "dupdupdup_2"]
    assert [c.id for c in again.tool_calls] == [c.id for c in streamed.tool_calls] == ids
    if first_id is None:  # made of the response id and the call's position
        assert ids[0].endswith(f"_{wire.response_id}_0")
    for completion in (first, streamed):
        assert [(c.name, c.args) for c in completion.tool_calls] == [
            ("a", {}),
            ("b", {"x": 1}),
            ("c", {"y": 2}),
        ]
        assert completion.finish_reason == "tool_calls"
    pieces = {i: json.loads(a) for i, a in joined_pieces(events).items()}
    assert pieces == {0: {}, 1: {"x": 1}, 2: {"y": 2}}


@pytest.mark.parametrize("wire", streamed("announced-ids"))
async def test_a_streamed_call_announces_the_id_the_turn_keeps(wire: Wire, serve: Serve) -> None:
    calls = [Call("abcdefghi", "a", "{}"), Call("abcdefghi", "b", "{}")]
    server = serve(wire.reply(Turn(calls=calls), True))
    events: list[StreamEvent] = []
    await consume(wire.connect(server.base_url), events)
    done = events[-1]
    assert isinstance(done, CompletionDone)
    kept = [c.id for c in done.completion.tool_calls]
    assert kept == ["abcdefghi", "abcdefghi_2"]
    announced = [(e.index, e.id) for e in events if isinstance(e, ToolCallDelta) and e.id]
    assert announced == [(0, "abcdefghi"), (1, "abcdefghi_2")]


CHAT_AT_ONE_INDEX = [pytest.param(w, id=w.name) for w in (ADAPTERS[0], COMPATIBLE[-1])]
"""OpenAI and Ollama: the chat parser, fed calls that all stream at index 0."""


@pytest.mark.parametrize("wire", CHAT_AT_ONE_INDEX)
async def test_a_repeated_id_written_on_every_piece_still_tells_the_calls_apart(
    wire: Wire, serve: Serve
) -> None:
    assert isinstance(wire, ChatWire)

    def piece(name: str, args: str) -> dict[str, Any]:
        call = {"index": 0, "id": "dup", "type": "function"}
        return wire.chunk({"tool_calls": [{**call, "function": {"name": name, "arguments": args}}]})

    events = [piece("a", '{"x": '), piece("a", "1}"), piece("b", '{"y": '), piece("b", "2}")]
    server = serve(wire.sse([*events, wire.chunk({}, "tool_calls"), "[DONE]"]))
    seen: list[StreamEvent] = []
    await consume(wire.connect(server.base_url), seen)
    done = seen[-1]
    assert isinstance(done, CompletionDone)
    calls = [(c.id, c.name, c.arguments) for c in done.completion.tool_calls]
    assert calls == [("dup", "a", '{"x": 1}'), ("dup_2", "b", '{"y": 2}')]
    announced = [(e.index, e.id) for e in seen if isinstance(e, ToolCallDelta)]
    assert announced == [(0, "dup"), (0, "dup"), (1, "dup_2"), (1, "dup_2")]


@pytest.mark.parametrize(
    "wire", [pytest.param(w, id=w.name) for w in ADAPTERS + COMPATIBLE if w.interleaved()]
)
async def test_parallel_streamed_calls_never_mix_their_arguments(wire: Wire, serve: Serve) -> None:
    events = wire.interleaved()
    assert events is not None
    server = serve(wire.sse(events))
    seen: list[StreamEvent] = []
    await consume(wire.connect(server.base_url), seen)
    done = seen[-1]
    assert isinstance(done, CompletionDone)
    calls = [(c.id, c.name, c.arguments) for c in done.completion.tool_calls]
    assert calls == [("c0", "a", '{"x": 1}'), ("c1", "b", '{"y": 2}')]
    assert joined_pieces(seen) == {0: '{"x": 1}', 1: '{"y": 2}'}


async def test_arguments_that_are_not_json_are_kept_and_answered_with_an_error(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    if not wire.broken_args[stream]:
        # This API sends arguments as an object here: they cannot be broken JSON.
        assert wire.name in ("anthropic", "google", "vertex")
        return
    broken = '{"city": "Par'
    seen: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        seen.append(city)
        return "sunny"

    calls = Turn(calls=[Call("abcdefghi", "get_weather", broken)])
    server = serve(wire.reply(calls, stream), wire.reply(Turn(text="Sorry."), stream))
    agent = Agent(wire.connect(server.base_url), tools=[get_weather])
    with anyio.fail_after(20):
        result = await (run_streamed(agent, "weather?") if stream else agent.run("weather?"))
    assert seen == [] and result.text == "Sorry."
    (call,) = result.messages[1].tool_calls  # type: ignore[union-attr]
    assert call.arguments == broken
    answer = result.messages[2]
    assert isinstance(answer, ToolResultMessage) and answer.is_error
    assert answer.call_id == call.id and "not valid JSON" in answer.text
    assert len(server.received) == 2


# --- malformed answers ----------------------------------------------------------------------------


@pytest.mark.parametrize(("wire", "stream"), matrix("nameless"))
async def test_a_call_without_a_name_is_a_response_error(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    server = serve(wire.reply(Turn(calls=[Call("abcdefghi", None, "{}")]), stream))
    with pytest.raises(ModelResponseError):
        await ask(wire.connect(server.base_url), stream)


MALFORMED = {
    "html-as-json": Reply(200, b"<html>gateway</html>", {"content-type": "application/json"}),
    "html": Reply(200, b"<html>gateway</html>", {"content-type": "text/html"}),
    "empty": Reply(200, b"", {"content-type": "application/json"}),
    "a-list": Reply.of_json(200, ["a", "list"]),
    "another-shape": Reply.of_json(200, {"unexpected": True}),
}


UNREADABLE_STREAMS = [
    "data: {not json\n\n",
    'data: ["a", "list"]\n\n',
    'data: {"choices": "nonsense"}\n\n',
    "<html>gateway</html>",
]


async def test_a_malformed_answer_or_stream_is_a_response_error(wire: Wire, serve: Serve) -> None:
    cases = [case for case in MALFORMED if not gap(wire, case, False)]
    streams = [Reply.of_sse(body) for body in UNREADABLE_STREAMS]
    server = serve(*(MALFORMED[case] for case in cases), *streams)
    model = wire.connect(server.base_url)
    for case in cases:
        with pytest.raises(ModelResponseError):
            await ask(model, False)
        assert len(server.received) == cases.index(case) + 1
    for body in UNREADABLE_STREAMS:
        seen: list[StreamEvent] = []
        with pytest.raises(ModelResponseError):
            await consume(model, seen)
        assert not any(isinstance(e, CompletionDone) for e in seen), body


@pytest.mark.parametrize("wire", WITH_OPENROUTER)
async def test_an_error_object_in_a_200_answer_is_an_error(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    body = wire.error("upstream failed", 502)
    server = serve(Reply.of_json(200, body) if not stream else wire.sse([body]))
    seen: list[StreamEvent] = []
    model = wire.connect(server.base_url)
    with pytest.raises(ModelError) as caught:
        await (consume(model, seen) if stream else model.complete("hi"))
    assert isinstance(caught.value, ModelResponseError | ModelHTTPError)
    assert not any(isinstance(e, CompletionDone) for e in seen)


# --- broken streams -------------------------------------------------------------------------------

_HALF = Turn(text="Let me look.", calls=[Call("abcdefghi", "lookup", '{"query": "paris"}')])


async def test_a_stream_that_ends_before_the_turn_does_is_a_response_error(
    wire: Wire, serve: Serve
) -> None:
    server = serve(wire.sse(wire.unfinished(_HALF)), wire.sse(wire.unfinished(_HALF)))
    model = wire.connect(server.base_url)
    seen: list[StreamEvent] = []
    with pytest.raises(ModelResponseError):
        await consume(model, seen)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, CompletionDone) for e in seen)
    # The loop hands the error on: no half turn enters the history.
    with anyio.fail_after(20), pytest.raises(ModelResponseError):
        await run_streamed(Agent(model), "hi")


async def test_a_connection_cut_mid_stream_is_a_response_error(wire: Wire, serve: Serve) -> None:
    server = serve(Cut(wire.sse_text(wire.unfinished(_HALF)).encode()))
    seen: list[StreamEvent] = []
    with pytest.raises(ModelResponseError):
        await consume(wire.connect(server.base_url), seen)
    assert any(isinstance(e, TextDelta) for e in seen)  # what came before the cut
    assert not any(isinstance(e, CompletionDone) for e in seen)


async def test_an_error_event_inside_a_stream_is_typed(wire: Wire, serve: Serve) -> None:
    events = [*wire.unfinished(Turn(text="Hel")), wire.stream_error("overloaded mid-answer")]
    server = serve(wire.sse(events))
    seen: list[StreamEvent] = []
    with pytest.raises(ModelError, match="overloaded mid-answer") as caught:
        await consume(wire.connect(server.base_url), seen)
    assert isinstance(caught.value, wire.stream_error_type)
    assert not any(isinstance(e, CompletionDone) for e in seen)


@pytest.mark.parametrize("wire", streamed("early-close"))
async def test_a_consumer_that_stops_early_closes_the_response(wire: Wire, serve: Serve) -> None:
    held = Hold(wire.sse_text(wire.unfinished(Turn(text="Hello there"))).encode())
    server = serve(held)
    events = wire.connect(server.base_url).stream_complete("hi")
    with anyio.fail_after(20):
        assert isinstance(await anext(events), TextDelta)
        await events.aclose()
    # Closed by aclose() itself, not later by the garbage collector.
    assert await anyio.to_thread.run_sync(held.hung_up.wait, 10)


# --- HTTP errors, refused and silent servers ------------------------------------------------------


@pytest.mark.parametrize("wire", EVERY_WIRE)
async def test_client_errors_carry_the_status_and_the_providers_message(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    statuses = [400, 401, 403, 404, 413, 422]
    server = serve(*(Reply.of_json(s, wire.error(f"provider says {s}", s)) for s in statuses))
    model = wire.connect(server.base_url)
    for status in statuses:
        with pytest.raises(ModelHTTPError) as caught:
            await ask(model, stream)
        error = caught.value
        assert type(error) is ModelHTTPError  # never retryable, 401 and 403 included
        assert (error.status_code, error.provider) == (status, wire.provider)
        assert f"provider says {status}" in error.message and error.body
        assert str(error) == f"{wire.provider} HTTP {status}: {error.message}"


RETRYABLE = [
    (429, {"retry-after": "7"}, 7.0),
    (429, {"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    (429, {}, None),
    (500, {}, None),
    (503, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
    (529, {"retry-after": "2"}, 2.0),
]


BODILESS = {
    "bodiless-502": Reply(502, b"", {}),
    "bodiless-503": Reply(503, b"upstream connect error", {"content-type": "text/plain"}),
    "bodiless-504": Reply(504, b"<html>timeout</html>", {"content-type": "text/html"}),
}


async def test_rate_limits_and_server_errors_are_retryable_with_retry_after(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    bodiless = [reply for case, reply in BODILESS.items() if not gap(wire, case, stream)]
    server = serve(
        *(Reply.of_json(s, wire.error("slow down", s), h) for s, h, _ in RETRYABLE), *bodiless
    )
    model = wire.connect(server.base_url)
    for status, _, wait in RETRYABLE:
        with pytest.raises(RetryableModelError) as caught:
            await ask(model, stream)
        error = caught.value
        assert (error.status_code, error.retry_after) == (status, wait)
        assert error.provider == wire.provider and "slow down" in error.message
    for reply in bodiless:  # a body that is not JSON, or none
        with pytest.raises(RetryableModelError) as caught:
            await ask(model, stream)
        assert caught.value.status_code == reply.status
        assert caught.value.provider == wire.provider
    assert len(server.received) == len(RETRYABLE) + len(bodiless)  # the SDK retries nothing


@pytest.mark.parametrize(("wire", "stream"), matrix("no-answer"))
async def test_a_refused_or_dropped_connection_is_a_connection_error(
    wire: Wire, stream: bool, refused_url: str, serve: Serve
) -> None:
    with pytest.raises(ModelConnectionError) as caught:
        await ask(wire.connect(refused_url), stream)
    assert caught.value.provider == wire.provider
    # One wording for every provider, with the address tried (a wrong base URL shows at once).
    origin = refused_url.split("/")[2]
    assert str(caught.value).startswith(f"cannot reach {wire.provider} at http://{origin}/")
    server = serve(Hangup())  # reads the request, closes without a status line
    with pytest.raises(ModelConnectionError):
        await ask(wire.connect(server.base_url), stream)
    assert len(server.received) == 1  # the SDK's own retries are off


async def test_a_server_that_never_answers_times_out(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    server = serve(Silence(), Silence())
    # The model's own timeout, then one given for a request.
    with pytest.raises(ModelConnectionError, match="in time") as caught:
        await ask(wire.connect(server.base_url, timeout=0.05), stream)
    assert caught.value.provider == wire.provider
    with pytest.raises(ModelConnectionError, match="in time"):
        await ask(wire.connect(server.base_url), stream, settings=ModelSettings(timeout=0.05))


# --- the client's life ----------------------------------------------------------------------------


async def test_forbidden_requests_never_leave_and_a_closed_model_opens_again(
    wire: Wire, stream: bool, serve: Serve
) -> None:
    server = serve(wire.reply(Turn(text="one"), stream), wire.reply(Turn(text="two"), stream))
    model = wire.connect(server.base_url)
    with forbid_model_requests(), pytest.raises(ModelRequestsForbidden):
        await ask(model, stream)
    assert server.received == []
    assert (await ask(model, stream)).text == "one"
    await model.aclose()  # type: ignore[attr-defined]
    assert (await ask(model, stream)).text == "two"


async def test_each_run_sync_gets_a_client_of_its_own_event_loop(wire: Wire, serve: Serve) -> None:
    server = serve(*(wire.reply(Turn(text=f"answer {n}"), False) for n in (1, 2)))
    agent = Agent(wire.make(server.base_url))
    # Each run_sync starts (and ends) its own event loop, here in a worker thread.
    first = await anyio.to_thread.run_sync(agent.run_sync, "one")
    second = await anyio.to_thread.run_sync(agent.run_sync, "two")
    assert (first.text, second.text) == ("answer 1", "answer 2")
