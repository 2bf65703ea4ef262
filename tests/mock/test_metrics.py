"""`/metrics`: Prometheus text that counts what the mock did."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.mock.conftest import base_url


def sample(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or (
            line.startswith(name + "{") and line.split(" ")[0] == name
        ):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in metrics")


async def test_metrics_count_requests_in_flight_and_cpu(mock_server: Any) -> None:
    running = await mock_server(
        {
            "routes": [
                {"name": "ok", "path": "/ok"},
                {"name": "held", "path": "/held", "latency": {"fixed": "10s"}},
            ]
        }
    )
    async with httpx.AsyncClient(base_url=base_url(running)) as client:
        for _ in range(3):
            await client.get("/ok")
        await client.get("/missing")
        held = asyncio.create_task(client.get("/held"))
        await asyncio.sleep(0.1)
        text = (await client.get("/metrics")).text
        held.cancel()
    assert 'plimsoll_mock_requests_total{route="ok",status="200"} 3' in text
    assert 'plimsoll_mock_requests_total{route="not-found",status="404"} 1' in text
    assert sample(text, "plimsoll_mock_in_flight") == 2  # the held call and /metrics itself
    assert sample(text, "plimsoll_mock_held_streams") == 0
    assert sample(text, "process_cpu_seconds_total") > 0
    assert "# TYPE process_cpu_seconds_total counter" in text
    for _ in range(100):  # the cancelled client hung up: its held call is released
        if running.state.in_flight == 0:
            break
        await asyncio.sleep(0.01)
    assert running.state.in_flight == 0
