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
        "keep_alive",
        "method",
        "path",
        "query",
        "route",
        "started",
    )

    def __init__(
        self,
        started: float,
        method: bytes,
        path: bytes,
        query: bytes,
        headers: list[tuple[bytes, bytes]],
        keep_alive: bool,
    ) -> None:
        self.started = started
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.keep_alive = keep_alive
        self.body = b""
        self.route = "unknown"
        self.counted = False

    def header(self, name: bytes) -> bytes | None:
        """The value of header `name` (lower case), or None."""
        for key, value in self.headers:
            if key == name:
                return value
        return None
