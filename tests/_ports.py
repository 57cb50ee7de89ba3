"""Free loopback ports for servers a test starts and must name before they listen.

A port probed with bind(0) comes from the kernel's ephemeral range, which every outgoing
connection draws from too: under xdist, between the probe and the server's own bind, another
test's client may take it as its source port (the server then dies on "address in use"). So a
port is drawn at random outside that range, where only servers bind, and probed there.

A probe still leaves a window until the server binds. Where the test can hand the server a
socket, `listening_socket()` closes it: the socket is bound and listening before anyone learns
the port, and a port a test keeps across several server starts stays held between them.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

__all__ = ["free_port", "listening_socket"]

_RANDOM = random.SystemRandom()  # not the global one, which Hypothesis seeds per example
_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST = 10000  # below this live the well-known and registered services a machine may run


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = (int(part) for part in _RANGE.read_text().split()[:2])
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default
    return low, high


def _candidates() -> list[range]:
    """The port ranges outside the ephemeral one, each big enough to draw from at random."""
    low, high = _ephemeral_range()
    ranges = [range(_LOWEST, min(low, 65536)), range(max(high + 1, _LOWEST), 65536)]
    return [r for r in ranges if len(r) >= 1000]


def _draw() -> int:
    ranges = _candidates()
    if not ranges:
        return 0  # the ephemeral range covers everything: let the kernel choose
    total = sum(len(r) for r in ranges)
    index = _RANDOM.randrange(total)
    for r in ranges:
        if index < len(r):
            return r[index]
        index -= len(r)
    raise AssertionError("unreachable")


def _bound(listen: bool) -> socket.socket:
    for attempt in range(50):
        sock = socket.socket()
        if listen:
            # What servers set (uvicorn, asyncio): a port whose last connections linger in
            # TIME_WAIT can be listened on again at once.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", _draw() if attempt < 49 else 0))
        except OSError:
            sock.close()
            continue
        if listen:
            sock.listen(128)
        return sock
    raise OSError("no free loopback port")


def free_port() -> int:
    """A loopback TCP port nobody listens on now, outside the ephemeral range when possible.

    For a server started in another process, which must be told its port."""
    with _bound(listen=False) as sock:
        return int(sock.getsockname()[1])


def listening_socket() -> socket.socket:
    """A loopback socket already listening on a free port (outside the ephemeral range when
    possible), for a server that takes sockets (uvicorn's `serve(sockets=...)`).

    The caller owns it: keep it open as long as the port must stay held, then close it."""
    return _bound(listen=True)
