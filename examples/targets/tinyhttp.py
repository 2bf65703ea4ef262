"""A minimal HTTP/1.1 server and client on asyncio streams, for the example targets.

The quickstart's targets must run with nothing but the standard library, so
they carry their own small HTTP layer: `serve` runs a handler on `$PORT`, with
keep-alive, Content-Length bodies, chunked-free responses, and a handler that
may take over the connection to stream (SSE), or upgrade it to a held
WebSocket (`hold_websocket`, RFC 6455: the handshake, pings, and a close;
messages are read and dropped). It is deliberately plain: the point of the
targets is their behaviour under load, not their HTTP stack.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
REASONS = {
    101: "Switching Protocols",
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    404: "Not Found",
    502: "Bad Gateway",
}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    peer: str
    reader: asyncio.StreamReader = field(repr=False)
    writer: asyncio.StreamWriter = field(repr=False)

    @property
    def client_ip(self) -> str:
        """The first X-Forwarded-For address when a proxy (or the load generator) sent one."""
        forwarded = self.headers.get("x-forwarded-for")
        return forwarded.split(",")[0].strip() if forwarded else self.peer


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


Handler = Callable[[Request], Awaitable[Response | None]]  # None: the handler took the stream


def encode_head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'OK')}"]
    lines += [f"{key}: {value}" for key, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def read_message(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes] | None:
    """(first line, lower-cased headers, body) of one request or response; None at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return lines[0], headers, await _read_chunked(reader)
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return lines[0], headers, body


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


async def serve_connection(
    handler: Handler, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    peer = writer.get_extra_info("peername")
    peer_ip = peer[0] if peer else "unknown"
    try:
        while True:
            message = await read_message(reader)
            if message is None:
                return
            first, headers, body = message
            method, path, _ = [*first.split(" ", 2), "", ""][:3]
            response = await handler(Request(method, path, headers, body, peer_ip, reader, writer))
            if response is None:
                return  # a stream: the handler owned the connection until it ended
            head = {
                "Content-Type": response.content_type,
                "Content-Length": str(len(response.body)),
                **response.headers,
            }
            writer.write(encode_head(response.status, head) + response.body)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def serve(handler: Handler) -> None:
    """Serve `handler` at `$PORT` (default 8080) until SIGTERM or SIGINT: on 127.0.0.1, or
    in a pod on its own address (`$POD_IP`, which Plimsoll's pod specs set), since a pod's
    loopback is out of the generators' reach."""
    server = await asyncio.start_server(
        lambda r, w: serve_connection(handler, r, w),
        host=os.environ.get("POD_IP") or "127.0.0.1",
        port=int(os.environ.get("PORT", "8080")),
        backlog=4096,
    )
    # A container's first process ignores SIGTERM unless it handles it, and the kubelet
    # then waits out the pod's grace period (30 s) before a SIGKILL: on a real node every
    # run namespace's deletion waited that long for this target.
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


async def hold_websocket(request: Request, keep_alive: float) -> None:
    """Upgrade `request` to a WebSocket and hold it, pinging when it is idle, until it closes."""
    key = request.headers.get("sec-websocket-key", "")
    accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
    head = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": accept}
    reader, writer = request.reader, request.writer
    writer.write(encode_head(101, head))
    await writer.drain()
    while True:
        try:
            # Cancelled while waiting, readexactly consumes nothing: no frame is torn.
            first, second = await asyncio.wait_for(reader.readexactly(2), keep_alive)
        except TimeoutError:
            writer.write(b"\x89\x00")  # an empty ping: the client's keep-alive
            await writer.drain()
            continue
        length = second & 0x7F
        if length >= 126:
            length = int.from_bytes(await reader.readexactly(2 if length == 126 else 8), "big")
        await reader.readexactly(4 * (second >> 7) + length)  # mask and payload, unused
        if first & 0x0F == 0x8:  # close: answer it and end
            writer.write(b"\x88\x00")
            await writer.drain()
            return


class Upstream:
    """A small keep-alive connection pool to one HTTP upstream (host:port)."""

    def __init__(self, host: str, port: int, size: int = 32) -> None:
        self.host = host
        self.port = port
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._size = size

    async def request(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        conn = (
            self._idle.pop() if self._idle else await asyncio.open_connection(self.host, self.port)
        )
        reader, writer = conn
        head = {"Host": f"{self.host}:{self.port}", "Content-Length": str(len(body)), **headers}
        lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items())]
        try:
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await writer.drain()
            message = await read_message(reader)
        except ConnectionError:
            message = None
        if message is None:
            writer.close()
            raise ConnectionError(f"upstream {self.host}:{self.port} closed the connection")
        first, response_headers, response_body = message
        if len(self._idle) < self._size and response_headers.get("connection") != "close":
            self._idle.append(conn)
        else:
            writer.close()
        return int(first.split(" ")[1]), response_headers, response_body
