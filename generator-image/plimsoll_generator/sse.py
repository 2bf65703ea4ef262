"""Server-sent events: an incremental parser, and an exchange that holds a stream.

`SseParser` turns body chunks into (event, data) pairs; MCP answers, LLM token
streams and held notification streams all use it. `HeldStream` is an exchange
that stays open for the trial: any bytes (keep-alive comments included) count
as a sign of life, and `StreamWatch` counts streams silent for longer than the
keep-alive timeout, and streams the server dropped. It watches WebSocket
streams (`websocket.py`) too, through the small `Held` protocol.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from plimsoll.api.trial import StreamHealth
from plimsoll_generator.client import Exchange


class SseParser:
    def __init__(self) -> None:
        self.buffer = b""
        self.event = b""
        self.data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        self.buffer += chunk
        out: list[tuple[str, str]] = []
        while True:
            cut = self.buffer.find(b"\n")
            if cut < 0:
                return out
            line, self.buffer = self.buffer[:cut].rstrip(b"\r"), self.buffer[cut + 1 :]
            if not line:
                if self.data or self.event:
                    out.append((self.event.decode() or "message", b"\n".join(self.data).decode()))
                self.event, self.data = b"", []
            elif line.startswith(b":"):
                continue  # a comment: the keep-alive
            elif line.startswith(b"data:"):
                self.data.append(line[5:].removeprefix(b" "))
            elif line.startswith(b"event:"):
                self.event = line[6:].strip()


class HeldStream(Exchange):
    """A stream held open; `watch` sees every sign of life and the end."""

    __slots__ = ("cancelled", "flagged", "last_seen", "on_end", "opened", "watch")

    def __init__(self, watch: StreamWatch, on_end: Callable[[HeldStream], None] | None = None):
        super().__init__(self._ended, keep_headers=True, timeout=float("inf"))
        self.watch = watch
        self.last_seen = time.perf_counter()
        self.opened = False
        self.cancelled = False
        self.flagged = False
        self.on_end = on_end

    def on_head(self, status: int) -> None:
        self.status = status
        self.last_seen = time.perf_counter()
        if self.cancelled and self.conn is not None:
            self.conn.close()
            return
        if 200 <= status < 300:
            self.opened = True
            self.watch.opened(self)

    def on_body(self, chunk: bytes) -> None:
        self.nbytes += len(chunk)
        self.last_seen = time.perf_counter()
        self.flagged = False
        self.watch.health.keep_alives += 1

    def _ended(self, _: Exchange) -> None:
        self.watch.ended(self)
        if self.on_end is not None and not self.cancelled:
            self.on_end(self)

    def cancel(self) -> None:
        """Close it on purpose (reconnect, end of trial): not counted as dropped."""
        self.cancelled = True
        conn = self.conn
        if conn is not None:
            conn.close()


class Held(Protocol):
    """What `StreamWatch` needs of a held stream, SSE or WebSocket."""

    opened: bool
    cancelled: bool
    flagged: bool
    last_seen: float

    def cancel(self) -> None: ...


class StreamWatch:
    """Health of every held stream of one process, checked once a second."""

    def __init__(
        self, health: StreamHealth, keep_alive_timeout: float, recording: Callable[[], bool]
    ):
        self.health = health
        self.timeout = keep_alive_timeout
        self.recording = recording
        self.live: set[Held] = set()
        self._task: asyncio.Task[None] | None = None

    def opened(self, stream: Held) -> None:
        self.live.add(stream)
        self.health.opened += 1

    def ended(self, stream: Held) -> None:
        self.live.discard(stream)
        if stream.cancelled:
            return
        if not stream.opened:
            self.health.failed_to_open += 1
        elif self.recording():
            self.health.dropped += 1

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._check())

    async def _check(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.perf_counter()
            recording = self.recording()
            for stream in self.live:
                if not stream.flagged and now - stream.last_seen > self.timeout:
                    stream.flagged = True
                    if recording:
                        self.health.missed_keep_alives += 1

    def stop(self) -> None:
        """Count what is still held, then close it all."""
        if self._task is not None:
            self._task.cancel()
        self.health.held_at_end += len(self.live)
        for stream in list(self.live):
            stream.cancel()
        self.live.clear()
