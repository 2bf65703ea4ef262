"""An autoscaler flight test's spec (issue 57): the target's autoscaler, the load profile
flown at it, and what the flight is judged against.

- `target.autoscaler` (`Autoscaler`): an HPA on CPU utilization, as `autoscaling/v2`
  writes it: minReplicas, maxReplicas, the target averageUtilization of the CPU
  request, and `behavior` (each direction's stabilization window, policies and
  selectPolicy). Locally, Plimsoll makes the HPA controller's decisions over pinned
  replicas (`plimsoll.decide.hpa`), and the report says so.
- `workload.profile` (`ProfilePhase` list): the load over time, each phase ramping from
  the previous level to its own over `ramp` (0: a step) and holding it for `hold`.
- `search.strategy: autoscale` flies the profile once at the target under its
  autoscaler, and `autoscale` says how the flight is judged: the per-pod ceiling it
  counts pods against (a run's finding), and the share of requests that may fail.

On Kubernetes the target becomes a Deployment with this HPA beside it in the run's
namespace, and the cluster's own HPA controller scales it; what it did reaches the
runner as a `FlightLog`, as the local simulation's does.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import Level
from plimsoll.api.units import Fraction, Seconds

DEFAULT_SYNC_PERIOD = 15.0  # kube-controller-manager's --horizontal-pod-autoscaler-sync-period


class PolicyType(StrEnum):
    PODS = "Pods"
    PERCENT = "Percent"


class SelectPolicy(StrEnum):
    MAX = "Max"
    MIN = "Min"
    DISABLED = "Disabled"


class ScalingPolicy(PlimsollModel):
    type: PolicyType = Field(description="Pods (a number) or Percent (of the replicas).")
    value: int = Field(ge=1, le=1000, description="How many pods, or what percent, per period.")
    period_seconds: int = Field(ge=1, le=1800, description="The period the change is bounded in.")


class ScalingRules(PlimsollModel):
    """One direction of `behavior`, as autoscaling/v2 writes it; unset fields take the
    API's defaults for the direction."""

    stabilization_window_seconds: int | None = Field(
        None,
        ge=0,
        le=3600,
        description="Proposals remembered this long: scaling up takes their lowest, down "
        "their highest (default 0 up, 300 down).",
    )
    select_policy: SelectPolicy = Field(
        SelectPolicy.MAX,
        description="Max (the policy allowing the most change), Min, or Disabled.",
    )
    policies: list[ScalingPolicy] | None = Field(
        None,
        min_length=1,
        max_length=10,
        description="How fast it may change (default: up by 100% or 4 pods per 15 s, "
        "whichever is more; down by 100% per 15 s).",
    )


class Behavior(PlimsollModel):
    scale_up: ScalingRules | None = Field(None, description="How it adds replicas.")
    scale_down: ScalingRules | None = Field(None, description="How it removes replicas.")


class Autoscaler(PlimsollModel):
    """An HPA on the CPU utilization of the target's replicas."""

    min_replicas: int = Field(1, ge=1, le=32, description="The fewest replicas it runs.")
    max_replicas: int = Field(
        ge=1, le=32, description="The most replicas it runs (at most 32 locally)."
    )
    target_cpu_utilization: int = Field(
        ge=1, le=100, description="averageUtilization: the share of the CPU request, percent."
    )
    behavior: Behavior | None = Field(
        None, description="autoscaling/v2's behavior: the API's defaults where left out."
    )
    sync_period: Seconds = Field(
        DEFAULT_SYNC_PERIOD,
        ge=1,
        le=300,
        description="How often the controller decides "
        "(--horizontal-pod-autoscaler-sync-period, 15s by default).",
    )

    @model_validator(mode="after")
    def _range(self) -> Autoscaler:
        if self.min_replicas > self.max_replicas:
            raise ValueError(
                f"minReplicas ({self.min_replicas}) is above maxReplicas ({self.max_replicas})"
            )
        return self


class ProfilePhase(PlimsollModel):
    """From the previous phase's level (the first phase starts at its own) to `level`
    over `ramp`, then `level` for `hold`."""

    level: int = Field(ge=0, le=10_000_000, description="The load, in the spec's unit.")
    ramp: Seconds = Field(0.0, le=3600, description="How long it takes to get there (0: a step).")
    hold: Seconds = Field(0.0, le=3600, description="How long it stays there.")


class Autoscale(PlimsollModel):
    """How a flight (`search.strategy: autoscale`) is judged."""

    per_pod: Level = Field(
        description="The per-pod ceiling, in the spec's unit (a run's finding at the "
        "target's shape): what a replica carries, the lags and pods needed count from it."
    )
    max_failed: Fraction = Field(
        0.001, description="The share of requests that may fail for the flight to hold."
    )
    recommend: bool = Field(
        False,
        description="Derive from the flight the HPA settings that hold its burst (target "
        "utilization, minReplicas, maxReplicas, a scale-up policy), from perPod, the CPU "
        "the replicas used and how long a new one took to serve.",
    )
    prove: bool = Field(
        False,
        description="Fly the profile again under the recommended HPA, as a variant named "
        "'<variant>-recommended', and judge it as the first; needs recommend.",
    )

    @model_validator(mode="after")
    def _prove_needs_recommend(self) -> Autoscale:
        if self.prove and not self.recommend:
            raise ValueError("prove flies the recommended HPA: set recommend: true as well")
        return self


class UtilizationReading(PlimsollModel):
    """What the autoscaler read at one sync: the ready replicas' mean CPU utilization."""

    at: float = Field(description="Seconds from the flight's start.")
    ready: int
    utilization: float = Field(
        description="Their mean CPU since the last sync, a share of the request."
    )


class RecommendedHpa(PlimsollModel):
    """The HPA settings a flight recommends (`plimsoll.decide.flight_advice`)."""

    autoscaler: Autoscaler = Field(description="The settings, as target.autoscaler takes them.")
    share_of_ceiling: float = Field(description="The load per pod held, a share of perPod.")
    load_per_pod: float = Field(
        description="The same target as load per pod, for an HPA on a Prometheus metric."
    )
    lag_s: float = Field(description="From the load's growth to a new pod serving, seconds.")
    pod_start_s: float = Field(description="The slowest replica start the flight measured.")
    cpu_at_ceiling: float = Field(
        description="The CPU a replica uses at perPod, a share of its request (measured)."
    )
    cpu_is_weak: bool = Field(
        False, description="CPU says little about the load: scale on load per pod instead."
    )
    reasons: list[str] = Field(default_factory=list)


class ReplicaCount(PlimsollModel):
    """The target's replicas at a moment of a flight: serving, and wanted by the autoscaler."""

    at: float = Field(description="Seconds from the flight's start.")
    ready: int
    desired: int


class PodLag(PlimsollModel):
    replicas: int = Field(description="The count reached: the n-th serving replica.")
    lag_s: float = Field(description="From short of capacity to that count serving, seconds.")


class FlightResult(PlimsollModel):
    """What the flight lived through (`plimsoll.decide.flight`), and whether it held."""

    profile: str = Field(description="The load flown, in words.")
    short_at: float | None = Field(
        None, description="When the offered load first passed what the serving replicas carry."
    )
    lags: list[PodLag] = Field(default_factory=list)
    time_to_capacity_s: float | None = Field(
        None, description="From short of capacity to p99 within the bar and keeping up."
    )
    seconds_over_bar: float = 0.0
    sent: int = 0
    failed: int = 0
    flaps: int = 0
    over_provisioned_pod_minutes: float = 0.0
    start_replicas: int = 0
    peak_replicas: int = 0
    held: bool = False
    sentence: str = ""
    replicas: list[ReplicaCount] = Field(
        default_factory=list, description="Every change of the serving or wanted count."
    )
    pod_start_s: float | None = Field(
        None, description="The slowest replica start (asked for to serving), seconds."
    )
    recommendation: RecommendedHpa | None = Field(
        None, description="The HPA settings that hold the burst (autoscale.recommend)."
    )
    no_recommendation: str = Field(
        "", description="Why autoscale.recommend gave no settings, when it gave none."
    )
    controller: str = Field(
        "simulated",
        description="Who scaled: 'simulated' (Plimsoll made the HPA's decisions locally) or "
        "'cluster' (the cluster's HPA controller).",
    )

    @property
    def failed_share(self) -> float:
        return self.failed / self.sent if self.sent else 0.0


class FlightLog(PlimsollModel):
    """What the autoscaler did and read through one flight: simulated locally, watched on
    a cluster (`plimsoll.platforms.kubernetes.watched_hpa`)."""

    replicas: list[ReplicaCount] = Field(
        default_factory=list, description="Every change of the serving or wanted count."
    )
    readings: list[UtilizationReading] = Field(
        default_factory=list, description="The CPU utilization it read, at each change."
    )
    starts: list[float] = Field(
        default_factory=list, description="Each new replica's seconds from asked for to serving."
    )
    controller: str = Field(
        description="Who decided: 'simulated' (Plimsoll, locally) or 'cluster' (the "
        "cluster's HPA controller)."
    )


class AutoscalingStatus(PlimsollModel):
    """A flight in a few figures, for the resource's status (the timeline stays in the
    report): the last flight of the spec's own HPA, and of the recommended one if proven."""

    held: bool = Field(description="Whether the flight held: p99 within the bar throughout.")
    verdict: str = Field(description="'held' or 'did not hold', for `kubectl get`'s column.")
    sentence: str = Field(description="The flight in one sentence.")
    lag_seconds: float | None = Field(
        None, description="From short of capacity to the last new replica serving."
    )
    time_to_capacity_seconds: float | None = Field(
        None, description="From short of capacity to p99 within the bar and keeping up."
    )
    seconds_over_bar: float = Field(0.0, description="Seconds p99 spent over the bar.")
    failed: int = Field(0, description="Requests that failed during the flight.")
    failed_percent: float = Field(0.0, description="Their share of those sent, percent.")
    replicas: str = Field(description="From the start to the peak, e.g. '1 -> 4'.")
    controller: str = Field(description="'simulated' (locally) or 'cluster'.")
    recommended: Autoscaler | None = Field(
        None, description="The HPA settings the flight recommends (autoscale.recommend)."
    )
    recommended_held: bool | None = Field(
        None, description="Whether the recommended HPA held when flown (autoscale.prove)."
    )

    @classmethod
    def of(cls, flight: FlightResult, proof: FlightResult | None) -> AutoscalingStatus:
        return cls(
            held=flight.held,
            verdict="held" if flight.held else "did not hold",
            sentence=flight.sentence,
            lag_seconds=max((lag.lag_s for lag in flight.lags), default=None),
            time_to_capacity_seconds=flight.time_to_capacity_s,
            seconds_over_bar=flight.seconds_over_bar,
            failed=flight.failed,
            failed_percent=round(flight.failed_share * 100, 3),
            replicas=f"{flight.start_replicas} -> {flight.peak_replicas}",
            controller=flight.controller,
            recommended=flight.recommendation.autoscaler if flight.recommendation else None,
            recommended_held=proof.held if proof is not None else None,
        )


def hpa_spec(autoscaler: Autoscaler, deployment: str) -> dict[str, Any]:
    """autoscaling/v2's HPA spec with `autoscaler`'s settings over `deployment`: what the
    Kubernetes platform applies for a flight and the report writes as a recommendation.
    `behavior` holds only what was set; the API server fills in the rest."""
    spec: dict[str, Any] = {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": deployment},
        "minReplicas": autoscaler.min_replicas,
        "maxReplicas": autoscaler.max_replicas,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {
                        "type": "Utilization",
                        "averageUtilization": autoscaler.target_cpu_utilization,
                    },
                },
            }
        ],
    }
    behavior = autoscaler.behavior
    if behavior is not None:
        directions = {"scaleUp": behavior.scale_up, "scaleDown": behavior.scale_down}
        spec["behavior"] = {k: _rules(v) for k, v in directions.items() if v is not None}
    return spec


def _rules(rules: ScalingRules) -> dict[str, Any]:
    out: dict[str, Any] = {"selectPolicy": rules.select_policy.value}
    if rules.stabilization_window_seconds is not None:
        out["stabilizationWindowSeconds"] = rules.stabilization_window_seconds
    if rules.policies:
        out["policies"] = [
            {"type": p.type.value, "value": p.value, "periodSeconds": p.period_seconds}
            for p in rules.policies
        ]
    return out


def proof_variant_name(variant: str) -> str:
    """The variant that flies `variant`'s recommended HPA (autoscale.prove): a name within
    a variant's 30 characters."""
    return f"{variant[:18]}-recommended"
