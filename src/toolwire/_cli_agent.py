"""How `toolwire run` and `toolwire demo` show a run: a spinner while the model thinks, a line per
tool call, the answer streamed as it comes, approvals asked on a terminal, then usage and cost.

Kept apart from `cli` (the commands and their options) so each stays small.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import anyio
import anyio.to_thread
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.text import Text

from ._cli_common import CliError, preview, resolve_model
from ._events import (
    FunctionCallCompleted,
    FunctionCallStarted,
    ModelRequestEvent,
    ModelResponseEvent,
    RunCompleted,
)
from ._run_result import PendingCall, RunResult, dump_result
from .agent import Agent
from .models.base import TextDelta
from .usage import Cost

__all__ = [
    "ApprovalNeeded",
    "CliError",
    "RunView",
    "preview",
    "report",
    "report_cancelled",
    "resolve_model",
    "result_json",
    "run_with_view",
]


class ApprovalNeeded(Exception):
    """The run paused for approvals and no one is at a terminal to give them.

    Attributes:
        calls: The pending calls, each as `name(arguments)`.
    """

    def __init__(self, calls: list[str]) -> None:
        super().__init__(f"{len(calls)} call(s) need approval: " + "; ".join(calls))
        self.calls = calls


class RunView:
    """Renders one run's events: stderr for progress, stdout for the answer alone.

    Args:
        out: Where the answer goes.
        err: Where progress goes; the spinner shows only when it is a terminal.
        stream_answer: Print the answer as it streams; when off, the caller prints it.
    """

    def __init__(self, out: Console, err: Console, *, stream_answer: bool = True) -> None:
        self.out = out
        self.err = err
        self.stream_answer = stream_answer
        self.streaming = False
        self.answer_open = False  # answer text printed and its line not yet ended
        self.answered = False  # some answer text reached stdout during this run
        self.finished: RunResult | None = None  # the last run's result, cancelled ones too
        self.request_offset = 0  # requests made by the runs before a resumption
        self._status: Status | None = None

    # -- the spinner: only while waiting, stopped before anything else is printed

    def _spin(self, message: str) -> None:
        if not self.err.is_terminal:
            return
        waiting = _Elapsed(message)
        if self._status is None:
            self._status = self.err.status(waiting, spinner="dots")
            self._status.start()
        else:
            self._status.update(waiting)

    def _still(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _end_answer_line(self) -> None:
        if self.answer_open:
            self.out.print()
            self.answer_open = False

    def close(self) -> None:
        """Stop the spinner and end the answer's last line."""
        self._still()
        self._end_answer_line()

    # -- events

    def subscriber(self, event: Any) -> None:
        """The agent's subscriber: renders run events unless a stream is rendering them."""
        if isinstance(event, RunCompleted):
            # Kept even while streaming: a cancelled stream never yields its last event.
            self.finished = event.result
        if not self.streaming:
            self.show(event)

    def show(self, event: Any) -> None:
        """Render one event (a stream delta or a run event)."""
        if isinstance(event, TextDelta):
            if not self.stream_answer:
                return
            self._still()
            self.out.print(event.text, end="", markup=False, highlight=False)
            self.out.file.flush()
            self.answer_open = self.answered = True
        elif isinstance(event, ModelRequestEvent):
            self._spin(f"waiting for the model (request {self.request_offset + event.iteration}")
        elif isinstance(event, ModelResponseEvent):
            self._still()
            self._end_answer_line()
        elif isinstance(event, FunctionCallStarted):
            self._spin(f"running {event.name} (")
        elif isinstance(event, FunctionCallCompleted):
            self._still()
            self._end_answer_line()
            mark = "[red]error[/red]" if event.is_error else "[green]ok[/green]"
            # Names, arguments and results are the tools' text, not markup.
            self.err.print(
                f"  {mark} [bold]{escape(event.name)}[/bold]"
                f"({escape(preview(event.arguments, 80))}) {event.duration * 1000:.0f} ms "
                f"-> {escape(preview(event.result.text, 100))}",
                markup=True,
            )
        elif isinstance(event, RunCompleted):
            self.close()


class _Elapsed:
    """`message` then the seconds since it appeared, re-read at each refresh of the spinner."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.since = time.monotonic()

    def __rich__(self) -> Text:
        seconds = time.monotonic() - self.since
        gap = "" if self.message.endswith("(") else ", "
        return Text(f"{self.message}{gap}{seconds:.0f} s)")


def _describe(call: PendingCall) -> str:
    args = json.dumps(call.call.args, ensure_ascii=False) if call.call.args else "{}"
    return f"{call.call.name}({preview(args, 200)})"


def _ask(err: Console, question: str) -> bool:
    err.print(f"{question} [y/N] ", end="", markup=False)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


async def run_with_view(
    agent: Agent,
    prompt: str,
    view: RunView,
    *,
    interactive: bool,
    ask: Callable[[str], bool] | None = None,
) -> RunResult:
    """Run `agent` streaming into `view`; pauses for approval are asked on a terminal.

    Raises:
        ApprovalNeeded: the run paused for approval and `interactive` is false; the message
            lists the pending calls.
    """
    view.streaming = True
    try:
        async with agent.run_stream(prompt) as stream:
            async for event in stream:
                view.show(event)
        result = stream.result
    finally:
        view.streaming = False
        view.close()
    _print_answer(view, result)
    runs = [result]
    while result.stop_reason == "approval_required":
        pending = [p for p in result.pending if p.reason == "approval"]
        if not interactive:
            raise ApprovalNeeded([_describe(p) for p in pending])
        asker: Callable[[str], bool] = ask or functools.partial(_ask, view.err)
        approvals: dict[str, bool | str] = {}
        for call in pending:
            question = f"Run {_describe(call)}?"
            # Reading the terminal blocks: off the event loop, so nothing else stalls.
            # Abandoned on Ctrl-C: the run stops without waiting for an answer.
            approved = await anyio.to_thread.run_sync(asker, question, abandon_on_cancel=True)
            approvals[call.call.id] = True if approved else "the user declined"
        view.answered = False
        view.request_offset = sum(r.iterations for r in runs)
        try:
            result = await agent.resume(result, approvals=approvals)
        finally:
            view.close()
        _print_answer(view, result)
        runs.append(result)
    return _whole(runs)


def _whole(runs: list[RunResult]) -> RunResult:
    """The last run, with usage, trace and cost summed over the first run and its resumptions."""
    last = runs[-1]
    if len(runs) == 1:
        return last
    unknown = next((r.cost for r in runs if r.cost.total is None), None)
    # A Cost is falsy when its total is unknown: test for None, not truth.
    cost = (
        unknown
        if unknown is not None
        else Cost(sum((r.cost.total or Decimal(0) for r in runs), Decimal(0)))
    )
    usage = runs[0].usage
    for run in runs[1:]:
        usage = usage + run.usage
    return dataclasses.replace(
        last,
        usage=usage,
        cost=cost,
        trace=[entry for run in runs for entry in run.trace],
        iterations=sum(r.iterations for r in runs),
    )


def _print_answer(view: RunView, result: RunResult) -> None:
    # Streamed answers are on screen already; a resumed run's answer arrives whole.
    if view.stream_answer and result.text and not view.answered:
        view.out.print(result.text, markup=False)
        view.answered = True


def report_cancelled(err: Console, result: RunResult | None) -> None:
    """After Ctrl-C: the calls that were cut short, then the usual summary line."""
    if result is None:
        return
    for entry in result.trace:
        if entry.is_error and entry.duration == 0.0 and "cancelled" in entry.result:
            err.print(
                f"  cancelled {entry.name}({preview(entry.arguments, 80)}): its result is recorded "
                "as cancelled",
                markup=False,
            )
    report(err, result)


def result_json(result: RunResult) -> str:
    """The whole result as JSON, for `toolwire run --json`: the run codec's form
    (`RunResult.to_json`, which `RunResult.from_json` reads back) with the answer's `text` first,
    for scripts that want only that."""
    return json.dumps({"text": result.text, **dump_result(result)}, ensure_ascii=False)


def report(err: Console, result: Any) -> None:
    """The run's stop reason, usage and cost, on one line."""
    usage = result.usage
    cost = (
        f"${result.cost.total:.6f}"
        if result.cost.total is not None
        else f"unknown ({result.cost.reason})"
    )
    err.print(
        f"stop: {result.stop_reason} | requests: {usage.requests} | tokens: {usage.input_tokens} in, "
        f"{usage.output_tokens} out | tool calls: {len(result.trace)} | cost: {cost}",
        markup=False,
    )
