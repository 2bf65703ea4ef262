"""The regression gate in the status: history, the verdict per variant, the condition.

Called by the status sink (`OperatorSink.finished`) when a run ends, before the
final status patch, so the ceiling, its place in `status.history`, the
`Regressed` condition and the change shown by `kubectl get` land in one write.
The rule itself is pure (`plimsoll.decide.regression`); this module only maps
its answers onto the status, a condition and an Event.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from plimsoll.api.gate import RegressionMethod, RegressionStatus
from plimsoll.api.report import RunReport
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import ConditionStatus, ConditionType, Reason
from plimsoll.controller.events import Event, EventType
from plimsoll.controller.status import StatusWriter
from plimsoll.decide.changepoint_gate import judge_changepoints
from plimsoll.decide.regression import (
    baseline_of,
    change_column,
    entry_of,
    judge_regression,
    remember,
)
from plimsoll.decide.unit_costs import slopes


def apply_gate(
    writer: StatusWriter,
    report: RunReport,
    spec: CapacityTestSpec,
    images: Mapping[str, str | None],
) -> None:
    """Remember this run's ceilings and, with `spec.regression`, judge them against the
    baseline (or, method changepoint, against the history they join, and put the changes
    found in the report too): `images` maps each variant to the target image (or digest)
    it ran."""
    status = writer.status
    ceilings = list(report.ceilings) or ([report.ceiling] if report.ceiling else [])
    if not ceilings or status.run_id is None:
        return
    finished = report.ended_at or datetime.now(UTC)
    policy = spec.regression
    verdicts: list[RegressionStatus] = []
    if policy is not None and policy.method is RegressionMethod.THRESHOLD:
        verdicts = [
            judge_regression(c, baseline_of(status.history, c.variant, policy), policy)
            for c in ceilings
        ]
    entries = [
        entry_of(
            c,
            status.run_id,
            finished,
            image=images.get(c.variant),
            generation=status.observed_generation,
            costs=slopes([s for s in report.steps if s.variant == c.variant]),
        )
        for c in ceilings
    ]
    status.history = remember(status.history, entries, spec.history_limit)
    if policy is not None and policy.method is RegressionMethod.CHANGEPOINT:
        reported = {
            v.variant: {(p.metric, p.run_id) for p in v.changepoints} for v in status.regression
        }
        verdicts = [
            judge_changepoints(
                status.history, c.variant, status.run_id, policy, reported.get(c.variant, set())
            )
            for c in ceilings
        ]
        report.changepoints = [p for v in verdicts for p in v.changepoints]
    status.regression = verdicts
    status.change = change_column(verdicts)
    if policy is not None:
        _regressed_condition(writer, verdicts)


def _regressed_condition(writer: StatusWriter, verdicts: list[RegressionStatus]) -> None:
    """The Regressed condition (and, when true, a Warning event) from the verdicts."""
    regressed = [v for v in verdicts if v.regressed]
    if regressed:
        message = "; ".join(v.message for v in regressed)
        writer.condition(ConditionType.REGRESSED, ConditionStatus.TRUE, Reason.REGRESSED, message)
        writer.note(Event(EventType.WARNING, Reason.REGRESSED.value, message))
    elif all(v.baseline is None for v in verdicts):
        message = "; ".join(v.message for v in verdicts)
        writer.condition(
            ConditionType.REGRESSED, ConditionStatus.FALSE, Reason.NO_BASELINE, message
        )
    else:
        message = "; ".join(v.message for v in verdicts)
        writer.condition(
            ConditionType.REGRESSED, ConditionStatus.FALSE, Reason.NO_REGRESSION, message
        )
