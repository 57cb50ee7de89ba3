"""Prompt caching: `CachePolicy` (`ModelSettings.cache`) and what each wire API makes of it.

The policy, applied by the adapters on every request unless `cache=False`:
- Anthropic (Messages API): up to three `cache_control` breakpoints, in prefix order: the last
  tool definition, the system prompt, and the last block of the last message (a point that moves
  with the conversation, so each request reads what the previous one wrote). A breakpoint is
  placed only where the prefix up to it reaches the model's minimum cacheable length (estimated
  at 4 characters a token): below it Anthropic caches nothing, and the request stays exactly as
  it would be without caching. Breakpoints already in the request (raw tools) count against
  Anthropic's limit of 4; the fourth is left to the caller. `ttl` ("5m", Anthropic's default, or
  "1h") applies to all of them.
- OpenAI (Responses and Chat Completions, provider "openai" only): `prompt_cache_key` is `key`,
  or, once the request reaches 1,024 tokens (OpenAI's minimum), a key made from the model, the
  instructions and the tool definitions, so requests of one agent land on the same cache;
  `prompt_cache_retention` is sent when `retention` is set ("in_memory" or "24h").
- Gemini caches implicitly; nothing is sent, and its cached tokens are reported in
  `Usage.cache_read_tokens` like every provider's.

`settings.extra` still wins: a `prompt_cache_key` there is sent as given.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, cast

from .._record import record

__all__ = [
    "CachePolicy",
    "CacheRetention",
    "CacheTTL",
    "anthropic_breakpoints",
    "anthropic_minimum",
    "leading_instructions",
    "openai_cache_fields",
]

CacheTTL: TypeAlias = Literal["5m", "1h"]
"""How long Anthropic keeps a cache entry after its last use."""

CacheRetention: TypeAlias = Literal["in_memory", "24h"]
"""How long OpenAI keeps cached prefixes."""

_CHARS_PER_TOKEN = 4
_ANTHROPIC_MAX = 4
_OPENAI_MINIMUM = 1024

# Anthropic's minimum cacheable prompt by model family (its prompt-caching page); others: 1,024.
_MINIMUMS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"opus-4-[5-9]|haiku-4"), 4096),
    (re.compile(r"sonnet-4-6|haiku-3|3-haiku|3-5-haiku"), 2048),
)


@record(frozen=True, kw_only=True)
class CachePolicy:
    """How a request asks the provider to cache its prompt (`ModelSettings(cache=...)`).

    `None` (the default setting) means `CachePolicy()`; `False` turns caching hints off.

    Attributes:
        enabled: Send caching hints at all.
        tools: Anthropic: a breakpoint after the tool definitions.
        system: Anthropic: a breakpoint after the system prompt.
        history: Anthropic: a breakpoint on the last message (moves with the conversation).
        ttl: Anthropic: `"5m"` or `"1h"`; `None` sends none (Anthropic's default, 5 minutes).
        min_tokens: Anthropic: place breakpoints from this prefix length on; `None`: the
            model's documented minimum.
        key: OpenAI: the `prompt_cache_key`; `None`: made from the model, instructions and
            tools once the request is long enough to be cached.
        retention: OpenAI: the `prompt_cache_retention`; `None` sends none.
    """

    enabled: bool = True
    tools: bool = True
    system: bool = True
    history: bool = True
    ttl: CacheTTL | None = None
    min_tokens: int | None = None
    key: str | None = None
    retention: CacheRetention | None = None

    def __post_init__(self) -> None:
        if self.ttl not in (None, "5m", "1h"):
            raise ValueError(f"ttl must be '5m' or '1h', got {self.ttl!r}")
        if self.retention not in (None, "in_memory", "24h"):
            raise ValueError(f"retention must be 'in_memory' or '24h', got {self.retention!r}")
        if self.min_tokens is not None and self.min_tokens < 0:
            raise ValueError(f"min_tokens must be 0 or more, got {self.min_tokens}")

    @classmethod
    def coerce(cls, value: CachePolicy | bool | Mapping[str, Any] | None) -> CachePolicy:
        """A policy from a `CachePolicy`, `True`/`None` (the default), `False` (off) or a
        mapping of its fields."""
        if isinstance(value, CachePolicy):
            return value
        if value is None or value is True:
            return _DEFAULT
        if value is False:
            return _OFF
        if isinstance(value, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            return cls(**value)
        raise TypeError(f"cache takes a CachePolicy, a bool or a mapping, got {value!r}")


_DEFAULT = CachePolicy()
_OFF = CachePolicy(enabled=False)


def anthropic_minimum(model_name: str) -> int:
    """The shortest prompt (tokens) Anthropic caches for `model_name`."""
    for pattern, minimum in _MINIMUMS:
        if pattern.search(model_name):
            return minimum
    return 1024


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str)) // _CHARS_PER_TOKEN


def _marks(value: Any) -> int:
    """Cache breakpoints already in a piece of the request."""
    if isinstance(value, Mapping):
        found = cast(Mapping[str, Any], value)
        return int("cache_control" in found) + sum(_marks(v) for v in found.values())
    if isinstance(value, list):
        return sum(_marks(v) for v in cast(list[Any], value))
    return 0


def anthropic_breakpoints(
    body: dict[str, Any], messages: list[dict[str, Any]], policy: CachePolicy, model_name: str
) -> None:
    """Put the policy's breakpoints into a Messages API request (in place; every block marked
    is a copy, so nothing the history holds is changed)."""
    if not policy.enabled:
        return
    minimum = policy.min_tokens if policy.min_tokens is not None else anthropic_minimum(model_name)
    mark: dict[str, Any] = {"type": "ephemeral"}
    if policy.ttl is not None:
        mark["ttl"] = policy.ttl
    tools = cast(list[dict[str, Any]], body.get("tools") or [])
    system: Any = body.get("system")
    room = _ANTHROPIC_MAX - _marks(tools) - _marks(system) - _marks(messages)
    size = _size(tools) if tools else 0
    if policy.tools and room > 0 and tools and size >= minimum:
        # Deferred tools are not part of the prompt; the last loaded one ends the prefix.
        at = next(
            (i for i in range(len(tools) - 1, -1, -1) if not tools[i].get("defer_loading")), None
        )
        if at is not None and "cache_control" not in tools[at]:
            body["tools"] = [*tools[:at], {**tools[at], "cache_control": mark}, *tools[at + 1 :]]
            room -= 1
    if system:
        size += _size(system)
        if policy.system and room > 0 and size >= minimum:
            body["system"] = _mark_system(system, mark)
            room -= 1
    if not (policy.history and room > 0 and messages):
        return
    if size < minimum:
        for message in messages:
            size += _size(message.get("content"))
            if size >= minimum:
                break
        else:
            return
    marked = _mark_last_block(messages[-1], mark)
    if marked is not None:
        messages[-1] = marked


def _mark_system(system: Any, mark: dict[str, Any]) -> Any:
    if isinstance(system, str):
        return [{"type": "text", "text": system, "cache_control": mark}]
    if isinstance(system, list) and system:
        blocks: list[Any] = list(cast(list[Any], system))
        last: Any = blocks[-1]
        if isinstance(last, Mapping) and "cache_control" not in last:
            blocks[-1] = {**cast(Mapping[str, Any], last), "cache_control": mark}
        return blocks
    return cast(Any, system)


_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def _mark_last_block(message: dict[str, Any], mark: dict[str, Any]) -> dict[str, Any] | None:
    content: Any = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": mark}]}
    if not isinstance(content, list):
        return None
    blocks = list(cast(list[Any], content))
    for i in range(len(blocks) - 1, -1, -1):
        block: Any = blocks[i]
        if not isinstance(block, Mapping):
            continue
        found = cast(Mapping[str, Any], block)
        if found.get("type") not in _UNMARKABLE:
            if "cache_control" in found:
                return None
            blocks[i] = {**found, "cache_control": mark}
            return {**message, "content": blocks}
    return None


def openai_cache_fields(
    body: Mapping[str, Any], policy: CachePolicy, provider: str, prefix: Any
) -> dict[str, Any]:
    """The `prompt_cache_key` / `prompt_cache_retention` fields for an OpenAI request body.

    Args:
        body: The request as built so far (its length decides whether a key is made).
        policy: The request's policy.
        provider: The adapter's provider; only `"openai"` takes these fields.
        prefix: What the automatic key is made from (model, instructions, tools).
    """
    if not policy.enabled or provider != "openai":
        return {}
    fields: dict[str, Any] = {}
    if policy.key is not None:
        fields["prompt_cache_key"] = policy.key
    elif _size(body) >= _OPENAI_MINIMUM:
        digest = hashlib.sha256(
            json.dumps(prefix, sort_keys=True, ensure_ascii=False, default=str).encode()
        )
        fields["prompt_cache_key"] = "toolwire-" + digest.hexdigest()[:24]
    if policy.retention is not None:
        fields["prompt_cache_retention"] = policy.retention
    return fields


def leading_instructions(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system (or developer) messages a Chat Completions request starts with."""
    found: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") not in ("system", "developer"):
            break
        found.append(message)
    return found
