"""What one run may use in its namespace: the sum of the shapes its spec declares.

`plimsoll.kube.boundaries` turns this into the run namespace's ResourceQuota, so a
run cannot hold more pods, or request more CPU and memory, than its spec asked for
(with some headroom), whatever happens in the operator or in the pods. Pure: the
sizes of the operator's own pods (mock, default generator, a container that declares
nothing) are passed in.

With `cleanup: Always` one variant's pods exist at a time (the platform waits for
the previous variant's pods to be gone), so the largest variant counts, each resource
by its own largest. Otherwise
each variant keeps its own pods (their names are the variant's), so every variant's
count at once. Setup Jobs run one after another: one pod per variant. Generators
sized during the run (`replicas: auto`) count at `maxReplicas`, the most they reach.
Every mock counts: the default one and the named ones (`upstreams`), at their
declared shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.spec import CapacityTestSpec, Cleanup
from plimsoll.api.target import PodShape

# Room for a pod being replaced (a restart in place does not need it; a variant's
# fresh generator may briefly overlap a terminating one in the quota's count) and
# for rounding: a quota that is exactly the sum would fail a run on a technicality.
HEADROOM_PODS = 2
HEADROOM_FRACTION = 0.25


@dataclass(frozen=True)
class RunBudget:
    pods: int
    cpu: float  # cores, requested
    memory: int  # bytes, requested


@dataclass(frozen=True)
class KnownShapes:
    """The requests of pods whose size the spec does not give."""

    mock: PodShape
    generator: PodShape  # generators.resources unset
    undeclared: PodShape  # a target, service or setup container with no resources


def run_budget(every_variant: Sequence[CapacityTestSpec], shapes: KnownShapes) -> RunBudget:
    """The budget of a run whose variants see the specs `every_variant`
    (`CapacityTestSpec.variant_specs`, as the runner derived them)."""
    if not every_variant:
        raise ValueError("a run has at least one variant's spec")
    per_variant = [_pods(view, shapes) for view in every_variant]
    if every_variant[0].cleanup is Cleanup.ALWAYS:  # one clean-up for the whole run
        # Each resource by its own largest variant: one variant may need the most CPU and
        # another the most memory (shapes: 1 CPU / 512Mi beside 500m / 2Gi), and a quota
        # sized from either alone refused the other's target pod on the real API server.
        at_once = per_variant
    else:
        at_once = [[pod for pods in per_variant for pod in pods]]
    every = [pod for pods in per_variant for pod in pods]
    scale = 1 + HEADROOM_FRACTION
    return RunBudget(
        pods=max(len(pods) for pods in at_once) + HEADROOM_PODS,
        # The largest pod once more, on top of the fraction: a replacement fits.
        cpu=round(
            max(sum(p.cpu for p in pods) for pods in at_once) * scale + max(p.cpu for p in every),
            3,
        ),
        memory=int(max(sum(p.memory for p in pods) for pods in at_once) * scale)
        + max(p.memory for p in every),
    )


def _pods(spec: CapacityTestSpec, shapes: KnownShapes) -> list[PodShape]:
    """One variant's pods: target, services, every mock, generators and a setup Job."""
    mocks = [spec.upstream.resources or shapes.mock] * spec.upstream.replicas
    for named in spec.upstreams:
        mocks += [named.resources or shapes.mock] * named.replicas
    # generators.replicas: auto may add pods up to maxReplicas during the run: all count.
    count = (
        spec.generators.max_replicas
        if spec.generators.asked_auto()
        else spec.generators.fixed_replicas
    )
    generators = [spec.generators.resources or shapes.generator] * count
    setup = [shapes.undeclared] if spec.target.setup else []
    return [*_target(spec, shapes), *_services(spec, shapes), *mocks, *generators, *setup]


def _target(spec: CapacityTestSpec, shapes: KnownShapes) -> list[PodShape]:
    if spec.target.url is not None:  # an existing service: no target pod
        return []
    # A flight's Deployment may run as many as its HPA's maxReplicas.
    autoscaler = spec.target.autoscaler
    count = autoscaler.max_replicas if autoscaler is not None else spec.target.replicas
    return [spec.target.resources or shapes.undeclared] * count


def _services(spec: CapacityTestSpec, shapes: KnownShapes) -> list[PodShape]:
    return [s.resources or shapes.undeclared for s in spec.services]
