"""One client connection: an `asyncio.Protocol` over httptools, and its responses.

The server creates one `Connection` per accepted socket. It parses requests
with httptools into `Request`s (request.py), hands each complete one to the
router, and offers the router a small response API (answer now, answer later
from a timer, hold an SSE stream). Held calls cost a timer handle, never a task
or a thread, which is what keeps a held call at a few KiB. Requests pipelined
behind a held call wait in a queue and are answered in order, as HTTP/1.1
requires.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import httptools

from plimsoll_mock import wire
from plimsoll_mock.request import Request
from plimsoll_mock.state import State

MAX_BODY = 64 * 1024 * 1024
_perf = time.perf_counter


Handler = Callable[["Connection", Request], None]


class Connection(asyncio.Protocol):
    __slots__ = (
        "_arrived",
        "_began",
        "_body",
        "_closed",
        "_handler",
        "_headers",
        "_loop",
        "_parser",
        "_prepared",
        "_queue",
        "_req",
        "_state",
        "_streaming",
        "_url",
        "active",
        "timer",
        "transport",
    )

    def __init__(
        self,
        state: State,
        handler: Handler,
        loop: asyncio.AbstractEventLoop,
        prepared: Mapping[tuple[bytes, bytes], wire.Prepared] | None = None,
    ) -> None:
        self._state = state
        self._handler = handler
        self._prepared = prepared if prepared is not None else {}
        self._loop = loop
        self._parser: Any = httptools.HttpRequestParser(self)
        self._req: Request | None = None
        self._arrived = self._began = 0.0
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._body: list[bytes] = []
        self._queue: deque[Request] = deque()
        self._closed = False
        self._streaming = False
        self.active: Request | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.transport: Any = None

    # asyncio.Protocol -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self._state.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        # Everything a call held goes with its connection: its timer, its stream
        # registration, its in-flight count; and the parser's reference cycle.
        self._closed = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        req = self.active
        if req is not None:
            self.active = None
            if req.counted:
                self._state.in_flight -= 1
            if self._streaming:
                self._state.streams.discard(self)
        self._queue.clear()
        self._parser = None
        self._state.connections.discard(self)

    def data_received(self, data: bytes) -> None:
        self._arrived = _perf()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._refuse(400, "protocol upgrades are not supported")
        except httptools.HttpParserError as exc:
            self._refuse(400, f"malformed HTTP request: {exc}")

    def pause_writing(self) -> None:
        # A slow reader stops us reading its next requests; its buffer stays bounded.
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        if not self._closed:
            self.transport.resume_reading()

    # httptools callbacks ------------------------------------------------------------
    # There is no on_message_begin: each callback httptools finds on the protocol
    # costs a call per request. A request starts with its URL, and it came when the
    # chunk holding that URL arrived; the Request is built once its head is whole.

    def on_url(self, url: bytes) -> None:
        if not self._url:
            self._began = self._arrived
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        parser = self._parser
        path, _, query = self._url.partition(b"?")
        self._req = Request(
            self._began,
            parser.get_method(),
            path,
            query,
            self._headers,
            parser.should_keep_alive(),
        )
        self._url = b""
        self._headers = []

    def on_body(self, body: bytes) -> None:
        self._body.append(body)
        if len(self._body) % 64 == 0 and sum(map(len, self._body)) > MAX_BODY:
            raise httptools.HttpParserError("request body over 64 MiB")

    def on_message_complete(self) -> None:
        req = self._req
        assert req is not None
        self._req = None
        if self._body:
            req.body = b"".join(self._body) if len(self._body) > 1 else self._body[0]
            self._body = []
        if self.active is not None:
            self._queue.append(req)
            return
        prepared = self._prepared.get((req.method, req.path))
        state = self._state
        if (
            prepared is None
            or self._closed
            or state.shutting_down
            or state.in_flight >= state.max_in_flight
        ):
            self._dispatch(req)
            return
        # A whole answer prepared at start-up needs nothing from the call: written here,
        # with no handler, hold or in-flight count between (0.3 us of Python a call less
        # than through `_dispatch`, bench/mock.py's small-body route). Byte for byte what
        # the route's handler writes (tests/mock/test_routes.py).
        route, status, lead, rest = prepared
        req.route = route
        state.count(route, status)
        self.transport.write(self._head(req, lead, rest))
        if not req.keep_alive:
            self.transport.close()

    # dispatch and completion ------------------------------------------------------

    def _dispatch(self, req: Request) -> None:
        self.active = req
        state = self._state
        if state.shutting_down:
            req.keep_alive = False
            req.route = "shutdown"
            self.respond(req, 503, wire.error_body(503, "the mock is shutting down"))
            return
        if state.in_flight >= state.max_in_flight and req.path not in (b"/healthz", b"/metrics"):
            req.route = "overload"
            self.respond(req, 503, wire.error_body(503, "max_in_flight reached"))
            return
        state.in_flight += 1
        req.counted = True
        try:
            self._handler(self, req)
        except Exception as exc:  # a bug in a handler answers 500, not a parser error
            if self.active is req:
                req.route = "internal-error"
                self.respond(req, 500, wire.error_body(500, f"mock handler failed: {exc!r}"))

    def _finish(self, req: Request) -> None:
        self.timer = None
        self.active = None
        if req.counted:
            self._state.in_flight -= 1
        if self._streaming:
            self._streaming = False
            self._state.streams.discard(self)
        if self._closed:
            return
        if not req.keep_alive:
            self.transport.close()
        elif self._queue:
            self._dispatch(self._queue.popleft())

    def _refuse(self, status: int, message: str) -> None:
        if self._closed:
            return
        body = wire.error_body(status, message)
        self._state.count("bad-request", status)
        started = self._req.started if self._req is not None else self._arrived
        self.transport.write(
            wire.status_line(status)
            + b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body)
            + b"%s%.3f\r\n" % (wire.TIMING_PREFIX, (_perf() - started) * 1000.0)
            + wire.CLOSE
            + b"\r\n"
            + body
        )
        self.transport.close()
        self._closed = True

    def _head(self, req: Request, lead: bytes, rest: bytes) -> bytes:
        """`lead` (`wire.head_lead`), the time since the request came, the connection
        header, then `rest` (more header lines, and what follows). Keep-alive is said
        to every client, as nginx does: an HTTP/1.0 client needs it, an HTTP/1.1 client
        ignores it, and asking the parser which version it was costs 0.2 µs a call."""
        elapsed_ms = (_perf() - req.started) * 1000.0
        conn = wire.KEEP_ALIVE if req.keep_alive else wire.CLOSE
        return b"%s%.3f\r\n%s%s" % (lead, elapsed_ms, conn, rest)

    # the response API the router uses -----------------------------------------------

    def respond(
        self, req: Request, status: int, body: bytes, ctype: bytes = wire.JSON, extra: bytes = b""
    ) -> None:
        """Answer `req` now with a complete body; `extra` is preformatted header lines."""
        if self._closed:
            return
        self._state.count(req.route, status)
        lead = wire.head_lead(status, ctype)
        length = b"%scontent-length: %d\r\n\r\n" % (extra, len(body))
        if req.method == b"HEAD":
            self.transport.write(self._head(req, lead, length))
        elif len(body) > 65536:
            # No copy of a large shared body into a joined buffer.
            self.transport.write(self._head(req, lead, length))
            self.transport.write(body)
        else:
            self.transport.write(self._head(req, lead, length + body))
        self._finish(req)

    def later(self, delay: float, callback: Callable[..., None], *args: Any) -> None:
        """Run `callback(*args)` after `delay` seconds unless the client leaves first."""
        self.timer = self._loop.call_later(delay, callback, *args)

    def at(self, when: float, callback: Callable[..., None], *args: Any) -> None:
        """Like `later`, at an absolute `loop.time()`: schedules that never drift."""
        self.timer = self._loop.call_at(when, callback, *args)

    def start_stream(
        self, req: Request, ctype: bytes = wire.SSE, extra: bytes = b"", first: bytes = b""
    ) -> None:
        """Send a 200 head with a chunked body; `first` is already chunk-framed."""
        if self._closed:
            return
        self._state.count(req.route, 200)
        self.transport.write(
            self._head(req, wire.head_lead(200, ctype), extra + wire.STREAM_HEADERS + b"\r\n")
            + first
        )

    def hold_stream(self) -> None:
        """Register the open stream for keep-alives until the client leaves."""
        self._streaming = True
        self._state.streams.add(self)

    def write(self, framed: bytes) -> None:
        """Write bytes that are already chunk-framed (see `wire.chunk`)."""
        if not self._closed:
            self.transport.write(framed)

    def end_stream(self, req: Request, last: bytes = b"") -> None:
        if self._closed:
            return
        self.transport.write(last + wire.CHUNK_END)
        self._finish(req)

    def keep_alive(self) -> None:
        if not self._closed:
            self.transport.write(wire.KEEP_ALIVE_CHUNK)

    def drop(self, req: Request) -> None:
        """Close without an answer: the `timeout` error shape."""
        self._state.count(req.route, 0)
        req.keep_alive = False
        if not self._closed:
            self.transport.abort()

    def now(self) -> float:
        """The loop's clock, the base of `at`."""
        return self._loop.time()

    def end_held(self) -> None:
        """For graceful shutdown: end a held SSE stream cleanly and close the connection."""
        req = self.active
        if self._streaming and req is not None:
            req.keep_alive = False
            self.end_stream(req)

    @property
    def streaming(self) -> bool:
        return self._streaming

    @property
    def closed(self) -> bool:
        return self._closed

    def close_if_idle(self) -> bool:
        """For graceful shutdown: close a connection with nothing in flight."""
        if self.active is None and not self._closed:
            self.transport.close()
            return True
        return False

    def abort(self) -> None:
        if not self._closed:
            self.transport.abort()
