"""The HPA's loop over replicas, in fake time (looptime): a burst the default policies
scale for, worked by hand from the documented rules (issue 57).

Each replica carries 100 rps and uses 0.9 of its CPU request at that load, capped at the
request (its limit). The HPA holds 60% utilization, 2 to 10 replicas, syncing every
15 s; a replica serves 20 s after it is asked for. 120 rps on 2 replicas is 54% each,
within the 10% tolerance. From 61 s the load is 450 rps:

- 75 s: 2 replicas at 100% (capped): ceil(2 x 100/60) = 4 wanted; 2 start.
- 90 s: 2 ready at 100%, 2 starting counted idle: (100+100+0+0)/4 = 50%, which would
  scale down: the count stays 4.
- 95 s: the 2 serve. 105 s: 4 at 100% (450/4 = 112.5 rps each): ceil(4 x 100/60) = 7;
  the policies allow 8 (100% or 4 pods per 15 s); 3 start, and serve at 125 s.
- 135 s: 7 at 58% (64 rps each): within the tolerance; 7 stay.
"""

from __future__ import annotations

import asyncio

import pytest

from plimsoll.api.autoscale import ReplicaCount
from plimsoll.decide.hpa import Hpa
from plimsoll.run.autoscaler import SimulatedHpa

PER_POD, CPU_AT_CEILING, START_S = 100.0, 0.9, 20.0


class FakePool:
    def __init__(self, load: object, ready: int) -> None:
        self.load = load
        self._ready = ready
        self.loop = asyncio.get_running_loop()
        self.origin = self.loop.time()

    def ready(self) -> int:
        return self._ready

    def utilization(self) -> list[float]:
        rate = self.load(self.loop.time() - self.origin)  # type: ignore[operator]
        each = min(1.0, rate / self._ready / PER_POD * CPU_AT_CEILING)
        return [each] * self._ready

    async def add(self) -> None:
        await asyncio.sleep(START_S)
        self._ready += 1

    async def remove(self) -> None:
        self._ready -= 1


@pytest.mark.looptime
async def test_a_burst_is_met_in_two_scale_ups() -> None:
    loop = asyncio.get_running_loop()
    pool = FakePool(lambda t: 120.0 if t < 61 else 450.0, ready=2)
    hpa = SimulatedHpa(
        Hpa(min_replicas=2, max_replicas=10, target_utilization=0.6), pool, loop.time
    )
    await hpa.run(150)
    assert hpa.history == [
        ReplicaCount(at=0, ready=2, desired=2),
        ReplicaCount(at=75, ready=2, desired=4),
        ReplicaCount(at=95, ready=3, desired=4),
        ReplicaCount(at=95, ready=4, desired=4),
        ReplicaCount(at=105, ready=4, desired=7),
        ReplicaCount(at=125, ready=5, desired=7),
        ReplicaCount(at=125, ready=6, desired=7),
        ReplicaCount(at=125, ready=7, desired=7),
    ]
    assert hpa.failed_starts == []


@pytest.mark.looptime
async def test_a_replica_that_cannot_start_is_asked_for_again() -> None:
    loop = asyncio.get_running_loop()

    class Failing(FakePool):
        tries = 0

        async def add(self) -> None:
            self.tries += 1
            if self.tries == 1:
                await asyncio.sleep(5)
                raise RuntimeError("target exited (code 1)")
            await super().add()

    pool = Failing(lambda t: 100.0, ready=1)  # 90% on one replica: 2 wanted
    hpa = SimulatedHpa(Hpa(min_replicas=1, max_replicas=4, target_utilization=0.6), pool, loop.time)
    await hpa.run(60)
    assert hpa.failed_starts == ["target exited (code 1)"]
    assert pool.ready() == 2  # the second sync asked again
    assert hpa.history[-1] == ReplicaCount(at=50, ready=2, desired=2)


@pytest.mark.looptime
async def test_a_replica_with_no_figure_yet_counts_as_the_controller_counts_it() -> None:
    """Two serving replicas, one without a CPU figure yet (it just started): counted idle
    when scaling up, so (100% + 0) / 2 = 50% of a 60% target would scale down, which
    reverses the direction: the count stays 2 (the controller's rule for missing metrics)."""
    loop = asyncio.get_running_loop()

    class HalfMeasured(FakePool):
        def utilization(self) -> list[float]:
            return [1.0]

    pool = HalfMeasured(lambda t: 100.0, ready=2)
    hpa = SimulatedHpa(Hpa(min_replicas=1, max_replicas=8, target_utilization=0.6), pool, loop.time)
    await hpa.run(40)
    assert hpa.history == [ReplicaCount(at=0, ready=2, desired=2)]


@pytest.mark.looptime
async def test_each_sync_keeps_its_reading_and_each_start_its_time() -> None:
    """The CPU readings and start times a recommendation is made from: the first sync's
    window opens with the flight (not with the pool), and each start takes START_S."""
    loop = asyncio.get_running_loop()

    class Watched(FakePool):
        calls: list[float] = []

        def utilization(self) -> list[float]:
            self.calls.append(self.loop.time() - self.origin)
            return super().utilization()

    pool = Watched(lambda t: 100.0, ready=1)  # 90% on one replica: 2 wanted
    hpa = SimulatedHpa(Hpa(min_replicas=1, max_replicas=4, target_utilization=0.6), pool, loop.time)
    await hpa.run(45)
    assert pool.calls == [0, 15, 30]  # the flight's start, then each sync
    assert [(r.at, r.ready) for r in hpa.readings] == [(15, 1), (30, 1)]  # the 2nd serves at 35
    assert hpa.readings[0].utilization == pytest.approx(0.9)
    assert hpa.starts == [START_S]
