"""The CapacityTest status: one phase, conditions, the steps so far, the ceiling.

The phase is the single source of truth for the lifecycle; `PHASE_TRANSITIONS`
is the explicit table of moves it may make, so a handler cannot invent one.
Conditions follow Kubernetes conventions (type, status, CamelCase reason,
message, lastTransitionTime, observedGeneration).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from plimsoll.api.autoscale import AutoscalingStatus
from plimsoll.api.base import PlimsollModel
from plimsoll.api.comparison import Difference
from plimsoll.api.confirmation import Confirmation
from plimsoll.api.gate import HistoryEntry, RegressionStatus
from plimsoll.api.proof import Proof
from plimsoll.api.shapes import ShapeStatus
from plimsoll.api.sizing import SizingSummary
from plimsoll.api.step import LimitedBy, StepRecord, TrialKind


class Phase(StrEnum):
    PENDING = "Pending"
    QUEUED = "Queued"  # waiting for a free slot under the operator's concurrency limit
    PROVISIONING = "Provisioning"  # namespace, target, mock, generators starting
    RUNNING = "Running"  # trials under way
    SUCCEEDED = "Succeeded"  # a ceiling was found
    FAILED = "Failed"  # invalid spec, or the test could not complete


PHASE_TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.PENDING: frozenset({Phase.QUEUED, Phase.PROVISIONING, Phase.FAILED}),
    Phase.QUEUED: frozenset({Phase.PROVISIONING, Phase.FAILED}),
    Phase.PROVISIONING: frozenset({Phase.RUNNING, Phase.FAILED, Phase.PENDING}),
    Phase.RUNNING: frozenset({Phase.SUCCEEDED, Phase.FAILED, Phase.PROVISIONING, Phase.PENDING}),
    # A finished run starts again only on a new generation or a rerun request.
    Phase.SUCCEEDED: frozenset({Phase.PENDING}),
    Phase.FAILED: frozenset({Phase.PENDING}),
}
TERMINAL_PHASES = frozenset({Phase.SUCCEEDED, Phase.FAILED})


class IllegalTransitionError(ValueError):
    pass


def check_transition(current: Phase | None, new: Phase) -> Phase:
    """Return `new` if the table allows moving there from `current`, else raise."""
    if current is None or current == new or new in PHASE_TRANSITIONS[current]:
        return new
    raise IllegalTransitionError(f"phase {current.value} cannot move to {new.value}")


class ConditionType(StrEnum):
    READY = "Ready"  # the test finished with a ceiling
    SPEC_VALID = "SpecValid"
    PROVISIONED = "Provisioned"
    PROGRESSING = "Progressing"
    REGRESSED = "Regressed"  # the latest ceiling fell below its baseline (spec.regression)
    PROVED = "Proved"  # the proof run's deployment held the bar (search.strategy: prove)


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Reason(StrEnum):
    VALID = "Valid"
    INVALID_SPEC = "InvalidSpec"
    QUEUED = "Queued"
    PROVISIONING = "Provisioning"
    PROVISIONED = "Provisioned"
    PROVISIONING_FAILED = "ProvisioningFailed"
    TRIAL_RUNNING = "TrialRunning"
    CEILING_FOUND = "CeilingFound"
    RANGE_ONLY = "RangeOnly"
    MEASUREMENT_INVALID = "MeasurementInvalid"
    RUN_FAILED = "RunFailed"
    RERUN_REQUESTED = "RerunRequested"
    SPEC_CHANGED = "SpecChanged"
    SCHEDULED = "Scheduled"
    IMAGE_CHANGED = "ImageChanged"  # the watched Deployment runs a new image
    REGRESSED = "Regressed"
    NO_REGRESSION = "NoRegression"
    NO_BASELINE = "NoBaseline"
    HELD = "Held"
    NOT_HELD = "NotHeld"


class Condition(PlimsollModel):
    type: ConditionType = Field(
        description="Ready, SpecValid, Provisioned, Progressing, Regressed or Proved."
    )
    status: ConditionStatus = Field(description="True, False or Unknown.")
    reason: Reason = Field(description="Why, in one CamelCase word (see Phases and conditions).")
    message: str = Field("", description="What happened, for a person.")
    last_transition_time: datetime = Field(
        description="When the status last changed (not when it was last written)."
    )
    observed_generation: int | None = Field(
        None, description="The metadata.generation the condition describes."
    )


def set_condition(
    conditions: list[Condition],
    type_: ConditionType,
    status: ConditionStatus,
    reason: Reason,
    message: str,
    now: datetime,
    generation: int | None = None,
) -> list[Condition]:
    """Return the list with this condition set; its transition time moves only on a change
    of status, so re-running a handler on the same state writes nothing new."""

    def condition(since: datetime) -> Condition:
        return Condition(
            type=type_,
            status=status,
            reason=reason,
            message=message,
            last_transition_time=since,
            observed_generation=generation,
        )

    updated: list[Condition] = []
    found = False
    for old in conditions:
        if old.type != type_:
            updated.append(old)
            continue
        found = True
        updated.append(condition(now if old.status != status else old.last_transition_time))
    if not found:
        updated.append(condition(now))
    return updated


# Verdicts on one run, not on the resource: a new run starts without them and has them
# only if it earns them again (a proof run sets Proved; any other run leaves none, so an
# earlier proof never stands for a spec that no longer proves anything).
RUN_VERDICTS = frozenset({ConditionType.PROVED})


def carried_into_a_new_run(conditions: list[Condition]) -> list[Condition]:
    """The conditions a new run starts with: all but the last run's own verdicts."""
    return [c for c in conditions if c.type not in RUN_VERDICTS]


class Headroom(PlimsollModel):
    """Room left at the last passing step, in plain words and in numbers."""

    memory_free_bytes: int | None = Field(
        None, description="Memory left under the limit at the last passing step."
    )
    cpu_idle_fraction: float | None = Field(
        None, description="Share of the CPU quota unused at the last passing step."
    )
    summary: str = Field(
        "",
        description="The room left in words, e.g. '5 MiB under the limit with a quarter of the CPU "
        "idle'.",
    )
    reason: str = Field(
        "",
        description="Why the limit is what it is, when a rule beyond the thresholds named "
        "it: 'cpu: 19% of 100 ms periods hit the quota; the p99 bar tolerates 1%'.",
    )


class Ceiling(PlimsollModel):
    level: int | None = Field(None, description="Highest passing level; None if none passed.")
    unit: str = Field(description="The level's unit: rps (open model) or users (closed model).")
    low: int | None = Field(None, description="Last passing level.")
    high: int | None = Field(None, description="First failing level above it.")
    spread: list[int] = Field(
        default_factory=list, description="Passing levels found when the best was repeated."
    )
    limited_by: LimitedBy = Field(
        LimitedBy.UNKNOWN,
        description="What limited the target: memory, cpu, neither (latency-bound) or unknown.",
    )
    headroom: Headroom = Field(default_factory=Headroom)
    complete: bool = Field(
        description="False when the run stopped early with a range only, or when every "
        "level passed (no failing level above the answer: it is only a lower bound)."
    )
    every_level_passed: bool = Field(
        False,
        description="Every level tried passed: the answer is 'at least' its level, not a "
        "ceiling, and no limiting resource is named. The run did all it was asked.",
    )
    inconclusive: bool = Field(
        False,
        description="The host stayed busy: no quiet step could be had, so no ceiling is claimed.",
    )
    stop_reason: str = Field(
        "", description="Why the search stopped before it knew the ceiling, when it did."
    )
    variant: str = Field("default", description="The variant this ceiling belongs to.")
    basis: str = Field(
        "",
        description="What the answer rests on: 'passed 2 of 2; 187 failed 1 of 1, p99 67 ms "
        "± 9' (full-length trials; ± is half the failing quantile's 95% interval).",
    )
    confirmation: Confirmation | None = Field(
        None,
        description="The limit tested by experiment: the first failing level run again with "
        "each resource doubled, and what that found (attribution.confirm).",
    )

    def range_fields(self) -> dict[str, Any]:
        """The figures a history entry and a comparison row carry over, by their names
        (`RANGE_FIELDS`), so a field added to all three is copied without a hand copy."""
        return self.model_dump(include=set(RANGE_FIELDS))


# The fields `Ceiling`, `HistoryEntry` and `ComparedVariant` (its level is `ceiling`) share.
RANGE_FIELDS = ("low", "high", "spread", "limited_by", "complete")


class VariantState(StrEnum):
    PENDING = "Pending"  # not started yet
    RUNNING = "Running"  # its pods are starting, or its steps are under way
    SUCCEEDED = "Succeeded"  # a ceiling was found
    FAILED = "Failed"  # it stopped early: a range at most


class VariantStatus(PlimsollModel):
    """One variant in `status.variants`: its state, ceiling, range and change vs baseline."""

    # A few scalars per variant keep the status small: the report has the full comparison.

    name: str = Field(description="The variant's name.")
    state: VariantState = Field(
        VariantState.PENDING, description="Pending, Running, Succeeded or Failed (stopped early)."
    )
    ceiling: int | None = Field(None, description="Highest passing level; None if none passed.")
    unit: str = Field("", description="The unit of its levels.")
    last_pass: int | None = Field(None, description="The range: the last passing level …")
    first_fail: int | None = Field(None, description="… and the first failing level above it.")
    limited_by: LimitedBy | None = Field(None, description="What limited it at its ceiling.")
    delta_percent: float | None = Field(None, description="Ceiling against the baseline's.")
    verdict: Difference | None = Field(
        None, description="baseline, higher, lower, within noise or unknown (the noise rule)."
    )


class CurrentStep(PlimsollModel):
    index: int = Field(description="The step's number in the run.")
    level: int = Field(description="The level under trial.")
    variant: str = Field("default", description="The variant under trial.")
    kind: TrialKind = Field(
        TrialKind.FULL, description="full, or probe (a short trial that only narrows the bracket)."
    )
    attempt: int = Field(
        1, description="1 for the first try; more when a noisy or invalid step is repeated."
    )
    started_at: datetime | None = Field(None, description="When the trial started.")


class ReportRef(PlimsollModel):
    config_map: str | None = Field(
        None, description="The ConfigMap holding report.json and report.md (Kubernetes)."
    )
    path: str | None = Field(None, description="The report's folder (local runs).")


class CapacityTestStatus(PlimsollModel):
    phase: Phase = Field(
        Phase.PENDING,
        description="Where the run is: Pending, Queued, Provisioning, Running, Succeeded or "
        "Failed.",
    )
    conditions: list[Condition] = Field(
        default_factory=list,
        description="Ready, SpecValid, Provisioned, Progressing, Regressed and Proved, by "
        "Kubernetes conventions.",
    )
    observed_generation: int | None = Field(
        None, description="The metadata.generation the current run serves."
    )
    run_id: str | None = Field(
        None, description="The current run's id, also its namespace's suffix."
    )
    namespace: str | None = Field(None, description="The run's own namespace.")
    queue_position: int | None = Field(
        None,
        ge=1,
        description="While Queued: 1 for the next to start, in order of creation "
        "(`kubectl get`'s Queue column); absent once the run has started.",
    )
    current_step: CurrentStep | None = Field(None, description="The step under way, if any.")
    # Bounded by the variants (16) x maxTrials (500) with room for retried steps;
    # older steps are kept in brief (`plimsoll.decide.status_steps`).
    steps: list[StepRecord] = Field(
        default_factory=list,
        max_length=20_000,
        description="Every judged step, the resume point of a restarted operator (older ones kept "
        "in brief).",
    )
    step_count: int = Field(0, description="len(steps), for `kubectl get`'s Steps column.")
    ceiling: Ceiling | None = Field(
        None, description="The baseline variant's ceiling, with its range and what limited it."
    )
    # Bounded like spec.variants; `ceiling` above is the baseline's.
    variants: list[VariantStatus] = Field(
        default_factory=list,
        max_length=16,
        description="Each variant's state, ceiling and change against the baseline.",
    )
    variant_count: int | None = Field(
        None, description="How many variants the spec compares, for `kubectl get`'s Variants."
    )
    report: ReportRef | None = Field(None, description="Where the full report is.")
    start_time: datetime | None = Field(None, description="When the run started.")
    completion_time: datetime | None = Field(None, description="When the run ended.")
    message: str = Field("", description="The run's state in a sentence.")
    rerun_token: str | None = Field(None, description="The plimsoll.dev/rerun value served.")
    scheduled_slot: str | None = Field(
        None, description="The spec.schedule slot this run serves (UTC), if scheduled."
    )
    trigger_image: str | None = Field(
        None,
        description="The watched Deployment's image this run serves (spec.trigger.onImageChange).",
    )
    history: list[HistoryEntry] = Field(
        default_factory=list, description="The last runs' ceilings, per variant (newest last)."
    )
    regression: list[RegressionStatus] = Field(
        default_factory=list, description="The latest run against its baseline, per variant."
    )
    change: str = Field("", description="The first variant's change against its baseline.")
    sizing: SizingSummary | None = Field(None, description="The plan spec.sizing asked for.")
    proof: Proof | None = Field(
        None, description="What the proof run showed (search.strategy: prove): did it hold?"
    )
    autoscaling: AutoscalingStatus | None = Field(
        None,
        description="What the autoscaler flight showed (search.strategy: autoscale): lag, "
        "time to capacity, seconds over the bar, requests failed, the verdict and the HPA "
        "it recommends.",
    )
    # Bounded like spec.shapes (explicit: 16, a search: maxShapes ≤ 16).
    shapes: list[ShapeStatus] = Field(
        default_factory=list,
        max_length=16,
        description="Each measured pod shape: ceiling, limiting resource, cost per 1,000 units.",
    )
    cheapest_shape: str | None = Field(
        None, description="The cheapest shape per unit of load, for `kubectl get`'s Cheapest."
    )
