"""The HPA advice, worked by hand (issue 57): pods of 100 rps each, using 0.9 of their
1-CPU request at that ceiling; the HPA acts 30 s after the load grows and a pod serves
20 s after that, so nothing new serves for 50 s."""

from __future__ import annotations

import pytest

from plimsoll.decide.hpa_advice import Burst, advise


def _advice(burst: Burst, cpu_at_ceiling: float = 0.9):
    return advise(burst, per_pod=100, cpu_at_ceiling=cpu_at_ceiling, cpu_request=1.0, start_s=20)


def test_a_ramp_the_headroom_absorbs() -> None:
    # 200 -> 1,000 rps over 400 s: 2 rps/s, 100 rps in the 50 s lag; at the base,
    # u = 200 / 300 = 67% of the ceiling (60% of the CPU request at 0.9 used).
    advice = _advice(Burst(base=200, peak=1000, ramp_s=400))
    assert advice.lag_s == 50
    assert advice.share_of_ceiling == pytest.approx(0.667, abs=1e-3)
    assert advice.cpu_utilization == 60
    assert advice.min_replicas == 3  # 300 rps at the ceiling
    assert advice.max_replicas == 16  # ceil(1,000 / 66.7) = 15, one spare
    assert advice.scale_up_pods == 4  # 2 rps/s x 15 s / 66.7 = 1 pod: the default 4
    assert advice.load_per_pod == pytest.approx(66.667, abs=1e-3)
    assert not advice.cpu_is_weak


def test_a_step_burst_is_met_by_pods_already_running() -> None:
    # 200 -> 1,000 at once: the whole 800 arrives within the lag. Holding pods at
    # 200 / 1,000 = 20% would do; that is under 30%, so 30% and 10 pods at the base.
    advice = _advice(Burst(base=200, peak=1000, ramp_s=0))
    assert advice.share_of_ceiling == 0.3
    assert advice.min_replicas == 10
    assert advice.max_replicas == 35  # ceil(1,000 / 30) = 34, one spare
    assert any("idle pods" in r for r in advice.reasons)


def test_a_steep_ramp_needs_a_faster_scale_up_policy() -> None:
    # 1,000 -> 5,000 over 60 s: 66.7 rps/s, 3,333 in the lag: u = 1,000 / 4,333 = 23%,
    # raised to 30%; per 15 s period the slope needs 1,000 / 30 = 34 pods.
    advice = _advice(Burst(base=1000, peak=5000, ramp_s=60))
    assert advice.share_of_ceiling == 0.3
    assert advice.scale_up_pods == 34
    assert advice.min_replicas == 44  # 4,333 rps at the ceiling


def test_a_target_that_uses_little_cpu_is_told_to_scale_on_load() -> None:
    advice = _advice(Burst(base=200, peak=1000, ramp_s=400), cpu_at_ceiling=0.2)
    assert advice.cpu_is_weak
    assert advice.cpu_utilization == 13  # 67% of the ceiling x 20% of the request
    assert any("scale on load per pod" in r for r in advice.reasons)


def test_nonsense_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        advise(Burst(1, 2, 1), per_pod=0, cpu_at_ceiling=1, cpu_request=1, start_s=1)
    with pytest.raises(ValueError, match="base up to its peak"):
        _advice(Burst(base=500, peak=100, ramp_s=10))
