"""The sizing rule of `generators.replicas: auto` (plimsoll.decide.generator_count)."""

from __future__ import annotations

from plimsoll.api.generators import Generators
from plimsoll.api.step import StepRecord, Verdict
from plimsoll.decide.generator_count import cores_per_unit, generators_for


def step(
    level: int,
    cores: float | None,
    *,
    peak: float | None = None,
    generators: int = 1,
    verdict: Verdict = Verdict.PASS,
) -> StepRecord:
    return StepRecord(
        index=0,
        level=level,
        duration=10.0,
        verdict=verdict,
        generators=generators,
        generator_cores=cores,
        generator_peak_cpu=peak if peak is not None else (cores or 0.0) / generators,
    )


AUTO = Generators(replicas="auto")  # maxCpu 85%: each generator kept under 42.5%


def test_before_any_step_is_measured_the_count_stays() -> None:
    assert generators_for(1000, [], 1, AUTO).count == 1
    assert generators_for(1000, [step(100, None)], 3, AUTO).count == 3


def test_next_level_is_sized_from_the_first_steps_cpu_per_unit() -> None:
    # 0.2 cores at 100 users: 0.002 a user; 400 users need 0.8 cores, two under 42.5%.
    plan = generators_for(400, [step(100, 0.2)], 1, AUTO)
    assert plan.count == 2
    assert "1 -> 2 generators" in plan.reason
    # 1,000 users: 2 cores, five processes (4.7 rounded up).
    assert generators_for(1000, [step(100, 0.2)], 1, AUTO).count == 5


def test_a_level_the_current_count_carries_changes_nothing() -> None:
    plan = generators_for(200, [step(100, 0.2)], 1, AUTO)
    assert (plan.count, plan.reason) == (1, "")


def test_never_scales_down() -> None:
    assert generators_for(50, [step(1000, 2.0, generators=5)], 5, AUTO).count == 5


def test_the_most_costly_step_per_unit_sizes_the_next() -> None:
    records = [step(100, 0.1), step(200, 0.6)]
    assert cores_per_unit(records) == 0.6 / 200
    assert generators_for(400, records, 1, AUTO).count == 3  # 1.2 cores / 0.425


def test_a_saturated_step_is_retried_with_more_generators_than_it_had() -> None:
    # The saturated generator measured only what it could do (0.9 cores), less than the
    # load needed; the figure alone asks for 3, and at least one more than 1 it gets.
    saturated = step(1000, 0.9, peak=0.9, verdict=Verdict.INVALID)
    assert generators_for(1000, [saturated], 1, AUTO).count == 3
    # Where the figure would not grow the count, the saturation still adds one.
    tight = Generators(replicas="auto", max_cpu=0.5)
    at_edge = step(1000, 0.24, peak=0.6, generators=1, verdict=Verdict.INVALID)
    plan = generators_for(1000, [at_edge], 1, tight)
    assert plan.count == 2
    assert "saturated" in plan.reason


def test_the_count_is_capped_at_max_replicas_and_says_so() -> None:
    capped = Generators(replicas="auto", max_replicas=4)
    plan = generators_for(10_000, [step(100, 0.2)], 1, capped)
    assert plan.count == 4
    assert "capped at maxReplicas 4" in plan.reason
