"""The `toolwire` command driven as a user would: in a subprocess, against real servers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from _ports import free_port

ROOT = Path(__file__).resolve().parents[1]
TOOLWIRE = [sys.executable, "-m", "toolwire.cli"]


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLWIRE_ALLOW_MODEL_REQUESTS": "0", "COLUMNS": "200"}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(key, None)
    return subprocess.run(
        [*TOOLWIRE, *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """`toolwire serve --prebuilt --tools ...` in a subprocess; yields its URL once printed."""
    port = free_port()
    proc = subprocess.Popen(
        [
            *TOOLWIRE,
            "serve",
            "--prebuilt",
            "--tools",
            "examples.quickstart:convert",
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # printed once the socket listens; blocks until then
        assert url == f"http://127.0.0.1:{port}/mcp", proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # waits, and closes the pipes


# Tools a user might write: bracketed text (which a terminal renderer must not take for its
# markup), media, and string parameters whose values look like numbers.
USER_TOOLS = """
import base64
from typing import Any

from toolwire import tool
from toolwire.results import AudioPart, ImagePart

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@tool
def echo(text: str) -> str:
    \"\"\"Echo [text] back, unchanged [/].\"\"\"
    return text


@tool
def brackets() -> str:
    \"\"\"Answer with brackets.\"\"\"
    return "[bold]kept[/bold] and [/] too"


@tool
def media() -> list[Any]:
    \"\"\"A picture and a sound.\"\"\"
    return [
        ImagePart(data=PNG, mime_type="image/png"),
        AudioPart(data=b"RIFF0000WAVE", mime_type="audio/wav; codecs=1"),
    ]


@tool
def env_var(name: str) -> str:
    \"\"\"Read an environment variable of the server's process.\"\"\"
    import os

    return os.environ.get(name, "unset")


@tool
def strings(a: str, b: str, c: str, d: str, e: str) -> str:
    \"\"\"Give back five strings, a line each.\"\"\"
    return "\\n".join([a, b, c, d, e])


ALL = [echo, brackets, media, env_var, strings]
"""


@pytest.fixture(scope="module")
def user_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("user_tools")
    (folder / "usertools.py").write_text(USER_TOOLS)
    return folder


@pytest.fixture(scope="module")
def user_served(user_tools: Path) -> Iterator[str]:
    """`toolwire serve --tools usertools:ALL` (a list attribute) from the user's folder."""
    port = free_port()
    proc = subprocess.Popen(
        [*TOOLWIRE, "serve", "--tools", "usertools:ALL", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=user_tools,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/mcp", proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_brackets_in_descriptions_and_results_are_printed_as_they_are(user_served: str) -> None:
    table = run("tools", user_served)
    assert table.returncode == 0, table.stderr
    assert "Echo [text] back, unchanged [/]." in table.stdout
    done = run("call", user_served, "brackets")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[bold]kept[/bold] and [/] too"


def test_the_live_view_prints_brackets_as_they_are(user_tools: Path) -> None:
    done = subprocess.run(
        [*TOOLWIRE, "run", "go", "--model", "test", "--tools", "usertools:ALL"],
        capture_output=True,
        text=True,
        cwd=user_tools,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "-> [bold]kept[/bold] and [/] too" in done.stderr


def test_call_shows_media_and_saves_it_on_request(user_served: str, tmp_path: Path) -> None:
    shown = run("call", user_served, "media")
    assert shown.returncode == 0, shown.stderr
    assert "image/png" in shown.stdout and "--save" in shown.stdout
    assert "audio/wav" in shown.stdout
    saved = run("call", user_served, "media", "--save", str(tmp_path))
    assert saved.returncode == 0, saved.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["part0.png", "part1.wav"]
    assert (tmp_path / "part0.png").read_bytes().startswith(b"\x89PNG")
    assert str(tmp_path / "part0.png") in saved.stdout


def test_number_like_values_stay_strings_where_the_tool_wants_a_string(user_served: str) -> None:
    # One call with five string parameters: each value reaches the tool as the text typed (a
    # number, a boolean, null, NaN or a list would fail the tool's string check).
    values = ["52998224725", "true", "null", "NaN", "[1, 2]"]
    pairs = [f"{name}={value}" for name, value in zip("abcde", values, strict=True)]
    done = run("call", user_served, "strings", *pairs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == values


def test_call_over_stdio_starts_the_server_with_the_users_environment(user_tools: Path) -> None:
    # `serve --stdio` started by `call --stdio`, as a user would type it in their shell: the
    # command sees the shell's environment (API keys, virtualenv), as any command would.
    server = f"{sys.executable} -m toolwire.cli serve --stdio --tools usertools:ALL"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TOOLWIRE_CLI_TEST": "from the shell"}
    listed = subprocess.run(
        [*TOOLWIRE, "tools", "--stdio", server, "--json"],
        capture_output=True,
        text=True,
        cwd=user_tools,
        env=env,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert {r["name"] for r in json.loads(listed.stdout)} == {
        "echo",
        "brackets",
        "media",
        "env_var",
        "strings",
    }
    done = subprocess.run(
        [*TOOLWIRE, "call", "--stdio", server, "env_var", "name=TOOLWIRE_CLI_TEST"],
        capture_output=True,
        text=True,
        cwd=user_tools,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from the shell"


def test_tools_lists_the_served_tools(served: str) -> None:
    done = run("tools", served, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    names = {r["name"] for r in rows}
    assert {"calculator", "current_datetime", "convert", "br_validate_cpf"} <= names
    calculator = next(r for r in rows if r["name"] == "calculator")
    assert calculator["annotations"]["read_only_hint"] is True
    assert calculator["inputSchema"]["required"] == ["expression"]
    table = run("tools", served)
    assert table.returncode == 0 and "calculator" in table.stdout and "tools" in table.stdout


def test_call_prints_the_result(served: str) -> None:
    done = run("call", served, "calculator", "expression=17% of 2,340")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "397.8"
    typed = run("call", served, "convert", "amount=100", "rate=5.5")
    assert typed.stdout.strip() == "550.0"
    as_json = run("call", served, "convert", "--args-json", '{"amount": 2, "rate": 3}')
    assert as_json.stdout.strip() == "6.0"


def test_call_json_prints_the_result_as_json(served: str) -> None:
    # `--json` is output everywhere; the arguments as JSON are `--args-json`.
    done = run("call", served, "convert", "--args-json", '{"amount": 2, "rate": 3}', "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["is_error"] is False
    assert [(p["kind"], p["text"]) for p in result["content"]] == [("text", "6.0")]


def test_call_error_result_exits_one(served: str) -> None:
    done = run("call", served, "calculator", "expression=__import__('os')")
    assert done.returncode == 1
    assert "Unknown function" in done.stdout
    unknown = run("call", served, "no_such_tool")
    assert unknown.returncode == 1
    assert "no_such_tool" in unknown.stdout + unknown.stderr


def test_run_with_the_offline_model_and_a_live_view() -> None:
    done = run("run", "convert please", "--model", "test", "--tools", "examples.quickstart:convert")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here is what the tools found:\n- convert: 1.0\n"
    assert "convert(" in done.stderr and "ok" in done.stderr
    assert "model: test, the offline test model" in done.stderr
    assert "stop: completed" in done.stderr and "requests: 2" in done.stderr


def test_run_over_mcp(served: str) -> None:
    done = run("run", "what is 6 * 7?", "--model", "test", "--mcp", served)
    assert done.returncode == 0, done.stderr
    assert "calculator(" in done.stderr and "-> 42" in done.stderr
    assert done.stdout == "Here is what the tools found:\n- calculator: 42\n"


def test_demo_end_to_end() -> None:
    done = run("demo")
    assert done.returncode == 0, done.stderr
    assert "1. serving" in done.stderr and "2. discovered" in done.stderr
    assert "running the agent loop with test, the offline test model" in done.stderr
    assert "4. server stopped" in done.stderr
    assert "calculator: 397.8" in done.stdout
    assert '"valid":true' in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["tools", "http://127.0.0.1:1/mcp"], 1, "Cannot reach"),
        (["tools"], 1, "give either a server URL or --stdio"),
        (["tools", "not-a-url"], 1, "not an http(s) URL"),
        (["call", "http://127.0.0.1:1/mcp"], 1, "name the tool"),
        (["call", "http://127.0.0.1:1/mcp", "t", "novalue"], 1, "key=value"),
        (["call", "http://127.0.0.1:1/mcp", "t", "--args-json", "[1]"], 1, "JSON object"),
        (["run", "hi", "--model", "nope:x"], 1, "Known providers"),
        (["run", "hi", "--tools", "no_such_module:x"], 1, "cannot import"),
        (["run", "hi", "--tools", "examples.quickstart:missing"], 1, "no attribute"),
        (["serve"], 1, "nothing to serve"),
        (["serve", "--prebuilt", "--stdio", "--port", "9"], 1, "--stdio takes none"),
        (["bogus"], 2, "No such command"),
        (["run"], 2, "Missing argument"),
    ],
)
def test_bad_arguments_and_unreachable_servers(args: list[str], code: int, message: str) -> None:
    done = run(*args)
    assert done.returncode == code
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_debug_shows_the_traceback() -> None:
    done = run("--debug", "run", "hi", "--model", "nope:x")
    assert done.returncode != 0
    assert "Traceback" in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "term"])
def test_serve_stops_cleanly(sig: signal.Signals) -> None:
    with subprocess.Popen(
        [*TOOLWIRE, "serve", "--prebuilt", "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("http://127.0.0.1:")
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert stderr.strip().endswith("stopped")
    assert "Traceback" not in stderr


def test_nan_and_infinity_stay_strings() -> None:
    from toolwire._cli_mcp import _parse_pairs

    # Not JSON: as numbers they would make the request body itself invalid JSON.
    assert _parse_pairs(["x=NaN", "y=-Infinity", "z=1.5"], None) == {
        "x": "NaN",
        "y": "-Infinity",
        "z": 1.5,
    }


@pytest.fixture
def bind_locally(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make `serve --host H` listen on 127.0.0.1 whatever H is, so no traffic leaves it."""
    asked: list[str] = []
    real = socket.create_server

    def create_server(address: tuple[str, int], **options: object) -> socket.socket:
        asked.append(address[0])
        return real(("127.0.0.1", address[1]))

    monkeypatch.setattr(socket, "create_server", create_server)
    return asked


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


@pytest.mark.anyio
async def test_serve_on_a_named_interface_accepts_that_host(bind_locally: list[str]) -> None:
    import httpx

    from toolwire.cli import running_server
    from toolwire.prebuilt import calculator

    # `serve --host 192.0.2.10` is reached as http://192.0.2.10:PORT/mcp: that Host must pass
    # the DNS-rebinding check (as with `toolwire.mcp.serve`), other names must not.
    async with running_server([calculator], host="192.0.2.10") as url:
        assert bind_locally == ["192.0.2.10"]
        assert url.startswith("http://192.0.2.10:")
        port = url.split(":")[2].split("/")[0]
        headers = {"accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient() as http:
            local_url = f"http://127.0.0.1:{port}/mcp"
            ok = await http.post(
                local_url, json=INIT, headers={**headers, "host": f"192.0.2.10:{port}"}
            )
            evil = await http.post(
                local_url, json=INIT, headers={**headers, "host": f"evil.example:{port}"}
            )
    assert ok.status_code == 200, ok.text
    assert 400 <= evil.status_code < 500


@pytest.mark.anyio
async def test_serve_on_every_interface_prints_a_url_that_works(bind_locally: list[str]) -> None:
    from toolwire.cli import running_server
    from toolwire.mcp import McpClient
    from toolwire.prebuilt import calculator

    async with running_server([calculator], host="0.0.0.0") as url:
        assert bind_locally == ["0.0.0.0"]
        # 0.0.0.0 is where it listens, not an address to give clients.
        assert url.startswith("http://127.0.0.1:")
        async with McpClient(url) as client:
            assert (await client.call_tool("calculator", {"expression": "6*7"})).text == "42"


def test_run_trace_prints_the_span_tree(served: str) -> None:
    done = run("run", "what is 6 * 7?", "--model", "test", "--mcp", served, "--trace")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here is what the tools found:\n- calculator: 42\n"
    tree = done.stderr[done.stderr.index("invoke_agent agent") :].splitlines()
    assert len(tree) == 5, tree
    assert tree[0].startswith("invoke_agent agent ") and "tokens " in tree[0]
    assert tree[1].startswith("├── chat test ") and " ms  tokens " in tree[1]
    assert tree[2].startswith("├── execute_tool calculator ")
    # The MCP call nests under the tool call that made it.
    assert tree[3].startswith("│   └── tools/call calculator ")
    assert tree[4].startswith("└── chat test ")
