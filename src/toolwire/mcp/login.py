"""Signing a person in with a browser: the loopback redirect listener RFC 8252 describes.

`LoopbackLogin` listens on 127.0.0.1 before the flow starts (so its redirect URI is known when
the client registers), sends the person to the authorization URL (opening a browser, or
printing the URL for them to open), and waits for the one request the authorization server
redirects back to it. Everything else that reaches the port (a browser's favicon request, a
stray scanner) gets a 404 and does not end the wait.

    async with LoopbackLogin() as login:
        auth = OAuth(authorize=login.authorize, redirect_uri=login.redirect_uri)
        async with McpClient(url, auth=auth) as client:
            ...
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import typing
import webbrowser
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

import anyio
import anyio.abc
import anyio.to_thread

from ..errors import McpAuthError

__all__ = ["DEFAULT_PORT", "LoopbackLogin", "token_file"]

DEFAULT_PORT = 33418
"""The port `toolwire tools --login` listens on, the same each time, so a registered redirect URI
stays valid for the next login."""

_MAX_REQUEST_BYTES = 16 * 1024
"""The longest request head read from the browser; a redirect with a code is far shorter."""

_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>toolwire</title>"
    b"<p>Signed in. You can close this tab and return to the terminal.</p>"
)


def _open_browser(url: str) -> None:
    webbrowser.open(url)


class LoopbackLogin:
    """A one-shot listener on 127.0.0.1 for the authorization server's redirect.

    With a fixed `port`, `authorize` listens by itself while it waits; with `port=0` (a free
    port) enter it first with `async with`, so the redirect URI is known before registering.

    Args:
        port: The port to listen on; `0` picks a free one. Authorization servers that hold a
            registered redirect URI to the letter want the same port every time.
        path: The redirect URI's path.
        open_url: Sends the person to the authorization URL; by default the system browser.
            `None` only announces it.
        announce: Tells the person where to go (the browser may not open, e.g. over SSH).
        timeout: Seconds to wait for the person to finish.
    """

    def __init__(
        self,
        *,
        port: int = DEFAULT_PORT,
        path: str = "/callback",
        open_url: Callable[[str], None] | None = _open_browser,
        announce: Callable[[str], None] = print,
        timeout: float = 300.0,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        self.port = port
        self.path = path
        self.open_url = open_url
        self.announce = announce
        self.timeout = timeout
        self._listener: anyio.abc.SocketListener | None = None

    @property
    def redirect_uri(self) -> str:
        """The address to register and send as `redirect_uri` (known once listening)."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def __aenter__(self) -> Self:
        multi = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        listener = typing.cast(anyio.abc.SocketListener, multi.listeners[0])
        self._listener = listener
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()

    async def authorize(self, url: str) -> str:
        """Send the person to `url`; the redirect URL they come back with.

        Raises:
            McpAuthError: nobody came back within `timeout` seconds.
            RuntimeError: the listener is not open (use `async with`).
        """
        if self._listener is None:
            if not self.port:
                raise RuntimeError("LoopbackLogin(port=0) is not listening: use `async with`")
            # A fixed port is known in advance, so listening can wait until a person is needed.
            async with self:
                return await self.authorize(url)
        listener = self._listener
        self.announce(f"Sign in at: {url}")
        try:
            with anyio.fail_after(self.timeout):
                async with anyio.create_task_group() as tg:
                    if self.open_url is not None:
                        # Beside the wait, not before it: some launchers return only once the
                        # browser exits, and the browser needs this listener to answer it.
                        tg.start_soon(self._open, url)
                    while True:
                        async with await listener.accept() as stream:
                            found = await self._serve(stream)
                        if found is not None:
                            tg.cancel_scope.cancel()
                            return found
        except TimeoutError:
            pass
        raise McpAuthError(f"Nobody came back from signing in within {self.timeout:g} seconds")

    async def _open(self, url: str) -> None:
        assert self.open_url is not None
        await anyio.to_thread.run_sync(self.open_url, url, abandon_on_cancel=True)

    async def _serve(self, stream: anyio.abc.SocketStream) -> str | None:
        """Answer one request; the full redirect URL when it is the one we wait for."""
        head = bytearray()
        with anyio.move_on_after(10):  # a connection that never sends a request is dropped
            while b"\r\n\r\n" not in head and len(head) < _MAX_REQUEST_BYTES:
                try:
                    head += await stream.receive(4096)
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
        line = bytes(head).split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = parts[1] if len(parts) == 3 and parts[0] == "GET" else ""
        if urlsplit(target).path != self.path:
            await _reply(stream, b"404 Not Found", b"not found")
            return None
        await _reply(stream, b"200 OK", _DONE_PAGE)
        return f"http://127.0.0.1:{self.port}{target}"


async def _reply(stream: anyio.abc.SocketStream, status: bytes, body: bytes) -> None:
    head = (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/html; charset=utf-8\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n"
    )
    # If the browser went away, what it asked for is known all the same.
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(head + body)


def token_file(server_url: str, directory: Path | None = None) -> Path:
    """Where the CLI keeps the tokens for `server_url`: one 0600 file per server in `directory`,
    by default under the user's config directory (`$XDG_CONFIG_HOME/toolwire/oauth`, else
    `~/.config/...`)."""
    if directory is None:
        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        directory = Path(base) / "toolwire" / "oauth"
    digest = hashlib.sha256(server_url.encode()).hexdigest()[:24]
    return directory / f"{digest}.json"
