"""Which run and which tool call a log record belongs to, carried in context variables.

The loop sets them; code deep below it (a retrying model, a tool middleware, an MCP session)
logs with them without being handed the ids. Context variables follow the run into the tasks
it starts, and never leak into the caller's code after the run.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar, Token

__all__ = [
    "CALL_ID",
    "current_call",
    "current_run",
    "in_call",
    "in_run",
    "log_extra",
    "log_prefix",
]

_run: ContextVar[str | None] = ContextVar("toolwire_run_id", default=None)
CALL_ID: ContextVar[str | None] = ContextVar("toolwire_call_id", default=None)
"""The tool call running (set directly by the loop: it is set once per call)."""
_call = CALL_ID


def current_run() -> str | None:
    """The id of the run this code runs in, if any."""
    return _run.get()


def current_call() -> str | None:
    """The id of the tool call this code runs in, if any."""
    return _call.get()


class _InRun:
    """`in_run`'s context manager: a class, not a generator, since every run enters one and
    thousands of runs in flight each keep theirs (fewer objects for the garbage collector)."""

    __slots__ = ("_call_token", "_run_id", "_run_token")

    def __init__(self, run_id: str) -> None:
        self._run_id = run_id
        self._run_token: Token[str | None] | None = None
        self._call_token: Token[str | None] | None = None

    def __enter__(self) -> None:
        self._run_token = _run.set(self._run_id)
        # Only a run started inside a tool call (an agent as a tool) has a call id to hide.
        if _call.get() is not None:
            self._call_token = _call.set(None)

    def __exit__(self, *exc_info: object) -> None:
        if self._call_token is not None:
            _call.reset(self._call_token)
        if self._run_token is not None:
            _run.reset(self._run_token)


def in_run(run_id: str) -> AbstractContextManager[None]:
    """Mark the code inside as part of run `run_id` (its tool calls: of no call yet)."""
    return _InRun(run_id)


@contextmanager
def in_call(call_id: str) -> Generator[None]:
    """Mark the code inside as part of tool call `call_id`."""
    token = _call.set(call_id)
    try:
        yield
    finally:
        _call.reset(token)


def log_extra() -> dict[str, str]:
    """The record attributes naming the current run and call: `toolwire_run_id`, `..._call_id`."""
    extra: dict[str, str] = {}
    run_id = _run.get()
    if run_id is not None:
        extra["toolwire_run_id"] = run_id
        call_id = _call.get()
        if call_id is not None:
            extra["toolwire_call_id"] = call_id
    return extra


def log_prefix() -> str:
    """`"run R: "` or `"run R, call C: "` for a message, empty outside a run."""
    run_id = _run.get()
    if run_id is None:
        return ""
    call_id = _call.get()
    return f"run {run_id}, call {call_id}: " if call_id is not None else f"run {run_id}: "
