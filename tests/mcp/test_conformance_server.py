"""Every server scenario of the official conformance suite, against toolwire's own server.

The fixture (conformance_server.py) is written with toolwire's public API. The whole active
suite runs once per module (one Node process), then each scenario is checked on its own: every
check it defines must be there and pass (a summary alone can pass with checks missing), the
fixture behind it must really have run, and where a check only looks at an answer's shape the
answer itself is checked too.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from conformance_server import RAN, conformance_app
from mcp_fixtures import node_env, require_node_tool, serve_app

from toolwire.mcp import ResourceUpdates


@dataclass
class SuiteRun:
    checks: dict[str, list[dict[str, Any]]]  # scenario -> its checks
    ran: Counter[str]
    returncode: int
    output: str
    subscribed: int


def _scenario_checks(out: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in out.glob("server-*/checks.json"):
        # Directories are named `server-<scenario>-<timestamp>`.
        scenario = path.parent.name.removeprefix("server-").rsplit("-", 6)[0]
        found[scenario] = json.loads(path.read_text())
    return found


def _run_suite(out: Path, *scenario: str) -> SuiteRun:
    cli = require_node_tool("conformance")
    RAN.clear()
    updates = ResourceUpdates()

    async def run() -> tuple[int, str]:
        async with serve_app(conformance_app(updates=updates)) as url:
            with anyio.fail_after(240):
                # The pending scenarios too (json-schema-2020-12 and server-sse-polling).
                args = ["--scenario", scenario[0]] if scenario else ["--suite", "all"]
                done = await anyio.run_process(
                    [cli, "server", "--url", url, "-o", str(out), *args],
                    env=node_env(),
                    check=False,
                )
        return done.returncode, done.stdout.decode(errors="replace")

    returncode, output = anyio.run(run)
    return SuiteRun(
        _scenario_checks(out),
        Counter(RAN),
        returncode,
        output,
        updates.subscribers("test://watched-resource"),
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    return _run_suite(tmp_path_factory.mktemp("conformance"))


def _ids(prefix: str, *names: str) -> set[str]:
    return {f"{prefix}-{n}" for n in names}


# Each scenario of the active suite: the checks it must report (all SUCCESS), and what of the
# fixture must have run for it (exactly once over the whole suite).
SCENARIOS: dict[str, tuple[set[str], tuple[str, ...]]] = {
    "server-initialize": ({"server-initialize"}, ()),
    "logging-set-level": ({"logging-set-level"}, ()),
    "ping": ({"ping"}, ()),
    "completion-complete": ({"completion-complete"}, ()),
    "tools-list": ({"tools-list"}, ()),
    "tools-call-simple-text": ({"tools-call-simple-text"}, ("test_simple_text",)),
    "tools-call-image": ({"tools-call-image"}, ("test_image_content",)),
    "tools-call-audio": ({"tools-call-audio"}, ("test_audio_content",)),
    "tools-call-embedded-resource": (
        {"tools-call-embedded-resource"},
        ("test_embedded_resource",),
    ),
    "tools-call-mixed-content": ({"tools-call-mixed-content"}, ("test_multiple_content_types",)),
    "tools-call-with-logging": ({"tools-call-with-logging"}, ("test_tool_with_logging",)),
    "tools-call-error": ({"tools-call-error"}, ("test_error_handling",)),
    "tools-call-with-progress": ({"tools-call-with-progress"}, ("test_tool_with_progress",)),
    "tools-call-sampling": ({"tools-call-sampling"}, ("test_sampling",)),
    "tools-call-elicitation": ({"tools-call-elicitation"}, ("test_elicitation",)),
    "json-schema-2020-12": (
        _ids("json-schema-2020-12", "tool-found", "$schema", "$defs", "additionalProperties"),
        (),
    ),
    "elicitation-sep1034-defaults": (
        {
            f"elicitation-sep1034-{kind}-default"
            for kind in ("string", "integer", "number", "enum", "boolean")
        },
        ("test_elicitation_sep1034_defaults",),
    ),
    "elicitation-sep1330-enums": (
        _ids(
            "elicitation-sep1330",
            "untitled-single",
            "titled-single",
            "legacy-enumnames",
            "untitled-multi",
            "titled-multi",
        ),
        ("test_elicitation_sep1330_enums",),
    ),
    "server-sse-multiple-streams": (
        {"server-accepts-multiple-post-streams", "server-sse-streams-functional"},
        (),
    ),
    # server-sse-polling (pending in 0.1.16) is checked on its own below.
    "resources-list": ({"resources-list"}, ()),
    "resources-read-text": ({"resources-read-text"}, ("static_text",)),
    "resources-read-binary": ({"resources-read-binary"}, ("static_binary",)),
    "resources-templates-read": ({"resources-templates-read"}, ("template",)),
    "resources-subscribe": ({"resources-subscribe"}, ()),
    "resources-unsubscribe": ({"resources-unsubscribe"}, ()),
    "prompts-list": ({"prompts-list"}, ()),
    "prompts-get-simple": ({"prompts-get-simple"}, ("test_simple_prompt",)),
    "prompts-get-with-args": ({"prompts-get-with-args"}, ("test_prompt_with_arguments",)),
    "prompts-get-embedded-resource": (
        {"prompts-get-embedded-resource"},
        ("test_prompt_with_embedded_resource",),
    ),
    "prompts-get-with-image": ({"prompts-get-with-image"}, ("test_prompt_with_image",)),
    "dns-rebinding-protection": (
        {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
        (),
    ),
}


def _verdicts(checks: list[dict[str, Any]]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in checks if c["status"] != "INFO"}


def _details(suite: SuiteRun, scenario: str, check: str) -> dict[str, Any]:
    (found,) = [c for c in suite.checks[scenario] if c["id"] == check]
    return found.get("details") or {}


def test_the_suite_ran_every_scenario_and_passed(suite: SuiteRun) -> None:
    assert set(suite.checks) == {*SCENARIOS, "server-sse-polling"}, suite.output[-2000:]
    assert suite.returncode == 0, suite.output[-2000:]
    expected = Counter(name for _, names in SCENARIOS.values() for name in names)
    assert suite.ran == expected + Counter(["test_reconnection"])


def test_sse_polling_scenario_asks_as_a_client_too_old_to_resume(suite: SuiteRun) -> None:
    """The pending SEP-1699 scenario calls its tool with `MCP-Protocol-Version: 2025-03-26`.

    A client of that revision cannot read a priming event, so the server must not send one
    (nor let go of the stream, which the client could not resume): the scenario's two
    SHOULD checks come out as warnings and the answer arrives on the POST stream itself.
    test_mcp_server_resume.py checks the same flow as a 2025-11-25 client, where it resumes.
    """
    checks = suite.checks["server-sse-polling"]
    assert _verdicts(checks) == {
        "server-sse-priming-event": "WARNING",
        "server-sse-retry-field": "WARNING",
    }
    answered = [c for c in checks if c["description"] == "Received tool response on POST stream"]
    (answer,) = answered
    assert answer["status"] == "INFO"
    assert _text(answer["details"]["body"]["result"]) == (
        "Reconnection test completed successfully (stream released: False)"
    )
    # Every other scenario passed, so the suite's own verdict is this scenario's warnings only.
    assert "Total: 44 passed, 0 failed" in suite.output, suite.output[-1500:]


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_server_scenario(suite: SuiteRun, scenario: str) -> None:
    expected, _ = SCENARIOS[scenario]
    results = _verdicts(suite.checks[scenario])
    assert set(results) == expected, results
    assert set(results.values()) == {"SUCCESS"}, suite.checks[scenario]


def _text(result: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in result["content"])


def test_talking_tools_really_talked(suite: SuiteRun) -> None:
    logs = _details(suite, "tools-call-with-logging", "tools-call-with-logging")["logs"]
    assert [entry["data"] for entry in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert {entry["level"] for entry in logs} == {"info"}

    progress = _details(suite, "tools-call-with-progress", "tools-call-with-progress")
    notes = progress["progressNotifications"]
    assert [(n["progress"], n["total"]) for n in notes] == [(0, 100), (50, 100), (100, 100)]

    sampled = _details(suite, "tools-call-sampling", "tools-call-sampling")["result"]
    assert _text(sampled) == "LLM response: This is a test response from the client"

    elicited = _details(suite, "tools-call-elicitation", "tools-call-elicitation")["result"]
    assert _text(elicited) == (
        'User response: action=accept, content={"username": "testuser", '
        '"email": "test@example.com"}'
    )


def test_completion_and_subscriptions_did_their_work(suite: SuiteRun) -> None:
    completed = _details(suite, "completion-complete", "completion-complete")["result"]
    # The suite types "test": only the suggestions starting with it come back.
    assert completed["completion"] == {"values": ["test", "testing"], "total": 2, "hasMore": False}
    # One scenario subscribed and left; the other subscribed and unsubscribed.
    assert suite.subscribed == 1
