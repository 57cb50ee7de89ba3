"""Tool search and deferred loading: tools the model finds before it can call them.

A deferred tool is not sent with a request until the model has found it. Mark tools with
`deferred(...)`, or let `ToolSearch(defer="all" | "auto")` defer every tool (`"auto"`: only once
the definitions pass a share of the model's context window). How the model finds them:

- natively, where the provider searches deferred tools itself (the profile's `tool_search` cell):
  Anthropic's tool search tool (`tool_search_tool_bm25_20251119`) and OpenAI Responses' hosted
  `tool_search` (gpt-5.4 and later). Every definition goes out marked `defer_loading`, always in
  the same order, and the provider loads the ones its search returns;
- locally everywhere else: toolwire adds a `search_tools(query)` tool that ranks the deferred tools
  by BM25 over their names, descriptions and parameter names (pure Python, no model call) and
  answers with the matches' names and descriptions; they are sent from the next request on,
  appended after the tools sent before, so the cached prefix of a request stays as it was.

What was found is read back from the history (local search results, Anthropic's
`tool_search_tool_result` blocks, OpenAI's `tool_search_output` items), so a found tool stays
found for the rest of the run, and a history handed back in (a durable run replayed, a resumed
run) restores them. A deferred tool called before it was found gets an error result telling the
model to search first, and a search that matches nothing says so; the run goes on either way.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal, cast

from ._record import record
from .errors import UnsupportedError
from .messages import (
    AssistantMessage,
    Message,
    ServerToolCallBlock,
    ServerToolResultBlock,
    ToolResultMessage,
)
from .middleware import ToolWrapper
from .models._parts import CellContext
from .models.profiles import profile_of
from .results import TextPart, ToolResult
from .tokens import definition_tokens
from .tools import DefinitionDialect, Tool, ToolContext, ToolDefinition, ToolLike, as_tool, tool

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "Deferred",
    "SearchRun",
    "ToolIndex",
    "ToolSearch",
    "context_window",
    "deferred",
    "discovered_tools",
    "is_deferred",
]

_KEPT_INDEXES = 4
DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window assumed for a model whose window is not known (a stated estimate)."""

_SEARCH_DESCRIPTION = (
    "Search the tools that are available but not loaded yet. Give a few words describing what "
    "you need to do; the best matches are listed with their descriptions, and they can be "
    "called from your next step."
)


@record(frozen=True, kw_only=True)
class ToolSearch:
    """How a run defers tools and lets the model find them (`Agent(tool_search=ToolSearch())`).

    Without one, tools marked with `deferred(...)` are deferred with these defaults.

    Attributes:
        defer: Which tools are deferred: `"marked"` (those wrapped by `deferred`), `"all"`
            (every tool but those in `keep`), or `"auto"` (like `"all"` once the definitions'
            estimated tokens pass `share` of the model's context window, else like `"marked"`).
        share: The share of the context window past which `"auto"` defers.
        keep: Names never deferred by `"all"` and `"auto"`.
        mechanism: `"auto"` (the provider's own search where its profile has one, else the local
            tool), `"native"` (refuse a model without one) or `"local"` (always toolwire's).
        max_results: Tools the local search answers with, at most.
        name: The local search tool's name.
        context_window: The model's window in tokens, overriding what toolwire knows.
    """

    defer: Literal["marked", "all", "auto"] = "marked"
    share: float = 0.1
    keep: Collection[str] = ()
    mechanism: Literal["auto", "native", "local"] = "auto"
    max_results: int = 5
    name: str = "search_tools"
    context_window: int | None = None
    _indexes: dict[tuple[int, ...], ToolIndex] = field(
        default_factory=dict[tuple[int, ...], "ToolIndex"], init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.defer not in ("marked", "all", "auto"):
            raise ValueError(f"defer must be 'marked', 'all' or 'auto', got {self.defer!r}")
        if self.mechanism not in ("auto", "native", "local"):
            raise ValueError(
                f"mechanism must be 'auto', 'native' or 'local', got {self.mechanism!r}"
            )
        if not 0 < self.share <= 1:
            raise ValueError(f"share must be in (0, 1], got {self.share}")
        if self.max_results < 1:
            raise ValueError("max_results must be at least 1")
        object.__setattr__(self, "keep", frozenset(self.keep))

    def start(
        self, model: object, tools: Mapping[str, Tool], *, toolset: bool = False
    ) -> SearchRun | None:
        """A run's tool search, or `None` when nothing is deferred (the run is unchanged).

        `SearchRun.tools` is the run's tools with the search tool among them, for the loop to
        run it like any other. A run with a toolset (`toolset=True`) always gets one: which of
        its tools are deferred shows only in each step's list (`SearchRun.offer`).

        Raises:
            ValueError: a tool of the run already has the search tool's name.
        """
        if self.defer == "marked" and not (toolset or any(is_deferred(t) for t in tools.values())):
            return None
        if self.name in tools:
            raise ValueError(
                f"a tool is named {self.name!r}, the tool search tool's name: pass "
                "ToolSearch(name=...) with another"
            )
        return SearchRun(self, model, tools)

    def index(self, tools: Sequence[Tool]) -> ToolIndex:
        """The index over `tools`, built once and shared by the runs of every agent configured
        with this `ToolSearch` (a few lists are kept; the index holds its tools alive, so their
        ids stay theirs)."""
        key = tuple(map(id, tools))
        found = self._indexes.get(key)
        if found is None:
            if len(self._indexes) >= _KEPT_INDEXES:
                self._indexes.pop(next(iter(self._indexes)))
            found = self._indexes[key] = ToolIndex(tools)
        return found


class Deferred(ToolWrapper):
    """A tool sent only once the model has found it through tool search (see `deferred`)."""

    def default_search(self) -> ToolSearch:
        """The tool search of a run with a deferred tool and no `tool_search` configured (the
        agent asks its tools' wrappers for one, so a run without them never loads this module)."""
        return ToolSearch()


def deferred(*tools: ToolLike) -> list[Tool]:
    """Mark tools as deferred: kept out of requests until the model finds them.

    `Agent(model, tools=[everyday, *deferred(rare_one, rare_two)])`.
    """
    return [t if isinstance(t, Deferred) else Deferred(as_tool(t)) for t in tools]


def is_deferred(item: object) -> bool:
    """Whether a tool was marked with `deferred` (through any `ToolWrapper`s around it)."""
    # Wrappers are ToolWrappers: a plain tool is answered at once (this runs per tool per run).
    while isinstance(item, ToolWrapper):
        if isinstance(item, Deferred):
            return True
        item = item.wrapped
    return False


class _OnDemand(ToolWrapper):
    """A deferred tool as the provider's own search needs it: its definition says
    `defer_loading`, so the provider loads it only when its search finds it."""

    loaded_on_demand = True  # not in the prompt: `RequestSizer` leaves it out

    def definition(self, dialect: DefinitionDialect) -> ToolDefinition:
        return replace(self.wrapped.definition(dialect), defer_loading=True)


class _NotFoundYet(ToolWrapper):
    """Answers a call of a deferred tool the model has not found yet."""

    def __init__(self, wrapped: Tool, search: str) -> None:
        super().__init__(wrapped)
        self._search = search

    @property
    def executable(self) -> bool:
        return True

    @property
    def requires_approval(self) -> bool:
        return False  # nothing runs

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        return ToolResult(
            content=[
                TextPart(
                    f'Error: the tool "{self.name}" is not loaded yet. Call {self._search} with '
                    "words describing what you need; the tools it finds can be called from your "
                    "next step."
                )
            ],
            is_error=True,
        )


class _Unknown(ToolWrapper):
    """Answers a call of a tool the run does not have, naming the tools sent rather than all."""

    def __init__(self, name: str, sent: Sequence[str], search: Tool) -> None:
        super().__init__(search)  # any name a model makes up: no tool of that name is built
        self._name = name
        self._sent = ", ".join(sent) or "none"

    @property
    def name(self) -> str:
        return self._name

    async def invoke(
        self, args: str | bytes | Mapping[str, Any] | None, ctx: ToolContext | None = None
    ) -> ToolResult:
        return ToolResult(
            content=[
                TextPart(
                    f'Error: unknown tool "{self._name}". Tools loaded now: {self._sent}; '
                    f"{self.wrapped.name} finds the others."
                )
            ],
            is_error=True,
        )


# --- the local index ------------------------------------------------------------------------

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_STOP = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "get", "in", "into"}
    | {"is", "it", "of", "on", "or", "the", "this", "to", "with"}
)
_K1 = 1.2
_B = 0.75
_NAME_WEIGHT = 3
_PARAMETER_WEIGHT = 2


def _term(word: str) -> str | None:
    word = word.lower()
    if word in _STOP:
        return None
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]  # "files" finds "file": plurals are the common near-miss
    return word


def _terms(text: str, known: dict[str, str | None] | None = None) -> list[str]:
    """The index terms of a text; `known` memoises words (tools repeat theirs a great deal)."""
    if known is None:
        known = {}
    out: list[str] = []
    for word in _WORD.findall(text):
        try:
            term = known[word]
        except KeyError:
            term = known[word] = _term(word)
        if term is not None:
            out.append(term)
    return out


def _parameter_names(schema: Any, out: list[str], depth: int = 0) -> None:
    if depth > 6 or type(schema) is not dict:
        return
    node = cast(dict[str, Any], schema)
    properties = node.get("properties")
    if type(properties) is dict:
        for name, sub in cast(dict[str, Any], properties).items():
            out.append(name)
            if type(sub) is dict and ("properties" in sub or "items" in sub):
                _parameter_names(sub, out, depth + 1)
    items = node.get("items")
    if items is not None:
        _parameter_names(items, out, depth + 1)


class ToolIndex:
    """A BM25 index over tools' names, descriptions and parameter names.

    Names weigh three times and parameter names twice a description's words; a query equal to a
    tool's name ranks that tool first. Built once per list of tools; a search touches only the
    postings of the query's words.
    """

    __slots__ = ("_names", "_postings", "tools")

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.tools = list(tools)
        documents: list[dict[str, int]] = []
        known: dict[str, str | None] = {}
        for item in self.tools:
            counts: dict[str, int] = {}
            for term in _terms(item.name, known):
                counts[term] = counts.get(term, 0) + _NAME_WEIGHT
            parameters: list[str] = []
            _parameter_names(item.parameters, parameters)
            for term in _terms(" ".join(parameters), known):
                counts[term] = counts.get(term, 0) + _PARAMETER_WEIGHT
            for term in _terms(item.description, known):
                counts[term] = counts.get(term, 0) + 1
            documents.append(counts)
        average = sum(sum(d.values()) for d in documents) / len(documents) if documents else 1.0
        postings: dict[str, list[tuple[int, float]]] = {}
        for number, counts in enumerate(documents):
            norm = _K1 * (1 - _B + _B * sum(counts.values()) / (average or 1.0))
            for term, tf in counts.items():
                postings.setdefault(term, []).append((number, tf * (_K1 + 1) / (tf + norm)))
        total = len(documents)
        # The idf folded into each posting once: a search only adds numbers up.
        self._postings: dict[str, list[tuple[int, float]]] = {}
        for term, found in postings.items():
            idf = math.log(1 + (total - len(found) + 0.5) / (len(found) + 0.5))
            self._postings[term] = [(number, weight * idf) for number, weight in found]
        self._names = {item.name.lower(): number for number, item in enumerate(self.tools)}

    def search(self, query: str, limit: int = 5) -> list[Tool]:
        """The tools matching `query` best, best first (none when no word matches)."""
        scores: dict[int, float] = {}
        for term in set(_terms(query)):
            for number, weight in self._postings.get(term, ()):
                scores[number] = scores.get(number, 0.0) + weight
        exact = self._names.get(query.strip().lower())
        if exact is not None:
            scores[exact] = scores.get(exact, 0.0) + 1e6
        best = heapq.nlargest(limit, scores.items(), key=lambda pair: pair[1])
        return [self.tools[number] for number, _ in best]


# --- what was found ----------------------------------------------------------------------------


def _names_in(tools: object) -> list[str]:
    """Names in a list of tool definitions (OpenAI's `tool_search_output.tools`: functions, or
    namespaces holding them)."""
    names: list[str] = []
    if not isinstance(tools, list):
        return names
    for entry in cast(list[Any], tools):
        if not isinstance(entry, Mapping):
            continue
        entry = cast(Mapping[str, Any], entry)
        if entry.get("type") == "namespace":
            names.extend(_names_in(entry.get("tools")))
        elif isinstance(entry.get("name"), str):
            names.append(entry["name"])
    return names


def _found_in(message: Message, search: str) -> list[str]:
    if isinstance(message, ToolResultMessage):
        if message.name != search or message.is_error:
            return []
        structured = message.structured
        if isinstance(structured, Mapping):
            return _names_in(cast(Mapping[str, Any], structured).get("tools"))
        return []
    if not isinstance(message, AssistantMessage):
        return []
    names: list[str] = []
    for part in message.parts:
        if isinstance(part, ServerToolResultBlock):
            names.extend(_references(part.content))
        elif isinstance(part, ServerToolCallBlock) and part.provider_state:
            item: object = part.provider_state.get("item")
            if isinstance(item, Mapping):
                raw = cast(Mapping[str, Any], item)
                if raw.get("type") == "tool_search_output":
                    names.extend(_names_in(raw.get("tools")))
    return names


def _references(content: object) -> list[str]:
    """The tool names in Anthropic's tool search result (`tool_reference` blocks)."""
    if not isinstance(content, Mapping):
        return []
    result = cast(Mapping[str, Any], content)
    if result.get("type") != "tool_search_tool_search_result":
        return []
    names: list[str] = []
    for ref in result.get("tool_references") or ():
        if isinstance(ref, Mapping):
            name = cast(Mapping[str, Any], ref).get("tool_name")
            if isinstance(name, str):
                names.append(name)
    return names


def discovered_tools(messages: Iterable[Message], search: str = "search_tools") -> list[str]:
    """The names of the tools found by tool search in a history, in the order they were found.

    Args:
        messages: The history.
        search: The local search tool's name (`ToolSearch.name`).
    """
    found: dict[str, None] = {}
    for message in messages:
        for name in _found_in(message, search):
            found.setdefault(name, None)
    return list(found)


# --- the context window ---------------------------------------------------------------------


def context_window(model: object) -> tuple[int, str]:
    """The model's context window in tokens, and where the figure comes from.

    From `genai-prices`' model data when it is installed and knows the model; else
    `DEFAULT_CONTEXT_WINDOW`, a stated estimate.
    """
    name = getattr(model, "model_name", None)
    provider = getattr(model, "provider", None)
    if isinstance(name, str) and isinstance(provider, str):
        try:
            from genai_prices import data_snapshot

            _, info = data_snapshot.get_snapshot().find_provider_model(name, None, provider, None)
            window = info.context_window
        except Exception:  # not installed, or no such model: the estimate below
            window = None
        if isinstance(window, int) and window > 0:
            return window, "genai-prices"
    return DEFAULT_CONTEXT_WINDOW, f"estimate ({DEFAULT_CONTEXT_WINDOW:,} tokens assumed)"


# --- one run -------------------------------------------------------------------------------


@record
class _Plan:
    """What one list of tools becomes: which are deferred, and how they are searched."""

    deferred: dict[str, Tool] = field(default_factory=dict[str, Tool])
    native: list[Any] | None = None  # the provider's search tool payload, when native
    sent: list[Tool] = field(default_factory=list[Tool])  # native: every tool, in order


class SearchRun:
    """One run's tool search: which tools a request carries, and the gate on deferred calls.

    `ToolSearch.start` makes one for a run that defers anything; the loop asks `select` for each
    request's tools and `gate` for each call's tool.
    """

    def __init__(self, search: ToolSearch, model: object, tools: Mapping[str, Tool]) -> None:
        self.search = search
        self.model = model
        self.candidates = frozenset(tools)
        self.tool: Tool = tool(
            name=search.name,
            description=_SEARCH_DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "Words describing the tool you need.",
                    }
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            execute=self._answer,
        )
        self._planned: Sequence[Tool] | None = None
        self._planned_len = 0
        self._plan = _Plan()
        self._sent: list[str] = []
        self._index: ToolIndex | None = None
        self._found: dict[str, None] = {}
        self._scanned = 0
        self.tools: dict[str, Tool] = {**tools, search.name: self.tool}
        """The run's tools, the search tool among them."""
        self._given = list(tools.values())

    # -- planning

    def _plan_for(self, tools: Sequence[Tool]) -> _Plan:
        # The list itself is kept with its plan, so its id cannot pass to another list.
        if tools is self._planned and len(tools) == self._planned_len:
            return self._plan
        search = self.search
        candidates = [t for t in tools if t.name in self.candidates]
        defer_all = search.defer == "all"
        if search.defer == "auto":
            window = search.context_window or context_window(self.model)[0]
            spent = sum(definition_tokens(t) for t in candidates)
            defer_all = spent > search.share * window
        deferred = {
            t.name: t
            for t in candidates
            if is_deferred(t) or (defer_all and t.name not in search.keep)
        }
        plan = _Plan(deferred)
        if deferred:
            plan.native = self._native_payload()
            if plan.native is not None:
                plan.sent = [_OnDemand(t) if t.name in deferred else t for t in tools]
        self._planned, self._planned_len = tools, len(tools)
        self._plan, self._index = plan, None
        return plan

    def _native_payload(self) -> list[Any] | None:
        mechanism = self.search.mechanism
        if mechanism == "local":
            return None
        profile = profile_of(self.model)
        cell = profile.tool_search
        build = cell.build
        if build is None:
            if mechanism == "native":
                raise UnsupportedError(
                    f"{profile.name} has no tool search of its own ({cell.wire})"
                )
            return None
        name = getattr(self.model, "model_name", "")
        ctx = CellContext(profile.provider, str(name), None, True)
        try:
            return list(build({}, {}, ctx).tools)
        except UnsupportedError:
            if mechanism == "native":
                raise
            return None

    # -- the seam

    def select(
        self, tools: list[Tool], natives: list[Any], messages: Sequence[Message]
    ) -> tuple[list[Tool], list[Any]]:
        """The tools and native tools of the next request."""
        plan = self._plan_for(tools)
        if not plan.deferred:
            return tools, natives
        if plan.native is not None:
            self._sent = [t.name for t in tools if t.name not in plan.deferred]
            return plan.sent, [*natives, *plan.native]
        self._scan(messages)
        # Found tools go after everything sent before, in the order they were found.
        sent = [t for t in tools if t.name not in plan.deferred]
        sent.append(self.tool)
        sent.extend(plan.deferred[name] for name in self._found if name in plan.deferred)
        self._sent = [t.name for t in sent]
        return sent, natives

    def offer(self, tools: Mapping[str, Tool]) -> dict[str, Tool]:
        """A toolset's tools for the step: the candidates for deferral from now on, returned with
        the search tool among them for calls to reach (a toolset's own tool of its name wins)."""
        self.candidates = frozenset(tools)
        return {self.search.name: self.tool, **tools}

    def gate(self, name: str, found: Tool | None, messages: Sequence[Message]) -> Tool | None:
        """The tool a call of `name` runs: `found`, or an error answer for a deferred tool the
        model has not found yet (local search; a provider's own search guards its calls)."""
        plan = self._plan if self._planned is not None else self._plan_for(self._given)
        if found is None:
            # Not the whole toolbox: with tools deferred, listing them all would undo the point.
            return _Unknown(name, self._sent, self.tool) if plan.deferred else None
        if name not in plan.deferred or plan.native is not None:
            return found
        self._scan(messages)
        if name in self._found:
            return found
        return _NotFoundYet(found, self.search.name)

    def _scan(self, messages: Sequence[Message]) -> None:
        if len(messages) < self._scanned:
            self._found, self._scanned = {}, 0
        for message in messages[self._scanned :]:
            for name in _found_in(message, self.search.name):
                self._found.setdefault(name, None)
        self._scanned = len(messages)

    # -- the local search tool

    def _answer(self, arguments: dict[str, Any]) -> ToolResult:
        query = str(arguments.get("query", ""))
        deferred = self._plan.deferred
        if self._index is None:
            self._index = self.search.index(list(deferred.values()))
        hits = self._index.search(query, self.search.max_results)
        if not hits:
            return ToolResult(
                content=[
                    TextPart(
                        f"No tool matches {query!r}. Try other words: what the tool does, or "
                        "the kind of thing it works on."
                    )
                ],
                is_error=True,
            )
        lines = [f"Found {len(hits)} tool(s); they can be called from your next step:"]
        listed: list[dict[str, str]] = []
        for hit in hits:
            description = " ".join(hit.description.split())
            if len(description) > 300:
                description = description[:297] + "..."
            lines.append(f"- {hit.name}: {description}" if description else f"- {hit.name}")
            listed.append({"name": hit.name, "description": description})
        return ToolResult(
            content=[TextPart("\n".join(lines))], structured={"query": query, "tools": listed}
        )
