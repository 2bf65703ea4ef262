"""A small LLM proxy: the LLM-proxy seed's target, a filter pipeline in front of a provider.

Like the proxy the seed benchmarks, every `POST /v1/chat/completions` (OpenAI
format, streamed or not; the client resends the whole conversation each turn,
so requests grow with the context) goes through:

- api_key_auth: the client's `Authorization: Bearer <key>` is checked by an HTTP
  callout to a key service (`AUTH_URL`, `POST /v1/keys/verify`) before anything
  else; a non-200 answer is a 401 to the client;
- identity_header_guard: the client's `X-User-*` headers are kept for metering
  and stripped before the provider sees the request;
- credential_injection: the client's key is swapped for the provider's
  (`PROVIDER_KEY`);
- the relay: the request goes to the provider (`PROVIDER_BASE_URL`, the LLM
  mock in a capacity test) with `stream_options.include_usage`, and the answer is
  relayed chunk by chunk as it arrives, with the provider's own `Server-Timing`
  forwarded, so a client can subtract the provider's time and see the proxy's;
- token_count and external_metering: the usage in the provider's last event is
  tallied per key (`GET /usage`) and reported to a metering service
  (`METERING_URL`, `POST /v1/usage`, a CloudEvent) after the answer ends, off the
  request's path; at most `METERING_PENDING` (default 1000) reports wait, beyond
  that they are dropped and counted, so a slow sink cannot grow the proxy forever.

A streamed answer ends its client connection (tinyhttp's streams own theirs);
`GET /ready` is the readiness probe. Standard library only.

Run: `PORT=8080 PROVIDER_BASE_URL=http://127.0.0.1:8765 AUTH_URL=http://127.0.0.1:8766
METERING_URL=http://127.0.0.1:8767 python llm_proxy.py`.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.parse
import uuid
from collections import defaultdict

from tinyhttp import Request, Response, Upstream, encode_head, serve


def _upstream(variable: str, default: str) -> Upstream:
    url = urllib.parse.urlsplit(os.environ.get(variable, default))
    return Upstream(url.hostname or "127.0.0.1", url.port or 80, size=256)


PROVIDER = urllib.parse.urlsplit(os.environ.get("PROVIDER_BASE_URL", "http://127.0.0.1:8765"))
PROVIDER_KEY = os.environ.get("PROVIDER_KEY", "sk-provider")
AUTH = _upstream("AUTH_URL", "http://127.0.0.1:8766")
METERING = _upstream("METERING_URL", "http://127.0.0.1:8767")
METERING_PENDING = int(os.environ.get("METERING_PENDING", "1000"))
COMPLETIONS = "/v1/chat/completions"

usage: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # key: requests, in, out
metering = {"sent": 0, "failed": 0, "dropped": 0}
pending: set[asyncio.Task[None]] = set()
idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []  # provider connections


def _json(status: int, body: object) -> Response:
    return Response(status, json.dumps(body).encode())


def _error(status: int, message: str) -> Response:
    return _json(status, {"error": {"message": message, "type": "proxy_error"}})


async def _report(key: str, identity: dict[str, str], tokens: tuple[int, int]) -> None:
    event = {
        "specversion": "1.0",
        "type": "dev.plimsoll.example.llm.usage",
        "source": "llm-proxy",
        "id": uuid.uuid4().hex,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "data": {"key": key, **identity, "input_tokens": tokens[0], "output_tokens": tokens[1]},
    }
    try:
        status, _, _ = await METERING.request(
            "POST", "/v1/usage", json.dumps(event).encode(), {"Content-Type": "application/json"}
        )
        metering["sent" if status < 300 else "failed"] += 1
    except (ConnectionError, OSError):
        metering["failed"] += 1


def _meter(key: str, identity: dict[str, str], tokens: tuple[int, int]) -> None:
    tally = usage[key]
    tally[0] += 1
    tally[1] += tokens[0]
    tally[2] += tokens[1]
    if len(pending) >= METERING_PENDING:
        metering["dropped"] += 1
        return
    task = asyncio.create_task(_report(key, identity, tokens))
    pending.add(task)
    task.add_done_callback(pending.discard)


def _usage_of(event: bytes) -> tuple[int, int] | None:
    """Input and output tokens of an SSE event that carries usage (the last one does)."""
    for line in event.split(b"\n"):
        if line.startswith(b"data: {") and b'"usage"' in line:
            found = json.loads(line[6:]).get("usage") or {}
            return int(found.get("prompt_tokens", 0)), int(found.get("completion_tokens", 0))
    return None


async def _provider(body: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A provider connection with the request sent on it (a pooled one when idle)."""
    reader, writer = (
        idle.pop()
        if idle
        else await asyncio.open_connection(PROVIDER.hostname, PROVIDER.port or 80)
    )
    head = [
        f"POST {PROVIDER.path.rstrip('/')}{COMPLETIONS} HTTP/1.1",
        f"Host: {PROVIDER.netloc}",
        "Content-Type: application/json",
        f"Authorization: Bearer {PROVIDER_KEY}",
        f"Content-Length: {len(body)}",
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    return reader, writer


async def _relay_stream(
    request: Request, reader: asyncio.StreamReader, headers: dict[str, str]
) -> tuple[int, int]:
    """Relay a chunked SSE answer to the client as it comes; the usage it reported."""
    out = request.writer
    head = {
        "Content-Type": headers.get("content-type", "text/event-stream"),
        "Cache-Control": "no-cache",
        "Transfer-Encoding": "chunked",
        "Connection": "close",
    }
    if "server-timing" in headers:
        head["Server-Timing"] = headers["server-timing"]  # the provider's time, not ours
    out.write(encode_head(200, head))
    tokens = (0, 0)
    pending_event = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";")[0].strip(), 16)
        data = await reader.readexactly(size + 2)  # the chunk and its CRLF
        out.write(size_line + data)
        await out.drain()
        if size == 0:
            return tokens
        # Events may straddle chunks: keep the unfinished tail (bounded by one event).
        *events, pending_event = (pending_event + data[:-2]).split(b"\n\n")
        pending_event = pending_event[-65536:]
        for event in events:
            found = _usage_of(event)
            if found is not None:
                tokens = found


async def _completions(request: Request) -> Response | None:
    authorization = request.headers.get("authorization", "")
    key = authorization.removeprefix("Bearer ").strip()
    if not authorization.startswith("Bearer ") or not key:
        return _error(401, "send Authorization: Bearer <key>")
    try:
        verdict, _, _ = await AUTH.request(
            "POST", "/v1/keys/verify", json.dumps({"key": key}).encode(), {}
        )
    except (ConnectionError, OSError) as exc:
        return _error(502, f"key service unreachable: {exc}")
    if verdict != 200:
        return _error(401, f"key refused by the key service ({verdict})")
    try:
        payload = json.loads(request.body)
        if not isinstance(payload.get("messages"), list):
            raise ValueError("messages must be a list")
    except (ValueError, AttributeError) as exc:
        return _error(400, f"body: {exc}")
    identity = {k: v for k, v in request.headers.items() if k.startswith("x-user-")}
    streamed = bool(payload.get("stream"))
    if streamed:
        payload["stream_options"] = {"include_usage": True}
    try:
        reader, writer = await _provider(json.dumps(payload).encode())
        message = await read_head(reader)
    except (ConnectionError, OSError, asyncio.IncompleteReadError) as exc:
        return _error(502, f"provider unreachable: {exc}")
    status, headers = message
    if streamed and status == 200 and headers.get("transfer-encoding") == "chunked":
        tokens = await _relay_stream(request, reader, headers)
        idle.append((reader, writer))
        _meter(key, identity, tokens)
        return None
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    idle.append((reader, writer))
    if status == 200:
        found = json.loads(body).get("usage") or {}
        _meter(key, identity, (found.get("prompt_tokens", 0), found.get("completion_tokens", 0)))
    timing = {"Server-Timing": headers["server-timing"]} if "server-timing" in headers else {}
    return Response(status, body, timing, headers.get("content-type", "application/json"))


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """Status and lower-cased headers of the provider's answer, leaving its body unread."""
    lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), headers


async def handle(request: Request) -> Response | None:
    path = request.path.split("?", 1)[0]
    if request.method == "POST" and path == COMPLETIONS:
        return await _completions(request)
    if request.method == "GET" and path in ("/ready", "/healthz"):
        return Response(200, b"ok", content_type="text/plain")
    if request.method == "GET" and path == "/usage":
        keys = {k: dict(zip(("requests", "in", "out"), v, strict=True)) for k, v in usage.items()}
        return _json(200, {"keys": keys, "metering": metering, "pending": len(pending)})
    return _error(404, f"no route {request.method} {path}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
