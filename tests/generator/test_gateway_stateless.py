"""The quickstart gateway speaks the stateless MCP revision too, as the generator sends it:
`server/discover` instead of the handshake, and a `subscriptions/listen` POST that holds
the notifications stream. This is what lets `examples/mcp-revisions-compare.yaml` compare
the two revisions on one gateway."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

from plimsoll_generator.mcp import STATELESS, McpDialect


async def _exchange(url: str, raw: bytes, read: int = 4096) -> bytes:
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(raw)
        await writer.drain()
        return await asyncio.wait_for(reader.read(read), 5)
    finally:
        writer.close()


async def test_discover_answers_without_a_session(gateway: str) -> None:
    dialect = McpDialect(STATELESS, urlsplit(gateway).netloc, "/mcp")
    raw, rpc_id = dialect.initialize(None)
    answer = await _exchange(gateway, raw)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    message = json.loads(body)
    assert message["id"] == rpc_id
    assert STATELESS in message["result"]["supportedVersions"]
    assert b"mcp-session-id" not in head.lower()  # the stateless revision has no session


async def test_listen_holds_a_stream_with_keep_alives(gateway: str) -> None:
    dialect = McpDialect(STATELESS, urlsplit(gateway).netloc, "/mcp")
    parts = urlsplit(gateway)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(dialect.stream(None, None))
        await writer.drain()
        seen = b""
        while seen.count(b"\n\n") < 3:  # the opening comment, then pings every 0.1 s
            seen += await asyncio.wait_for(reader.read(1024), 5)
    finally:
        writer.close()
    assert seen.startswith(b"HTTP/1.1 200")
    assert b"text/event-stream" in seen
