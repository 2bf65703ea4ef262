"""Target replicas on Kubernetes: one pod per replica behind the target Service, each
pinned to its zone by a required node affinity and labelled with it, so a fault
finds a zone's pods by label; a pod template cannot move a replica out of its zone."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.run_budget import HEADROOM_FRACTION, run_budget
from plimsoll.kube import manifests, names
from tests.kube.test_manifests import K8S_VERSION, RUN


def _spec(**target: Any) -> CapacityTestSpec:
    return CapacityTestSpec.model_validate(
        {
            "target": {
                "image": "example/app:1",
                "resources": {"cpu": "250m", "memory": "64Mi"},
                **target,
            },
            "workload": {"model": "rate", "mix": [{"name": "w", "path": "/w"}]},
        }
    )


def _zone_terms(pod: dict[str, Any]) -> list[list[dict[str, Any]]]:
    required = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    return [term["matchExpressions"] for term in required["nodeSelectorTerms"]]


def test_each_replica_is_its_own_pod_in_its_own_zone_in_turn() -> None:
    spec = _spec(replicas=4, zones=["a", "b", "c"])
    pods = [manifests.target_pod(RUN, spec, i) for i in range(4)]
    assert [p["metadata"]["name"] for p in pods] == ["target", "target-1", "target-2", "target-3"]
    assert [p["metadata"]["labels"][names.LABEL_ZONE] for p in pods] == ["a", "b", "c", "a"]
    for pod, zone in zip(pods, "abca", strict=True):
        assert _zone_terms(pod) == [
            [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]
        ]
        # The Service selects every replica: the same role labels on each.
        service = manifests.cluster_service(RUN, names.TARGET_SERVICE, names.ROLE_TARGET, 8080)
        selector = service["spec"]["selector"]
        assert selector.items() <= pod["metadata"]["labels"].items()
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_replicas_without_zones_spread_over_nodes_as_a_preference() -> None:
    pods = [manifests.target_pod(RUN, _spec(replicas=2), i) for i in range(2)]
    for pod in pods:
        assert "affinity" not in pod["spec"]
        (spread,) = pod["spec"]["topologySpreadConstraints"]
        assert (spread["topologyKey"], spread["whenUnsatisfiable"]) == (
            "kubernetes.io/hostname",
            "ScheduleAnyway",
        )
        assert names.LABEL_ZONE not in pod["metadata"]["labels"]


def test_one_replica_is_the_pod_it_always_was() -> None:
    pod = manifests.target_pod(RUN, _spec())
    assert pod["metadata"]["name"] == "target"
    assert "affinity" not in pod["spec"]
    assert "topologySpreadConstraints" not in pod["spec"]


def test_a_pod_templates_own_node_affinity_keeps_the_replica_in_its_zone() -> None:
    theirs = {"key": "pool", "operator": "In", "values": ["perf"]}
    template = {
        "spec": {
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [theirs]}]
                    }
                }
            }
        },
        "metadata": {"labels": {names.LABEL_ZONE: "elsewhere"}},
    }
    spec = _spec(replicas=3, zones=["a", "b", "c"], podTemplate=template)
    pod = manifests.target_pod(RUN, spec, 1)
    ours = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}
    assert _zone_terms(pod) == [[theirs, ours]]
    assert pod["metadata"]["labels"][names.LABEL_ZONE] == "b"


def test_the_run_quota_counts_every_replica() -> None:
    one = run_budget([_spec()], manifests.KNOWN_SHAPES)
    three = run_budget([_spec(replicas=3)], manifests.KNOWN_SHAPES)
    assert three.pods == one.pods + 2
    scale = 1 + HEADROOM_FRACTION
    assert abs(three.cpu - one.cpu - 2 * 0.25 * scale) <= 0.002  # each rounded to 1 m
    assert three.memory - one.memory == int(2 * 64 * 2**20 * scale)
