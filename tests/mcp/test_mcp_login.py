"""The loopback redirect listener that `toolwire tools URL --login` signs people in with."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp_fixtures import HERE, free_port, run_client_scenario

from toolwire.mcp import McpAuthError
from toolwire.mcp.login import LoopbackLogin

pytestmark = pytest.mark.anyio


async def test_waits_for_the_redirect_and_ignores_other_requests() -> None:
    announced: list[str] = []
    opened: list[str] = []
    browser_opened = anyio.Event()

    def open_url(url: str) -> None:  # runs in a worker thread, as a real launcher does
        opened.append(url)
        anyio.from_thread.run_sync(browser_opened.set)

    async with LoopbackLogin(port=0, open_url=open_url, announce=announced.append) as login:
        assert login.port > 0
        assert login.redirect_uri == f"http://127.0.0.1:{login.port}/callback"
        answers: list[httpx2.Response] = []

        async def browser() -> None:
            # A person comes back only after the browser was sent to the URL.
            await browser_opened.wait()
            async with httpx2.AsyncClient() as http:
                answers.append(await http.get(f"http://127.0.0.1:{login.port}/favicon.ico"))
                answers.append(await http.get(f"{login.redirect_uri}?code=c0de&state=s1"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(browser)
            with anyio.fail_after(20):
                found = await login.authorize("https://as.example/authorize?x=1")
    assert found == f"{login.redirect_uri}?code=c0de&state=s1"
    assert opened == ["https://as.example/authorize?x=1"]
    assert announced == ["Sign in at: https://as.example/authorize?x=1"]
    assert [a.status_code for a in answers] == [404, 200]
    assert b"Signed in" in answers[1].content


async def test_gives_up_when_nobody_comes_back() -> None:
    async with LoopbackLogin(port=0, open_url=None, announce=lambda _: None, timeout=0.2) as login:
        with pytest.raises(McpAuthError, match=r"within 0\.2 seconds"):
            await login.authorize("https://as.example/authorize")


async def test_a_silent_connection_does_not_block_the_redirect() -> None:
    async with LoopbackLogin(port=0, open_url=None, announce=lambda _: None) as login:

        async def visitors() -> None:
            silent = await anyio.connect_tcp("127.0.0.1", login.port)
            await silent.send(b"GET /callback")  # never finishes its request
            await silent.aclose()
            async with httpx2.AsyncClient() as http:
                await http.get(f"{login.redirect_uri}?code=ok&state=s")

        async with anyio.create_task_group() as tg:
            tg.start_soon(visitors)
            with anyio.fail_after(20):
                found = await login.authorize("https://as.example/authorize")
    assert found.endswith("?code=ok&state=s")


async def test_a_free_port_needs_async_with() -> None:
    login = LoopbackLogin(port=0, open_url=None)
    with pytest.raises(RuntimeError, match="async with"):
        await login.authorize("https://as.example/authorize")
    with pytest.raises(ValueError, match="path"):
        LoopbackLogin(path="callback")


async def test_toolwire_tools_login_signs_in_through_a_browser(tmp_path: Path) -> None:
    """`toolwire tools --login URL` as the conformance suite's client: discovery, registration,
    the browser sent to the authorization server, the redirect caught on the loopback port, the
    token kept in a 0600 file."""
    toolwire = Path(sys.executable).parent / "toolwire"
    port = free_port()
    # The "browser" follows the authorization server's redirect to the CLI's listener.
    browser = f"{sys.executable} {HERE / 'follow_redirects.py'} %s"
    results, returncode, errors = await run_client_scenario(
        "auth/metadata-default",
        tmp_path / "run",
        command=f"{toolwire} tools --login --login-port {port}",
        env={"BROWSER": browser, "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    assert set(results.values()) == {"SUCCESS"}, (results, errors)
    assert {"authorization-request", "token-request", "valid-bearer-token"} <= set(results)
    assert returncode == 0, errors
    assert "Sign in at: http" in errors
    (kept,) = (tmp_path / "config" / "toolwire" / "oauth").iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert "access_token" in kept.read_text()


@pytest.mark.parametrize("command", ["call", "run"])
async def test_call_and_run_sign_in_with_login_too(tmp_path: Path, command: str) -> None:
    """`toolwire call --login` and `toolwire run --mcp URL --login` as the suite's client, with
    the tokens kept where `--token-dir` says."""
    toolwire = Path(sys.executable).parent / "toolwire"
    port = free_port()
    tokens = tmp_path / "tokens"
    browser = f"{sys.executable} {HERE / 'follow_redirects.py'} %s"
    login = f"--login --login-port {port} --token-dir {tokens}"
    # The suite appends the server's URL to the command; `call` wants the tool after it.
    line = (
        f'sh -c \'"$0" call {login} "$1" test-tool\' {toolwire}'
        if command == "call"
        else f"{toolwire} run test-tool {login} --mcp"
    )
    results, returncode, errors = await run_client_scenario(
        "auth/metadata-default", tmp_path / "run", command=line, env={"BROWSER": browser}
    )
    assert set(results.values()) == {"SUCCESS"}, (results, errors)
    assert {"authorization-request", "token-request", "valid-bearer-token"} <= set(results)
    assert returncode == 0, errors
    assert "Sign in at: http" in errors
    (kept,) = tokens.iterdir()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert "access_token" in kept.read_text()
    # The tool ran with the token: `call` prints its result, `run` its answer.
    (printed,) = (tmp_path / "run").glob("**/stdout.txt")
    assert ("test" if command == "call" else "- test-tool: test") in printed.read_text()


def test_login_is_refused_for_a_stdio_command(capsys: pytest.CaptureFixture[str]) -> None:
    from toolwire.cli import main

    assert main(["call", "--stdio", "some-server", "a-tool", "--login"]) == 1
    assert "--login signs in to a server URL" in capsys.readouterr().err
