"""Prompt caching on the wire: the official SDK clients talk to a local server, and the tests read
the requests toolwire sent (Anthropic `cache_control` breakpoints, OpenAI `prompt_cache_key` and
`prompt_cache_retention`) and the cache reads and writes it parsed into usage and cost; and a result cut by an output
budget (images beyond `max_media` included) replayed as valid history on every adapter."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from model_servers import HostileServer, closing
from test_contract_wires import ADAPTERS, Call, Turn, Wire

from recordings.replay import ReplayServer, Reply, sse
from toolwire import (
    Agent,
    CachePolicy,
    ImagePart,
    ModelSettings,
    OutputBudget,
    SystemMessage,
    TextPart,
    ToolResult,
    ToolResultMessage,
    Usage,
    tool,
)
from toolwire.models.anthropic import AnthropicModel
from toolwire.models.base import CompletionDone
from toolwire.models.google import gemini
from toolwire.models.openai_chat import OpenAIChatModel
from toolwire.models.openai_responses import OpenAIResponsesModel
from toolwire.usage import estimate_cost

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning"),
]

LONG = "You are a careful assistant for the orders desk. " * 120  # ~1,500 tokens (4 chars each)
LINES = "\n".join(f"order {i}: shipped on day {i % 28 + 1}" for i in range(2000))


@tool
def lookup(order_id: int) -> str:
    """Look up an order."""
    return f"order {order_id} shipped"


@tool
def orders() -> str:
    """Every order, one a line."""
    return LINES


def _manual(topic: str) -> str:
    return topic


def anthropic_message(
    content: list[dict[str, Any]], stop: str = "end_turn", **usage: Any
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5, **usage},
    }


def anthropic_call(call_id: str, name: str, arguments: dict[str, Any]) -> Reply:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
    return Reply.of_json(200, anthropic_message([block], "tool_use"))


def anthropic_text(text: str, **usage: Any) -> Reply:
    return Reply.of_json(200, anthropic_message([{"type": "text", "text": text}], **usage))


def anthropic(server: ReplayServer, name: str = "claude-sonnet-4-5") -> AnthropicModel:
    return closing(AnthropicModel(name, api_key="k", base_url=server.base_url))


def marks(value: Any) -> list[str]:
    """Where the `cache_control` marks of a request body are, as paths."""
    found: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if "cache_control" in node:
                found.append(path)
            for key, child in node.items():
                walk(child, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for i, child in enumerate(node):
                walk(child, f"{path}[{i}]")

    walk(value, "")
    return sorted(found)


def unmarked(value: Any) -> Any:
    """A body with its `cache_control` marks taken out (system text back to a string)."""
    body = copy.deepcopy(value)

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("cache_control", None)
            for child in node.values():
                strip(child)
        elif isinstance(node, list):
            for child in node:
                strip(child)

    strip(body)
    return body


async def test_anthropic_breakpoints_on_tools_system_and_a_moving_point() -> None:
    manual = tool(_manual, description=LONG)  # a long definition
    replies = [
        anthropic_call("toolu_1", "lookup", {"order_id": 7}),
        anthropic_text(
            "Order 7 has shipped.",
            cache_read_input_tokens=1500,
            cache_creation_input_tokens=40,
        ),
    ]
    with ReplayServer(replies) as server:
        agent = Agent(anthropic(server), instructions=LONG, tools=[lookup, manual])
        result = await agent.run("Where is order 7?")
    first, second = (r.json for r in server.received)
    mark = {"type": "ephemeral"}
    assert marks(first) == ["messages[0].content[0]", "system[0]", "tools[1]"]
    assert first["tools"][1]["cache_control"] == mark
    assert first["system"] == [{"type": "text", "text": LONG, "cache_control": mark}]
    # The point moved to the last message; everything before it is sent exactly as before.
    assert marks(second) == ["messages[2].content[0]", "system[0]", "tools[1]"]
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    assert unmarked(second["messages"][:1]) == unmarked(first["messages"])
    assert second["tools"] == first["tools"] and second["system"] == first["system"]
    assert (result.usage.cache_read_tokens, result.usage.cache_write_tokens) == (1500, 40)


async def test_anthropic_breakpoints_wait_for_the_prefix_to_be_cacheable() -> None:
    # Short tools, a long system prompt: the tools alone are below the minimum, so unmarked.
    with ReplayServer([anthropic_text("ok")]) as server:
        await Agent(anthropic(server), instructions=LONG, tools=[lookup]).run("hi")
    assert marks(server.received[0].json) == ["messages[0].content[0]", "system[0]"]


async def test_anthropic_short_prompts_and_cache_false_send_no_marks() -> None:
    with ReplayServer([anthropic_text("hi"), anthropic_text("hi")]) as server:
        model = anthropic(server)
        await Agent(model, instructions="Be brief.", tools=[lookup]).run("hello")
        await Agent(model, instructions=LONG, tools=[lookup], settings={"cache": False}).run("hi")
    short, off = (r.json for r in server.received)
    assert marks(short) == [] and short["system"] == "Be brief."
    assert marks(off) == [] and off["system"] == LONG


async def test_anthropic_policy_is_overridable_and_the_one_hour_writes_are_priced() -> None:
    usage = {
        "input_tokens": 100,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 0,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2000},
    }
    with ReplayServer([anthropic_text("ok", **usage)]) as server:
        policy = CachePolicy(ttl="1h", tools=False, history=False)
        agent = Agent(
            anthropic(server), instructions=LONG, tools=[lookup], settings={"cache": policy}
        )
        result = await agent.run("hello")
    sent = server.received[0].json
    assert marks(sent) == ["system[0]"]
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert result.usage.cache_write_tokens == 2000 and result.usage.cache_write_1h_tokens == 2000
    # claude-sonnet-4-5: $3 input, $6 an hour's cache write, $15 output per million tokens.
    expected = (Decimal(100) * 3 + Decimal(2000) * 6 + Decimal(5) * 15) / 1_000_000
    assert result.cost.total == expected


async def test_anthropic_minimums_follow_the_model_and_breakpoints_stay_within_four() -> None:
    # Haiku 4.5 caches from 4,096 tokens: the same long prompt gets no marks there.
    raw = [
        {"type": "custom", "name": f"raw{i}", "input_schema": {"type": "object"}} for i in range(3)
    ]
    for t in raw:
        t["cache_control"] = {"type": "ephemeral"}
    with ReplayServer([anthropic_text("ok"), anthropic_text("ok")]) as server:
        await Agent(anthropic(server, "claude-haiku-4-5"), instructions=LONG).run("hi")
        settings = {"tools": raw}
        await Agent(anthropic(server), instructions=LONG, settings=settings).run("hi")
    haiku, crowded = (r.json for r in server.received)
    assert marks(haiku) == []
    # Three marks of the caller's own: room for one more, the tools' end is already marked.
    assert len(marks(crowded)) == 4 and marks(crowded)[0] == "system[0]"


async def test_a_cut_tool_result_keeps_the_cached_prefix_byte_for_byte() -> None:
    replies = [
        anthropic_call("toolu_1", "orders", {}),
        anthropic_call("toolu_2", "lookup", {"order_id": 3}),
        anthropic_text("done"),
    ]
    with ReplayServer(replies) as server:
        agent = Agent(
            anthropic(server), instructions=LONG, tools=[orders, lookup], output_budget=300
        )
        result = await agent.run("Which orders shipped?")
    bodies = [r.json for r in server.received]
    assert [t["name"] for t in bodies[0]["tools"]] == ["orders", "lookup", "read_result"]
    cut = bodies[1]["messages"][2]["content"][0]
    assert cut["type"] == "tool_result" and "read_result(" in json.dumps(cut)
    # Each request starts with the previous one, marks aside: the cache prefix holds.
    for earlier, later in itertools.pairwise(bodies):
        size = len(earlier["messages"])
        assert unmarked(later["messages"][:size]) == unmarked(earlier["messages"])
        assert later["tools"] == earlier["tools"] and later["system"] == earlier["system"]
    kept = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert kept.full_content is not None and len(kept.text) < len(LINES)


def responses_reply(text: str, cached: int = 0) -> Reply:
    body = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt-5-mini",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": 2000,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
        },
        "error": None,
        "incomplete_details": None,
    }
    return Reply.of_json(200, body)


async def test_openai_responses_prompt_cache_key_and_retention() -> None:
    replies = [responses_reply("a"), responses_reply("b", cached=1792), responses_reply("c")]
    with ReplayServer(replies) as server:
        model = closing(
            OpenAIResponsesModel("gpt-5-mini", api_key="k", base_url=server.base_url + "/v1")
        )
        agent = Agent(model, instructions=LONG, tools=[lookup])
        await agent.run("first")
        second = await agent.run("second, a different question")
        pinned = CachePolicy(key="orders-desk", retention="24h")
        await Agent(model, instructions="short", settings={"cache": pinned}).run("x")
    first_body, second_body, pinned_body = (r.json for r in server.received)
    key = first_body["prompt_cache_key"]
    assert key.startswith("toolwire-") and second_body["prompt_cache_key"] == key
    assert "prompt_cache_retention" not in first_body
    assert pinned_body["prompt_cache_key"] == "orders-desk"
    assert pinned_body["prompt_cache_retention"] == "24h"
    assert second.usage.cache_read_tokens == 1792


async def test_openai_short_requests_other_providers_and_extra_keep_their_bodies() -> None:
    replies = [responses_reply("a"), responses_reply("b")]
    with ReplayServer(replies) as server:
        model = closing(
            OpenAIResponsesModel("gpt-5-mini", api_key="k", base_url=server.base_url + "/v1")
        )
        await Agent(model, instructions="short").run("x")
        own = {"prompt_cache_key": "mine"}
        await Agent(model, instructions=LONG, settings=own).run("x")
    short, mine = (r.json for r in server.received)
    assert "prompt_cache_key" not in short
    assert mine["prompt_cache_key"] == "mine"


def chat_reply(text: str) -> Reply:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {
            "prompt_tokens": 2000,
            "completion_tokens": 5,
            "total_tokens": 2005,
            "prompt_tokens_details": {"cached_tokens": 1024},
        },
    }
    return Reply.of_json(200, body)


async def test_openai_chat_sends_the_key_and_reads_cached_tokens() -> None:
    with ReplayServer([chat_reply("a"), chat_reply("b"), chat_reply("c")]) as server:
        root = server.base_url + "/v1"
        model = closing(OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=root))
        result = await Agent(model, instructions=LONG, tools=[lookup]).run("x")
        policy = CachePolicy(retention="in_memory")
        await Agent(model, instructions=LONG, settings={"cache": policy}).run("x")
        # Another provider on the Chat Completions wire may refuse OpenAI's fields: none sent.
        other = closing(OpenAIChatModel("llama", api_key="k", base_url=root, provider="groq"))
        await Agent(other, instructions=LONG, settings={"cache": policy}).run("x")
    first, second, groq = (r.json for r in server.received)
    assert first["prompt_cache_key"].startswith("toolwire-")
    assert second["prompt_cache_retention"] == "in_memory"
    assert second["prompt_cache_key"] != first["prompt_cache_key"]  # other tools: other prefix
    assert result.usage.cache_read_tokens == 1024
    assert "prompt_cache_key" not in groq and "prompt_cache_retention" not in groq


def test_a_cache_policy_refuses_values_providers_would_refuse() -> None:
    with pytest.raises(ValueError, match="ttl must be"):
        CachePolicy(ttl="10m")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retention must be"):
        CachePolicy(retention="forever")  # type: ignore[arg-type]
    assert CachePolicy.coerce(None) == CachePolicy() == CachePolicy.coerce(True)
    assert CachePolicy.coerce(False).enabled is False
    assert CachePolicy.coerce({"ttl": "1h"}).ttl == "1h"
    assert OutputBudget.coerce(None) is None


async def test_gemini_implicit_cache_hits_are_reported_and_priced() -> None:
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "ok"}]},
                "index": 0,
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 4000,
            "cachedContentTokenCount": 3000,
            "candidatesTokenCount": 10,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }
    with ReplayServer([Reply.of_json(200, body)]) as server:
        model = closing(gemini("gemini-2.5-flash", api_key="k", base_url=server.base_url))
        result = await Agent(model, instructions=LONG).run("hi")
    sent = server.received[0].json
    assert "cachedContent" not in sent  # implicit: nothing to ask for
    assert result.usage.cache_read_tokens == 3000 and result.usage.input_tokens == 4000
    # Cached tokens are priced at the cache-read price, below the input price.
    uncached = Usage(input_tokens=4000, output_tokens=10, requests=1)
    full = estimate_cost([("google", "gemini-2.5-flash", uncached)]).total
    assert result.cost.total is not None and full is not None and result.cost.total < full


@pytest.mark.parametrize("wire", [pytest.param(w, id=w.name) for w in ADAPTERS])
async def test_a_cut_result_with_images_is_a_valid_history_on_every_wire(
    wire: Wire, serve: Callable[..., HostileServer]
) -> None:
    picture = ImagePart(data=b"\x89PNG\r\n\x1a\n" + bytes(32), mime_type="image/png")

    @tool
    def snapshot() -> ToolResult:
        """A long page and its screenshots."""
        return ToolResult(content=[TextPart(LINES), picture, picture, picture])

    calls = Turn(calls=[Call("call_snap1", "snapshot", "{}")])
    server = serve(wire.reply(calls, False), wire.reply(Turn(text="seen"), False))
    budget = OutputBudget(tokens=200, max_media=1)
    result = await Agent(wire.connect(server.base_url), tools=[snapshot], output_budget=budget).run(
        "look"
    )
    assert result.stop_reason == "completed" and result.text == "seen"
    sent = json.dumps(server.received[1].json)
    assert "left out here" in sent and "order 1000:" not in sent  # the middle stayed home
    assert "2 more non-text parts left out" in sent


async def test_a_streamed_anthropic_request_carries_the_marks_and_reads_the_hour_writes() -> None:
    start = anthropic_message([], stop="end_turn")
    start["stop_reason"] = None
    start["usage"] = {
        "input_tokens": 5,
        "output_tokens": 1,
        "cache_creation_input_tokens": 1600,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1600},
    }
    events = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]
    reply = Reply.of_sse(sse(events, named=[e["type"] for e in events]))
    with ReplayServer([reply]) as server:
        model = anthropic(server)
        settings = ModelSettings(cache=CachePolicy(ttl="1h"))
        async for event in model.stream_complete(
            "hello", history=[SystemMessage(LONG)], settings=settings
        ):
            last = event
    assert isinstance(last, CompletionDone)
    sent = server.received[0].json
    assert sent["stream"] is True
    assert marks(sent) == ["messages[0].content[0]", "system[0]"]
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    usage = last.completion.usage
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens, usage.output_tokens) == (
        1600,
        1600,
        3,
    )


def test_a_cache_policy_is_part_of_a_cached_models_key() -> None:
    # CachedModel keys requests by their settings as JSON: a policy must write as one.
    settings = ModelSettings(cache=CachePolicy(ttl="1h", key="k"))
    written = json.dumps(dataclasses.asdict(settings), sort_keys=True)
    assert '"ttl": "1h"' in written and '"key": "k"' in written
