"""Plain HTTP routes from `Upstream.routes`, and the router that picks a handler.

The server builds one `Router` at start-up; every request goes through
`Router.dispatch`. Exact paths are a dict lookup on (method, path); routes
ending in `*` are prefixes, scanned in configuration order. Built-in paths
(`/healthz`, `/metrics`, the MCP path, the LLM paths) are registered first and
the configuration loader refuses routes that would shadow them.
"""

from __future__ import annotations

import random

from plimsoll.api.upstream import ErrorShape, Route, Upstream
from plimsoll_mock import wire
from plimsoll_mock.behaviour import Behaviour
from plimsoll_mock.connection import Connection, Handler
from plimsoll_mock.request import Request
from plimsoll_mock.state import State, render_metrics

HEALTHZ = b"/healthz"
METRICS = b"/metrics"


class PlainRoute:
    """A configured route: holds the call for a drawn latency, then answers."""

    __slots__ = ("behaviour", "echo", "name", "prepared", "same_body", "status")

    def __init__(self, route: Route, rng: random.Random) -> None:
        self.name = route.name
        self.status = route.status
        self.echo = route.echo
        self.behaviour = Behaviour(
            route.latency, route.errors, route.sizes, rng, route.timeout_after
        )
        # A route that answers every call alike (no latency, no errors, one size, no
        # echo) answers from one body prepared here: no draws per call. It is the
        # common stand-in upstream, and bench/mock.py's small-body route (0.3 us of
        # Python a call less, measured).
        latency = route.latency
        alike = latency.fixed == 0 and latency.jitter == 0 and not route.errors.fraction
        self.same_body = (
            wire.padded_json(route.sizes[0].bytes, self.name)
            if alike and len(route.sizes) == 1 and not route.echo
            else None
        )
        # ...and, up to 64 KiB, as a whole answer the connection writes without a call
        # here (`Connection.on_message_complete`); a HEAD, or a call queued behind a held
        # one, comes here and is answered from `same_body`, the same bytes.
        self.prepared: wire.Prepared | None = None
        if self.same_body is not None and len(self.same_body) <= 65536:
            self.prepared = wire.Prepared(
                self.name,
                self.status,
                wire.head_lead(self.status, wire.JSON),
                b"content-length: %d\r\n\r\n%s" % (len(self.same_body), self.same_body),
            )

    def answer(self, conn: Connection, req: Request) -> None:
        req.route = self.name
        if self.same_body is not None:
            conn.respond(req, self.status, self.same_body)
            return
        b = self.behaviour
        delay = b.latency()
        shape = b.fails()
        if shape is None:
            status = self.status
            if self.echo:
                body, ctype = req.body, req.header(b"content-type") or wire.OCTETS
            else:
                body, ctype = wire.padded_json(b.size(), self.name), wire.JSON
        elif shape is ErrorShape.TIMEOUT:
            conn.later(b.timeout_hold, conn.drop, req)
            return
        elif shape is ErrorShape.TOOL_ERROR:
            # A plain route has no tool result to flag: a 200 carrying an error object
            # is the closest thing to "succeeded at the transport, failed inside".
            status, body, ctype = 200, wire.dumps({"isError": True, "route": self.name}), wire.JSON
        else:
            status, ctype = b.error_status, wire.JSON
            body = wire.error_body(status, f"simulated error on route {self.name}")
        if delay <= 0:
            conn.respond(req, status, body, ctype)
        else:
            conn.later(delay, conn.respond, req, status, body, ctype)


def not_found(conn: Connection, req: Request) -> None:
    req.route = "not-found"
    message = f"no route for {req.method.decode()} {req.path.decode(errors='replace')}"
    conn.respond(req, 404, wire.error_body(404, message))


class Router:
    """Maps (method, path) to a handler."""

    def __init__(self, config: Upstream, state: State, rng: random.Random) -> None:
        self._state = state
        self.exact: dict[tuple[bytes, bytes], Handler] = {
            (b"GET", HEALTHZ): self._healthz,
            (b"GET", METRICS): self._metrics,
        }
        self.prefixes: list[tuple[bytes, bytes, Handler]] = []
        if config.mcp is not None:
            from plimsoll_mock.mcp import McpServer

            mcp = McpServer(config.mcp, state, rng)
            for method in (b"GET", b"POST", b"DELETE"):
                self.exact[(method, config.mcp.path.encode())] = mcp.answer
        if config.llm is not None:
            from plimsoll_mock.llm import LlmServer

            llm = LlmServer(config.llm, rng)
            self.exact[(b"POST", b"/v1/chat/completions")] = llm.openai
            self.exact[(b"POST", b"/v1/messages")] = llm.anthropic
        # Exact routes whose whole answer is prepared: the connection answers these itself.
        self.prepared: dict[tuple[bytes, bytes], wire.Prepared] = {}
        for route in config.routes:
            plain = PlainRoute(route, rng)
            method, path = route.method.encode(), route.path.encode()
            if path.endswith(b"*"):
                self.prefixes.append((method, path[:-1], plain.answer))
            else:
                self.exact[(method, path)] = plain.answer
                if plain.prepared is not None and method != b"HEAD":
                    self.prepared[(method, path)] = plain.prepared

    def dispatch(self, conn: Connection, req: Request) -> None:
        handler = self.exact.get((req.method, req.path))
        if handler is None:
            handler = self._slow_match(req)
        handler(conn, req)

    def _slow_match(self, req: Request) -> Handler:
        method = b"GET" if req.method == b"HEAD" else req.method
        handler = self.exact.get((method, req.path))
        if handler is not None:
            return handler
        for prefix_method, prefix, prefix_handler in self.prefixes:
            if prefix_method == method and req.path.startswith(prefix):
                return prefix_handler
        return not_found

    def _healthz(self, conn: Connection, req: Request) -> None:
        req.route = "healthz"
        if self._state.shutting_down:
            conn.respond(req, 503, b'{"status":"shutting down"}')
        else:
            conn.respond(req, 200, b'{"status":"ok"}')

    def _metrics(self, conn: Connection, req: Request) -> None:
        req.route = "metrics"
        conn.respond(req, 200, render_metrics(self._state), wire.PROMETHEUS)
