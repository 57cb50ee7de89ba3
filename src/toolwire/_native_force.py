"""Forcing native tools with `tool_choice`: how each provider is made to use one, or why it cannot.

Each cell of `toolwire.native.SUPPORT` holds a `Force`; `forced_choice` applies it in the same
pass that resolves the specs, before any request.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from .errors import UnsupportedError

if TYPE_CHECKING:
    from .native import Cell, NativePayload, NativeTool, _Context  # pyright: ignore[reportPrivateUsage]

_Choose: TypeAlias = "Callable[[NativePayload, _Context], Any]"


@dataclass(frozen=True, slots=True)
class Force:
    """How `tool_choice` makes a provider use one native tool, or why it cannot.

    Attributes:
        wire: What is sent for a tool forced by name (the docs show it), or why it cannot be.
        by_name: `tool_choice="<kind>"` (e.g. `"web_search"`) to the wire choice, given the
            tool's payload; `None`: refused before any request.
        required: `tool_choice="required"` with only native tools to the wire choice; `None`:
            refused before any request (with function tools beside, "required" is theirs).
        required_wire: What "required" becomes or why it is refused (the docs show it).
    """

    wire: str
    by_name: _Choose | None = None
    required: _Choose | None = None
    required_wire: str = ""


UNFORCEABLE = Force("the provider offers no way to force it", required_wire="no way to force it")


def _required(_: NativePayload, ctx: _Context) -> Any:
    return "required"


def _by_type(payload: NativePayload, _: _Context) -> Any:
    return {"type": payload.tools[0]["type"]}


def _allowed_tools(payload: NativePayload, _: _Context) -> Any:
    # GA `web_search` is not a `{"type": ...}` tool choice; the allowed-tools form takes it.
    return {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [{"type": payload.tools[0]["type"]}],
    }


def _no_thinking(ctx: _Context) -> None:
    thinking = ctx.options.get("thinking")
    if isinstance(thinking, Mapping):
        kind = cast(Mapping[str, Any], thinking).get("type")
        if kind in ("enabled", "adaptive"):
            raise UnsupportedError(
                "Anthropic refuses forced tool use (tool_choice 'required' or a tool name) while "
                "extended thinking is on; use tool_choice='auto' or turn thinking off"
            )


def _anthropic_name(payload: NativePayload, ctx: _Context) -> Any:
    _no_thinking(ctx)
    return {"type": "tool", "name": payload.tools[0]["name"]}


def _anthropic_required(payload: NativePayload, ctx: _Context) -> Any:
    _no_thinking(ctx)
    return "required"


def _function_name(payload: NativePayload, _: _Context) -> Any:
    return payload.functions[0].name


def _groq_required(payload: NativePayload, ctx: _Context) -> Any:
    if "compound" in ctx.model_name:
        raise UnsupportedError(
            f"Groq's compound model {ctx.model_name!r} picks its built-in tools itself; "
            "tool_choice='required' cannot force one"
        )
    return "required"


RESPONSES_FORCE: dict[str, Force] = {
    "web_search": Force(
        '`{"type": "allowed_tools", "mode": "required", "tools": [{"type": "web_search"}]}`',
        _allowed_tools,
        _required,
        "`required`",
    ),
    "code_execution": Force('`{"type": "code_interpreter"}`', _by_type, _required, "`required`"),
    "computer_use": Force(
        '`{"type": "computer"}` (`computer_use_preview` on preview models)',
        _by_type,
        _required,
        "`required`",
    ),
}
ANTHROPIC_FORCE = Force(
    '`{"type": "tool", "name": ...}`; refused with extended thinking',
    _anthropic_name,
    _anthropic_required,
    '`{"type": "any"}`; refused with extended thinking',
)
GEMINI_FORCE = Force(
    "no built-in tool can be forced (function calling modes cover functions only)",
    required_wire="no built-in tool can be forced",
)


MISTRAL_FORCE = Force(
    "the Conversations API forces no tool by name", required=_required, required_wire="`any`"
)
GROQ_FORCE = Force(
    "no tool choice names a built-in tool",
    required=_groq_required,
    required_wire="`required` on gpt-oss models; compound models pick their tools themselves",
)
OPENROUTER_FORCE = Force(
    "tool_choice names functions only; server tools run when the model picks them",
    required_wire="server tools are never forced",
)
OLLAMA_FORCE = Force(
    "the function tool, by its name", _function_name, _required, "`required` (function tools)"
)


def forced_choice(
    row: Mapping[str, Cell],
    label: str,
    choice: Any,
    resolved: list[tuple[NativeTool, Cell, NativePayload]],
    function_names: Collection[str],
    ctx: _Context,
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
                    f"{label} cannot be made to use a native tool (tool_choice='required' with "
                    f"only {spec.kind}() and other native tools): {cell.force.wire}; "
                    f"{_forceable(row)}"
                )
            forced = cell.force.required(payload, ctx)
        return forced
    if choice in function_names:
        return choice
    for spec, cell, payload in resolved:
        if spec.kind != choice:
            continue
        if cell.force.by_name is None:
            raise UnsupportedError(
                f"{label} cannot be made to use {spec.kind}() (tool_choice={choice!r}): "
                f"{cell.force.wire}; {_forceable(row)}"
            )
        return cell.force.by_name(payload, ctx)
    return choice


def _forceable(row: Mapping[str, Cell]) -> str:
    names = [f"{k}()" for k, c in row.items() if c.supported and c.force.by_name is not None]
    return f"it can force {', '.join(names)} by name" if names else "it forces no native tool"
