"""`toolwire runs`: see and steer durable runs in their database.

Built on `toolwire.durable.RunClient`, which reads and writes the runs' database and never runs a
run itself: the workers (processes that `launch()` on the same database) do the work, so these
commands work from any machine that reaches the database. `dbos` is imported only when a
command runs, so `toolwire --help` works without the `durable` extra.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ._cli_agent import CliError, preview
from ._run_result import RunResult, dump_result
from .messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    dump_history,
)

if TYPE_CHECKING:
    from ._run_result import PendingCall
    from .durable import RunClient, RunInfo

__all__ = [
    "DB_ENV",
    "DEFAULT_DB",
    "add_runs",
    "approve_choice",
    "cancel_run",
    "database_url",
    "decide_calls",
    "deny_choice",
    "details_json",
    "info_json",
    "list_rows",
    "run_details",
    "runs_app",
    "status_filter",
]

DB_ENV = "TOOLWIRE_RUNS_DB"
# The database `toolwire.durable.launch()` uses when given none, so both agree by default.
DEFAULT_DB = "sqlite:///toolwire-runs.sqlite"

runs_app = typer.Typer(
    name="runs",
    help="See and steer durable runs: list, show, approve, deny, cancel, resume, recover, start.",
    epilog="Example: toolwire runs list --db sqlite:///toolwire-runs.sqlite --status waiting",
    no_args_is_help=True,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

Db = Annotated[
    str,
    typer.Option(
        "--db",
        envvar=DB_ENV,
        help="The runs database: sqlite:///path, a SQLite file's path, or postgresql://...",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
RunId = Annotated[str, typer.Argument(help="The run id.")]

# DBOS's statuses, as the commands say them.
_WORDS = {
    "PENDING": "running",
    "ENQUEUED": "queued",
    "DELAYED": "delayed",
    "SUCCESS": "succeeded",
    "ERROR": "failed",
    "CANCELLED": "cancelled",
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed: recovered too many times",
}
_FILTERS = {
    "running": ["PENDING"],
    "waiting": ["PENDING"],
    "queued": ["ENQUEUED", "DELAYED"],
    "succeeded": ["SUCCESS"],
    "failed": ["ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"],
    "cancelled": ["CANCELLED"],
}
_FINISHED = ("SUCCESS", "ERROR")


# --- the database -------------------------------------------------------------------------------


def database_url(db: str) -> str:
    """A database URL from `--db`: URLs as they are, a file path as a SQLite URL."""
    if "://" in db:
        return db
    return f"sqlite:///{Path(db).expanduser().resolve()}"


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _check_sqlite_file(url: str) -> None:
    """A SQLite database must exist already: connecting would create an empty file, and a
    mistyped path would look like a database with no runs. `RunClient` checks the rest."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return
    if parsed.get_backend_name() != "sqlite":
        return
    path = parsed.database
    if not path or path == ":memory:":
        raise CliError(f"--db {url}: an in-memory database holds no runs; give a file")
    if not Path(path).is_file():
        raise CliError(
            f"no runs database at {path}: workers create it when they launch() "
            f"(give the URL they use with --db or {DB_ENV})"
        )


@asynccontextmanager
async def _connected(db: str) -> AsyncGenerator[RunClient]:
    from .durable import RunClient  # MissingDependencyError names the extra when dbos is missing

    url = database_url(db)
    _check_sqlite_file(url)
    # DBOS logs connection failures itself; RunsDatabaseError says them once, in one line.
    logging.getLogger("dbos").setLevel(logging.CRITICAL)
    import sqlalchemy.exc

    client = RunClient(url)
    try:
        yield client
    except sqlalchemy.exc.SQLAlchemyError as exc:
        # The database went away (or broke) after the client connected.
        raise CliError(f"the runs database {_shown(url)} failed: {_reason(exc)}") from exc
    finally:
        client.close()


def _reason(exc: BaseException) -> str:
    inner = getattr(exc, "orig", None) or exc
    lines = str(inner).strip().splitlines()
    return lines[0] if lines else type(inner).__name__


async def _info(client: RunClient, run_id: str, db: str) -> RunInfo:
    try:
        return await client.info(run_id)
    except KeyError:
        raise CliError(
            f"no run {run_id!r} in {_shown(database_url(db))} (toolwire runs list shows its runs)"
        ) from None


# --- how runs are shown ---------------------------------------------------------------------------


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _iso(ms: int | None) -> str | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000).astimezone().isoformat()


def _state(info: RunInfo, waiting: RunResult | None) -> str:
    if info.status == "PENDING" and waiting is not None:
        count = len(waiting.pending)
        return f"waiting ({count} call{'' if count == 1 else 's'})"
    return _WORDS.get(info.status, info.status.lower())


def _it_is(info: RunInfo) -> str:
    """`it has succeeded`, `it is cancelled`: the run's state in a sentence."""
    verb = "has" if info.status in (*_FINISHED, "MAX_RECOVERY_ATTEMPTS_EXCEEDED") else "is"
    return f"it {verb} {_state(info, None)}"


def _describe_call(call: PendingCall) -> str:
    return f"{call.call.name}({call.call.arguments or '{}'})"


def _pending_json(waiting: RunResult | None) -> list[dict[str, Any]]:
    if waiting is None:
        return []
    return [
        {
            "call_id": p.call.id,
            "name": p.call.name,
            "arguments": p.call.args,
            "needs": "approval" if p.reason == "approval" else "result",
        }
        for p in waiting.pending
    ]


def info_json(info: RunInfo, waiting: RunResult | None) -> dict[str, Any]:
    """One run as `toolwire runs list --json` prints it (and `toolwire web` answers it)."""
    return {
        "run_id": info.run_id,
        "agent": info.agent,
        "status": info.status,
        "state": _state(info, waiting),
        "waiting": waiting is not None,
        "created_at": _iso(info.created_at),
        "updated_at": _iso(info.updated_at),
        "app_version": info.app_version,
        "worker": info.worker,
        "error": info.error,
        "pending": _pending_json(waiting),
    }


async def _waiting(client: RunClient, info: RunInfo) -> RunResult | None:
    return await client.pending(info.run_id) if info.status == "PENDING" else None


def _message_lines(message: Message, full: bool) -> list[tuple[str, str]]:
    """(role, text) lines for one message of the conversation."""

    def cut(text: str, limit: int) -> str:
        return text if full else preview(text, limit)

    if isinstance(message, SystemMessage):
        return [("system", cut(message.text, 200))]
    if isinstance(message, UserMessage):
        others = [p.kind for p in message.content if p.kind != "text"]
        text = message.text + "".join(f" [{kind}]" for kind in others)
        return [("user", text if full else preview(text, 2000))]
    if isinstance(message, AssistantMessage):
        lines: list[tuple[str, str]] = []
        if message.text:
            lines.append(("assistant", message.text))
        for part in message.parts:
            if isinstance(part, ToolCallBlock):
                lines.append(
                    ("assistant", f"-> {part.name}({cut(part.arguments, 200)}) [{part.id}]")
                )
        return lines or [("assistant", "(no text)")]
    assert isinstance(message, ToolResultMessage)
    mark = " error:" if message.is_error else ""
    return [("tool", f"[{message.call_id}] {message.name}:{mark} {cut(message.text, 300)}")]


# --- what the commands do, on an open client (`toolwire web` calls these too) ---------------------


def status_filter(status: Sequence[str]) -> list[str]:
    """The `--status` words, checked: running, waiting, queued, succeeded, failed, cancelled."""
    wanted = [s.lower() for s in status]
    unknown = [s for s in wanted if s not in _FILTERS]
    if unknown:
        raise CliError(f"--status {unknown[0]!r}: use one of {', '.join(_FILTERS)}")
    return wanted


async def list_rows(
    client: RunClient, wanted: Sequence[str], *, agent: str | None, limit: int
) -> list[tuple[RunInfo, RunResult | None]]:
    """The runs in the states `wanted` (all when empty), newest first, each with its pause."""
    statuses = sorted({s for w in wanted for s in _FILTERS[w]}) or None
    runs = await client.list(limit=limit, status=statuses, agent=agent)
    rows = [(info, await _waiting(client, info)) for info in runs]
    if "waiting" in wanted and "running" not in wanted:
        rows = [(i, w) for i, w in rows if i.status != "PENDING" or w is not None]
    if "running" in wanted and "waiting" not in wanted:
        rows = [(i, w) for i, w in rows if i.status != "PENDING" or w is None]
    return rows


async def run_details(
    client: RunClient, run_id: str, db: str
) -> tuple[RunInfo, RunResult | None, RunResult | None, list[Message]]:
    """One run: its info, its pause (if waiting), its result (if done) and its conversation."""
    info = await _info(client, run_id, db)
    waiting = await _waiting(client, info)
    result = await client.result(run_id) if info.status == "SUCCESS" else None
    messages = result.messages if result is not None else await client.conversation(run_id)
    return info, waiting, result, messages


def details_json(
    info: RunInfo, waiting: RunResult | None, result: RunResult | None, messages: list[Message]
) -> dict[str, Any]:
    """One run as `toolwire runs show --json` prints it."""
    data = info_json(info, waiting)
    # The whole result, as the run codec writes it (`RunResult.from_json` reads it back).
    data["result"] = None if result is None else dump_result(result)
    data["messages"] = json.loads(dump_history(messages))
    return data


def approve_choice(
    approvals: dict[str, bool | str],
    call_ids: Sequence[str],
    refused: Sequence[str],
    answers: dict[str, Any],
    reason: str | None,
) -> Callable[[RunResult], None]:
    """How `approve` fills `approvals`: the calls named (default every pending approval not
    refused or answered) approved, the `refused` ones refused with `reason`."""

    def choose(state: RunResult) -> None:
        given = [i for i in call_ids if i not in refused and i not in answers]
        if not call_ids:
            given = [
                p.call.id
                for p in state.pending
                if p.reason == "approval" and p.call.id not in refused and p.call.id not in answers
            ]
        approvals.update(dict.fromkeys(given, True))
        approvals.update(dict.fromkeys(refused, reason or False))

    return choose


def deny_choice(
    approvals: dict[str, bool | str], call_ids: Sequence[str], reason: str | None
) -> Callable[[RunResult], None]:
    """How `deny` fills `approvals`: the calls named (default every pending call) refused."""

    def choose(state: RunResult) -> None:
        approvals.update(dict.fromkeys(call_ids or _pending_ids(state), reason or False))

    return choose


async def decide_calls(
    client: RunClient,
    db: str,
    run_id: str,
    approvals: dict[str, bool | str],
    results: dict[str, Any],
    choose: Callable[[RunResult], None],
) -> list[tuple[PendingCall, str]]:
    """Send one decision; `choose(state)` fills `approvals`/`results` from the paused state.
    Each pending call decided, with what was decided (answered, approved, refused)."""
    info = await _info(client, run_id, db)
    # A cancelled run keeps the pause it was cancelled in: it is decided once resumed.
    state = await client.pending(run_id) if info.status in ("PENDING", "ENQUEUED") else None
    if state is None:
        raise CliError(f"run {run_id!r} is not waiting for a decision ({_it_is(info)})")
    choose(state)
    try:
        await client.decide(run_id, approvals=approvals, results=results)
    except ValueError as exc:
        raise CliError(f"run {run_id!r}: {exc}") from None
    decided: list[tuple[PendingCall, str]] = []
    for pending in state.pending:
        call_id = pending.call.id
        if call_id in results:
            decided.append((pending, "answered"))
        elif approvals.get(call_id) is True:
            decided.append((pending, "approved"))
        elif call_id in approvals:
            decided.append((pending, "refused"))
    return decided


async def cancel_run(client: RunClient, run_id: str, db: str) -> str:
    """Cancel a run that has not finished; what happened, in a sentence."""
    info = await _info(client, run_id, db)
    if info.status in _FINISHED:
        raise CliError(f"run {run_id!r} has already {_state(info, None)}: nothing to cancel")
    if info.status == "CANCELLED":
        return f"run {run_id} was already cancelled"
    await client.cancel(run_id)
    return (
        f"cancelled run {run_id}: its worker stops it before its next step "
        f"(toolwire runs resume {run_id} goes on from there)"
    )


# --- the commands -------------------------------------------------------------------------------


@runs_app.command("list", epilog="Example: toolwire runs list --db sqlite:///runs.sqlite")
def list_runs(
    db: Db = DEFAULT_DB,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            help="Only runs that are running, waiting, queued, succeeded, failed or cancelled; "
            "repeatable.",
        ),
    ] = None,
    agent: Annotated[str | None, typer.Option(help="Only runs of this DurableAgent name.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many, newest first.")] = 50,
    as_json: AsJson = False,
) -> None:
    """List the runs, newest first, with their state and pending approvals."""
    wanted = status_filter(status or [])

    async def main() -> list[tuple[RunInfo, RunResult | None]]:
        async with _connected(db) as client:
            return await list_rows(client, wanted, agent=agent, limit=limit)

    rows = anyio.run(main)
    if as_json:
        out.print_json(json.dumps([info_json(info, waiting) for info, waiting in rows]))
        return
    if not rows:
        err.print("no runs", markup=False)
        return
    table = Table(title=f"{len(rows)} run(s)")
    for column in ("run", "agent", "state", "started", "updated", "worker", "version"):
        # A date stays whole on one line; the other columns fold to make room at 80 columns.
        dated = column in ("started", "updated")
        table.add_column(column, overflow="fold", no_wrap=dated, min_width=19 if dated else None)
    for info, waiting in rows:
        table.add_row(
            Text(info.run_id),
            Text(info.agent),
            Text(_state(info, waiting)),
            _when(info.created_at),
            _when(info.updated_at),
            Text(info.worker or "-"),
            Text(info.app_version or "-"),
        )
    out.print(table)


@runs_app.command("show", epilog="Example: toolwire runs show order-42 --db sqlite:///runs.sqlite")
def show(
    run_id: RunId,
    db: Db = DEFAULT_DB,
    full: Annotated[bool, typer.Option(help="Print long texts whole.")] = False,
    as_json: AsJson = False,
) -> None:
    """Show one run: its state, times, pending approvals and conversation."""

    async def main() -> tuple[RunInfo, RunResult | None, RunResult | None, list[Message]]:
        async with _connected(db) as client:
            return await run_details(client, run_id, db)

    info, waiting, result, messages = anyio.run(main)
    if as_json:
        out.print_json(json.dumps(details_json(info, waiting, result, messages)))
        return
    rows = [
        ("run", info.run_id),
        ("agent", info.agent),
        ("state", _state(info, waiting)),
        ("started", _when(info.created_at)),
        ("updated", _when(info.updated_at)),
        ("worker", info.worker or "-"),
        ("version", info.app_version or "-"),
    ]
    if info.error:
        rows.append(("error", info.error))
    if result is not None:
        usage = result.usage
        rows.append(("stopped", result.stop_reason))
        rows.append(
            (
                "usage",
                f"{result.iterations} model request(s), {usage.input_tokens} input and "
                f"{usage.output_tokens} output tokens",
            )
        )
    for label, value in rows:
        out.print(f"{label:<9}{value}", markup=False)
    if waiting is not None:
        out.print(f"\nwaiting on {len(waiting.pending)} call(s):", markup=False)
        for pending in waiting.pending:
            needs = "needs approval" if pending.reason == "approval" else "needs a result"
            out.print(f"  [{pending.call.id}] {_describe_call(pending)}  {needs}", markup=False)
        out.print(
            f"decide with: toolwire runs approve {run_id}   (or: toolwire runs deny {run_id})",
            markup=False,
        )
    source = "" if info.status == "SUCCESS" or waiting is not None else ", from its checkpoints"
    out.print(f"\nconversation ({len(messages)} messages{source}):", markup=False)
    for message in messages:
        for role, text in _message_lines(message, full):
            out.print(f"  {role:<10} {text}", markup=False)


async def _decide(
    db: str,
    run_id: str,
    approvals: dict[str, bool | str],
    results: dict[str, Any],
    choose: Callable[[RunResult], None],
) -> list[tuple[PendingCall, str]]:
    """`decide_calls` on a connection of its own."""
    async with _connected(db) as client:
        return await decide_calls(client, db, run_id, approvals, results, choose)


def _report(run_id: str, decided: Sequence[tuple[PendingCall, str]]) -> None:
    for pending, what in decided:
        out.print(f"{what} [{pending.call.id}] {_describe_call(pending)}", markup=False)
    out.print(
        f"run {run_id} goes on in its worker (toolwire runs show {run_id} follows it)",
        markup=False,
    )


def _pending_ids(state: RunResult) -> list[str]:
    return [p.call.id for p in state.pending]


@runs_app.command(
    "approve", epilog="Example: toolwire runs approve order-42 --db sqlite:///runs.sqlite"
)
def approve(
    run_id: RunId,
    call_ids: Annotated[
        list[str] | None,
        typer.Argument(help="The calls to approve; default every pending call not refused."),
    ] = None,
    db: Db = DEFAULT_DB,
    deny: Annotated[
        list[str] | None, typer.Option(help="A call to refuse in the same decision; repeatable.")
    ] = None,
    reason: Annotated[
        str | None, typer.Option(help="Why refused calls are refused (the model reads it).")
    ] = None,
    result: Annotated[
        list[str] | None,
        typer.Option(help="CALL_ID=TEXT: the result to use for a call, instead of running it."),
    ] = None,
) -> None:
    """Approve a waiting run's pending calls (or some, refusing others); the run goes on."""
    refused = list(deny or [])
    answers: dict[str, Any] = {}
    for pair in result or []:
        call_id, sep, text = pair.partition("=")
        if not sep or not call_id:
            raise CliError(f"--result takes CALL_ID=TEXT, got {pair!r}")
        answers[call_id] = text
    approvals: dict[str, bool | str] = {}
    choose = approve_choice(approvals, call_ids or [], refused, answers, reason)
    _report(run_id, anyio.run(_decide, db, run_id, approvals, answers, choose))


@runs_app.command("deny", epilog="Example: toolwire runs deny order-42 --reason 'not today'")
def deny(
    run_id: RunId,
    call_ids: Annotated[
        list[str] | None, typer.Argument(help="The calls to refuse; default every pending call.")
    ] = None,
    db: Db = DEFAULT_DB,
    reason: Annotated[
        str | None, typer.Option(help="Why they are refused (the model reads it).")
    ] = None,
) -> None:
    """Refuse a waiting run's pending calls; the model is told and the run goes on."""
    approvals: dict[str, bool | str] = {}
    choose = deny_choice(approvals, call_ids or [], reason)
    no_results: dict[str, Any] = {}
    _report(run_id, anyio.run(_decide, db, run_id, approvals, no_results, choose))


@runs_app.command(
    "cancel", epilog="Example: toolwire runs cancel order-42 --db sqlite:///runs.sqlite"
)
def cancel(run_id: RunId, db: Db = DEFAULT_DB) -> None:
    """Cancel a run: its worker stops it before its next step; `resume` goes on from there."""

    async def main() -> str:
        async with _connected(db) as client:
            return await cancel_run(client, run_id, db)

    out.print(anyio.run(main), markup=False)


@runs_app.command(
    "resume", epilog="Example: toolwire runs resume order-42 --db sqlite:///runs.sqlite"
)
def resume(run_id: RunId, db: Db = DEFAULT_DB) -> None:
    """Put a cancelled run back on the queue: a worker goes on from its last finished step."""

    async def main() -> str:
        async with _connected(db) as client:
            info = await _info(client, run_id, db)
            if info.status in _FINISHED:
                raise CliError(
                    f"run {run_id!r} has {_state(info, None)}: a finished run is not resumed "
                    "(start a new run with its history to go on)"
                )
            if info.status in ("ENQUEUED", "DELAYED"):
                return f"run {run_id} is already queued"
            if info.status == "PENDING":
                worker = info.worker or "?"
                raise CliError(
                    f"run {run_id!r} is running, in worker {worker!r}: if that worker is gone "
                    f"for good, toolwire runs recover {worker} hands its runs to the live ones "
                    "(a worker restarted under its id takes them back by itself)"
                )
            await client.resume(run_id)
        return (
            f"resumed run {run_id}: queued for a worker of version {info.app_version or '?'} "
            f"(toolwire runs show {run_id} follows it)"
        )

    out.print(anyio.run(main), markup=False)


@runs_app.command("recover", epilog="Example: toolwire runs recover worker-a --db postgresql://...")
def recover(
    worker: Annotated[str, typer.Argument(help="The executor id of a worker that is gone.")],
    db: Db = DEFAULT_DB,
) -> None:
    """Hand the unfinished runs of a dead worker to the live ones (never for a live worker:
    it would go on running them too)."""

    async def main() -> list[str]:
        async with _connected(db) as client:
            return await client.recover(worker)

    moved = anyio.run(main)
    if not moved:
        out.print(f"worker {worker} has no unfinished runs", markup=False)
    for run_id in moved:
        out.print(f"queued run {run_id} (was in worker {worker})", markup=False)


@runs_app.command(
    "start",
    epilog="Example: toolwire runs start billing 'Refund order 42' --run-id order-42 --wait",
)
def start(
    agent: Annotated[str, typer.Argument(help="The DurableAgent name the workers build.")],
    prompt: Annotated[str, typer.Argument(help="The prompt.")],
    run_id: Annotated[
        str, typer.Option("--run-id", help="The run's id; starting it again finds the same run.")
    ],
    db: Db = DEFAULT_DB,
    wait: Annotated[
        bool,
        typer.Option(help="Wait until the run ends or waits for a decision; print its answer."),
    ] = False,
) -> None:
    """Queue a run for the workers that build AGENT; with --wait, print its answer."""

    async def main() -> RunResult | RunInfo | None:
        async with _connected(db) as client:
            try:
                await client.start(agent, prompt, run_id=run_id)
            except ValueError as exc:
                raise CliError(str(exc)) from None
            if not wait:
                return None
            while True:
                info = await client.info(run_id)
                if info.status == "SUCCESS":
                    return await client.result(run_id)
                if info.status in ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
                    return info
                if info.status == "PENDING" and await client.pending(run_id) is not None:
                    return info
                # The database is the only link to the worker: look again shortly.
                await anyio.sleep(0.2)

    ended = anyio.run(main)
    if ended is None:
        out.print(
            f"queued run {run_id} of {agent} (toolwire runs show {run_id} follows it)",
            markup=False,
        )
        return
    if isinstance(ended, RunResult):
        out.print(ended.text, markup=False)
        return
    if ended.status == "PENDING":
        raise CliError(
            f"run {run_id} waits for a decision: toolwire runs show {run_id} lists its calls, "
            f"toolwire runs approve {run_id} approves them"
        )
    raise CliError(f"run {run_id} {_it_is(ended)}" + (f": {ended.error}" if ended.error else ""))


def add_runs(app: typer.Typer) -> None:
    """Register `runs` (and its commands) as a command group of `app`."""
    app.add_typer(runs_app)
