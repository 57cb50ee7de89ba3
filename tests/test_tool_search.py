"""Tool search and deferred loading through the loop, offline: what each request carries, what the
model is told, and what a history handed back in restores."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    AssistantMessage,
    ScriptedModel,
    ServerToolCallBlock,
    ServerToolResultBlock,
    ToolCallBlock,
    ToolResultMessage,
    ToolSearch,
    UnsupportedError,
    deferred,
    dump_history,
    load_history,
    tool,
)
from toolwire.models._matrix import tool_search_matrix_markdown
from toolwire.models.profiles import ANTHROPIC, OPENAI_CHAT, common_profile
from toolwire.tokens import definition_tokens
from toolwire.tool_search import (
    DEFAULT_CONTEXT_WINDOW,
    ToolIndex,
    context_window,
    discovered_tools,
    is_deferred,
)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to someone."""
    return f"sent to {to}"


@tool
def list_files(directory: str) -> list[str]:
    """List the entries of a folder on disk."""
    return ["a.txt"]


def names(request: Any) -> list[str]:
    return [t.name for t in request.tools]


def results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


# --- local search -----------------------------------------------------------------------------


def test_deferred_tools_are_not_sent_until_found_then_appended_in_order() -> None:
    model = ScriptedModel(
        [
            ("search_tools", {"query": "weather in a city"}),
            ("search_tools", {"query": "email"}),
            ("get_weather", {"city": "Recife"}),
            "Sunny.",
        ]
    )
    agent = Agent(model, tools=[add, *deferred(get_weather, send_email, list_files)])
    result = agent.run_sync("weather?")

    sent = [names(r) for r in model.requests]
    assert sent[0] == ["add", "search_tools"]
    assert sent[1] == ["add", "search_tools", "get_weather"]
    # Found tools are appended: what earlier requests carried keeps its place (cached prefix).
    assert sent[2] == ["add", "search_tools", "get_weather", "send_email"]
    assert sent[3] == sent[2]
    found = results(result.messages)
    assert "get_weather: Get the current weather for a city." in found[0].text
    assert found[0].structured["tools"][0]["name"] == "get_weather"
    assert found[2].text == "sunny in Recife" and not found[2].is_error
    assert result.text == "Sunny."


def test_a_deferred_tool_called_before_it_is_found_gets_an_error_and_the_run_goes_on() -> None:
    model = ScriptedModel(
        [("send_email", {"to": "a@b.c", "subject": "s", "body": "b"}), "I could not send it."]
    )
    result = Agent(model, tools=[add, *deferred(send_email)]).run_sync("mail Ann")
    [answer] = results(result.messages)
    assert answer.is_error
    assert 'the tool "send_email" is not loaded yet' in answer.text
    assert "search_tools" in answer.text
    assert result.stop_reason == "completed" and result.text == "I could not send it."


def test_an_unknown_tool_is_told_the_loaded_tools_not_the_whole_toolbox() -> None:
    model = ScriptedModel([("no such tool!", {}), "Sorry."])
    result = Agent(model, tools=[add, *deferred(get_weather, send_email)]).run_sync("?")
    [answer] = results(result.messages)
    assert answer.is_error
    assert answer.text == (
        'Error: unknown tool "no such tool!". Tools loaded now: add, search_tools; '
        "search_tools finds the others."
    )
    assert result.stop_reason == "completed"


def test_a_query_matching_nothing_is_a_clear_error_result() -> None:
    model = ScriptedModel([("search_tools", {"query": "zebra quantum"}), "Nothing found."])
    result = Agent(model, tools=[add, *deferred(get_weather)]).run_sync("?")
    [answer] = results(result.messages)
    assert answer.is_error and "No tool matches 'zebra quantum'" in answer.text
    assert names(model.requests[1]) == ["add", "search_tools"]  # nothing was revealed
    assert result.stop_reason == "completed"


def test_found_tools_are_restored_from_a_history_handed_back_in() -> None:
    first = ScriptedModel([("search_tools", {"query": "send email"}), "Found it."])
    agent_tools = [add, *deferred(get_weather, send_email)]
    done = Agent(first, tools=agent_tools).run_sync("find the mail tool")

    # A durable replay or a resumed run starts from the saved history: nothing is searched again.
    history = load_history(dump_history(done.messages))
    assert discovered_tools(history) == ["send_email"]
    second = ScriptedModel([("send_email", {"to": "x@y.z", "subject": "s", "body": "b"}), "Sent."])
    again = Agent(second, tools=agent_tools).run_sync("send it", history=history)
    assert names(second.requests[0]) == ["add", "search_tools", "send_email"]
    assert results(again.new_messages)[0].text == "sent to x@y.z"


def test_a_tool_named_like_the_search_tool_is_refused_and_the_name_can_change() -> None:
    @tool
    def search_tools(query: str) -> str:
        """The user's own search."""
        return query

    with pytest.raises(ValueError, match=r"ToolSearch\(name=\.\.\.\)"):
        Agent(ScriptedModel(["x"]), tools=[search_tools, *deferred(add)]).run_sync("?")
    model = ScriptedModel(["x"])
    Agent(
        model, tools=[search_tools, *deferred(add)], tool_search=ToolSearch(name="find_tools")
    ).run_sync("?")
    assert names(model.requests[0]) == ["search_tools", "find_tools"]


def test_no_deferred_tool_no_change() -> None:
    model = ScriptedModel(["x"])
    Agent(model, tools=[add, get_weather]).run_sync("?")
    assert names(model.requests[0]) == ["add", "get_weather"]


def test_defer_all_keeps_the_named_tools() -> None:
    model = ScriptedModel(["x"])
    search = ToolSearch(defer="all", keep={"add"})
    Agent(model, tools=[add, get_weather, send_email], tool_search=search).run_sync("?")
    assert names(model.requests[0]) == ["add", "search_tools"]


def test_auto_defers_only_past_the_share_of_the_context_window() -> None:
    tools = [add, get_weather, send_email, list_files]
    small = ScriptedModel(["x"])
    Agent(small, tools=tools, tool_search=ToolSearch(defer="auto")).run_sync("?")
    assert names(small.requests[0]) == ["add", "get_weather", "send_email", "list_files"]

    # The same tools past 10% of a (stated) 1,000-token window: deferred.
    tight = ScriptedModel(["x"])
    search = ToolSearch(defer="auto", context_window=1000, keep={"add"})
    Agent(tight, tools=tools, tool_search=search).run_sync("?")
    assert names(tight.requests[0]) == ["add", "search_tools"]


def test_deferred_marks_survive_hooks() -> None:
    from toolwire import Hooks

    [marked] = deferred(add)
    agent = Agent(ScriptedModel(["x"]), tools=[marked], hooks=Hooks())
    assert is_deferred(agent.tools["add"]) and not is_deferred(add)


# --- native search (offline stand-ins of the providers) ----------------------------------------


def anthropic_found(name: str) -> AssistantMessage:
    """An Anthropic turn in which the server searched and the model called what it found."""
    return AssistantMessage(
        [
            ServerToolCallBlock("srvtoolu_1", "tool_search_tool_bm25", {"query": "weather"}),
            ServerToolResultBlock(
                "srvtoolu_1",
                "tool_search_tool",
                {
                    "type": "tool_search_tool_search_result",
                    "tool_references": [{"type": "tool_reference", "tool_name": name}],
                },
            ),
            ToolCallBlock("toolu_1", name, '{"city": "Paris"}'),
        ]
    )


def test_anthropic_searches_natively_with_every_definition_marked_and_in_one_order() -> None:
    model = ScriptedModel(
        [anthropic_found("get_weather"), "Sunny."],
        provider="anthropic",
        model_name="claude-sonnet-4-5",
    )
    result = Agent(model, tools=[add, *deferred(get_weather, send_email)]).run_sync("weather?")
    for request in model.requests:
        assert [(d.name, d.defer_loading) for d in request.definitions] == [
            ("add", False),
            ("get_weather", True),
            ("send_email", True),
        ]
        assert request.native_tools == [
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        ]
    assert results(result.messages)[0].text == "sunny in Paris"
    assert discovered_tools(result.messages) == ["get_weather"]
    # Deferred definitions are not in the prompt: only `add` counts toward the estimate.
    assert result.usage.tool_definition_tokens == 2 * definition_tokens(add)


def test_responses_searches_natively_from_gpt_5_4_and_locally_before() -> None:
    native = ScriptedModel(["x"], provider="openai-responses", model_name="gpt-5.4")
    Agent(native, tools=[add, *deferred(get_weather)]).run_sync("?")
    assert native.requests[0].native_tools == [{"type": "tool_search"}]
    assert [d.defer_loading for d in native.requests[0].definitions] == [False, True]

    # `openai:` is the Chat Completions row: its deferred tools are searched locally.
    chat = ScriptedModel(["x"], provider="openai", model_name="gpt-5.4")
    Agent(chat, tools=[add, *deferred(get_weather)]).run_sync("?")
    assert chat.requests[0].native_tools == [] and names(chat.requests[0]) == [
        "add",
        "search_tools",
    ]

    older = ScriptedModel(["x"], provider="openai-responses", model_name="gpt-4o")
    Agent(older, tools=[add, *deferred(get_weather)]).run_sync("?")
    assert older.requests[0].native_tools == []
    assert names(older.requests[0]) == ["add", "search_tools"]

    with pytest.raises(UnsupportedError, match=r"gpt-5\.4 or later"):
        Agent(
            ScriptedModel(["x"], provider="openai-responses", model_name="gpt-4o"),
            tools=deferred(get_weather),
            tool_search=ToolSearch(mechanism="native"),
        ).run_sync("?")


def test_local_mechanism_is_used_on_a_provider_with_native_search_when_asked() -> None:
    model = ScriptedModel(["x"], provider="anthropic", model_name="claude-sonnet-4-5")
    Agent(
        model, tools=[add, *deferred(get_weather)], tool_search=ToolSearch(mechanism="local")
    ).run_sync("?")
    assert model.requests[0].native_tools == []
    assert names(model.requests[0]) == ["add", "search_tools"]


def test_openai_tool_search_output_items_count_as_found_namespaces_included() -> None:
    item = {
        "type": "tool_search_output",
        "id": "tso_1",
        "execution": "server",
        "status": "completed",
        "tools": [
            {"type": "function", "name": "get_weather", "parameters": {}},
            {"type": "namespace", "name": "crm", "tools": [{"type": "function", "name": "lead"}]},
        ],
    }
    turn = AssistantMessage(
        [ServerToolCallBlock("tso_1", "tool_search_output", None, {"item": item})]
    )
    assert discovered_tools([turn]) == ["get_weather", "lead"]


def test_a_fallback_over_providers_with_different_searches_searches_locally() -> None:
    assert common_profile([ANTHROPIC, OPENAI_CHAT]).tool_search.supported is False
    assert common_profile([ANTHROPIC, ANTHROPIC]).tool_search.supported is True


# --- the index -------------------------------------------------------------------------------


def test_the_index_ranks_names_parameters_and_plurals() -> None:
    index = ToolIndex([add, get_weather, send_email, list_files])

    def best(query: str) -> str:
        return index.search(query)[0].name

    assert best("weather") == "get_weather"
    assert best("files") == "list_files"  # a plural finds the name
    assert best("subject") == "send_email"  # a parameter's name
    assert best("add") == "add"  # an exact name first
    assert index.search("zebra") == []
    assert len(index.search("a the email weather files", limit=2)) == 2


def test_usage_splits_definitions_from_messages() -> None:
    model = ScriptedModel([("add", {"a": 1, "b": 2}), "3"])
    result = Agent(model, tools=[add, get_weather]).run_sync("What is 1 + 2?")
    usage = result.usage
    assert usage.requests == 2
    assert usage.tool_definition_tokens > 0 and usage.message_tokens > 0
    # Two requests carried the same two definitions.
    assert usage.tool_definition_tokens % 2 == 0


# --- the matrix ------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["native-tools.md", "context.md"])
def test_docs_show_the_tool_search_cells_as_the_profiles_make_them(page: str) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text(encoding="utf-8")
    found = re.search(r"<!-- tool-search:start -->\n(.*?)<!-- tool-search:end -->", text, re.S)
    assert found, f"docs/{page} lost its tool-search markers"
    assert found.group(1) == tool_search_matrix_markdown()


def test_the_context_window_is_known_or_a_stated_estimate() -> None:
    known = ScriptedModel(provider="anthropic", model_name="claude-sonnet-4-5")
    assert context_window(known) == (200_000, "genai-prices")
    window, source = context_window(ScriptedModel(model_name="made-up-model"))
    assert window == DEFAULT_CONTEXT_WINDOW and source.startswith("estimate")


def test_tool_search_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="defer must be"):
        ToolSearch(defer="some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="share must be"):
        ToolSearch(share=0)
    with pytest.raises(ValueError, match="mechanism must be"):
        ToolSearch(mechanism="remote")  # type: ignore[arg-type]
    assert ToolSearch(keep=["a", "a"]).keep == frozenset({"a"})
