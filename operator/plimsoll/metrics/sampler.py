"""The local metrics source: samplers that read cgroups or /proc during the trials.

The local platform creates one `Sampler` per role (the pinned target from its
cgroup, the unpinned mock, generators and services from /proc), starts them before
the first trial and stops them at the end; `LocalSource.usage(window)` then slices
each sampler's ring buffer to the window. Sampling continuously, instead of on
start/stop calls around each trial, keeps the runner ignorant of how the local
figures are taken, and lets it ask about any window after the fact, as it asks
Prometheus.

Reading a few small cgroup files takes microseconds, so it runs on the event loop;
the /proc walk is done the same way because a trial's processes are few. A read
that fails (the group vanished) is kept as the sampler's last error and reported
in `missing`, never skipped silently.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from plimsoll.api.step import ResourceUsage
from plimsoll.metrics.cgroup import CgroupPaths, CgroupReadError, read_limits, read_sample
from plimsoll.metrics.host import read_host_sample
from plimsoll.metrics.proc import ProcGroupGoneError, ProcGroupReader
from plimsoll.metrics.samples import Limits, Sample, SampleBuffer, summarise
from plimsoll.metrics.schedstat import WaitOutsideThrottling
from plimsoll.metrics.source import Window
from plimsoll.metrics.tasks import cancel_and_wait

Clock = Callable[[], float]


class Sampler:
    """Reads one process group every `interval` seconds into a ring buffer."""

    def __init__(
        self,
        read: Callable[[float], Sample],
        *,
        source: str,
        limits: Callable[[], Limits] = Limits,
        interval: float = 0.25,
        capacity: int = 20_000,
        clock: Clock = time.time,
    ) -> None:
        self.source = source
        self.interval = interval
        self.buffer = SampleBuffer(capacity)
        self.errors: list[str] = []
        self._read = read
        self._limits = limits
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_cgroup(
        cls, paths: CgroupPaths, *, interval: float = 0.25, clock: Clock = time.time
    ) -> Sampler:
        waits = WaitOutsideThrottling()  # this sampler's own: it keeps the last reading
        return cls(
            lambda at: read_sample(paths, at, waits),
            source="cgroup",
            limits=lambda: read_limits(paths),
            interval=interval,
            clock=clock,
        )

    @classmethod
    def for_host(cls, *, interval: float = 0.25, clock: Clock = time.time) -> Sampler:
        """The whole host's busy CPU (`host.read_host_sample`), role `host`."""
        return cls(read_host_sample, source="/proc/stat", interval=interval, clock=clock)

    @classmethod
    def for_process_group(
        cls, pgid: int, *, interval: float = 0.25, clock: Clock = time.time
    ) -> Sampler:
        return cls(ProcGroupReader(pgid).read, source="proc", interval=interval, clock=clock)

    def sample_once(self) -> None:
        try:
            self.buffer.add(self._read(self._clock()))
        except (CgroupReadError, ProcGroupGoneError) as exc:
            # Keep only the latest few: a vanished group fails on every tick.
            self.errors = [*self.errors[-4:], str(exc)]

    async def run(self) -> None:
        while True:
            self.sample_once()
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self.run())

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    def usage(self, window: Window) -> ResourceUsage:
        try:
            limits = self._limits()
        except CgroupReadError as exc:
            limits = Limits()
            self.errors = [*self.errors[-4:], f"limits: {exc}"]
        usage = summarise(
            self.buffer.between(
                window.start.timestamp() - self.interval, window.end.timestamp() + self.interval
            ),
            window,
            interval=self.interval,
            source=self.source,
            limits=limits,
        )
        if usage.missing and self.errors:
            usage.missing.append(f"{self.source}: last read error: {self.errors[-1]}")
        return usage


class LocalSource:
    """The `MetricsSource` of the local platform: one sampler per role."""

    def __init__(self, samplers: dict[str, Sampler] | None = None) -> None:
        self.samplers: dict[str, Sampler] = dict(samplers or {})

    def add(self, role: str, sampler: Sampler) -> None:
        self.samplers[role] = sampler

    def start(self) -> None:
        for sampler in self.samplers.values():
            sampler.start()

    async def stop(self) -> None:
        for sampler in self.samplers.values():
            await sampler.stop()

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        return {role: sampler.usage(window) for role, sampler in self.samplers.items()}
