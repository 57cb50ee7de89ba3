"""The newcomer path through the `toolwire` command: models, approvals, headers, hints."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, ToolAnnotations, tool
from toolwire._cli_agent import ApprovalNeeded, RunView, run_with_view
from toolwire._cli_connect import parse_headers
from toolwire._cli_mcp import describe_parameters
from toolwire._offline import offline_model, plan_calls
from toolwire.prebuilt import available

ROOT = Path(__file__).resolve().parents[1]
TOOLWIRE = [sys.executable, "-m", "toolwire.cli"]


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Any:
    base = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT / "src")}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        base.pop(key, None)
    return subprocess.run(
        [*TOOLWIRE, *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
        cwd=cwd,
    )


def sse(*chunks: dict[str, Any]) -> Any:
    from recordings.replay import Reply

    frame = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1}
    lines = [
        f"data: {json.dumps({**frame, 'model': 'gpt-4.1-mini-2025-04-14', **c})}\n\n"
        for c in chunks
    ]
    return Reply.of_sse("".join(lines) + "data: [DONE]\n\n")


def text_answer(text: str) -> Any:
    return sse(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
    )


def tool_call(name: str, arguments: dict[str, Any]) -> Any:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return sse(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
    )


# --- the offline model -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "calls"),
    [
        ("What is 17% of 2,340?", [("calculator", {"expression": "17% of 2,340"})]),
        ("time in Europe/Berlin?", [("current_datetime", {"timezone": "Europe/Berlin"})]),
        ("is 529.982.247-25 a CPF?", [("br_validate_cpf", {"cpf": "529.982.247-25"})]),
        ("what happened on 2026-01-01", [("current_datetime", {})]),
    ],
)
def test_the_offline_model_calls_what_the_prompt_asks_for(
    prompt: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    tools = available({"BRAVE_API_KEY": "k", "OPENWEATHER_API_KEY": "k"})
    assert plan_calls(prompt, tools) == calls


def test_the_offline_model_never_calls_an_open_world_tool() -> None:
    @tool(annotations=ToolAnnotations(open_world_hint=True))
    def lookup(query: str) -> str:
        """Search the web."""
        return query

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    assert plan_calls("anything", [lookup, echo]) == [("echo", {"text": "anything"})]
    assert plan_calls("anything", [lookup]) == []


@pytest.mark.anyio
async def test_the_help_example_makes_sensible_offline_calls() -> None:
    agent = Agent(offline_model(), tools=available())
    result = await agent.run("What is 17% of 2,340?")
    assert [(t.name, t.is_error) for t in result.trace] == [("calculator", False)]
    assert result.text == "Here is what the tools found:\n- calculator: 397.8"


@pytest.mark.anyio
async def test_with_nothing_to_do_offline_the_model_says_why() -> None:
    from toolwire.prebuilt import br_validate_cpf, calculator, wikipedia_search

    tools = [calculator, br_validate_cpf, wikipedia_search]
    result = await Agent(offline_model(), tools=tools).run("Who won the 1970 World Cup?")
    assert result.trace == []
    assert "not marked open-world" in result.text and "--model" in result.text


# --- approvals -------------------------------------------------------------------------------


@tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    return f"deleted {path}"


def _view() -> RunView:
    from rich.console import Console

    return RunView(Console(file=io.StringIO()), Console(file=io.StringIO()))


@pytest.mark.anyio
@pytest.mark.parametrize(("approve", "result"), [(True, "deleted a.txt"), (False, "not approved")])
async def test_approvals_are_asked_then_the_run_resumes(approve: bool, result: str) -> None:
    from toolwire import FunctionModel

    def reply(messages: list[Any], request: Any) -> Any:
        done = [m for m in messages if getattr(m, "kind", "") == "tool_result"]
        return done[-1].text if done else [("delete_file", {"path": "a.txt"})]

    agent = Agent(FunctionModel(reply), tools=[delete_file])
    asked: list[str] = []

    def ask(question: str) -> bool:
        asked.append(question)
        return approve

    finished = await run_with_view(agent, "go", _view(), interactive=True, ask=ask)
    assert asked == ['Run delete_file({"path": "a.txt"})?']
    assert finished.stop_reason == "completed"
    assert result in finished.text


@pytest.mark.anyio
async def test_without_a_terminal_pending_calls_are_listed() -> None:
    from toolwire import FunctionModel

    agent = Agent(
        FunctionModel(lambda m, r: [("delete_file", {"path": "a.txt"})]), tools=[delete_file]
    )
    with pytest.raises(ApprovalNeeded) as caught:
        await run_with_view(agent, "go", _view(), interactive=False)
    assert caught.value.calls == ['delete_file({"path": "a.txt"})']


def test_run_without_a_terminal_exits_non_zero_listing_the_calls(tmp_path: Path) -> None:
    (tmp_path / "risky.py").write_text(
        "from toolwire import tool\n\n"
        "@tool(requires_approval=True)\n"
        "def wipe(text: str) -> str:\n"
        '    """Wipe.\n\n    Args:\n        text: What.\n    """\n'
        "    return text\n"
    )
    done = run("run", "wipe it", "--tools", str(tmp_path / "risky.py") + ":wipe")
    assert done.returncode == 1
    assert "stopped for approval" in done.stderr
    assert '  - wipe({"text": "wipe it"})' in done.stderr
    assert "Traceback" not in done.stderr


# --- models from the command line --------------------------------------------------------------


def test_run_against_an_openai_compatible_server_streams_the_answer() -> None:
    from recordings.replay import ReplayServer

    replies = [tool_call("calculator", {"expression": "6 * 7"}), text_answer("6 * 7 = 42.")]
    with ReplayServer(replies) as server:
        done = run(
            "run",
            "what is 6*7?",
            "--prebuilt",
            "--model",
            "my-llama",
            "--base-url",
            server.base_url + "/v1",
            "--api-key",
            "local-key",
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "6 * 7 = 42.\n"
    assert f"model: openai-compatible:my-llama at {server.base_url}/v1" in done.stderr
    assert "-> 42" in done.stderr
    sent = server.received[0]
    assert sent.json["model"] == "my-llama" and sent.json["stream"] is True
    assert sent.headers["authorization"] == "Bearer local-key"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "openai:gpt-4.1-mini"], "set OPENAI_API_KEY or pass --api-key"),
        (["--model", "anthropic:claude-sonnet-4-5"], "set ANTHROPIC_API_KEY or pass --api-key"),
        (["--model", "test", "--api-key", "k"], "not 'test'"),
        (["--tools", "./nowhere.py:x"], "no such file"),
        (["--header", "no separator", "--mcp", "http://127.0.0.1:1/mcp"], "'Name: value'"),
    ],
)
def test_run_errors_are_one_line(args: list[str], message: str) -> None:
    done = run("run", "hi", *args)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


def test_demo_stays_offline_with_a_key_set() -> None:
    done = run("demo", env={"OPENAI_API_KEY": "sk-would-cost-money"})
    assert done.returncode == 0, done.stderr
    assert "the offline test model" in done.stderr
    lines = done.stderr.splitlines()
    # The answer comes after the steps, whole.
    assert lines.index(next(x for x in lines if x.startswith("4. server stopped"))) > 3
    assert "- current_datetime: {" in done.stdout and done.stdout.count("\n") == 5


def test_demo_with_a_model_uses_it_and_a_refused_key_is_one_line() -> None:
    from recordings.replay import ReplayServer, Reply

    refused = Reply.of_json(401, {"error": {"message": "Incorrect API key provided: sk-bad."}})
    with ReplayServer([refused]) as server:
        done = run(
            "demo",
            "--model",
            "openai:gpt-4.1-mini",
            env={"OPENAI_API_KEY": "sk-bad", "OPENAI_BASE_URL": server.base_url + "/v1"},
        )
    assert done.returncode == 1
    assert "3. running the agent loop with openai:gpt-4.1-mini" in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: openai HTTP 401: Incorrect API key provided: sk-bad."]
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) < 10


# --- the command line itself -------------------------------------------------------------------


def test_version_and_debug_after_the_command() -> None:
    from toolwire import __version__

    done = run("--version")
    assert (done.returncode, done.stdout) == (0, f"toolwire {__version__}\n")
    debug = run("run", "hi", "--model", "nope:x", "--debug")
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_headers_as_curl_writes_them() -> None:
    assert parse_headers(["Authorization: Bearer a=b", "X-Team=core", "X-Url: http://h:1"]) == {
        "Authorization": "Bearer a=b",
        "X-Team": "core",
        "X-Url": "http://h:1",
    }
    for bad in ["no separator", "Bad Name: x", ": x"]:
        with pytest.raises(Exception, match="Name: value"):
            parse_headers([bad])


def test_parameters_are_described() -> None:
    schema = {
        "type": "object",
        "properties": {
            "expression": {"type": "string"},
            "unit": {"enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["expression"],
    }
    assert describe_parameters(schema) == (
        'expression: string, unit?: "c" | "f", tags?: array of string'
    )


@pytest.fixture(scope="module")
def guarded() -> Iterator[str]:
    """A prebuilt server that wants a token, in a subprocess."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [*TOOLWIRE, "serve", "--prebuilt", "--port", str(port), "--token", "s3cret-s3cret-s3cret"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_mcp_failures_hint_at_the_cause(guarded: str) -> None:
    missing = run("tools", guarded)
    assert missing.returncode == 1 and "pass --token" in missing.stderr
    refused = run("tools", guarded, "--token", "wrong")
    assert refused.returncode == 1 and "refused the credentials given" in refused.stderr
    listed = run("tools", guarded, "--header", "Authorization: Bearer s3cret-s3cret-s3cret")
    assert listed.returncode == 0, listed.stderr
    assert "expression: string" in listed.stdout  # the parameters column
    root = guarded.removesuffix("/mcp")
    wrong_path = run("tools", root + "/api", "--token", "s3cret-s3cret-s3cret")
    assert wrong_path.returncode == 1
    assert f"MCP servers usually answer at {root}/mcp" in wrong_path.stderr, wrong_path.stderr


def test_a_non_mcp_endpoint_is_named_as_such() -> None:
    from recordings.replay import ReplayServer, Reply

    page = Reply(200, b"<html>hello</html>", {"content-type": "text/html"})
    with ReplayServer([page] * 4) as server:
        done = run("tools", server.base_url + "/")
    assert done.returncode == 1
    assert "does not speak MCP" in done.stderr and "/mcp" in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1


RISKY = (
    "from toolwire import tool\n\n"
    "@tool(requires_approval=True)\n"
    "def wipe(text: str) -> str:\n"
    '    """Wipe.\n\n    Args:\n        text: What.\n    """\n'
    "    return f'wiped {text}'\n"
)


@pytest.mark.parametrize(
    ("answer", "result", "calls"),
    [(b"y", "wiped wipe it", 1), (b"n", "Error: not approved: the user declined", 0)],
)
def test_on_a_terminal_approvals_are_asked_and_the_run_resumes(
    tmp_path: Path, answer: bytes, result: str, calls: int
) -> None:
    import pty
    import select
    import time

    (tmp_path / "risky.py").write_text(RISKY)
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm", "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [*TOOLWIRE, "run", "wipe it", "--tools", "risky.py:wipe"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env=env,
    )
    os.close(slave)
    seen = b""
    asked = False
    deadline = time.monotonic() + 60
    try:
        # Read until the command ends (EIO on the master), answering the question once asked.
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([master], [], [], left)
            if not ready:
                break
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            if not asked and b"[y/N]" in seen:
                os.write(master, answer + b"\n")
                asked = True
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    text = seen.decode()
    assert 'Run wipe({"text": "wipe it"})? [y/N]' in text
    assert "waiting for the model (request 1, 0 s)" in text  # the spinner, with its seconds
    # The resumed run's request is the second of the whole run, not a new first one.
    assert "waiting for the model (request 2, " in text
    assert f"- wipe: {result}" in text
    assert "| requests: 2 | tokens: " in text and f"| tool calls: {calls} |" in text  # both runs
    assert "cost: unknown (the offline 'test' model has no price)" in text


def test_run_with_a_stdio_server() -> None:
    server = f"{sys.executable} -m toolwire.cli serve --prebuilt --stdio"
    done = run("run", "what is 6 * 7?", "--stdio", server)
    assert done.returncode == 0, done.stderr
    assert "calculator(" in done.stderr and "-> 42" in done.stderr
    assert done.stdout == "Here is what the tools found:\n- calculator: 42\n"


# --- "test" is one model: the CLI's and Python's fill arguments alike (issue 29, item 6)

ADD_TOOLS = '''
from toolwire import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


def test_the_cli_and_python_test_models_fill_arguments_alike(tmp_path: Path) -> None:
    (tmp_path / "addtools.py").write_text(ADD_TOOLS)
    done = run("run", "What is 2+3?", "--tools", "addtools:add", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'add({"a": 2, "b": 3})' in done.stderr
    assert done.stdout == "Here is what the tools found:\n- add: 5\n"
    python = subprocess.run(
        [
            sys.executable,
            "-c",
            "from toolwire import Agent\nfrom addtools import add\n"
            "result = Agent('test', tools=[add]).run_sync('What is 2+3?')\n"
            "print(result.trace[0].arguments, result.trace[0].result)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{tmp_path}"},
    )
    assert python.returncode == 0, python.stderr
    assert python.stdout == '{"a": 2, "b": 3} 5\n'
