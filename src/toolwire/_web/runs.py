"""The durable-runs screen of `toolwire web --runs DB`: list, show, approve, deny and cancel
the runs in a runs database, as `toolwire runs` does.

The work is `toolwire runs`' own (`_cli_runs`: the same filters, the same decisions, the same
checks and messages), on one `RunClient` kept open for the page. The client is made at the first
request, not at start, so the page can open before any worker has created the database; until
then each request answers 503 with the reason.

Routes (under the page's token and Host/Origin checks; POST bodies are JSON):
`GET /api/runs/list?status=waiting&agent=NAME&limit=50`, `GET /api/runs/show?id=RUN_ID`,
`POST /api/runs/approve` `{runId, callIds?, deny?, reason?, results?}`,
`POST /api/runs/deny` `{runId, callIds?, reason?}`, `POST /api/runs/cancel` `{runId}`.
"""

from __future__ import annotations

import typing
from typing import Any
from urllib.parse import parse_qs

import anyio
import anyio.to_thread

from .._cli_agent import CliError
from .._cli_runs import (
    _check_sqlite_file,  # pyright: ignore[reportPrivateUsage]
    _shown,  # pyright: ignore[reportPrivateUsage]
    approve_choice,
    cancel_run,
    database_url,
    decide_calls,
    deny_choice,
    details_json,
    info_json,
    list_rows,
    run_details,
    status_filter,
)
from ..durable import RunClient
from ..errors import RunsDatabaseError
from ..ui._asgi import BadRequest, Receive, Scope, Send, read_json, send_json

__all__ = ["RunsScreen"]

_LIMIT = 200


class RunsScreen:
    """The runs API over one runs database (`db`: a URL or a SQLite file's path)."""

    def __init__(self, db: str) -> None:
        self.db = db
        self.url = database_url(db)
        self.client: RunClient | None = None
        self.opening = anyio.Lock()

    @property
    def shown(self) -> str:
        """The database URL with any password hidden."""
        return _shown(self.url)

    async def close(self) -> None:
        """Close the database connection, if one was made."""
        client, self.client = self.client, None
        if client is not None:
            await anyio.to_thread.run_sync(client.close)

    async def _client(self) -> RunClient:
        async with self.opening:
            if self.client is None:
                try:
                    _check_sqlite_file(self.url)
                except CliError as exc:  # no such file yet: no worker has launched on it
                    raise RunsDatabaseError(str(exc)) from None
                # DBOS's client connects (and checks its tables) synchronously: off the loop.
                self.client = await anyio.to_thread.run_sync(RunClient, self.url)
            return self.client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        import sqlalchemy.exc  # with the durable extra, as dbos

        action = scope["path"].removeprefix("/api/runs/")
        try:
            if scope["method"] == "GET" and action in ("list", "show"):
                query = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
                answer = await (self._list(query) if action == "list" else self._show(query))
            elif scope["method"] == "POST" and action in ("approve", "deny", "cancel"):
                body = await read_json(scope, receive)
                if not isinstance(body, dict):
                    raise BadRequest("the body must be a JSON object")
                answer = await self._act(action, typing.cast(dict[str, Any], body))
            else:
                await send_json(send, 404, {"error": f"no runs API at {scope['method']} {action}"})
                return
        except BadRequest as exc:
            await send_json(send, exc.status, {"error": str(exc)})
            return
        except CliError as exc:  # the messages `toolwire runs` prints
            status = 404 if str(exc).startswith("no run ") else 409
            await send_json(send, status, {"error": str(exc)})
            return
        except (RunsDatabaseError, sqlalchemy.exc.SQLAlchemyError) as exc:
            await self.close()  # a broken connection is made again at the next request
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            await send_json(send, 503, {"error": f"the runs database: {reason}"})
            return
        await send_json(send, 200, answer)

    async def _list(self, query: dict[str, list[str]]) -> dict[str, Any]:
        wanted = status_filter([w for v in query.get("status", []) for w in v.split(",") if w])
        agent = (query.get("agent") or [""])[0] or None
        try:
            limit = min(_LIMIT, max(1, int((query.get("limit") or ["50"])[0])))
        except ValueError:
            raise BadRequest("`limit` must be a number") from None
        rows = await list_rows(await self._client(), wanted, agent=agent, limit=limit)
        return {"database": self.shown, "runs": [info_json(i, w) for i, w in rows]}

    async def _show(self, query: dict[str, list[str]]) -> dict[str, Any]:
        run_id = (query.get("id") or [""])[0]
        if not run_id:
            raise BadRequest("`id` names the run")
        found = await run_details(await self._client(), run_id, self.db)
        return details_json(*found)

    async def _act(self, action: str, body: dict[str, Any]) -> dict[str, Any]:
        run_id = _text(body, "runId")
        client = await self._client()
        if action == "cancel":
            return {"message": await cancel_run(client, run_id, self.db)}
        reason = body.get("reason") or None
        if reason is not None and not isinstance(reason, str):
            raise BadRequest("`reason` must be a string")
        call_ids = _ids(body, "callIds")
        approvals: dict[str, bool | str] = {}
        results: dict[str, Any] = {}
        if action == "deny":
            choose = deny_choice(approvals, call_ids, reason)
        else:
            given: Any = body.get("results") or {}
            if not isinstance(given, dict) or not all(
                isinstance(v, str) for v in typing.cast(dict[str, Any], given).values()
            ):
                raise BadRequest("`results` maps call ids to result texts")
            results.update(typing.cast(dict[str, str], given))
            choose = approve_choice(approvals, call_ids, _ids(body, "deny"), results, reason)
        decided = await decide_calls(client, self.db, run_id, approvals, results, choose)
        return {
            "runId": run_id,
            "decided": [
                {"callId": p.call.id, "name": p.call.name, "decision": what} for p, what in decided
            ],
        }


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"`{key}` must be a non-empty string")
    return value


def _ids(body: dict[str, Any], key: str) -> list[str]:
    value: Any = body.get(key) or []
    if not isinstance(value, list) or not all(
        isinstance(v, str) for v in typing.cast(list[Any], value)
    ):
        raise BadRequest(f"`{key}` must be a list of call ids")
    return typing.cast(list[str], value)
