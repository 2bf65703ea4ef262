"""The target's CPU and memory per unit of load (the slopes over the passing steps): the
figures the report shows and the gate remembers with each run (issue 58, item 1)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plimsoll.api.step import Judgement, ResourceUsage, StepResult, TrialKind, Verdict
from plimsoll.decide.unit_costs import Slopes, slopes

MIB = 2**20
T0 = datetime(2026, 12, 7, tzinfo=UTC)


def step(
    level: int, cpu: float | None, memory: int | None, verdict: Verdict = Verdict.PASS
) -> StepResult:
    return StepResult(
        index=0,
        level=level,
        kind=TrialKind.FULL,
        started_at=T0,
        ended_at=T0,
        duration=8.0,
        target=ResourceUsage(source="cgroup", cpu_mean_cores=cpu, memory_max_bytes=memory),
        judgement=Judgement(verdict=verdict),
    )


def test_the_slopes_over_the_passing_levels_leave_the_fixed_base_out() -> None:
    # 10 ms of CPU a request over a 0.05-core base; 64 KiB a request over 40 MiB.
    steps = [
        step(level, 0.05 + 0.010 * level, 40 * MIB + 64 * 1024 * level) for level in (10, 20, 40)
    ]
    steps.append(step(80, 0.5, 90 * MIB, Verdict.FAIL))  # a failing level is no evidence
    found = slopes(steps)
    assert found.cpu_cores == pytest.approx(0.010)
    assert found.memory_bytes == pytest.approx(64 * 1024)
    assert (found.cpu_points, found.memory_points) == (3, 3)


@pytest.mark.parametrize(
    "steps",
    [
        [],
        [step(20, 0.2, MIB)],  # one level: no slope
        [step(20, None, None), step(40, None, None)],  # nothing measured
    ],
    ids=["no steps", "one level", "not measured"],
)
def test_without_two_measured_levels_there_is_no_slope(steps: list[StepResult]) -> None:
    found = slopes(steps)
    assert (found.cpu_cores, found.memory_bytes) == (None, None)
    assert found == Slopes(cpu_points=found.cpu_points, memory_points=found.memory_points)
