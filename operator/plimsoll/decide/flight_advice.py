"""The HPA a flight recommends (issue 57, `autoscale.recommend`): `hpa_advice` fed with
what the flight measured, written as `target.autoscaler` so a second flight can prove it.

- **The burst** is the profile's steepest rise: from the level before that phase to its
  own, over its ramp (0: a step).
- **The lag** is the controller's reaction plus the slowest replica start the flight
  measured. The reaction is two sync periods: the CPU the controller reads is the mean
  since its last sync, so a step in load shows in full only one period after it began,
  and the sync that acts on it may come a period later still.
- **The CPU at the ceiling** (what turns a share of `perPod` into `averageUtilization`)
  is read from the controller's own readings: each sync's mean utilization over the load
  each ready replica carried in the period before it, scaled to `perPod`; the median of
  the syncs where a replica carried at least `LOADED_SHARE` of `perPod` (below it the
  process's idle cost weighs too much in the ratio) and was steady through the period:
  never short of capacity and within the bar (failed calls counted as slower than any
  answer, as `decide.flight` counts them). Otherwise it spends its CPU
  queueing, throttled, or answering calls whose clients gave up, whatever it carries: a
  15 s-sync flight, its readings taken through its backlog, read 1.43 of the request.

No replica started, or no sync read a loaded replica: nothing to time a start by or to
scale CPU by, and no recommendation, with the reason. Pure.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.autoscale import (
    Autoscaler,
    Behavior,
    PolicyType,
    ProfilePhase,
    RecommendedHpa,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    UtilizationReading,
)
from plimsoll.decide.flight import FlightSlice, over_bar
from plimsoll.decide.hpa_advice import POLICY_PERIOD_S, Burst, HpaAdvice, advise

LOADED_SHARE = 0.25  # of perPod: a sync's reading below it says more about idle cost
MOST_REPLICAS = 32  # what target.autoscaler allows (the local platform's room)


@dataclass(frozen=True)
class NoRecommendation:
    reason: str


def steepest_rise(profile: Sequence[ProfilePhase]) -> Burst | None:
    """The profile's steepest rise as a burst, or None when the load never rises."""
    rises = [
        Burst(base=before.level, peak=phase.level, ramp_s=phase.ramp)
        for before, phase in itertools.pairwise(profile)
        if phase.level > before.level
    ]
    if not rises:
        return None
    return max(rises, key=lambda b: (b.peak - b.base) / b.ramp_s if b.ramp_s > 0 else float("inf"))


def cpu_at_ceiling(
    readings: Sequence[UtilizationReading],
    slices: Sequence[FlightSlice],
    *,
    per_pod: float,
    sync_s: float,
    bar_ms: float,
) -> float | None:
    """The CPU a replica uses at `per_pod`, a share of its request; None when no sync read
    steady replicas carrying `LOADED_SHARE` of it (steady: never short of capacity, every
    slice of the period within the p99 bar `bar_ms`)."""
    ratios = []
    for reading in readings:
        start = reading.at - sync_s
        window = [
            s for s in slices if s.at >= start - 1e-9 and s.at + s.seconds <= reading.at + 1e-9
        ]
        seconds = sum(s.seconds for s in window)
        if seconds <= 0 or reading.ready <= 0:
            continue
        carried = sum(s.achieved * s.seconds for s in window) / seconds / reading.ready
        # Short of capacity, or working off a backlog, a replica's CPU is spent whatever it
        # carries (queueing, throttled, answering calls whose clients gave up): its ratio
        # says nothing about its cost at the ceiling.
        steady = all(
            s.offered <= reading.ready * per_pod and not over_bar(s, bar_ms) for s in window
        )
        if carried >= LOADED_SHARE * per_pod and steady:
            ratios.append(reading.utilization * per_pod / carried)
    if not ratios:
        return None
    # A replica's limit is its request (Plimsoll pins requests == limits): scaled up from
    # a half-loaded sync, its fixed cost can read past 1.0 (1.03 at 12 of 25 requests/s),
    # which it cannot use at its ceiling.
    return min(1.0, statistics.median(ratios))


def recommend(
    autoscaler: Autoscaler,
    profile: Sequence[ProfilePhase],
    slices: Sequence[FlightSlice],
    readings: Sequence[UtilizationReading],
    starts: Sequence[float],
    *,
    per_pod: float,
    bar_ms: float,
) -> RecommendedHpa | NoRecommendation:
    """The settings that hold the profile's steepest rise, from what one flight measured
    under `autoscaler`."""
    burst = steepest_rise(profile)
    if burst is None:
        return NoRecommendation("the profile never rises: there is no burst to absorb")
    if not starts:
        return NoRecommendation(
            "no replica started during the flight: a pod's start time was not measured"
        )
    cpu_share = cpu_at_ceiling(
        readings, slices, per_pod=per_pod, sync_s=autoscaler.sync_period, bar_ms=bar_ms
    )
    if cpu_share is None:
        return NoRecommendation(
            f"no sync read steady replicas carrying {LOADED_SHARE:.0%} of perPod: the CPU at "
            "the ceiling was not measured"
        )
    start_s = max(starts)
    advice = advise(
        burst,
        per_pod=per_pod,
        cpu_at_ceiling=cpu_share,
        cpu_request=1.0,  # cpu_share is already a share of the request
        start_s=start_s,
        reaction_s=2 * autoscaler.sync_period,
    )
    settings, reasons = _as_autoscaler(autoscaler, advice)
    return RecommendedHpa(
        autoscaler=settings,
        share_of_ceiling=advice.share_of_ceiling,
        load_per_pod=advice.load_per_pod,
        lag_s=round(advice.lag_s, 1),
        pod_start_s=round(start_s, 2),
        cpu_at_ceiling=round(cpu_share, 3),
        cpu_is_weak=advice.cpu_is_weak,
        reasons=reasons,
    )


def _as_autoscaler(flown: Autoscaler, advice: HpaAdvice) -> tuple[Autoscaler, list[str]]:
    """`advice` as target.autoscaler (the flown one's sync period and scale-down kept),
    and its reasons, with one more where target.autoscaler's room cut it."""
    reasons = list(advice.reasons)
    min_replicas, max_replicas = advice.min_replicas, advice.max_replicas
    if max_replicas > MOST_REPLICAS:
        reasons.append(
            f"the peak needs {max_replicas} replicas at the target; target.autoscaler allows "
            f"{MOST_REPLICAS}"
        )
        min_replicas, max_replicas = min(min_replicas, MOST_REPLICAS), MOST_REPLICAS
    scale_up = ScalingRules(
        stabilization_window_seconds=0,
        select_policy=SelectPolicy.MAX,
        policies=[
            ScalingPolicy(
                type=PolicyType.PODS, value=advice.scale_up_pods, period_seconds=POLICY_PERIOD_S
            ),
            ScalingPolicy(type=PolicyType.PERCENT, value=100, period_seconds=POLICY_PERIOD_S),
        ],
    )
    scale_down = flown.behavior.scale_down if flown.behavior else None
    settings = flown.model_copy(
        update={
            "min_replicas": min_replicas,
            "max_replicas": max_replicas,
            "target_cpu_utilization": min(100, advice.cpu_utilization),
            "behavior": Behavior(scale_up=scale_up, scale_down=scale_down),
        }
    )
    return settings, reasons
