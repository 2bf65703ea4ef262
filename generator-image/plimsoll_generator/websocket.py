"""Held WebSocket streams: a minimal RFC 6455 client, for the streams probe.

`streams.py` opens one `WsStream` per held WebSocket (a mixed probe holds half
its idle streams as WebSockets). The stream sends the HTTP/1.1 Upgrade with a
fresh `Sec-WebSocket-Key`, checks the 101 answer and its `Sec-WebSocket-Accept`,
then holds the connection: it answers pings with pongs, counts every server
frame (ping, pong, message) as a sign of life for `StreamWatch`, and notices a
close frame or a dropped connection.

Memory per stream stays bounded whatever the server sends: message payloads are
skipped, never buffered; only a frame header or a control frame (at most 125
bytes of payload) is ever held. Client frames are masked, as the RFC requires.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import ssl
import time

from plimsoll_generator.request_head import check_head
from plimsoll_generator.sse import StreamWatch

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEAD = 8192  # an upgrade answer longer than this is not one
OP_CONT, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0, 1, 2, 8, 9, 10
_perf = time.perf_counter


def accept_for(key: bytes) -> bytes:
    """The Sec-WebSocket-Accept a server must answer to `key`."""
    return base64.b64encode(hashlib.sha1(key + GUID).digest())


def client_frame(opcode: int, payload: bytes = b"") -> bytes:
    """One final, masked client frame (control frames only: payload <= 125 bytes)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes((0x80 | opcode, 0x80 | len(payload))) + mask + masked


class WsStream(asyncio.Protocol):
    """One held WebSocket; `watch` sees it open, stay alive and end."""

    __slots__ = (
        "buffer",
        "bytes_in",
        "bytes_out",
        "cancelled",
        "error",
        "expected",
        "flagged",
        "last_seen",
        "messages",
        "opened",
        "request",
        "skip",
        "transport",
        "watch",
    )

    def __init__(self, watch: StreamWatch, host: str, path: str) -> None:
        key = base64.b64encode(os.urandom(16))
        check_head("GET", path, host, {})
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key.decode()}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode("latin-1")
        self.expected = accept_for(key)
        self.watch = watch
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.skip = 0  # payload bytes of the current data frame still to discard
        self.opened = False
        self.cancelled = False
        self.flagged = False
        self.error: str | None = None
        self.messages = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.last_seen = _perf()

    # connection ----------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.cancelled:  # the trial ended while this one was connecting
            transport.abort()  # type: ignore[attr-defined]
            return
        self._write(self.request)

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.bytes_out += len(data)
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.bytes_in += len(data)
        self.last_seen = _perf()
        self.flagged = False
        self.buffer += data
        if not self.opened and not self._upgrade():
            return
        self._frames()

    def _upgrade(self) -> bool:
        """Check the 101 answer once it is whole; True when frames may follow."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                self._fail("an upgrade answer without an end of headers")
            return False
        head, self.buffer = self.buffer[:end].decode("latin-1"), self.buffer[end + 4 :]
        status, *lines = head.split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status.split(" ")[1:2] != ["101"]:
            self._fail(f"no upgrade: {status!r}")
        elif headers.get("upgrade", "").lower() != "websocket":
            self._fail("a 101 answer without 'Upgrade: websocket'")
        elif headers.get("sec-websocket-accept", "").encode() != self.expected:
            self._fail("a wrong Sec-WebSocket-Accept")
        else:
            self.opened = True
            self.watch.opened(self)
            return True
        return False

    def _frames(self) -> None:
        while True:
            if self.skip:
                dropped = min(self.skip, len(self.buffer))
                self.skip -= dropped
                self.buffer = self.buffer[dropped:]
                if self.skip:
                    return
            buf = self.buffer
            if len(buf) < 2:
                return
            first, second = buf[0], buf[1]
            opcode, length, at = first & 0x0F, second & 0x7F, 2
            if second & 0x80:
                self._fail("a masked frame from the server")
                return
            if length == 126:
                if len(buf) < 4:
                    return
                length, at = int.from_bytes(buf[2:4], "big"), 4
            elif length == 127:
                if len(buf) < 10:
                    return
                length, at = int.from_bytes(buf[2:10], "big"), 10
            if opcode >= OP_CLOSE:
                if length > 125:
                    self._fail("a control frame longer than 125 bytes")
                    return
                if len(buf) < at + length:
                    return
                self.buffer = buf[at + length :]
                self._control(opcode, buf[at : at + length])
                if self.transport is None:
                    return
                continue
            self.buffer = buf[at:]
            self.skip = length
            if first & 0x80:
                self.messages += 1
                self.watch.health.keep_alives += 1

    def _control(self, opcode: int, payload: bytes) -> None:
        if opcode == OP_PING:
            self.watch.health.keep_alives += 1
            self._write(client_frame(OP_PONG, payload))
        elif opcode == OP_CLOSE:
            # The server ends the stream: answer its close, then it counts as dropped.
            self._write(client_frame(OP_CLOSE, payload[:2]))
            self._fail("closed by the server")
        elif opcode == OP_PONG:
            self.watch.health.keep_alives += 1

    # the end -------------------------------------------------------------
    def _fail(self, reason: str) -> None:
        if self.error is None:
            self.error = reason
        transport, self.transport = self.transport, None
        if transport is not None:
            transport.close()
            self._ended()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is None:
            return  # already ended by _fail
        self.transport = None
        if self.error is None:
            self.error = f"connection lost: {exc or 'closed by peer'}"
        self._ended()

    def _ended(self) -> None:
        self.buffer = b""
        self.watch.ended(self)

    def cancel(self) -> None:
        """Close it on purpose (end of trial): not counted as dropped."""
        self.cancelled = True
        if self.transport is not None:
            self.transport.abort()


async def open_ws(
    loop: asyncio.AbstractEventLoop,
    stream: WsStream,
    host: str,
    port: int,
    tls: ssl.SSLContext | None,
    limit: float,
) -> None:
    """Connect `stream`; a refused or timed-out connect counts as failed to open."""
    try:
        async with asyncio.timeout(limit):
            await loop.create_connection(lambda: stream, host, port, ssl=tls)
    except (OSError, TimeoutError) as exc:  # ssl errors are OSErrors too
        stream.error = f"connect to {host}:{port} failed: {exc or 'timeout'}"
        stream.watch.ended(stream)
