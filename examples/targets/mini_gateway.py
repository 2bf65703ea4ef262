"""A small MCP gateway: the quickstart's target, whose ceiling comes from what it really does.

Like the gateways the seeds measure, it sits between MCP clients and an
upstream MCP server (`UPSTREAM_URL`, the mock in a capacity test):

- each client session holds one SSE stream (`GET /mcp`) for server
  notifications; the gateway keeps per-stream state, including a replay ring
  buffer (`STREAM_BUFFER_KIB`, default 256) so a reconnecting client can resume
  from its Last-Event-ID: this is what costs memory per connected user;
- `tools/list` answers from a tool catalogue fetched from the upstream;
- `tools/call` is forwarded to the upstream and the answer relayed, with an
  audit record and a copy of the event in the session's replay buffer: this is
  what costs CPU per call;
- every relayed call writes a usage row (client, session, tool, bytes, time,
  outcome) to the store the env names (`usage_store.py`): an embedded SQLite
  file (`USAGE_STORE=sqlite`), PostgreSQL (`GATEWAY_DATABASE_URL`), or none
  (the default, the quickstart); `GET /dashboard` reads the client's usage
  summary back, over the history the setup step seeded (`usage_seed.py`);
- `X-Forwarded-For` names the client (`GET /whoami` echoes it), `GET /` is a
  small status page, `GET /healthz` the readiness probe;
- `GET /ws` holds a WebSocket with the same replay buffer as a stream, so the
  streams probe's `mixed` kind can hold half of its streams as WebSockets;
- clients of the stateless MCP revision (2026-07-28) need no session: they ask
  `server/discover` instead of `initialize`, and a `subscriptions/listen` POST
  holds the same stream (and replay buffer) a GET does, so the two revisions
  can be compared on one gateway.

Run: `PORT=8080 UPSTREAM_URL=http://127.0.0.1:8765 python mini_gateway.py`.
Standard library only, but for psycopg when the store is PostgreSQL.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field

from tinyhttp import Request, Response, Upstream, encode_head, hold_websocket, serve
from usage_store import NoStore, Usage, UsageStore, open_store

BUFFER_BYTES = int(os.environ.get("STREAM_BUFFER_KIB", "256")) * 1024
KEEP_ALIVE = float(os.environ.get("KEEP_ALIVE_SECONDS", "10"))
UPSTREAM = urllib.parse.urlsplit(os.environ.get("UPSTREAM_URL", "http://127.0.0.1:8765"))
UPSTREAM_PATH = os.environ.get("UPSTREAM_MCP_PATH", "/mcp")
PROTOCOL = "2025-06-18"
STATELESS = "2026-07-28"


@dataclass
class Session:
    id: str
    client_ip: str
    created: float = field(default_factory=time.time)
    streams: int = 0
    event_id: int = 0
    replay: bytearray | None = None  # allocated while a stream is held
    replay_at: int = 0
    audit: collections.deque[dict[str, object]] = field(
        default_factory=lambda: collections.deque(maxlen=64)
    )

    def remember(self, event: bytes) -> None:
        """Copy the event into the replay ring, wrapping at its end."""
        if self.replay is None or not event:
            return
        event = event[-len(self.replay) :]
        end = self.replay_at + len(event)
        if end <= len(self.replay):
            self.replay[self.replay_at : end] = event
        else:
            split = len(self.replay) - self.replay_at
            self.replay[self.replay_at :] = event[:split]
            self.replay[: len(event) - split] = event[split:]
        self.replay_at = end % len(self.replay)


class Gateway:
    def __init__(self, store: UsageStore | None = None) -> None:
        self.store = store if store is not None else NoStore()
        self.sessions: dict[str, Session] = {}
        self.upstream = Upstream(UPSTREAM.hostname or "127.0.0.1", UPSTREAM.port or 80)
        self.upstream_session: str | None = None
        self.tools: list[dict[str, object]] = []
        self.tools_at = 0.0
        self.ids = itertools.count(1)
        self.calls = 0

    def _expire(self) -> None:
        """Forget sessions with no stream that were opened long ago (clients that vanished)."""
        if len(self.sessions) % 64:
            return
        cutoff = time.time() - 120
        for key in [k for k, s in self.sessions.items() if not s.streams and s.created < cutoff]:
            del self.sessions[key]

    async def _upstream_rpc(self, method: str, params: dict[str, object]) -> dict[str, object]:
        payload = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
        }
        if self.upstream_session:
            headers["Mcp-Session-Id"] = self.upstream_session
        status, response_headers, body = await self.upstream.request(
            "POST", UPSTREAM_PATH, json.dumps(payload).encode(), headers
        )
        if "mcp-session-id" in response_headers:
            self.upstream_session = response_headers["mcp-session-id"]
        if status >= 400:
            raise ConnectionError(f"upstream answered {status}")
        if response_headers.get("content-type", "").startswith("text/event-stream"):
            data = [
                line[5:].strip() for line in body.decode().splitlines() if line.startswith("data:")
            ]
            body = data[-1].encode() if data else b"{}"
        return dict(json.loads(body))

    async def catalogue(self) -> list[dict[str, object]]:
        if not self.tools or time.monotonic() - self.tools_at > 30:
            if self.upstream_session is None:
                await self._upstream_rpc(
                    "initialize",
                    {
                        "protocolVersion": PROTOCOL,
                        "capabilities": {},
                        "clientInfo": {"name": "mini-gateway", "version": "1"},
                    },
                )
            answer = await self._upstream_rpc("tools/list", {})
            result = answer.get("result", {})
            self.tools = list(result.get("tools", [])) if isinstance(result, dict) else []
            self.tools_at = time.monotonic()
        return self.tools

    async def rpc(self, request: Request) -> Response:
        try:
            message = json.loads(request.body)
        except ValueError:
            return Response(400, b'{"error":"not JSON"}')
        method, rpc_id = message.get("method", ""), message.get("id")
        session_id = request.headers.get("mcp-session-id")
        if method == "initialize":
            self._expire()
            created = Session(uuid.uuid4().hex, request.client_ip)
            self.sessions[created.id] = created
            result: object = {
                "protocolVersion": message.get("params", {}).get("protocolVersion", PROTOCOL),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "mini-gateway", "version": "1"},
            }
            return self._answer(rpc_id, result, {"Mcp-Session-Id": created.id})
        session = self.sessions.get(session_id or "")
        if session_id and session is None:
            return Response(404, b'{"error":"unknown session"}')
        if rpc_id is None:  # a notification
            return Response(202, b"")
        try:
            if method == "tools/list":
                result = {"tools": await self.catalogue()}
            elif method == "tools/call":
                result = await self._call(session, request.client_ip, message.get("params", {}))
            elif method == "ping":
                result = {}
            elif method == "server/discover":  # the stateless revision's handshake
                result = {
                    "supportedVersions": [PROTOCOL, STATELESS],
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "mini-gateway", "version": "1"},
                }
            else:
                return self._error(rpc_id, -32601, f"unknown method {method}")
        except (ConnectionError, OSError, ValueError) as exc:
            return self._error(rpc_id, -32603, f"upstream failed: {exc}", status=502)
        return self._answer(rpc_id, result)

    async def _call(
        self, session: Session | None, client_ip: str, params: dict[str, object]
    ) -> object:
        await self.catalogue()
        names = {tool.get("name") for tool in self.tools}
        if params.get("name") not in names:
            raise ValueError(f"no tool {params.get('name')!r}")
        started = time.monotonic()
        answer = await self._upstream_rpc("tools/call", params)
        self.calls += 1
        result = answer.get("result", answer.get("error"))
        event = json.dumps({"tool": params.get("name"), "result": result}).encode()
        ok = "result" in answer and not (isinstance(result, dict) and result.get("isError"))
        usage = Usage(
            user_ip=client_ip,
            session=session.id if session is not None else "",
            tool=str(params.get("name")),
            bytes=len(event),
            ms=(time.monotonic() - started) * 1000,
            ok=ok,
            at=time.time(),
        )
        await self.store.record(usage)
        if session is not None:
            session.audit.append({"tool": usage.tool, "at": usage.at, "bytes": usage.bytes})
            session.event_id += 1
            session.remember(event)
        return result

    def _answer(
        self, rpc_id: object, result: object, headers: dict[str, str] | None = None
    ) -> Response:
        body = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": result}).encode()
        return Response(200, body, headers or {})

    def _error(self, rpc_id: object, code: int, text: str, status: int = 200) -> Response:
        body = {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": text}}
        return Response(status, json.dumps(body).encode())

    async def stream(self, request: Request) -> Response | None:
        found = self.sessions.get(request.headers.get("mcp-session-id", ""))
        session = found if found is not None else Session(uuid.uuid4().hex, request.client_ip)
        if found is None:
            self.sessions[session.id] = session  # a stateless client's listen
        session.streams += 1
        # Written, not just reserved: a zeroed bytearray would stay unbacked by RAM.
        session.replay = bytearray(b"\x01") * BUFFER_BYTES
        writer = request.writer
        head = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Mcp-Session-Id": session.id,
        }
        try:
            writer.write(encode_head(200, head) + b": connected\n\n")
            await writer.drain()
            while True:
                # A read that ends means the client hung up; a timeout means time to ping.
                try:
                    if not await asyncio.wait_for(request.reader.read(1024), KEEP_ALIVE):
                        break
                except TimeoutError:
                    writer.write(b": keep-alive\n\n")
                    await writer.drain()
        except ConnectionError:
            pass
        finally:
            session.streams -= 1
            if session.streams == 0:
                session.replay = None
        return None

    async def handle(self, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return Response(200, b'{"ok":true}')
        if path == "/whoami":
            return Response(200, json.dumps({"ip": request.client_ip}).encode())
        if path == "/":
            held = sum(1 for s in self.sessions.values() if s.streams)
            counts = f"{len(self.sessions)} sessions, {held} streams, {self.calls} calls"
            page = f"<h1>mini-gateway</h1><p>{counts}</p>"
            return Response(200, page.encode(), content_type="text/html")
        if path == "/dashboard":  # the page view: this client's usage, from the store
            calls, sent = await self.store.summary(request.client_ip)
            page = f"<h1>usage</h1><p>{calls} calls, {sent} bytes ({self.store.name})</p>"
            return Response(200, page.encode(), content_type="text/html")
        if path == "/mcp" and request.method == "POST":
            if request.headers.get("mcp-method") == "subscriptions/listen":
                return await self.stream(request)  # the stateless revision's held stream
            return await self.rpc(request)
        if path == "/mcp" and request.method == "GET":
            return await self.stream(request)
        if path == "/ws" and request.headers.get("upgrade", "").lower() == "websocket":
            replay = bytearray(b"\x01") * BUFFER_BYTES  # held, like a stream's replay ring
            await hold_websocket(request, KEEP_ALIVE)
            del replay
            return None
        if path == "/mcp" and request.method == "DELETE":
            self.sessions.pop(request.headers.get("mcp-session-id", ""), None)
            return Response(200, b"")
        return Response(404, b'{"error":"not found"}')


async def main() -> None:
    store = await open_store()
    try:
        await serve(Gateway(store).handle)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
