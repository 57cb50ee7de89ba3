"""Behaviour kept while making hot paths cheaper (issue 28); the figures live in benchmarks/."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    Completion,
    Message,
    ModelResponseEvent,
    ModelSettings,
    RunCompleted,
    RunConfig,
    RunEvent,
    RunResult,
    ScriptedModel,
    TextBlock,
    Usage,
    tokens,
    tool,
)
from toolwire.errors import ModelResponseError
from toolwire.messages import UserMessage
from toolwire.tokens import RequestSizer, definition_tokens
from toolwire.tokens import message_tokens as estimated_message_tokens
from toolwire.usage import Estimate, RunLimits, estimate_later, sum_usages

pytestmark = pytest.mark.anyio


async def test_a_results_repr_gives_the_historys_length_not_its_messages() -> None:
    # Python 3.11's asyncio.run formats the repr of the task holding the result as it ends.
    model = ScriptedModel(["the answer"])
    result = await Agent(model).run("a question nobody should see in the repr")
    text = repr(result)
    assert "messages=<2 messages>" in text and "trace=<0 calls>" in text
    assert "the answer" in text and "nobody should see" not in text


# --- usage estimates worked out only when read ---------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _script() -> ScriptedModel:
    return ScriptedModel([("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}), "7, then 3"])


class _Counting:
    """Counts the messages the estimate looks at."""

    def __init__(self) -> None:
        self.seen: list[Message] = []

    def __call__(self, message: Message) -> int:
        self.seen.append(message)
        return estimated_message_tokens(message)


async def test_a_runs_estimates_are_worked_out_when_read_each_message_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting = _Counting()
    monkeypatch.setattr(tokens, "message_tokens", counting)
    result = await Agent(_script(), tools=[add]).run("1 + 2?")
    assert counting.seen == []  # nobody read them: nothing was counted
    three_requests = result.usage.message_tokens
    # The three requests carried 1, 3 and 5 messages; each message was looked at once.
    assert counting.seen == result.messages[:5]
    sent = [estimated_message_tokens(m) for m in result.messages]
    assert three_requests == sum(sent[:1]) + sum(sent[:3]) + sum(sent[:5])
    assert result.usage.tool_definition_tokens == 3 * definition_tokens(add)
    assert len(counting.seen) == 5  # read again: kept


def test_asyncio_run_formatting_the_result_works_out_no_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Python 3.11's asyncio.run formats the repr of the task holding the result as it ends.
    counting = _Counting()
    monkeypatch.setattr(tokens, "message_tokens", counting)
    result = asyncio.run(Agent(_script(), tools=[add]).run("1 + 2?"))
    assert "usage=<3 requests," in repr(result)
    assert counting.seen == []
    assert result.usage.message_tokens > 0 and counting.seen


async def test_each_requests_usage_keeps_its_own_estimate() -> None:
    completions: list[Completion] = []

    def keep(event: RunEvent) -> None:
        if isinstance(event, ModelResponseEvent):
            completions.append(event.completion)

    result = await Agent(_script(), tools=[add]).run("1 + 2?", subscribers=[keep])
    sent = [estimated_message_tokens(m) for m in result.messages]
    # Read in reverse: a later request's figure does not need the earlier ones read first.
    figures = [(c.usage.tool_definition_tokens, c.usage.message_tokens) for c in completions][::-1]
    each = definition_tokens(add)
    assert figures[::-1] == [(each, sum(sent[:1])), (each, sum(sent[:3])), (each, sum(sent[:5]))]
    assert result.usage.message_tokens == sum(m for _, m in figures)


async def test_estimates_stay_those_of_what_was_sent_whatever_happens_later() -> None:
    reference = await Agent(_script(), tools=[add]).run("1 + 2?")
    expected = (reference.usage.tool_definition_tokens, reference.usage.message_tokens)
    # The caller changes the history it was handed before reading the figures.
    changed = await Agent(_script(), tools=[add]).run("1 + 2?")
    changed.messages.clear()
    assert (changed.usage.tool_definition_tokens, changed.usage.message_tokens) == expected
    # Summed, copied and written out unread, they carry the same figures.
    first = await Agent(_script(), tools=[add]).run("1 + 2?")
    second = await Agent(_script(), tools=[add]).run("1 + 2?")
    summed = first.usage + second.usage + Usage(tool_definition_tokens=1, message_tokens=2)
    assert (summed.tool_definition_tokens, summed.message_tokens) == (
        2 * expected[0] + 1,
        2 * expected[1] + 2,
    )
    copied = dataclasses.replace(first.usage, requests=9)
    assert (copied.tool_definition_tokens, copied.message_tokens) == expected
    loaded = RunResult.from_json(second.to_json())
    assert (loaded.usage.tool_definition_tokens, loaded.usage.message_tokens) == expected


async def test_a_usage_object_handed_back_twice_keeps_each_requests_figures() -> None:
    # A script may answer with one Completion object more than once.
    answer = Completion(
        message=AssistantMessage(parts=[TextBlock("same")]), usage=Usage(1, 1, requests=1)
    )
    model = ScriptedModel([answer, answer])
    short = await Agent(model).run("hi")
    short_figure = short.usage.message_tokens
    longer = await Agent(model).run("a much longer question, with many more words in it")
    assert longer.usage.message_tokens > short_figure
    assert short.usage.message_tokens == short_figure


def test_a_figure_set_by_hand_wins_over_the_estimate() -> None:
    usage = Usage(tool_definition_tokens=5, message_tokens=6)
    usage.message_tokens = 60
    assert (usage.tool_definition_tokens, usage.message_tokens) == (5, 60)


def test_the_sizer_follows_changed_tools_replaced_and_shrunk_histories() -> None:
    sizer = RequestSizer()
    history: list[Message] = [UserMessage.of("what is one plus two")]
    first = sizer.request([add], history)
    history.append(AssistantMessage(parts=[TextBlock("three")]))
    second = sizer.request([add, add], history)  # another list of tools
    handed: list[Message] = [UserMessage.of("a summary")]  # a handoff's new history
    third = sizer.request([add], handed)
    fourth = sizer.request([add], handed[:0])  # a history that shrank
    sizer.freeze()
    history.clear()  # the caller changes what it was handed: the figures stand
    each = definition_tokens(add)
    tokens_of = [estimated_message_tokens(m) for m in (UserMessage.of("what is one plus two"),)]
    answer = estimated_message_tokens(AssistantMessage(parts=[TextBlock("three")]))
    summary = estimated_message_tokens(UserMessage.of("a summary"))
    assert fourth.figures() == (each, 0)
    assert first.figures() == (each, tokens_of[0])
    assert second.figures() == (2 * each, tokens_of[0] + answer)
    assert third.figures() == (each, summary)
    assert first.join(second).join(third).figures() == (
        4 * each,
        2 * tokens_of[0] + answer + summary,
    )


class _One(Estimate):
    __slots__ = ()

    def figures(self) -> tuple[int, int]:
        return 1, 2


def test_a_long_chain_of_summed_estimates_is_worked_out_without_recursion() -> None:
    # Usages summed in a loop (the runs of a session, say) chain their estimates.
    total = Usage()
    for _ in range(5_000):
        total = total + estimate_later(Usage(requests=1), _One())
    assert (total.requests, total.tool_definition_tokens, total.message_tokens) == (
        5_000,
        5_000,
        10_000,
    )


# --- a run's usage summed once, when read ------------------------------------------------------


def test_sum_usages_is_the_chained_sum_estimates_and_tool_uses_included() -> None:
    parts = [
        estimate_later(Usage(3, 1, cache_read_tokens=2, requests=1), _One()),
        Usage(5, 2, reasoning_tokens=1, requests=1, server_tool_requests={"web_search": 2}),
        estimate_later(
            Usage(1, 1, cache_write_tokens=4, cache_write_1h_tokens=1, requests=1), _One()
        ),
        Usage(server_tool_requests={"web_search": 1, "code_execution": 1}),
    ]
    chained = Usage()
    for part in parts:
        chained = chained + part
    summed = sum_usages(parts)
    assert summed == chained and summed is not parts[0]
    assert (summed.tool_definition_tokens, summed.message_tokens) == (2, 4)
    assert summed.server_tool_requests == {"web_search": 3, "code_execution": 1}
    assert sum_usages([]) == Usage()


async def test_a_runs_usage_is_its_requests_summed_and_a_fresh_object() -> None:
    completions: list[Completion] = []

    def keep(event: RunEvent) -> None:
        if isinstance(event, ModelResponseEvent):
            completions.append(event.completion)

    result = await Agent(_script(), tools=[add]).run("1 + 2?", subscribers=[keep])
    chained = Usage()
    for completion in completions:
        chained = chained + completion.usage
    assert result.usage == chained and result.usage.requests == 3
    assert all(result.usage is not c.usage for c in completions)
    assert result.usage_by_agent == {"agent": result.usage}
    # A run whose first request failed still hands out a Usage of its own.
    ended: list[RunResult] = []

    def finished(event: RunEvent) -> None:
        if isinstance(event, RunCompleted):
            ended.append(event.result)

    for _ in range(2):
        with pytest.raises(ModelResponseError):
            await Agent(ScriptedModel([]), tools=[add]).run("hi", subscribers=[finished])
    assert [r.stop_reason for r in ended] == ["error", "error"]
    assert ended[0].usage == Usage() and ended[0].usage is not ended[1].usage


# --- RunConfig keeps only the options given ------------------------------------------------------


def test_a_config_reads_unset_options_as_the_defaults_and_stays_frozen() -> None:
    config = RunConfig(max_tokens=100)
    defaults = {f.name: f.default for f in dataclasses.fields(RunConfig)}
    for name, default in defaults.items():
        if name not in ("max_tokens", "settings"):
            assert getattr(config, name) == default, name
    # Settings of its own, as each config had (changing one changes no other config).
    assert config.settings == ModelSettings() and config.settings is not RunConfig().settings
    assert config == dataclasses.replace(config) and config != RunConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_tokens = 5  # type: ignore[misc]
    bad: dict[str, Any] = {"max_token": 5}
    with pytest.raises(TypeError, match="unknown run option 'max_token'"):
        RunConfig(**bad)


def test_a_configs_limits_follow_every_change() -> None:
    assert RunConfig().limits == RunLimits()
    config = RunConfig(max_tokens=100)
    assert config.limits == RunLimits(max_tokens=100)
    changed = config.replace(max_iterations=2, raise_on_limit=True)
    assert changed.limits == RunLimits(max_iterations=2, max_tokens=100, raise_on_limit=True)
    assert config.limits == RunLimits(max_tokens=100)  # the original is untouched
    assert changed.replace(name="other").limits == changed.limits
    assert dataclasses.replace(changed, max_tokens=7).limits.max_tokens == 7
    with pytest.raises(ValueError, match="max_tokens must be positive"):
        changed.replace(max_tokens=0)
