"""Connecting the `toolwire` commands to MCP servers: a client for a URL or a `--stdio` command,
the `--header` values, and one-line hints when connecting fails.

Shared by `tools`/`call` (`_cli_mcp`) and `run` (`_cli_run`); the `mcp` extra is imported only
when a client is made, so a missing extra is a one-line error naming it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import urllib.parse
from collections.abc import AsyncGenerator, Generator, Sequence
from pathlib import Path
from typing import Any

from rich.text import Text

from ._cli_common import CliError, err
from .errors import McpAuthError, McpError, McpProtocolError

__all__ = ["connected", "mcp_client", "parse_headers"]


def mcp_client(
    target: str | None,
    stdio: str | None,
    token: str | None,
    headers: Sequence[str],
    login_port: int | None = None,
    token_dir: Path | None = None,
) -> Any:
    from .mcp import McpClient, StdioServerParameters

    if (target is None) == (stdio is None):
        raise CliError("give either a server URL or --stdio 'command args'")
    parsed_headers = parse_headers(headers)
    if stdio is not None:
        if login_port is not None:
            raise CliError("--login signs in to a server URL, not to a --stdio command")
        words = shlex.split(stdio)
        if not words:
            raise CliError("--stdio needs a command")
        # The command runs as if typed in the user's shell, so it sees the shell's environment
        # (the SDK would pass on only a few variables such as PATH and HOME).
        params = StdioServerParameters(command=words[0], args=words[1:], env=dict(os.environ))
        return McpClient(params)
    assert target is not None
    if not target.startswith(("http://", "https://")):
        raise CliError(f"{target!r} is not an http(s) URL; use --stdio for a local command")
    if login_port is not None:
        if token is not None:
            raise CliError("give --token or --login, not both")
        from .mcp.auth import FileTokenStore, OAuth
        from .mcp.login import LoopbackLogin, token_file

        login = LoopbackLogin(port=login_port, announce=lambda text: err.print(Text(text)))
        store = FileTokenStore(token_file(target, token_dir))
        auth = OAuth(authorize=login.authorize, redirect_uri=login.redirect_uri, store=store)
        return McpClient(target, auth=auth, headers=parsed_headers or None)
    return McpClient(target, auth_token=token, headers=parsed_headers or None)


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def parse_headers(headers: Sequence[str]) -> dict[str, str]:
    """`--header` values as curl takes them (`Name: value`), or as `NAME=VALUE`."""
    parsed: dict[str, str] = {}
    for header in headers:
        colon, equals = header.find(":"), header.find("=")
        split_at = colon if colon >= 0 and (equals < 0 or colon < equals) else equals
        name, value = header[:split_at].strip(), header[split_at + 1 :].strip()
        if split_at < 0 or not _HEADER_NAME.fullmatch(name):
            raise CliError(f"--header takes 'Name: value' (or NAME=VALUE), got {header!r}")
        if "\r" in value or "\n" in value:
            raise CliError(f"--header {name}: a value cannot span lines")
        parsed[name] = value
    return parsed


@contextlib.asynccontextmanager
async def connected(
    client: Any, url: str | None, token: str | None, headers: Sequence[str]
) -> AsyncGenerator[Any]:
    """`async with client`, with a hint at the usual cause when connecting fails."""
    async with contextlib.AsyncExitStack() as stack:
        with _explained(url or "the --stdio server", token, headers):
            await stack.enter_async_context(client)
        yield client


@contextlib.contextmanager
def _explained(where: str, token: str | None, headers: Sequence[str]) -> Generator[None]:
    try:
        yield
    except McpAuthError as exc:
        sent = token is not None or any(
            h.lower().lstrip().startswith("authorization") for h in headers
        )
        if sent:
            raise CliError(f"{where} refused the credentials given ({exc})") from exc
        raise CliError(
            f"{where} wants credentials ({exc}): pass --token TOKEN, --header "
            "'Authorization: ...', or sign in with --login (OAuth)"
        ) from exc
    except McpProtocolError as exc:
        if "404" in str(exc):
            raise CliError(f"{where} answered 404: {_path_hint(where)}") from exc
        raise CliError(f"{where} does not speak MCP ({exc}): {_path_hint(where)}") from exc
    except McpError as exc:
        if re.search(r"\bHTTP 404\b", str(exc)):
            raise CliError(f"{where} answered 404: {_path_hint(where)}") from exc
        raise


def _path_hint(where: str) -> str:
    parts = urllib.parse.urlsplit(where)
    if not parts.scheme.startswith("http") or parts.path.rstrip("/").endswith("/mcp"):
        return "check that it is an MCP server's endpoint"
    return f"is the path right? MCP servers usually answer at {parts.scheme}://{parts.netloc}/mcp"
