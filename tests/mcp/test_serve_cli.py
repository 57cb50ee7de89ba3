"""`toolwire serve` as an operator runs it: tokens, interfaces beyond loopback, host names, limits."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp_fixtures import ROOT, free_port

TOOLWIRE = [sys.executable, "-m", "toolwire.cli"]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "operator", "version": "0"},
    },
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLWIRE_SERVE_TOKEN"}
    return {**env, **extra}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOLWIRE, *args], capture_output=True, text=True, env=env or _env(), timeout=60, cwd=ROOT
    )


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, int, Any]]:
    """`toolwire serve --prebuilt ARGS` on a free port; yields its URL, port and process."""
    port = free_port()
    proc = subprocess.Popen(
        [*TOOLWIRE, "serve", "--prebuilt", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env or _env(),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once the socket listens
        assert url.endswith(f":{port}/mcp"), proc.stderr.read() if proc.stderr else ""
        yield url, port, proc
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _post(port: int, *, host: str = "127.0.0.1", token: str | None = None) -> int:
    headers = {**HEADERS, "host": f"{host}:{port}"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    answer = httpx2.post(f"http://127.0.0.1:{port}/mcp", json=INIT, headers=headers)
    return answer.status_code


def test_beyond_loopback_without_a_token_refuses_to_start() -> None:
    for host in ("0.0.0.0", "::", "192.0.2.10", "myhost.example"):
        done = run("serve", "--prebuilt", "--host", host, "--port", "0")
        assert done.returncode == 1, (host, done.stderr)
        assert f"refusing to serve on {host} without a token" in done.stderr
        assert "--allow-anonymous" in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", ""], "the token is empty"),
        (["--token", "   "], "the token is empty"),
        (["--token", "a", "--token-file", "README.md"], "give the token once"),
        (["--token-file", "no/such/file"], "cannot read the token file"),
        (["--stdio", "--allowed-host", "tools.example"], "--stdio takes none"),
        (["--max-sessions", "0"], "Invalid value"),
    ],
)
def test_bad_serve_options_are_refused(args: list[str], message: str) -> None:
    done = run("serve", "--prebuilt", *args)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n")
    done = run("serve", "--prebuilt", "--token-file", str(empty))
    assert done.returncode == 1
    assert "is empty" in done.stderr


def test_every_interface_with_a_token_file_and_allowed_host(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text(
        "file-secret-0123456789\n"
    )  # the trailing newline an editor adds is not the token
    with serving(
        "--host", "0.0.0.0", "--token-file", str(secret), "--allowed-host", "tools.example"
    ) as (_, port, _proc):
        assert _post(port) == 401
        assert _post(port, token="wrong") == 401
        assert _post(port, token="file-secret-0123456789") == 200
        # The public name the operator allowed passes the Host check; others do not.
        assert _post(port, host="tools.example", token="file-secret-0123456789") == 200
        assert _post(port, host="evil.example", token="file-secret-0123456789") == 421


def test_the_token_can_come_from_the_environment_not_argv() -> None:
    with serving(env=_env(TOOLWIRE_SERVE_TOKEN="env-secret-0123456789")) as (_, port, proc):
        assert _post(port) == 401
        assert _post(port, token="env-secret-0123456789") == 200
        # Nothing in the process's command line gives the token away (as `ps` would show).
        cmdline = Path(f"/proc/{proc.pid}/cmdline")
        if cmdline.exists():
            assert b"env-secret-0123456789" not in cmdline.read_bytes()


def test_allow_anonymous_serves_beyond_loopback_with_a_warning() -> None:
    with serving("--host", "0.0.0.0", "--allow-anonymous") as (url, port, proc):
        assert url.startswith("http://127.0.0.1:")
        assert _post(port) == 200
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "warning: serving on 0.0.0.0 without a token" in stderr


def test_a_token_set_for_http_does_not_stop_a_stdio_server() -> None:
    proc = subprocess.run(
        [*TOOLWIRE, "serve", "--prebuilt", "--stdio"],
        input="",
        capture_output=True,
        text=True,
        env=_env(TOOLWIRE_SERVE_TOKEN="env-secret-0123456789"),
        timeout=60,
        cwd=ROOT,
    )
    assert "--stdio takes none" not in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_session_cap_and_upload_timeout_are_options() -> None:
    import socket

    with serving("--max-sessions", "1", "--upload-timeout", "0.5") as (_, port, _proc):
        assert _post(port) == 200
        assert _post(port) == 200  # at the cap the oldest idle session gives way
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                b"accept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n{"
            )
            # The body never comes: the server gives up on it after the upload timeout.
            assert sock.recv(100).startswith(b"HTTP/1.1 408")


APPROVAL_TOOLS = """
import os
from pathlib import Path

from toolwire import ToolAnnotations, tool


@tool(requires_approval=True, annotations=ToolAnnotations(destructive_hint=True))
def wipe(text: str) -> str:
    \"\"\"Delete what the text names.\"\"\"
    Path(os.environ["WIPE_MARKER"]).write_text(text)
    return "wiped"
"""


def test_run_over_mcp_does_not_run_a_tool_that_needs_approval(tmp_path: Path) -> None:
    # The reported case: a requires_approval tool served over MCP, driven by `toolwire run --mcp`.
    # Its parameter is free text, so the offline `test` model calls it with the prompt.
    (tmp_path / "approvaltools.py").write_text(APPROVAL_TOOLS)
    marker = tmp_path / "wiped"
    env = _env(
        PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT / 'src'}",
        WIPE_MARKER=str(marker),
        TOOLWIRE_ALLOW_MODEL_REQUESTS="0",
    )
    port = free_port()
    proc = subprocess.Popen(
        [*TOOLWIRE, "serve", "--tools", "approvaltools:wipe", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url, proc.stderr.read() if proc.stderr else ""
        done = run("run", "clean up", "--model", "test", "--mcp", url, env=env)
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    # Without a terminal to ask on, the pending call is listed and the command fails.
    assert done.returncode == 1, done.stderr
    assert "the run stopped for approval" in done.stderr and "wipe(" in done.stderr, done.stderr
    assert not marker.exists()  # the tool never ran on the server


# --- the installed script: `toolwire serve` without the rest of the command line --------------

_SCRIPT = """
import sys
from toolwire._console import main
try:
    main()
finally:
    print("agent loaded:", "toolwire.agent" in sys.modules, file=sys.stderr)
"""


def script(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed `toolwire` script's entry point with `args`; says whether the agent loaded."""
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
        cwd=ROOT,
    )


def test_the_script_serves_without_loading_the_agent() -> None:
    done = script("serve", "--help")
    assert done.returncode == 0, done.stderr
    assert "Usage: toolwire serve [OPTIONS]" in done.stdout
    assert "--prebuilt" in done.stdout
    assert "Example: toolwire serve --prebuilt --port 8000" in done.stdout
    assert "agent loaded: False" in done.stderr
    # Any other command takes the whole command line, which loads a command's module only when
    # that command runs: the list of commands needs no agent, `run` does.
    other = script("--help")
    assert other.returncode == 0, other.stderr
    assert "serve" in other.stdout and "run" in other.stdout
    assert "agent loaded: False" in other.stderr
    run = script("run", "--help")
    assert run.returncode == 0, run.stderr
    assert "Usage: toolwire run [OPTIONS]" in run.stdout
    assert "agent loaded: True" in run.stderr


def test_the_script_reports_a_serve_mistake_in_one_line() -> None:
    done = script("serve")
    assert done.returncode == 1
    assert "error: nothing to serve" in done.stderr
    assert "Traceback" not in done.stderr
    usage = script("serve", "--port", "many")
    assert usage.returncode == 2
    assert "Invalid value for '--port'" in usage.stderr
    # `--debug` still shows the traceback, placed after the command as before.
    debug = script("serve", "--debug")
    assert debug.returncode != 0
    assert "Traceback" in debug.stderr and "CliError" in debug.stderr


def test_the_script_serves_calls() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, "serve", "--prebuilt", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=_env(),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/mcp", proc.stderr.read() if proc.stderr else ""
        assert _post(port) == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "agent loaded: False" in err
