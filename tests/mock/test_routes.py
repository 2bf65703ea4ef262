"""Plain routes over real HTTP: bodies, sizes, errors, echo, 404, Server-Timing, limits."""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from typing import Any

import httpx

from plimsoll.api.upstream import Route, Upstream
from plimsoll_mock import wire
from plimsoll_mock.connection import Connection
from plimsoll_mock.routes import PlainRoute, Router
from plimsoll_mock.state import State
from tests.mock.conftest import base_url

TIMING = re.compile(r"^upstream;dur=(\d+\.\d+)$")


def binomial_bounds(n: int, p: float, sigmas: float = 5.0) -> tuple[float, float]:
    spread = sigmas * math.sqrt(n * p * (1 - p))
    return n * p - spread, n * p + spread


def test_only_a_route_that_answers_every_call_alike_has_one_prepared_body() -> None:
    rng = random.Random(0)

    def route(**fields: Any) -> PlainRoute:
        return PlainRoute(Route.model_validate({"name": "r", "path": "/r", **fields}), rng)

    assert route(sizes=[{"bytes": "100"}]).same_body == wire.padded_json(100, "r")
    for varying in (
        {"latency": {"fixed": "1ms"}},
        {"latency": {"fixed": "2ms", "jitter": "1ms"}},
        {"latency": {"p50": "1ms", "p95": "5ms"}},
        {"errors": {"fraction": 0.1}},
        {"sizes": [{"bytes": "1"}, {"bytes": "2"}]},
        {"echo": True},
    ):
        assert route(**varying).same_body is None, varying


class _Captured:
    """A transport that keeps what the connection writes."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


async def test_a_prepared_answer_is_byte_for_byte_the_general_one() -> None:
    config = Upstream.model_validate(
        {
            "routes": [
                {"name": "r", "path": "/r", "status": 201, "sizes": [{"bytes": "300"}]},
                {"name": "slow", "path": "/slow", "latency": {"fixed": "1ms"}},
            ]
        }
    )
    state = State(config.max_in_flight)
    router = Router(config, state, random.Random(0))
    assert list(router.prepared) == [(b"GET", b"/r")]  # a held route is never prepared
    requests = (
        b"GET /r HTTP/1.1\r\nHost: x\r\n\r\nGET /r?q=1 HTTP/1.1\r\nHost: x\r\n\r\n",
        b"HEAD /r HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /r HTTP/1.0\r\n\r\n",
    )
    answers: dict[str, list[bytes]] = {}
    handled: dict[str, int] = {}
    for way, prepared in (("prepared", router.prepared), ("general", {})):
        answers[way], handled[way] = [], 0

        def dispatch(conn: Connection, req: Any, way: str = way) -> None:
            handled[way] += 1
            router.dispatch(conn, req)

        for request in requests:
            conn = Connection(state, dispatch, asyncio.get_running_loop(), prepared)
            captured = _Captured()
            conn.connection_made(captured)  # type: ignore[arg-type]
            conn.data_received(request)
            answers[way].append(re.sub(rb"dur=[0-9.]+", b"dur=T", captured.data))
    assert answers["prepared"] == answers["general"]
    assert handled == {"prepared": 1, "general": 4}  # only the HEAD went to a handler
    pipelined, head, http10 = answers["prepared"]
    body = wire.padded_json(300, "r")
    assert pipelined.startswith(b"HTTP/1.1 201 Created\r\n")
    assert pipelined.count(b"\r\n\r\n" + body) == 2
    assert head.endswith(b"content-length: 300\r\n\r\n")  # a HEAD gets no body
    assert b"connection: close" in http10
    assert state.requests[("r", 201)] == 8
    assert state.in_flight == 0


async def test_a_request_is_timed_from_the_chunk_that_brought_its_first_byte() -> None:
    # The mock has no on_message_begin: a request's start is when the chunk holding
    # its URL arrived, so a head split over two reads counts from the first.
    config = Upstream.model_validate({"routes": [{"name": "r", "path": "/r"}]})
    state = State(config.max_in_flight)
    router = Router(config, state, random.Random(0))
    conn = Connection(state, router.dispatch, asyncio.get_running_loop())
    captured = _Captured()
    conn.connection_made(captured)  # type: ignore[arg-type]
    conn.data_received(b"GET /r HTTP/1.1\r\n")
    await asyncio.sleep(0.05)
    conn.data_received(b"Host: x\r\n\r\nGET /r HTTP/1.1\r\nHost: x\r\n\r\n")
    durations = [float(d) for d in re.findall(rb"dur=([0-9.]+)", captured.data)]
    assert len(durations) == 2
    assert durations[0] >= 50.0  # from the first read
    assert durations[1] < 50.0  # the pipelined one came with the second read
    assert captured.data.count(b"connection: keep-alive\r\n") == 2  # as nginx says it


async def test_fixed_body_has_the_configured_size_and_server_timing(mock_server: Any) -> None:
    running = await mock_server(
        {"routes": [{"name": "small", "path": "/small", "sizes": [{"bytes": "100"}]}]}
    )
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        response = await client.get("/small")
    assert response.status_code == 200
    assert len(response.content) == 100
    assert response.json()["route"] == "small"
    assert TIMING.match(response.headers["server-timing"])


async def test_server_timing_matches_the_held_time(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {"name": "slow", "path": "/slow", "latency": {"fixed": "20ms", "jitter": "10ms"}}
            ]
        }
    )
    durations = []
    async with httpx.AsyncClient(base_url=base_url(running)) as client:

        async def one() -> None:
            started = time.perf_counter()
            response = await client.get("/slow")
            client_ms = (time.perf_counter() - started) * 1000
            match = TIMING.match(response.headers["server-timing"])
            assert match
            dur = float(match.group(1))
            durations.append(dur)
            assert dur <= client_ms  # the mock's own time is inside the client's

        for _ in range(15):
            await asyncio.gather(*(one() for _ in range(20)))
    assert len(durations) == 300
    # Held 10..30 ms by the timer (1 ms granularity), never less than drawn.
    assert min(durations) >= 9.0
    assert max(durations) < 30.0 + 25.0  # timer + scheduling slack on a shared host
    mean = sum(durations) / len(durations)
    assert 18.0 < mean < 28.0


async def test_error_fraction_is_within_statistical_bounds(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {"name": "flaky", "path": "/flaky", "errors": {"fraction": "20%", "status": 503}}
            ]
        }
    )
    n = 1000
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        statuses: list[int] = []
        for _ in range(n // 100):
            batch = await asyncio.gather(*(client.get("/flaky") for _ in range(100)))
            statuses += [r.status_code for r in batch]
    errors = statuses.count(503)
    low, high = binomial_bounds(n, 0.2)
    assert low < errors < high
    assert set(statuses) == {200, 503}


async def test_size_mix_follows_the_weights(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {
                    "name": "mix",
                    "path": "/mix",
                    "sizes": [{"bytes": "2Ki", "weight": 90}, {"bytes": "64Ki", "weight": 10}],
                }
            ]
        }
    )
    n = 600
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        sizes: list[int] = []
        for _ in range(n // 100):
            batch = await asyncio.gather(*(client.get("/mix") for _ in range(100)))
            sizes += [len(r.content) for r in batch]
    assert set(sizes) == {2048, 65536}
    low, high = binomial_bounds(n, 0.1)
    assert low < sizes.count(65536) < high


async def test_echo_prefix_and_head(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {"name": "echo", "method": "POST", "path": "/echo", "echo": True},
                {"name": "static", "path": "/static/*", "sizes": [{"bytes": "1Mi"}]},
            ]
        }
    )
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        echoed = await client.post(
            "/echo", content=b"hello mock", headers={"content-type": "text/plain"}
        )
        big = await client.get("/static/app.js")
        head = await client.head("/static/app.js")
    assert echoed.content == b"hello mock"
    assert echoed.headers["content-type"] == "text/plain"
    assert len(big.content) == 1024 * 1024
    assert head.status_code == 200
    assert head.headers["content-length"] == str(1024 * 1024)


async def test_unknown_path_is_a_json_404(mock_server: Any) -> None:
    running = await mock_server({"routes": []})
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        response = await client.get("/nowhere")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert "/nowhere" in response.json()["error"]["message"]
    assert "server-timing" in response.headers


async def test_timeout_shape_drops_the_call(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {
                    "name": "hang",
                    "path": "/hang",
                    "timeoutAfter": "100ms",
                    "errors": {"fraction": "100%", "shape": "timeout"},
                }
            ]
        }
    )
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        started = time.perf_counter()
        try:
            await client.get("/hang")
            raise AssertionError("the call should have been dropped")
        except httpx.RemoteProtocolError:
            pass
        assert time.perf_counter() - started >= 0.09
        metrics = (await client.get("/metrics")).text
    assert 'plimsoll_mock_requests_total{route="hang",status="dropped"} 1' in metrics


async def test_max_in_flight_answers_503(mock_server: Any) -> None:
    running = await mock_server(
        {
            "maxInFlight": 2,
            "routes": [{"name": "slow", "path": "/slow", "latency": {"fixed": "300ms"}}],
        }
    )
    limits = httpx.Limits(max_connections=10)
    async with httpx.AsyncClient(base_url=base_url(running), limits=limits) as client:
        responses = await asyncio.gather(*(client.get("/slow") for _ in range(5)))
        health = await client.get("/healthz")
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 200, 503, 503, 503]
    assert health.status_code == 200


async def test_pipelined_requests_are_answered_in_order_and_garbage_is_a_400(
    mock_server: Any,
) -> None:
    running = await mock_server(
        {
            "routes": [
                {
                    "name": "slow",
                    "path": "/slow",
                    "latency": {"fixed": "50ms"},
                    "sizes": [{"bytes": "40"}],
                },
                {"name": "fast", "path": "/fast", "sizes": [{"bytes": "41"}]},
            ]
        }
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
    writer.write(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\nGET /fast HTTP/1.1\r\nhost: x\r\n\r\n")
    lengths = []
    for _ in range(2):
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
        await reader.readexactly(length)
        lengths.append(length)
    assert lengths == [40, 41]
    writer.write(b"NOT HTTP AT ALL\r\n\r\n")
    reply = await reader.read()
    assert reply.startswith(b"HTTP/1.1 400")
    assert b"server-timing: upstream;dur=" in reply
    writer.close()
    await writer.wait_closed()
