"""The hot path: an HTTP/1.1 keep-alive client on uvloop + httptools.

Every workload sends through a `Pool` (one per target address). An `Exchange`
is one request in flight: the connection feeds it the status, the headers it
asked for, the body (whole, or chunk by chunk for streams), then completes or
fails it with a transport error. Callbacks, not coroutines, so a request costs
a few microseconds of CPU (the reason httpx and aiohttp are not used here);
`fetch()` wraps an exchange in a future for the low-rate modeled workloads.

Timeouts are swept twice a second over the open connections instead of one
timer per request, which would cost more than the request itself.

A *lean* exchange (no headers or body kept, no streaming: the open model's and
the closed loop's plain requests) is parsed by a second httptools parser that
has no header or body callbacks: httptools turns every header into two bytes
objects and a Python call, which cost more than the rest of the request's
Python together (bench/profiles/). The one header a lean exchange needs,
Server-Timing, is then found in the response head's raw bytes.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from typing import Any, cast

import httptools

from plimsoll_generator.request_head import check_head

SERVER_TIMING = b"server-timing"
_perf = time.perf_counter


class Exchange:
    """One request/response. Subclasses override `on_body` to stream."""

    __slots__ = (
        "body",
        "callback",
        "conn",
        "error",
        "headers",
        "keep_headers",
        "lean",
        "nbytes",
        "sent_at",
        "server_timing",
        "status",
        "timeout",
    )

    def __init__(
        self,
        callback: Callable[[Exchange], None] | None = None,
        keep_body: bool = False,
        keep_headers: bool = False,
        timeout: float = 60.0,
    ) -> None:
        self.callback = callback
        self.body: list[bytes] | None = [] if keep_body else None
        self.keep_headers = keep_headers
        self.headers: dict[bytes, bytes] | None = {} if keep_headers else None
        self.status = 0
        self.server_timing: bytes | None = None
        self.error: str | None = None
        self.nbytes = 0
        self.sent_at = 0.0
        self.timeout = timeout
        self.conn: Connection | None = None
        # Lean (see the module docstring) unless it keeps or streams anything.
        self.lean = (
            not (keep_body or keep_headers)
            and type(self).on_body is Exchange.on_body
            and type(self).on_head is Exchange.on_head
        )

    def on_head(self, status: int) -> None:
        self.status = status

    def on_body(self, chunk: bytes) -> None:
        self.nbytes += len(chunk)
        if self.body is not None:
            self.body.append(chunk)

    def finish(self, error: str | None) -> None:
        self.error = error
        if self.callback is not None:
            self.callback(self)

    def text(self) -> bytes:
        return b"".join(self.body) if self.body else b""

    def header(self, name: bytes) -> bytes | None:
        return self.headers.get(name) if self.headers is not None else None


def server_timing_of(head: bytes) -> bytes | None:
    """The Server-Timing value(s) in the raw bytes that hold a response head (comma-joined;
    bytes past the head may follow), or None."""
    # Header names are case-blind. A small chunk is lowered whole, the cheapest way on
    # the hot path; the end of the head is looked for only when the name is there.
    lowered = (head if len(head) <= _WHOLE else head[: head.find(b"\r\n\r\n") + 4]).lower()
    at = lowered.find(_TIMING_LINE)
    if at < 0:
        return None
    end = lowered.find(b"\r\n\r\n")
    values = []
    while 0 <= at < end:
        start = at + len(_TIMING_LINE)
        values.append(head[start : lowered.find(b"\r\n", start)].strip())
        at = lowered.find(_TIMING_LINE, start)
    return b",".join(values) if values else None


_TIMING_LINE = b"\n" + SERVER_TIMING + b":"
_WHOLE = 4096


class _LeanCallbacks:
    """What the lean parser calls: message complete, nothing per header nor at the head's
    end (the connection finds the head's end in the bytes it feeds, a cheaper search)."""

    __slots__ = ("on_message_complete",)

    def __init__(self, conn: Connection) -> None:
        self.on_message_complete = conn.on_lean_message_complete


class Connection:
    """One keep-alive connection: at most one exchange at a time (no pipelining).

    Two parsers, one per kind of exchange (see the module docstring); each sees
    whole responses only, so switching between them at a send is safe.

    An asyncio protocol by its methods, not by `asyncio.Protocol` as a base: compiled
    (client.pxd) it is an extension type, which cannot derive from a Python class.
    """

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.full_parser = httptools.HttpResponseParser(self)
        self.lean_parser = httptools.HttpResponseParser(_LeanCallbacks(self))
        self.parser = self.full_parser  # the one reading the current response
        self.head_parts: list[bytes] = []  # a lean response's bytes until its head ends
        self.head_pending = False
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self.reusable = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.pool.open.add(self)

    def send(self, payload: bytes, exchange: Exchange) -> None:
        self.exchange = exchange
        exchange.conn = self
        if not exchange.sent_at:  # a driver that read the clock just now set it
            exchange.sent_at = _perf()
        self.pool.bytes_out += len(payload)
        if exchange.lean:
            self.parser = self.lean_parser
            self.head_pending = True
        else:
            self.parser = self.full_parser
        assert self.transport is not None
        self.transport.write(payload)

    def data_received(self, data: bytes) -> None:
        self.pool.bytes_in += len(data)
        if self.head_pending:
            # A lean response's head: read its Server-Timing once it has all come. Almost
            # always it comes whole in the first chunk, which is searched where it lies.
            end = data.find(b"\r\n\r\n") if not self.head_parts else -1
            if end >= 0:
                self.head_pending = False
                if data.find(b"dur=", 0, end) >= 0 and self.exchange is not None:
                    self.exchange.server_timing = server_timing_of(data)
            else:
                self.gather_head(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self.fail(f"unparsable response: {exc}")

    # httptools callbacks -------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        exchange = self.exchange
        if exchange is None:
            return
        if len(name) == 13 and name.lower() == SERVER_TIMING:
            exchange.server_timing = value
        if exchange.headers is not None:
            exchange.headers[name.lower()] = value

    def on_headers_complete(self) -> None:
        if self.exchange is not None:
            self.exchange.on_head(self.parser.get_status_code())

    def on_body(self, body: bytes) -> None:
        if self.exchange is not None:
            self.exchange.on_body(body)

    def gather_head(self, data: bytes) -> None:
        """A lean head split over chunks: kept until its end has come."""
        parts = self.head_parts
        parts.append(data)
        head = b"".join(parts)
        if b"\r\n\r\n" not in head:
            return
        self.head_pending = False
        parts.clear()
        # Only an `upstream;dur=` metric is ever read from a lean answer (`upstream_seconds`).
        if b"dur=" in head and self.exchange is not None:
            self.exchange.server_timing = server_timing_of(head)

    def on_lean_message_complete(self) -> None:
        # `on_message_complete` with the status read here (the lean parser has no head
        # callback); written out, not called: this runs once per answer.
        exchange = self.exchange
        self.exchange = None
        parser = self.lean_parser
        if not parser.should_keep_alive():
            self.close()
        if exchange is not None:
            exchange.status = parser.get_status_code()
            if exchange.callback is not None:
                exchange.callback(exchange)
        if self.exchange is None and self.reusable:
            self.pool.idle.append(self)

    def on_message_complete(self) -> None:
        exchange = self.exchange
        self.exchange = None
        if not self.parser.should_keep_alive():
            self.close()
        if exchange is not None and exchange.callback is not None:
            # `finish(None)` without its call (error stays None). The callback may send its
            # next request on this very connection (`send`): a closed loop's user does.
            exchange.callback(exchange)
        if self.exchange is None and self.reusable:
            self.pool.idle.append(self)

    # failures ------------------------------------------------------------
    def fail(self, reason: str) -> None:
        exchange = self.exchange
        self.exchange = None
        self.head_pending = False
        self.head_parts.clear()
        self.close()
        if exchange is not None:
            exchange.finish(reason)

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        if self in self.pool.idle:
            self.pool.idle.remove(self)
        self.pool.open.discard(self)
        self.pool.connections -= 1
        if self.exchange is not None:
            # Responses framed by closing the connection are not supported: every
            # server we measure frames with Content-Length or chunks.
            self.fail(f"connection reset: {exc or 'closed by peer'}")


class Pool:
    """Keep-alive connections to one host:port, opened on demand."""

    def __init__(
        self, host: str, port: int, tls: ssl.SSLContext | None = None, address: str | None = None
    ) -> None:
        self.loop = asyncio.get_running_loop()
        self.host = host
        self.port = port
        # The address every connection goes to, checked once (`target_address`); None: by name.
        self.address = address
        self.tls = tls  # https targets: TLS on every connection (see tls.py)
        self.idle: list[Connection] = []
        self.open: set[Connection] = set()  # swept for timeouts: no per-request bookkeeping
        self.connections = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.closed = False
        self.refused = False  # a connect was refused: nobody listens; `spread.py` routes around
        self._sweeper = self.loop.call_later(0.5, self._sweep)

    def send(self, payload: bytes, exchange: Exchange, fresh: bool = False) -> None:
        """Send on an idle connection, or on a new one (always new when `fresh`)."""
        if self.idle and not fresh:
            self.idle.pop().send(payload, exchange)
            return
        self.connections += 1
        self.loop.create_task(self._connect_and_send(payload, exchange))

    async def _connect_and_send(self, payload: bytes, exchange: Exchange) -> None:
        exchange.sent_at = _perf()
        conn = Connection(self)
        try:
            await asyncio.wait_for(
                self.loop.create_connection(
                    lambda: cast(asyncio.Protocol, conn),
                    self.address or self.host,
                    self.port,
                    ssl=self.tls,
                    # TLS still checks the certificate against the name, not the address.
                    server_hostname=self.host.strip("[]") if self.tls and self.address else None,
                ),
                exchange.timeout,
            )
        except (OSError, TimeoutError) as exc:  # ssl errors are OSErrors too
            self.connections -= 1
            if isinstance(exc, ConnectionRefusedError):
                self.refused = True
            exchange.finish(f"connect to {self.host}:{self.port} failed: {exc or 'timeout'}")
            return
        if self.closed:
            conn.close()
            exchange.finish("pool closed")
            return
        conn.send(payload, exchange)

    def _sweep(self) -> None:
        now = _perf()
        for conn in list(self.open):
            exchange = conn.exchange
            if exchange is not None and now - exchange.sent_at > exchange.timeout:
                conn.fail(f"timeout after {exchange.timeout:g}s")
        if not self.closed:
            self._sweeper = self.loop.call_later(0.5, self._sweep)

    def close(self) -> None:
        """Abort every connection; exchanges in flight fail as 'pool closed'."""
        self.closed = True
        self._sweeper.cancel()
        for conn in list(self.open):
            if conn.exchange is not None:
                conn.fail("pool closed")
        for conn in list(self.idle):
            conn.close()
        self.idle.clear()

    async def fetch(self, payload: bytes, exchange: Exchange | None = None) -> Exchange:
        """Send and wait: the convenience for workloads that are not rate-bound."""
        future: asyncio.Future[Exchange] = self.loop.create_future()
        ex = exchange or Exchange(keep_body=True, keep_headers=True)

        def done(finished: Exchange) -> None:
            if not future.done():
                future.set_result(finished)

        ex.callback = done
        self.send(payload, ex)
        return await future


def build_request(
    method: str,
    path: str,
    host: str,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> bytes:
    """The bytes of one HTTP/1.1 request (keep-alive, Content-Length framed); refused
    (`RequestRefusedError`) when a part could split the head (`request_head`)."""
    check_head(method, path, host, headers or {})
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + (body or b"")


def upstream_seconds(value: bytes | None) -> float | None:
    """The `upstream;dur=<ms>` metric of a Server-Timing header, in seconds."""
    if not value:
        return None
    for metric in value.split(b","):
        parts = [p.strip() for p in metric.split(b";")]
        if parts[0] != b"upstream":
            continue
        for param in parts[1:]:
            if param.startswith(b"dur="):
                try:
                    return float(param[4:]) / 1000.0
                except ValueError:
                    return None
    return None


def split_url(url: str) -> tuple[str, int, str]:
    """(host, port, base path) of an http:// or https:// URL (`tls.py` tells which)."""
    parsed: Any = httptools.parse_url(url.encode())
    if parsed.schema not in (b"http", b"https"):
        raise ValueError(f"{url}: only http:// and https:// targets are supported")
    host = parsed.host.decode()
    port = parsed.port or (443 if parsed.schema == b"https" else 80)
    path = (parsed.path or b"").decode().rstrip("/")
    return host, port, path
