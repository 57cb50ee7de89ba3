"""An MCP app served over HTTP by uvicorn in this process: the listening socket and the URL
clients use, the app's options, and a uvicorn server that leaves signals to its caller.

The floor under both ways of serving: `toolwire serve` (`_cli_serve`) and each of its `--workers`
(`_serve_workers`) build their server here, so neither imports the other.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncGenerator, Callable, Generator, Sequence
from typing import Any

import anyio

from ._cli_common import CliError
from .tools import Tool

__all__ = ["app_options", "http_listener", "http_server", "running_server", "uvicorn_server"]


def app_options(options: dict[str, Any]) -> dict[str, Any]:
    """`create_app`'s keyword arguments from their JSON form (the OAuth settings become a
    `ProtectedResource`), in the one process as in each worker."""
    live = dict(options)
    oauth = live.get("oauth")
    if oauth is not None:
        from .mcp import ProtectedResource, TokenIntrospection

        settings = dict(oauth)
        introspection = settings.get("introspection")
        if introspection is not None:
            settings["introspection"] = TokenIntrospection(**introspection)
        live["oauth"] = ProtectedResource(**settings)
    return live


def http_server(
    tools: Sequence[Tool],
    *,
    host: str,
    port: int,
    token: str | None,
    oauth: dict[str, Any] | None = None,
    stateless: bool,
    allowed_hosts: Sequence[str] = (),
    limits: dict[str, Any] | None = None,
) -> tuple[Any, socket.socket, str]:
    from .mcp import create_app

    listener, url, options = http_listener(
        host=host,
        port=port,
        token=token,
        oauth=oauth,
        stateless=stateless,
        allowed_hosts=allowed_hosts,
        limits=limits,
    )
    try:
        app = create_app(tools, **app_options(options))
    except ValueError as exc:
        listener.close()
        raise CliError(str(exc)) from exc
    return uvicorn_server(app), listener, url


def http_listener(
    *,
    host: str,
    port: int,
    token: str | None,
    oauth: dict[str, Any] | None = None,
    stateless: bool,
    allowed_hosts: Sequence[str] = (),
    limits: dict[str, Any] | None = None,
) -> tuple[socket.socket, str, dict[str, Any]]:
    """The listening socket, the URL clients use, and the `create_app` options (JSON values)."""
    from .mcp import LOCAL_HOSTS

    bare = host.removeprefix("[").removesuffix("]")
    ipv6 = ":" in bare
    try:
        if ipv6:
            listener = socket.create_server((bare, port), family=socket.AF_INET6)
        else:
            listener = socket.create_server((bare, port))
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    # How clients name this server: as given, in brackets for IPv6; a wildcard address is where
    # it listens, not one to connect to, so the URL names the loopback instead.
    if bare in ("0.0.0.0", ""):
        name = "127.0.0.1"
    elif bare == "::":
        name = "[::1]"
    else:
        name = f"[{bare}]" if ipv6 else bare
    # The DNS-rebinding check must let through the name the server was asked to listen on,
    # as `toolwire.mcp.serve` does, and the names the operator allowed.
    hosts = list(LOCAL_HOSTS) if name in LOCAL_HOSTS else [*LOCAL_HOSTS, name]
    hosts += [h for h in allowed_hosts if h != "*" and h not in hosts]
    url = f"http://{name}:{listener.getsockname()[1]}/mcp"
    options: dict[str, Any] = {
        "auth_token": token,
        "stateless": stateless,
        "allowed_hosts": hosts,
        "dns_rebinding_protection": "*" not in allowed_hosts,
        **(limits or {}),
    }
    if oauth is not None:
        options["oauth"] = {"resource": url, **oauth}
    return listener, url, options


def uvicorn_server(app: Any, on_started: Callable[[], None] | None = None) -> Any:
    """A uvicorn server for `app` that leaves signals to its caller; `on_started` runs once it
    accepts connections."""
    import uvicorn

    # ws="none": no page or MCP transport toolwire serves speaks WebSocket, and uvicorn's "auto"
    # loads the websockets library at start (about a tenth of `toolwire serve`'s start-up).
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5, ws="none"
    )

    class Server(uvicorn.Server):
        # toolwire handles Ctrl-C itself; uvicorn's own handler would re-raise the signal after
        # shutting down and tear down the app mid-lifespan.
        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None]:
            yield

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            from .mcp._overload import shed_on_exhaustion  # the mcp extra

            # Out of file descriptors: shed idle connections and log sparingly, in every
            # process that serves (one, each worker, or in-process), as `mcp.serve` does.
            shed_on_exhaustion(self)
            await super().startup(sockets)
            if on_started is not None and not self.should_exit:
                on_started()

    return Server(config)


@contextlib.asynccontextmanager
async def running_server(
    tools: Sequence[Tool],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    stateless: bool = False,
) -> AsyncGenerator[str]:
    """Serve `tools` over MCP on `host:port` in this process; yields the URL once it listens."""
    server, listener, url = http_server(
        tools, host=host, port=port, token=token, stateless=stateless
    )
    async with anyio.create_task_group() as group:
        # The socket already listens, so clients may connect at once: the kernel queues them
        # until uvicorn, its startup done, accepts. Nothing to wait for here.
        group.start_soon(lambda: server.serve(sockets=[listener]))
        try:
            yield url
        finally:
            server.should_exit = True  # serve() returns after a graceful shutdown (5 s at most)
