"""The mock as an MCP server over streamable HTTP, in both protocol eras.

`routes.Router` sends every request on the MCP path here. Handshake era
(2024-11-05 .. 2025-11-25): `initialize` mints an `Mcp-Session-Id`, later
requests must carry it, `GET` opens the server-notification SSE stream and
`DELETE` ends the session. Stateless era (2026-07-28): each POST carries its
protocol version in a header and in `_meta`, `server/discover` replaces the
handshake and `subscriptions/listen` answers with a held SSE stream.

Sessions are opaque ids, not server state: the mock stays stateless, so several
replicas behind one Service answer any session's requests alike.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from plimsoll.api.upstream import Errors, ErrorShape, Mcp, McpTool
from plimsoll_mock import jsonrpc, wire
from plimsoll_mock.behaviour import Behaviour
from plimsoll_mock.connection import Connection
from plimsoll_mock.jsonrpc import JsonRpcError, Message
from plimsoll_mock.request import Request
from plimsoll_mock.state import State

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
SESSION = b"mcp-session-id"
KNOWN_METHODS = frozenset(
    {"initialize", "ping", "tools/list", "tools/call", "server/discover", "subscriptions/listen"}
)


class Tool:
    """One configured tool with its samplers and a cache of encoded results by size."""

    __slots__ = ("behaviour", "cache", "name")

    def __init__(self, tool: McpTool, rng: random.Random) -> None:
        self.name = tool.name
        self.behaviour = Behaviour(tool.latency, tool.errors, tool.sizes, rng)
        self.cache: dict[tuple[int, bool, bool], bytes] = {}

    def result(self, size: int, modern: bool, is_error: bool) -> bytes:
        key = (size, modern, is_error)
        encoded = self.cache.get(key)
        if encoded is None:
            text = f"simulated error from tool {self.name}" if is_error else wire.filler_text(size)
            value: dict[str, Any] = {
                "content": [{"type": "text", "text": text}],
                "isError": is_error,
            }
            if modern:
                value["resultType"] = "complete"
            encoded = self.cache[key] = wire.dumps(value)
        return encoded


class McpServer:
    def __init__(self, config: Mcp, state: State, rng: random.Random) -> None:
        self._state = state
        self._tools = {tool.name: Tool(tool, rng) for tool in config.tools}
        self._list_latency = Behaviour(config.list_latency, Errors(), None, rng).latency
        server_info = {"name": config.server_name, "version": "0.1.0"}
        tools = [
            {"name": t.name, "description": t.description, "inputSchema": {"type": "object"}}
            for t in config.tools
        ]
        capabilities = {"tools": {"listChanged": True}}
        self._list = {
            False: wire.dumps({"tools": tools}),
            True: wire.dumps(
                {
                    "tools": tools,
                    "resultType": "complete",
                    # No caching hints: a client re-lists as the modelled workload says.
                    "ttlMs": 0,
                    "cacheScope": "public",
                    "_meta": {META_SERVER_INFO: server_info},
                }
            ),
        }
        self._discover = wire.dumps(
            {
                "supportedVersions": list(MODERN_VERSIONS),
                "capabilities": capabilities,
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {META_SERVER_INFO: server_info},
            }
        )
        self._capabilities = capabilities
        self._server_info = server_info

    def answer(self, conn: Connection, req: Request) -> None:
        session = req.header(SESSION)
        extra = b"mcp-session-id: %s\r\n" % session if session else b""
        if req.method == b"GET":
            self._standalone_stream(conn, req, session, extra)
        elif req.method == b"DELETE":
            req.route = "mcp/delete"
            conn.respond(req, 200 if session else 400, b"" if session else _no_session().body())
        else:
            try:
                self._post(conn, req, session, extra)
            except JsonRpcError as exc:
                if req.route == "unknown":
                    req.route = "mcp/invalid"
                conn.respond(req, exc.http_status, exc.body(), wire.JSON, extra)

    def _standalone_stream(
        self, conn: Connection, req: Request, session: bytes | None, extra: bytes
    ) -> None:
        req.route = "mcp/stream"
        if b"text/event-stream" not in (req.header(b"accept") or b""):
            conn.respond(
                req, 406, wire.error_body(406, "the GET stream needs Accept: text/event-stream")
            )
        elif session is None:
            conn.respond(req, 400, _no_session().body())
        else:
            conn.start_stream(req, wire.SSE, extra)
            conn.hold_stream()

    def _post(self, conn: Connection, req: Request, session: bytes | None, extra: bytes) -> None:
        msg = jsonrpc.parse(req.body)
        method = msg.method
        if method is None or not msg.has_id:
            req.route = "mcp/notification"  # notifications/initialized, cancellations, answers
            conn.respond(req, 202, b"", wire.JSON, extra)
            return
        req.route = f"mcp/{method}" if method in KNOWN_METHODS else "mcp/unknown"
        version = _version(req, msg)
        modern = version in MODERN_VERSIONS or method == "server/discover"
        if modern and version not in MODERN_VERSIONS:
            raise JsonRpcError(
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {version!r}",
                msg.id,
                data={"supported": [*MODERN_VERSIONS, *HANDSHAKE_VERSIONS], "requested": version},
            )
        if not modern and method != "initialize" and session is None:
            raise JsonRpcError(
                jsonrpc.INVALID_REQUEST, _no_session().message, msg.id, http_status=400
            )
        if method == "tools/call":
            self._call(conn, req, msg, modern, extra)
        elif method == "tools/list":
            body = jsonrpc.result(msg.id_bytes, self._list[modern])
            delay = self._list_latency()
            if delay > 0:
                conn.later(delay, conn.respond, req, 200, body, wire.JSON, extra)
            else:
                conn.respond(req, 200, body, wire.JSON, extra)
        elif method == "initialize":
            self._initialize(conn, req, msg)
        elif method == "server/discover":
            conn.respond(req, 200, jsonrpc.result(msg.id_bytes, self._discover), wire.JSON, extra)
        elif method == "ping":
            empty = b'{"resultType":"complete"}' if modern else b"{}"
            conn.respond(req, 200, jsonrpc.result(msg.id_bytes, empty), wire.JSON, extra)
        elif method == "subscriptions/listen" and modern:
            self._listen(conn, req, msg)
        else:
            raise JsonRpcError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}", msg.id)

    def _initialize(self, conn: Connection, req: Request, msg: Message) -> None:
        requested = msg.params.get("protocolVersion")
        version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        result = {
            "protocolVersion": version,
            "capabilities": self._capabilities,
            "serverInfo": self._server_info,
        }
        session = b"mcp-session-id: %s\r\n" % uuid.uuid4().hex.encode()
        conn.respond(req, 200, jsonrpc.result(msg.id_bytes, wire.dumps(result)), wire.JSON, session)

    def _call(
        self, conn: Connection, req: Request, msg: Message, modern: bool, extra: bytes
    ) -> None:
        name = msg.params.get("name")
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise JsonRpcError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name!r}", msg.id)
        b = tool.behaviour
        delay = b.latency()
        shape = b.fails()
        if shape is ErrorShape.TIMEOUT:
            conn.later(b.timeout_hold, conn.drop, req)
            return
        if shape is ErrorShape.HTTP:
            status = b.error_status
            body = JsonRpcError(
                jsonrpc.INTERNAL_ERROR, f"simulated upstream error from tool {tool.name}", msg.id
            ).body()
        else:
            status = 200
            body = jsonrpc.result(msg.id_bytes, tool.result(b.size(), modern, shape is not None))
        if delay > 0:
            conn.later(delay, conn.respond, req, status, body, wire.JSON, extra)
        else:
            conn.respond(req, status, body, wire.JSON, extra)

    def _listen(self, conn: Connection, req: Request, msg: Message) -> None:
        if b"text/event-stream" not in (req.header(b"accept") or b""):
            raise JsonRpcError(
                jsonrpc.INVALID_REQUEST,
                "subscriptions/listen needs Accept: text/event-stream",
                msg.id,
                http_status=406,
            )
        requested = msg.params.get("notifications")
        ack = jsonrpc.notification(
            "notifications/subscriptions/acknowledged",
            {
                "_meta": {META_SUBSCRIPTION: msg.id},
                "notifications": requested if isinstance(requested, dict) else {},
            },
        )
        conn.start_stream(req, wire.SSE, first=jsonrpc.sse_event(ack))
        conn.hold_stream()


def _version(req: Request, msg: Message) -> str | None:
    header = req.header(b"mcp-protocol-version")
    meta = msg.params.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(META_VERSION), str):
        return str(meta[META_VERSION])
    return header.decode("latin-1") if header else None


def _no_session() -> JsonRpcError:
    return JsonRpcError(
        jsonrpc.INVALID_REQUEST,
        "Bad Request: missing Mcp-Session-Id (call initialize first)",
        http_status=400,
    )
