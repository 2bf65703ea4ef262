"""The direct-call floor from a process of its own: what the generator's loop does is not
in it; the generator's floor process answers trial after trial and starts in none of
them; a trial's own floor process ends with it."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Iterator

import psutil
import pytest

from plimsoll.api.trial import FloorProbe, TrialState
from plimsoll.shared import histogram
from plimsoll_generator.floor import FloorOrder, FloorProcess
from plimsoll_mock import floor as mock_floor
from tests.generator.helpers import p, request, run
from tests.generator.target import TargetState

STALL_S = 0.04  # each stall of the generator's loop
STALL_EVERY_S = 0.1


@pytest.fixture
def floor_url() -> Iterator[str]:
    """The mock's floor responder, as the platforms start it: a process of its own."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = mock_floor.spawn("127.0.0.1", port)
    yield f"http://127.0.0.1:{port}/floor"
    mock_floor.stop(process)


async def _stall_the_loop(until: float) -> None:
    """Hold the event loop the way a flood of callbacks does: STALL_S at a time."""
    while time.perf_counter() < until:
        time.sleep(STALL_S)  # noqa: ASYNC251 (the point: nothing else on this loop runs)
        await asyncio.sleep(STALL_EVERY_S - STALL_S)


@pytest.fixture
async def stalled() -> AsyncIterator[None]:
    task = asyncio.create_task(_stall_the_loop(time.perf_counter() + 10.0))
    yield
    task.cancel()


async def test_a_stalled_generator_loop_is_in_the_load_but_not_in_the_floor(
    target: tuple[TargetState, str], floor_url: str, stalled: None
) -> None:
    _, url = target
    workload = {"mix": [{"name": "hello"}], "arrival": "uniform"}
    result = await run(
        request(url, workload, level=50, duration=2, floor={"url": floor_url, "rate": 50})
    )
    assert result.state is TrialState.DONE
    # A start due while the loop is held waits for it: the stalls are in the load's tail.
    assert p(result, "hello", 0.99) > STALL_S * 1000 / 2
    assert result.floor is not None
    assert result.floor.count == 100
    assert result.floor.latency is not None
    floor_p99 = histogram.quantile_ms(histogram.decode(result.floor.latency), 0.99)
    assert floor_p99 is not None
    assert floor_p99 < STALL_S * 1000 / 2


async def test_the_floor_process_is_gone_when_its_trial_ends(
    target: tuple[TargetState, str], floor_url: str
) -> None:
    _, url = target
    before = {c.pid for c in psutil.Process().children()}
    result = await run(
        request(
            url,
            {"mix": [{"name": "hello"}]},
            level=10,
            duration=30,
            floor={"url": floor_url, "rate": 20},
        ),
        abort_after=1.5,
    )
    assert result.state is TrialState.ABORTED
    assert {c.pid for c in psutil.Process().children()} == before


def _children() -> set[int]:
    return {c.pid for c in psutil.Process().children()}


async def test_the_generators_floor_process_answers_each_trial_and_starts_in_none(
    target: tuple[TargetState, str], floor_url: str
) -> None:
    _, url = target
    floor = FloorProcess()
    assert await floor.start()
    assert floor.process is not None
    held = floor.process.pid
    children = _children()
    try:
        for _ in range(2):
            result = await run(
                request(
                    url,
                    {"mix": [{"name": "hello"}]},
                    level=10,
                    duration=1,
                    floor={"url": floor_url, "rate": 20},
                ),
                floor=floor,
            )
            assert result.floor is not None
            assert result.floor.count == 20
            # No process was started for the trial: the floor's is the one started before.
            assert floor.process is not None
            assert floor.process.pid == held
            assert _children() == children
    finally:
        await floor.stop()
    assert _children() == children - {held}


async def test_an_aborted_trial_stops_the_floor_process_and_the_next_starts_one(
    target: tuple[TargetState, str], floor_url: str
) -> None:
    _, url = target
    floor = FloorProcess()
    assert await floor.start()
    before = _children()
    probed = {"url": floor_url, "rate": 20}
    try:
        aborted = await run(
            request(url, {"mix": [{"name": "hello"}]}, level=10, duration=30, floor=probed),
            abort_after=1.5,
            floor=floor,
        )
        assert aborted.state is TrialState.ABORTED
        # Its answer would have come at the 30 s window's end: the process was stopped.
        assert floor.process is None
        assert len(_children()) == len(before) - 1
        result = await run(
            request(url, {"mix": [{"name": "hello"}]}, level=10, duration=1, floor=probed),
            floor=floor,
        )
        assert result.floor is not None
        assert result.floor.count == 20
        assert floor.process is not None
        assert floor.process.returncode is None
    finally:
        await floor.stop()


async def test_failed_probes_are_counted_and_the_process_stays() -> None:
    floor = FloorProcess()
    assert await floor.start()
    try:
        # Nothing listens on port 9 of 127.0.0.1: every probe fails and is counted so.
        now = time.time()
        order = FloorOrder(
            probe=FloorProbe(url="http://127.0.0.1:9/floor", rate=20),
            timeout=1.0,
            measure_from=now,
            end=now + 0.5,
        )
        result = await floor.probe(order)
        assert result.count == 0
        assert result.latency is None
        assert result.errors == 10
        assert floor.process is not None
        assert floor.process.returncode is None  # ready for the next trial's order
    finally:
        await floor.stop()
