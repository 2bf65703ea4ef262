"""The limit confirmed by experiment, run (issue 51): once a variant's search has found
its ceiling, its first failing level again with the named resource doubled, then with the
other one doubled, each on a platform started for that one trial.

`plimsoll.decide.confirmation` plans the trials and reads their verdicts; this module
only runs them. Each trial's target is the variant's target at the doubled shape and
nothing else changed (the same workload, bar, trial length and generators sized as the
search sized them at that level), started after the variant's own pieces stopped, so the
two never share the host. A shape the platform cannot pin (more CPUs than the host keeps
for the target, more memory than is free) is refused before anything starts, and the
limit stays inferred with that reason. The trials are not steps of the search: they go
into the ceiling's `confirmation`, never into the steps a resumed search reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from plimsoll.api.confirmation import Confirmation, Counterfactual, Finding
from plimsoll.api.run_record import RunRecord
from plimsoll.api.spec import CapacityTestSpec, Strategy, Variant
from plimsoll.api.status import Ceiling, Phase
from plimsoll.api.step import StepResult, TrialKind
from plimsoll.decide.confirmation import finding, not_run, planned_trials, unfit, why_not_planned
from plimsoll.decide.contention import floor_bound
from plimsoll.platforms.base import (
    KnowsRunBudget,
    KnowsTargetRoom,
    MetricsBeforeStart,
    Platform,
    PlatformError,
)
from plimsoll.run.equipment import Equipment
from plimsoll.run.progress import ProgressSink
from plimsoll.run.scrape_check import fit_before_start
from plimsoll.run.step import StepPlan, run_step
from plimsoll.run.streams_probe import StreamsProbeError, hold_streams
from plimsoll.run.variant import invalid_if_lost


def counterfactual_name(variant: str, trial: Counterfactual) -> str:
    """The name a trial's platform runs under: its pods' and work folder's."""
    return f"{variant}-2x-{trial.doubled.value}"


def why_not_run(spec: CapacityTestSpec, ceiling: Ceiling, pinned: bool | None) -> str | None:
    """Why this variant's limit is not put to the experiment, or None when it is."""
    if not spec.attribution.confirm:
        return "attribution.confirm is off"
    if spec.search.strategy is Strategy.PROVE:
        return "a proof judges one level, not a ceiling"
    if spec.search.strategy is Strategy.AUTOSCALE:
        return "a flight judges what the autoscaler lived through, not a ceiling"
    if pinned is False:
        return "the target ran unpinned: doubling a limit it never had proves nothing"
    shape = spec.target.resources if spec.target.url is None else None
    return why_not_planned(ceiling, shape)


def with_confirmation(ceiling: Ceiling, confirmation: Confirmation) -> Ceiling:
    """`ceiling` holding the experiment's finding. Where the experiment pointed to the
    other resource than the rule did, the ceiling names what the experiment found: the
    rule's reason no longer explains it, so it goes with the rule."""
    update: dict[str, object] = {"confirmation": confirmation}
    if confirmation.finding is Finding.CONTRADICTED:
        update["limited_by"] = confirmation.found
        update["headroom"] = ceiling.headroom.model_copy(update={"reason": ""})
    return ceiling.model_copy(update=update)


async def confirm_limit(
    spec: CapacityTestSpec,
    variant: str,
    ceiling: Ceiling,
    every_variant: Sequence[CapacityTestSpec],
    make_platform: Callable[[Variant], Platform],
    sink: ProgressSink,
    record: RunRecord,
) -> Ceiling:
    """`ceiling` with its `confirmation`: the experiment's finding, or why it was not run."""
    reason = why_not_run(spec, ceiling, record.pinned)
    if reason is not None:
        return with_confirmation(ceiling, not_run(ceiling, reason))
    assert spec.target.resources is not None  # why_not_planned refuses an unpinned shape
    trials = planned_trials(ceiling, spec.target.resources)
    platforms = [make_platform(_variant_of(variant, t)) for t in trials]
    doubled = [
        spec.model_copy(update={"target": spec.target.model_copy(update={"resources": t.shape})})
        for t in trials
    ]
    for trial, platform, at_double in zip(trials, platforms, doubled, strict=True):
        problem = _room_problem(trial, platform, at_double, every_variant)
        if problem is not None:
            return with_confirmation(ceiling, not_run(ceiling, f"not run: {problem}"))
    ran: list[Counterfactual] = []
    probe = spec.workload.streams
    holding = probe is not None and probe.hold_during_steps  # as the search's trials did
    for trial, platform, at_double in zip(trials, platforms, doubled, strict=True):
        await sink.phase(
            Phase.RUNNING,
            f"confirming the limit ({variant}): {trial.level:,} {spec.unit} at 2× "
            f"{trial.doubled.value}",
        )
        try:
            result = await _one_trial(
                at_double, variant, trial, platform, [*every_variant, at_double], sink, record
            )
        except PlatformError as exc:
            why = f"the {trial.doubled.value} doubled could not start: {exc}"
            return with_confirmation(ceiling, not_run(ceiling, why))
        except StreamsProbeError as exc:
            why = f"the held streams did not open at 2× {trial.doubled.value}: {exc}"
            return with_confirmation(ceiling, not_run(ceiling, why))
        ran.append(_ran(trial, result, holding))
    return with_confirmation(ceiling, finding(ceiling, ran))


def _ran(trial: Counterfactual, result: StepResult, holding: bool) -> Counterfactual:
    """The trial with its verdict, and the probe's streams open as it began, when it held
    them (a target that runs out of memory drops them during the trial)."""
    held = result.client.streams if result.client is not None and holding else None
    return trial.model_copy(
        update={
            "verdict": result.judgement.verdict,
            "reasons": result.judgement.reasons,
            "held_streams": held.opened if held is not None else None,
        }
    )


def _room_problem(
    trial: Counterfactual,
    platform: Platform,
    at_double: CapacityTestSpec,
    every_variant: Sequence[CapacityTestSpec],
) -> str | None:
    """Why the trial cannot run on `platform`: the host has no room for the doubled
    target (local), or the run would request more than the admin allows (Kubernetes)."""
    if isinstance(platform, KnowsTargetRoom):
        room = platform.target_room(at_double)
        problem = unfit(trial, room.cpu, room.memory)
        if problem is not None:
            return problem
    if isinstance(platform, KnowsRunBudget):
        return platform.budget_problem([*every_variant, at_double])
    return None


def _variant_of(variant: str, trial: Counterfactual) -> Variant:
    return Variant(name=counterfactual_name(variant, trial), resources=trial.shape)


async def _one_trial(
    spec: CapacityTestSpec,
    variant: str,
    trial: Counterfactual,
    platform: Platform,
    every_variant: Sequence[CapacityTestSpec],
    sink: ProgressSink,
    record: RunRecord,
) -> StepResult:
    """The trial at `spec`'s (doubled) shape on a platform of its own, stopped after it."""
    if isinstance(platform, MetricsBeforeStart):
        spec, _ = await fit_before_start(spec, platform.metrics_before_start(spec))
    records = [r for r in record.records if r.variant == variant]
    try:  # a platform that failed half-way still has pieces to stop
        started = await platform.start(spec, every_variant)
        equipment = Equipment(
            started, sink, record, counterfactual_name(variant, trial), started.endpoints
        )
        await equipment.prepare()
        endpoints = await equipment.size(spec, trial.level, records)
        probe = spec.workload.streams
        if probe is not None and probe.hold_during_steps:
            # The search's trials ran with the probe's streams held: so does this one.
            await hold_streams(spec, endpoints)
        plan = StepPlan(
            index=max((s.index for s in record.steps), default=-1) + 1,
            level=trial.level,
            variant=counterfactual_name(variant, trial),
            kind=TrialKind.FULL,
            duration=spec.trial.duration,
            attempt=1,
            floor_bound=floor_bound(spec.noise.floor_bound, records),
        )
        result = await run_step(spec, endpoints, started.metrics(), plan)
        return invalid_if_lost(result, await equipment.lost())
    finally:
        await asyncio.shield(platform.stop(keep=False))
