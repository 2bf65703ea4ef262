"""`KubeClient` through faults, against a real HTTP server on 127.0.0.1 (`FlakyServer`).

The server answers 503, 429 with Retry-After, resets and hangs on cue, or stops
listening for a while; the client must retry what is safe to retry, within its
bounds, and raise everything else at once. Only waiting happens between the
faults, so the tests run in fake loop time (looptime): a 10 s outage takes no
wall time, and the waits the client chose are measured exactly.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from plimsoll.kube.client import (
    CAPACITY_TESTS,
    NO_RETRIES,
    PODS,
    ConflictError,
    KubeClient,
    KubeError,
    NotFoundError,
    RetryPolicy,
    TemporaryKubeError,
)
from tests.kube.flaky_server import HANG, RESET, Answer, FlakyServer

POLICY = RetryPolicy(attempts=6, base=1.0, cap=4.0, budget=30.0, rng=random.Random(7))


@pytest.fixture
async def server() -> AsyncIterator[FlakyServer]:
    flaky = FlakyServer()
    await flaky.start()
    yield flaky
    await flaky.stop()


async def _client(server: FlakyServer, policy: RetryPolicy = POLICY) -> KubeClient:
    return KubeClient(server.url, retry=policy, timeout=5.0)


def _pod(name: str | None = "p", generate: str | None = None) -> dict[str, object]:
    meta: dict[str, str] = {"namespace": "ns"}
    if name:
        meta["name"] = name
    if generate:
        meta["generateName"] = generate
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta}


@pytest.mark.looptime
async def test_5xx_is_retried_with_growing_jittered_waits(server: FlakyServer) -> None:
    server.script = [Answer(503), Answer(500), Answer(502)]
    client = await _client(server)
    loop = asyncio.get_running_loop()
    start = loop.time()
    assert await client.get(PODS, "ns", "p") == {"path": "/api/v1/namespaces/ns/pods/p"}
    waited = loop.time() - start
    await client.aclose()
    assert len(server.seen) == 4
    # waits of 1, 2 and 4 s before jitter, each between half and all of it
    assert 0.5 + 1 + 2 <= waited <= 1 + 2 + 4


@pytest.mark.looptime
async def test_429_waits_exactly_what_retry_after_says(server: FlakyServer) -> None:
    server.script = [Answer(429, retry_after="7")]
    client = await _client(server)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await client.patch(CAPACITY_TESTS, "ns", "t", {"status": {"phase": "Running"}}, sub="status")
    assert loop.time() - start == pytest.approx(7.0, abs=0.01)
    await client.aclose()
    assert [m for m, _, _ in server.seen] == ["PATCH", "PATCH"]


@pytest.mark.looptime
async def test_resets_and_timeouts_are_retried(server: FlakyServer) -> None:
    server.script = [RESET, HANG]
    client = await _client(server)
    assert await client.list(PODS, "ns") == []
    await client.aclose()
    assert len(server.seen) == 3


@pytest.mark.looptime
async def test_a_ten_second_outage_loses_no_write(server: FlakyServer) -> None:
    client = await _client(server, RetryPolicy(rng=random.Random(7)))  # the defaults
    await client.get(PODS, "ns", "p")  # a kept-alive connection the outage will cut
    await server.stop()

    async def outage() -> None:
        await asyncio.sleep(10)
        await server.start()  # the same port again

    back = asyncio.create_task(outage())
    await client.patch(CAPACITY_TESTS, "ns", "t", {"status": {"stepCount": 3}}, sub="status")
    await back
    await client.aclose()
    assert [m for m, _, _ in server.seen] == ["GET", "PATCH"]


@pytest.mark.looptime
async def test_retries_are_bounded_by_attempts_and_budget(server: FlakyServer) -> None:
    server.then = Answer(503)
    client = await _client(server)
    loop = asyncio.get_running_loop()
    start = loop.time()
    with pytest.raises(TemporaryKubeError, match="503"):
        await client.get(PODS, "ns", "p")
    assert len(server.seen) <= POLICY.attempts
    assert loop.time() - start <= POLICY.budget
    # a Retry-After beyond the budget is not waited for
    server.seen.clear()
    server.then = Answer(429, retry_after="3600")
    with pytest.raises(TemporaryKubeError, match="429"):
        await client.get(PODS, "ns", "p")
    await client.aclose()
    assert len(server.seen) == 1


@pytest.mark.looptime
async def test_permanent_errors_are_raised_at_once(server: FlakyServer) -> None:
    server.script = [Answer(404), Answer(400), Answer(403)]
    client = await _client(server)
    assert await client.get(PODS, "ns", "p") is None
    with pytest.raises(KubeError, match="400") as bad:
        await client.patch(PODS, "ns", "p", {})
    assert not isinstance(bad.value, TemporaryKubeError)
    with pytest.raises(KubeError, match="403"):
        await client.delete(PODS, "ns", "p")
    await client.aclose()
    assert len(server.seen) == 3
    assert not isinstance(bad.value, NotFoundError)


@pytest.mark.looptime
async def test_a_retried_create_that_had_landed_is_a_conflict_to_adopt(
    server: FlakyServer,
) -> None:
    # The first POST reached the server, which dropped the answer: the retry finds the
    # object there (409), and the caller adopts it (`KubernetesPlatform.apply`).
    server.script = [RESET, Answer(409)]
    client = await _client(server)
    with pytest.raises(ConflictError):
        await client.create(_pod("p"))
    await client.aclose()
    assert [m for m, _, _ in server.seen] == ["POST", "POST"]


@pytest.mark.looptime
async def test_a_create_without_a_name_is_sent_once(server: FlakyServer) -> None:
    server.script = [Answer(503)]
    client = await _client(server)
    with pytest.raises(TemporaryKubeError):
        await client.create(_pod(None, generate="p-"))
    await client.aclose()
    assert len(server.seen) == 1


async def test_a_failed_discovery_is_not_cached(server: FlakyServer) -> None:
    server.script = [Answer(500)]
    client = await _client(server, RetryPolicy(attempts=1))
    with pytest.raises(TemporaryKubeError):
        await client.has_subresource(CAPACITY_TESTS, "status")
    assert await client.has_subresource(CAPACITY_TESTS, "status") is True
    assert await client.has_subresource(CAPACITY_TESTS, "status") is True
    await client.aclose()
    assert len(server.seen) == 2  # the success is cached, the failure was not


@pytest.mark.looptime
async def test_a_best_effort_create_is_sent_once(server: FlakyServer) -> None:
    # Events: an API server that refuses one must not slow the run with retries.
    server.script = [Answer(503)]
    client = await _client(server)
    with pytest.raises(TemporaryKubeError):
        await client.create(_pod("event-1"), retry=NO_RETRIES)
    await client.aclose()
    assert len(server.seen) == 1
