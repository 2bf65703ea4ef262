"""The counterfactual experiment's plan and its reading (issue 51, item 2): pure."""

from __future__ import annotations

import pytest

from plimsoll.api.confirmation import Counterfactual, Finding
from plimsoll.api.status import Ceiling
from plimsoll.api.step import LimitedBy, Verdict
from plimsoll.api.target import PodShape
from plimsoll.decide.confirmation import (
    doubled,
    experiment_level,
    finding,
    not_run,
    phrase,
    planned_trials,
    unfit,
    why_not_planned,
)

MIB = 2**20
SHAPE = PodShape(cpu=0.5, memory=512 * MIB)
CPU, MEMORY, NEITHER = LimitedBy.CPU, LimitedBy.MEMORY, LimitedBy.NEITHER
PASS, FAIL = Verdict.PASS, Verdict.FAIL


def ceiling(limited_by: LimitedBy = CPU, **changes: object) -> Ceiling:
    fields: dict[str, object] = {
        "level": 300,
        "unit": "users",
        "low": 300,
        "high": 350,
        "limited_by": limited_by,
        "complete": True,
    }
    return Ceiling.model_validate({**fields, **changes})


def test_doubling_one_resource_leaves_the_other() -> None:
    assert doubled(SHAPE, CPU) == PodShape(cpu=1.0, memory=512 * MIB)
    assert doubled(SHAPE, MEMORY) == PodShape(cpu=0.5, memory=1024 * MIB)


@pytest.mark.parametrize("named", [CPU, MEMORY, NEITHER])
def test_the_plan_runs_clear_of_the_ceiling_named_resource_first(named: LimitedBy) -> None:
    trials = planned_trials(ceiling(named), SHAPE)
    # A quarter over the failing level 350 (438), within 1.6x the ceiling of 300 (480).
    assert [t.level for t in trials] == [438, 438]
    first = MEMORY if named is MEMORY else CPU  # neither: CPU, then memory
    assert [t.doubled for t in trials] == [first, CPU if first is MEMORY else MEMORY]
    assert all(t.shape == doubled(SHAPE, t.doubled) for t in trials)
    assert all(t.verdict is None for t in trials)


@pytest.mark.parametrize(
    ("changes", "shape", "reason"),
    [
        ({}, None, "not pinned"),
        ({"every_level_passed": True, "complete": False, "high": None}, SHAPE, "every level"),
        ({"complete": False}, SHAPE, "stopped before"),
        ({"high": None}, SHAPE, "stopped before"),
        ({"limited_by": LimitedBy.UNKNOWN}, SHAPE, "no server-side figures"),
        # A flight that did not hold: its one level failed, complete, with nothing passed.
        ({"level": None, "low": None, "high": 45}, SHAPE, "no level passed"),
    ],
)
def test_nothing_to_confirm_plans_no_trial_and_says_why(
    changes: dict[str, object], shape: PodShape | None, reason: str
) -> None:
    found = ceiling(**changes)  # type: ignore[arg-type]
    why = why_not_planned(found, shape)
    assert why is not None
    assert reason in why
    if shape is not None:
        assert planned_trials(found, shape) == []
    assert not_run(found, why).finding is Finding.INFERRED


def test_a_doubled_shape_that_does_not_fit_is_refused_naming_what_is_free() -> None:
    cpu_trial, memory_trial = planned_trials(ceiling(CPU), SHAPE)
    assert unfit(cpu_trial, room_cpu=2.0, room_memory=None) is None
    assert unfit(cpu_trial, room_cpu=0.8, room_memory=None) == (
        "1 CPU (the cpu doubled) does not fit: 0.8 CPU is free for the target"
    )
    assert unfit(memory_trial, room_cpu=None, room_memory=768 * MIB) == (
        "1,024 MiB (the memory doubled) does not fit: 768 MiB is free for the target"
    )


def _run(named: LimitedBy, cpu: Verdict | None, memory: Verdict | None) -> list[Counterfactual]:
    verdicts = {CPU: cpu, MEMORY: memory}
    trials = planned_trials(ceiling(named), SHAPE)
    return [t.model_copy(update={"verdict": verdicts[t.doubled]}) for t in trials]


@pytest.mark.parametrize(
    ("named", "cpu", "memory", "expected", "found"),
    [
        (CPU, PASS, FAIL, Finding.CONFIRMED, CPU),
        (MEMORY, FAIL, PASS, Finding.CONFIRMED, MEMORY),
        (NEITHER, FAIL, FAIL, Finding.CONFIRMED, NEITHER),
        (CPU, FAIL, PASS, Finding.CONTRADICTED, MEMORY),
        (CPU, FAIL, FAIL, Finding.CONTRADICTED, NEITHER),
        (NEITHER, PASS, FAIL, Finding.CONTRADICTED, CPU),  # the LLM proxy's case
        (CPU, PASS, PASS, Finding.INFERRED, CPU),
        (CPU, PASS, Verdict.NOISY, Finding.INFERRED, CPU),
        (MEMORY, Verdict.MARGINAL, PASS, Finding.INFERRED, MEMORY),
    ],
)
def test_the_finding_follows_which_doubling_passed(
    named: LimitedBy, cpu: Verdict, memory: Verdict, expected: Finding, found: LimitedBy
) -> None:
    result = finding(ceiling(named), _run(named, cpu, memory))
    assert (result.finding, result.named, result.found) == (expected, named, found)
    assert (result.reason == "") is (expected is not Finding.INFERRED)


def test_the_report_says_what_the_experiment_saw() -> None:
    confirmed = finding(ceiling(CPU), _run(CPU, PASS, FAIL))
    assert phrase(confirmed, "users") == (
        "confirmed: at 2× CPU 438 users passed, at 2× memory it failed"
    )
    wrong = finding(ceiling(NEITHER), _run(NEITHER, PASS, FAIL))
    assert phrase(wrong, "users") == (
        "the rule named neither, the experiment cpu: at 2× CPU 438 users passed, "
        "at 2× memory it failed"
    )
    latency = finding(ceiling(NEITHER), _run(NEITHER, FAIL, FAIL))
    assert phrase(latency, "rps") == ("confirmed: at 2× CPU and at 2× memory 438 rps still failed")
    unsure = finding(ceiling(CPU), _run(CPU, PASS, Verdict.NOISY))
    assert phrase(unsure, "users") == (
        "inferred: the trial with memory doubled was neither pass nor fail"
    )


@pytest.mark.parametrize(
    ("level", "high", "run_at", "why"),
    [
        (25, 26, 33, "a fine bracket: a quarter over 26, within 1.6 x 25 = 40"),
        (10, 35, 35, "a coarse one: 35 is already clear, 1.6 x 10 = 16 is below it"),
        (16, 32, 32, "the first doubling failure: a quarter over (40) passes 1.6 x 16 = 25"),
        (300, 320, 400, "a quarter over 320"),
    ],
)
def test_the_experiment_runs_where_the_shape_fails_clearly_and_twice_the_resource_passes(
    level: int, high: int, run_at: int, why: str
) -> None:
    assert experiment_level(ceiling(CPU, level=level, low=level, high=high)) == run_at, why
