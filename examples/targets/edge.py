"""A small edge like the edge seed's: rate limits in Redis, sensors, streams, relayed traffic.

Every request but the streams passes the same stages a real edge's does:

1. **Rate limits in Redis** (`EDGE_VALKEY_ADDR`, host:port of Redis or Valkey):
   a site-wide per-client rule (`RATE_LIMIT` requests per minute) on every
   request, and a stricter one on `/login` (`LOGIN_LIMIT`). Each matched rule
   is one `INCR` of a per-minute key and an `EXPIRE NX` (2 minutes), all of a
   request's rules pipelined into one round trip.
   Over a limit: 429. The client is the first `X-Forwarded-For` address.
2. **Sensors** (`SENSORS`, default 0), shaped like the seed's: each inspects
   every request for `SENSOR_MS` of CPU; they alternate a per-client 404
   count (kept in this process's memory: no Redis call) and a per-client
   distinct-paths count over one of /api/items, /pages/home and /login (a
   `PFADD` and its `EXPIRE NX` in the same pipeline per request it matches).
3. **Relay** to the upstream service (`EDGE_UPSTREAM_URL`, the mock in a
   capacity test): method, path and body; the answer comes back with the
   upstream's `Server-Timing`, so a load generator computes what the edge added.

`GET /events` holds a stream instead: server-sent events, or a WebSocket when
the request asks to upgrade (the seed's streams are half of each). Each held
stream keeps `STREAM_KIB` of state (default 64: the seed measured 72 KiB per
stream), and above `MAX_STREAMS` the edge answers 503. `GET /healthz` is the
readiness probe; `GET /whoami` echoes the client address the rules use;
`GET /statz` counts requests, limited ones and streams.

Run: `PORT=8080 EDGE_UPSTREAM_URL=http://127.0.0.1:8765 EDGE_VALKEY_ADDR=127.0.0.1:6379
SENSORS=10 python edge.py`. Needs the `redis` client (the project's `examples` extra).
"""

from __future__ import annotations

import asyncio
import os
import time
import urllib.parse
from collections import Counter

from edge_sensors import burn
from tinyhttp import Request, Response, Upstream, encode_head, hold_websocket, serve

UPSTREAM = urllib.parse.urlsplit(os.environ.get("EDGE_UPSTREAM_URL", "http://127.0.0.1:8765"))
VALKEY = os.environ.get("EDGE_VALKEY_ADDR", "")
SENSORS = int(os.environ.get("SENSORS", "0"))
SENSOR_SECONDS = float(os.environ.get("SENSOR_MS", "0.05")) / 1000
RATE_LIMIT = int(os.environ.get("RATE_LIMIT", "600"))
LOGIN_LIMIT = int(os.environ.get("LOGIN_LIMIT", "30"))
STREAM_BYTES = int(os.environ.get("STREAM_KIB", "64")) * 1024
MAX_STREAMS = int(os.environ.get("MAX_STREAMS", "1000"))
VALKEY_POOL = int(os.environ.get("VALKEY_POOL", "32"))
KEEP_ALIVE = float(os.environ.get("KEEP_ALIVE_SECONDS", "10"))
WINDOW = 60  # seconds per rate-limit key
DISTINCT_PATHS = ["/api/items", "/pages/home", "/login"]


class Edge:
    def __init__(self) -> None:
        self.upstream = Upstream(UPSTREAM.hostname or "127.0.0.1", UPSTREAM.port or 80, size=64)
        self.redis = None
        self.redis_errors: type[Exception] = OSError
        if VALKEY:
            import redis.asyncio  # only with rate limits configured

            self.redis_errors = redis.RedisError
            host, _, port = VALKEY.rpartition(":")
            # A fixed pool that waits for a free connection, as an edge's client does:
            # under load, requests queue for it instead of opening connections unbounded.
            pool = redis.asyncio.BlockingConnectionPool(
                host=host or "127.0.0.1", port=int(port or 6379), max_connections=VALKEY_POOL
            )
            self.redis = redis.asyncio.Redis(connection_pool=pool)
        self.not_found: Counter[tuple[int, str]] = Counter()  # the in-memory 404 sensors
        self.requests = 0
        self.limited = 0
        self.streams = 0

    async def limits(self, client: str, path: str) -> bool:
        """The rules and distinct sensors of one request, in one round trip; False when
        the client is over a limit."""
        if self.redis is None:
            return True
        window = int(time.time()) // WINDOW
        pipe = self.redis.pipeline(transaction=False)
        rules = [(f"rl:{client}:{window}", RATE_LIMIT)]
        if path.startswith("/login"):
            rules.append((f"login:{client}:{window}", LOGIN_LIMIT))
        distinct = [
            f"distinct:{sensor}:{client}:{window}"
            for sensor in range(1, SENSORS, 2)  # the odd sensors count distinct paths
            if path.startswith(DISTINCT_PATHS[sensor // 2 % len(DISTINCT_PATHS)])
        ]
        # Each key with its expiry (NX: set once, by whichever request created the key),
        # so a client's first request in a window costs no second round trip.
        for key, _ in rules:
            pipe.incr(key)
            pipe.expire(key, 2 * WINDOW, nx=True)
        for key in distinct:
            pipe.pfadd(key, path)
            pipe.expire(key, 2 * WINDOW, nx=True)
        answers = await pipe.execute()
        counts = answers[0 : 2 * len(rules) : 2]
        return all(count <= limit for (_, limit), count in zip(rules, counts, strict=True))

    def inspect(self, client: str, status: int) -> None:
        """Every sensor's CPU on the request; the even ones count this client's 404s."""
        for sensor in range(SENSORS):
            burn(SENSOR_SECONDS)
            if sensor % 2 == 0 and status == 404:
                self.not_found[(sensor, client)] += 1

    async def relay(self, request: Request) -> Response:
        headers = {"Content-Type": request.headers.get("content-type", "application/json")}
        status, answer_headers, body = await self.upstream.request(
            request.method, request.path, request.body, headers
        )
        passed = {}
        if "server-timing" in answer_headers:  # the upstream's own time, for "added" latency
            passed["Server-Timing"] = answer_headers["server-timing"]
        kind = answer_headers.get("content-type", "application/octet-stream")
        return Response(status, body, passed, content_type=kind)

    async def hold_stream(self, request: Request) -> Response | None:
        if self.streams >= MAX_STREAMS:
            return Response(503, b'{"error":"too many streams"}', {"Retry-After": "1"})
        self.streams += 1
        state = bytearray(b"\x01") * STREAM_BYTES  # written, so it is really held in RAM
        try:
            if request.headers.get("upgrade", "").lower() == "websocket":
                await hold_websocket(request, KEEP_ALIVE)
                return None
            head = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
            request.writer.write(encode_head(200, head) + b": connected\n\n")
            await request.writer.drain()
            while True:  # a read that ends: the client left; a timeout: time to ping
                try:
                    if not await asyncio.wait_for(request.reader.read(1024), KEEP_ALIVE):
                        return None
                except TimeoutError:
                    request.writer.write(b": keep-alive\n\n")
                    await request.writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return None
        finally:
            del state
            self.streams -= 1

    async def handle(self, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return Response(200, b'{"ok":true}')
        if path == "/whoami":  # the client address as the rules see it (the generator checks)
            return Response(200, f'{{"ip":"{request.client_ip}"}}'.encode())
        if path == "/statz":
            stats = (
                f'{{"requests":{self.requests},"limited":{self.limited},"streams":{self.streams}}}'
            )
            return Response(200, stats.encode())
        if path == "/events":
            return await self.hold_stream(request)
        self.requests += 1
        client = request.client_ip
        try:
            allowed = await self.limits(client, path)
        except (OSError, self.redis_errors) as exc:  # fail closed: no limits, no service
            return Response(503, f'{{"error":"rate limiter: {exc}"}}'.encode())
        if not allowed:
            self.limited += 1
            self.inspect(client, 429)
            return Response(429, b'{"error":"rate limited"}', {"Retry-After": str(WINDOW)})
        try:
            response = await self.relay(request)
        except (ConnectionError, OSError) as exc:
            response = Response(502, f'{{"error":"upstream: {exc}"}}'.encode())
        self.inspect(client, response.status)
        return response


if __name__ == "__main__":
    asyncio.run(serve(Edge().handle))
