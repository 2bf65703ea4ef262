"""A flight's target on a cluster: a Deployment of the target's own pod (pinned,
restricted, labelled as the run's target so the Service picks its pods) and the HPA
over it as `target.autoscaler` writes it; both valid against Kubernetes' schemas."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.run_budget import run_budget
from plimsoll.kube import autoscaled, manifests, names
from tests.kube.test_manifests import K8S_VERSION, RUN


def _spec(**autoscaler: Any) -> CapacityTestSpec:
    return CapacityTestSpec.model_validate(
        {
            "target": {
                "image": "example/app:1",
                "portEnv": "PORT",
                "resources": {"cpu": "250m", "memory": "64Mi"},
                "autoscaler": {"minReplicas": 2, "maxReplicas": 6, "targetCpuUtilization": 60}
                | autoscaler,
            },
            "workload": {
                "model": "rate",
                "mix": [{"name": "w", "path": "/w"}],
                "profile": [{"level": 10, "hold": "20s"}, {"level": 40, "hold": "40s"}],
            },
            "search": {"strategy": "autoscale"},
            "autoscale": {"perPod": 25},
            "passWhen": {"latency": [{"quantile": "p99", "below": "300ms"}]},
        }
    )


def test_the_deployment_runs_the_target_pod_at_min_replicas_behind_the_service() -> None:
    spec = _spec()
    deployment = autoscaled.target_deployment(RUN, spec)
    kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    assert deployment["spec"]["replicas"] == 2
    template = deployment["spec"]["template"]
    pod = manifests.target_pod(RUN, spec, 0)
    assert template["spec"] == pod["spec"]  # the shape pinned, no API token, restricted
    assert template["spec"]["automountServiceAccountToken"] is False
    [container] = template["spec"]["containers"]
    assert container["resources"]["requests"] == container["resources"]["limits"]
    service = manifests.cluster_service(RUN, names.TARGET_SERVICE, names.ROLE_TARGET, 8080)
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector == service["spec"]["selector"]
    assert selector.items() <= template["metadata"]["labels"].items()
    assert RUN.owns(deployment["metadata"]["labels"])


def test_the_hpa_is_the_spec_autoscaler_over_the_deployment() -> None:
    behavior = {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 2, "periodSeconds": 15}],
        },
        "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Min"},
    }
    hpa = autoscaled.target_hpa(RUN, _spec(behavior=behavior))
    kubernetes_validate.validate(hpa, K8S_VERSION, strict=True)
    spec = hpa["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": autoscaled.deployment_name(RUN),
    }
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 6)
    [metric] = spec["metrics"]
    assert metric["resource"] == {
        "name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": 60},
    }
    assert spec["behavior"] == {
        "scaleUp": {**behavior["scaleUp"], "selectPolicy": "Max"},
        "scaleDown": behavior["scaleDown"],
    }


def test_without_behavior_the_api_servers_defaults_stand() -> None:
    assert "behavior" not in autoscaled.target_hpa(RUN, _spec())["spec"]


def test_the_run_quota_counts_the_most_replicas_the_hpa_may_run() -> None:
    spec = _spec()
    fixed = spec.model_copy(update={"target": spec.target.model_copy(update={"autoscaler": None})})
    shapes = manifests.KNOWN_SHAPES
    assert run_budget([spec], shapes).pods - run_budget([fixed], shapes).pods == 5
