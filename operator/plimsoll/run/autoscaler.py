"""The HPA's loop over local replicas (issue 57): where no kube-controller-manager scales
the target, Plimsoll makes the controller's decisions (`plimsoll.decide.hpa`) on the
same inputs, once per sync period, and starts or stops replicas as it decides.

Each sync reads every ready replica's CPU since the last sync as a share of its request
(what metrics-server would report), counts the replicas still starting as not ready,
and asks `decide.hpa.sync` how many to run. Replicas start concurrently, as pods do: a
sync does not wait for the ones it asked for, and the next sync sees them as unready
until they serve. Scaling down stops the newest ready replicas first (a ReplicaSet's
rule for pods of equal standing). Every change of the wanted or the ready count goes
to `history`, the timeline the flight's figures are read from (`decide.flight`); each
sync's CPU reading to `readings` and each replica's start time to `starts`, what a
recommendation is derived from (`decide.flight_advice`).

The loop runs on the event loop's clock, so a test can drive it in fake time; every
loop is bounded by `until`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from plimsoll.api.autoscale import FlightLog, ReplicaCount, UtilizationReading
from plimsoll.decide.hpa import Hpa, Memory, Pods, sync
from plimsoll.platforms.base import ReplicaPool


@dataclass
class SimulatedHpa:
    hpa: Hpa
    pool: ReplicaPool
    clock: Callable[[], float]  # the event loop's time
    history: list[ReplicaCount] = field(default_factory=list)
    readings: list[UtilizationReading] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)  # seconds from asked for to serving
    failed_starts: list[str] = field(default_factory=list)
    _starting: set[asyncio.Task[None]] = field(default_factory=set)
    _memory: Memory = field(default_factory=Memory)
    _origin: float = 0.0
    _desired: int = 0

    def _note(self) -> None:
        now = ReplicaCount(
            at=self.clock() - self._origin, ready=self.pool.ready(), desired=self._desired
        )
        last = self.history[-1] if self.history else None
        if last is None or (last.ready, last.desired) != (now.ready, now.desired):
            self.history.append(now)

    def log(self) -> FlightLog:
        return FlightLog(
            replicas=list(self.history),
            readings=list(self.readings),
            starts=list(self.starts),
            controller="simulated",
        )

    async def run(self, seconds: float) -> None:
        """Sync every period for `seconds`; replicas still starting at the end are left to
        start (the caller stops the pool)."""
        self._origin = self.clock()
        # The first sync reads the CPU since the flight began, as metrics-server reports a
        # recent window: from the platform's start the window reached back past what the
        # sampler keeps, and the first sync read nothing.
        self.pool.utilization()
        self._desired = self.pool.ready()
        self._note()
        deadline = self._origin + seconds
        while self.clock() < deadline:
            await asyncio.sleep(min(self.hpa.sync_seconds, deadline - self.clock()))
            if self.clock() < deadline:
                await self._sync()
        for task in self._starting:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*self._starting, return_exceptions=True)

    async def _sync(self) -> None:
        now = self.clock() - self._origin
        current = self.pool.ready() + len(self._starting)
        shares = self.pool.utilization()
        if shares:
            mean = sum(shares) / len(shares)
            self.readings.append(UtilizationReading(at=now, ready=len(shares), utilization=mean))
        # A serving replica with no figure yet counts as the controller counts a pod with
        # no metric: idle when scaling up, at target when scaling down.
        missing = max(0, self.pool.ready() - len(shares))
        pods = Pods(ready=shares, unready=len(self._starting), missing=missing)
        wanted, self._memory = sync(self.hpa, now, current, pods, self._memory)
        self._desired = wanted
        for _ in range(wanted - current):
            task = asyncio.create_task(self._add())
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)
        for _ in range(current - wanted):
            if self.pool.ready() > 0:
                await self.pool.remove()
        self._note()

    async def _add(self) -> None:
        asked = self.clock()
        try:
            await self.pool.add()
            self.starts.append(self.clock() - asked)
        except Exception as exc:  # a replica that cannot start: the next sync asks again
            self.failed_starts.append(str(exc) or type(exc).__name__)
        self._note()
