"""The simulated HPA decides as the Kubernetes documentation and controller say (issue 57).

Each case's answer is worked by hand from the documented rules, not from this module:
desired = ceil(current x metric / target) with a 10% tolerance; unready pods as idle when
scaling up; missing figures as idle up and at target down; the scale-up window's lowest
and the scale-down window's highest proposal; the policies' rate from the replicas the
period started with (Percent rounded up adding, down removing), Max or Min of them; then
min/maxReplicas.
"""

from __future__ import annotations

import pytest

from plimsoll.decide.hpa import (
    DEFAULT_SCALE_DOWN,
    DEFAULT_SCALE_UP,
    Hpa,
    Memory,
    Pods,
    Policy,
    PolicyKind,
    Rules,
    Select,
    proposal,
    sync,
)

HPA = Hpa(min_replicas=1, max_replicas=20, target_utilization=0.5)


@pytest.mark.parametrize(
    ("current", "pods", "expected", "why"),
    [
        (2, Pods([0.9, 0.9]), 4, "ratio 1.8: ceil(1.8 x 2) = 4"),
        (4, Pods([0.52, 0.54, 0.5, 0.5]), 4, "ratio 1.03: within the 10% tolerance"),
        (4, Pods([0.1, 0.1, 0.1, 0.1]), 1, "ratio 0.2: ceil(0.2 x 4) = 1"),
        (3, Pods([1.0, 1.0], unready=1), 4, "unready idle: mean 0.667, ratio 1.33, ceil(4) = 4"),
        (3, Pods([0.6, 0.6], unready=1), 3, "unready idle: ratio 0.8 reverses the direction"),
        (3, Pods([0.1, 0.1], missing=1), 2, "missing at target: mean 0.233, ceil(1.4) = 2"),
        (3, Pods([0.9, 0.9], missing=1), 4, "missing idle: mean 0.6, ratio 1.2, ceil(3.6) = 4"),
        (3, Pods([]), 3, "no figures: no change"),
    ],
)
def test_the_metric_proposes_as_the_documentation_computes(
    current: int, pods: Pods, expected: int, why: str
) -> None:
    assert proposal(HPA, current, pods) == expected, why


def test_scale_up_is_limited_by_the_larger_default_policy_and_then_max_replicas() -> None:
    # 1 pod at 500%: the metric asks 10; 100% or 4 pods per 15 s, the larger: 1 + 4 = 5.
    replicas, memory = sync(HPA, 0.0, 1, Pods([5.0]), Memory())
    assert replicas == 5
    # Within the same 15 s the period started at 1: still at most 5.
    assert sync(HPA, 10.0, 5, Pods([1.0] * 5), memory)[0] == 5
    # A new period from 5: 100% allows 10, 4 pods allow 9: 10.
    assert sync(HPA, 16.0, 5, Pods([1.0] * 5), memory)[0] == 10
    small = Hpa(min_replicas=1, max_replicas=3, target_utilization=0.5)
    assert sync(small, 0.0, 1, Pods([5.0]), Memory())[0] == 3  # maxReplicas


def test_min_selects_the_policy_allowing_the_least_and_disabled_none() -> None:
    up = Rules(0, (Policy(PolicyKind.PODS, 1, 60), Policy(PolicyKind.PERCENT, 50, 60)), Select.MIN)
    careful = Hpa(min_replicas=1, max_replicas=20, target_utilization=0.5, scale_up=up)
    # 4 pods at 200% ask 16; +1 pod or +50% (6), the lesser: 5.
    assert sync(careful, 0.0, 4, Pods([1.0] * 4), Memory())[0] == 5
    frozen = Hpa(1, 20, 0.5, scale_up=Rules(0, up.policies, Select.DISABLED))
    assert sync(frozen, 0.0, 4, Pods([1.0] * 4), Memory())[0] == 4


def test_scale_down_waits_out_its_window_of_the_highest_proposal() -> None:
    memory = Memory()
    replicas = 8
    # Busy, then quiet: the quiet proposals (2) stay under the window's highest (8).
    replicas, memory = sync(HPA, 0.0, replicas, Pods([0.5] * 8), memory)
    assert replicas == 8
    for now in (15.0, 150.0, 285.0):
        replicas, memory = sync(HPA, now, replicas, Pods([0.1] * 8), memory)
        assert replicas == 8, now
    # 300 s after the busy sync it has left the window: down to 2 at once (100% per 15 s).
    replicas, memory = sync(HPA, 301.0, replicas, Pods([0.1] * 8), memory)
    assert replicas == 2


def test_a_scale_down_policy_removes_at_most_its_share_per_period() -> None:
    down = Rules(0, (Policy(PolicyKind.PERCENT, 50, 60), Policy(PolicyKind.PODS, 1, 60)))
    hpa = Hpa(min_replicas=2, max_replicas=20, target_utilization=0.5, scale_down=down)
    # 9 pods nearly idle ask 1; 50% of 9 (int(4.5) = 4 kept... 9 x 0.5 = 4.5 -> 4) or -1
    # (8); Max allows the most change: 4.
    replicas, memory = sync(hpa, 0.0, 9, Pods([0.01] * 9), Memory())
    assert replicas == 4
    # Within the minute, counted from the 9 it started with: no further.
    assert sync(hpa, 30.0, replicas, Pods([0.01] * 4), memory)[0] == 4
    # The next minute, from 4: 2, and minReplicas holds it there.
    replicas, memory = sync(hpa, 61.0, replicas, Pods([0.01] * 4), memory)
    assert replicas == 2


def test_a_count_outside_the_bounds_is_brought_in_whatever_the_metric() -> None:
    bounded = Hpa(min_replicas=3, max_replicas=6, target_utilization=0.5)
    assert sync(bounded, 0.0, 1, Pods([0.0]), Memory())[0] == 3
    assert sync(bounded, 0.0, 9, Pods([1.0] * 9), Memory())[0] == 6


def test_the_defaults_are_the_apis() -> None:
    assert (
        Rules(0, (Policy(PolicyKind.PERCENT, 100, 15), Policy(PolicyKind.PODS, 4, 15)), Select.MAX)
        == DEFAULT_SCALE_UP
    )
    assert Rules(300, (Policy(PolicyKind.PERCENT, 100, 15),), Select.MAX) == DEFAULT_SCALE_DOWN
    assert (HPA.tolerance, HPA.sync_seconds) == (0.1, 15.0)
