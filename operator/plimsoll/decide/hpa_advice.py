"""The HPA settings that absorb a given growth of load, from the per-pod ceiling and how
long a new pod takes to serve (issue 57, the recommendation a flight test then proves).

An HPA holding its pods at a share `u` of their ceiling leaves `1 - u` of headroom. When
the load starts to grow, nothing new serves for the lag `L`: the controller's reaction
(its sync period and the metric's delay) plus a pod's start (scheduled, pulled, ready).
During `L` the load grows by `G` = the burst's slope × L, or the whole burst when it is
steeper than that (a step). The pods that run when it starts must carry it meanwhile:

    n × ceiling ≥ load + G, with n × ceiling × u = load  =>  u ≤ load / (load + G)

The tightest moment is the start of the burst, at the base load. So:

- **target**: `u = base / (base + G)`, within 30%..80% of the ceiling (below 30% an
  HPA mostly pays for idle pods; above 80% a step of noise crosses the bar);
- **minReplicas**: enough to carry `base + G` at the ceiling, so the base pods absorb
  the first lag even where `u` was raised to 30%;
- **maxReplicas**: the peak at the target share, one spare;
- **scale-up**: a `Pods` policy adding, each 15 s period, what the slope needs in that
  time at the target share (never fewer than the API's default 4).

The HPA reads CPU as a share of the pod's request: the target share of the ceiling is
turned into CPU with the CPU the pod used at its ceiling. A target that uses little CPU
at its ceiling (memory- or latency-bound) gives the CPU metric little to read; the
advice then says to scale on load per pod (a Prometheus metric) and gives its target.
Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LOWEST_SHARE = 0.3  # of the ceiling: below it the HPA mostly pays for idle pods
HIGHEST_SHARE = 0.8  # above it a step of noise crosses the bar before a pod is added
WEAK_CPU_SIGNAL = 0.5  # CPU at the ceiling under half the request: scale on load instead
POLICY_PERIOD_S = 15
DEFAULT_POLICY_PODS = 4  # the API's default scale-up: 4 pods (or 100%) per 15 s


@dataclass(frozen=True)
class Burst:
    """The load the settings must absorb: from `base` to `peak` over `ramp_s` (0: a step)."""

    base: float
    peak: float
    ramp_s: float

    def growth_within(self, seconds: float) -> float:
        """How much the load grows in `seconds` from the burst's start."""
        if self.ramp_s <= 0:
            return self.peak - self.base
        return min(self.peak - self.base, (self.peak - self.base) / self.ramp_s * seconds)


@dataclass(frozen=True)
class HpaAdvice:
    share_of_ceiling: float  # the load per pod the HPA should hold, as a share of the ceiling
    cpu_utilization: int  # the same as averageUtilization of the CPU request, percent
    min_replicas: int
    max_replicas: int
    scale_up_pods: int  # per POLICY_PERIOD_S
    load_per_pod: float  # the same target as load per pod, for a Prometheus metric
    lag_s: float
    reasons: list[str] = field(default_factory=list)
    cpu_is_weak: bool = False  # prefer load per pod to CPU


def advise(
    burst: Burst,
    *,
    per_pod: float,
    cpu_at_ceiling: float,
    cpu_request: float,
    start_s: float,
    reaction_s: float = 30.0,
) -> HpaAdvice:
    """The settings for `burst`, for pods that carry `per_pod` each at `cpu_at_ceiling`
    cores of a `cpu_request`, and take `start_s` to serve once the HPA asked for them
    (`reaction_s`: its sync period and the metric's delay, 15 s each by default)."""
    if per_pod <= 0 or cpu_request <= 0:
        raise ValueError("the per-pod ceiling and the CPU request must be positive")
    if not 0 <= burst.base <= burst.peak:
        raise ValueError("a burst goes from a base up to its peak")
    lag = reaction_s + start_s
    growth = burst.growth_within(lag)
    reasons = [
        f"a new pod serves {lag:.0f} s after the load starts to grow ({reaction_s:.0f} s for "
        f"the HPA to see it and act, {start_s:.1f} s to start); meanwhile the load grows by "
        f"{growth:,.0f}"
    ]
    wanted = burst.base / (burst.base + growth) if burst.base + growth > 0 else HIGHEST_SHARE
    share = min(max(wanted, LOWEST_SHARE), HIGHEST_SHARE)
    if wanted < LOWEST_SHARE:
        reasons.append(
            f"holding pods at {wanted:.0%} of their ceiling would absorb it, which pays for "
            f"idle pods: {LOWEST_SHARE:.0%} and more pods at the base instead"
        )
    min_replicas = max(1, math.ceil((burst.base + growth) / per_pod - 1e-9))
    max_replicas = math.ceil(burst.peak / (per_pod * share) - 1e-9) + 1
    slope = (burst.peak - burst.base) / burst.ramp_s if burst.ramp_s > 0 else 0.0
    per_period = math.ceil(slope * POLICY_PERIOD_S / (per_pod * share) - 1e-9)
    cpu_share = cpu_at_ceiling / cpu_request
    weak = cpu_share < WEAK_CPU_SIGNAL
    if weak:
        reasons.append(
            f"at its ceiling the pod uses {cpu_share:.0%} of its CPU request: CPU says "
            "little about its load; scale on load per pod (a Prometheus metric) instead"
        )
    return HpaAdvice(
        share_of_ceiling=round(share, 3),
        cpu_utilization=max(1, round(share * cpu_share * 100)),
        min_replicas=min_replicas,
        max_replicas=max(max_replicas, min_replicas),
        scale_up_pods=max(DEFAULT_POLICY_PODS, per_period),
        load_per_pod=round(per_pod * share, 3),
        lag_s=lag,
        reasons=reasons,
        cpu_is_weak=weak,
    )
