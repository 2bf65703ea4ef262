"""The spec a proof run from the sizing plan runs: `search: {strategy: prove, fromSizing: true}`.

The plan (`plimsoll.decide.sizing`) names a peak, a number of pods and the zones they
spread over, for pods of `target.resources`. One machine rarely holds that, so the
proof runs it scaled by `search.scale`: the same pods and zones, each with `scale`
of the pod's CPU, at `scale` of the planned peak (peak × growth). A CPU-bound pod's
ceiling scales with its CPU, so each replica runs as near its own ceiling as the
planned pod would. Memory is left as planned: a smaller limit would change what the
pod can hold, not only how fast it is. `planned_proof` is called by the runner on
each variant's spec before the platform starts; `proof_stanza` and `proof_scale` by
`plimsoll size`, which prints the stanza that proves the plan it just made. Pure.
"""

from __future__ import annotations

import math
from typing import Any

from plimsoll.api.sizing import SizingInput, SizingPlan, SizingSpec
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import PodShape
from plimsoll.api.units import format_fraction
from plimsoll.decide.sizing import nice_down, plan_deployment
from plimsoll.decide.sizing_costs import resolve

# Replicas one local run or namespace may hold (`target.replicas`'s bound).
MAX_REPLICAS = 16


class ProofPlanError(ValueError):
    """The plan cannot be proved as written; the message names the field and the fix."""


def planned_proof(spec: CapacityTestSpec) -> CapacityTestSpec:
    """`spec` with the level, replicas, zones and CPU the plan names, scaled; `spec` itself
    when it is no proof from the sizing plan."""
    search, sizing, shape = spec.search, spec.sizing, spec.target.resources
    if not search.from_sizing:
        return spec
    if sizing is None or shape is None:  # the spec's validator requires both
        raise ProofPlanError("search.fromSizing needs spec.sizing and target.resources")
    plan = plan_deployment(resolve(sizing, None, flags={}, unit=spec.unit, costs=()))
    if plan.pods > MAX_REPLICAS:
        raise ProofPlanError(
            f"search.fromSizing: the plan needs {plan.pods} pods, more than the "
            f"{MAX_REPLICAS} replicas a run holds: prove a share of it with a lower "
            "spec.sizing.peak"
        )
    level = max(1, math.floor(sizing.peak * sizing.growth * search.scale))
    target = spec.target.model_copy(
        update={
            "replicas": plan.pods,
            "zones": sizing.zone_names(),
            "resources": shape.model_copy(update={"cpu": shape.cpu * search.scale}),
        }
    )
    return spec.model_copy(
        update={"target": target, "search": search.model_copy(update={"level": level})}
    )


# The proof trial: long enough for the loss to settle, the zone lost a quarter of the way in.
PROOF_SECONDS = 120.0
LOSS_AT = 30.0
# Of the machine's cores, what the scaled replicas may take: generators and the mock need
# the rest.
MACHINE_SHARE = 0.5


def proof_scale(plan: SizingPlan, shape: PodShape | None, cores: int) -> float:
    """The share of the plan that fits `cores`: 1 when it fits, else a nice fraction (1, 2
    or 5 × 10ⁿ) of it, so that the planned pods' CPU fits half the machine."""
    if shape is None:
        return 1.0
    needed = plan.pods * shape.cpu
    room = cores * MACHINE_SHARE
    return 1.0 if needed <= room else nice_down(room / needed)


def proof_stanza(sizing: SizingInput, plan: SizingPlan, scale: float) -> dict[str, Any]:
    """The spec fields that prove `plan` (`search`, `sizing`, `trial`), as YAML would hold
    them: the plan's own inputs with the per-pod ceiling it used, a long trial, and a zone
    lost a quarter of the way in (a replica killed when the plan has one zone)."""
    given = SizingSpec.model_validate(sizing.model_dump(include=set(SizingSpec.model_fields)))
    written = given.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    written["perPod"] = sizing.per_pod
    faults: list[dict[str, Any]] = []
    if sizing.zones > 1:
        faults.append({"at": f"{LOSS_AT:g}s", "remove": {"zone": sizing.zone_names()[0]}})
    elif plan.pods > 1:
        faults.append({"at": f"{LOSS_AT:g}s", "kill": {"replicas": 1}})
    trial: dict[str, Any] = {"duration": f"{PROOF_SECONDS:g}s"}
    if faults:
        trial["faults"] = faults
    return {
        "search": {"strategy": "prove", "fromSizing": True, "scale": format_fraction(scale)},
        "sizing": written,
        "trial": trial,
    }
