"""The limit confirmed by experiment (issue 51): plan the counterfactual trials and read
what they found. Pure: the runner runs the trials and hands their verdicts back.

The search names a limit by rule (throttling, the working set against the limit). A
rule can be fooled (a many-threaded target's wait, an idle CPU that a lock starves),
so the named limit is tested: the first failing level is run again with the named
resource doubled, and once more with the other one doubled. If the named resource's
doubling passes and the other's does not, the limit is confirmed; if only the other's
passes, the rule named the wrong one; anything else leaves it inferred, and says why.
Where the search named neither resource, each is doubled in turn: if neither passes,
"neither" is confirmed; if one alone passes, it is the limit after all.

At most two trials. None where there is nothing to confirm: no failing level above the
ceiling, a run that stopped early, a target Plimsoll did not pin (`target.url`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from plimsoll.api.confirmation import Confirmation, Counterfactual, Finding
from plimsoll.api.status import Ceiling
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.api.target import PodShape

RESOURCES = (LimitedBy.CPU, LimitedBy.MEMORY)


def doubled(shape: PodShape, resource: LimitedBy) -> PodShape:
    """`shape` with one resource twice as large, the other as it was."""
    if resource is LimitedBy.CPU:
        return shape.model_copy(update={"cpu": shape.cpu * 2})
    return shape.model_copy(update={"memory": shape.memory * 2})


def why_not_planned(ceiling: Ceiling, shape: PodShape | None) -> str | None:
    """Why this ceiling gets no experiment, or None when it gets one."""
    if shape is None:
        return "the target was not pinned to a shape (target.url): nothing to double"
    if ceiling.every_level_passed:
        return "every level passed: there is no failing level to run again"
    if not ceiling.complete or ceiling.high is None:
        return "the search stopped before it found a failing level above the ceiling"
    if ceiling.level is None:
        return "no level passed: there is no ceiling to run past"
    if ceiling.limited_by is LimitedBy.UNKNOWN:
        return "no server-side figures named a limit to test"
    return None


# How far above the ceiling the experiment runs (`experiment_level`).
CLEARLY_OVER = 1.25  # over the first failing level: the target at its shape fails clearly
WELL_UNDER_TWICE = 1.6  # at most this times the ceiling: twice the binding resource passes


def experiment_level(ceiling: Ceiling) -> int:
    """The level the experiment runs: the first failing level, raised by a quarter where
    that stays within 1.6 times the ceiling. A fine search's failing level is within noise
    of the ceiling (5% over it), so there the trial with the other resource doubled, whose
    answer must be "fail", could pass by chance, and the finding said "both bind" (a
    CPU-bound target at 0.5 CPU, failing level 26 for a capacity of 25, make truth).
    A quarter over, the target at its shape fails clearly; below 1.6 times the ceiling, the
    target with its binding resource doubled, about twice the capacity, runs at most 80%
    loaded and passes. A coarse search's failing level (35 over a ceiling of 10) is
    already clear of both, and is run as it is."""
    assert ceiling.high is not None
    assert ceiling.level is not None
    raised = min(
        math.ceil(ceiling.high * CLEARLY_OVER), math.floor(ceiling.level * WELL_UNDER_TWICE)
    )
    return max(ceiling.high, raised)


def planned_trials(ceiling: Ceiling, shape: PodShape) -> list[Counterfactual]:
    """The experiment's trials, the named resource's first: each at `experiment_level`
    with one resource doubled. Empty when `why_not_planned` says so."""
    if why_not_planned(ceiling, shape) is not None or ceiling.high is None:
        return []
    order = sorted(RESOURCES, key=lambda r: r is not ceiling.limited_by)
    level = experiment_level(ceiling)
    return [Counterfactual(doubled=r, level=level, shape=doubled(shape, r)) for r in order]


def unfit(trial: Counterfactual, room_cpu: float | None, room_memory: int | None) -> str | None:
    """Why a trial's doubled shape cannot be run where the target runs (the host's free
    cores and memory, or the namespace's quota), or None where it fits."""
    shape = trial.shape
    if room_cpu is not None and shape.cpu > room_cpu:
        return (
            f"{shape.cpu:g} CPU (the {trial.doubled.value} doubled) does not fit: "
            f"{room_cpu:g} CPU is free for the target"
        )
    if room_memory is not None and shape.memory > room_memory:
        return (
            f"{shape.memory / 2**20:,.0f} MiB (the {trial.doubled.value} doubled) does not fit: "
            f"{room_memory / 2**20:,.0f} MiB is free for the target"
        )
    return None


def not_run(ceiling: Ceiling, reason: str) -> Confirmation:
    """The finding when the experiment was not run: the rule's limit, inferred."""
    return Confirmation(
        finding=Finding.INFERRED, named=ceiling.limited_by, found=ceiling.limited_by, reason=reason
    )


def finding(ceiling: Ceiling, trials: Sequence[Counterfactual]) -> Confirmation:
    """What the trials, with their verdicts, say of the limit the search named."""
    named = ceiling.limited_by
    verdicts: Mapping[LimitedBy, Verdict | None] = {t.doubled: t.verdict for t in trials}
    unjudged = [r.value for r in RESOURCES if verdicts.get(r) not in (Verdict.PASS, Verdict.FAIL)]
    if unjudged:
        return Confirmation(
            finding=Finding.INFERRED,
            named=named,
            found=named,
            trials=list(trials),
            reason=f"the trial with {' and '.join(unjudged)} doubled was neither pass nor fail",
        )
    relieved = [r for r in RESOURCES if verdicts[r] is Verdict.PASS]
    if len(relieved) == 2:
        return Confirmation(
            finding=Finding.INFERRED,
            named=named,
            found=named,
            trials=list(trials),
            reason="doubling either resource passed: both bind near the ceiling",
        )
    found = relieved[0] if relieved else LimitedBy.NEITHER
    return Confirmation(
        finding=Finding.CONFIRMED if found is named else Finding.CONTRADICTED,
        named=named,
        found=found,
        trials=list(trials),
    )


def phrase(confirmation: Confirmation, unit: str) -> str:
    """The report's words for it, which the sentence puts in the limit's parentheses:
    'confirmed: at 2× CPU 350 users passed, at 2× memory it failed'."""
    trials = {t.doubled: t for t in confirmation.trials}
    level = next(iter(trials.values())).level if trials else None
    if confirmation.finding is Finding.INFERRED:
        return f"inferred: {confirmation.reason}" if confirmation.reason else "inferred"
    found = confirmation.found
    if found is LimitedBy.NEITHER:
        seen = f"at 2× CPU and at 2× memory {level:,} {unit} still failed"
    else:
        other = LimitedBy.MEMORY if found is LimitedBy.CPU else LimitedBy.CPU
        seen = f"at 2× {_word(found)} {level:,} {unit} passed, at 2× {_word(other)} it failed"
    if confirmation.finding is Finding.CONFIRMED:
        return f"confirmed: {seen}"
    return f"the rule named {confirmation.named.value}, the experiment {found.value}: {seen}"


def _word(resource: LimitedBy) -> str:
    return "CPU" if resource is LimitedBy.CPU else "memory"
