"""The run's side of dead generators and mocks: notice them, replace them, tell the user.

`plimsoll.run.variant` asks `Equipment` around every trial. Before a trial,
`prepare` waits while the target restarts and has the started run start again any
generator or mock that died (`StartedRun.replace_lost`), each replacement going to
the run record's warnings and the progress sink; the endpoints it returns carry the
new addresses. After a trial, `lost` names what died meanwhile: a trial that
lost a generator (its share was never sent) or the mock (the target's calls
failed) says nothing about the target, so the variant judges it invalid.

With `generators.replicas: auto` (the local platform's default), `size` then
starts the generators the next level needs (`plimsoll.decide.generator_count`),
and says so in the run record's placement.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.run_record import RunRecord
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.step import StepRecord
from plimsoll.decide.generator_count import GeneratorCount, generators_for
from plimsoll.platforms.base import Endpoints, ScalesGenerators, StartedRun
from plimsoll.run.progress import ProgressSink

log = logging.getLogger(__name__)


@dataclass
class Equipment:
    started: StartedRun
    sink: ProgressSink
    record: RunRecord
    variant: str
    endpoints: Endpoints  # the latest: what the end of the run must still reach

    async def prepare(self) -> Endpoints:
        """Before a trial: the target back up, dead generators and mocks started again."""
        await self.started.ensure_ready()
        restored = await self.started.replace_lost(self.endpoints)
        for line in restored.replaced:
            self.record.warnings.append(f"{self.variant}: {line}")
            await self.sink.equipment_replaced(line)
        self.endpoints = restored.endpoints
        return self.endpoints

    async def lost(self) -> list[str]:
        """After a trial: each generator or mock that is gone, with why."""
        return [f"{piece} {why}" for piece, why in (await self.started.lost_equipment()).items()]

    def sizing(
        self, spec: CapacityTestSpec, level: int, records: Sequence[StepRecord]
    ) -> GeneratorCount | None:
        """The generators a step at `level` gets, when this run sizes them; None when it
        does not (a fixed count, or a platform that cannot add generators)."""
        started = self.started
        if not isinstance(started, ScalesGenerators):
            return None
        if not spec.generators.sized(started.generators_sized_by_default):
            return None
        return generators_for(level, records, len(self.endpoints.generator_urls), spec.generators)

    def would_add(self, spec: CapacityTestSpec, level: int, records: Sequence[StepRecord]) -> bool:
        """Whether a retry at `level` would run on more generators than the last step."""
        plan = self.sizing(spec, level, records)
        return plan is not None and plan.count > len(self.endpoints.generator_urls)

    async def size(
        self, spec: CapacityTestSpec, level: int, records: Sequence[StepRecord]
    ) -> Endpoints:
        """Before a step at `level`: start the generators it needs (never fewer than now)."""
        plan = self.sizing(spec, level, records)
        if plan is None or plan.count <= len(self.endpoints.generator_urls):
            return self.endpoints
        assert isinstance(self.started, ScalesGenerators)  # `sizing` checked it
        placed = len(self.endpoints.placement)
        self.endpoints = await self.started.scale_generators(self.endpoints, plan.count)
        line = f"generators ({self.variant}): {plan.reason}"
        log.info("%s", line)
        self.record.placement.append(line)
        # Where the added generators run (a cluster says which node each pod is on).
        self.record.placement.extend(self.endpoints.placement[placed:])
        return self.endpoints
