"""Writing a CapacityTest's status: phases by the table, conditions, steps, the report.

The operator's daemon owns one `StatusWriter` per resource and hands the runner
an `OperatorSink` (the runner's `ProgressSink`), so every step reaches the
status as soon as it is judged: that list is the resume point after a restart.
Writes are merge patches of only the top-level status fields that changed, and
nothing at all when nothing changed (cert-manager's rule), so running a handler
twice on the same state writes nothing the second time. `status.steps` is kept
compact (recent steps in full, older ones in brief, no PromQL), and the report
ConfigMap bounded (`plimsoll.controller.report_map`). Each phase change, judged
step and ceiling is also queued as a Kubernetes Event (`plimsoll.controller.events`)
and posted right after the patch that shows it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from plimsoll.api.autoscale import AutoscalingStatus, proof_variant_name
from plimsoll.api.report import Outcome, RunReport
from plimsoll.api.resource import API_VERSION, KIND
from plimsoll.api.shapes import ShapeStatus
from plimsoll.api.sizing import SizingSummary
from plimsoll.api.status import (
    CapacityTestStatus,
    Ceiling,
    ConditionStatus,
    ConditionType,
    CurrentStep,
    Phase,
    Reason,
    ReportRef,
    check_transition,
    set_condition,
)
from plimsoll.api.step import StepRecord, StepResult
from plimsoll.api.urls import redact_strings
from plimsoll.controller.events import (
    Event,
    EventRecorder,
    ceiling_event,
    phase_event,
    replaced_event,
    step_event,
)
from plimsoll.controller.report_map import write_report_config_map
from plimsoll.decide.notifications import Notice, notices, verdicts_of
from plimsoll.decide.operator_action import conditions_for
from plimsoll.decide.status_steps import compact_steps
from plimsoll.decide.variant_status import run_ended, variant_finished, variant_started
from plimsoll.kube.client import CAPACITY_TESTS, KubeClient
from plimsoll.kube.grants import OperatorIdentity

log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


class StatusWriter:
    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        status: CapacityTestStatus,
        *,
        clock: Callable[[], datetime] = _now,
        events: EventRecorder | None = None,
    ) -> None:
        self.client, self.namespace, self.name = client, namespace, name
        self.status = status
        self._written: dict[str, Any] = status.to_wire()
        self._clock = clock
        self.generation: int | None = status.observed_generation
        self.events = events
        self._pending: list[Event] = []

    def rewrite_all(self) -> None:
        """Make the next `write` send every field: a fresh run or verdict replaces the status."""
        self._written = {}

    def note(self, event: Event) -> None:
        """Queue an event; `write` posts it once the status shows what it announces."""
        if self.events is not None:
            self._pending.append(event)

    def condition(
        self, type_: ConditionType, status: ConditionStatus, reason: Reason, message: str
    ) -> None:
        self.status.conditions = set_condition(
            self.status.conditions, type_, status, reason, message, self._clock(), self.generation
        )

    def set_phase(self, phase: Phase, message: str, *, range_only: bool = False) -> None:
        previous = self.status.phase
        self.status.phase = check_transition(previous, phase)
        if phase is not previous:
            self.note(phase_event(phase, message))
        self.status.message = message
        for change in conditions_for(phase, range_only=range_only):
            self.condition(change.type, change.status, change.reason, message)

    async def write(self) -> bool:
        """When a field changed since the last write: the whole status, server-side
        applied (field manager `plimsoll`), then the queued events; False when no field
        changed. An apply of the same status would write nothing either; skipping it
        saves the request."""
        # Whatever a message quotes (a target.url, an error naming a URL), no credential.
        wire = redact_strings(self.status.to_wire())
        changed = {k: v for k, v in wire.items() if self._written.get(k) != v}
        dropped = {k: None for k in self._written if k not in wire}
        if changed or dropped:
            sub = "status" if await self.client.has_subresource(CAPACITY_TESTS, "status") else None
            body = {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "status": wire,
            }
            await self.client.apply(body, sub=sub)
            if dropped:  # an apply removes only what it applied; an older write set these
                await self.client.patch(
                    CAPACITY_TESTS, self.namespace, self.name, {"status": dropped}, sub=sub
                )
            self._written = wire
        pending, self._pending = self._pending, []
        if self.events is not None:
            for event in pending:
                await self.events.post(event)
        return bool(changed or dropped)


class OperatorSink:
    """The runner's ProgressSink for one resource: progress into the status."""

    def __init__(
        self,
        writer: StatusWriter,
        owner: dict[str, Any],
        *,
        on_step: Callable[[StepRecord, float], None] | None = None,
        on_phase: Callable[[Phase], None] | None = None,
        on_finished: Callable[[RunReport], None] | None = None,
        on_notices: Callable[[list[Notice]], Coroutine[Any, Any, None]] | None = None,
        unit: str = "rps",
        identity: OperatorIdentity | None = None,
    ) -> None:
        self.writer = writer
        self.owner = owner
        self.identity = identity  # whose report role to bind before writing the report
        self.unit = unit
        self.report: RunReport | None = None
        self._on_step = on_step
        self._on_phase = on_phase
        self._on_finished = on_finished  # e.g. the gate: before the report and the final write
        self._on_notices = on_notices  # spec.notify: after the final write, in the background
        self.sending: set[asyncio.Task[None]] = set()
        self._detached = False
        self._stop_reason: str | None = None
        self._step_started = time.monotonic()

    def detach(self) -> None:
        """Write nothing more: the operator is exiting and the next one resumes the run."""
        self._detached = True

    def stopping_because(self, reason: str) -> None:
        """Said before the runner is cancelled: its one final write names `reason`, not a
        bare interruption (a second write after it would let a reader see the first)."""
        self._stop_reason = reason

    async def phase(self, phase: Phase, message: str) -> None:
        status = self.writer.status
        if self._detached or phase in (Phase.SUCCEEDED, Phase.FAILED):
            return  # decided in finished(), together with the ceiling and the report
        self.writer.set_phase(phase, message)
        if phase is Phase.RUNNING:
            self.writer.condition(
                ConditionType.PROVISIONED, ConditionStatus.TRUE, Reason.PROVISIONED, message
            )
        status.current_step = status.current_step if phase is Phase.RUNNING else None
        if self._on_phase is not None:
            self._on_phase(phase)
        await self.writer.write()

    async def variant_started(self, name: str) -> None:
        if self._detached or not self.writer.status.variants:
            return  # a run without variants has only `status.ceiling`
        self.writer.status.variants = variant_started(self.writer.status.variants, name)
        await self.writer.write()

    async def variant_finished(self, ceiling: Ceiling) -> None:
        if self._detached or not self.writer.status.variants:
            return
        self.writer.status.variants = variant_finished(self.writer.status.variants, ceiling)
        await self.writer.write()

    async def step_started(self, step: CurrentStep) -> None:
        if self._detached:
            return
        self._step_started = time.monotonic()
        self.writer.status.current_step = step
        await self.writer.write()

    async def step_finished(self, record: StepRecord, result: StepResult) -> None:
        if self._detached:
            return
        status = self.writer.status
        key = (record.variant, record.index)
        # Recent steps in full, older ones in brief, no PromQL: the status stays small
        # however long the run (`plimsoll.decide.status_steps`); the report has it all.
        status.steps = compact_steps(
            [s for s in status.steps if (s.variant, s.index) != key] + [record]
        )
        status.step_count = len(status.steps)
        status.current_step = None
        self.writer.note(step_event(record, self.unit))
        if self._on_step is not None:
            self._on_step(record, time.monotonic() - self._step_started)
        await self.writer.write()

    async def equipment_replaced(self, message: str) -> None:
        """Shown as the status message until the next phase, and as a Warning event."""
        if self._detached:
            return
        self.writer.status.message = message
        self.writer.note(replaced_event(message))
        await self.writer.write()

    async def finished(self, report: RunReport) -> None:
        if self._stop_reason is not None:
            report.message = self._stop_reason
        self.report = report
        if self._detached:
            return
        status = self.writer.status
        before = verdicts_of(status)
        status.current_step = None
        status.ceiling = report.ceiling  # the baseline's: `kubectl get`'s Ceiling column
        if status.variants:
            status.variants = run_ended(status.variants, report.ceilings, report.comparison)
        status.sizing = SizingSummary.of(report.sizing) if report.sizing is not None else None
        status.proof = report.proof
        status.autoscaling = autoscaling_of(report)
        if report.proof is not None:
            held = report.proof.held
            self.writer.condition(
                ConditionType.PROVED,
                ConditionStatus.TRUE if held else ConditionStatus.FALSE,
                Reason.HELD if held else Reason.NOT_HELD,
                report.proof.sentence,
            )
        if report.shapes is not None:
            status.shapes = [ShapeStatus.of(row) for row in report.shapes.rows]
            status.cheapest_shape = report.shapes.cheapest
        status.completion_time = report.ended_at or _now()
        if self._on_finished is not None:
            # before the report ConfigMap: the gate adds the history's changepoints to it
            self._on_finished(report)
        try:
            name = await write_report_config_map(
                self.writer.client, self.owner, report, self.identity
            )
            status.report = ReportRef(config_map=name)
        except Exception as exc:  # the status still carries the ceiling
            log.warning("report ConfigMap not written: %s", exc)
        for ceiling in report.ceilings or ([report.ceiling] if report.ceiling else []):
            self.writer.note(ceiling_event(ceiling))
        succeeded = report.outcome is Outcome.SUCCEEDED
        final = Phase.SUCCEEDED if succeeded else Phase.FAILED
        message = "; ".join(report.summary) if succeeded and report.summary else report.message
        self.writer.set_phase(
            final, message or final.value, range_only=bool(report.ceilings) and not succeeded
        )
        if self._on_phase is not None:
            self._on_phase(final)
        await self.writer.write()
        found = notices(before, status, self.writer.namespace, self.writer.name)
        if found and self._on_notices is not None:
            # retries take seconds: the daemon goes on, the task is kept until it ends
            task = asyncio.create_task(self._on_notices(found))
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)


def autoscaling_of(report: RunReport) -> AutoscalingStatus | None:
    """The first variant's last flight, and its recommended HPA's if proven; None for a
    run that flew nothing."""
    last = {s.variant: s.flight for s in report.steps if s.flight is not None}
    if not last:
        return None
    variant, flight = next(iter(last.items()))
    return AutoscalingStatus.of(flight, last.get(proof_variant_name(variant)))


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
