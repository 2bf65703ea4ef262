"""The search loop of one variant: ask the search for a level, run the step, repeat.

Called by `plimsoll.run.runner` once the platform is up. The search is a pure
function of the step records, so resuming is only a matter of passing the
records of an earlier run. A trial whose generators failed is judged invalid
and tried once more (after the platform started again any generator or mock
that died: `prepare`); when to retry, and the range a variant that stops early
reports, are `plimsoll.decide.search.stopping`'s, read from the history alone. Any
other failure (the target died, metrics vanished) also ends with that range, never
with the steps lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from plimsoll.api.run_record import RunRecord
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.status import Ceiling, CurrentStep
from plimsoll.api.step import Judgement, StepRecord, StepResult, Verdict
from plimsoll.decide.attribution import attribute
from plimsoll.decide.basis import basis
from plimsoll.decide.contention import floor_bound
from plimsoll.decide.search import Finished, next_action
from plimsoll.decide.search.actions import CeilingEstimate
from plimsoll.decide.search.stopping import (
    invalid_in_a_row,
    pending_retries,
    range_so_far,
    search_view,
    searchable,
)
from plimsoll.decide.status_steps import MAX_STATUS_STEPS
from plimsoll.decide.step_summary import record_of
from plimsoll.metrics.source import MetricsSource
from plimsoll.run.equipment import Equipment
from plimsoll.run.progress import ProgressSink, live_figures_of
from plimsoll.run.step import StepPlan, run_step

log = logging.getLogger(__name__)


STEPS_LIMIT_REASON = (
    f"the run reached {MAX_STATUS_STEPS} steps in all, the most its status holds below "
    "etcd's object limit: fewer variants or a smaller search.maxTrials"
)


def concluded_ceiling(
    spec: CapacityTestSpec, variant: str, history: Sequence[StepRecord], run_record: RunRecord
) -> Ceiling | None:
    """The variant's ceiling when `history` (a resumed run's) already holds its whole
    search, so none of its trials is left to run; None otherwise."""
    records = [r for r in history if r.variant == variant]
    if not records:
        return None
    action = next_action(spec.search, spec.trial, searchable(records), retries=spec.noise.retries)
    if not isinstance(action, Finished):
        return None
    return _final(action.ceiling, spec, variant, run_record.steps)


async def run_variant(
    spec: CapacityTestSpec,
    variant: str,
    equipment: Equipment,
    metrics: MetricsSource,
    sink: ProgressSink,
    history: Sequence[StepRecord],
    run_record: RunRecord,
) -> Ceiling:
    """Search one variant's ceiling, step by step, from `history`; before every trial,
    `equipment.prepare` waits while the target restarts and replaces dead generators and
    mocks, or raises when the run cannot go on (it then stops with the range found so
    far and the platform's reason); a trial that lost one of them is invalid."""
    records = [r for r in history if r.variant == variant]
    next_index = max((r.index for r in history), default=-1) + 1
    next_index = max(next_index, max((s.index for s in run_record.steps), default=-1) + 1)
    try:
        for _ in range(spec.search.max_trials * 4):  # bounded even if the search never stops
            # Read from the history, so a resumed run retries what the original would have.
            # (The equipment is asked only when it decides: after a second invalid attempt.)
            more = invalid_in_a_row(records) > 1 and equipment.would_add(
                spec, records[-1].level, records
            )
            retry_invalid = pending_retries(records, retry_on_more_generators=more)
            seen = search_view(records, retry_invalid)
            action = next_action(spec.search, spec.trial, seen, retries=spec.noise.retries)
            if isinstance(action, Finished):
                break
            if next_index >= MAX_STATUS_STEPS:  # the status must stay under etcd's limit
                return range_so_far(records, spec.unit, variant, STEPS_LIMIT_REASON)
            plan = StepPlan(
                index=next_index,
                level=action.level,
                variant=variant,
                kind=action.kind,
                duration=action.duration,
                attempt=action.attempt + retry_invalid,
                floor_bound=floor_bound(spec.noise.floor_bound, records),
            )
            next_index += 1
            result = await _one_step(spec, plan, equipment, metrics, sink, records)
            record = record_of(result)  # the one place a step's record is derived
            run_record.add_step(result, record)
            await sink.step_finished(record, result)
            records.append(record)
            if spec.trial.settle > 0:
                await asyncio.sleep(spec.trial.settle)
        else:
            return range_so_far(records, spec.unit, variant, "too many trials")
    except Exception as exc:  # e.g. the target died: keep the range measured so far
        log.exception("variant %s stopped", variant)
        return range_so_far(records, spec.unit, variant, str(exc) or type(exc).__name__)
    return _final(action.ceiling, spec, variant, run_record.steps)


async def _one_step(
    spec: CapacityTestSpec,
    plan: StepPlan,
    equipment: Equipment,
    metrics: MetricsSource,
    sink: ProgressSink,
    records: Sequence[StepRecord],
) -> StepResult:
    """The step `plan` asks for, on equipment made ready and sized for its level; invalid
    when a generator or mock was lost during it."""
    await equipment.prepare()
    endpoints = await equipment.size(spec, plan.level, records)
    await sink.step_started(
        CurrentStep(
            index=plan.index,
            level=plan.level,
            variant=plan.variant,
            kind=plan.kind,
            attempt=plan.attempt,
            started_at=datetime.now(UTC),
        )
    )
    return invalid_if_lost(
        await run_step(spec, endpoints, metrics, plan, live_figures_of(sink)),
        await equipment.lost(),
    )


def invalid_if_lost(result: StepResult, lost: list[str]) -> StepResult:
    """A trial during which a generator or the mock died judged invalid, whatever its
    figures said: the load was not all sent, or the target's calls to the mock failed."""
    if not lost or result.judgement.verdict is Verdict.INVALID:
        return result
    reason = f"{'; '.join(lost)} during the trial: its result says nothing about the target"
    judgement = Judgement(verdict=Verdict.INVALID, reasons=[reason, *result.judgement.reasons])
    return result.model_copy(update={"judgement": judgement})


def _final(
    estimate: CeilingEstimate, spec: CapacityTestSpec, variant: str, steps: Sequence[StepResult]
) -> Ceiling:
    best = [
        s
        for s in steps
        if s.variant == variant
        and s.level == estimate.level
        and s.judgement.verdict is Verdict.PASS
    ]
    failed = [
        s
        for s in steps
        if s.variant == variant and s.level == estimate.high and s.judgement.verdict is Verdict.FAIL
    ]
    limited_by, headroom = attribute(
        best[-1].target if best else None,
        failed[-1].target if failed else None,
        spec.attribution,
        spec.pass_when,
    )
    ceiling = estimate.to_status(spec.unit, variant, limited_by, headroom)
    mine = [s for s in steps if s.variant == variant]
    return ceiling.model_copy(update={"basis": basis(estimate.level, estimate.high, mine)})
