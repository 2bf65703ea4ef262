"""The run's side of dead generators and mocks: notice them, replace them, tell the user.

`plimsoll.run.variant` asks `Equipment` around every trial. Before a trial,
`prepare` waits while the target restarts and has the platform start again any
generator or mock that died (`Platform.replace_lost`), each replacement going to
the report's warnings and the progress sink; the endpoints it returns carry the
new addresses. After a trial, `lost` names what died meanwhile: a trial that
lost a generator (its share was never sent) or the mock (the target's calls
failed) says nothing about the target, so the variant judges it invalid.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.report import RunReport
from plimsoll.platforms.base import Endpoints, Platform
from plimsoll.run.progress import ProgressSink


@dataclass
class Equipment:
    platform: Platform
    sink: ProgressSink
    report: RunReport
    variant: str
    endpoints: Endpoints  # the latest: what the end of the run must still reach

    async def prepare(self) -> Endpoints:
        """Before a trial: the target back up, dead generators and mocks started again."""
        await self.platform.ensure_ready()
        restored = await self.platform.replace_lost(self.endpoints)
        for line in restored.replaced:
            self.report.warnings.append(f"{self.variant}: {line}")
            await self.sink.equipment_replaced(line)
        self.endpoints = restored.endpoints
        return self.endpoints

    async def lost(self) -> list[str]:
        """After a trial: each generator or mock that is gone, with why."""
        return [f"{piece} {why}" for piece, why in (await self.platform.lost_equipment()).items()]
