"""Native tools applied: a profile's cells turn specs into one request's payload, before any request.

`resolve_native` is what `ModelBase.resolve_native_tools` runs: each `NativeTool` goes through its
cell in the model's profile, a `tool_choice` forcing one goes through the cell's `Force` (and the
profile's thinking rule), and a cell's `ClientTool`s become the prebuilt function tools toolwire
runs for the provider (Ollama's web API), their factories imported by name on first use (as
`model()` imports a provider's factory): nothing here imports `toolwire.prebuilt`, which sits above
the models' floor and costs its import only to the programs that use it.

The docs tables (support matrix, forcing table, fees) are rendered here from the profiles.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from ..errors import UnsupportedError
from ..native import COMMON_OPTIONS, NATIVE_KINDS, NativeTool
from ._parts import Cell, CellContext, ClientTool, NativePayload
from .profiles import PROFILES, ModelProfile

__all__ = [
    "client_tools",
    "fee_table_markdown",
    "forcing_matrix_markdown",
    "refusal_reasons_markdown",
    "resolve_native",
    "split_client_run",
    "support_matrix_markdown",
    "tool_search_matrix_markdown",
]


def resolve_native(
    profile: ModelProfile,
    tools: Sequence[Any],
    *,
    model_name: str,
    function_tools: bool,
    tool_choice: Any = "auto",
    function_names: Collection[str] = (),
    options: Mapping[str, Any] | None = None,
) -> NativePayload:
    """Turn native tool specs into one adapter's payload; raw dicts pass through as given.

    A `tool_choice` naming a spec's kind (`"web_search"`, ...), or `"required"` with only native
    tools, is checked against the cell's `Force` and the profile's thinking rule, and turned into
    the provider's wire choice (`NativePayload.tool_choice`); any other choice is kept as given.

    Args:
        profile: The profile of the model the request goes to.
        function_names: The function tools' names (a choice naming one of them is theirs).
        options: The request body's defaults and `settings.extra` (e.g. Anthropic's `thinking`).

    Raises:
        UnsupportedError: a tool, an option or a forced choice this provider does not take
            (before any request).
    """
    out = NativePayload(tool_choice=tool_choice)
    ctx = CellContext(
        profile.provider, model_name, profile.family(model_name), function_tools, options or {}
    )
    resolved: list[tuple[NativeTool, Cell, NativePayload]] = []
    for tool in tools:
        if not isinstance(tool, NativeTool):
            out.tools.append(tool)
            continue
        cell = profile.cell(tool.kind)
        if cell.build is None:
            raise UnsupportedError(
                f"{profile.name} cannot take {tool.kind}() ({cell.wire}); it accepts "
                f"{profile.accepted()}; see docs/native-tools.md"
            )
        given = tool.options_for(profile.provider)
        common_names = COMMON_OPTIONS.get(tool.kind, ())
        common = {k: v for k, v in given.items() if k in common_names}
        extra = {k: v for k, v in given.items() if k not in common_names}
        refused = [k for k in common if k not in cell.takes]
        if refused:
            takes = ", ".join(cell.takes) if cell.takes else "none of the common options"
            why = dict(cell.why_not)
            reasons = "".join(f"; {k}: {why[k]}" for k in refused if k in why)
            raise UnsupportedError(
                f"{profile.name}'s {tool.kind} takes no {', '.join(refused)}; of the common "
                f"options it takes {takes} (provider-specific options pass through as given)"
                f"{reasons}"
            )
        payload = cell.build(common, extra, ctx)
        resolved.append((tool, cell, payload))
        out.tools.extend(payload.tools)
        out.functions.extend(client_tools(payload.functions))
        for key, value in payload.body.items():
            out.body[key] = (
                _merged(profile, key, out.body[key], value) if key in out.body else value
            )
    if resolved:
        out.tool_choice = _forced_choice(profile, tool_choice, resolved, function_names, ctx)
    return out


def _merged(profile: ModelProfile, key: str, old: object, new: object) -> object:
    """Two native tools' shares of one body field as one: objects merged key by key, lists
    joined (Groq's `compound_custom.tools.enabled_tools`), equal values kept once.

    Raises:
        UnsupportedError: two different values for one setting.
    """
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        mine = cast(Mapping[str, Any], old)
        theirs = cast(Mapping[str, Any], new)
        both = dict(mine)
        for name, value in theirs.items():
            both[name] = (
                _merged(profile, f"{key}.{name}", mine[name], value) if name in mine else value
            )
        return both
    if isinstance(old, list) and isinstance(new, list):
        joined = list(cast(list[Any], old))
        joined.extend(v for v in cast(list[Any], new) if v not in joined)
        return joined
    if old == new:
        return cast(object, old)
    raise UnsupportedError(
        f"{profile.name}: two native tools set {key!r} differently ({old!r}, {new!r})"
    )


def client_tools(described: Sequence[Any]) -> list[Any]:
    """Each `ClientTool` built by its factory (imported by name); other items as given."""
    built: list[Any] = []
    for item in described:
        if isinstance(item, ClientTool):
            module, _, attribute = item.factory.partition(":")
            factory = getattr(importlib.import_module(module), attribute)
            built.append(factory(name=item.name, **item.options))
        else:
            built.append(item)
    return built


def _forced_choice(
    profile: ModelProfile,
    choice: Any,
    resolved: list[tuple[NativeTool, Cell, NativePayload]],
    function_names: Collection[str],
    ctx: CellContext,
) -> Any:
    """The wire tool choice when `choice` forces a native tool, else `choice` as given."""
    if not isinstance(choice, str) or choice in ("auto", "none"):
        return choice
    if choice == "required":
        if ctx.function_tools:
            return choice  # a function call satisfies it, on every provider
        forced: Any = choice
        for spec, cell, payload in resolved:
            if cell.force.required is None:
                raise UnsupportedError(
                    f"{profile.name} cannot be made to use a native tool (tool_choice="
                    f"'required' with only {spec.kind}() and other native tools): "
                    f"{cell.force.wire}; {_forceable(profile)}"
                )
            profile.thinking.check_forced(ctx.options, profile.name)
            forced = cell.force.required(payload, ctx)
        return forced
    if choice in function_names:
        return choice
    for spec, cell, payload in resolved:
        if spec.kind != choice:
            continue
        if cell.force.by_name is None:
            raise UnsupportedError(
                f"{profile.name} cannot be made to use {spec.kind}() (tool_choice={choice!r}): "
                f"{cell.force.wire}; {_forceable(profile)}"
            )
        profile.thinking.check_forced(ctx.options, profile.name)
        return cell.force.by_name(payload, ctx)
    return choice


def _forceable(profile: ModelProfile) -> str:
    names = [
        f"{k}()"
        for k in NATIVE_KINDS
        if profile.cell(k).supported and profile.cell(k).force.by_name is not None
    ]
    return f"it can force {', '.join(names)} by name" if names else "it forces no native tool"


def split_client_run(
    profile: ModelProfile, tools: Sequence[NativeTool]
) -> tuple[list[Any], list[Any]]:
    """For a loop: the specs the provider runs, and the function tools toolwire runs for it.

    A spec whose cell is `client_run` (Ollama's `web_search()`/`web_fetch()`) becomes the function
    tool the loop must run itself; other specs are kept (resolved, and refused if need be, at
    request time).
    """
    kept: list[Any] = []
    functions: list[Any] = []
    for spec in tools:
        if profile.cell(spec.kind).client_run:
            payload = resolve_native(profile, [spec], model_name="", function_tools=True)
            functions.extend(payload.functions)
        else:
            kept.append(spec)
    return kept, functions


# --- the docs tables -------------------------------------------------------------------------


def _thinking_note(profile: ModelProfile) -> str:
    return "" if profile.thinking.forced_tool else "; refused with extended thinking"


def support_matrix_markdown() -> str:
    """The support matrix as a Markdown table (the one docs/native-tools.md shows)."""
    head = "| adapter | " + " | ".join(f"`{k}()`" for k in NATIVE_KINDS) + " |"
    lines = [head, "|---" * (len(NATIVE_KINDS) + 1) + "|"]
    for profile in PROFILES:
        cells: list[str] = []
        for kind in NATIVE_KINDS:
            cell = profile.cell(kind)
            if cell.supported:
                takes = f" (options: {', '.join(cell.takes)})" if cell.takes else ""
                cells.append(f"yes: `{cell.wire}`{takes}")
            else:
                cells.append(f"no: {cell.wire}")
        lines.append(f"| {profile.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def forcing_matrix_markdown() -> str:
    """How `tool_choice` forces each native tool, per profile, as a Markdown table (the one
    docs/native-tools.md shows); made from the `force` of each cell and the thinking rules."""
    kinds = [k for k in NATIVE_KINDS if any(p.cell(k).supported for p in PROFILES)]
    head = "| adapter | " + " | ".join(f'`tool_choice="{k}"`' for k in kinds)
    lines = [head + ' | `"required"`, native tools only |', "|---" * (len(kinds) + 2) + "|"]
    for profile in PROFILES:
        cells: list[str] = []
        forces = [profile.cell(k).force for k in kinds if profile.cell(k).supported]
        note = _thinking_note(profile)
        for kind in kinds:
            cell = profile.cell(kind)
            if not cell.supported:
                cells.append("tool refused")
            elif cell.force.by_name is not None:
                cells.append(f"yes: {cell.force.wire}{note}")
            else:
                cells.append(f"no: {cell.force.wire}")
        if not forces:
            cells.append("no native tools")
        else:
            # One profile forces "required" one way (the cells of a profile share it).
            force = forces[0]
            if force.required is not None:
                cells.append(f"yes: {force.required_wire}{note}")
            else:
                cells.append(f"no: {force.required_wire}")
        lines.append(f"| {profile.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fee_table_markdown() -> str:
    """The profiles' per-use fees as a Markdown table (the one docs/native-tools.md shows)."""
    lines = ["| provider | tool | USD per use | source | as of |", "|---|---|---|---|---|"]
    for profile in PROFILES:
        for kind, fee in profile.fees.items():
            lines.append(
                f"| {profile.provider} | {kind} | {fee.per_use} | {fee.source} | {fee.as_of} |"
            )
    return "\n".join(lines) + "\n"


def tool_search_matrix_markdown() -> str:
    """Which profiles search deferred tools natively and which get toolwire's local search tool,
    as a Markdown table (the one docs/context.md shows)."""
    lines = ["| adapter | tool search |", "|---|---|"]
    for profile in PROFILES:
        cell = profile.tool_search
        text = f"native: `{cell.wire}`" if cell.supported else cell.wire
        lines.append(f"| {profile.name} | {text} |")
    return "\n".join(lines) + "\n"


def refusal_reasons_markdown() -> str:
    """The common options a provider's tool refuses for a documented reason, with its source,
    as a Markdown list (the one docs/native-tools.md shows), from the cells' `why_not`."""
    lines = [
        f"- {profile.name}: `{kind}()` takes no `{option}`: {why}"
        for profile in PROFILES
        for kind in NATIVE_KINDS
        for option, why in profile.cell(kind).why_not
    ]
    return "\n".join(lines) + "\n"
