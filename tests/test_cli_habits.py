"""CLI habits users bring from other agent tools (issue 29, items 9 and 10), each through the real
command in a subprocess."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolwire import __version__

ROOT = Path(__file__).resolve().parents[1]
TOOLWIRE = [sys.executable, "-m", "toolwire.cli"]


def run(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, columns: int = 200
) -> subprocess.CompletedProcess[str]:
    base = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT / "src")}
    for key in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"):
        base.pop(key, None)
    return subprocess.run(
        [*TOOLWIRE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
        cwd=ROOT,
    )


def test_dash_v_prints_the_version_as_dash_dash_version_does() -> None:
    short, long = run("-V"), run("--version")
    assert short.returncode == long.returncode == 0
    assert short.stdout == long.stdout == f"toolwire {__version__}\n"


def test_shell_completion_is_offered_and_completes_commands() -> None:
    script = run("--show-completion", "bash")
    assert script.returncode == 0, script.stderr
    assert "_TOOLWIRE_COMPLETE" in script.stdout
    done = run(
        env={"_TOOLWIRE_COMPLETE": "complete_bash", "COMP_WORDS": "toolwire ru", "COMP_CWORD": "1"}
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["run", "runs"]


def test_run_dash_reads_the_prompt_from_stdin() -> None:
    done = run("run", "-", "--prebuilt", stdin="What is 17% of 2,340?\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here is what the tools found:\n- calculator: 397.8\n"
    empty = run("run", "-", "--prebuilt", stdin="")
    assert empty.returncode == 1
    assert "stdin, which was empty" in empty.stderr


def test_run_json_prints_the_whole_result_and_nothing_else_on_stdout() -> None:
    done = run("run", "What is 17% of 2,340?", "--prebuilt", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # stdout is the JSON alone: no streamed answer before it
    assert result["text"] == "Here is what the tools found:\n- calculator: 397.8"
    assert result["stop_reason"] == "completed"
    assert result["usage"]["requests"] == 2
    assert [(t["name"], t["result"]) for t in result["trace"]] == [("calculator", "397.8")]
    kinds = [m["kind"] for m in result["messages"]]
    assert kinds == ["user", "assistant", "tool_result", "assistant"]
    assert "stop: completed" in done.stderr  # progress and the summary stay on stderr


def test_help_shows_examples_and_no_type_for_flags() -> None:
    # One rendering per help screen answers every question about it (wide enough that no line
    # of the option table wraps).
    assert "Example: toolwire run" in run("--help").stdout
    assert "Example: toolwire runs list" in run("runs", "--help").stdout
    for command in ("serve", "tools", "call", "run", "demo", "runs list"):
        shown = run(*command.split(), "--help")
        assert shown.returncode == 0, shown.stderr
        assert "Example: toolwire " + command in " ".join(shown.stdout.split()), command
        assert "<bool>" not in shown.stdout, command
        if command in ("tools", "call", "run"):
            assert "'Name: value' (or NAME=VALUE)" in shown.stdout, command


def _chunk(delta: dict[str, Any], finish: str | None, **more: Any) -> bytes:
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if delta or finish else []
    data = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "d"}
    return b"data: " + json.dumps({**data, "choices": choices, **more}).encode() + b"\n\n"


class _Azure(http.server.BaseHTTPRequestHandler):
    """Azure's Chat Completions route, streaming one short answer."""

    paths: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.paths.append(self.path)
        usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
        body = b"".join(
            [
                _chunk({"role": "assistant", "content": "hello from azure"}, None),
                _chunk({}, "stop"),
                _chunk({}, None, usage=usage),
                b"data: [DONE]\n\n",
            ]
        )
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def azure_endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Azure)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize("option", ["--endpoint", "--base-url"])
def test_azure_takes_its_endpoint_from_the_command_line(azure_endpoint: str, option: str) -> None:
    _Azure.paths.clear()
    done = run(
        "run",
        "hi",
        "--model",
        "azure:my-deployment",
        option,
        azure_endpoint,
        "--api-key",
        "k",
        env={"AZURE_OPENAI_API_VERSION": "2024-10-21", "TOOLWIRE_ALLOW_MODEL_REQUESTS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from azure\n"
    assert _Azure.paths == [
        "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    ]


def test_azure_without_an_endpoint_names_the_option() -> None:
    done = run("run", "hi", "--model", "azure:d", "--api-key", "k")
    assert done.returncode == 1
    assert "pass --endpoint URL or set AZURE_OPENAI_ENDPOINT" in done.stderr


def test_one_wording_for_a_provider_that_cannot_be_reached() -> None:
    from toolwire._reach import cannot_reach

    refused = ConnectionRefusedError(111, "Connection refused")
    wrapped = RuntimeError("Connection error.")
    wrapped.__cause__ = refused
    assert cannot_reach("ollama", "http://localhost:11434/v1/", wrapped) == (
        "cannot reach ollama at http://localhost:11434/v1: [Errno 111] Connection refused"
    )
    assert cannot_reach("openai", None, "timed out") == "cannot reach openai: timed out"
