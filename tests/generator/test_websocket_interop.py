"""The WebSocket client against the RFC and against a WebSocket server nobody here wrote.

Every hand-written peer in this repository shares the client's idea of the
handshake, so a shared mistake (a wrong GUID) would pass them all. The RFC's
own example and aiohttp's server (a kopf dependency) are independent judges.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web

from plimsoll.api.trial import TrialState
from plimsoll_generator.websocket import accept_for
from tests.generator.helpers import request, run


def test_the_accept_key_is_the_rfc_6455_example() -> None:
    # RFC 6455, section 1.3: this key must be answered with this accept value.
    assert accept_for(b"dGhlIHNhbXBsZSBub25jZQ==") == b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="


@pytest.fixture
async def aiohttp_ws_server() -> AsyncIterator[tuple[str, list[int]]]:
    opened: list[int] = []

    async def handler(http_request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=0.1)  # aiohttp pings; the client must pong
        await ws.prepare(http_request)
        opened.append(1)
        async for _ in ws:
            pass
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}", opened
    await runner.cleanup()


async def test_streams_hold_against_aiohttps_server(
    aiohttp_ws_server: tuple[str, list[int]],
) -> None:
    url, opened = aiohttp_ws_server
    workload = {
        "mix": [{"name": "hello", "path": "/"}],
        "streams": {"count": 6, "kind": "websocket", "path": "/ws"},
    }
    result = await run(request(url, workload, level=0, duration=1))
    assert result.state is TrialState.DONE, result.errors
    assert (result.streams.opened, result.streams.held_at_end) == (6, 6), result.errors
    assert result.streams.failed_to_open == 0
    # aiohttp closes a connection whose heartbeat ping goes unanswered: still held
    # after ten heartbeats means every ping got its pong.
    assert result.streams.dropped == 0
    assert sum(opened) == 6


async def test_aiohttps_client_accepts_the_example_gateways_handshake(gateway: str) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(f"{gateway}/ws", autoping=False) as ws,
    ):
        # The gateway pings an idle WebSocket every KEEP_ALIVE_SECONDS (0.1 s here).
        message = await asyncio.wait_for(ws.receive(), timeout=5)
        assert not ws.closed
        assert message.type is aiohttp.WSMsgType.PING
