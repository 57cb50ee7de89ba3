"""Deferred loading and local tool search at scale, printed as ratios against the goals.

1. A request with 500 deferred tools against the same request with all 500 loaded: the tokens
   each sends (tool definitions plus messages), through the loop with an offline model, as the
   run's usage estimates them (`Usage.tool_definition_tokens` + `Usage.message_tokens`; OpenAI's
   tokenizer is not used there). Goal: the deferred request sends at most 5% of the tokens.
   Also printed: the same 500 definitions counted by `tool_cost` (tiktoken when installed).
2. The local search tool's index over 10,000 tools: the median CPU time of one search, over
   many queries (the index built once, as a `ToolSearch` builds it once). Goal: at most 5 ms.
   CPU time, not wall time: the machine the benchmarks run on is shared.

The tools are generated, realistic in shape: a service, an action and an object per tool, a
sentence or two of description, and two to six described parameters (ids, limits, enums, dates).

Run: `.venv/bin/python benchmarks/tool_search.py`.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
from typing import Any

from toolwire import Agent, ScriptedModel, Tool, deferred, tool, tool_cost
from toolwire.tool_search import ToolIndex

TOKEN_GOAL = 0.05
SEARCH_GOAL_MS = 5.0

SERVICES = [
    "github", "gitlab", "jira", "linear", "slack", "teams", "gmail", "outlook", "calendar",
    "drive", "dropbox", "notion", "confluence", "salesforce", "hubspot", "zendesk", "stripe",
    "shopify", "twilio", "sendgrid", "s3", "postgres", "bigquery", "snowflake", "datadog",
    "pagerduty", "sentry", "figma", "asana", "trello", "airtable", "intercom", "mailchimp",
    "quickbooks", "xero", "docusign", "zoom", "okta", "workday", "greenhouse",
]  # fmt: skip
ACTIONS = {
    "create": "Create a new {obj} in {svc}",
    "get": "Fetch one {obj} from {svc} by its id",
    "list": "List the {obj}s in {svc}, newest first, with paging",
    "update": "Change fields of an existing {obj} in {svc}",
    "delete": "Delete a {obj} from {svc}; this cannot be undone",
    "search": "Search {svc} {obj}s by free text and filters",
    "archive": "Archive a {obj} in {svc} so it no longer shows in default views",
    "export": "Export {obj}s from {svc} as CSV or JSON",
}
OBJECTS = [
    "issue", "comment", "message", "channel", "event", "file", "customer", "invoice", "order",
    "page", "ticket", "contact", "deal", "user", "report", "dashboard", "alert", "incident",
    "task", "project", "record", "subscription", "payment", "refund", "meeting", "document",
]  # fmt: skip
PARAMETERS: list[tuple[str, dict[str, Any]]] = [
    ("limit", {"type": "integer", "minimum": 1, "maximum": 100, "description": "Items per page."}),
    ("cursor", {"type": "string", "description": "The page cursor a previous call returned."}),
    ("query", {"type": "string", "description": "Free text matched against titles and bodies."}),
    ("status", {"type": "string", "enum": ["open", "closed", "pending"], "description": "State."}),
    ("since", {"type": "string", "format": "date-time", "description": "Only items after this."}),
    ("owner", {"type": "string", "description": "The user id or email of the owner."}),
    ("tags", {"type": "array", "items": {"type": "string"}, "description": "Labels to match."}),
    ("include_archived", {"type": "boolean", "description": "Also return archived items."}),
]


def make_tools(count: int, seed: int = 7) -> list[Tool]:
    """`count` distinct generated tools (schema-only: the benchmark never runs them)."""
    rng = random.Random(seed)
    combos = list(itertools.product(SERVICES, ACTIONS, OBJECTS))
    rng.shuffle(combos)
    tools: list[Tool] = []
    for number, (svc, action, obj) in enumerate(combos * (count // len(combos) + 1)):
        if len(tools) == count:
            break
        suffix = "" if number < len(combos) else f"_v{number // len(combos) + 1}"
        properties: dict[str, Any] = {
            f"{obj}_id": {"type": "string", "description": f"The {svc} id of the {obj}."}
        }
        for name, schema in rng.sample(PARAMETERS, rng.randint(1, 5)):
            properties[name] = schema
        description = ACTIONS[action].format(obj=obj, svc=svc.capitalize()) + (
            ". Requires the workspace's API token; rate limited to 100 calls a minute."
        )
        tools.append(
            tool(
                name=f"{svc}_{action}_{obj}{suffix}",
                description=description,
                parameters={"type": "object", "properties": properties, "required": [f"{obj}_id"]},
            )
        )
    return tools


def request_tokens(tools: list[Any]) -> int:
    model = ScriptedModel(["ok"])
    result = Agent(model, tools=tools).run_sync("Open a ticket about the failing invoice export.")
    return result.usage.tool_definition_tokens + result.usage.message_tokens


def token_ratio() -> float:
    tools = make_tools(500)
    loaded = request_tokens(tools)
    lazy = request_tokens(deferred(*tools))
    ratio = lazy / loaded
    counted = tool_cost(tools, "openai")
    print(f"500 tools loaded:   {loaded:>8,} tokens per request (usage estimate)")
    print(f"500 tools deferred: {lazy:>8,} tokens per request (usage estimate)")
    print(
        f"  the 500 definitions by tool_cost: {sum(c.tokens for c in counted):,} tokens "
        f"({counted[0].method})"
    )
    print(f"ratio deferred / loaded: {ratio:.3f} (goal <= {TOKEN_GOAL})")
    return ratio


def search_time() -> float:
    tools = make_tools(10_000)
    started = time.process_time()
    index = ToolIndex(tools)
    built = time.process_time() - started
    rng = random.Random(11)
    actions = list(ACTIONS)
    queries = [
        f"{rng.choice(actions)} {rng.choice(OBJECTS)}"
        if i % 3
        else f"{rng.choice(SERVICES)} {rng.choice(OBJECTS)} by owner"
        for i in range(300)
    ]
    timings: list[float] = []
    for query in queries:
        started = time.process_time()
        hits = index.search(query, 5)
        timings.append(time.process_time() - started)
        assert hits, query
    median = statistics.median(timings) * 1000
    worst = max(timings) * 1000
    print(f"index over 10,000 tools: {built * 1000:.0f} ms CPU to build (once per ToolSearch)")
    print(f"one search: median {median:.2f} ms, worst {worst:.2f} ms over {len(queries)} queries")
    print(f"ratio median / goal: {median / SEARCH_GOAL_MS:.2f} (goal <= 1, {SEARCH_GOAL_MS} ms)")
    return median


if __name__ == "__main__":
    token_ratio()
    search_time()
