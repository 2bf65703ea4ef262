"""The Horizontal Pod Autoscaler's decisions, as Kubernetes documents them (issue 57).

A local flight test has no kube-controller-manager to scale its replicas, so Plimsoll
makes the same decisions the HPA controller makes, from the same inputs, once per sync
period (`Hpa.sync_seconds`, the controller's 15 s). Pure: the caller measures the pods
and starts or stops replicas; this module only answers "how many now".

One sync, in the controller's order:

1. **A proposal from the metric** (`proposal`): the ready pods' mean utilization over
   the target, times their count, rounded up; no change while the ratio is within the
   tolerance (10%). Pods not yet ready count as using nothing, and pods with no figure as
   using nothing when scaling up and the target when scaling down; if that reverses the
   direction, or brings the ratio within the tolerance, the count stays.
2. **Stabilization** (`Memory.stabilized`): the proposal is remembered; scaling up takes
   the lowest proposal of the scale-up window (0 s by default), scaling down the highest
   of the scale-down window (300 s by default), so one quiet sync removes nothing.
3. **Rate** (`limited`): each direction's policies bound the change per period, counted
   from the replicas the period started with (what the scale events of the period added
   or removed): `Pods` by a number, `Percent` by a share (rounded up when adding, down when
   removing); `selectPolicy` Max takes the policy that allows the most change, Min the
   least, Disabled none; then minReplicas and maxReplicas.

The defaults are the API's: scale up by 100% or 4 pods per 15 s, whichever is more;
scale down by 100% per 15 s after a 300 s window.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from plimsoll.api.autoscale import Autoscaler, ScalingRules

# Scale events older than any policy's period count for nothing (the API holds a
# policy's periodSeconds to 1,800); kept this long, then dropped.
EVENTS_KEPT_SECONDS = 3600.0


class PolicyKind(StrEnum):
    PODS = "Pods"
    PERCENT = "Percent"


class Select(StrEnum):
    MAX = "Max"  # the policy allowing the most change
    MIN = "Min"  # the policy allowing the least
    DISABLED = "Disabled"  # no change in this direction


@dataclass(frozen=True)
class Policy:
    kind: PolicyKind
    value: int
    period_seconds: int


@dataclass(frozen=True)
class Rules:
    """One direction's `behavior` (scaleUp or scaleDown)."""

    stabilization_seconds: int
    policies: tuple[Policy, ...]
    select: Select = Select.MAX


DEFAULT_SCALE_UP = Rules(0, (Policy(PolicyKind.PERCENT, 100, 15), Policy(PolicyKind.PODS, 4, 15)))
DEFAULT_SCALE_DOWN = Rules(300, (Policy(PolicyKind.PERCENT, 100, 15),))


@dataclass(frozen=True)
class Hpa:
    """An HPA on one resource's utilization (CPU, as a share of the pods' request)."""

    min_replicas: int
    max_replicas: int
    target_utilization: float  # 0.6 for averageUtilization: 60
    tolerance: float = 0.1  # the controller's --horizontal-pod-autoscaler-tolerance
    scale_up: Rules = DEFAULT_SCALE_UP
    scale_down: Rules = DEFAULT_SCALE_DOWN
    sync_seconds: float = 15.0  # --horizontal-pod-autoscaler-sync-period


@dataclass(frozen=True)
class Pods:
    """What the metric shows at one sync: each ready pod's utilization (of its request),
    and how many pods are not ready yet or have no figure."""

    ready: Sequence[float]
    unready: int = 0
    missing: int = 0

    @property
    def count(self) -> int:
        return len(self.ready) + self.unready + self.missing


def proposal(hpa: Hpa, current: int, pods: Pods) -> int:
    """The replica count the metric asks for (step 1), before stabilization and rates."""
    if not pods.ready:
        return current  # nothing to read: the controller does not act on no figures
    ratio = sum(pods.ready) / len(pods.ready) / hpa.target_utilization
    if abs(ratio - 1) <= hpa.tolerance and not (pods.unready or pods.missing):
        return current
    if not (pods.unready or pods.missing):
        return math.ceil(ratio * len(pods.ready))
    scaling_up = ratio > 1
    # Not ready: counted as idle, and only when scaling up (a pod that is starting may
    # still be warming its caches). No figure: idle when scaling up, at target when down.
    filled = list(pods.ready) + [0.0] * (pods.unready if scaling_up else 0)
    filled += [0.0 if scaling_up else hpa.target_utilization] * pods.missing
    new_ratio = sum(filled) / len(filled) / hpa.target_utilization
    if abs(new_ratio - 1) <= hpa.tolerance or (new_ratio > 1) != scaling_up:
        return current
    wanted = math.ceil(new_ratio * len(filled))
    if (scaling_up and wanted < current) or (not scaling_up and wanted > current):
        return current
    return wanted


@dataclass(frozen=True)
class Memory:
    """What the controller remembers between syncs: its proposals and the scale events,
    each with the time (seconds) it was made."""

    proposals: tuple[tuple[float, int], ...] = ()
    ups: tuple[tuple[float, int], ...] = ()  # replicas added
    downs: tuple[tuple[float, int], ...] = ()  # replicas removed

    def stabilized(self, hpa: Hpa, now: float, current: int, proposed: int) -> tuple[int, Memory]:
        """Step 2: the proposal within the window of its direction, and the memory with
        it kept."""
        up = proposed >= current
        window = (hpa.scale_up if up else hpa.scale_down).stabilization_seconds
        recent = [r for t, r in self.proposals if t > now - window]
        chosen = min([proposed, *recent]) if up else max([proposed, *recent])
        longest = max(hpa.scale_up.stabilization_seconds, hpa.scale_down.stabilization_seconds)
        kept = tuple((t, r) for t, r in self.proposals if t >= now - longest)
        return chosen, replace(self, proposals=(*kept, (now, proposed)))

    def changed(self, now: float, before: int, after: int) -> Memory:
        """The memory with a scale event from `before` to `after` replicas at `now`."""
        if after > before:
            return replace(self, ups=(*self._recent(self.ups, now), (now, after - before)))
        if after < before:
            return replace(self, downs=(*self._recent(self.downs, now), (now, before - after)))
        return self

    def _recent(
        self, events: tuple[tuple[float, int], ...], now: float
    ) -> tuple[tuple[float, int], ...]:
        return tuple((t, n) for t, n in events if t > now - EVENTS_KEPT_SECONDS)


def _changed_in(events: Sequence[tuple[float, int]], now: float, period: int) -> int:
    return sum(n for t, n in events if t > now - period)


def limited(hpa: Hpa, now: float, current: int, desired: int, memory: Memory) -> int:
    """Step 3: `desired` within the rate the policies allow and min/maxReplicas."""
    if desired > current:
        rules = hpa.scale_up
        if rules.select is Select.DISABLED:
            return current
        allowed = []
        for policy in rules.policies:
            start = current - _changed_in(memory.ups, now, policy.period_seconds)
            if policy.kind is PolicyKind.PODS:
                allowed.append(start + policy.value)
            else:  # rounded up: a small deployment must still be able to grow
                allowed.append(math.ceil(start * (1 + policy.value / 100)))
        limit = max(allowed) if rules.select is Select.MAX else min(allowed)
        return min(desired, max(limit, current), hpa.max_replicas)
    if desired < current:
        rules = hpa.scale_down
        if rules.select is Select.DISABLED:
            return current
        allowed = []
        for policy in rules.policies:
            start = current + _changed_in(memory.downs, now, policy.period_seconds)
            if policy.kind is PolicyKind.PODS:
                allowed.append(start - policy.value)
            else:
                allowed.append(int(start * (1 - policy.value / 100)))
        floor = min(allowed) if rules.select is Select.MAX else max(allowed)
        return max(desired, min(floor, current), hpa.min_replicas)
    return current


def sync(hpa: Hpa, now: float, current: int, pods: Pods, memory: Memory) -> tuple[int, Memory]:
    """One sync of the controller: the replicas to run from now, and what it remembers.
    A count outside min..maxReplicas is brought inside first, whatever the metric."""
    if not hpa.min_replicas <= current <= hpa.max_replicas:
        replicas = max(hpa.min_replicas, min(current, hpa.max_replicas))
        return replicas, memory.changed(now, current, replicas)
    # The proposal is remembered as the metric made it; min/maxReplicas bound the result.
    stable, memory = memory.stabilized(hpa, now, current, proposal(hpa, current, pods))
    replicas = limited(hpa, now, current, stable, memory)
    return replicas, memory.changed(now, current, replicas)


def of_spec(autoscaler: Autoscaler) -> Hpa:
    """The HPA `target.autoscaler` describes, the API's defaults where it says nothing."""
    behavior = autoscaler.behavior
    return Hpa(
        min_replicas=autoscaler.min_replicas,
        max_replicas=autoscaler.max_replicas,
        target_utilization=autoscaler.target_cpu_utilization / 100,
        scale_up=_rules(behavior.scale_up if behavior else None, DEFAULT_SCALE_UP),
        scale_down=_rules(behavior.scale_down if behavior else None, DEFAULT_SCALE_DOWN),
        sync_seconds=autoscaler.sync_period,
    )


def _rules(given: ScalingRules | None, default: Rules) -> Rules:
    if given is None:
        return default
    policies = (
        tuple(Policy(PolicyKind(p.type.value), p.value, p.period_seconds) for p in given.policies)
        if given.policies
        else default.policies
    )
    window = given.stabilization_window_seconds
    return Rules(
        default.stabilization_seconds if window is None else window,
        policies,
        Select(given.select_policy.value),
    )
