"""The HPA a flight recommends, worked by hand: replicas of 25 requests/s each, the
profile of `tests/run/test_flight_local.py` (12 requests/s, then 45 at once), a
controller syncing every 5 s and a replica that took 1.2 s to serve."""

from __future__ import annotations

import pytest

from plimsoll.api.autoscale import (
    Autoscaler,
    Behavior,
    PolicyType,
    ProfilePhase,
    RecommendedHpa,
    ScalingRules,
    UtilizationReading,
)
from plimsoll.decide.flight import FlightSlice
from plimsoll.decide.flight_advice import (
    NoRecommendation,
    cpu_at_ceiling,
    recommend,
    steepest_rise,
)
from plimsoll.decide.hpa_advice import Burst

PER_POD = 25.0
BAR_MS = 300.0
PROFILE = [
    ProfilePhase(level=12, hold=8),
    ProfilePhase(level=45, hold=16),
    ProfilePhase(level=12, ramp=30, hold=10),
]
HPA = Autoscaler(
    min_replicas=1,
    max_replicas=4,
    target_cpu_utilization=60,
    sync_period=5,
    behavior=Behavior(scale_down=ScalingRules(stabilization_window_seconds=60)),
)


def _slices(ready: int = 1) -> list[FlightSlice]:
    """One slice a second: 12 carried for 8 s, then 45."""
    return [
        FlightSlice(
            at=t,
            seconds=1,
            offered=12 if t < 8 else 45,
            achieved=12 if t < 8 else 45,
            p99_ms=20,
            ready=ready,
            desired=ready,
        )
        for t in range(24)
    ]


def test_the_steepest_rise_is_the_burst() -> None:
    ramp_then_step = [
        ProfilePhase(level=10, hold=5),
        ProfilePhase(level=100, ramp=60),  # 1.5/s
        ProfilePhase(level=130, ramp=0),  # a step: steeper than any ramp
    ]
    assert steepest_rise(PROFILE) == Burst(base=12, peak=45, ramp_s=0)
    assert steepest_rise(ramp_then_step) == Burst(base=100, peak=130, ramp_s=0)
    assert steepest_rise(ramp_then_step[:2]) == Burst(base=10, peak=100, ramp_s=60)
    assert steepest_rise([ProfilePhase(level=50, hold=5), ProfilePhase(level=20)]) is None


def test_the_cpu_at_the_ceiling_is_scaled_from_the_loaded_syncs() -> None:
    readings = [
        # 12/s on one replica over 0-5 s at 45% of the request: 0.45 x 25 / 12 = 0.9375
        UtilizationReading(at=5, ready=1, utilization=0.45),
        # 45/s over 15-20 s on two: 22.5 each at 86%: 0.86 x 25 / 22.5 = 0.9556
        UtilizationReading(at=20, ready=2, utilization=0.86),
        # 45/s on eight: 5.6 each, under a quarter of 25: the idle cost weighs, left out
        UtilizationReading(at=15, ready=8, utilization=0.5),
        # 12 then 45 offered over 5-10 s to one replica (25): short of capacity, its CPU
        # all used whatever it carried; left out
        UtilizationReading(at=10, ready=1, utilization=1.0),
    ]
    share = cpu_at_ceiling(readings, _slices(), per_pod=PER_POD, sync_s=5, bar_ms=BAR_MS)
    assert share == pytest.approx((0.9375 + 0.86 * 25 / 22.5) / 2)
    assert cpu_at_ceiling(readings[2:], _slices(), per_pod=PER_POD, sync_s=5, bar_ms=BAR_MS) is None


def test_a_sync_through_a_backlog_is_left_out() -> None:
    # Over 15-20 s two replicas work off a backlog: 40 of 45 answered, p99 900 ms, calls
    # timing out, all their CPU used: 1.0 x 25 / 20 would read 1.25 of the request.
    working_off = _slices(ready=2)
    for t in range(15, 20):
        working_off[t] = FlightSlice(t, 1, 45, 40, 900, 2, 2, 45, 5)
    reading = [UtilizationReading(at=20, ready=2, utilization=1.0)]
    kwargs = {"per_pod": PER_POD, "sync_s": 5.0, "bar_ms": BAR_MS}
    assert cpu_at_ceiling(reading, working_off, **kwargs) is None
    # A reading over a steady period counts (0.45 x 25 / 22.5 = 0.5), and never
    # past the request, which is the replica's limit too (1.0 x 25 / 22.5 = 1.11).
    half = [UtilizationReading(at=20, ready=2, utilization=0.45)]
    assert cpu_at_ceiling(half, _slices(ready=2), **kwargs) == pytest.approx(0.5)
    assert cpu_at_ceiling(reading, _slices(ready=2), **kwargs) == 1.0


def test_a_step_burst_is_met_with_replicas_running_and_a_low_target() -> None:
    readings = [UtilizationReading(at=5, ready=1, utilization=0.45)]  # 0.9375 at the ceiling
    advice = recommend(
        HPA, PROFILE, _slices(), readings, [0.8, 1.2], per_pod=PER_POD, bar_ms=BAR_MS
    )
    assert isinstance(advice, RecommendedHpa)
    # The lag: two syncs (10 s) and the slowest start (1.2 s); the whole 33 of the step
    # arrives within it. 12 / 45 = 27% of the ceiling would absorb it: under 30%, so 30%
    # and replicas for 45 at the ceiling from the start.
    assert advice.lag_s == pytest.approx(11.2)
    assert advice.pod_start_s == 1.2
    assert advice.share_of_ceiling == 0.3
    assert advice.cpu_at_ceiling == pytest.approx(0.938, abs=1e-3)
    settings = advice.autoscaler
    assert settings.min_replicas == 2  # ceil(45 / 25)
    assert settings.max_replicas == 7  # ceil(45 / 7.5) = 6, one spare
    assert settings.target_cpu_utilization == 28  # 30% of a ceiling at 93.75% of the CPU
    assert settings.sync_period == 5
    assert settings.behavior is not None
    up = settings.behavior.scale_up
    assert up is not None
    assert up.policies is not None
    assert [(p.type, p.value) for p in up.policies] == [
        (PolicyType.PODS, 4),
        (PolicyType.PERCENT, 100),
    ]
    assert up.stabilization_window_seconds == 0
    assert settings.behavior.scale_down == HPA.behavior.scale_down  # kept as flown
    assert any("idle pods" in r for r in advice.reasons)


def test_no_recommendation_without_a_start_a_loaded_sync_or_a_rise() -> None:
    loaded = [UtilizationReading(at=5, ready=1, utilization=0.45)]
    idle = [UtilizationReading(at=5, ready=4, utilization=0.1)]  # 3 each: under a quarter
    cases = [
        (PROFILE, loaded, [], "start time was not measured"),
        (PROFILE, idle, [1.0], "CPU at the ceiling was not measured"),
        (PROFILE[:1], loaded, [1.0], "never rises"),
    ]
    for profile, readings, starts, words in cases:
        advice = recommend(
            HPA, profile, _slices(), readings, starts, per_pod=PER_POD, bar_ms=BAR_MS
        )
        assert isinstance(advice, NoRecommendation)
        assert words in advice.reason
