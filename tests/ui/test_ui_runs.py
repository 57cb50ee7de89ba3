"""The durable-runs API of `toolwire web --runs DB`: a real DBOS worker on an SQLite file runs
the `shop` agent; the page's API lists, shows, approves, denies and cancels its runs as
`toolwire runs` does, and refuses what it cannot do with `toolwire runs`' own messages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from runs_helpers import Worker, running_worker, wait_finished, wait_paused

from toolwire import Agent, ScriptedModel
from toolwire._web import web_app

pytestmark = pytest.mark.anyio

TOKEN = "a-test-token-long-enough-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Worker]]:
    with running_worker(tmp_path_factory.mktemp("runs")) as found:
        yield found


def page_for(db: str | None) -> httpx.AsyncClient:
    app = web_app(
        Agent(ScriptedModel([])),
        token=TOKEN,
        allowed_hosts=["127.0.0.1"],
        info={"model": "m", "tools": []},
        runs_db=db,
    )
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH, timeout=60
    )


@pytest.fixture
async def page(shop: tuple[str, Worker]) -> AsyncIterator[httpx.AsyncClient]:
    async with page_for(shop[0]) as http:
        yield http


async def show(page: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    answer = await page.get("/api/runs/show", params={"id": run_id})
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_list_and_show_runs_with_their_state_and_pending_calls(
    shop: tuple[str, Worker], page: httpx.AsyncClient
) -> None:
    db, worker = shop
    worker.start("web-done", "charge:a")
    worker.start("web-wait", "charge:b", "refund:c")
    await wait_finished(db, "web-done")
    (call_id,) = await wait_paused(db, "web-wait")

    listed = await page.get("/api/runs/list")
    assert listed.status_code == 200, listed.text
    runs = {r["run_id"]: r for r in listed.json()["runs"]}
    assert runs["web-done"]["state"] == "succeeded" and runs["web-done"]["agent"] == "shop"
    assert runs["web-wait"]["state"] == "waiting (1 call)"
    assert runs["web-wait"]["pending"] == [
        {"call_id": call_id, "name": "refund", "arguments": {"order": "c"}, "needs": "approval"}
    ]
    assert listed.json()["database"] == db

    waiting = await page.get("/api/runs/list", params={"status": "waiting"})
    assert "web-wait" in {r["run_id"] for r in waiting.json()["runs"]}
    assert "web-done" not in {r["run_id"] for r in waiting.json()["runs"]}

    done = await show(page, "web-done")
    assert done["result"]["stop_reason"] == "completed"
    kinds = [m["kind"] for m in done["messages"]]
    assert kinds[0] == "user" and "tool_result" in kinds and kinds[-1] == "assistant"

    missing = await page.get("/api/runs/show", params={"id": "no-such-run"})
    assert missing.status_code == 404 and "no run 'no-such-run'" in missing.json()["error"]
    bad = await page.get("/api/runs/list", params={"status": "sleeping"})
    assert bad.status_code == 409 and "use one of" in bad.json()["error"]


async def test_approve_deny_and_cancel_move_the_runs_on_in_their_worker(
    shop: tuple[str, Worker], page: httpx.AsyncClient
) -> None:
    db, worker = shop
    worker.start("web-approve", "refund:d")
    worker.start("web-deny", "refund:e")
    worker.start("web-cancel", "hold:f")
    (approve_id,) = await wait_paused(db, "web-approve")
    await wait_paused(db, "web-deny")
    worker.wait_for("holding f")

    approved = await page.post("/api/runs/approve", json={"runId": "web-approve"})
    assert approved.status_code == 200, approved.text
    assert approved.json()["decided"] == [
        {"callId": approve_id, "name": "refund", "decision": "approved"}
    ]
    assert (await wait_finished(db, "web-approve")).text.endswith("refunded d")
    again = await page.post("/api/runs/approve", json={"runId": "web-approve"})
    assert again.status_code == 409 and "not waiting for a decision" in again.json()["error"]

    denied = await page.post("/api/runs/deny", json={"runId": "web-deny", "reason": "not today"})
    assert denied.status_code == 200, denied.text
    assert denied.json()["decided"][0]["decision"] == "refused"
    assert "not today" in (await wait_finished(db, "web-deny")).text

    # A result given in the page stands in for running the call.
    worker.start("web-answer", "refund:g")
    (answer_id,) = await wait_paused(db, "web-answer")
    body = {"runId": "web-answer", "results": {answer_id: "refunded by hand"}}
    answered = await page.post("/api/runs/approve", json=body)
    assert answered.json()["decided"][0]["decision"] == "answered", answered.text
    assert (await wait_finished(db, "web-answer")).text.endswith("refunded by hand")

    cancelled = await page.post("/api/runs/cancel", json={"runId": "web-cancel"})
    assert (
        cancelled.status_code == 200 and "cancelled run web-cancel" in cancelled.json()["message"]
    )
    twice = await page.post("/api/runs/cancel", json={"runId": "web-cancel"})
    assert twice.json()["message"] == "run web-cancel was already cancelled"
    assert (await show(page, "web-cancel"))["state"] == "cancelled"
    worker.send("release")  # the held call ends; the cancelled run does not go on
    finished = await page.post("/api/runs/cancel", json={"runId": "web-approve"})
    assert finished.status_code == 409 and "nothing to cancel" in finished.json()["error"]


async def test_bad_requests_are_refused_with_the_reason(page: httpx.AsyncClient) -> None:
    cases: list[tuple[str, Any, str]] = [
        ("approve", {}, "`runId` must be a non-empty string"),
        ("approve", {"runId": "x", "callIds": "c1"}, "`callIds` must be a list of call ids"),
        ("approve", {"runId": "x", "results": {"c1": 3}}, "`results` maps call ids"),
        ("deny", {"runId": "x", "reason": 7}, "`reason` must be a string"),
        ("approve", [1], "the body must be a JSON object"),
    ]
    for action, body, message in cases:
        answer = await page.post(f"/api/runs/{action}", json=body)
        assert answer.status_code == 400, (action, body, answer.text)
        assert message in answer.json()["error"]
    assert (await page.get("/api/runs/nothing")).status_code == 404
    assert (await page.get("/api/runs/show")).status_code == 400
    unauthorised = await page.get("/api/runs/list", headers={"authorization": "Bearer nope"})
    assert unauthorised.status_code == 401


async def test_no_database_and_a_missing_one_say_so_and_the_page_goes_on(tmp_path: Path) -> None:
    async with page_for(None) as http:
        none = await http.get("/api/runs/list")
        info = await http.get("/api/info")
    assert none.status_code == 404 and "--runs DB" in none.json()["error"]
    assert "runs" not in info.json()

    missing = tmp_path / "not-yet.sqlite"
    async with page_for(str(missing)) as http:
        first = await http.get("/api/runs/list")
        info = await http.get("/api/info")
    assert first.status_code == 503 and "no runs database at" in first.json()["error"]
    assert info.status_code == 200 and info.json()["runs"].endswith("not-yet.sqlite")
    assert not missing.exists()  # looking did not create an empty database
