"""Computer use: the provider's model asks the caller to act on a screen.

With `computer_use()` in `tools=`, a model may answer with computer actions (click, type, scroll,
take a screenshot...). toolwire performs none of them and takes no screenshot: the adapter puts
each request in the turn as a `ServerToolCallBlock` named `"computer_use"` (in
`Completion.server_tool_calls`), whose arguments hold the actions normalised across providers
(`ComputerCall`) and the provider's raw input. The caller acts, then answers with a screenshot
(`ComputerCall.result` or `computer_result`); the adapter replays that answer in its provider's
format (Anthropic `tool_result`, OpenAI `computer_call_output`, Gemini `functionResponse`).

An `Agent` run stops with `stop_reason == "external_calls"` and the calls in
`RunResult.computer_calls`; `run(history=result.messages, results={call.id: screenshot})`
resumes it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal, TypeAlias, cast

from ._record import record
from .messages import AssistantMessage, ServerToolCallBlock, ToolCallBlock, ToolResultMessage
from .results import ImagePart, TextPart, ToolResult

__all__ = [
    "COMPUTER_CALL",
    "GEMINI_COMPUTER_FUNCTIONS",
    "ComputerAction",
    "ComputerCall",
    "answerable_calls",
    "anthropic_action",
    "computer_block",
    "computer_result",
    "gemini_action",
    "is_computer_call",
    "lift_calls",
    "openai_action",
    "openai_actions",
]

COMPUTER_CALL = "computer_use"
"""The name of every computer-use request in a turn and of the result answering it."""

Format: TypeAlias = Literal["anthropic", "openai", "gemini"]

GEMINI_COMPUTER_FUNCTIONS = frozenset(
    {
        "open_web_browser",
        "wait_5_seconds",
        "go_back",
        "go_forward",
        "search",
        "navigate",
        "click_at",
        "hover_at",
        "type_text_at",
        "key_combination",
        "scroll_document",
        "scroll_at",
        "drag_and_drop",
    }
)
"""Gemini's predefined computer-use functions: the model calls them like function tools."""


@record
class ComputerAction:
    """One thing the model asks the caller to do on the screen, normalised across providers.

    Attributes:
        type: `"screenshot"`, `"click"`, `"double_click"`, `"triple_click"`, `"mouse_down"`,
            `"mouse_up"`, `"move"`, `"drag"`, `"scroll"`, `"type"`, `"keypress"`,
            `"hold_key"`, `"wait"`, `"cursor_position"`, `"zoom"`, `"navigate"`, `"search"`,
            `"go_back"`, `"go_forward"`, `"open_browser"`; another provider action keeps its
            provider's name.
        x: Where, horizontally (pixels, or on the grid `scale` names).
        y: Where, vertically.
        button: `"left"`, `"right"`, `"middle"`, ... for clicks.
        text: The text to type.
        keys: Keys pressed together (a key combination) or held during the action.
        path: The points of a drag, in order (start first).
        scroll_x: Horizontal scroll distance, when the provider gives one (OpenAI: pixels).
        scroll_y: Vertical scroll distance.
        direction: Scroll direction, when the provider gives one (`"up"`, `"down"`, ...).
        amount: Scroll amount in the provider's unit (Anthropic: wheel clicks; Gemini: pixels).
        duration: Seconds (wait, hold).
        url: The page to open (`navigate`).
        scale: `None` for screen pixels; 1000 when `x`/`y` are on a 0-999 grid (Gemini), see
            `in_pixels`.
        raw: The provider's own description of the action.
    """

    type: str
    x: int | None = None
    y: int | None = None
    button: str | None = None
    text: str | None = None
    keys: list[str] | None = None
    path: list[tuple[int, int]] | None = None
    scroll_x: int | None = None
    scroll_y: int | None = None
    direction: str | None = None
    amount: int | None = None
    duration: float | None = None
    url: str | None = None
    scale: int | None = None
    raw: dict[str, Any] = field(default_factory=dict[str, Any])

    def in_pixels(self, width: int, height: int) -> ComputerAction:
        """This action with grid coordinates turned into pixels of a `width` x `height` screen."""
        if self.scale is None:
            return self
        s = self.scale

        def px(value: int | None, size: int) -> int | None:
            return None if value is None else round(value * size / s)

        path = None
        if self.path is not None:
            path = [(round(a * width / s), round(b * height / s)) for a, b in self.path]
        return replace(self, x=px(self.x, width), y=px(self.y, height), path=path, scale=None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = [list(p) for p in value] if name == "path" else value
        out["raw"] = self.raw
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ComputerAction:
        values = {k: data[k] for k in _FIELDS if k in data}
        if "path" in values:
            values["path"] = [(int(a), int(b)) for a, b in values["path"]]
        return cls(raw=dict(data.get("raw") or {}), **values)


_FIELDS = tuple(f for f in ComputerAction.__dataclass_fields__ if f != "raw")


@record
class ComputerCall:
    """A computer-use request waiting for the caller's answer.

    Attributes:
        id: The call id; the answer carries it.
        actions: What to do, in order, then take a screenshot (OpenAI may batch several).
        safety_checks: Checks the provider wants acknowledged (OpenAI's `pending_safety_checks`);
            answering the call acknowledges them.
        provider: Whose format the request came in: `"anthropic"`, `"openai"` or `"gemini"`.
        raw: The provider's raw input (Anthropic's tool input, OpenAI's `computer_call` item,
            Gemini's function name and arguments).
    """

    id: str
    actions: list[ComputerAction]
    safety_checks: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    provider: str = ""
    raw: Any = None

    @classmethod
    def from_block(cls, block: ServerToolCallBlock) -> ComputerCall:
        """The request a `"computer_use"` server tool call holds."""
        if not is_computer_call(block):
            raise ValueError(f"{block.name!r} (call {block.id!r}) is not a computer-use request")
        args = cast(Mapping[str, Any], block.arguments)
        actions = [ComputerAction.from_json(a) for a in args.get("actions") or ()]
        checks = [dict(c) for c in args.get("safety_checks") or ()]
        return cls(block.id, actions, checks, str(args.get("format", "")), args.get("input"))

    def result(
        self,
        screenshot: bytes | ImagePart | None = None,
        *,
        text: str | None = None,
        error: str | None = None,
        mime_type: str = "image/png",
        url: str | None = None,
    ) -> ToolResultMessage:
        """The answer to this request, for the history (see `computer_result`)."""
        result = computer_result(screenshot, text=text, error=error, mime_type=mime_type, url=url)
        return ToolResultMessage.from_result(self.id, COMPUTER_CALL, result)


def computer_result(
    screenshot: bytes | ImagePart | None = None,
    *,
    text: str | None = None,
    error: str | None = None,
    mime_type: str = "image/png",
    url: str | None = None,
) -> ToolResult:
    """The caller's answer to a computer-use request: the screen after the actions.

    Args:
        screenshot: The screen after the actions (PNG bytes by default, or an `ImagePart`).
        text: A note for the model beside the screenshot.
        error: Why the actions failed; the answer is then an error.
        mime_type: The screenshot's type when given as bytes.
        url: The page now shown (Gemini's browser environment asks for it).

    Raises:
        ValueError: neither a screenshot nor an error.
    """
    if screenshot is None and error is None:
        raise ValueError("a computer-use answer needs a screenshot, or an error saying why not")
    content: list[Any] = []
    if error is not None:
        content.append(TextPart(f"Error: {error}"))
    if text:
        content.append(TextPart(text))
    if isinstance(screenshot, ImagePart):
        content.append(screenshot)
    elif screenshot is not None:
        content.append(ImagePart(data=bytes(screenshot), mime_type=mime_type))
    structured = {"url": url} if url is not None else None
    return ToolResult(content=content, is_error=error is not None, structured=structured)


def is_computer_call(part: object) -> bool:
    """Whether an assistant part is a computer-use request the caller must answer."""
    return (
        isinstance(part, ServerToolCallBlock)
        and part.name == COMPUTER_CALL
        and isinstance(part.arguments, Mapping)
    )


def answerable_calls(message: AssistantMessage) -> list[ToolCallBlock]:
    """The calls of a turn that need a result from the caller's side: function calls and
    computer-use requests (as calls named `"computer_use"`), in the turn's order."""
    out: list[ToolCallBlock] = []
    for part in message.parts:
        if isinstance(part, ToolCallBlock):
            out.append(part)
        elif is_computer_call(part):
            assert isinstance(part, ServerToolCallBlock)
            out.append(ToolCallBlock(part.id, COMPUTER_CALL, json.dumps(part.arguments)))
    return out


def computer_block(
    call_id: str,
    provider: Format,
    raw: Any,
    actions: Sequence[ComputerAction],
    provider_state: dict[str, Any] | None,
    safety_checks: Sequence[Mapping[str, Any]] = (),
) -> ServerToolCallBlock:
    """The turn's part for one computer-use request (what adapters build)."""
    arguments: dict[str, Any] = {
        "format": provider,
        "actions": [a.to_json() for a in actions],
        "input": raw,
    }
    if safety_checks:
        arguments["safety_checks"] = [dict(c) for c in safety_checks]
    return ServerToolCallBlock(call_id, COMPUTER_CALL, arguments, provider_state=provider_state)


# --- the providers' actions, normalised -----------------------------------------------------------


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    # A provider's NaN or infinity is no coordinate: treated as missing, never raised.
    return int(value) if math.isfinite(value) else None


def _point(value: Any) -> tuple[int, int] | None:
    if isinstance(value, Sequence) and not isinstance(value, str):
        pair = cast(Sequence[Any], value)
        if len(pair) == 2:
            x, y = _int(pair[0]), _int(pair[1])
            if x is not None and y is not None:
                return (x, y)
    return None


def _point_of(value: Any) -> tuple[int, int] | None:
    if not isinstance(value, Mapping):
        return None
    point = cast(Mapping[str, Any], value)
    return _point([point.get("x"), point.get("y")])


def _keys(text: Any) -> list[str] | None:
    if not isinstance(text, str) or not text:
        return None
    return [k for k in text.split("+") if k]


_ANTHROPIC_CLICKS = {
    "left_click": ("click", "left"),
    "right_click": ("click", "right"),
    "middle_click": ("click", "middle"),
    "double_click": ("double_click", "left"),
    "triple_click": ("triple_click", "left"),
    "left_mouse_down": ("mouse_down", "left"),
    "left_mouse_up": ("mouse_up", "left"),
}


def anthropic_action(data: Mapping[str, Any]) -> ComputerAction:
    """Anthropic's computer tool input (`computer_20250124` / `computer_20251124`) normalised."""
    raw = dict(data)
    name = str(data.get("action") or "")
    point = _point(data.get("coordinate"))
    x, y = point if point is not None else (None, None)
    text = data.get("text") if isinstance(data.get("text"), str) else None
    duration = data.get("duration")
    seconds = float(duration) if isinstance(duration, int | float) else None
    if name in _ANTHROPIC_CLICKS:
        kind, button = _ANTHROPIC_CLICKS[name]
        # On clicks, `text` names modifier keys held during the click.
        return ComputerAction(kind, x, y, button=button, keys=_keys(text), raw=raw)
    if name == "left_click_drag":
        start = _point(data.get("start_coordinate"))
        path = [p for p in (start, point) if p is not None]
        return ComputerAction("drag", button="left", path=path, raw=raw)
    if name == "mouse_move":
        return ComputerAction("move", x, y, raw=raw)
    if name == "type":
        return ComputerAction("type", text=text, raw=raw)
    if name == "key":
        return ComputerAction("keypress", keys=_keys(text), raw=raw)
    if name == "hold_key":
        return ComputerAction("hold_key", keys=_keys(text), duration=seconds, raw=raw)
    if name == "scroll":
        direction = data.get("scroll_direction")
        return ComputerAction(
            "scroll",
            x,
            y,
            keys=_keys(text),
            direction=direction if isinstance(direction, str) else None,
            amount=_int(data.get("scroll_amount")),
            raw=raw,
        )
    if name == "wait":
        return ComputerAction("wait", duration=seconds, raw=raw)
    return ComputerAction(name or "unknown", x, y, text=text, duration=seconds, raw=raw)


def openai_action(data: Mapping[str, Any]) -> ComputerAction:
    """One action of an OpenAI `computer_call` (GA `actions[]` or preview `action`) normalised."""
    raw = dict(data)
    name = str(data.get("type") or "unknown")
    keys_value = data.get("keys")
    keys = (
        [str(k) for k in cast(Sequence[Any], keys_value)] if isinstance(keys_value, list) else None
    )
    path = None
    if isinstance(data.get("path"), list):
        points = [_point_of(p) for p in cast(list[Any], data["path"])]
        path = [p for p in points if p is not None]
    ms = data.get("ms")
    return ComputerAction(
        name,
        _int(data.get("x")),
        _int(data.get("y")),
        button=data.get("button") if isinstance(data.get("button"), str) else None,
        text=data.get("text") if isinstance(data.get("text"), str) else None,
        keys=keys,
        path=path,
        scroll_x=_int(data.get("scroll_x")),
        scroll_y=_int(data.get("scroll_y")),
        duration=ms / 1000 if isinstance(ms, int | float) else None,
        raw=raw,
    )


def openai_actions(item: Mapping[str, Any]) -> list[ComputerAction]:
    """The actions of an OpenAI `computer_call` item, in order."""
    many = item.get("actions")
    if isinstance(many, list):
        return [
            openai_action(cast(Mapping[str, Any], a))
            for a in cast(list[Any], many)
            if isinstance(a, Mapping)
        ]
    one = item.get("action")
    return [openai_action(cast(Mapping[str, Any], one))] if isinstance(one, Mapping) else []


_GEMINI_GRID = 1000


def gemini_action(name: str, args: Mapping[str, Any]) -> ComputerAction:
    """A call of one of Gemini's predefined computer-use functions, normalised."""
    raw = {"name": name, "args": dict(args)}
    x, y = _int(args.get("x")), _int(args.get("y"))
    grid = _GEMINI_GRID if x is not None or y is not None else None
    direction = args.get("direction") if isinstance(args.get("direction"), str) else None
    if name == "click_at":
        return ComputerAction("click", x, y, button="left", scale=grid, raw=raw)
    if name == "hover_at":
        return ComputerAction("move", x, y, scale=grid, raw=raw)
    if name == "type_text_at":
        text = args.get("text") if isinstance(args.get("text"), str) else None
        return ComputerAction("type", x, y, text=text, scale=grid, raw=raw)
    if name == "key_combination":
        return ComputerAction("keypress", keys=_keys(args.get("keys")), raw=raw)
    if name in ("scroll_document", "scroll_at"):
        amount = _int(args.get("magnitude"))
        return ComputerAction(
            "scroll", x, y, direction=direction, amount=amount, scale=grid, raw=raw
        )
    if name == "drag_and_drop":
        end_x, end_y = _int(args.get("destination_x")), _int(args.get("destination_y"))
        path = [p for p in ((x, y), (end_x, end_y)) if p[0] is not None and p[1] is not None]
        return ComputerAction(
            "drag",
            button="left",
            path=cast(list[tuple[int, int]], path),
            scale=_GEMINI_GRID,
            raw=raw,
        )
    if name == "wait_5_seconds":
        return ComputerAction("wait", duration=5.0, raw=raw)
    if name == "navigate":
        url = args.get("url") if isinstance(args.get("url"), str) else None
        return ComputerAction("navigate", url=url, raw=raw)
    if name == "open_web_browser":
        return ComputerAction("open_browser", raw=raw)
    return ComputerAction(name, x, y, scale=grid, raw=raw)


def lift_calls(
    message: AssistantMessage,
    is_computer: Callable[[ToolCallBlock], bool],
    build: Callable[[ToolCallBlock], ServerToolCallBlock],
) -> None:
    """Turn the function calls of a turn that are computer-use requests into their blocks, in
    place (for providers whose computer actions arrive as ordinary tool calls)."""
    message.parts = [
        build(p) if isinstance(p, ToolCallBlock) and is_computer(p) else p for p in message.parts
    ]
