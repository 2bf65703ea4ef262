"""A tiny HTTP target for the generator's tests, served on 127.0.0.1.

Behaviours are switched by the test: `stall_every`/`stall_for` make the whole
server pause (answers queue up, as when a process stops), `honour_xff` decides
whether `/whoami` echoes the forwarded client address or the socket peer,
`upstream_ms` adds a `Server-Timing: upstream;dur=` header, `delays` holds the
answer to a path for that many seconds, `keys` counts requests per `Authorization`
value, `/sse` holds an
event stream with keep-alive comments, `/ws` holds a WebSocket (pings and a
message every `keep_alive`, counting the client's pongs; `ws_close_after`
closes it, `ws_bad_accept` answers a wrong key), `/mcp` answers a minimal MCP
server, and `/v1/chat/completions` streams tokens.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import ssl
import time
from dataclasses import dataclass, field

import httptools

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@dataclass
class TargetState:
    stall_every: float = 0.0
    stall_for: float = 0.0
    honour_xff: bool = True
    upstream_ms: float | None = None
    keep_alive: float = 0.2
    started: float = field(default_factory=time.monotonic)
    paths: dict[str, int] = field(default_factory=dict)
    forwarded: set[str] = field(default_factory=set)
    methods: list[str] = field(default_factory=list)
    open_streams: int = 0
    tool_error_every: int = 0
    calls: int = 0
    ws_pongs: int = 0
    ws_close_after: float | None = None
    ws_bad_accept: bool = False
    arrivals: list[tuple[float, int, str]] = field(default_factory=list)  # (when, conn, path)
    delays: dict[str, float] = field(default_factory=dict)  # path -> seconds held
    keys: dict[str, int] = field(default_factory=dict)  # Authorization -> requests
    # (Authorization, X-User-Id) pairs seen: which identity came with which key
    identities: set[tuple[str, str]] = field(default_factory=set)

    def stalled_for(self) -> float:
        if self.stall_every <= 0:
            return 0.0
        phase = (time.monotonic() - self.started) % self.stall_every
        # The last `stall_for` seconds of every period are a pause.
        start = self.stall_every - self.stall_for
        return self.stall_every - phase if phase >= start else 0.0


class TargetProtocol(asyncio.Protocol):
    def __init__(self, state: TargetState) -> None:
        self.state = state
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.headers: dict[bytes, bytes] = {}
        self.body = b""
        self.transport: asyncio.Transport | None = None
        self.queue: list[asyncio.Task[None]] = []
        self.tail: asyncio.Future[None] | None = None
        self.ws_buffer: bytearray | None = None  # set once the connection is a WebSocket

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        if self.ws_buffer is not None:
            self.ws_frames(data)
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            self.ws_buffer = bytearray()  # on_message_complete has dispatched /ws
            self.ws_frames(data[upgrade.args[0] :])

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        method = self.parser.get_method().decode()
        path = httptools.parse_url(self.url).path.decode()
        headers, body = self.headers, self.body
        self.url, self.headers, self.body = b"", {}, b""
        previous = self.tail
        self.tail = asyncio.ensure_future(self.handle(previous, method, path, headers, body))

    def write(self, status: int, body: bytes, extra: str = "", kind: str = "text/plain") -> None:
        if self.transport is None:
            return
        timing = ""
        if self.state.upstream_ms is not None:
            timing = f"Server-Timing: upstream;dur={self.state.upstream_ms}\r\n"
        head = (
            f"HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\nContent-Length: {len(body)}\r\n"
            f"{timing}{extra}\r\n"
        )
        self.transport.write(head.encode() + body)

    async def handle(self, previous, method, path, headers, body) -> None:  # type: ignore[no-untyped-def]
        if previous is not None:
            await previous  # answers leave in request order on one connection
        state = self.state
        state.paths[path] = state.paths.get(path, 0) + 1
        state.arrivals.append((time.monotonic(), id(self), path))
        key = headers.get(b"authorization")
        if key:
            state.keys[key.decode()] = state.keys.get(key.decode(), 0) + 1
            user = headers.get(b"x-user-id")
            if user is not None:
                state.identities.add((key.decode(), user.decode()))
        xff = headers.get(b"x-forwarded-for")
        if xff:
            state.forwarded.add(xff.decode())
        pause = state.stalled_for() + state.delays.get(path, 0.0)
        if pause > 0:
            await asyncio.sleep(pause)
        if path == "/whoami":
            peer = self.transport.get_extra_info("peername")[0] if self.transport else "?"
            seen = xff.decode() if (xff and state.honour_xff) else peer
            self.write(200, json.dumps({"client": seen}).encode())
        elif path == "/busy":
            self.write(503, b"busy")
        elif path == "/sse":
            await self.hold_stream()
        elif path == "/ws":
            await self.websocket(headers)
        elif path == "/mcp":
            await self.mcp(method, headers, body)
        elif path == "/v1/chat/completions":
            await self.chat(body)
        else:
            self.write(200, b"hello")

    async def hold_stream(self) -> None:
        if self.transport is None:
            return
        self.transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"
        )
        self.state.open_streams += 1
        try:
            while self.transport is not None and not self.transport.is_closing():
                self.transport.write(b": keep-alive\n\n")
                await asyncio.sleep(self.state.keep_alive)
        finally:
            self.state.open_streams -= 1

    async def websocket(self, headers: dict[bytes, bytes]) -> None:
        key = headers.get(b"sec-websocket-key", b"") + (b"x" if self.state.ws_bad_accept else b"")
        accept = base64.b64encode(hashlib.sha1(key + WS_GUID).digest()).decode()
        if self.transport is None:
            return
        self.transport.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        self.state.open_streams += 1
        opened = time.monotonic()
        try:
            while self.transport is not None and not self.transport.is_closing():
                close_after = self.state.ws_close_after
                if close_after is not None and time.monotonic() - opened >= close_after:
                    self.transport.write(b"\x88\x02\x03\xe8")  # close, 1000
                    return
                self.transport.write(b"\x89\x01k")  # ping "k"
                # A text message long enough to take the 16-bit length form.
                self.transport.write(b"\x81\x7e\x00\x80" + b"m" * 128)
                await asyncio.sleep(self.state.keep_alive)
        finally:
            self.state.open_streams -= 1

    def ws_frames(self, data: bytes) -> None:
        """Client frames: masked, short (pongs and a close) in these tests."""
        buf = self.ws_buffer
        assert buf is not None
        buf += data
        while len(buf) >= 6 and len(buf) >= 6 + (buf[1] & 0x7F):
            opcode, length = buf[0] & 0x0F, buf[1] & 0x7F
            assert buf[1] & 0x80, "client frames are masked"
            assert length < 126, "client frames are short in these tests"
            del buf[: 6 + length]
            if opcode == 0xA:
                self.state.ws_pongs += 1
            elif opcode == 0x8 and self.transport is not None:
                self.transport.close()

    async def mcp(self, method: str, headers: dict[bytes, bytes], body: bytes) -> None:
        if method == "GET":
            await self.hold_stream()
            return
        message = json.loads(body)
        name = message.get("method")
        self.state.methods.append(name)
        if "id" not in message:
            self.write(202, b"")
            return
        result: dict[str, object]
        extra = ""
        if name == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}
            extra = "Mcp-Session-Id: s-1\r\n"
        elif name == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif name == "tools/call":
            self.state.calls += 1
            every = self.state.tool_error_every
            failed = every > 0 and self.state.calls % every == 0
            result = {"content": [{"type": "text", "text": "ok"}], "isError": failed}
        else:
            result = {}
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self.write(200, reply, extra, kind="application/json")

    async def chat(self, body: bytes) -> None:
        request = json.loads(body)
        turns = len(request["messages"])
        if self.transport is None:
            return
        self.transport.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        for word in ("you", "said", str(turns)):
            await asyncio.sleep(0.005)
            event = json.dumps({"choices": [{"delta": {"content": word + " "}}]})
            chunk = f"data: {event}\n\n".encode()
            if self.transport is not None:
                self.transport.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        if self.transport is not None:
            done = b"data: [DONE]\n\n"
            self.transport.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")


async def start_target(
    state: TargetState, tls: ssl.SSLContext | None = None, port: int = 0
) -> tuple[asyncio.Server, int]:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: TargetProtocol(state), "127.0.0.1", port, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    return server, port
