"""Where a run's progress goes as it happens: the protocol between the runner and its users.

Two implementations: the CLI's live view and report files (`plimsoll.cli.run`),
and the operator's status patches and Events (`plimsoll.controller.status`). The
runner awaits every call before it goes on, so a step persisted by the sink is
a resume point.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from plimsoll.api.report import RunReport
from plimsoll.api.status import Ceiling, CurrentStep, Phase
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.api.timeline import TimelineSlice


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


@runtime_checkable
class LiveFigures(Protocol):
    """A sink that shows what the trial under way measured so far (the CLI's live view).
    Called from the trial's polling with each slice once, not awaited: it only folds
    them into what it draws.
    The operator's sink has no screen, so it is not one."""

    def trial_progress(self, slices: list[TimelineSlice]) -> None: ...


def live_figures_of(sink: ProgressSink) -> Callable[[list[TimelineSlice]], None] | None:
    return sink.trial_progress if isinstance(sink, LiveFigures) else None
