"""The streams probe: held SSE and WebSocket streams against the tiny target."""

from __future__ import annotations

from typing import Any

from plimsoll.api.trial import StreamHealth, TrialState
from plimsoll_generator.sse import StreamWatch
from plimsoll_generator.websocket import WsStream, accept_for
from tests.generator.helpers import request, run
from tests.generator.target import TargetState

MIX = [{"name": "hello", "path": "/"}]


def probe(kind: str, count: int, path: str = "/ws") -> dict[str, Any]:
    return {"mix": MIX, "streams": {"count": count, "kind": kind, "path": path}}


async def test_websockets_are_held_pinged_and_answered(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.keep_alive = 0.1
    result = await run(request(url, probe("websocket", 30), level=0, duration=1))
    assert result.state is TrialState.DONE, result.errors
    health = result.streams
    assert (health.opened, health.held_at_end, health.failed_to_open) == (30, 30, 0)
    assert health.dropped == 0
    assert health.missed_keep_alives == 0
    # A ping and a message every 0.1 s per stream; each ping got its pong.
    assert health.keep_alives >= 30 * 2 * 5
    assert state.ws_pongs >= 30 * 5
    assert result.bytes_in > 30 * 130 * 5
    assert state.paths == {"/ws": 30}


async def test_mixed_holds_half_of_each(target: tuple[TargetState, str]) -> None:
    state, url = target
    workload = probe("mixed", 10, path="/sse")
    workload["streams"]["wsPath"] = "/ws"
    result = await run(request(url, workload, level=0, duration=0.5))
    assert result.state is TrialState.DONE, result.errors
    assert (result.streams.opened, result.streams.held_at_end) == (10, 10)
    assert state.paths == {"/sse": 5, "/ws": 5}


async def test_a_websocket_on_a_path_without_one_fails_to_open(
    target: tuple[TargetState, str],
) -> None:
    state, url = target
    # /sse answers an event stream, not a 101: the WebSocket half fails, said as such.
    result = await run(request(url, probe("mixed", 10, path="/sse"), level=0, duration=0.5))
    assert result.streams.opened == 5
    assert result.streams.failed_to_open == 5
    assert state.paths == {"/sse": 10}


async def test_a_server_close_counts_as_dropped(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.keep_alive = 0.05
    state.ws_close_after = 0.2
    result = await run(request(url, probe("websocket", 8), level=0, duration=1))
    assert result.streams.opened == 8
    assert result.streams.dropped == 8
    assert result.streams.held_at_end == 0
    assert state.open_streams == 0


async def test_a_wrong_accept_key_fails_to_open(target: tuple[TargetState, str]) -> None:
    state, url = target
    state.ws_bad_accept = True
    result = await run(request(url, probe("websocket", 4), level=0, duration=0.5))
    assert result.streams.opened == 0
    assert result.streams.failed_to_open == 4
    assert result.errors == ["websocket /ws: a wrong Sec-WebSocket-Accept"]


async def test_a_refused_connection_fails_to_open() -> None:
    result = await run(request("http://127.0.0.1:9", probe("websocket", 3), level=0, duration=0.3))
    assert result.state is TrialState.DONE
    assert result.streams.failed_to_open == 3


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None: ...


def test_a_large_message_is_skipped_not_buffered() -> None:
    health = StreamHealth()
    stream = WsStream(StreamWatch(health, 1.0, lambda: True), "h:1", "/ws")
    transport = _Transport()
    stream.connection_made(transport)  # type: ignore[arg-type]
    key = transport.written[0].split(b"Sec-WebSocket-Key: ")[1].split(b"\r\n")[0]
    stream.data_received(
        b"HTTP/1.1 101 X\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: "
        + accept_for(key)
        + b"\r\n\r\n"
    )
    assert stream.opened
    size = 1 << 20
    frame = b"\x82\x7f" + size.to_bytes(8, "big") + b"\0" * size + b"\x89\x02hi"
    biggest = 0
    for at in range(0, len(frame), 1000):
        stream.data_received(frame[at : at + 1000])
        biggest = max(biggest, len(stream.buffer))
    assert biggest < 200
    assert stream.messages == 1
    assert health.keep_alives == 2  # the message and the ping
    pong = transport.written[-1]
    # A masked pong carrying the ping's payload.
    assert pong[0] == 0x8A
    assert pong[1] == 0x80 | 2
    assert bytes(b ^ pong[2 + i % 4] for i, b in enumerate(pong[6:])) == b"hi"
