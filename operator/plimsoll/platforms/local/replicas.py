"""The target's replicas as a flight's autoscaler grows and shrinks them locally (issue
57): a `ReplicaPool` over pinned processes.

Every replica the autoscaler may run (up to maxReplicas) has its port from the start,
held (`PortHold`: bound, not listening) until its replica starts, so the generators know
each address (`Endpoints.replica_urls`) and route to a replica once
it listens, as a pod joins its Service when ready. `add` starts the lowest replica not
serving (pinned to the shape, measured through its cgroup), or starts again one that an
earlier scale-down stopped; `remove` stops the newest with SIGTERM (a pod's graceful
stop), held down by its restarter until added again. `utilization` is each serving
replica's mean CPU since the last call over its request, from the samplers that measure
every piece (metrics-server's figure for the HPA).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.metrics.source import Window
from plimsoll.platforms.local.launcher import Launcher
from plimsoll.platforms.local.processes import PortHold
from plimsoll.platforms.local.target import Replica


class LocalReplicas:
    def __init__(
        self,
        launcher: Launcher,
        spec: CapacityTestSpec,
        start: Callable[[int], Awaitable[Replica]],
        holds: list[PortHold],
        everyone: list[Replica],
    ) -> None:
        self.launcher = launcher
        self.spec = spec
        self.holds = holds  # every replica's port, held while nobody serves on it
        self.everyone = everyone  # the platform's list: its stop stops every one started
        self.serving = list(everyone)
        self.stopped: dict[int, Replica] = {}
        self._starting: set[int] = set()  # adds run concurrently: each takes its own index
        self._start = start
        self._since = time.time()
        self._serving_since: dict[int, float] = {}  # when each replica started serving

    def ready(self) -> int:
        return len(self.serving)

    def utilization(self) -> list[float]:
        now = time.time()
        window = Window(datetime.fromtimestamp(self._since, UTC), datetime.fromtimestamp(now, UTC))
        self._since = now
        shape = self.spec.target.resources
        request = shape.cpu if shape is not None else 1.0
        shares = []
        for replica in self.serving:
            sampler = self.launcher.source.samplers.get(replica.role)
            usage = sampler.usage(window) if sampler is not None else None
            if usage is not None and usage.cpu_mean_cores is not None:
                shares.append(usage.cpu_mean_cores / request)
        return shares

    async def add(self) -> None:
        taken = self._indices() | self._starting
        index = min(i for i in range(len(self.holds)) if i not in taken)
        self._starting.add(index)
        try:
            await self._add(index)
        finally:
            self._starting.discard(index)

    async def _add(self, index: int) -> None:
        again = self.stopped.pop(index, None)
        if again is not None:
            self.holds[index].release()
            again.restarter.release()
            await again.restarter.ensure_ready(within=self.spec.target.startup_timeout)
            self._serving(again)
            return
        replica = await self._start(index)
        self.everyone.append(replica)
        sampler = self.launcher.source.samplers.get(replica.role)
        if sampler is not None:
            sampler.start()  # the platform's samplers started before this replica existed
        self._serving(replica)

    def _serving(self, replica: Replica) -> None:
        self._serving_since[replica.index] = time.time()
        self.serving.append(replica)

    async def remove(self) -> None:
        replica = self.serving.pop()
        replica.restarter.hold()
        await replica.process.stop()
        self.holds[replica.index].hold(self.holds[replica.index].port)  # kept until added again
        self.stopped[replica.index] = replica

    def _indices(self) -> set[int]:
        return {r.index for r in self.serving}
