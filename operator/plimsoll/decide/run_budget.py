"""What one run may use in its namespace: the sum of the shapes its spec declares.

`plimsoll.kube.boundaries` turns this into the run namespace's ResourceQuota, so a
run cannot hold more pods, or request more CPU and memory, than its spec asked for
(with some headroom), whatever happens in the operator or in the pods. Pure: the
sizes of the operator's own pods (mock, default generator, a container that declares
nothing) are passed in.

Only one target and one setup Job pod exist at a time (the platform waits for the
previous variant's target to be gone, and runs setup steps one after another), so
those count once, at the largest any variant asks for. Services, mock replicas and
generators may differ per variant: the largest of each counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.spec import CapacityTestSpec
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


def run_budget(spec: CapacityTestSpec, shapes: KnownShapes) -> RunBudget:
    views = [spec, *(spec.for_variant(v) for v in spec.variants)]
    target = max((_target(s, shapes) for s in views), key=_size, default=[])
    services = max((_services(s, shapes) for s in views), key=_size)
    mocks = max(([shapes.mock] * s.upstream.replicas for s in views), key=_size)
    generators = [spec.generators.resources or shapes.generator] * spec.generators.replicas
    setup = [shapes.undeclared] if any(s.target.setup for s in views) else []
    every = [*target, *services, *mocks, *generators, *setup]
    scale = 1 + HEADROOM_FRACTION
    return RunBudget(
        pods=len(every) + HEADROOM_PODS,
        # The largest pod once more, on top of the fraction: a replacement fits.
        cpu=round(sum(p.cpu for p in every) * scale + max(p.cpu for p in every), 3),
        memory=int(sum(p.memory for p in every) * scale) + max(p.memory for p in every),
    )


def _target(spec: CapacityTestSpec, shapes: KnownShapes) -> list[PodShape]:
    if spec.target.url is not None:  # an existing service: no target pod
        return []
    return [spec.target.resources or shapes.undeclared]


def _services(spec: CapacityTestSpec, shapes: KnownShapes) -> list[PodShape]:
    return [s.resources or shapes.undeclared for s in spec.services]


def _size(pods: list[PodShape]) -> tuple[float, int, int]:
    return (sum(p.cpu for p in pods), sum(p.memory for p in pods), len(pods))
