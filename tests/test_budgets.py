"""Output budgets through the loop, offline: a long tool result reaches the model cut, with a
marker and a handle; `read_result` pages through the whole of it; bad reads are error results the
model sees while the run goes on."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    FunctionModel,
    ImagePart,
    Message,
    OutputBudget,
    ScriptedModel,
    TextPart,
    ToolResult,
    ToolResultMessage,
    dump_history,
    load_history,
    tool,
)
from toolwire.budgets import FileResultStore, MemoryResultStore, ResultStore

pytestmark = pytest.mark.anyio

LINES = "\n".join(f"row {i}: value {i * i}" for i in range(3000))


@tool
def report() -> str:
    """A long report."""
    return LINES


@tool
def short() -> str:
    """A short answer."""
    return "fine"


def handle_in(text: str) -> str:
    found = re.search(r'handle="(r_[0-9a-f]{16})"', text)
    assert found is not None, text
    return found.group(1)


def results(messages: Sequence[Message]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def reader(*reads: dict[str, Any], tool_name: str = "report") -> FunctionModel:
    """Calls `tool_name`, then `read_result` with each of `reads` (the handle filled in), then
    answers with the texts it was given."""

    def decide(messages: list[Message], request: Any) -> Any:
        got = results(messages)
        if not got:
            return [(tool_name, {})]
        if len(got) == 1 and reads:
            handle = handle_in(got[0].text)
            return [("read_result", {"handle": handle, **r}) for r in reads]
        return "done"

    return FunctionModel(decide)


async def test_a_long_result_reaches_the_model_as_head_marker_and_tail() -> None:
    model = ScriptedModel([("report", {}), "ok"])
    result = await Agent(model, tools=[report], output_budget=200).run("go")
    sent = model.requests[-1].messages[-1]
    assert isinstance(sent, ToolResultMessage)
    text = sent.text
    assert len(text) < 200 * 4 + 400  # the budget's characters plus the marker
    assert text.startswith("row 0: value 0\n")
    assert text.endswith("row 2999: value 8994001")
    omitted = re.search(r"\[\.\.\. (\d+) of (\d+) characters \(about (\d+) tokens\)", text)
    assert omitted is not None and int(omitted.group(2)) == len(LINES)
    assert "read_result(" in text
    # Cut at line ends: whole lines on either side of the marker.
    before, after = text.split("\n[... ")[0], text.split(" ...]\n")[1]
    assert before.split("\n")[-1] in LINES.split("\n")
    assert after.split("\n")[0] in LINES.split("\n")
    # The caller keeps the whole result; the model saw only the cut one.
    kept = results(result.messages)[0]
    assert kept.text == text and kept.full_content is not None
    assert ToolResult(content=kept.full_content).text == LINES
    assert "read_result" in [t.name for t in model.requests[0].tools]


async def test_results_within_budget_and_runs_without_one_are_untouched() -> None:
    model = ScriptedModel([("short", {}), "ok"])
    result = await Agent(model, tools=[short], output_budget=50).run("go")
    assert results(result.messages)[0].full_content is None
    plain = ScriptedModel([("report", {}), "ok"])
    whole = await Agent(plain, tools=[report]).run("go")
    assert results(whole.messages)[0].text == LINES
    assert [t.name for t in plain.requests[0].tools] == ["report"]


async def test_read_result_pages_by_offset_and_searches() -> None:
    model = reader({"offset": 100, "limit": 40}, {"query": "row 2500:"}, {"query": "VALUE 4"})
    result = await Agent(model, tools=[report], output_budget=100).run("go")
    page, found, many = results(result.messages)[1:]
    assert not page.is_error
    assert page.text == (
        f"[{handle_in(results(result.messages)[0].text)}: characters 100 to 140 of {len(LINES)}; "
        f"read on with offset=140]\n" + LINES[100:140]
    )
    assert "1 matching lines" in found.text and "row 2500: value 6250000" in found.text
    assert "line 2501 (offset " in found.text
    # Many matches: bounded by the budget, with a note that more exist.
    assert "matching lines, the first" in many.text and len(many.text) < 100 * 4 + 200
    assert result.stop_reason == "completed" and result.text == "done"


async def test_bad_reads_are_error_results_and_the_run_goes_on() -> None:
    def decide(messages: list[Message], request: Any) -> Any:
        got = results(messages)
        if not got:
            return [("report", {})]
        if len(got) == 1:
            handle = handle_in(got[0].text)
            return [
                ("read_result", {"handle": "r_0123456789abcdef"}),
                ("read_result", {"handle": "../../etc/passwd"}),
                ("read_result", {"handle": handle, "offset": len(LINES)}),
                ("read_result", {"handle": handle, "query": "no such words here"}),
                ("read_result", {"handle": handle, "part": 0}),
                ("read_result", {"handle": handle, "offset": -1}),
            ]
        return "recovered"

    result = await Agent(FunctionModel(decide), tools=[report], output_budget=100).run("go")
    errors = results(result.messages)[1:]
    assert all(e.is_error for e in errors)
    unknown, shape, past, nothing, part, negative = (e.text for e in errors)
    assert "no result is kept under 'r_0123456789abcdef'" in unknown and "expired" in unknown
    assert "is not a result handle" in shape
    assert f"offset {len(LINES)} is past the end" in past and f"{len(LINES)} characters" in past
    assert "no line of result" in nothing and "no such words here" in nothing
    assert "has no non-text parts" in part
    assert "offset must be 0 or more" in negative
    assert result.stop_reason == "completed" and result.text == "recovered"


async def test_the_cut_is_the_same_every_time_so_the_history_prefix_never_changes() -> None:
    first = await Agent(ScriptedModel([("report", {}), "a"]), tools=[report], output_budget=90).run(
        "go"
    )
    again = await Agent(ScriptedModel([("report", {}), "a"]), tools=[report], output_budget=90).run(
        "go"
    )
    assert results(first.messages)[0].content == results(again.messages)[0].content
    # Within a run, every later request carries the cut result exactly as first sent.
    model = reader({"offset": 0}, {"offset": 400})
    await Agent(model, tools=[report], output_budget=90).run("go")
    assert len(model.requests) == 3
    second, third = model.requests[1].messages, model.requests[2].messages
    assert third[: len(second)] == second


async def test_non_text_parts_beyond_max_media_are_named_and_readable() -> None:
    images = [ImagePart(data=bytes([i]) * 8, mime_type="image/png") for i in range(5)]

    @tool
    def shots() -> ToolResult:
        """Screenshots."""
        return ToolResult(content=[TextPart("five shots"), *images])

    model = reader({"part": 3}, {"part": 9}, tool_name="shots")
    budget = OutputBudget(tokens=1000, max_media=2)
    result = await Agent(model, tools=[shots], output_budget=budget).run("go")
    cut, part, missing = results(result.messages)
    assert cut.content[1:] == images[:2]
    assert cut.text.startswith("five shots")
    assert "3 more non-text parts left out (2: image (image/png)" in cut.text
    assert part.content[1] == images[3] and not part.is_error
    assert missing.is_error and "has 5 non-text parts (0 to 4)" in missing.text


async def test_per_tool_budgets_and_a_share_of_the_context_window() -> None:
    exempt = OutputBudget(tokens=50, per_tool={"report": None})
    model = ScriptedModel([("report", {}), "ok"])
    result = await Agent(model, tools=[report], output_budget=exempt).run("go")
    assert results(result.messages)[0].text == LINES
    assert exempt.limit("other") == 50
    shared = OutputBudget(tokens=None, share=0.01, context_window=20_000)
    assert shared.limit("report") == 200
    both = OutputBudget(tokens=100, share=0.5, context_window=20_000)
    assert both.limit("report") == 100  # the smaller applies
    # The window from genai-prices' tables when the model is known there.
    assert OutputBudget(tokens=None, share=0.05).limit("x", "anthropic", "claude-sonnet-4-5") == (
        10_000
    )
    # A share of a window nobody knows is still a budget.
    assert OutputBudget(tokens=None, share=0.05).limit("x", "test", "unknown") == 4000
    with pytest.raises(ValueError, match="needs tokens, share or per_tool"):
        OutputBudget(tokens=None)
    with pytest.raises(ValueError, match="share must be"):
        OutputBudget(share=2.0)


async def test_an_expired_result_is_an_error_the_model_reads() -> None:
    budget = OutputBudget(tokens=50, store=MemoryResultStore(max_results=1))

    def decide(messages: list[Message], request: Any) -> Any:
        got = results(messages)
        if len(got) < 2:
            return [("report", {})] if not got else [("other", {})]
        if len(got) == 2:
            return [("read_result", {"handle": handle_in(got[0].text)})]
        return "done"

    @tool
    def other() -> str:
        """Another long text."""
        return "x" * 5000

    result = await Agent(FunctionModel(decide), tools=[report, other], output_budget=budget).run(
        "go"
    )
    expired = results(result.messages)[-1]
    assert expired.is_error and "expired" in expired.text


async def test_a_file_store_keeps_results_for_another_agent(tmp_path: Path) -> None:
    store = FileResultStore(tmp_path / "results")
    model = ScriptedModel([("report", {}), "ok"])
    result = await Agent(
        model, tools=[report], output_budget=OutputBudget(store=store, tokens=60)
    ).run("go")
    handle = handle_in(results(result.messages)[0].text)
    assert (tmp_path / "results" / f"{handle}.json").is_file()
    # Another agent (another process, with the same folder) reads it on.
    budget = OutputBudget(store=FileResultStore(tmp_path / "results"), tokens=60)
    stored = await budget.read(handle, 2000, 10)
    assert stored.text.endswith(LINES[2000:2010])
    with pytest.raises(ValueError, match="not a result handle"):
        await store.get("../secrets")
    assert await store.get("r_ffffffffffffffff") is None
    assert isinstance(store, ResultStore)


async def test_a_failing_store_says_the_rest_cannot_be_read() -> None:
    class Broken:
        async def put(self, handle: str, result: ToolResultMessage) -> None:
            raise OSError("disk full")

        async def get(self, handle: str) -> ToolResultMessage | None:
            return None

    model = ScriptedModel([("report", {}), "ok"])
    budget = OutputBudget(tokens=50, store=Broken())
    result = await Agent(model, tools=[report], output_budget=budget).run("go")
    cut = results(result.messages)[0]
    assert "could not be kept" in cut.text and "read_result(" not in cut.text
    assert result.stop_reason == "completed"


async def test_a_cut_history_round_trips_through_json() -> None:
    model = ScriptedModel([("report", {}), "ok"])
    result = await Agent(model, tools=[report], output_budget=64).run("go")
    loaded = load_history(dump_history(result.messages))
    assert loaded == result.messages
    assert results(loaded)[0].full_content == results(result.messages)[0].full_content


async def test_the_callers_own_read_result_tool_wins() -> None:
    @tool
    def read_result(handle: str) -> str:
        """My own."""
        return f"mine: {handle}"

    model = ScriptedModel([("read_result", {"handle": "h"}), "ok"])
    result = await Agent(model, tools=[read_result], output_budget=10).run("go")
    assert results(result.messages)[0].text == "mine: h"


def test_a_budget_is_given_as_tokens_or_as_an_output_budget() -> None:
    agent = Agent(ScriptedModel(), output_budget=300)
    assert agent.config.output_budget == OutputBudget(
        tokens=300, store=agent.config.output_budget.store
    )  # type: ignore[union-attr]
    with pytest.raises(TypeError, match="output_budget takes"):
        Agent(ScriptedModel(), output_budget="big")  # type: ignore[arg-type]


async def test_a_result_the_caller_hands_in_is_cut_the_same_way() -> None:
    fetch = tool(name="fetch", description="Fetched by the caller.", parameters={"type": "object"})
    model = ScriptedModel([("fetch", {}), "ok"])
    agent = Agent(model, tools=[fetch], output_budget=100)
    paused = await agent.run("go")
    assert paused.stop_reason == "external_calls"
    call_id = paused.pending[0].call.id
    done = await agent.run(history=paused.messages, results={call_id: LINES})
    cut = results(done.messages)[0]
    assert "left out here" in cut.text and cut.full_content is not None
    assert done.stop_reason == "completed"
