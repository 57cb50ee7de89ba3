"""Free loopback ports for servers a test starts and must name before they listen.

A port probed with bind(0) comes from the kernel's ephemeral range, which every outgoing
connection draws from too: under xdist, between the probe and the server's own bind, another
test's client may take it (the server then dies on "address in use"). So the port is drawn at
random below that range, where only servers bind, and probed there.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

__all__ = ["free_port"]

_RANDOM = random.SystemRandom()  # not the global one, which Hypothesis seeds per example
_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    try:
        return int(_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A loopback TCP port nobody listens on now, outside the ephemeral range when possible."""
    low = min(_ephemeral_low(), 65536)
    for _ in range(50):
        port = _RANDOM.randrange(10000, low) if low > 11000 else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
