"""The pods of a run's equipment and target, by name: what the platform creates, and
what it looks for when it checks for lost equipment. Pure (`plimsoll.kube.manifests`
builds each body)."""

from __future__ import annotations

from typing import Any

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube import manifests, names
from plimsoll.kube.names import RunIdentity


def replica_pod_names(run: RunIdentity, spec: CapacityTestSpec) -> list[str]:
    return [names.target_pod_name(run.variant, i) for i in range(spec.target.replicas)]


def mock_pods(run: RunIdentity, spec: CapacityTestSpec, image: str) -> dict[str, dict[str, Any]]:
    """Every mock's pods: the default mock's replicas, then each named mock's."""
    pods = {
        names.mock_pod_name(i, run.variant): manifests.mock_pod(run, i, spec.upstream, image)
        for i in range(spec.upstream.replicas)
    }
    for named in spec.upstreams:
        for i in range(named.replicas):
            pods[names.named_mock_pod_name(named.name, i, run.variant)] = manifests.mock_pod(
                run, i, named.upstream(), image, named.name
            )
    return pods


def generator_pods(
    run: RunIdentity, spec: CapacityTestSpec, image: str, count: int
) -> dict[str, dict[str, Any]]:
    """Generator pods 0 .. count-1 (`generators.replicas: auto` adds, never removes)."""
    return {
        names.generator_pod_name(i, run.variant): manifests.generator_pod(
            run, i, spec.generators, image
        )
        for i in range(count)
    }
