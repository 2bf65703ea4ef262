"""One parsed HTTP request, as the mock's connection hands it to the router.

`Connection` (connection.py) fills one per request from httptools' callbacks;
the router and the protocol handlers (routes.py, mcp.py, llm.py) read it and
set `route`, the metrics label. A plain class with `__slots__`, not a
dataclass or a pydantic model: one is built per request on the hot path.
"""

from __future__ import annotations


class Request:
    """A parsed request; `route` is the metrics label the router assigns."""

    __slots__ = (
        "body",
        "counted",
        "headers",
        "http10",
        "keep_alive",
        "method",
        "path",
        "query",
        "route",
        "started",
    )

    def __init__(self, started: float) -> None:
        self.started = started
        self.method = b""
        self.path = b""
        self.query = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.body = b""
        self.keep_alive = True
        self.http10 = False
        self.route = "unknown"
        self.counted = False

    def header(self, name: bytes) -> bytes | None:
        """The value of header `name` (lower case), or None."""
        for key, value in self.headers:
            if key == name:
                return value
        return None
