"""Streams held across trials (`/streams`): grown without reopening, closed on release."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from plimsoll.api.streams import StreamsHeld
from plimsoll.api.trial import CONTROL_TOKEN_HEADER
from plimsoll_generator.control import ControlProtocol, Trials
from plimsoll_generator.metrics import Metrics
from plimsoll_generator.workers import InProcess
from tests.generator.helpers import TEST_TOKEN
from tests.generator.target import TargetState


def hold(url: str, count: int) -> dict[str, Any]:
    return {
        "count": count,
        "targetUrl": url,
        "workload": {
            "mix": [{"name": "hello"}],
            "streams": {"count": 2, "kind": "sse", "path": "/sse"},
        },
    }


@pytest.fixture
async def control() -> AsyncIterator[tuple[httpx.AsyncClient, Trials]]:
    trials = Trials(InProcess(), Metrics(1))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ControlProtocol(trials, TEST_TOKEN), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    headers = {CONTROL_TOKEN_HEADER: TEST_TOKEN}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=30, headers=headers
    ) as client:
        yield client, trials
    trials.held.release()
    server.close()


async def until_open(client: httpx.AsyncClient, count: int) -> StreamsHeld:
    for _ in range(200):
        held = StreamsHeld.model_validate((await client.get("/streams")).json())
        if held.open >= count:
            return held
        await asyncio.sleep(0.02)
    raise AssertionError(f"{count} streams never opened: {held}")


async def test_growing_opens_only_the_difference_and_release_closes_all(
    control: tuple[httpx.AsyncClient, Trials], target: tuple[TargetState, str]
) -> None:
    client, _ = control
    state, url = target
    assert (await client.post("/streams", json=hold(url, 10))).status_code == 200
    await until_open(client, 10)
    assert (await client.post("/streams", json=hold(url, 25))).status_code == 200
    held = await until_open(client, 25)
    assert (held.requested, held.open, held.health.opened) == (25, 25, 25)
    assert state.paths == {"/sse": 25}  # the first 10 were kept, not reopened
    # Fewer than held: closed and opened afresh.
    await client.post("/streams", json=hold(url, 5))
    held = await until_open(client, 5)
    assert (held.requested, held.open) == (5, 5)
    assert state.paths == {"/sse": 30}
    released = StreamsHeld.model_validate((await client.delete("/streams")).json())
    assert released.open == 5
    after = StreamsHeld.model_validate((await client.get("/streams")).json())
    assert (after.requested, after.open) == (0, 0)
    # The same by POST, as the runner asks through a pod proxy.
    await client.post("/streams", json=hold(url, 3))
    await until_open(client, 3)
    released = StreamsHeld.model_validate((await client.post("/streams/release")).json())
    assert released.open == 3
    after = StreamsHeld.model_validate((await client.get("/streams")).json())
    assert (after.requested, after.open) == (0, 0)
    assert (await client.get("/streams/release")).status_code == 405


async def test_a_hold_without_streams_or_with_a_bad_count_is_refused(
    control: tuple[httpx.AsyncClient, Trials], target: tuple[TargetState, str]
) -> None:
    client, _ = control
    _, url = target
    no_streams = hold(url, 3)
    del no_streams["workload"]["streams"]
    refused = await client.post("/streams", json=no_streams)
    assert refused.status_code == 422
    assert "workload.streams is required" in refused.json()["error"]
    negative = await client.post("/streams", json=hold(url, -1))
    assert negative.status_code == 422
    assert negative.json()["fields"][0]["field"] == "count"
    assert negative.json()["error"] == "invalid streams hold: count"
    assert (await client.put("/streams")).status_code == 405


async def test_a_hold_whose_target_resolves_into_a_refused_network_opens_nothing(
    control: tuple[httpx.AsyncClient, Trials], target: tuple[TargetState, str]
) -> None:
    """Held streams go to the target as a trial does, so they pass the same check."""
    client, _ = control
    state, url = target
    by_name = url.replace("127.0.0.1", "localhost")
    refused = {**hold(by_name, 4), "refusedNetworks": ["127.0.0.0/8"]}
    answer = await client.post("/streams", json=refused)
    assert answer.status_code == 422
    assert "now resolves to 127.0.0.1, in 127.0.0.0/8" in answer.json()["error"]
    await asyncio.sleep(0.2)
    assert state.paths == {}
    allowed = {**hold(by_name, 4), "refusedNetworks": ["169.254.0.0/16"]}
    assert (await client.post("/streams", json=allowed)).status_code == 200
    await until_open(client, 4)
    assert state.paths == {"/sse": 4}
