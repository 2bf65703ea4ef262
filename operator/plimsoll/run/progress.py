"""Where a run's progress goes as it happens: the protocol between the runner and its users.

Two implementations: the CLI's live view and report files (`plimsoll.cli.run`),
and the operator's status patches and Events (`plimsoll.controller.status`). The
runner awaits every call before it goes on, so a step persisted by the sink is
a resume point.
"""

from __future__ import annotations

from typing import Protocol

from plimsoll.api.report import RunReport
from plimsoll.api.status import Ceiling, CurrentStep, Phase
from plimsoll.api.step import StepRecord, StepResult


class ProgressSink(Protocol):
    """Where progress goes as it happens. Every call is awaited before the run goes on."""

    async def phase(self, phase: Phase, message: str) -> None:
        """Provisioning (per variant), Running, then Succeeded or Failed."""

    async def variant_started(self, name: str) -> None:
        """A variant starts (its pods first); with no variants, "default"."""

    async def variant_finished(self, ceiling: Ceiling) -> None:
        """A variant ended with this ceiling (or range); the comparison comes in `finished`."""

    async def step_started(self, step: CurrentStep) -> None: ...

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        """A step was judged: persist it (it is the resume point)."""

    async def equipment_replaced(self, message: str) -> None:
        """A dead generator or mock was started again before the next trial; `message`
        names it and why (the same line goes into the report's warnings)."""

    async def finished(self, report: RunReport) -> None:
        """The final report, also on failure and cancellation (then partial)."""
