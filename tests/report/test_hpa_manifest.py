"""A recommended HPA as the autoscaling/v2 manifest a user applies."""

from __future__ import annotations

import yaml

from plimsoll.api.autoscale import (
    Autoscaler,
    Behavior,
    PolicyType,
    ScalingPolicy,
    ScalingRules,
)
from plimsoll.report.hpa_manifest import hpa_manifest


def test_the_manifest_holds_every_setting_in_the_apis_words() -> None:
    settings = Autoscaler(
        min_replicas=2,
        max_replicas=7,
        target_cpu_utilization=28,
        behavior=Behavior(
            scale_up=ScalingRules(
                stabilization_window_seconds=0,
                policies=[ScalingPolicy(type=PolicyType.PODS, value=4, period_seconds=15)],
            )
        ),
    )
    manifest = yaml.safe_load(hpa_manifest(settings, "checkout"))
    assert manifest["apiVersion"] == "autoscaling/v2"
    assert manifest["kind"] == "HorizontalPodAutoscaler"
    spec = manifest["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "checkout",
    }
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 7)
    assert spec["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 28},
            },
        }
    ]
    # Only the direction the settings name: the API's defaults stand for the other.
    assert spec["behavior"] == {
        "scaleUp": {
            "selectPolicy": "Max",
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}],
        }
    }


def test_without_behavior_the_manifest_has_none() -> None:
    settings = Autoscaler(max_replicas=3, target_cpu_utilization=60)
    assert "behavior" not in yaml.safe_load(hpa_manifest(settings, "web"))["spec"]
