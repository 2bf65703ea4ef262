"""HTTP/1.1 bytes the mock writes: status lines, header blocks, chunk framing, bodies.

Called by `connection.Connection` for every response, so everything that can be
computed once is: status lines per code, header blocks per content type, padded
bodies per size. A response then costs one `%` format for the varying headers
(content length, Server-Timing) and one `write`.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, NamedTuple

from plimsoll.api.upstream import SERVER_TIMING_METRIC

JSON = b"application/json"
SSE = b"text/event-stream"
TEXT = b"text/plain; charset=utf-8"
OCTETS = b"application/octet-stream"
PROMETHEUS = b"text/plain; version=0.0.4; charset=utf-8"

_STATUS_LINES: dict[int, bytes] = {}


def status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Status"
        line = b"HTTP/1.1 %d %s\r\n" % (status, reason.encode())
        _STATUS_LINES[status] = line
    return line


TIMING_PREFIX = b"server-timing: " + SERVER_TIMING_METRIC.encode() + b";dur="


def head_lead(status: int, ctype: bytes) -> bytes:
    """A response head up to its Server-Timing value: the part that depends only on the
    status and the content type (`Connection` appends the time, then the rest)."""
    return b"%scontent-type: %s\r\n%s" % (status_line(status), ctype, TIMING_PREFIX)


class Prepared(NamedTuple):
    """A whole answer built at start-up for a route that answers every call alike
    (`routes.PlainRoute`): `Connection` writes `lead`, the time, the connection header
    and `rest` (content length, blank line, body), and counts it under (`route`, `status`)."""

    route: str
    status: int
    lead: bytes
    rest: bytes


CLOSE = b"connection: close\r\n"
KEEP_ALIVE = b"connection: keep-alive\r\n"
STREAM_HEADERS = (
    b"cache-control: no-cache, no-transform\r\n"
    b"x-accel-buffering: no\r\n"
    b"transfer-encoding: chunked\r\n"
)
CHUNK_END = b"0\r\n\r\n"
KEEP_ALIVE_EVENT = b": keep-alive\n\n"
KEEP_ALIVE_CHUNK = b"%x\r\n%s\r\n" % (len(KEEP_ALIVE_EVENT), KEEP_ALIVE_EVENT)


def chunk(data: bytes) -> bytes:
    """One chunk of a `transfer-encoding: chunked` body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def dumps(value: Any) -> bytes:
    """Compact JSON bytes (the wire never needs the spaces `json.dumps` adds)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def error_body(status: int, message: str) -> bytes:
    return dumps({"error": {"status": status, "message": message}})


_PAD_CACHE: dict[tuple[int, str], bytes] = {}


def padded_json(size: int, route: str) -> bytes:
    """A JSON object of exactly `size` bytes (at least its skeleton), cached per size.

    Sizes come from a configured mix, so the cache is bounded by the config; a 1 MB
    body is built once and shared by every response that draws it.
    """
    key = (size, route)
    body = _PAD_CACHE.get(key)
    if body is None:
        skeleton = b'{"route":%s,"pad":""}' % dumps(route)
        body = skeleton[:-2] + b"x" * max(0, size - len(skeleton)) + b'"}'
        _PAD_CACHE[key] = body
    return body


_TEXT_CACHE: dict[int, str] = {}


def filler_text(size: int) -> str:
    """A string of `size` characters (MCP tool results, whose JSON wraps it)."""
    text = _TEXT_CACHE.get(size)
    if text is None:
        words = "lorem ipsum dolor sit amet "
        text = (words * (size // len(words) + 1))[:size]
        _TEXT_CACHE[size] = text
    return text
