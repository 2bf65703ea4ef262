"""A local run once its processes answer: what the runner asks of it around each trial.

`LocalPlatform.start` makes one (`plimsoll.platforms.base.StartedRun`): replicas a fault
killed brought back and a restarting target waited for (`ensure_ready`), mocks and
generators that exited noticed and started again on the same port (`lost_equipment`,
`replace_lost`), generators added for a higher level (`scale_generators`), replicas
killed mid-trial (`fire`), and the source the trials are read from (`metrics`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from plimsoll.api.faults import Fault
from plimsoll.metrics.source import MetricsSource
from plimsoll.platforms.base import Endpoints, Restored
from plimsoll.platforms.local.launcher import Launcher
from plimsoll.platforms.local.processes import ManagedProcess, wait_ready
from plimsoll.platforms.local.target import Replica
from plimsoll.platforms.replacements import ReplacementBudget

log = logging.getLogger(__name__)


@dataclass
class LocalRun:
    launcher: Launcher
    replicas: list[Replica]  # the target's, as started; [] for an existing service
    # (role, process, URL) of every mock and generator; the platform's own list, so the
    # generators added later are in it too.
    equipment: list[tuple[str, ManagedProcess, str]]
    pinned_equipment: set[str]  # roles measured through their own cgroup
    source: MetricsSource
    start_generator: Callable[[int], Awaitable[str]]  # generator number i; its URL
    endpoints: Endpoints
    replacements: ReplacementBudget = field(default_factory=ReplacementBudget)
    generators_sized_by_default = True  # a generator is a process started in a second

    def __post_init__(self) -> None:
        self.endpoints = replace(self.endpoints, faults=self if self.replicas else None)

    async def scale_generators(self, endpoints: Endpoints, count: int) -> Endpoints:
        """Start generators until `count` answer (never stops one: a run does not scale
        down); the endpoints with every generator's URL."""
        urls = list(endpoints.generator_urls)
        while len(urls) < count:
            urls.append(await self.start_generator(len(urls)))
        return replace(endpoints, generator_urls=urls)

    async def ensure_ready(self) -> None:
        """Before each trial: bring back the replicas a fault killed, wait out a restart
        of the target; raise if it cannot run."""
        for replica in self.replicas:
            replica.restarter.release()
        for replica in self.replicas:
            await replica.restarter.ensure_ready(within=120)

    async def fire(self, fault: Fault) -> list[str]:
        """SIGKILL the replicas `fault` names, held down until the next trial or a
        `restore`; the roles killed. `kill` takes the last running ones, `remove` every one
        in the zone; `restore` starts the zone's dead replicas again and returns them once
        they answer (the generators route to them again as they listen)."""
        if fault.restore is not None:
            back = [
                r for r in self.replicas if r.zone == fault.restore.zone and not r.process.running
            ]
            for replica in back:
                replica.restarter.release()
            for replica in back:
                await replica.restarter.ensure_ready(within=60)
            return [r.role for r in back]
        running = [r for r in self.replicas if r.process.running]
        if fault.kill is not None:
            victims = running[len(running) - fault.kill.replicas :]
        elif fault.remove is not None:
            victims = [r for r in running if r.zone == fault.remove.zone]
        else:
            victims = []
        for replica in victims:
            replica.restarter.hold()
            await replica.process.kill()
        return [r.role for r in victims]

    async def lost_equipment(self) -> dict[str, str]:
        return {
            role: f"exited (code {process.returncode})"
            for role, process, _ in self.equipment
            if process.returncode is not None
        }

    async def replace_lost(self, endpoints: Endpoints) -> Restored:
        """Before each trial: start again, on the same port, any mock or generator process
        that exited (killed, crashed), within the variant's budget; the URLs stay the same."""
        replaced: list[str] = []
        for role, process, url in self.equipment:
            if process.returncode is None:
                continue
            replaced.append(self.replacements.spend(role, f"exited (code {process.returncode})"))
            log.warning("%s", replaced[-1])
            await process.start()
            await wait_ready(process, url=f"{url}/healthz", within=30)
            if role not in self.pinned_equipment:
                await self.launcher.rewatch_process_group(role, process.pid or 0)
        return Restored(endpoints, replaced)

    def metrics(self) -> MetricsSource:
        return self.source
