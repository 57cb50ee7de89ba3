"""A load generator for MCP servers that costs the client next to nothing.

`McpClient` is a whole client: per call it builds the request, goes through httpx's pool and
HTTP/1.1 parser, validates the answer into a `CallToolResult`. At a few hundred concurrent
clients that costs more CPU per call than the servers under test spend answering (measured: ~1.7
ms of client CPU per call against ~1.0 ms of server CPU at 500 clients), so a run on two cores
measured the client, not the servers. `RawClient` speaks the same exchange on one keep-alive
HTTP/1.1 connection with the bytes prepared up front: the same headers and JSON-RPC bodies an
MCP client sends (the `initialize` handshake and the session header in the handshake era, the
per-request envelope and routing headers in 2026-07-28), each answer read by its
`Content-Length` and checked for the right sum.
"""

from __future__ import annotations

import asyncio
import json

__all__ = [
    "CLIENT_INFO",
    "ENVELOPE",
    "HANDSHAKE",
    "MODERN",
    "RawClient",
    "RawClientError",
    "connect_args",
]

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
CLIENT_INFO = {"name": "bench", "version": "1"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}
"""What a 2026-07-28 request carries in `params._meta` in place of the handshake."""
_ENVELOPE = json.dumps(ENVELOPE, separators=(",", ":")).encode()


class RawClientError(Exception):
    """The server answered what an MCP client would not accept."""


class RawClient:
    """One MCP client on one keep-alive connection, calling `add(a, b)`.

    Args:
        host: The server's address.
        port: Its port.
        path: The MCP endpoint's path.
        era: `legacy` (the initialize handshake, a session) or `modern` (2026-07-28).
    """

    def __init__(self, host: str, port: int, path: str, era: str) -> None:
        self.host, self.port, self.path, self.era = host, port, path, era
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.session: bytes | None = None
        self.next_id = 1

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        if self.era == "modern":
            return
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
        }
        status, headers, body = await self._post(json.dumps(init).encode(), b"")
        if status != 200:
            raise RawClientError(f"initialize: {status} {body[:200]!r}")
        # A stateless server gives no session: every request then stands alone.
        self.session = headers.get(b"mcp-session-id")
        notified = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
        status, _, body = await self._post(notified, self._routing())
        if status != 202:
            raise RawClientError(f"notifications/initialized: {status} {body[:200]!r}")

    async def call(self, i: int) -> None:
        """Call `add(i, 1)` and check the answer says `i + 1`."""
        request_id = self.next_id
        self.next_id += 1
        meta = b',"_meta":' + _ENVELOPE if self.era == "modern" else b""
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add",'
            b'"arguments":{"a":%d,"b":1}%s}}' % (request_id, i, meta)
        )
        status, _, answer = await self._post(body, self._routing())
        if status != 200:
            raise RawClientError(f"tools/call: {status} {answer[:200]!r}")
        compact = answer.replace(b" ", b"")
        if b'"text":"%d"' % (i + 1) not in compact or b'"id":%d' % request_id not in compact:
            raise RawClientError(f"tools/call: unexpected answer {answer[:200]!r}")

    async def close(self) -> None:
        if self.writer is None:
            return
        if self.session is not None:
            # As a client leaving ends its session.
            await self._send(b"DELETE", b"", self._routing())
            await self._read()
        self.writer.close()
        await self.writer.wait_closed()

    def _routing(self) -> bytes:
        if self.era == "modern":
            return (
                b"mcp-protocol-version: " + MODERN.encode() + b"\r\n"
                b"mcp-method: tools/call\r\nmcp-name: add\r\n"
            )
        found = b"mcp-protocol-version: " + HANDSHAKE.encode() + b"\r\n"
        if self.session is not None:
            found += b"mcp-session-id: " + self.session + b"\r\n"
        return found

    async def _post(self, body: bytes, extra: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
        await self._send(b"POST", body, extra)
        return await self._read()

    async def _send(self, method: bytes, body: bytes, extra: bytes) -> None:
        assert self.writer is not None
        self.writer.write(
            b"%s %s HTTP/1.1\r\nhost: %s:%d\r\naccept: application/json, text/event-stream\r\n"
            b"content-type: application/json\r\n%scontent-length: %d\r\n\r\n%s"
            % (method, self.path.encode(), self.host.encode(), self.port, extra, len(body), body)
        )

    async def _read(self) -> tuple[int, dict[bytes, bytes], bytes]:
        assert self.reader is not None
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(b":")
                headers[key.strip().lower()] = value.strip()
        if b"content-length" in headers:
            body = await self.reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            body = await self._chunked()
        else:
            raise RawClientError(f"an answer without a length: {head!r}")
        return status, headers, body

    async def _chunked(self) -> bytes:
        assert self.reader is not None
        chunks: list[bytes] = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(chunks)
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)


def connect_args(url: str) -> tuple[str, int, str]:
    """`(host, port, path)` of an `http://host:port/path` URL."""
    rest = url.removeprefix("http://")
    address, _, path = rest.partition("/")
    host, _, port = address.partition(":")
    return host, int(port), "/" + path
